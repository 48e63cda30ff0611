//! Rules run per rule: each compiled rule holds its own parameters and words and is executed as
//! itself, so two rules of one check kind with different parameters both fire, each where its
//! own parameters say (issue 31); a rule file that repeats an id or names an unknown check kind is
//! a compile error naming the file.

use ryechain::analysis::{LintOptions, lint};
use ryechain::rules::{RuleError, RuleSet, embedded_rule_files};
use ryechain::testing::host;

/// The embedded rules plus `extra` (path under `rules/`, text).
fn embedded_plus(extra: &[(&str, String)]) -> RuleSet {
    let mut files: Vec<(&str, &str)> = embedded_rule_files().to_vec();
    files.extend(extra.iter().map(|(p, t)| (*p, t.as_str())));
    RuleSet::compile(files).expect("the rule set compiles")
}

/// An embedded rule file with its id replaced and one line of its check replaced.
fn variant_of(file: &str, new_id: &str, line_starts: &str, new_line: &str) -> String {
    let (_, text) = embedded_rule_files()
        .iter()
        .find(|(f, _)| *f == file)
        .expect("the embedded rule exists");
    let old_id = file.rsplit('/').next().unwrap().trim_end_matches(".yaml");
    let mut replaced = false;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l == format!("id: {old_id}") {
                format!("id: {new_id}")
            } else if l.trim_start().starts_with(line_starts) {
                replaced = true;
                new_line.to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    assert!(replaced, "{file} has a line starting with {line_starts}");
    out.join("\n") + "\n"
}

/// `(rule id, path suffix)` of every finding of a lint of the fixture under `rules`.
fn findings(fixture: &str, rules: RuleSet) -> Vec<(String, String)> {
    let mut host = host(fixture);
    host.use_rules(rules);
    let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
    let mut out: Vec<(String, String)> = report
        .findings
        .iter()
        .map(|f| (f.rule.to_string(), f.path.clone()))
        .collect();
    out.sort();
    out
}

fn fired(found: &[(String, String)], rule: &str, path_end: &str) -> bool {
    found
        .iter()
        .any(|(r, p)| r == rule && p.ends_with(path_end))
}

const SPACES: &str = r#"
//- /user/.ai/tools/acme/report.py
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme"
__tool_description__ = "A user tool on a system runtime"

def execute(params, project_path):
    return {}
//- /project/.ai/tools/acme/build.py
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme"
__tool_description__ = "A project tool on a system runtime"

def execute(params, project_path):
    return {}
"#;

/// Two `space_precedence` rules: the bundled table (project 3, user 2, system 1) and a stricter
/// one that ranks the system space above the user space. A user tool on a system runtime breaks
/// only the second; a project tool on it breaks neither (the near miss).
#[test]
fn two_precedence_rules_each_judge_with_their_own_table() {
    let strict = variant_of(
        "space/upward-space-dependency.yaml",
        "upward-space-dependency-strict",
        "precedence:",
        "  precedence: {project: 3, user: 1, system: 2}",
    );
    let found = findings(
        SPACES,
        embedded_plus(&[("space/upward-space-dependency-strict.yaml", strict)]),
    );
    assert!(
        fired(
            &found,
            "upward-space-dependency-strict",
            "user/.ai/tools/acme/report.py"
        ),
        "{found:#?}"
    );
    assert!(!fired(&found, "upward-space-dependency", "report.py"));
    assert!(
        !found
            .iter()
            .any(|(r, p)| r.starts_with("upward-space-dependency") && p.ends_with("build.py")),
        "{found:#?}"
    );

    // The embedded rules alone: nothing at all (the strict rule is the only difference).
    assert!(
        !findings(SPACES, embedded_plus(&[]))
            .iter()
            .any(|(r, _)| r.starts_with("upward-space-dependency")),
    );
}

const NO_EXECUTOR: &str = r#"
//- /project/.ai/tools/acme/rotate.py
__version__ = "1.0.0"
__tool_type__ = "python"
__category__ = "acme"
__tool_description__ = "Forgot its executor"

def execute(params, project_path):
    return {}
//- /project/.ai/tools/acme/settings.py
__version__ = "1.0.0"
__tool_type__ = "config"
__category__ = "acme"
__tool_description__ = "Data the bundled rule leaves alone"

def execute(params, project_path):
    return {}
"#;

/// Two `terminal_not_primitive` rules with different lists of data tool types: the bundled one
/// leaves a `config` item alone, the second (which counts no type as data) reports it too; both
/// report the tool that forgot its executor, each with its own id.
#[test]
fn two_terminal_rules_each_use_their_own_data_types() {
    let strict = variant_of(
        "chain/unknown-primitive.yaml",
        "unknown-primitive-strict",
        "non_executable_tool_types:",
        "  non_executable_tool_types: []",
    );
    let found = findings(
        NO_EXECUTOR,
        embedded_plus(&[("chain/unknown-primitive-strict.yaml", strict)]),
    );
    assert!(
        fired(&found, "unknown-primitive", "rotate.py"),
        "{found:#?}"
    );
    assert!(fired(&found, "unknown-primitive-strict", "rotate.py"));
    assert!(fired(&found, "unknown-primitive-strict", "settings.py"));
    assert!(!fired(&found, "unknown-primitive", "settings.py"));
}

/// A repeated id and an unknown check kind are errors of the rule file, naming it.
#[test]
fn a_duplicate_id_or_an_unknown_check_kind_is_a_compile_error_of_its_file() {
    let (_, text) = embedded_rule_files()
        .iter()
        .find(|(f, _)| *f == "chain/unknown-primitive.yaml")
        .unwrap();
    let mut files: Vec<(&str, &str)> = embedded_rule_files().to_vec();
    files.push(("chain/unknown-primitive.yaml", text));
    let errors = RuleSet::compile(files).expect_err("a duplicate id is refused");
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, RuleError::Duplicate { file, id }
            if file == "chain/unknown-primitive.yaml" && id == "unknown-primitive")),
        "{errors:?}"
    );

    let unknown = variant_of(
        "chain/unknown-primitive.yaml",
        "unknown-primitive-other",
        "kind:",
        "  kind: terminal_is_a_primitive",
    );
    let errors = RuleSet::compile([("chain/unknown-primitive-other.yaml", unknown.as_str())])
        .expect_err("an unknown check kind is refused");
    let text = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.starts_with("chain/unknown-primitive-other.yaml: ")
            && text.contains("terminal_is_a_primitive"),
        "{text}"
    );
}
