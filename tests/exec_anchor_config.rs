//! The anchor system and verify_deps (§6, scenario §14.61) and CONFIG_RESOLVE (§7, scenario
//! §14.60) of the execution core: pure functions fed with machine facts (`exec::facts`) and
//! in-memory workspaces, no file system.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value as J, json};

use ryechain::analysis::verify::Policy;
use ryechain::db::change::{FileSpec, RootSpec};
use ryechain::db::{Change, FileContents, Settings};
use ryechain::exec::anchor::{
    AnchorContext, AnchorElement, AnchorMode, AnchorRoot, EnvPath, anchor_lib_problem,
    apply_env_paths, dep_files, plan_anchor, template,
};
use ryechain::exec::config_resolve::{ConfigMode, ResolvedConfig, inject, resolve_config};
use ryechain::exec::facts::{Ask, DepFile, DepListing, DepWalk, Facts, Need, PathFact, PathKind};
use ryechain::integrity::{ItemKind, SignatureFormat, sign_text, trust};
use ryechain::model::{EMBEDDED_PATH_PREFIX, Space, Value};
use ryechain::testing::{FIXTURE_ROOT, host};

// ---------------------------------------------------------------- anchor (§6)

const TOOL: &str = "/proj/.ai/tools/acme/pkg/run.py";
const TOOL_DIR: &str = "/proj/.ai/tools/acme/pkg";
const RUNTIME: &str = "/sys/.ai/tools/rye/core/runtimes/python/script.yaml";

/// The shipped python runtime's anchor (§13) and verify_deps.
fn python_anchor() -> J {
    json!({
        "enabled": true,
        "mode": "auto",
        "markers_any": ["__init__.py", "pyproject.toml"],
        "root": "tool_dir",
        "lib": "lib",
        "env_paths": {"PYTHONPATH": {"prepend": ["{anchor_path}", "{runtime_lib}"]}}
    })
}

fn python_verify() -> J {
    json!({
        "enabled": true,
        "scope": "anchor",
        "recursive": true,
        "extensions": [".py", ".yaml", ".yml", ".json"],
        "exclude_dirs": ["__pycache__", ".venv", "node_modules", ".git", "config"]
    })
}

/// tool → python runtime (with `anchor`/`verify_deps`) → primitive (no file).
fn chain_with(anchor: J, verify: Option<J>) -> Vec<AnchorElement> {
    vec![
        AnchorElement {
            item_id: "acme/pkg/run".into(),
            path: Some(TOOL.into()),
            ..Default::default()
        },
        AnchorElement {
            item_id: "rye/core/runtimes/python/script".into(),
            path: Some(RUNTIME.into()),
            anchor: Some(anchor),
            verify_deps: verify,
            space_root: Some("/sys/.ai".into()),
        },
        AnchorElement {
            item_id: "rye/core/primitives/subprocess".into(),
            ..Default::default()
        },
    ]
}

fn facts_with(files: &[&str], missing: &[&str]) -> Facts {
    let mut f = Facts::complete(BTreeMap::new());
    for p in files {
        f.paths.insert(
            PathBuf::from(p),
            PathFact {
                kind: PathKind::File,
                executable: false,
                real: Some(PathBuf::from(p)),
            },
        );
    }
    for p in missing {
        f.paths.insert(PathBuf::from(p), PathFact::missing());
    }
    f
}

fn marker(name: &str) -> String {
    format!("{TOOL_DIR}/{name}")
}

fn plan(chain: &[AnchorElement], facts: &Facts) -> Option<ryechain::exec::anchor::Anchor> {
    plan_anchor(chain, "/proj", "/home/u", "/sys", &Ask::new(facts))
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// §14.61 / §6.3: with `__init__.py` in the tool's directory the anchor is active and
/// PYTHONPATH starts `<tool_dir>:<runtime_lib>` (the existing entries follow).
#[test]
fn s14_61_marker_present_prepends_tool_dir_and_runtime_lib() {
    let chain = chain_with(python_anchor(), None);
    // First round: the markers are not known yet, so the planner asks about both.
    let empty = Facts::complete(BTreeMap::new());
    let ask = Ask::new(&empty);
    assert!(plan_anchor(&chain, "/proj", "/home/u", "/sys", &ask).is_none());
    assert_eq!(
        ask.needs(),
        vec![
            Need::Path(PathBuf::from(marker("__init__.py"))),
            Need::Path(PathBuf::from(marker("pyproject.toml"))),
        ]
    );
    let facts = facts_with(&[&marker("__init__.py")], &[&marker("pyproject.toml")]);
    let anchor = plan(&chain, &facts).expect("all facts known");
    assert!(anchor.active);
    assert_eq!(anchor.context.anchor_path, TOOL_DIR);
    assert_eq!(
        anchor.context.runtime_lib,
        "/sys/.ai/tools/rye/core/runtimes/python/lib"
    );
    let mut e = env(&[("PYTHONPATH", "/site")]);
    anchor.apply_env(&mut e, &BTreeMap::new());
    assert_eq!(
        e["PYTHONPATH"],
        format!("{TOOL_DIR}:/sys/.ai/tools/rye/core/runtimes/python/lib:/site")
    );
}

/// §14.61 / §6.3: no marker in auto mode ⇒ inactive, the environment is unchanged, but the
/// context still reaches the parameters (§6.4, always).
#[test]
fn s14_61_no_marker_auto_leaves_env_unchanged() {
    let chain = chain_with(python_anchor(), Some(python_verify()));
    let facts = facts_with(&[], &[&marker("__init__.py"), &marker("pyproject.toml")]);
    let anchor = plan(&chain, &facts).unwrap();
    assert!(!anchor.active);
    assert_eq!(anchor.verify, None, "verify_deps runs only when active");
    assert_eq!(anchor.dep_walk(), None);
    let mut e = env(&[("PYTHONPATH", "/site")]);
    anchor.apply_env(&mut e, &BTreeMap::new());
    assert_eq!(e, env(&[("PYTHONPATH", "/site")]));
    let params = anchor.parameters(&serde_json::Map::new());
    assert_eq!(params["tool_dir"], json!(TOOL_DIR));
    assert_eq!(params["tool_parent"], json!("/proj/.ai/tools/acme"));
    assert_eq!(params["tool_path"], json!(TOOL));
    assert_eq!(params["anchor_path"], json!(TOOL_DIR));
    assert_eq!(params["project_path"], json!("/proj"));
    assert_eq!(params["user_space"], json!("/home/u"));
    assert_eq!(params["system_space"], json!("/sys"));
}

/// §6.3: the markers live directly in the tool's directory; a marker in a parent directory does
/// not count (no upward search, §15.17).
#[test]
fn s06_3_markers_are_not_searched_upwards() {
    let chain = chain_with(python_anchor(), None);
    let facts = facts_with(
        &["/proj/.ai/tools/acme/__init__.py"],
        &[&marker("__init__.py"), &marker("pyproject.toml")],
    );
    assert!(!plan(&chain, &facts).unwrap().active);
}

/// §6.3: `always` needs no marker and asks nothing; `never` ignores a present marker.
#[test]
fn s06_3_modes_always_and_never() {
    let mut a = python_anchor();
    a["mode"] = json!("always");
    let empty = Facts::complete(BTreeMap::new());
    let ask = Ask::new(&empty);
    let anchor = plan_anchor(&chain_with(a, None), "/proj", "/u", "/sys", &ask).unwrap();
    assert!(anchor.active);
    assert!(!ask.pending(), "always asks about no marker");
    assert_eq!(anchor.config.as_ref().unwrap().mode, AnchorMode::Always);

    let mut n = python_anchor();
    n["mode"] = json!("never");
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    assert!(!plan(&chain_with(n, None), &facts).unwrap().active);
}

/// §6.1/§6.3: `enabled` defaults to false, even for `mode: always`; only `true` enables.
#[test]
fn s06_3_disabled_anchor_is_inactive() {
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    for enabled in [None, Some(json!(false)), Some(json!("yes"))] {
        let mut a = python_anchor();
        a["mode"] = json!("always");
        match enabled {
            None => {
                a.as_object_mut().unwrap().remove("enabled");
            }
            Some(v) => a["enabled"] = v,
        }
        let anchor = plan(&chain_with(a.clone(), Some(python_verify())), &facts).unwrap();
        assert!(!anchor.active, "{a}");
        assert_eq!(anchor.dep_walk(), None);
    }
}

/// §6.1/§6.4 step 1: each root, and an unknown root means the tool's directory.
#[test]
fn s06_1_each_root_sets_anchor_path() {
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    for (root, want, kind) in [
        ("tool_dir", TOOL_DIR, AnchorRoot::ToolDir),
        (
            "tool_parent",
            "/proj/.ai/tools/acme",
            AnchorRoot::ToolParent,
        ),
        ("project_path", "/proj", AnchorRoot::ProjectPath),
        ("somewhere", TOOL_DIR, AnchorRoot::ToolDir),
    ] {
        let anchor = plan(&chain_with(python_anchor_rooted(root), None), &facts).unwrap();
        assert_eq!(anchor.context.anchor_path, want, "{root}");
        assert_eq!(anchor.config.as_ref().unwrap().root, kind);
        let mut e = BTreeMap::new();
        anchor.apply_env(&mut e, &BTreeMap::new());
        assert!(e["PYTHONPATH"].starts_with(&format!("{want}:")), "{root}");
    }
}

fn python_anchor_rooted(root: &str) -> J {
    let mut a = python_anchor();
    a["root"] = json!(root);
    a
}

/// §6.1: the config comes from the first element (from the tool) that has an `anchor`; the
/// runtime_lib from the first that has `anchor.lib`, relative to that element's directory, with
/// `.` dropped and `..` kept.
#[test]
fn s06_2_first_anchor_wins_and_runtime_lib_is_relative_to_its_element() {
    let mut chain = chain_with(python_anchor(), None);
    chain[0].anchor = Some(json!({"enabled": true, "mode": "never"}));
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    let anchor = plan(&chain, &facts).unwrap();
    assert!(!anchor.active, "the tool's own anchor (never) wins");
    assert_eq!(anchor.config.unwrap().source, 0);
    // The tool's anchor has no lib, so runtime_lib comes from the runtime.
    assert_eq!(
        anchor.context.runtime_lib,
        "/sys/.ai/tools/rye/core/runtimes/python/lib"
    );
    let mut a = python_anchor();
    a["lib"] = json!(".");
    let ctx = plan(&chain_with(a, None), &facts).unwrap().context;
    assert_eq!(ctx.runtime_lib, "/sys/.ai/tools/rye/core/runtimes/python");
    let mut a = python_anchor();
    a["lib"] = json!("../lib/./py");
    let ctx = plan(&chain_with(a, None), &facts).unwrap().context;
    assert_eq!(
        ctx.runtime_lib,
        "/sys/.ai/tools/rye/core/runtimes/python/../lib/py"
    );
}

/// DESIGN.md "one checked path builder": an `anchor.lib` whose `..` climb out of its element's
/// space (or an absolute one) is refused with what it names; inside, `..` is kept as before.
#[test]
fn an_anchor_lib_that_leaves_its_space_is_refused() {
    let with_lib = |lib: &str| {
        let mut a = python_anchor();
        a["lib"] = json!(lib);
        chain_with(a, None)
    };
    assert_eq!(anchor_lib_problem(&with_lib("../lib/./py")), None);
    assert_eq!(anchor_lib_problem(&with_lib("../../../../../lib")), None);
    let e = anchor_lib_problem(&with_lib("../../../../../../etc")).unwrap();
    assert_eq!(
        e,
        "The anchor `lib: ../../../../../../etc` of rye/core/runtimes/python/script leaves its space: it names /sys/etc, outside /sys/.ai"
    );
    assert!(anchor_lib_problem(&with_lib("/usr/lib/python3")).is_some());
}

/// §6.2: an element of the embedded bundle has no directory on disk: its `lib` gives an empty
/// runtime_lib, and an embedded tool has no markers (nothing is asked about such paths).
#[test]
fn s06_2_embedded_elements_have_no_runtime_lib_and_no_markers() {
    let mut chain = chain_with(python_anchor(), Some(python_verify()));
    chain[1].path = Some(PathBuf::from(format!(
        "{EMBEDDED_PATH_PREFIX}ryechain>/.ai/tools/rye/core/runtimes/python/script.yaml"
    )));
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    let anchor = plan(&chain, &facts).unwrap();
    assert!(anchor.active);
    assert_eq!(anchor.context.runtime_lib, "");
    let mut e = BTreeMap::new();
    anchor.apply_env(&mut e, &BTreeMap::new());
    assert_eq!(e["PYTHONPATH"], TOOL_DIR, "an empty entry is not added");

    let mut chain = chain_with(python_anchor(), Some(python_verify()));
    chain[0].path = Some(PathBuf::from(format!(
        "{EMBEDDED_PATH_PREFIX}ryechain>/.ai/tools/rye/x/tool.py"
    )));
    let empty = Facts::complete(BTreeMap::new());
    let ask = Ask::new(&empty);
    let anchor = plan_anchor(&chain, "/proj", "/u", "/sys", &ask).unwrap();
    assert!(!anchor.active);
    assert!(!ask.pending());
}

/// §6.5: prepend in declared order without duplicates (an existing entry is not moved), append
/// after, empty results skipped, unknown placeholders verbatim; the OS value when the resolved
/// environment lacks the variable; empty parts of the old value dropped.
#[test]
fn s06_5_env_paths_prepend_append_without_duplicates() {
    let ctx = AnchorContext {
        tool_dir: "/t".into(),
        anchor_path: "/anc".into(),
        runtime_lib: "/lib".into(),
        ..AnchorContext::default()
    };
    let paths = vec![
        EnvPath {
            var: "PYTHONPATH".into(),
            prepend: vec![
                "{anchor_path}".into(),
                "{runtime_lib}".into(),
                "/b".into(),
                "{user_space}".into(),
            ],
            append: vec!["/c".into(), "/a".into(), "{nope}/x".into(), "/c".into()],
        },
        EnvPath {
            var: "NODE_PATH".into(),
            prepend: vec!["{anchor_path}/node_modules".into()],
            append: vec![],
        },
        EnvPath {
            var: "FRESH".into(),
            prepend: vec![],
            append: vec!["{tool_dir}".into()],
        },
    ];
    let mut e = env(&[("PYTHONPATH", "/a::/b:")]);
    let os = env(&[("NODE_PATH", "/os"), ("PYTHONPATH", "/ignored")]);
    apply_env_paths(&mut e, &os, &paths, &ctx);
    assert_eq!(e["PYTHONPATH"], "/anc:/lib:/a:/b:/c:{nope}/x");
    assert_eq!(e["NODE_PATH"], "/anc/node_modules:/os");
    assert_eq!(e["FRESH"], "/t");
}

/// §6.4 step 5: `cwd` is templated from the context and overrides the caller's; other caller
/// parameters override the context underneath.
#[test]
fn s06_4_cwd_is_templated_and_overrides_the_caller() {
    let mut a = python_anchor();
    a["cwd"] = json!("{anchor_path}/work");
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    let anchor = plan(&chain_with(a.clone(), None), &facts).unwrap();
    assert_eq!(
        anchor.cwd().as_deref(),
        Some("/proj/.ai/tools/acme/pkg/work")
    );
    let caller = json!({"cwd": "/elsewhere", "tool_dir": "/mine", "x": 1});
    let params = anchor.parameters(caller.as_object().unwrap());
    assert_eq!(params["cwd"], json!("/proj/.ai/tools/acme/pkg/work"));
    assert_eq!(params["tool_dir"], json!("/mine"));
    assert_eq!(params["x"], json!(1));
    // Inactive: no cwd, the caller's stays.
    let off = facts_with(&[], &[&marker("__init__.py"), &marker("pyproject.toml")]);
    let anchor = plan(&chain_with(a, None), &off).unwrap();
    assert_eq!(anchor.cwd(), None);
    let params = anchor.parameters(caller.as_object().unwrap());
    assert_eq!(params["cwd"], json!("/elsewhere"));
}

#[test]
fn s06_5_template_word_names_only() {
    let ctx = AnchorContext {
        tool_dir: "/t".into(),
        ..AnchorContext::default()
    };
    assert_eq!(
        template("{tool_dir}/{x}/{tool-dir}", &ctx),
        "/t/{x}/{tool-dir}"
    );
}

/// §6.6: scopes give the walk to ask for; `tool_siblings` is the tool's directory, not
/// recursive; `anchor` is the anchor root; `tool_file` walks nothing; defaults for
/// `exclude_dirs` and `recursive`.
#[test]
fn s06_6_verify_deps_walk_requests() {
    let facts = facts_with(&[&marker("__init__.py")], &[]);
    let with_scope = |scope: &str, root: &str| {
        let mut v = python_verify();
        v["scope"] = json!(scope);
        plan(&chain_with(python_anchor_rooted(root), Some(v)), &facts)
            .unwrap()
            .dep_walk()
    };
    let siblings = with_scope("tool_siblings", "tool_parent").unwrap();
    assert_eq!(siblings.base, Path::new(TOOL_DIR));
    assert!(!siblings.recursive);
    assert_eq!(siblings.extensions, [".py", ".yaml", ".yml", ".json"]);
    let dir = with_scope("tool_dir", "tool_parent").unwrap();
    assert_eq!(dir.base, Path::new(TOOL_DIR));
    assert!(dir.recursive);
    let anchor = with_scope("anchor", "tool_parent").unwrap();
    assert_eq!(anchor.base, Path::new("/proj/.ai/tools/acme"));
    assert_eq!(with_scope("tool_file", "tool_dir"), None);

    let v = json!({"enabled": true, "extensions": [".py"]});
    let walk = plan(&chain_with(python_anchor(), Some(v)), &facts)
        .unwrap()
        .dep_walk()
        .unwrap();
    assert_eq!(
        walk,
        DepWalk {
            base: PathBuf::from(TOOL_DIR),
            recursive: true,
            extensions: vec![".py".into()],
            exclude_dirs: ["__pycache__", ".venv", "node_modules", ".git"]
                .map(String::from)
                .to_vec(),
        }
    );
    // verify_deps must be enabled itself.
    let v = json!({"scope": "anchor", "extensions": [".py"]});
    let anchor = plan(&chain_with(python_anchor(), Some(v)), &facts).unwrap();
    assert!(anchor.active);
    assert_eq!(anchor.dep_walk(), None);
}

fn dep(path: &str, real: Option<&str>, text: Result<&str, &str>) -> DepFile {
    DepFile {
        path: PathBuf::from(path),
        real: real.map(PathBuf::from),
        text: text.map(Arc::from).map_err(str::to_owned),
    }
}

/// §6.6 / §15.27: an escape is judged by path components: `/a/bc/x` is not under `/a/b`.
#[test]
fn s06_6_s15_27_symlink_escape_by_components() {
    let listing = DepListing {
        real_base: Some(PathBuf::from("/a/b")),
        files: vec![
            dep("/a/b/in.py", Some("/a/b/sub/in.py"), Ok("x = 1\n")),
            dep("/a/b/x.py", Some("/a/bc/x.py"), Ok("x = 2\n")),
        ],
        errors: vec![],
    };
    assert_eq!(
        dep_files(&listing).unwrap_err(),
        "Symlink escape: /a/b/x.py resolves to /a/bc/x.py"
    );
    let ok = DepListing {
        files: listing.files[..1].to_vec(),
        ..listing.clone()
    };
    let files = dep_files(&ok).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path, Path::new("/a/b/in.py"));
    assert_eq!(&*files[0].text, "x = 1\n");
}

/// §6.6: unreadable or unresolvable files and walk errors refuse with a clear text; a base that
/// does not exist has nothing to verify.
#[test]
fn s06_6_unreadable_dependencies_refuse() {
    let base = Some(PathBuf::from("/a/b"));
    let unreadable = DepListing {
        real_base: base.clone(),
        files: vec![dep(
            "/a/b/x.py",
            Some("/a/b/x.py"),
            Err("the file is not valid UTF-8"),
        )],
        errors: vec![],
    };
    assert_eq!(
        dep_files(&unreadable).unwrap_err(),
        "Cannot verify dependency /a/b/x.py: the file is not valid UTF-8"
    );
    let dangling = DepListing {
        real_base: base.clone(),
        files: vec![dep("/a/b/x.py", None, Ok(""))],
        errors: vec![],
    };
    assert!(dep_files(&dangling).unwrap_err().contains("/a/b/x.py"));
    let walk_error = DepListing {
        real_base: base,
        files: vec![],
        errors: vec!["/a/b/private: permission denied".into()],
    };
    assert!(
        dep_files(&walk_error)
            .unwrap_err()
            .contains("/a/b/private: permission denied")
    );
    let missing = DepListing {
        real_base: None,
        files: vec![],
        errors: vec![],
    };
    assert_eq!(dep_files(&missing).unwrap().len(), 0);
}

/// §14.61: a tampered sibling `.py` found by the walk refuses the run through the integrity
/// check (`verify_chain` with the files as extras), even when unsigned items are allowed.
#[test]
fn s14_61_tampered_sibling_refuses_before_spawn() {
    let key = test_key(7);
    let tool = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n";
    let fixture = format!(
        "//- /user/.ai/config/keys/trusted/{fp}.toml\n{doc}//- /project/.ai/tools/acme/pkg/run.py\n{tool}//- /project/.ai/tools/acme/pkg/__init__.py\n",
        fp = key.fp,
        doc = trust::trust_doc_toml(&key.public_pem, "test"),
    );
    let host = host(&fixture);
    let elements = AnchorElement::from_chain(&host.analysis().chain("acme/pkg/run"));
    assert_eq!(elements.len(), 3);
    assert!(
        elements[1].anchor.is_some(),
        "the embedded runtime declares an anchor"
    );
    let tool_dir = format!("{FIXTURE_ROOT}/project/.ai/tools/acme/pkg");
    let facts = facts_with(&[&format!("{tool_dir}/__init__.py")], &[]);
    let ask = Ask::new(&facts);
    let anchor = plan_anchor(&elements, "/fixture/project", "/fixture/user", "/sys", &ask).unwrap();
    assert!(anchor.active);
    assert_eq!(anchor.context.runtime_lib, "", "the runtime is embedded");
    let walk = anchor
        .dep_walk()
        .expect("the shipped runtime verifies deps");
    assert_eq!(walk.base, Path::new(&tool_dir));

    let good = signed_text("helper = 1\n", &key);
    let tampered = good.replace("helper = 1", "helper = 2");
    let mut facts = facts.clone();
    facts.walks.insert(
        walk.clone(),
        DepListing {
            real_base: Some(PathBuf::from(&tool_dir)),
            files: vec![
                dep(
                    &format!("{tool_dir}/good.py"),
                    Some(&format!("{tool_dir}/good.py")),
                    Ok(good.as_str()),
                ),
                dep(
                    &format!("{tool_dir}/lib/bad.py"),
                    Some(&format!("{tool_dir}/lib/bad.py")),
                    Ok(tampered.as_str()),
                ),
            ],
            errors: vec![],
        },
    );
    let extras = anchor
        .dependencies(&Ask::new(&facts))
        .expect("the walk is known")
        .expect("no escape");
    assert_eq!(extras.len(), 2);
    let v = host
        .analysis()
        .verify_chain("acme/pkg/run", &extras)
        .unwrap();
    let refusal = v
        .refusal(&Policy {
            allow_unsigned: true,
        })
        .expect("the tampered sibling refuses");
    assert!(
        refusal.starts_with(&format!("Integrity failed: {tool_dir}/lib/bad.py")),
        "{refusal}"
    );
    // Without the tampered file the chain may run.
    let v = host
        .analysis()
        .verify_chain("acme/pkg/run", &extras[..1])
        .unwrap();
    assert_eq!(
        v.refusal(&Policy {
            allow_unsigned: true
        }),
        None
    );
    // And before the walk is known, the planner asks for it.
    let no_walk = ask_facts_without_walk(&facts, &walk);
    let ask = Ask::new(&no_walk);
    assert!(anchor.dependencies(&ask).is_none());
    assert_eq!(ask.needs(), vec![Need::Walk(walk)]);
}

fn ask_facts_without_walk(facts: &Facts, walk: &DepWalk) -> Facts {
    let mut f = facts.clone();
    f.walks.remove(walk);
    f
}

// ---------------------------------------------------------------- signing helpers

use ryechain::testing::{TestKey, test_key};

/// `text` signed as a tool with `#` comments (what Python and YAML files carry).
fn signed_text(text: &str, key: &TestKey) -> String {
    let ts = "2026-11-22T00:00:00Z".to_owned();
    sign_text(
        ItemKind::Tool,
        &SignatureFormat::hash_comment(),
        text,
        &key.sk,
        &key.fp,
        ts,
    )
    .unwrap()
    .0
}

// ---------------------------------------------------------------- CONFIG_RESOLVE (§7)

/// The `config_resolve` value of a YAML tool header.
fn decl(yaml: &str) -> Value {
    let parsed = ryechain::parse::parse(
        ryechain::parse::ParserKind::Yaml,
        &format!("config_resolve: {yaml}\n"),
    );
    parsed
        .metadata
        .config_resolve()
        .expect("declared")
        .value
        .clone()
}

fn resolve(fixture: &str, d: &str) -> Result<ResolvedConfig, String> {
    let host = host(fixture);
    let facts = Facts::complete(BTreeMap::new());
    resolve_config(host.analysis(), &decl(d), &Ask::new(&facts)).expect("everything is loaded")
}

const SYSTEM_AND_PROJECT: &str = "//- /system/.ai/config/web/x.yaml\na: 1\nb: {x: 1}\nl: [1, 2]\n//- /project/.ai/config/web/x.yaml\nb: {y: 2}\nl: [3]\n//- /project/.ai/config/other.yaml\nz: 0\n";

/// §14.60: deep_merge of system `a:1, b:{x:1}` and project `b:{y:2}` is `{a:1, b:{x:1,y:2}}`;
/// lists are replaced, not concatenated (§7.4).
#[test]
fn s14_60_deep_merge_system_and_project() {
    let r = resolve(SYSTEM_AND_PROJECT, "{path: web/x.yaml, mode: deep_merge}").unwrap();
    assert_eq!(r.value, json!({"a": 1, "b": {"x": 1, "y": 2}, "l": [3]}));
    assert_eq!(
        r.sources,
        [
            PathBuf::from("/fixture/system/.ai/config/web/x.yaml"),
            PathBuf::from("/fixture/project/.ai/config/web/x.yaml"),
        ]
    );
}

/// §14.60: first_match returns the project file only, unmerged.
#[test]
fn s14_60_first_match_returns_the_project_file_only() {
    let r = resolve(SYSTEM_AND_PROJECT, "{path: web/x.yaml, mode: first_match}").unwrap();
    assert_eq!(r.value, json!({"b": {"y": 2}, "l": [3]}));
    assert_eq!(r.sources.len(), 1);
    // Without a project file, the user's is the first match.
    let text = "//- /system/.ai/config/c.yaml\nk: system\n//- /user/.ai/config/c.yaml\nk: user\n";
    let r = resolve(text, "{path: c.yaml, mode: first_match}").unwrap();
    assert_eq!(r.value, json!({"k": "user"}));
}

/// §7.4: the default mode is deep_merge (a bare path string is accepted too).
#[test]
fn s07_4_default_mode_is_deep_merge() {
    let r = resolve(SYSTEM_AND_PROJECT, "{path: web/x.yaml}").unwrap();
    assert_eq!(r.value, json!({"a": 1, "b": {"x": 1, "y": 2}, "l": [3]}));
    let r = resolve(SYSTEM_AND_PROJECT, "web/x.yaml").unwrap();
    assert_eq!(r.value["a"], json!(1));
}

/// §7.4: a file missing from every space resolves to `{}` without an error.
#[test]
fn s07_4_missing_everywhere_is_empty() {
    for mode in ["deep_merge", "first_match"] {
        let r = resolve(
            SYSTEM_AND_PROJECT,
            &format!("{{path: none.yaml, mode: {mode}}}"),
        )
        .unwrap();
        assert_eq!(r.value, json!({}));
        assert!(r.sources.is_empty());
        assert!(r.warnings.is_empty());
    }
}

fn space_root(space: Space, dir: &str, files: &[(&str, &str)]) -> RootSpec {
    let root = PathBuf::from(dir).join(".ai");
    RootSpec {
        files: files
            .iter()
            .map(|(rel, text)| FileSpec {
                space: space.clone(),
                path: root.join(rel),
                rel: (*rel).to_owned(),
                contents: FileContents::Text((*text).into()),
                link_origin: None,
            })
            .collect(),
        space,
        root,
    }
}

/// §7.4: every system bundle takes part, lowest precedence first: the first bundle beats the
/// second, user beats both; first_match walks the bundles in order.
#[test]
fn s07_4_all_bundles_take_part_in_bundle_order() {
    let core = Space::System {
        order: 0,
        bundle: "core".into(),
    };
    let addon = Space::System {
        order: 1,
        bundle: "addon".into(),
    };
    let rel = "config/c.yaml";
    let roots = vec![
        space_root(Space::Project, "/p", &[]),
        space_root(Space::User, "/u", &[(rel, "u: user\n")]),
        space_root(core, "/core", &[(rel, "k: core\nc: 1\n")]),
        space_root(addon, "/addon", &[(rel, "k: addon\na: 1\nu: addon\n")]),
    ];
    let mut h = ryechain::analysis::Host::new();
    h.apply(Change {
        roots: Some(roots),
        files: vec![],
        settings: Some(Settings::default()),
    });
    let db = h.analysis();
    let facts = Facts::complete(BTreeMap::new());
    let r = resolve_config(db, &decl("{path: c.yaml}"), &Ask::new(&facts))
        .unwrap()
        .unwrap();
    assert_eq!(r.value, json!({"k": "core", "a": 1, "u": "user", "c": 1}));
    assert_eq!(
        r.sources,
        [
            "/addon/.ai/config/c.yaml",
            "/core/.ai/config/c.yaml",
            "/u/.ai/config/c.yaml"
        ]
        .map(PathBuf::from)
    );
    let r = resolve_config(
        db,
        &decl("{path: c.yaml, mode: first_match}"),
        &Ask::new(&facts),
    )
    .unwrap()
    .unwrap();
    assert_eq!(r.value, json!({"u": "user"}));
}

/// §7.4: the path's extension names the format: `.json` is read as JSON, `.yml` as YAML like
/// `.yaml`; any other extension, or none, is a declaration error.
#[test]
fn s07_4_formats_by_extension() {
    let text = "//- /system/.ai/config/w.json\n{\"a\": {\"x\": 1}, \"n\": null}\n//- /project/.ai/config/w.json\n{\"a\": {\"y\": [1]}}\n//- /project/.ai/config/v.yml\nk: 1\n";
    let r = resolve(text, "{path: w.json}").unwrap();
    assert_eq!(r.value, json!({"a": {"x": 1, "y": [1]}, "n": null}));
    assert_eq!(
        resolve(text, "{path: v.yml}").unwrap().value,
        json!({"k": 1})
    );
    for bad in ["w.toml", "w", "dir/w.txt"] {
        let err = resolve(text, &format!("{{path: \"{bad}\"}}")).unwrap_err();
        assert!(
            err.contains(bad) && err.contains(".yaml, .yml or .json"),
            "{err}"
        );
    }
}

/// §7.4: hostile paths (absolute, `..`, backslashes, empty segments) are refused before any file
/// is looked for; a bad mode or a missing path is a declaration error.
#[test]
fn s07_4_hostile_paths_and_bad_declarations_are_refused() {
    for bad in [
        "../secrets.yaml",
        "/etc/x.yaml",
        "a/../../b.yaml",
        "a\\\\b.yaml",
        "a//b.yaml",
        "./a.yaml",
        "C:/x.yaml",
    ] {
        let err = resolve(SYSTEM_AND_PROJECT, &format!("{{path: \"{bad}\"}}")).unwrap_err();
        assert!(err.contains("inside .ai/config/"), "{bad}: {err}");
    }
    let err = resolve(SYSTEM_AND_PROJECT, "{path: web/x.yaml, mode: merge}").unwrap_err();
    assert!(err.contains("deep_merge") && err.contains("merge"), "{err}");
    let err = resolve(SYSTEM_AND_PROJECT, "{mode: deep_merge}").unwrap_err();
    assert!(err.contains("no `path`"), "{err}");
    let err = resolve(SYSTEM_AND_PROJECT, "{path: 3}").unwrap_err();
    assert!(err.contains("must be a string"), "{err}");
    let err = resolve(SYSTEM_AND_PROJECT, "42").unwrap_err();
    assert!(err.contains("mapping"), "{err}");
}

/// §7.4: a document that is not a mapping, or does not parse, is an error naming the file; an
/// empty document counts as an empty mapping.
#[test]
fn s07_4_bad_files_are_errors_naming_the_file() {
    let text = "//- /system/.ai/config/list.yaml\n- 1\n- 2\n//- /project/.ai/config/broken.yaml\na: [1,\n//- /project/.ai/config/broken.json\n{\"a\": }\n//- /project/.ai/config/empty.yaml\n# nothing yet\n//- /system/.ai/config/empty.yaml\nk: 1\n";
    let err = resolve(text, "{path: list.yaml}").unwrap_err();
    assert_eq!(
        err,
        "Config file /fixture/system/.ai/config/list.yaml must hold a mapping, not a list"
    );
    let err = resolve(text, "{path: broken.yaml}").unwrap_err();
    assert!(
        err.starts_with("Config file /fixture/project/.ai/config/broken.yaml is not valid YAML"),
        "{err}"
    );
    let err = resolve(text, "{path: broken.json}").unwrap_err();
    assert!(
        err.starts_with("Config file /fixture/project/.ai/config/broken.json is not valid JSON"),
        "{err}"
    );
    assert_eq!(
        resolve(text, "{path: empty.yaml}").unwrap().value,
        json!({"k": 1})
    );
}

/// §7.4 signature policy: unsigned files warn (as data), a signed file by a trusted key passes
/// silently, a tampered file fails loudly with the integrity text.
#[test]
fn s07_4_warn_if_unsigned_fail_if_tampered() {
    let key = test_key(3);
    let trust_doc = format!(
        "//- /user/.ai/config/keys/trusted/{fp}.toml\n{doc}",
        fp = key.fp,
        doc = trust::trust_doc_toml(&key.public_pem, "test"),
    );
    let signed = signed_text("a: 1\n", &key);
    let text = format!(
        "{trust_doc}//- /system/.ai/config/s.yaml\n{signed}//- /project/.ai/config/s.yaml\nb: 2\n"
    );
    let r = resolve(&text, "{path: s.yaml}").unwrap();
    assert_eq!(r.value, json!({"a": 1, "b": 2}));
    assert_eq!(
        r.warnings,
        ["Unsigned config file: /fixture/project/.ai/config/s.yaml"]
    );

    let tampered = signed.replace("a: 1", "a: 9");
    let text = format!("{trust_doc}//- /system/.ai/config/s.yaml\n{tampered}");
    let err = resolve(&text, "{path: s.yaml}").unwrap_err();
    assert!(
        err.starts_with("Integrity failed: /fixture/system/.ai/config/s.yaml"),
        "{err}"
    );
    // first_match checks only the file it returns.
    let text = format!(
        "{trust_doc}//- /system/.ai/config/s.yaml\n{tampered}//- /project/.ai/config/s.yaml\nb: 2\n"
    );
    assert!(resolve(&text, "{path: s.yaml, mode: first_match}").is_ok());
    // A key nobody trusts refuses too.
    let stranger = test_key(4);
    let text = format!(
        "{trust_doc}//- /project/.ai/config/s.yaml\n{}",
        signed_text("a: 1\n", &stranger)
    );
    let err = resolve(&text, "{path: s.yaml}").unwrap_err();
    assert!(err.starts_with("Untrusted key"), "{err}");
}

/// §7.4: the list form resolves each spec to `{path: resolved}`; warnings and sources add up.
#[test]
fn s07_4_list_form() {
    let r = resolve(
        SYSTEM_AND_PROJECT,
        "[{path: web/x.yaml, mode: first_match}, other.yaml, {path: none.yaml}]",
    )
    .unwrap();
    assert_eq!(
        r.value,
        json!({"web/x.yaml": {"b": {"y": 2}, "l": [3]}, "other.yaml": {"z": 0}, "none.yaml": {}})
    );
    assert_eq!(r.sources.len(), 2);
    assert_eq!(r.warnings.len(), 2);
}

/// Lazy loading: the planner asks for every declared file at once, then resolves.
#[test]
fn s07_lazy_loading_asks_for_every_file_first() {
    let host = host(SYSTEM_AND_PROJECT);
    let db = host.analysis();
    let mut facts = Facts::lazy(BTreeMap::new());
    let d = decl("[web/x.yaml, other.yaml]");
    let ask = Ask::new(&facts);
    assert!(resolve_config(db, &d, &ask).is_none());
    assert_eq!(
        ask.needs(),
        vec![
            Need::SpaceFile("config/other.yaml".into()),
            Need::SpaceFile("config/web/x.yaml".into()),
        ]
    );
    facts.space_files.insert("config/other.yaml");
    facts.space_files.insert("config/web/x.yaml");
    let ask = Ask::new(&facts);
    assert!(resolve_config(db, &d, &ask).unwrap().is_ok());
    assert!(!ask.pending());
}

/// §7.3/§7.4: the resolved config replaces a caller-supplied `resolved_config`.
#[test]
fn s07_4_caller_resolved_config_is_overwritten() {
    let r = resolve(SYSTEM_AND_PROJECT, "{path: other.yaml}").unwrap();
    let mut params = json!({"resolved_config": {"evil": true}, "q": 1})
        .as_object()
        .unwrap()
        .clone();
    inject(&mut params, &r);
    assert_eq!(
        J::Object(params),
        json!({"resolved_config": {"z": 0}, "q": 1})
    );
}

#[test]
fn s07_modes_parse() {
    use ryechain::exec::config_resolve::{ConfigDecl, parse_decl};
    assert_eq!(
        parse_decl(&decl("{path: a.yaml, mode: first_match}")).unwrap(),
        ConfigDecl::One(ryechain::exec::config_resolve::ConfigSpec {
            path: "a.yaml".into(),
            mode: ConfigMode::FirstMatch,
        })
    );
}
