//! One fixture and one insta snapshot per rule: `tests/fixtures/<rule-id>/{project,user,system}/.ai/`
//! is loaded from disk through the real loader and linted with only that rule enabled (ruff's
//! habit). Meta-tests pin that every rule has a fixture, a snapshot and complete docs, that each
//! fixture makes its rule fire, and that near-miss files (`ok_*`) stay silent.
#![allow(
    clippy::disallowed_methods,
    reason = "the fixture tests read fixture directories from disk"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ryechain::analysis::{Host, LintOptions, LintReport, lint};
use ryechain::db::Settings;
use ryechain::diagnostic::Finding;
use ryechain::load::load;
use ryechain::rules::rules;
use ryechain::system::os::OsSystem;

/// The doc headings every rule must have (CONVENTIONS habit 1), spelled out independently of the
/// library's own constant.
const DOC_SECTIONS: [&str; 4] = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
];

/// Near-misses that cannot be named `ok_*` because their file name is fixed (one config file per
/// space): (rule id, path relative to the fixture dir). Each is described in the fixture's README.
const FIXED_NAME_NEAR_MISSES: &[(&str, &str)] = &[
    ("invalid-config", "user/.ai/config/ryechain.yaml"),
    (
        "project-disables-signatures",
        "user/.ai/config/ryechain.yaml",
    ),
    (
        "unapproved-project-key",
        "project/.ai/config/keys/trusted/1cae49885ebad676.toml",
    ),
    (
        "invalid-trusted-key",
        "project/.ai/config/keys/trusted/1cae49885ebad676.toml",
    ),
    (
        "unknown-primitive",
        "project/.ai/tools/acme/ok_pkg/__init__.py",
    ),
];

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn snapshots_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// The report of one fixture linted with only `rule_id` selected, plus loader notices.
struct FixtureRun {
    report: LintReport,
    notices: Vec<String>,
    /// The canonical fixture directory (display base, and the prefix scrubbed from texts).
    dir: PathBuf,
}

fn run_fixture(rule_id: &str) -> FixtureRun {
    let dir = fixtures_root()
        .join(rule_id)
        .canonicalize()
        .unwrap_or_else(|e| panic!("fixture dir for `{rule_id}`: {e}"));
    let spaces = ryechain::testing::fixture_spaces(&dir);
    let outcome = load(&OsSystem, &spaces);
    let mut change = outcome.change;
    change.settings = Some(Settings {
        select: Some(vec![rule_id.to_owned()]),
        ..Settings::default()
    });
    let mut host = Host::new();
    host.apply(change);
    let opts = LintOptions {
        display_base: Some(dir.clone()),
    };
    let report = lint(&host.snapshot(), &opts, &|_| {});
    FixtureRun {
        report,
        notices: outcome.notices,
        dir,
    }
}

/// Replace the fixture directory (canonical or as spelled) by `<fixture>`.
fn scrub(run: &FixtureRun, text: &str) -> String {
    let spelled = fixtures_root().join(run.dir.file_name().unwrap_or_default());
    text.replace(&*run.dir.to_string_lossy(), "<fixture>")
        .replace(&*spelled.to_string_lossy(), "<fixture>")
}

/// A stable text of the findings: one block per finding, paths relative to the fixture dir.
fn render(run: &FixtureRun) -> String {
    let mut out = String::new();
    for f in &run.report.findings {
        let _ = writeln!(
            out,
            "{}:{}:{} {} {}",
            f.path,
            f.line,
            f.column,
            f.rule,
            f.severity.as_str()
        );
        if let Some(item) = &f.item_id {
            let _ = writeln!(
                out,
                "  item: {item} ({})",
                f.space.as_deref().unwrap_or("?")
            );
        }
        if let Some(ex) = &f.excerpt {
            let hl = ex.text.get(ex.highlight.clone()).unwrap_or_default();
            if !hl.is_empty() {
                let first = hl.lines().next().unwrap_or_default();
                let _ = writeln!(out, "  span: {first}");
            }
        }
        let _ = writeln!(out, "  message: {}", f.message);
        if let Some(help) = &f.help {
            let _ = writeln!(out, "  help: {help}");
        }
        if !f.suggestions.is_empty() {
            let _ = writeln!(out, "  suggestions: {}", f.suggestions.join(", "));
        }
        if let Some(fix) = &f.fix {
            let _ = writeln!(
                out,
                "  fix: {}:{}-{}:{} -> {}",
                fix.line, fix.column, fix.end_line, fix.end_column, fix.replacement
            );
        }
        for n in &f.notes {
            match (&n.path, n.line) {
                (Some(p), Some(l)) => {
                    let _ = writeln!(out, "  note: {} ({p}:{l})", n.message);
                }
                (Some(p), None) => {
                    let _ = writeln!(out, "  note: {} ({p})", n.message);
                }
                _ => {
                    let _ = writeln!(out, "  note: {}", n.message);
                }
            }
        }
        out.push('\n');
    }
    for n in &run.notices {
        let _ = writeln!(out, "notice: {n}");
    }
    let s = &run.report.summary;
    let _ = writeln!(
        out,
        "-- {} finding(s): {} error(s), {} warning(s)",
        run.report.findings.len(),
        s.errors,
        s.warnings
    );
    scrub(run, &out)
}

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

fn is_near_miss(rule_id: &str, path: &str) -> bool {
    file_name(path).starts_with("ok_")
        || FIXED_NAME_NEAR_MISSES
            .iter()
            .any(|(r, p)| *r == rule_id && *p == path)
}

/// The selected rule fires, only it fires, never on a near-miss, and nothing panicked.
fn invariant_problems(rule_id: &str, run: &FixtureRun) -> Vec<String> {
    let mut problems = Vec::new();
    let findings: &[Finding] = &run.report.findings;
    if findings.is_empty() {
        problems.push(format!("{rule_id}: the rule never fires on its fixture"));
    }
    if run.report.internal_errors != 0 {
        problems.push(format!(
            "{rule_id}: {} internal error(s)",
            run.report.internal_errors
        ));
    }
    for f in findings {
        if &*f.rule != rule_id {
            problems.push(format!(
                "{rule_id}: unexpected `{}` finding at {}:{}",
                f.rule, f.path, f.line
            ));
        }
        if is_near_miss(rule_id, &f.path) {
            problems.push(format!(
                "{rule_id}: fires on near-miss {}:{}: {}",
                f.path, f.line, f.message
            ));
        }
    }
    let rendered = render(run);
    for leak in ["/work/", "/tmp/", "/home/", "/root/"] {
        if rendered.contains(leak) {
            problems.push(format!(
                "{rule_id}: an absolute path ({leak}...) leaks into the rendered findings"
            ));
        }
    }
    problems
}

fn check_rule(rule_id: &str) {
    assert!(
        rules().get(rule_id).is_some(),
        "`{rule_id}` is not a rule in the registry"
    );
    let run = run_fixture(rule_id);
    let rendered = render(&run);
    insta::assert_snapshot!(rule_id, rendered);
    let problems = invariant_problems(rule_id, &run);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

macro_rules! rule_fixture_tests {
    ($($test:ident => $id:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_rule($id);
            }
        )*
        /// The rule ids with a snapshot test above.
        const TESTED_RULES: &[&str] = &[$($id),*];
    };
}

rule_fixture_tests! {
    ambiguous_item => "ambiguous-item",
    chain_too_deep => "chain-too-deep",
    executor_cycle => "executor-cycle",
    invalid_config => "invalid-config",
    invalid_directive => "invalid-directive",
    invalid_knowledge => "invalid-knowledge",
    invalid_item_id => "invalid-item-id",
    invalid_version => "invalid-version",
    missing_executor => "missing-executor",
    symlink_escape => "symlink-escape",
    system_delegates_to_mutable => "system-delegates-to-mutable",
    unknown_primitive => "unknown-primitive",
    unrunnable_item => "unrunnable-item",
    unparseable_metadata => "unparseable-metadata",
    unreadable_file => "unreadable-file",
    unsatisfied_inputs => "unsatisfied-inputs",
    unversioned_constrained_child => "unversioned-constrained-child",
    upward_space_dependency => "upward-space-dependency",
    version_constraint_violation => "version-constraint-violation",
    unsigned_item => "unsigned-item",
    content_hash_mismatch => "content-hash-mismatch",
    untrusted_key => "untrusted-key",
    bad_signature => "bad-signature",
    malformed_signature => "malformed-signature",
    unapproved_project_key => "unapproved-project-key",
    project_disables_signatures => "project-disables-signatures",
    invalid_trusted_key => "invalid-trusted-key",
    stale_lockfile => "stale-lockfile",
    unresolvable_interpreter => "unresolvable-interpreter",
    unused_suppression => "unused-suppression",
    graph_missing_start => "graph-missing-start",
    graph_unknown_node => "graph-unknown-node",
    graph_unreachable_node => "graph-unreachable-node",
    graph_node_without_action => "graph-node-without-action",
    graph_unresolved_action => "graph-unresolved-action",
    invalid_graph => "invalid-graph",
}

fn fixture_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures_root())
        .expect("tests/fixtures exists")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// Whether any file below `dir` (not following symlinked directories) is named `ok_*`.
fn has_near_miss(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            e.file_name().to_string_lossy().starts_with("ok_")
                || (is_dir && has_near_miss(&e.path()))
        })
}

#[test]
fn every_rule_has_a_fixture_a_snapshot_and_a_test() {
    let ids: Vec<&str> = rules().rules.iter().map(|r| r.id.as_ref()).collect();
    assert!(!ids.is_empty(), "the rule registry is empty");
    let mut problems = Vec::new();
    for id in &ids {
        let dir = fixtures_root().join(id);
        if !dir.join("project/.ai").is_dir() {
            problems.push(format!("`{id}` has no tests/fixtures/{id}/project/.ai/"));
        }
        if !dir.join("README.md").is_file() {
            problems.push(format!("`{id}` has no tests/fixtures/{id}/README.md"));
        }
        if !has_near_miss(&dir) {
            problems.push(format!("tests/fixtures/{id}/ has no `ok_*` near-miss file"));
        }
        let snap = snapshots_root().join(format!("rule_fixtures__{id}.snap"));
        if !snap.is_file() {
            problems.push(format!("`{id}` has no snapshot {}", snap.display()));
        }
        if !TESTED_RULES.contains(id) {
            problems.push(format!("`{id}` is missing from `rule_fixture_tests!`"));
        }
    }
    for dir in fixture_dirs() {
        if !ids.contains(&dir.as_str()) {
            problems.push(format!("tests/fixtures/{dir}/ names no rule"));
        }
    }
    for id in TESTED_RULES {
        if !ids.contains(id) {
            problems.push(format!(
                "`rule_fixture_tests!` lists `{id}`, which is no rule"
            ));
        }
    }
    for (id, path) in FIXED_NAME_NEAR_MISSES {
        if !fixtures_root().join(id).join(path).is_file() {
            problems.push(format!(
                "near-miss tests/fixtures/{id}/{path} does not exist"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_fixture_fires_its_rule_only_and_spares_near_misses() {
    let problems: Vec<String> = rules()
        .rules
        .iter()
        .flat_map(|r| invariant_problems(&r.id, &run_fixture(&r.id)))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_rule_documents_the_four_sections() {
    let mut problems = Vec::new();
    for rule in &rules().rules {
        for section in DOC_SECTIONS {
            if !rule.docs.contains(section) {
                problems.push(format!("`{}` docs lack `{section}`", rule.id));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
