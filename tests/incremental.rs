//! Incrementality: which queries re-run after an edit (salsa event log), and proptest invariants —
//! incremental lint equals a fresh lint after random edits, chains never exceed the maximum, every
//! cycle finding is a petgraph SCC, and resolution prefers the highest space.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use ryechain::analysis::live::LiveLint;
use ryechain::analysis::{Host, LintOptions, LintReport, lint};
use ryechain::db::{Change, Db, FileChange, RootDb, Settings};
use ryechain::diagnostic::{Finding, Severity};
use ryechain::model::{Space, SpaceKind};
use ryechain::resolve::graph::executor_graph;
use ryechain::resolve::{chain, resolve, tool_files};
use ryechain::testing::{FixtureFile, ai_dir, change_for, file_spec, host, parse_fixture};

fn findings(host: &Host) -> Vec<Finding> {
    lint(&host.snapshot(), &LintOptions::default(), &|_| {}).findings
}

const TREE: &str = "//- /project/.ai/tools/acme/report.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"acme/rt\"\n\ndef main():\n    return 1\n\
//- /project/.ai/tools/acme/other.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"acme/rt\"\n\
//- /user/.ai/tools/acme/rt.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n\
//- /system/.ai/tools/rye/core/primitives/subprocess.py\n__executor_id__ = None\n__tool_type__ = \"primitive\"\n";

fn edit(host: &mut Host, rel_space: Space, rel: &str, text: &str) {
    let f = FixtureFile {
        space: rel_space,
        rel: rel.to_owned(),
        text: text.to_owned(),
    };
    host.apply(Change {
        files: vec![FileChange::Write(file_spec(&f))],
        ..Change::default()
    });
}

fn executed(host: &Host, query: &str) -> Vec<String> {
    host.db()
        .take_executed()
        .into_iter()
        .filter(|e| e.starts_with(query))
        .collect()
}

/// DESIGN.md invariant: editing a tool's body never invalidates chain facts.
#[test]
fn body_only_edit_reruns_no_chain_query() {
    let mut host = host(TREE);
    assert!(host.db().enable_event_log(), "the host records");
    let before = findings(&host);
    let first = host.db().take_executed();
    // A lint walks each tool's chain inside `chain_diagnostics` (not memoized by `chain`).
    assert!(
        first.iter().any(|e| e.starts_with("chain_diagnostics(")),
        "the first lint runs chains: {first:?}"
    );

    let body_edit = "__version__ = \"1.0.0\"\n__executor_id__ = \"acme/rt\"\n\ndef main():\n    return 2  # changed\n";
    edit(&mut host, Space::Project, "tools/acme/report.py", body_edit);
    assert_eq!(findings(&host), before);
    let log = host.db().take_executed();
    assert!(
        log.iter().any(|e| e.starts_with("parse_file(")),
        "the edited file is re-parsed: {log:?}"
    );
    for q in [
        "chain(",
        "resolve_item(",
        "chain_diagnostics(",
        "executor_graph(",
        "graph_diagnostics(",
        "space_index(",
        "trust_store(",
        "signature_formats(",
    ] {
        assert!(
            !log.iter().any(|e| e.starts_with(q)),
            "{q} re-ran after a body-only edit: {log:?}"
        );
    }
    // Integrity is per file: the edited file's integrity findings (which hash it and judge its
    // signature) re-run, no other file's. The memoized `content_hash` and `signature_status` are
    // for lockfiles, verify and exec; a lint computes the verdict inside its findings' query.
    let n = log
        .iter()
        .filter(|e| e.starts_with("integrity_diagnostics("))
        .count();
    assert_eq!(
        n, 1,
        "integrity_diagnostics ran {n} times after one body edit: {log:?}"
    );
}

/// A header edit does re-run the chains through the edited file, and only what depends on it.
#[test]
fn header_edit_reruns_dependent_chains() {
    let mut host = host(TREE);
    assert!(host.db().enable_event_log(), "the host records");
    let _ = findings(&host);
    let _ = host.db().take_executed();
    edit(
        &mut host,
        Space::User,
        "tools/acme/rt.py",
        "__version__ = \"1.0.0\"\n__executor_id__ = \"missing/rt\"\n",
    );
    let after = findings(&host);
    assert!(
        after.iter().any(|f| &*f.rule == "missing-executor"),
        "{after:#?}"
    );
    let chains = executed(&host, "chain_diagnostics(");
    // acme/rt itself plus the two project tools whose chains pass through it.
    assert_eq!(chains.len(), 3, "{chains:?}");
}

/// A config edit that moves severities (applied outside the memos) re-runs the config file's own
/// checks and no tool's: the tools' checks read which files are configs, not what they say.
#[test]
fn a_config_edit_reruns_no_tool_check() {
    let mut host = host(TREE);
    assert!(host.db().enable_event_log(), "the host records");
    edit(
        &mut host,
        Space::Project,
        "tools/acme/broken.py",
        "__version__ = \"1.0.0\"\n__executor_id__ = \"nowhere/rt\"\n",
    );
    edit(
        &mut host,
        Space::Project,
        "config/ryechain.yaml",
        "lint:\n  select: [ALL]\n",
    );
    let missing_as = |fs: &[Finding], severity: Severity| {
        fs.iter()
            .any(|f| &*f.rule == "missing-executor" && f.severity == severity)
    };
    let before = findings(&host);
    assert!(missing_as(&before, Severity::Error), "{before:#?}");
    let _ = host.db().take_executed();
    edit(
        &mut host,
        Space::Project,
        "config/ryechain.yaml",
        "lint:\n  select: [ALL]\n  severity: {missing-executor: warning}\n",
    );
    let after = findings(&host);
    assert!(missing_as(&after, Severity::Warning), "{after:#?}");
    let log = host.db().take_executed();
    let files: Vec<&String> = log
        .iter()
        .filter(|e| e.starts_with("file_diagnostics("))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "only the config's own checks re-run: {files:?}"
    );
    for q in ["chain_diagnostics(", "parse_file(", "metadata("] {
        assert!(!log.iter().any(|e| e.starts_with(q)), "{q} re-ran: {log:?}");
    }
}

// ---- proptest model ----

const IDS: [&str; 6] = ["a/t1", "a/t2", "b/r1", "b/r2", "c/x", "c/y"];
const SPACES: [&str; 3] = ["project", "user", "system"];

#[derive(Clone, Debug)]
enum Exec {
    Id(usize),
    Primitive,
    Missing,
    None,
}

#[derive(Clone, Debug)]
struct ToolSpec {
    space: usize,
    id: usize,
    exec: Exec,
    version: bool,
    body: u8,
    /// A YAML tool instead of Python: both files of one id in one space make one ambiguous.
    yaml: bool,
    /// A suppression comment on the executor line (0: none; see [`SUPPRESSIONS`]).
    suppress: usize,
}

/// The suppression comments a tool's executor line may carry: a chain-edge rule, the graph-wide
/// rule (whose use is told from the executor graph), a file rule and a misspelt id.
const SUPPRESSIONS: [&str; 4] = [
    "",
    "  # ryechain: ignore[missing-executor]",
    "  # ryechain: ignore[executor-cycle]",
    "  # ryechain: ignore[ambiguous-item, mising-executor]",
];

fn exec_strategy() -> impl Strategy<Value = Exec> {
    prop_oneof![
        4 => (0..IDS.len()).prop_map(Exec::Id),
        2 => Just(Exec::Primitive),
        1 => Just(Exec::Missing),
        1 => Just(Exec::None),
    ]
}

fn tool_strategy() -> impl Strategy<Value = ToolSpec> {
    (
        0..3usize,
        0..IDS.len(),
        exec_strategy(),
        any::<bool>(),
        any::<u8>(),
        prop::bool::weighted(0.25),
        prop_oneof![3 => Just(0usize), 1 => 1..SUPPRESSIONS.len()],
    )
        .prop_map(
            |(space, id, exec, version, body, yaml, suppress)| ToolSpec {
                space,
                id,
                exec,
                version,
                body,
                yaml,
                suppress,
            },
        )
}

fn render(t: &ToolSpec) -> FixtureFile {
    let exec = match &t.exec {
        Exec::Id(i) => format!("\"{}\"", IDS[*i]),
        Exec::Primitive => "\"rye/core/primitives/subprocess\"".to_owned(),
        Exec::Missing => "\"nowhere/rt\"".to_owned(),
        Exec::None => "None".to_owned(),
    };
    let version = if t.version { "1.0.0" } else { "1.0" };
    let (ext, text) = if t.yaml {
        let exec = if exec == "None" {
            "null".to_owned()
        } else {
            exec
        };
        (
            "yaml",
            format!(
                "version: \"{version}\"\ntool_type: python\nexecutor_id: {exec}{}\ndescription: \"body {}\"\n",
                SUPPRESSIONS[t.suppress], t.body
            ),
        )
    } else {
        (
            "py",
            format!(
                "__version__ = \"{version}\"\n__tool_type__ = \"python\"\n__executor_id__ = {exec}{}\n\ndef main():\n    return {}\n",
                SUPPRESSIONS[t.suppress], t.body
            ),
        )
    };
    let files = parse_fixture(&format!(
        "//- /{}/.ai/tools/{}.{ext}\n{text}",
        SPACES[t.space], IDS[t.id]
    ));
    files.into_iter().next().expect("one file")
}

#[derive(Clone, Debug)]
enum Op {
    Write(ToolSpec),
    Remove(usize, usize, bool),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![3 => tool_strategy().prop_map(Op::Write), 1 => (0..3usize, 0..IDS.len(), any::<bool>()).prop_map(|(s, i, y)| Op::Remove(s, i, y))]
}

fn key(f: &FixtureFile) -> (String, String) {
    (f.space.label(), f.rel.clone())
}

fn fresh(files: &BTreeMap<(String, String), FixtureFile>) -> Host {
    let mut all: Vec<FixtureFile> = files.values().cloned().collect();
    // Keep a system file so the fixture's system space exists in both hosts.
    all.push(parse_fixture("//- /system/.ai/tools/zz/anchor.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n").remove(0));
    let mut host = Host::new();
    host.apply(change_for(&all, Settings::default()));
    host
}

#[derive(Clone, Debug)]
enum LiveOp {
    Write(ToolSpec),
    Remove(usize, usize, bool),
    /// One of a few project configs (global: every finding may move).
    Config(u8),
    /// The project lockfile of a tool, written from the files as they are now (sound until one
    /// of its chain's files changes), or a broken one when its chain cannot be locked.
    Lock(usize),
    /// A directive or a knowledge entry, well-formed or not (`invalid-directive`,
    /// `invalid-knowledge`, `unsigned-item`).
    Doc(u8),
}

fn live_op_strategy() -> impl Strategy<Value = LiveOp> {
    prop_oneof![
        6 => tool_strategy().prop_map(LiveOp::Write),
        2 => (0..3usize, 0..IDS.len(), any::<bool>()).prop_map(|(s, i, y)| LiveOp::Remove(s, i, y)),
        1 => (0..5u8).prop_map(LiveOp::Config),
        2 => (0..IDS.len()).prop_map(LiveOp::Lock),
        1 => (0..4u8).prop_map(LiveOp::Doc),
    ]
}

/// The lockfile `exec` would write for tool `IDS[i]` on `files` as they are: (rel, text); a tool
/// that cannot be locked (no chain, a bad version) gets a lockfile that names it but pins nothing
/// readable.
fn lockfile_for(i: usize, files: &BTreeMap<(String, String), FixtureFile>) -> FixtureFile {
    let host = fresh(files);
    let a = host.analysis();
    let id = IDS[i];
    let version = a.root_version(id).unwrap_or_else(|| "1.0.0".to_owned());
    let rel = ryechain::integrity::lockfile::lockfile_rel(id, &version)
        .map(|r| r.as_str().to_owned())
        .unwrap_or_else(|_| format!("lockfiles/{id}@1.0.0.lock.json"));
    let text = match a.build_lockfile(id, "2026-01-01T00:00:00.000000+00:00") {
        Ok(lock) => lock.to_text(),
        Err(_) => "{\"lockfile_version\": 1, \"root\": {}}".to_owned(),
    };
    FixtureFile {
        space: Space::Project,
        rel,
        text,
    }
}

fn doc_file(which: u8) -> FixtureFile {
    let (rel, text) = match which {
        0 => (
            "directives/d/flow.md",
            "```xml\n<directive name=\"flow\" version=\"1.0.0\"><process/></directive>\n```\n",
        ),
        1 => (
            "directives/d/flow.md",
            "```xml\n<directive name=\"flow\"><process></directive>\n```\n",
        ),
        2 => (
            "knowledge/k/entry.md",
            "```yaml\nname: entry\ntitle: T\n```\nbody\n",
        ),
        _ => ("knowledge/k/entry.md", "```yaml\nname: [entry\n```\nbody\n"),
    };
    FixtureFile {
        space: Space::Project,
        rel: rel.to_owned(),
        text: text.to_owned(),
    }
}

fn config_file(which: u8) -> FixtureFile {
    let text = match which {
        0 => "lint:\n  ignore: [invalid-version]\n",
        1 => "lint:\n  severity: {missing-executor: warning}\n",
        2 => "chain:\n  max_depth: 3\n",
        // Rules turned off by glob: a file name, and a path with a family.
        3 => {
            "lint:\n  per-file-ignores:\n    \"t1.py\": [missing-executor]\n    \".ai/tools/b/**\": [chain, unused-suppression]\n"
        }
        // Every chain with an edge stops at the limit before looking its executor up.
        _ => "chain:\n  max_depth: 1\n",
    };
    FixtureFile {
        space: Space::Project,
        rel: "config/ryechain.yaml".to_owned(),
        text: text.to_owned(),
    }
}

/// (path, rule, message, severity) of each finding, sorted: how `--watch` tells findings apart.
fn finding_keys(fs: &[Finding]) -> Vec<(String, String, String, Severity)> {
    let mut keys: Vec<_> = fs.iter().map(finding_key).collect();
    keys.sort();
    keys
}

fn finding_key(f: &Finding) -> (String, String, String, Severity) {
    (
        f.path.clone(),
        f.rule.to_string(),
        f.message.clone(),
        f.severity,
    )
}

/// The findings of `now` beyond those of `before`, by key, counting duplicates.
fn beyond_all(now: &[Finding], before: &[Finding]) -> Vec<Finding> {
    let mut left = finding_keys(before);
    now.iter()
        .filter(|f| {
            let k = finding_key(f);
            match left.iter().position(|l| *l == k) {
                Some(i) => {
                    left.remove(i);
                    false
                }
                None => true,
            }
        })
        .cloned()
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `lint --watch`'s lint (`LiveLint`), which re-checks only the files a change reaches, equals
    /// a fresh lint of the final files after every batch of writes, removals and config edits;
    /// and what it says appeared and went away is the difference between the two full reports.
    #[test]
    fn live_lint_equals_fresh(initial in prop::collection::vec(tool_strategy(), 0..10), batches in prop::collection::vec(prop::collection::vec(live_op_strategy(), 1..4), 1..10)) {
        let (mut files, mut host, mut live, mut before) = live_setup(&initial);
        prop_assert_eq!(&live.report().findings, &before.findings);
        for batch in batches {
            let mut change = Change::default();
            for op in batch {
                change.files.push(live_change(op, &mut files));
            }
            let delta = live.apply(&mut host, change);
            let after = lint(&fresh(&files).snapshot(), &LintOptions::default(), &|_| {});
            let report = live.report();
            prop_assert_eq!(&report.findings, &after.findings);
            prop_assert_eq!(report.summary, after.summary);
            prop_assert_eq!(delta.summary, after.summary);
            prop_assert_eq!(finding_keys(&delta.new), finding_keys(&beyond_all(&after.findings, &before.findings)));
            prop_assert_eq!(finding_keys(&delta.fixed), finding_keys(&beyond_all(&before.findings, &after.findings)));
            before = after;
        }
    }
}

/// Write `text` at `rel` of the project space: the model and the change.
fn project_write(
    files: &mut BTreeMap<(String, String), FixtureFile>,
    rel: &str,
    text: &str,
) -> Change {
    let f = FixtureFile {
        space: Space::Project,
        rel: rel.to_owned(),
        text: text.to_owned(),
    };
    let fc = FileChange::Write(file_spec(&f));
    files.insert(key(&f), f);
    Change {
        files: vec![fc],
        ..Change::default()
    }
}

/// A Python tool naming `exec`.
fn py_tool(exec: &str) -> String {
    format!("__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"{exec}\"\n")
}

/// `initial` (project files) under a live lint; then `grow`, a change that reaches every file and
/// makes `c/a`'s chain longer, too deep at a later link; then `last` (a tool of that chain) names no executor, which
/// ends the chain within the limit. The live lint equals a fresh one after each step: after
/// `last` only if the dependency ids were walked again after `grow`.
fn chain_grows_then_ends(initial: &[(&str, String)], grow: (&str, &str), last: &str) {
    let mut files: BTreeMap<(String, String), FixtureFile> = BTreeMap::new();
    for (rel, text) in initial {
        let _ = project_write(&mut files, rel, text);
    }
    let mut host = fresh(&files);
    let mut live = LiveLint::new(host.analysis(), LintOptions::default(), &|_| {});
    let fresh_lint = |files: &BTreeMap<(String, String), FixtureFile>| {
        lint(&fresh(files).snapshot(), &LintOptions::default(), &|_| {}).findings
    };
    let deep = |fs: &[Finding]| {
        fs.iter()
            .any(|f| f.path.ends_with("c/a.py") && &*f.rule == "chain-too-deep")
    };
    assert_eq!(live.report().findings, fresh_lint(&files));
    let delta = live.apply(&mut host, project_write(&mut files, grow.0, grow.1));
    assert!(delta.full.is_some(), "{delta:?}");
    let want = fresh_lint(&files);
    assert!(deep(&want), "{want:#?}");
    assert_eq!(live.report().findings, want);
    let change = project_write(&mut files, last, "__version__ = \"1.0.0\"\n");
    live.apply(&mut host, change);
    let want = fresh_lint(&files);
    assert!(!deep(&want), "{want:#?}");
    assert_eq!(live.report().findings, want);
}

/// A config edit that raises the chain length limit lengthens chains: the dependency ids a full
/// re-check keeps when no chain can move must be walked again then, or a later change deep in a
/// chain is not seen by the tools whose chains now reach it.
#[test]
fn raising_the_chain_limit_renews_what_each_tool_depends_on() {
    // a -> b -> c -> d -> the primitive: too deep at `b` with 2, at `d` with 4.
    chain_grows_then_ends(
        &[
            ("tools/c/a.py", py_tool("c/b")),
            ("tools/c/b.py", py_tool("c/c")),
            ("tools/c/c.py", py_tool("c/d")),
            ("tools/c/d.py", py_tool("rye/core/primitives/subprocess")),
            (
                "config/ryechain.yaml",
                "chain:\n  max_depth: 2\n".to_owned(),
            ),
        ],
        ("config/ryechain.yaml", "chain:\n  max_depth: 4\n"),
        "tools/c/d.py",
    );
}

/// An extractor that makes more files tools lengthens chains: the dependency ids must be walked
/// again after it (a full re-check that keeps them is only for changes no chain can see).
#[test]
fn an_extractor_change_renews_what_each_tool_depends_on() {
    // `c/b.foo` is no tool until an extractor lists `.foo`; then a -> b -> c -> the primitive is
    // too deep at 3.
    chain_grows_then_ends(
        &[
            ("tools/c/a.py", py_tool("c/b")),
            ("tools/c/b.foo", py_tool("c/c")),
            ("tools/c/c.py", py_tool("rye/core/primitives/subprocess")),
            (
                "config/ryechain.yaml",
                "chain:\n  max_depth: 3\n".to_owned(),
            ),
        ],
        (
            "tools/rye/core/extractors/tool/foo_extractor.yaml",
            "version: \"1.0.0\"\ntool_type: extractor\nexecutor_id: null\nextensions: [.py, .foo]\nparsers:\n  .py: python/ast\n  .foo: python/ast\n",
        ),
        "tools/c/c.py",
    );
}

/// The model of `initial`'s files, a host of them, its live lint and a fresh lint of them.
fn live_setup(
    initial: &[ToolSpec],
) -> (
    BTreeMap<(String, String), FixtureFile>,
    Host,
    LiveLint,
    LintReport,
) {
    let mut files: BTreeMap<(String, String), FixtureFile> = BTreeMap::new();
    for t in initial {
        let f = render(t);
        files.insert(key(&f), f);
    }
    let host = fresh(&files);
    let live = LiveLint::new(host.analysis(), LintOptions::default(), &|_| {});
    let before = lint(&fresh(&files).snapshot(), &LintOptions::default(), &|_| {});
    (files, host, live, before)
}

/// The file change of one live op, with `files` (the model) updated.
fn live_change(op: LiveOp, files: &mut BTreeMap<(String, String), FixtureFile>) -> FileChange {
    match op {
        LiveOp::Write(t) => {
            let f = render(&t);
            let fc = FileChange::Write(file_spec(&f));
            files.insert(key(&f), f);
            fc
        }
        LiveOp::Remove(s, i, yaml) => {
            let f = render(&ToolSpec {
                space: s,
                id: i,
                exec: Exec::None,
                version: true,
                body: 0,
                yaml,
                suppress: 0,
            });
            files.remove(&key(&f));
            FileChange::Remove(file_spec(&f).path)
        }
        LiveOp::Config(which) => {
            let f = config_file(which);
            let fc = FileChange::Write(file_spec(&f));
            files.insert(key(&f), f);
            fc
        }
        LiveOp::Lock(i) => {
            let f = lockfile_for(i, files);
            let fc = FileChange::Write(file_spec(&f));
            files.insert(key(&f), f);
            fc
        }
        LiveOp::Doc(which) => {
            let f = doc_file(which);
            let fc = FileChange::Write(file_spec(&f));
            files.insert(key(&f), f);
            fc
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The editor's way through `LiveLint`: each change planned before it is applied, the plans
    /// of changes whose re-check was dropped (a newer change came) merged, and one re-check of
    /// the merged plan on the host with every change applied — equal to a fresh lint of the
    /// final files, its new and fixed findings the difference from the last re-check taken.
    #[test]
    fn live_lint_with_merged_plans_equals_fresh(initial in prop::collection::vec(tool_strategy(), 0..10), rounds in prop::collection::vec((prop::collection::vec(live_op_strategy(), 1..4), any::<bool>()), 1..8)) {
        let (mut files, mut host, mut live, mut before) = live_setup(&initial);
        let mut pending: Option<ryechain::analysis::live::Plan> = None;
        let last = rounds.len() - 1;
        for (i, (ops, take)) in rounds.into_iter().enumerate() {
            // One change per op: each planned on the host before it is applied.
            for op in ops {
                let change = Change { files: vec![live_change(op, &mut files)], ..Change::default() };
                let plan = live.plan(host.analysis(), &change);
                match &mut pending {
                    Some(p) => p.merge(plan),
                    None => pending = Some(plan),
                }
                host.apply(change);
            }
            if !take && i != last {
                continue;
            }
            let plan = pending.take().unwrap();
            let rechecked = live.recheck(host.analysis(), &plan);
            let delta = live.commit(host.analysis(), &plan, rechecked);
            let after = lint(&fresh(&files).snapshot(), &LintOptions::default(), &|_| {});
            let report = live.report();
            prop_assert_eq!(&report.findings, &after.findings);
            prop_assert_eq!(report.summary, after.summary);
            prop_assert_eq!(finding_keys(&delta.new), finding_keys(&beyond_all(&after.findings, &before.findings)));
            prop_assert_eq!(finding_keys(&delta.fixed), finding_keys(&beyond_all(&before.findings, &after.findings)));
            before = after;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// After any sequence of edits, additions and removals, incremental diagnostics equal those of a
    /// database built from scratch with the final files.
    #[test]
    fn incremental_equals_fresh(initial in prop::collection::vec(tool_strategy(), 0..8), ops in prop::collection::vec(op_strategy(), 1..12)) {
        let mut files: BTreeMap<(String, String), FixtureFile> = BTreeMap::new();
        for t in &initial {
            let f = render(t);
            files.insert(key(&f), f);
        }
        let mut host = fresh(&files);
        let _ = findings(&host);
        for op in ops {
            match op {
                Op::Write(t) => {
                    let f = render(&t);
                    host.apply(Change { files: vec![FileChange::Write(file_spec(&f))], ..Change::default() });
                    files.insert(key(&f), f);
                }
                Op::Remove(s, i, yaml) => {
                    let f = render(&ToolSpec { space: s, id: i, exec: Exec::None, version: true, body: 0, yaml, suppress: 0 });
                    host.apply(Change { files: vec![FileChange::Remove(file_spec(&f).path)], ..Change::default() });
                    files.remove(&key(&f));
                }
            }
            // Interleave queries with edits so stale memos would be observed.
            let _ = findings(&host);
        }
        prop_assert_eq!(findings(&host), findings(&fresh(&files)));
    }

    /// Chains never exceed the maximum; every cycle finding is a petgraph SCC (with its members);
    /// resolution always prefers the highest-precedence space that has the id.
    #[test]
    fn chain_graph_and_resolution_invariants(tools in prop::collection::vec(tool_strategy(), 1..14), max in 2usize..6) {
        let mut files: BTreeMap<(String, String), FixtureFile> = BTreeMap::new();
        for t in &tools {
            // Every cycle reported: none suppressed.
            let f = render(&ToolSpec { suppress: 0, ..t.clone() });
            files.insert(key(&f), f);
        }
        let mut all: Vec<FixtureFile> = files.values().cloned().collect();
        all.push(parse_fixture("//- /system/.ai/tools/zz/anchor.py\n__executor_id__ = None\n").remove(0));
        let mut host = Host::new();
        host.apply(change_for(&all, Settings { max_depth: Some(max), ..Settings::default() }));
        let db = host.snapshot();

        for &file in tool_files(&db) {
            prop_assert!(chain(&db, file).elements.len() <= max);
        }

        let graph = executor_graph(&db);
        let report = lint(&db, &LintOptions::default(), &|_| {});
        let cycle_findings: Vec<&Finding> = report.findings.iter().filter(|f| &*f.rule == "executor-cycle").collect();
        prop_assert_eq!(cycle_findings.len(), graph.cycles.len());
        for (finding, members) in cycle_findings.iter().zip(&graph.cycles) {
            let first = graph.nodes[members[0]].file.map(|f| f.path(&db).display().to_string());
            prop_assert_eq!(Some(finding.path.clone()), first);
            for &m in members {
                prop_assert!(finding.help.as_deref().unwrap_or_default().contains(&graph.nodes[m].item_id));
            }
        }

        for id in IDS {
            for from in [SpaceKind::Project, SpaceKind::User, SpaceKind::System] {
                let res = resolve(&db, id, from);
                let visible: Vec<SpaceKind> = from.visible_kinds().to_vec();
                let best = files.values().filter(|f| f.rel == format!("tools/{id}.py") && visible.contains(&f.space.kind())).map(|f| f.space.kind()).min_by_key(|k| std::cmp::Reverse(k.precedence()));
                prop_assert_eq!(res.found.as_ref().map(|c| c.space.kind()), best);
            }
        }
    }
}

fn rels_at(db: &RootDb, paths: &[PathBuf]) -> Vec<Option<String>> {
    paths
        .iter()
        .map(|p| db.file_at(p).map(|f| f.rel(db).to_string()))
        .collect()
}

/// `RootDb::file_at` and `paths_under` (no path index: a root's prefix, then a binary search of
/// its sorted rels).
#[test]
fn files_are_found_by_path_through_writes_and_removals() {
    let fixture = parse_fixture(
        "//- /project/.ai/tools/a/b.py\nx = 1\n\
         //- /project/.ai/tools/a.py\nx = 2\n\
         //- /project/.ai/tools/a/c/d.py\nx = 3\n\
         //- /user/.ai/tools/a/b.py\nx = 4\n",
    );
    let mut db = RootDb::new();
    change_for(&fixture, Default::default()).apply(&mut db);
    let project = ai_dir(&Space::Project);
    let user = ai_dir(&Space::User);
    let probes = [
        project.join("tools/a/b.py"),
        project.join("tools/a.py"),
        project.join("tools/a/c/d.py"),
        user.join("tools/a/b.py"),
        // The same paths spelled with `.` and a doubled separator: still found.
        PathBuf::from(format!("{}/tools/./a//b.py", project.display())),
        // Near misses: a folder, a prefix of a name, the root, another root, `..`.
        project.join("tools/a"),
        project.join("tools/a/b.p"),
        project.clone(),
        Path::new("/elsewhere/.ai/tools/a/b.py").to_path_buf(),
        project.join("tools/x/../a/b.py"),
    ];
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        rels_at(&db, &probes),
        [
            some("tools/a/b.py"),
            some("tools/a.py"),
            some("tools/a/c/d.py"),
            some("tools/a/b.py"),
            some("tools/a/b.py"),
            None,
            None,
            None,
            None,
            None,
        ]
    );
    assert_eq!(
        db.file_at(&probes[3]).map(|f| f.space(&db).clone()),
        Some(Space::User)
    );
    assert_eq!(
        db.paths_under(&project.join("tools/a")),
        [probes[0].clone(), probes[2].clone()],
        "below the folder, not `tools/a.py` beside it"
    );
    // A file is not below itself; a space's root and a folder above it hold all its files; a
    // folder of another root, a path through `..`, and a name's prefix hold none.
    assert_eq!(db.paths_under(&probes[0]), Vec::<PathBuf>::new());
    assert_eq!(
        db.paths_under(&project),
        [probes[0].clone(), probes[2].clone(), probes[1].clone()],
        "sorted as paths: `a/b.py` before `a.py`"
    );
    let above = project.parent().expect("the project's .ai has a parent");
    assert_eq!(db.paths_under(above).len(), 3);
    assert_eq!(db.paths_under(&user.join("tools/a")), [probes[3].clone()]);
    assert_eq!(
        db.paths_under(&project.join("tools/x/../a")),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        db.paths_under(&project.join("tools/a/c")),
        [probes[2].clone()]
    );
    assert_eq!(
        db.paths_under(&project.join("tools/a/")),
        db.paths_under(&project.join("tools/a"))
    );
    assert_eq!(db.paths_under(&project.join("tool")), Vec::<PathBuf>::new());

    // A new file lands in its place in the sorted list; a removed one is gone.
    let new = FixtureFile {
        space: Space::Project,
        rel: "tools/a/bb.py".to_owned(),
        text: "x = 5\n".to_owned(),
    };
    Change {
        files: vec![
            FileChange::Write(file_spec(&new)),
            FileChange::Remove(probes[0].clone()),
        ],
        ..Change::default()
    }
    .apply(&mut db);
    assert_eq!(
        rels_at(
            &db,
            &[
                project.join("tools/a/bb.py"),
                probes[0].clone(),
                probes[1].clone()
            ]
        ),
        [some("tools/a/bb.py"), None, some("tools/a.py")]
    );
    assert_eq!(
        db.paths_under(&project.join("tools/a")),
        [project.join("tools/a/bb.py"), probes[2].clone()]
    );
    // Writing a known path changes that file, adds none.
    let file = db.file_at(&probes[1]);
    let again = FixtureFile {
        space: Space::Project,
        rel: "tools/a.py".to_owned(),
        text: "x = 6\n".to_owned(),
    };
    Change {
        files: vec![FileChange::Write(file_spec(&again))],
        ..Change::default()
    }
    .apply(&mut db);
    assert_eq!(db.file_at(&probes[1]), file);
    let root = db.workspace().roots(&db)[0];
    assert_eq!(root.files(&db).len(), 3);
}

/// `entries_under` gives exactly the entries a scan with `starts_with` gives, in order:
/// names sorting just before and after the folder (`extractors0`, `extractors.md`), the
/// folder's own name without its slash, and a prefix matching nothing.
#[test]
fn entries_under_a_folder_are_the_entries_a_scan_finds() {
    let fixture = [
        "tools/rye/core/extractors",
        "tools/rye/core/extractors.md",
        "tools/rye/core/extractors/tool/python_extractor.yaml",
        "tools/rye/core/extractors/yaml_extractor.yaml",
        "tools/rye/core/extractors0/x.py",
        "tools/rye/core/extractorsa.py",
        "lockfiles/a@1.0.0.lock.json",
        "trusted_keys/k.pem",
    ]
    .iter()
    .map(|rel| format!("//- /project/.ai/{rel}\nx = 1\n"))
    .collect::<String>();
    let host = host(&fixture);
    let db = host.db();
    let root = db.workspace().roots(db)[0];
    for prefix in [
        "tools/rye/core/extractors/",
        "tools/rye/core/extractors",
        "lockfiles/",
        "trusted_keys/",
        "zzz/",
        "",
    ] {
        let scan: Vec<&str> = root
            .entries(db)
            .filter(|(rel, _)| rel.starts_with(prefix))
            .map(|(rel, _)| rel.as_ref())
            .collect();
        let under: Vec<&str> = root
            .entries_under(db, prefix)
            .map(|(rel, _)| rel.as_ref())
            .collect();
        assert_eq!(under, scan, "{prefix}");
    }
    assert_eq!(
        root.entries_under(db, "tools/rye/core/extractors/").count(),
        2
    );
}

/// Issue 31 item 5: header metadata holds no absolute offsets (spans count from the header's
/// start, `header_base`), so an edit above the header of a runtime with 100 dependents re-runs no
/// chain or validation query of a dependent; an edit inside the header does; an edit below it
/// (the body) does not. The queries are named by their functions (`testing::query_ran`), not by
/// text, so renaming one cannot make this pass. Positions stay right: after each edit the
/// findings equal a fresh host's.
#[test]
fn an_edit_above_the_header_reruns_no_dependent_chain_query() {
    use ryechain::resolve::metadata;
    use ryechain::rules::checks::{chain_diagnostics, file_diagnostics, graph_diagnostics};
    use ryechain::testing::{query_ran, query_ran_at_all};

    let runtime = |doc: &str, header: &str, body: &str| {
        format!("\"\"\"{doc}\"\"\"\nimport os\n{header}\ndef helper():\n    return {body}\n")
    };
    // An invalid version: a finding at a header position, which the edits move.
    let header = "__version__ = \"one\"\n__tool_type__ = \"runtime\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let mut tree = format!(
        "//- /project/.ai/tools/acme/rt.py\n{}",
        runtime("Runtime.", header, "1")
    );
    for i in 0..100 {
        tree.push_str(&format!(
            "//- /project/.ai/tools/acme/t{i}.py\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"acme/rt\"\n"
        ));
    }
    let mut host = host(&tree);
    assert!(host.db().enable_event_log(), "the host records");
    let all = |host: &Host| -> Vec<Vec<ryechain::diagnostic::Diagnostic>> {
        let a = host.analysis();
        a.lint_files()
            .into_iter()
            .map(|f| a.diagnostics(f))
            .collect()
    };
    let fresh = |text: &str| {
        let mut t = tree.clone();
        let start = t.find("//- /project/.ai/tools/acme/t0.py").unwrap();
        t.replace_range(
            ..start,
            &format!("//- /project/.ai/tools/acme/rt.py\n{text}"),
        );
        all(&ryechain::testing::host(&t))
    };
    let first = all(&host);
    assert!(
        first
            .iter()
            .flatten()
            .any(|d| d.rule.as_ref() == "invalid-version" && d.span.is_some()),
        "the runtime has a finding at a header position"
    );
    let _ = host.db().take_executed_keys();
    let dependents: Vec<_> = (0..100)
        .map(|i| {
            host.db()
                .file_at(&PathBuf::from(format!(
                    "/fixture/project/.ai/tools/acme/t{i}.py"
                )))
                .expect("loaded")
        })
        .collect();
    let rt = host
        .db()
        .file_at(Path::new("/fixture/project/.ai/tools/acme/rt.py"))
        .expect("loaded");

    // Above the header: a longer docstring moves every header byte.
    let above = runtime(
        "Runtime with a much longer docstring than before.",
        header,
        "1",
    );
    edit(&mut host, Space::Project, "tools/acme/rt.py", &above);
    let after = all(&host);
    let log = host.db().take_executed_keys();
    let db = host.db();
    assert!(
        query_ran(db, &log, metadata, rt),
        "the runtime's header is read again"
    );
    assert!(
        query_ran(db, &log, file_diagnostics, rt),
        "and its own findings, whose positions moved, made again"
    );
    for &dep in &dependents {
        assert!(
            !query_ran(db, &log, chain_diagnostics, dep),
            "a dependent's chain re-ran"
        );
        assert!(
            !query_ran(db, &log, chain, dep),
            "a dependent's chain re-ran"
        );
        assert!(
            !query_ran(db, &log, file_diagnostics, dep),
            "a dependent's checks re-ran"
        );
    }
    assert!(
        !query_ran_at_all(db, &log, executor_graph),
        "the graph re-ran"
    );
    assert!(
        !query_ran_at_all(db, &log, graph_diagnostics),
        "the cycles re-ran"
    );
    assert_eq!(
        after,
        fresh(&above),
        "positions after an edit above the header"
    );
    assert_ne!(after, first, "the runtime's findings moved with its header");

    // Below the header (the body): nothing of the chains re-runs either.
    let below = runtime(
        "Runtime with a much longer docstring than before.",
        header,
        "2",
    );
    edit(&mut host, Space::Project, "tools/acme/rt.py", &below);
    let after = all(&host);
    let log = host.db().take_executed_keys();
    let db = host.db();
    for &dep in &dependents {
        assert!(
            !query_ran(db, &log, chain_diagnostics, dep),
            "a dependent's chain re-ran"
        );
    }
    assert_eq!(after, fresh(&below), "positions after a body edit");

    // Inside the header: the words change, and the dependents' chains are checked again.
    let inside = runtime(
        "Runtime with a much longer docstring than before.",
        &header.replace("one", "1.1.0"),
        "2",
    );
    edit(&mut host, Space::Project, "tools/acme/rt.py", &inside);
    let after = all(&host);
    let log = host.db().take_executed_keys();
    let db = host.db();
    for &dep in &dependents {
        assert!(
            query_ran(db, &log, chain_diagnostics, dep),
            "a dependent's chain did not re-run"
        );
    }
    assert_eq!(after, fresh(&inside), "positions after a header edit");
}
