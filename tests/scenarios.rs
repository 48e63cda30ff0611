//! Reference scenarios of spec §14 about resolution, chains and validation (1–6, 56–58, 63),
//! run on in-memory fixtures.

use ryechain::analysis::chain_view::chain_of;
use ryechain::analysis::{LintOptions, lint};
use ryechain::db::{Db, Settings};
use ryechain::model::{Field, Metadata, Space, SpaceKind, Span, Spanned, Value};
use ryechain::resolve::{DEFAULT_MAX_DEPTH, chain, resolve_root};
use ryechain::rules::validate::parse_version_lenient;
use ryechain::rules::validate::{Link, validate_chain};
use ryechain::testing::host;

fn py_tool(id: &str, executor: &str) -> String {
    format!(
        "//- /project/.ai/tools/{id}.py\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = {executor}\n"
    )
}

/// §14.1: `MAX_CHAIN_DEPTH` is 10.
#[test]
fn s01_max_chain_depth_is_ten() {
    assert_eq!(DEFAULT_MAX_DEPTH, 10);
}

/// §14.2: A1 → … → A11 fails with the reference text; a 10-element chain ending in a primitive passes.
#[test]
fn s02_chain_too_deep_and_exactly_ten_passes() {
    let mut text = String::new();
    for i in 1..=11 {
        text.push_str(&py_tool(&format!("A{i}"), &format!("\"A{}\"", i + 1)));
    }
    text.push_str(&py_tool("A12", "\"rye/core/primitives/subprocess\""));
    let host = host(&text);
    let db = host.snapshot();
    let view = chain_of(&db, "A1");
    let err = view.error.clone().expect("A1's chain is too deep");
    assert!(err.starts_with("Chain too deep (max 10): A1"), "{err}");
    assert_eq!(view.elements.len(), 10);
    // A4 → … → A12 → subprocess is exactly ten elements.
    let view = chain_of(&db, "A4");
    assert_eq!(view.error, None);
    assert_eq!(view.elements.len(), 10);
    assert!(view.passed());
    let view = chain_of(&db, "A3");
    assert!(
        view.error
            .unwrap()
            .starts_with("Chain too deep (max 10): A3")
    );
}

/// §14.3: self loop and A → B → A.
#[test]
fn s03_circular_dependency() {
    let host1 = host(&py_tool("A", "\"A\""));
    assert_eq!(
        chain_of(&host1.snapshot(), "A").error.as_deref(),
        Some("Circular dependency detected: A")
    );
    let host2 = host(&(py_tool("A", "\"B\"") + &py_tool("B", "\"A\"")));
    assert_eq!(
        chain_of(&host2.snapshot(), "A").error.as_deref(),
        Some("Circular dependency detected: A")
    );
    assert_eq!(
        chain_of(&host2.snapshot(), "B").error.as_deref(),
        Some("Circular dependency detected: B")
    );
}

/// §14.4: the empty chain is valid with no pairs.
#[test]
fn s04_validate_empty_chain() {
    let r = validate_chain(ryechain::rules::rules(), &[]);
    assert!(r.valid);
    assert!(r.issues.is_empty());
    assert!(r.pairs.is_empty());
}

/// §14.5: a single primitive element is valid.
#[test]
fn s05_validate_single_primitive() {
    let r = validate_chain(
        ryechain::rules::rules(),
        &[Link {
            item_id: "primitive",
            space: SpaceKind::System,
            metadata: None,
        }],
    );
    assert!(r.valid);
    assert_eq!(r.pairs.len(), 0);
}

/// §14.6: version comparisons (`packaging`-like, pre-releases sort first).
#[test]
fn s06_version_helper() {
    let v = |s: &str| parse_version_lenient(s).unwrap();
    assert!(v("1.0.0") >= v("1.0.0"));
    assert!(v("2.0.0") >= v("1.0.0"));
    assert!(v("0.9.0") < v("1.0.0"));
    assert!(v("1.0.0-alpha") < v("1.0.0"));
}

/// §14.56: a project copy shadows the system one; the shadowed candidate is listed with its label.
#[test]
fn s56_shadowing_prefers_project() {
    let text = "//- /project/.ai/tools/rye/bash/bash.py\n__executor_id__ = \"rt\"\n\
                //- /system/.ai/tools/rye/bash/bash.py\n__executor_id__ = \"rt\"\n\
                //- /system/.ai/tools/rt.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let host = host(text);
    let db = host.snapshot();
    let res = resolve_root(&db, "rye/bash/bash");
    let found = res.found.as_ref().unwrap();
    assert_eq!(found.space, Space::Project);
    assert_eq!(res.shadowed.len(), 1);
    assert_eq!(res.shadowed[0].space.label(), "system:fixture");
    assert_eq!(
        res.shadowed[0].file.path(&db).display().to_string(),
        "/fixture/system/.ai/tools/rye/bash/bash.py"
    );
    let view = chain_of(&db, "rye/bash/bash");
    assert_eq!(view.elements[0].shadowed.len(), 1);
    assert_eq!(view.elements[0].shadowed[0].1, "system:fixture");
}

/// §14.57: a system tool resolves its runtime in system space even when the project has that id.
#[test]
fn s57_system_tool_uses_system_runtime() {
    let text = "//- /system/.ai/tools/sys/tool.py\n__executor_id__ = \"rt/python\"\n\
                //- /system/.ai/tools/rt/python.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n\
                //- /project/.ai/tools/rt/python.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let host = host(text);
    let db = host.snapshot();
    let sys_tool = db
        .file_at(std::path::Path::new(
            "/fixture/system/.ai/tools/sys/tool.py",
        ))
        .unwrap();
    let ch = chain(&db, sys_tool);
    assert_eq!(ch.elements[1].space.label(), "system:fixture");
    let proj_tool_runtime = db.workspace().roots(&db)[0].files(&db)[0];
    assert_ne!(ch.elements[1].file, Some(proj_tool_runtime));
}

/// §14.58: a user tool never resolves a project runtime (missing-executor with the hidden help), and
/// a crafted user → project chain has a space issue with the reference text.
#[test]
fn s58_user_cannot_see_project() {
    let text = "//- /user/.ai/tools/u/tool.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"p/rt\"\n\
                //- /project/.ai/tools/p/rt.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let host = host(text);
    let db = host.snapshot();
    let report = lint(&db, &LintOptions::default(), &|_| {});
    let missing: Vec<_> = report
        .findings
        .iter()
        .filter(|f| &*f.rule == "missing-executor")
        .collect();
    assert_eq!(missing.len(), 1, "{:#?}", report.findings);
    assert_eq!(missing[0].message, "Executor not found: p/rt");
    assert!(
        missing[0]
            .help
            .as_deref()
            .unwrap()
            .contains("exists only in the project space")
    );

    let crafted = [
        Link {
            item_id: "u/tool",
            space: SpaceKind::User,
            metadata: None,
        },
        Link {
            item_id: "p/rt",
            space: SpaceKind::Project,
            metadata: None,
        },
    ];
    let r = validate_chain(ryechain::rules::rules(), &crafted);
    assert!(!r.valid);
    assert_eq!(
        r.issues,
        vec![
            "Tool 'u/tool' from user space cannot depend on 'p/rt' from project space. Lower precedence spaces cannot depend on higher precedence spaces."
        ]
    );
    assert!(!r.pairs[0].space_ok);
}

/// §14.63: the dry-run response carries `validated_pairs` as the seed's list with full ids.
#[test]
fn s63_validated_pairs_shape() {
    let text = "//- /project/.ai/tools/rye/file-system/write.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"rt/python\"\n\
                //- /project/.ai/tools/rt/python.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let host = host(text);
    let json =
        ryechain::render::chain::dry_run(&chain_of(&host.snapshot(), "rye/file-system/write"));
    assert_eq!(json["status"], "validation_passed");
    assert_eq!(json["message"], "Tool chain validation passed (dry run)");
    assert_eq!(json["item_id"], "rye/file-system/write");
    assert_eq!(
        json["chain"],
        serde_json::json!([
            "rye/file-system/write",
            "rt/python",
            "rye/core/primitives/subprocess"
        ])
    );
    assert_eq!(
        json["validated_pairs"],
        serde_json::json!([
            {"child": "rye/file-system/write", "parent": "rt/python", "space_ok": true, "io_ok": true, "version_ok": true},
            {"child": "rt/python", "parent": "rye/core/primitives/subprocess", "space_ok": true, "io_ok": true, "version_ok": true}
        ])
    );
}

/// §4.6/§4.7 through crafted metadata: I/O and version issues carry the reference wording.
#[test]
fn validator_io_and_version_messages() {
    let s = |v: &str| Spanned::new(Value::Str(v.into()), Span::default());
    let list = |xs: &[&str]| {
        Spanned::new(
            Value::List(xs.iter().map(|x| s(x)).collect()),
            Span::default(),
        )
    };
    let child =
        Metadata::from_fields([(Field::Version, s("1.0.0")), (Field::Outputs, list(&["a"]))]);
    let constraint = Value::Map(Box::new([(
        Spanned::new("min_version".into(), Span::default()),
        s("2.0.0"),
    )]));
    let parent = Metadata::from_fields([
        (Field::Inputs, list(&["a", "b"])),
        (
            Field::ChildConstraints,
            Spanned::new(
                Value::Map(Box::new([(
                    Spanned::new("c".into(), Span::default()),
                    Spanned::new(constraint, Span::default()),
                )])),
                Span::default(),
            ),
        ),
    ]);
    let r = validate_chain(
        ryechain::rules::rules(),
        &[
            Link {
                item_id: "c",
                space: SpaceKind::Project,
                metadata: Some(&child),
            },
            Link {
                item_id: "p",
                space: SpaceKind::Project,
                metadata: Some(&parent),
            },
        ],
    );
    assert_eq!(
        r.issues,
        vec![
            "I/O mismatch: 'p' requires inputs ['b'] not provided by 'c' (outputs: ['a'])"
                .to_owned(),
            "Version constraint failed: 'c' version 1.0.0 < minimum required 2.0.0".to_owned(),
        ]
    );
    assert!(!r.pairs[0].io_ok && !r.pairs[0].version_ok && r.pairs[0].space_ok);
}

/// The primitive rule of DESIGN.md: a project file with a primitive id never becomes a link. It
/// is the element (resolved through the spaces as the reference resolves it, so verified like
/// any other file), but its own `executor_id` is never followed.
#[test]
fn project_file_cannot_reroute_a_primitive() {
    let text = "//- /project/.ai/tools/t.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n\
                //- /project/.ai/tools/rye/core/primitives/subprocess.py\n__executor_id__ = \"evil/runtime\"\n";
    let host = host(text);
    let view = chain_of(&host.snapshot(), "t");
    assert!(view.passed(), "{view:#?}");
    assert_eq!(view.elements.len(), 2);
    assert!(view.elements[1].primitive);
    assert_eq!(view.elements[1].space, "project");
}

/// Settings reach the chain: a lower max depth refuses a chain the default accepts.
#[test]
fn max_depth_setting_is_honoured() {
    let text = py_tool("a", "\"b\"") + &py_tool("b", "\"rye/core/primitives/subprocess\"");
    let settings = Settings {
        max_depth: Some(2),
        ..Settings::default()
    };
    let host = ryechain::testing::host_with(&text, settings);
    let view = chain_of(&host.snapshot(), "a");
    assert_eq!(
        view.error.as_deref(),
        Some("Chain too deep (max 2): a. Possible circular dependency or excessive nesting.")
    );
}

/// Issue 30 item 10: the `unknown-primitive` help names a runtime the file can reach from its
/// own space — not one that only ryechain's embedded bundle has — or says to pick a visible one.
#[test]
fn the_unknown_primitive_help_names_only_a_visible_runtime() {
    let extractor = ryechain::testing::embedded_text("extractors/tool/tool_extractor.yaml");
    let forgot = "//- /project/.ai/tools/acme/forgot.py\n__version__ = \"1.0.0\"\nif __name__ == \"__main__\":\n    print(1)\n";
    let help_with = |bundle: &str| {
        let text = format!(
            "//- /system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml\n{extractor}{bundle}{forgot}"
        );
        let host = host(&text);
        let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
        report
            .findings
            .iter()
            .find(|f| &*f.rule == "unknown-primitive")
            .and_then(|f| f.help.clone())
            .expect("the tool forgot its executor")
    };
    // A bundle with only the reference-era runtime: that one is named.
    let legacy = "//- /system/.ai/tools/rye/core/runtimes/python_script_runtime.yaml\nversion: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\n";
    let h = help_with(legacy);
    assert!(
        h.contains("`rye/core/runtimes/python_script_runtime`"),
        "{h}"
    );
    // No runtime for `.py` anywhere: none is named.
    let h = help_with("");
    assert!(!h.contains("rye/core/runtimes/"), "{h}");
    assert!(h.contains("visible from the project space"), "{h}");
    // With the embedded bundle, its runtime.
    let host = host(forgot);
    let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
    let h = report
        .findings
        .iter()
        .find(|f| &*f.rule == "unknown-primitive")
        .and_then(|f| f.help.clone())
        .unwrap();
    assert!(h.contains("`rye/core/runtimes/python/script`"), "{h}");
}
