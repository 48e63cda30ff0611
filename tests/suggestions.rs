//! `missing-executor` suggests the closest ids the element may name ("did you mean"): from the
//! ids visible from its space (plus primitives), at most three, computed once per space kind;
//! shown in the human, JSON and SARIF outputs, and as a SARIF fix when one is certain.
#![allow(
    clippy::disallowed_methods,
    reason = "one test loads the example tree from disk"
)]

use ryechain::analysis::{Host, LintOptions, lint};
use ryechain::db::{Change, FileChange, Settings};
use ryechain::diagnostic::Finding;
use ryechain::load::load;
use ryechain::model::Space;
use ryechain::render::{self, HumanOptions, RuleMeta, ToolInfo};
use ryechain::system::os::OsSystem;
use ryechain::testing::{FixtureFile, file_spec, host};

const TREE: &str = "\
//- /project/.ai/tools/acme/a.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python/scirpt\"
//- /project/.ai/tools/acme/b.py
__version__ = \"1.0.0\"
__executor_id__ = \"acme/runtimes/project_pythn\"
//- /project/.ai/tools/acme/c.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/primitives/subproces\"
//- /project/.ai/tools/acme/d.py
__version__ = \"1.0.0\"
__executor_id__ = \"nothing/like/any/id/at/all\"
//- /project/.ai/tools/acme/e.py
__version__ = \"1.0.0\"
__executor_id__ = \"acme/runtimes/node_c\"
//- /project/.ai/tools/acme/runtimes/node_a.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/primitives/subprocess\"
//- /project/.ai/tools/acme/runtimes/node_b.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/primitives/subprocess\"
//- /project/.ai/tools/acme/runtimes/project_python.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/primitives/subprocess\"
//- /user/.ai/tools/me/u.py
__version__ = \"1.0.0\"
__executor_id__ = \"acme/runtimes/project_pythn\"
//- /user/.ai/tools/me/v.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python/scirpt\"
//- /system/.ai/tools/rye/core/runtimes/python/script.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/primitives/subprocess\"
";

fn findings(host: &Host) -> Vec<Finding> {
    lint(&host.snapshot(), &LintOptions::default(), &|_| {})
        .findings
        .into_iter()
        .filter(|f| &*f.rule == "missing-executor")
        .collect()
}

fn at<'a>(all: &'a [Finding], path_end: &str) -> &'a Finding {
    all.iter()
        .find(|f| f.path.ends_with(path_end))
        .unwrap_or_else(|| panic!("no missing-executor finding at {path_end}: {all:#?}"))
}

#[test]
fn suggestions_come_from_the_ids_the_element_may_name() {
    let all = findings(&host(TREE));
    assert_eq!(all.len(), 7, "{all:#?}");
    let a = at(&all, "acme/a.py");
    assert_eq!(a.suggestions, ["rye/core/runtimes/python/script"]);
    // The fix replaces the id inside the quotes: line 2, columns 20..51.
    let fix = a.fix.as_ref().expect("one close id: a certain fix");
    assert_eq!(
        (fix.line, fix.column, fix.end_line, fix.end_column),
        (2, 20, 2, 51)
    );
    assert_eq!(fix.replacement, "rye/core/runtimes/python/script");
    // A project runtime is suggested to a project tool ...
    assert_eq!(
        at(&all, "acme/b.py").suggestions,
        ["acme/runtimes/project_python"]
    );
    // ... never to a user tool, which cannot see the project space.
    let u = at(&all, "me/u.py");
    assert!(u.suggestions.is_empty() && u.fix.is_none(), "{u:#?}");
    // The user tool still gets system ids.
    assert_eq!(
        at(&all, "me/v.py").suggestions,
        ["rye/core/runtimes/python/script"]
    );
    // Primitive ids count though no file carries them here.
    assert_eq!(
        at(&all, "acme/c.py").suggestions,
        ["rye/core/primitives/subprocess"]
    );
    // Nothing close: no guess.
    let d = at(&all, "acme/d.py");
    assert!(d.suggestions.is_empty() && d.fix.is_none(), "{d:#?}");
    // Two ids one edit away: both suggested, neither applied as a fix.
    let e = at(&all, "acme/e.py");
    assert_eq!(
        e.suggestions,
        ["acme/runtimes/node_a", "acme/runtimes/node_b"]
    );
    assert!(e.fix.is_none(), "{e:#?}");
}

#[test]
fn visible_ids_are_computed_once_per_space_kind_and_survive_edits() {
    let mut host = host(TREE);
    assert!(host.db().enable_event_log(), "the host records");
    let before = findings(&host);
    let visible = |log: &[String]| {
        log.iter()
            .filter(|e| e.starts_with("visible_ids_of("))
            .count()
    };
    let log = host.db().take_executed();
    // Five project findings and two user ones: one list for each kind, not one per finding.
    assert_eq!(visible(&log), 2, "{log:?}");

    // A header edit of one tool re-checks it but does not rebuild the lists.
    host.apply(Change {
        files: vec![FileChange::Write(file_spec(&FixtureFile {
            space: Space::Project,
            rel: "tools/acme/a.py".to_owned(),
            text:
                "__version__ = \"1.0.1\"\n__executor_id__ = \"rye/core/runtimes/python/scirpt\"\n"
                    .to_owned(),
        }))],
        ..Change::default()
    });
    assert_eq!(findings(&host), before);
    let log = host.db().take_executed();
    assert_eq!(visible(&log), 0, "{log:?}");
}

#[test]
fn every_renderer_shows_the_suggestions() {
    let all = findings(&host(TREE));
    let a = at(&all, "acme/a.py").clone();
    let summary = Default::default();

    let human = render::human::render(
        std::slice::from_ref(&a),
        &summary,
        &HumanOptions {
            color: false,
            quiet: false,
        },
    );
    assert!(
        human.contains("= help: did you mean `rye/core/runtimes/python/script`?"),
        "{human}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&render::json::render(std::slice::from_ref(&a), &summary)).unwrap();
    assert_eq!(
        json["diagnostics"][0]["suggestions"],
        serde_json::json!(["rye/core/runtimes/python/script"])
    );

    let rules: Vec<RuleMeta> = Vec::new();
    let tool = ToolInfo {
        name: "ryechain".to_owned(),
        version: "0".to_owned(),
        information_uri: "https://example.com".to_owned(),
        src_root: None,
    };
    let sarif: serde_json::Value =
        serde_json::from_str(&render::sarif::render(&[a], &rules, &tool)).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    let replacement = &result["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(
        replacement["insertedContent"]["text"],
        "rye/core/runtimes/python/script"
    );
    assert_eq!(
        replacement["deletedRegion"],
        serde_json::json!({"startLine": 2, "startColumn": 20, "endLine": 2, "endColumn": 51})
    );

    // Several close ids: suggested, but no fix.
    let e = at(&all, "acme/e.py").clone();
    let sarif: serde_json::Value =
        serde_json::from_str(&render::sarif::render(&[e], &rules, &tool)).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert!(result.get("fixes").is_none(), "{result:#}");
    assert_eq!(
        result["properties"]["suggestions"],
        serde_json::json!(["acme/runtimes/node_a", "acme/runtimes/node_b"])
    );
}

#[test]
fn the_example_tree_typo_suggests_the_script_runtime() {
    let specs = ryechain::testing::example_spaces();
    let mut change = load(&OsSystem, &specs).change;
    change.settings = Some(Settings::default());
    let mut host = Host::new();
    host.apply(change);
    let all = findings(&host);
    let f = at(&all, "acme/reports/weekly_digest.py");
    assert_eq!(f.suggestions, ["rye/core/runtimes/python/script"]);
    assert_eq!(
        f.fix.as_ref().map(|x| x.replacement.as_str()),
        Some("rye/core/runtimes/python/script")
    );
}
