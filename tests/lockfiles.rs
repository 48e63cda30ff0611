//! Lockfiles (§10.7) over the database: the check that runs before chain building with the
//! reference's three failure texts, read precedence, version rules, building a lockfile, the
//! staleness verdict lint uses, the `ryechain lock` command, and spec §14 scenarios 52 and 62.
#![allow(
    clippy::disallowed_methods,
    reason = "the CLI test writes a temp tree, runs the binary and reads what it wrote"
)]

use std::path::Path;
use std::process::Command;

use ryechain::db::{RootDb, SourceFile};
use ryechain::integrity::lockfile::{
    LockCheck, Lockfile, build_lockfile, check_lockfile, find_lockfile, lockfile, lockfile_rel,
    parse_lockfile, stale_lockfile, tool_version,
};
use ryechain::model::Space;
use ryechain::resolve::resolve_root;
use ryechain::testing::{ai_dir, host};

mod common;

const GENERATED_AT: &str = "2023-11-14T22:13:20.000042+00:00";

/// Project tool `acme/x` → user runtime `acme/rt` → the embedded subprocess primitive.
const TOOL: &str = "//- /project/.ai/tools/acme/x.py
__version__ = \"1.0.0\"
__tool_type__ = \"python\"
__executor_id__ = \"acme/rt\"
print(\"hi\")
";
const RUNTIME: &str = "//- /user/.ai/tools/acme/rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
";

/// The lockfile text `build_lockfile` writes for `id` in the fixture.
fn built(fixture: &str, id: &str) -> Lockfile {
    let h = host(fixture);
    build_lockfile(&h.snapshot(), id, GENERATED_AT).expect("the chain is valid")
}

/// A fixture section holding `text` as a lockfile at `/<space>/.ai/<rel>`.
fn lock_section(space: &str, rel: &str, text: &str) -> String {
    format!("//- /{space}/.ai/{rel}\n{text}\n")
}

fn check(fixture: &str, id: &str) -> (RootDb, LockCheck) {
    let db = host(fixture).snapshot();
    let result = check_lockfile(&db, id);
    (db, result)
}

fn file_at(db: &RootDb, space: &Space, rel: &str) -> SourceFile {
    db.file_at(&ai_dir(space).join(rel))
        .unwrap_or_else(|| panic!("{rel} is loaded"))
}

fn failed_message(result: &LockCheck) -> &str {
    match result {
        LockCheck::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// The text a `stale_lockfile` span covers.
fn stale(db: &RootDb, file: SourceFile) -> Option<(Option<String>, String)> {
    let text = file.contents(db).text().unwrap_or_default().into_owned();
    stale_lockfile(db, file).map(|(span, msg)| (span.map(|s| text[s.range()].to_owned()), msg))
}

const REL: &str = "lockfiles/acme/x@1.0.0.lock.json";

#[test]
fn built_lockfile_has_the_reference_fields_and_passes_its_check() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    assert_eq!(lock.root.tool_id, "acme/x");
    assert_eq!(lock.root.version, "1.0.0");
    assert_eq!(lock.root.integrity.len(), 64);
    let ids: Vec<_> = lock
        .resolved_chain
        .iter()
        .map(|e| {
            (
                e["item_id"].as_str().unwrap().to_owned(),
                e["space"].as_str().unwrap().to_owned(),
                e["tool_type"].clone(),
                e["executor_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        vec![
            (
                "acme/x".into(),
                "project".into(),
                "python".into(),
                "acme/rt".into()
            ),
            (
                "acme/rt".into(),
                "user".into(),
                "runtime".into(),
                "rye/core/primitives/subprocess".into()
            ),
            (
                "rye/core/primitives/subprocess".into(),
                "system:ryechain".into(),
                "primitive".into(),
                serde_json::Value::Null
            ),
        ]
    );
    assert!(
        lock.resolved_chain
            .iter()
            .all(|e| e["integrity"].as_str().is_some_and(|h| h.len() == 64))
    );
    assert_eq!(
        lock.resolved_chain[0]["integrity"],
        lock.root.integrity.as_str()
    );
    let keys: Vec<_> = lock.resolved_chain[0].keys().cloned().collect();
    assert_eq!(
        keys,
        ["item_id", "space", "tool_type", "executor_id", "integrity"]
    );

    let fixture = format!(
        "{TOOL}{RUNTIME}{}",
        lock_section("project", REL, &lock.to_text())
    );
    let (db, result) = check(&fixture, "acme/x");
    let file = file_at(&db, &Space::Project, REL);
    assert_eq!(result, LockCheck::Ok { file });
    assert_eq!(lockfile(&db, file).as_ref(), Ok(&lock));
    assert_eq!(stale(&db, file), None);
}

/// DESIGN.md primitives, §1.7: a user (or project) copy of a primitive is resolved through the
/// spaces from the element that names it, as the reference resolves it, and the lockfile
/// records the space it came from. It stays terminal whatever it says.
#[test]
fn a_user_copy_of_a_primitive_is_taken_and_recorded_with_its_space() {
    let copy = "//- /user/.ai/tools/rye/core/primitives/subprocess.yaml
version: \"1.0.0\"
tool_type: primitive
executor_id: acme/elsewhere
";
    let lock = built(&format!("{TOOL}{RUNTIME}{copy}"), "acme/x");
    let last = lock.resolved_chain.last().unwrap();
    assert_eq!(last["item_id"], "rye/core/primitives/subprocess");
    assert_eq!(last["space"], "user");
    assert_eq!(lock.resolved_chain.len(), 3, "the copy stays terminal");
    // A project copy is not visible from a user runtime (the current-space rule).
    let project_copy = copy.replace("/user/", "/project/");
    let lock = built(&format!("{TOOL}{RUNTIME}{project_copy}"), "acme/x");
    assert_eq!(
        lock.resolved_chain.last().unwrap()["space"],
        "system:ryechain"
    );
    // From a project runtime, the project copy wins.
    let project_runtime = RUNTIME.replace("/user/", "/project/");
    let lock = built(&format!("{TOOL}{project_runtime}{project_copy}"), "acme/x");
    assert_eq!(lock.resolved_chain.last().unwrap()["space"], "project");
}

#[test]
fn s62_root_edit_is_a_lockfile_integrity_mismatch() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    let edited = TOOL.replace("print(\"hi\")", "print(\"tampered\")");
    let fixture = format!(
        "{edited}{RUNTIME}{}",
        lock_section("project", REL, &lock.to_text())
    );
    let (db, result) = check(&fixture, "acme/x");
    assert_eq!(
        failed_message(&result),
        "Lockfile integrity mismatch for acme/x. Re-sign and delete stale lockfile."
    );
    let file = file_at(&db, &Space::Project, REL);
    assert_eq!(
        stale(&db, file),
        Some((
            Some(format!("\"{}\"", lock.root.integrity)),
            "Lockfile integrity mismatch for acme/x. Re-sign and delete stale lockfile.".into()
        ))
    );
}

#[test]
fn s62_chain_element_edit_is_a_chain_element_mismatch() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    let edited = RUNTIME.replace("tool_type: runtime", "tool_type: runtime\nconfig: {a: 1}");
    let fixture = format!(
        "{TOOL}{edited}{}",
        lock_section("project", REL, &lock.to_text())
    );
    let (db, result) = check(&fixture, "acme/x");
    let msg =
        "Lockfile integrity mismatch for chain element acme/rt. Re-sign and delete stale lockfile.";
    assert_eq!(failed_message(&result), msg);
    let file = file_at(&db, &Space::Project, REL);
    let rt_hash = lock.resolved_chain[1]["integrity"].as_str().unwrap();
    assert_eq!(
        stale(&db, file),
        Some((Some(format!("\"{rt_hash}\"")), msg.into()))
    );
}

#[test]
fn s62_missing_chain_element_is_not_found_in_its_stored_space() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    // The runtime moved to the project space: re-resolving from its stored space (user) misses it.
    let moved = RUNTIME.replace("/user/", "/project/");
    let fixture = format!(
        "{TOOL}{moved}{}",
        lock_section("project", REL, &lock.to_text())
    );
    let (db, result) = check(&fixture, "acme/x");
    let msg = "Lockfile chain element not found: acme/rt (space: user). Delete stale lockfile.";
    assert_eq!(failed_message(&result), msg);
    let file = file_at(&db, &Space::Project, REL);
    assert_eq!(
        stale(&db, file),
        Some((Some("\"acme/rt\"".into()), msg.into()))
    );
}

#[test]
fn entries_without_item_id_or_integrity_are_skipped_and_space_defaults_to_project() {
    let mut lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    lock.resolved_chain[1]["integrity"] = serde_json::Value::Null;
    lock.resolved_chain[2]["item_id"] = "".into();
    let mut extra = serde_json::Map::new();
    extra.insert("item_id".into(), "acme/gone".into());
    extra.insert("integrity".into(), "h".into());
    lock.resolved_chain.push(extra);
    let fixture = format!(
        "{TOOL}{RUNTIME}{}",
        lock_section("project", REL, &lock.to_text())
    );
    let (_, result) = check(&fixture, "acme/x");
    assert_eq!(
        failed_message(&result),
        "Lockfile chain element not found: acme/gone (space: project). Delete stale lockfile."
    );
}

#[test]
fn read_precedence_is_project_then_user_then_system() {
    let good = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    let mut bad = good.clone();
    bad.root.integrity = "0".repeat(64);
    let base = format!("{TOOL}{RUNTIME}");
    let mismatch = "Lockfile integrity mismatch for acme/x. Re-sign and delete stale lockfile.";

    // Project wins over user.
    let fx = format!(
        "{base}{}{}",
        lock_section("project", REL, &good.to_text()),
        lock_section("user", REL, &bad.to_text())
    );
    let (db, result) = check(&fx, "acme/x");
    assert_eq!(
        result,
        LockCheck::Ok {
            file: file_at(&db, &Space::Project, REL)
        }
    );

    // User alone is read.
    let (db, result) = check(
        &format!("{base}{}", lock_section("user", REL, &bad.to_text())),
        "acme/x",
    );
    assert_eq!(
        result,
        LockCheck::Failed {
            file: file_at(&db, &Space::User, REL),
            message: mismatch.into()
        }
    );

    // User wins over system; system alone is read. (A fixture with `/system/` files replaces the
    // embedded bundle: the extensions come from a project extractor, and the primitive's file is
    // gone, so its entry loses its integrity.)
    let mut good = good;
    good.resolved_chain[2]["integrity"] = serde_json::Value::Null;
    let base = format!(
        "{base}//- /project/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml\nextensions: [.py, .yaml]\n"
    );
    let fx = format!(
        "{base}{}{}",
        lock_section("user", REL, &good.to_text()),
        lock_section("system", REL, &bad.to_text())
    );
    assert!(matches!(check(&fx, "acme/x").1, LockCheck::Ok { .. }));
    let (_, result) = check(
        &format!("{base}{}", lock_section("system", REL, &bad.to_text())),
        "acme/x",
    );
    assert_eq!(failed_message(&result), mismatch);
}

#[test]
fn a_broken_first_lockfile_reads_as_no_lockfile_but_lint_sees_it() {
    let bad = {
        let mut l = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
        l.root.integrity = "0".repeat(64);
        l
    };
    let fx = format!(
        "{TOOL}{RUNTIME}{}{}",
        lock_section("project", REL, "{ not json"),
        lock_section("user", REL, &bad.to_text())
    );
    let (db, result) = check(&fx, "acme/x");
    // The first existing file wins even when it cannot be loaded (errors swallowed).
    assert_eq!(result, LockCheck::NoLockfile);
    let (span, msg) = stale(&db, file_at(&db, &Space::Project, REL)).unwrap();
    assert!(msg.starts_with("Invalid JSON in lockfile: "), "{msg}");
    assert!(span.is_some());
}

#[test]
fn s52_lockfile_load_errors_and_leniency() {
    // A string `lockfile_version` ("1.0") is accepted; extra fields are ignored.
    let text = r#"{"lockfile_version": "1.0", "generated_at": "t", "registry": null, "x": 1,
        "root": {"tool_id": "acme/x", "version": "1.0.0", "integrity": "abc"},
        "resolved_chain": []}"#;
    let lock = parse_lockfile(text).unwrap();
    assert_eq!(lock.lockfile_version, serde_json::json!("1.0"));
    // Round trip.
    assert_eq!(parse_lockfile(&lock.to_text()), Ok(lock));
    // Bad JSON and missing fields are load errors with the reference's texts.
    assert!(
        parse_lockfile("nope")
            .unwrap_err()
            .message
            .starts_with("Invalid JSON in lockfile: ")
    );
    assert_eq!(
        parse_lockfile(r#"{"lockfile_version": 1, "generated_at": "t", "resolved_chain": []}"#)
            .unwrap_err()
            .message,
        "Missing required field: root"
    );
    // A missing file is "no lockfile"; an existing one is found (the reference's `exists()`).
    let fx = format!(
        "{TOOL}{RUNTIME}{}",
        lock_section(
            "project",
            REL,
            &built(&format!("{TOOL}{RUNTIME}"), "acme/x").to_text()
        )
    );
    let db = host(&fx).snapshot();
    assert!(find_lockfile(&db, "acme/x", "1.0.0").is_some());
    assert!(find_lockfile(&db, "acme/x", "2.0.0").is_none());
    assert!(find_lockfile(&db, "acme/other", "1.0.0").is_none());
}

#[test]
fn lint_reports_unloadable_lockfiles_with_the_loader_error() {
    let rel = "lockfiles/acme/y@1.0.0.lock.json";
    let fx = format!(
        "{TOOL}{}{}",
        lock_section(
            "project",
            rel,
            r#"{"lockfile_version": 1, "generated_at": "t"}"#
        ),
        lock_section("project", "lockfiles/README.md", "not a lockfile")
    );
    let db = host(&fx).snapshot();
    assert_eq!(
        stale(&db, file_at(&db, &Space::Project, rel)),
        Some((None, "Missing required field: root".into()))
    );
    assert_eq!(
        stale(&db, file_at(&db, &Space::Project, "lockfiles/README.md")),
        None
    );
    assert_eq!(
        stale(&db, file_at(&db, &Space::Project, "tools/acme/x.py")),
        None
    );
}

#[test]
fn a_lockfile_named_for_another_tool_or_version_is_stale_and_never_read() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    let rel = "lockfiles/acme/x@2.0.0.lock.json";
    let fx = format!(
        "{TOOL}{RUNTIME}{}",
        lock_section("project", rel, &lock.to_text())
    );
    let (db, result) = check(&fx, "acme/x");
    assert_eq!(result, LockCheck::NoLockfile);
    let (span, msg) = stale(&db, file_at(&db, &Space::Project, rel)).unwrap();
    assert_eq!(span.as_deref(), Some("\"acme/x\""));
    assert!(
        msg.starts_with("Lockfile name does not match its root: it locks acme/x@1.0.0, so it must be named `acme/x@1.0.0.lock.json`"),
        "{msg}"
    );
}

#[test]
fn a_lockfile_whose_root_tool_is_gone_is_stale() {
    let lock = built(&format!("{TOOL}{RUNTIME}"), "acme/x");
    let fx = format!("{RUNTIME}{}", lock_section("project", REL, &lock.to_text()));
    let db = host(&fx).snapshot();
    let (_, msg) = stale(&db, file_at(&db, &Space::Project, REL)).unwrap();
    assert_eq!(
        msg,
        "Lockfile root tool not found: acme/x (space: project). Delete stale lockfile."
    );
}

#[test]
fn yaml_tool_without_version_skips_lockfiles() {
    let yaml = "//- /project/.ai/tools/acme/y.yaml
tool_type: runtime
executor_id: rye/core/primitives/subprocess
";
    let h = host(yaml);
    let db = h.snapshot();
    let root = resolve_root(&db, "acme/y").found.clone().unwrap();
    assert_eq!(tool_version(&db, root.file), None);
    assert_eq!(check_lockfile(&db, "acme/y"), LockCheck::NoLockfile);
    let err = build_lockfile(&db, "acme/y", GENERATED_AT).unwrap_err();
    assert!(err.contains("declares no version"), "{err}");
    // Even a lockfile under Python's `None` name is not consulted.
    let fx = format!(
        "{yaml}{}",
        lock_section("project", "lockfiles/acme/y@None.lock.json", "{}")
    );
    assert_eq!(check(&fx, "acme/y").1, LockCheck::NoLockfile);
    // With a version, the YAML tool is locked like any other.
    let versioned = yaml.replace("tool_type", "version: \"2.1.0\"\ntool_type");
    let lock = built(&versioned, "acme/y");
    assert_eq!(lock.root.version, "2.1.0");
    let fx = format!(
        "{versioned}{}",
        lock_section(
            "project",
            lockfile_rel("acme/y", "2.1.0").unwrap().as_str(),
            &lock.to_text(),
        )
    );
    assert!(matches!(check(&fx, "acme/y").1, LockCheck::Ok { .. }));
}

#[test]
fn python_tool_without_version_is_locked_as_0_0_0() {
    let tool =
        "//- /project/.ai/tools/z.py\n__executor_id__ = \"rye/core/primitives/subprocess\"\n";
    let lock = built(tool, "z");
    assert_eq!(lock.root.version, "0.0.0");
    let fx = format!(
        "{tool}{}",
        lock_section("project", "lockfiles/z@0.0.0.lock.json", &lock.to_text())
    );
    assert!(matches!(check(&fx, "z").1, LockCheck::Ok { .. }));
}

#[test]
fn building_refuses_chains_that_cannot_run() {
    let tool =
        "//- /project/.ai/tools/a.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"missing/rt\"\n";
    let db = host(tool).snapshot();
    assert_eq!(
        build_lockfile(&db, "a", GENERATED_AT).unwrap_err(),
        "Executor not found: missing/rt"
    );
    assert_eq!(
        build_lockfile(&db, "nope", GENERATED_AT).unwrap_err(),
        "Tool not found: nope"
    );
    let terminal = "//- /project/.ai/tools/b.py\n__version__ = \"1.0.0\"\n";
    let db = host(terminal).snapshot();
    assert_eq!(
        build_lockfile(&db, "b", GENERATED_AT).unwrap_err(),
        "Unknown primitive: b"
    );
}

// ---------------------------------------------------------------------------------------------
// `ryechain lock`

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn ryechain(args: &[&str], user: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .arg("--user-space")
        .arg(user)
        .env_remove("RYE_SYSTEM_SPACE")
        .env_remove("USER_SPACE")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn cli_lock_writes_the_lockfile_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    write(
        &project.join(".ai/tools/acme/x.py"),
        "__version__ = \"1.2.3\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\nprint('hi')\n",
    );
    let out = ryechain(&["lock", "acme/x", project.to_str().unwrap()], &user);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The project tool is unsigned: a warning, not a refusal.
    assert!(stderr.contains("warning: Unsigned item: "), "{stderr}");
    let target = project.join(".ai/lockfiles/acme/x@1.2.3.lock.json");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        target.display().to_string()
    );
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(
        text.starts_with("{\n  \"lockfile_version\": 1,\n  \"generated_at\": \""),
        "{text}"
    );
    assert!(text.contains("\n  \"root\": {\n    \"tool_id\": \"acme/x\",\n    \"version\": \"1.2.3\",\n    \"integrity\": \""));
    assert!(text.contains("\n  \"resolved_chain\": [\n    {\n      \"item_id\": \"acme/x\",\n      \"space\": \"project\","));
    assert!(text.ends_with("\n  \"registry\": null,\n  \"verified_deps\": null\n}"));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "lockfile_version",
            "generated_at",
            "root",
            "resolved_chain",
            "registry",
            "verified_deps"
        ]
    );
    let generated = json["generated_at"].as_str().unwrap();
    assert!(
        generated.len() == 32 && generated.ends_with("+00:00") && generated.as_bytes()[19] == b'.',
        "{generated}"
    );
    let chain: Vec<_> = json["resolved_chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["item_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        chain,
        [
            "acme/x",
            "rye/core/runtimes/python/script",
            "rye/core/primitives/subprocess"
        ]
    );
    // The written file passes the check and lints clean once loaded.
    let lock = parse_lockfile(&text).unwrap();
    assert_eq!(lock.root.version, "1.2.3");

    // No overwrite without --force.
    let again = ryechain(&["lock", "acme/x", project.to_str().unwrap()], &user);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists; pass --force"));
    let forced = ryechain(
        &["lock", "acme/x", project.to_str().unwrap(), "--force"],
        &user,
    );
    assert_eq!(
        forced.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );

    // A chain that cannot run is refused; nothing is written.
    write(
        &project.join(".ai/tools/acme/bad.py"),
        "__version__ = \"1.0.0\"\n__executor_id__ = \"acme/missing\"\n",
    );
    let bad = ryechain(&["lock", "acme/bad", project.to_str().unwrap()], &user);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Executor not found: acme/missing"));
    assert!(
        !project
            .join(".ai/lockfiles/acme/bad@1.0.0.lock.json")
            .exists()
    );
    // Unknown tool ⇒ 1; hostile id ⇒ 2 (usage).
    assert_eq!(
        ryechain(&["lock", "acme/none", project.to_str().unwrap()], &user)
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        ryechain(&["lock", "../x", project.to_str().unwrap()], &user)
            .status
            .code(),
        Some(2)
    );
}

/// Every file under `dir`, relative, sorted (what a run left behind).
fn files_under(dir: &Path) -> Vec<String> {
    common::files_under(dir)
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect()
}

/// A project with one runnable python tool of version `version`.
fn runnable(version: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join(".ai")).unwrap();
    write(
        &project.join(".ai/tools/acme/x.py"),
        &format!(
            "__version__ = {version:?}\n__executor_id__ = \"rye/core/runtimes/python/script\"\nprint('{{\"ok\": true}}')\n"
        ),
    );
    (tmp, project, user)
}

/// DESIGN.md "one checked path builder" (§10.7): a version is header text. One that is not a
/// valid version string gets no lockfile, from `lock` (a clear error) or from a successful
/// `exec` (a warning), and nothing is written outside the project.
#[test]
fn a_hostile_version_never_places_a_lockfile() {
    let (tmp, project, user) = runnable("1.0.0/../../../../x");
    let p = project.to_str().unwrap();
    let out = ryechain(&["lock", "acme/x", p], &user);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("acme/x has no lockfile: its version `1.0.0/../../../../x` is not a valid version string"),
        "{stderr}"
    );
    let out = ryechain(&["exec", "acme/x", p, "--allow-unsigned"], &user);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("is not a valid version string (") && stdout.contains("none is written"),
        "{stdout}"
    );
    assert_eq!(
        files_under(tmp.path()),
        ["project/.ai/tools/acme/x.py"],
        "nothing but the tool exists"
    );
}

/// A symlinked `.ai/lockfiles` is never written through, by `lock` or by `exec`.
#[test]
fn a_symlinked_lockfiles_folder_is_not_written_through() {
    let (tmp, project, user) = runnable("1.0.0");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, project.join(".ai/lockfiles")).unwrap();
    let p = project.to_str().unwrap();
    let out = ryechain(&["lock", "acme/x", p], &user);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("is a symlink or not a folder"), "{stderr}");
    let out = ryechain(&["exec", "acme/x", p, "--allow-unsigned"], &user);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the lockfile was not written") && stderr.contains("is a symlink"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["metadata"]["lockfile_created"], false, "{json}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}
