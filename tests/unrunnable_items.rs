//! Library and data items under `tools/` (DESIGN.md): `unknown-primitive` fires only on files
//! meant to run; `unrunnable-item` is opt-in; the run facts behind both live in their own query,
//! so a body edit that keeps them re-runs no chain query, and one that adds an entry point does.

use ryechain::analysis::{Host, LintOptions, lint};
use ryechain::db::{Change, FileChange, Settings};
use ryechain::model::Space;
use ryechain::testing::{FixtureFile, file_spec, host, host_with};

const LIB: &str = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"acme/lib\"\n\nclass OpsError(Exception):\n    pass\n";

fn tree(lib: &str) -> String {
    format!(
        "//- /project/.ai/tools/acme/lib/errors.py\n{lib}\
//- /project/.ai/tools/acme/lib/__init__.py\nfrom .errors import OpsError\n\
//- /project/.ai/tools/acme/config/events.yaml\nevents:\n  rotated: {{severity: info}}\n\
//- /project/.ai/tools/acme/run.yaml\nconfig:\n  command: node\n"
    )
}

/// (rule, item id) of every finding except the integrity family's (the tree is unsigned).
fn findings(host: &Host) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = lint(&host.snapshot(), &LintOptions::default(), &|_| {})
        .findings
        .into_iter()
        .filter(|f| &*f.rule != "unsigned-item")
        .map(|f| (f.rule.to_string(), f.item_id.unwrap_or_default()))
        .collect();
    out.sort();
    out
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(r, i)| ((*r).to_owned(), (*i).to_owned()))
        .collect()
}

#[test]
fn library_and_data_files_are_silent_by_default_and_a_run_config_is_not() {
    let h = host(&tree(LIB));
    assert_eq!(
        findings(&h),
        pairs(&[("unknown-primitive", "acme/run")]),
        "only the YAML with `config.command` is a tool that forgot its executor"
    );
    // `ALL` and the family do not turn an opt-in rule on; its id does, or a config severity.
    for select in [vec!["ALL"], vec!["chain"]] {
        let settings = Settings {
            select: Some(select.iter().map(|s| (*s).to_owned()).collect()),
            ..Settings::default()
        };
        let h = host_with(&tree(LIB), settings);
        assert!(
            !findings(&h).iter().any(|(r, _)| r == "unrunnable-item"),
            "{select:?}"
        );
    }
    let settings = Settings {
        select: Some(vec!["unrunnable-item".to_owned()]),
        ..Settings::default()
    };
    let h = host_with(&tree(LIB), settings);
    assert_eq!(
        findings(&h),
        pairs(&[
            ("unrunnable-item", "acme/config/events"),
            ("unrunnable-item", "acme/lib/__init__"),
            ("unrunnable-item", "acme/lib/errors"),
        ])
    );
    let config =
        "//- /project/.ai/config/ryechain.yaml\nlint:\n  severity:\n    unrunnable-item: warning\n";
    let h = host(&format!("{}{config}", tree(LIB)));
    let got = findings(&h);
    assert_eq!(
        got.iter().filter(|(r, _)| r == "unrunnable-item").count(),
        3,
        "{got:?}"
    );
}

fn edit(host: &mut Host, rel: &str, text: &str) {
    let f = FixtureFile {
        space: Space::Project,
        rel: rel.to_owned(),
        text: text.to_owned(),
    };
    host.apply(Change {
        files: vec![FileChange::Write(file_spec(&f))],
        ..Change::default()
    });
}

/// DESIGN.md invariant, for the element without an executor: a body edit that leaves it a library
/// re-runs no chain query; adding a `__main__` block makes it a tool that forgot its executor.
#[test]
fn body_edits_of_a_library_rerun_chain_diagnostics_only_when_it_becomes_runnable() {
    let mut h = host(&tree(LIB));
    assert!(h.db().enable_event_log(), "the host records");
    let before = findings(&h);
    let _ = h.db().take_executed();

    let body_edit = format!("{LIB}\n\nclass RotationFailed(OpsError):\n    pass\n");
    edit(&mut h, "tools/acme/lib/errors.py", &body_edit);
    assert_eq!(findings(&h), before);
    let log = h.db().take_executed();
    assert!(log.iter().any(|e| e.starts_with("run_facts(")), "{log:?}");
    for q in [
        "chain(",
        "resolve_item(",
        "chain_diagnostics(",
        "space_index(",
    ] {
        assert!(
            !log.iter().any(|e| e.starts_with(q)),
            "{q} re-ran after a body-only edit: {log:?}"
        );
    }

    let script = format!("{body_edit}\n\nif __name__ == \"__main__\":\n    raise SystemExit(0)\n");
    edit(&mut h, "tools/acme/lib/errors.py", &script);
    assert_eq!(
        findings(&h),
        pairs(&[
            ("unknown-primitive", "acme/lib/errors"),
            ("unknown-primitive", "acme/run"),
        ])
    );
    let log = h.db().take_executed();
    assert!(
        log.iter().any(|e| e.starts_with("chain_diagnostics(")),
        "{log:?}"
    );
    assert!(!log.iter().any(|e| e.starts_with("chain(")), "{log:?}");
}

/// `ryechain rules` says which rules are off by default and how to add one, and that hint works.
#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the test runs the binary on a tree it writes"
)]
fn rules_list_marks_opt_in_rules_and_the_hint_turns_one_on() {
    let exe = env!("CARGO_BIN_EXE_ryechain");
    let out = std::process::Command::new(exe)
        .arg("rules")
        .output()
        .unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8(out.stdout).unwrap();
    let line = |id: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} not listed:\n{listing}"))
            .to_owned()
    };
    assert!(
        line("unrunnable-item")
            .contains("(off by default; `--select ALL,unrunnable-item` adds it)"),
        "{listing}"
    );
    assert!(!line("unknown-primitive").contains("off by default"));
    let doc = std::process::Command::new(exe)
        .args(["rule", "unrunnable-item"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&doc.stdout).contains("off by default"));

    // The hint, run as printed, reports the library module.
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join(".ai/tools/acme/lib/errors.py");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::write(&lib, LIB).unwrap();
    let lint = |extra: &[&str]| {
        let out = std::process::Command::new(exe)
            .args(["lint", "--no-progress", "--format", "json", "--user-space"])
            .arg(dir.path().join("no-user"))
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(!lint(&[]).contains("unrunnable-item"));
    assert!(lint(&["--select", "ALL,unrunnable-item"]).contains("\"unrunnable-item\""));
}

/// A script that forgot its executor: top-level code and no `__executor_id__`.
const SCRIPT: &str = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"  # run by the python runtime\n__category__ = \"demo\"\n__tool_description__ = \"Say hello\"\n\nimport json\nimport sys\n\nparams = json.loads(sys.stdin.read() or \"{}\")\nprint(json.dumps({\"hello\": params.get(\"name\", \"world\")}))\n";

/// Its near miss: a library module that imports, assigns and defines (a call only inside an
/// assignment), which stays silent.
const LIBRARY: &str = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__category__ = \"demo\"\n\nimport logging\n\nlog = logging.getLogger(__name__)\n\ndef helper(x):\n    print(x)\n";

/// Issue 35 item 3: a script with top-level code and no executor is the most common mistake,
/// so it is an `unknown-primitive` error (a library module beside it is not), and the finding
/// carries the fix: the header line naming the runtime, inserted after the tool type's line
/// (its comment kept in place). Applied, the file lints clean and its chain reaches the
/// primitive.
#[test]
fn a_script_that_forgot_its_executor_is_an_error_with_a_fix_that_adds_the_header_line() {
    let fixture = format!(
        "//- /project/.ai/tools/demo/hello.py\n{SCRIPT}//- /project/.ai/tools/demo/helpers.py\n{LIBRARY}//- /system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml\n{}//- /system/.ai/tools/rye/core/runtimes/python/script.yaml\n{}",
        ryechain::testing::embedded_text("extractors/tool/tool_extractor.yaml"),
        ryechain::testing::embedded_text("runtimes/python/script.yaml")
    );
    let host = host(&fixture);
    let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
    let hello: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.item_id.as_deref() == Some("demo/hello") && &*f.rule != "unsigned-item")
        .collect();
    assert_eq!(hello.len(), 1, "{hello:#?}");
    assert_eq!(&*hello[0].rule, "unknown-primitive");
    assert_eq!(hello[0].severity, ryechain::diagnostic::Severity::Error);
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.item_id.as_deref() == Some("demo/helpers") && &*f.rule != "unsigned-item"),
        "{:#?}",
        report.findings
    );

    // The fix inserts a line of its own after line 2.
    let fix = hello[0].fix.as_ref().expect("a fix");
    assert_eq!(
        (fix.line, fix.column, fix.end_line, fix.end_column),
        (3, 1, 3, 1)
    );
    let runtime = "rye/core/runtimes/python/script";
    assert_eq!(
        fix.replacement,
        format!("__executor_id__ = \"{runtime}\"\n")
    );
    let mut lines: Vec<&str> = SCRIPT.split_inclusive('\n').collect();
    lines.insert(2, &fix.replacement);
    let fixed = lines.concat();
    assert!(
        fixed.contains("__tool_type__ = \"python\"  # run by the python runtime\n__executor_id__")
    );

    let fixed_fixture = fixture.replace(SCRIPT, &fixed);
    let host = ryechain::testing::host(&fixed_fixture);
    let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.item_id.as_deref() == Some("demo/hello") && &*f.rule == "unknown-primitive"),
        "{:#?}",
        report.findings
    );
    let view = ryechain::analysis::chain_view::chain_of(&host.snapshot(), "demo/hello");
    assert_eq!(view.elements[1].item_id, runtime, "{view:#?}");
    assert!(view.unknown_primitive.is_none(), "{view:#?}");
}
