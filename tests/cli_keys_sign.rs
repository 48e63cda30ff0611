//! `ryechain keys` and `ryechain sign` end to end: the built binary in temporary spaces (USER_SPACE
//! pointed at a temp dir, the embedded bundle as system space). Every signed file is re-read and
//! verified with `integrity::verify_text` against the trusted public key. Spec §10.1–10.4, §12.9,
//! and the §14 scenarios 54 (sign), 62 (tamper / untrusted after signing) and 64 (vectors).
#![allow(
    clippy::disallowed_methods,
    reason = "the test writes and reads temporary trees and runs the binary"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ryechain::integrity::keys::{fingerprint, key_pair_from_seed};
use ryechain::integrity::trust::parse_trust_doc;
use ryechain::integrity::{ItemKind, SignatureFormat, Verdict, verify_text};

/// The §10.3 test vector.
const SEED3_PEM: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAgc0X8VKJuKzFh/aSw/XeYEdp3keIqncwu9ySd81Y69g=\n-----END PUBLIC KEY-----\n";

/// A P-256 public key: valid SPKI PEM, not Ed25519.
const P256_PEM: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/34qX82cJhpzIaqi6t+u1haFwfX4\nNQKZ1pi5ZIzTec0Qt4bXm/B2wYLmRvC5FE0ouu/9o5IrUh7NTiH7EEJT1w==\n-----END PUBLIC KEY-----\n";

const PY_TOOL: &str = "#!/usr/bin/env python3\n# rye:validated:2024-01-01T00:00:00Z:old\n\"\"\"A tool.\"\"\"\n__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"rye/core/runtimes/python/script\"\n__category__ = \"my\"\n__tool_description__ = \"Says hello\"\n\nprint(\"hello\")\n";

const YAML_TOOL: &str = "version: \"1.2.0\"\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: my\ndescription: \"A runtime\"\nconfig:\n  command: echo\n";

const JS_TOOL: &str = "#!/usr/bin/env node\nexport const __version__ = \"0.3.1\";\nexport const __tool_type__ = \"javascript\";\nexport const __executor_id__ = \"rye/core/runtimes/node/node\";\nexport const __category__ = \"my\";\nexport const __tool_description__ = \"A JS tool\";\nconsole.log(\"hi\");\n";

const KNOWLEDGE: &str = "```yaml\nname: entry\ntitle: \"An entry\"\nversion: \"1.0.0\"\nentry_type: reference\ncategory: notes\n```\n\n# An entry\n\nContent here.\n";

const DIRECTIVE: &str = "# Workflow\n\nRuns the workflow.\n\n```xml\n<directive name=\"workflow\" version=\"1.0.0\">\n  <metadata>\n    <description>Run it</description>\n    <category>flows</category>\n  </metadata>\n  <process><step name=\"one\">Do it.</step></process>\n</directive>\n```\n";

/// A temporary project and user space, and the binary run inside them.
struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    user: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let project = root.join("project");
        let user = root.join("user");
        std::fs::create_dir_all(project.join(".ai/tools")).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        Env {
            _tmp: tmp,
            root,
            project,
            user,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ryechain"));
        c.args(args)
            .current_dir(&self.project)
            .env("USER_SPACE", &self.user)
            .env("HOME", self.root.join("home"))
            .env("NO_COLOR", "1")
            .env_remove("RYE_SYSTEM_SPACE")
            .env_remove("RYE_SIGNING_KEY_DIR");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Write a file of the project's `.ai/`.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.project.join(".ai").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(".ai").join(rel)).unwrap()
    }

    fn signing_dir(&self) -> PathBuf {
        self.user.join(".ai/config/keys/signing")
    }

    /// The signing public key exactly as stored.
    fn public_pem(&self) -> String {
        std::fs::read_to_string(self.signing_dir().join("public_key.pem")).unwrap()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[track_caller]
fn assert_code(o: &Output, want: i32) {
    assert_eq!(
        code(o),
        want,
        "exit code\n--- stdout\n{}\n--- stderr\n{}",
        stdout(o),
        stderr(o)
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// The signature format of the bundled extractors for a file (tool_extractor.yaml).
fn format_of(kind: ItemKind, path: &Path) -> SignatureFormat {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match (kind, ext) {
        (ItemKind::Directive | ItemKind::Knowledge, _) => SignatureFormat::html_comment(),
        (ItemKind::Tool, "js" | "ts" | "mjs" | "cjs") => SignatureFormat::slash_comment(),
        (ItemKind::Tool, "yaml" | "yml" | "toml" | "json") => SignatureFormat {
            after_shebang: false,
            ..SignatureFormat::hash_comment()
        },
        (ItemKind::Tool, _) => SignatureFormat::hash_comment(),
    }
}

/// Verify a file on disk with only `pem` trusted.
fn verdict(kind: ItemKind, path: &Path, pem: &str) -> Verdict {
    let text = std::fs::read_to_string(path).unwrap();
    let fp = fingerprint(pem.as_bytes());
    let trusted = |f: &str| (f == fp).then(|| pem.to_owned());
    verify_text(kind, &format_of(kind, path), &text, &trusted)
}

#[track_caller]
fn assert_verifies(env: &Env, kind: ItemKind, path: &Path) {
    let v = verdict(kind, path, &env.public_pem());
    assert!(
        matches!(v, Verdict::Verified { .. }),
        "{} does not verify: {v:?}\n{}",
        path.display(),
        std::fs::read_to_string(path).unwrap()
    );
}

/// `ryechain verify --json` accepts each of these files (paths relative to the project's `.ai/`).
#[track_caller]
fn assert_cli_verifies(env: &Env, rels: &[&str]) {
    let out = env.run(&["verify", "--json"]);
    let v = json_of(&out);
    for rel in rels {
        let item = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["path"].as_str().unwrap().ends_with(&format!(".ai/{rel}")))
            .unwrap_or_else(|| panic!("`ryechain verify` does not list {rel}: {v}"));
        assert_eq!(item["verified"], true, "{item}");
    }
}

fn signature_lines(text: &str) -> usize {
    text.lines().filter(|l| l.contains("rye:signed:")).count()
}

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", stdout(o), stderr(o)))
}

#[test]
fn keys_generate_writes_the_pair_with_private_modes_and_trusts_it() {
    let env = Env::new();
    let out = env.run(&["keys", "generate"]);
    assert_code(&out, 0);
    let dir = env.signing_dir();
    let private = dir.join("private_key.pem");
    let public = dir.join("public_key.pem");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&private), 0o600);
    assert_eq!(mode(&public), 0o644);
    assert!(
        std::fs::read_to_string(&private)
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----\n")
    );
    let pem = env.public_pem();
    let fp = fingerprint(pem.as_bytes());
    assert!(stdout(&out).contains(&fp), "{}", stdout(&out));

    let out = env.run(&["keys", "fingerprint"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out).trim(), fp);

    // Trusted in the user space, seed-era layout, owner "local".
    let doc_path = env.user.join(format!(".ai/config/keys/trusted/{fp}.toml"));
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let key = parse_trust_doc(&format!("config/keys/trusted/{fp}.toml"), &doc).unwrap();
    assert_eq!(key.fingerprint, fp);
    assert_eq!(key.owner.as_deref(), Some("local"));

    // `keys list` sees it, from the user space, and the signing key as trusted.
    let out = env.run(&["keys", "list", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["trusted"][0]["fingerprint"], fp.as_str());
    assert_eq!(v["trusted"][0]["space"], "user");
    assert_eq!(v["signing_key"]["fingerprint"], fp.as_str());
    assert_eq!(v["signing_key"]["trusted"], true);

    // No silent overwrite; --force makes a new pair.
    let out = env.run(&["keys", "generate"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(env.public_pem(), pem);
    let out = env.run(&["keys", "generate", "--force"]);
    assert_code(&out, 0);
    assert_ne!(env.public_pem(), pem);
    assert_eq!(mode(&private), 0o600);
}

#[test]
fn signing_key_dir_comes_from_the_environment() {
    let env = Env::new();
    let dir = env.root.join("elsewhere/keys");
    let out = env
        .cmd(&["keys", "generate"])
        .env("RYE_SIGNING_KEY_DIR", &dir)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(mode(&dir.join("private_key.pem")), 0o600);
    assert!(!env.signing_dir().exists());
    let pem = std::fs::read_to_string(dir.join("public_key.pem")).unwrap();
    let out = env
        .cmd(&["keys", "fingerprint"])
        .env("RYE_SIGNING_KEY_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), fingerprint(pem.as_bytes()));
}

#[test]
fn keys_trust_refuses_bad_pem_files_naming_them() {
    let env = Env::new();
    let dir = env.root.join("a_directory.pem");
    std::fs::create_dir_all(&dir).unwrap();
    let truncated = env.root.join("truncated.pem");
    std::fs::write(&truncated, &SEED3_PEM[..40]).unwrap();
    let p256 = env.root.join("p256.pem");
    std::fs::write(&p256, P256_PEM).unwrap();
    let missing = env.root.join("missing.pem");
    let pair = key_pair_from_seed(&[9; 32]).unwrap();
    let private = env.root.join("someone_private.pem");
    std::fs::write(&private, &pair.private_pem).unwrap();
    for bad in [&dir, &truncated, &p256, &missing, &private] {
        let out = env.run(&["keys", "trust", bad.to_str().unwrap()]);
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains(bad.to_str().unwrap()),
            "the error should name {}: {}",
            bad.display(),
            stderr(&out)
        );
    }
    assert!(!env.user.join(".ai/config/keys/trusted").exists());
    // Nothing was trusted, and fingerprint refuses the same files.
    let out = env.run(&["keys", "fingerprint", truncated.to_str().unwrap()]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("truncated.pem"), "{}", stderr(&out));
}

#[test]
fn keys_trust_writes_a_toml_document_in_the_chosen_space() {
    let env = Env::new();
    let pem_file = env.root.join("alice.pem");
    std::fs::write(&pem_file, SEED3_PEM).unwrap();
    let out = env.run(&[
        "keys",
        "trust",
        pem_file.to_str().unwrap(),
        "--space",
        "project",
        "--owner",
        "alice",
    ]);
    assert_code(&out, 0);
    let doc = env.read("config/keys/trusted/4b987fd4e40303ac.toml");
    let key = parse_trust_doc("config/keys/trusted/4b987fd4e40303ac.toml", &doc).unwrap();
    assert_eq!(key.owner.as_deref(), Some("alice"));
    // Written into the project, the key is listed but not trusted until the person approves
    // it (DESIGN.md "Trust").
    assert!(
        stdout(&out).contains("keys trust --project"),
        "{}",
        stdout(&out)
    );
    let v = json_of(&env.run(&["keys", "list", "--json"]));
    assert_eq!(v["trusted"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(v["unapproved"][0]["fingerprint"], "4b987fd4e40303ac");
    assert_eq!(v["unapproved"][0]["owner"], "alice");
    let out = env.run(&["keys", "trust", "--project"]);
    assert_code(&out, 0);
    let shown = stdout(&out);
    assert!(
        shown.contains("4b987fd4e40303ac")
            && shown.contains("alice")
            && shown.contains("4b987fd4e40303ac.toml"),
        "{shown}"
    );
    let approvals: Vec<_> = std::fs::read_dir(env.user.join(".ai/config/keys/approved"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(approvals.len(), 1);
    assert!(
        approvals[0].starts_with("4b987fd4e40303ac@"),
        "{approvals:?}"
    );
    let v = json_of(&env.run(&["keys", "list", "--json"]));
    assert_eq!(v["trusted"][0]["fingerprint"], "4b987fd4e40303ac");
    assert_eq!(v["trusted"][0]["owner"], "alice");
    assert_eq!(v["trusted"][0]["space"], "project");
    assert_eq!(v["unapproved"].as_array().unwrap().len(), 0, "{v}");
    assert!(v["signing_key"].is_null());
    // Approving again has nothing left to do.
    let out = env.run(&["keys", "trust", "--project", env.project.to_str().unwrap()]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("already approved"),
        "{}",
        stdout(&out)
    );
    // A refused document is listed with its reason.
    env.write(
        "config/keys/trusted/0000000000000000.toml",
        &doc.replace("4b987fd4e40303ac", "0000000000000000"),
    );
    let v = json_of(&env.run(&["keys", "list", "--json"]));
    assert_eq!(v["refused"].as_array().unwrap().len(), 1, "{v}");
    assert!(
        v["refused"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("0000000000000000.toml")
    );
}

/// `keys trust` into the user space also writes the layout the reference reads, so a key
/// trusted with ryechain is trusted by the reference too (§10.4 [R]).
#[test]
fn keys_trust_and_generate_write_the_references_layout_too() {
    let env = Env::new();
    let pem_file = env.root.join("alice.pem");
    std::fs::write(&pem_file, SEED3_PEM).unwrap();
    let out = env.run(&["keys", "trust", pem_file.to_str().unwrap()]);
    assert_code(&out, 0);
    let pem =
        std::fs::read_to_string(env.user.join(".ai/trusted_keys/4b987fd4e40303ac.pem")).unwrap();
    assert_eq!(pem, SEED3_PEM);
    let out = env.run(&["keys", "generate"]);
    assert_code(&out, 0);
    let fp = stdout(&env.run(&["keys", "fingerprint"])).trim().to_owned();
    let pem = std::fs::read_to_string(env.user.join(format!(".ai/trusted_keys/{fp}.pem"))).unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{pem}");
}

/// A project's key approval is bound to the project's real path: another copy of the project
/// (or a key changed in it) needs approval again.
#[test]
fn an_approval_does_not_follow_the_key_to_another_project() {
    let env = Env::new();
    let pem_file = env.root.join("alice.pem");
    std::fs::write(&pem_file, SEED3_PEM).unwrap();
    let project = env.project.to_str().unwrap();
    let out = env.run(&[
        "keys",
        "trust",
        pem_file.to_str().unwrap(),
        project,
        "--space",
        "project",
    ]);
    assert_code(&out, 0);
    assert_code(&env.run(&["keys", "trust", "--project"]), 0);
    let copy = env.root.join("copy");
    let status = Command::new("cp")
        .args(["-r", project, copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let v = json_of(&env.run(&["keys", "list", copy.to_str().unwrap(), "--json"]));
    assert_eq!(v["unapproved"][0]["fingerprint"], "4b987fd4e40303ac", "{v}");
    // Named through a symlink, the approved project is the same project.
    let link = env.root.join("link");
    std::os::unix::fs::symlink(&env.project, &link).unwrap();
    let v = json_of(&env.run(&["keys", "list", link.to_str().unwrap(), "--json"]));
    assert_eq!(v["unapproved"].as_array().unwrap().len(), 0, "{v}");
    // `--project` on a folder with no `.ai/` says so.
    let empty = env.root.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = env.run(&["keys", "trust", "--project", empty.to_str().unwrap()]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("could not find `.ai/`"),
        "{}",
        stderr(&out)
    );
}

/// §14.64: the §10.3 fingerprint vector through the CLI.
#[test]
fn s64_fingerprint_vector() {
    let env = Env::new();
    let p = env.root.join("seed3.pem");
    std::fs::write(&p, SEED3_PEM).unwrap();
    let out = env.run(&["keys", "fingerprint", p.to_str().unwrap()]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out).trim(), "4b987fd4e40303ac");
}

/// Issue 35 item 9: `RYE_SIGNING_KEY_DIR` naming an empty or missing folder (a CI secret that
/// did not arrive) is an error naming the folder: no key is made there or trusted, the tool is
/// left as it was. (Only a person's first `sign` at the default location makes a key, with a
/// line saying so: `s54_…` below.)
#[test]
fn a_signing_key_dir_without_a_key_is_an_error_never_a_fresh_key() {
    let env = Env::new();
    env.write("tools/test/script.py", PY_TOOL);
    let empty = env.root.join("ci/keys");
    std::fs::create_dir_all(&empty).unwrap();
    let missing = env.root.join("ci/absent");
    for dir in [&empty, &missing] {
        let out = env
            .cmd(&["sign", "test/script"])
            .env("RYE_SIGNING_KEY_DIR", dir)
            .output()
            .unwrap();
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("no signing key in {}", dir.display()))
                && err.contains("RYE_SIGNING_KEY_DIR"),
            "{err}"
        );
        assert!(!dir.join("private_key.pem").exists());
        assert!(!env.signing_dir().exists());
        assert!(!env.user.join(".ai/config/keys/trusted").exists());
        assert_eq!(env.read("tools/test/script.py"), PY_TOOL);
    }
}

/// §14.54 (tool), §10.3/10.4: the first sign generates and trusts a key; the shebang stays on
/// line 1, the legacy `rye:validated` line is replaced, the body is unchanged, the mode is kept.
#[test]
fn s54_sign_python_tool_with_shebang_generates_key_and_keeps_mode() {
    let env = Env::new();
    let path = env.write("tools/test/script.py", PY_TOOL);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!env.signing_dir().exists());
    let out = env.run(&["sign", "test/script"]);
    assert_code(&out, 0);
    assert!(stderr(&out).contains("generated"), "{}", stderr(&out));
    assert_eq!(mode(&env.signing_dir().join("private_key.pem")), 0o600);
    let fp = fingerprint(env.public_pem().as_bytes());
    assert!(
        env.user
            .join(format!(".ai/config/keys/trusted/{fp}.toml"))
            .is_file()
    );

    let text = env.read("tools/test/script.py");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#!/usr/bin/env python3");
    assert!(lines[1].starts_with("# rye:signed:"), "{text}");
    assert!(lines[1].ends_with(&format!(":{fp}")), "{text}");
    assert!(!text.contains("rye:validated"));
    let body: String = PY_TOOL.lines().skip(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(lines[2..].join("\n") + "\n", body);
    assert_eq!(mode(&path), 0o755);
    assert_verifies(&env, ItemKind::Tool, &path);

    // Re-signing replaces the line: exactly one signature line, still verifies.
    let out = env.run(&["sign", "test/script", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["status"], "signed");
    assert_eq!(v["item_id"], "test/script");
    assert_eq!(v["location"], "project");
    assert_eq!(v["signature"]["pubkey_fp"], fp.as_str());
    assert!(!stderr(&out).contains("generated"), "{}", stderr(&out));
    let text = env.read("tools/test/script.py");
    assert_eq!(signature_lines(&text), 1, "{text}");
    assert!(text.starts_with("#!/usr/bin/env python3\n# rye:signed:"));
    assert_eq!(mode(&path), 0o755);
    assert_verifies(&env, ItemKind::Tool, &path);
    assert_cli_verifies(&env, &["tools/test/script.py"]);
}

#[test]
fn sign_yaml_tool_puts_the_line_first() {
    let env = Env::new();
    let path = env.write("tools/my/runtime.yaml", YAML_TOOL);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = env.run(&["sign", "my/runtime"]);
    assert_code(&out, 0);
    let text = env.read("tools/my/runtime.yaml");
    assert!(text.starts_with("# rye:signed:"), "{text}");
    assert_eq!(text.split_once('\n').unwrap().1, YAML_TOOL);
    assert_eq!(mode(&path), 0o640);
    assert_verifies(&env, ItemKind::Tool, &path);
    assert_cli_verifies(&env, &["tools/my/runtime.yaml"]);
}

#[test]
fn sign_js_tool_uses_the_slash_prefix_after_the_shebang() {
    let env = Env::new();
    let path = env.write("tools/my/hello.js", JS_TOOL);
    let out = env.run(&["sign", "tool:my/hello"]);
    assert_code(&out, 0);
    let text = env.read("tools/my/hello.js");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#!/usr/bin/env node");
    assert!(lines[1].starts_with("// rye:signed:"), "{text}");
    assert_verifies(&env, ItemKind::Tool, &path);
    assert_cli_verifies(&env, &["tools/my/hello.js"]);
}

/// §14.54 (knowledge): `<!-- rye:signed: … -->` on line 1; also a `---` frontmatter entry (§14.14).
#[test]
fn s54_sign_knowledge_entries() {
    let env = Env::new();
    let path = env.write("knowledge/notes/entry.md", KNOWLEDGE);
    let out = env.run(&["sign", "notes/entry", "--type", "knowledge"]);
    assert_code(&out, 0);
    let text = env.read("knowledge/notes/entry.md");
    assert!(text.starts_with("<!-- rye:signed:"), "{text}");
    assert!(text.lines().next().unwrap().ends_with(" -->"));
    assert_eq!(text.split_once('\n').unwrap().1, KNOWLEDGE);
    assert_verifies(&env, ItemKind::Knowledge, &path);

    let dashes = "---\ntitle: Test Entry\nid: entry2\n---\n\nContent here";
    let path = env.write("knowledge/entry2.md", dashes);
    let out = env.run(&["sign", "knowledge:entry2"]);
    assert_code(&out, 0);
    assert_verifies(&env, ItemKind::Knowledge, &path);
    assert_eq!(signature_lines(&env.read("knowledge/entry2.md")), 1);
    assert_cli_verifies(&env, &["knowledge/notes/entry.md", "knowledge/entry2.md"]);
}

/// §14.54 (directive): signed with an HTML comment; a directive without XML is refused with an
/// "invalid" error; a missing item is "not found".
#[test]
fn s54_sign_directives_and_refusals() {
    let env = Env::new();
    let path = env.write("directives/workflow.md", DIRECTIVE);
    let out = env.run(&["sign", "workflow", "--type", "directive", "--json"]);
    assert_code(&out, 0);
    assert_eq!(json_of(&out)["status"], "signed");
    let text = env.read("directives/workflow.md");
    assert!(text.starts_with("<!-- rye:signed:"), "{text}");
    assert_eq!(text.split_once('\n').unwrap().1, DIRECTIVE);
    assert_verifies(&env, ItemKind::Directive, &path);
    assert_cli_verifies(&env, &["directives/workflow.md"]);

    env.write("directives/plain.md", "# Not a directive\n\nJust text.\n");
    let out = env.run(&["sign", "plain", "--type", "directive", "--json"]);
    assert_code(&out, 1);
    let err = json_of(&out)["error"].as_str().unwrap().to_lowercase();
    assert!(
        err.contains("invalid") || err.contains("validation"),
        "{err}"
    );
    assert!(!env.read("directives/plain.md").contains("rye:signed"));

    let out = env.run(&["sign", "nope", "--type", "directive"]);
    assert_code(&out, 1);
    assert!(
        stdout(&out).to_lowercase().contains("not found"),
        "{}",
        stdout(&out)
    );
    let out = env.run(&["sign", "no/such/tool", "--json"]);
    assert_code(&out, 1);
    assert_eq!(json_of(&out)["error"], "Tool not found: no/such/tool");
}

/// §10.2 on a CRLF or CR-only checkout: `sign` keeps the file's own line breaks (the signature
/// line ends as the file's lines do; every other line is left as it was), and the signature
/// verifies both by ryechain and by the reference's rule, recomputed here by hand: the text read
/// with universal newlines, the shebang and the signature line dropped (tools), the comment line
/// dropped (knowledge), the XML block (directives), SHA-256 of what is left.
#[test]
fn s10_2_signing_crlf_and_cr_files_keeps_their_line_breaks() {
    use ryechain::integrity::hash::sha256_hex;
    for eol in ["\r\n", "\r"] {
        let env = Env::new();
        let items = [
            (
                "tools/test/script.py",
                "test/script",
                ItemKind::Tool,
                PY_TOOL,
            ),
            (
                "tools/my/runtime.yaml",
                "my/runtime",
                ItemKind::Tool,
                YAML_TOOL,
            ),
            ("tools/my/hello.js", "my/hello", ItemKind::Tool, JS_TOOL),
            (
                "knowledge/notes/entry.md",
                "knowledge:notes/entry",
                ItemKind::Knowledge,
                KNOWLEDGE,
            ),
            (
                "directives/workflow.md",
                "directive:workflow",
                ItemKind::Directive,
                DIRECTIVE,
            ),
        ];
        for (rel, _, _, lf) in items {
            env.write(rel, &lf.replace('\n', eol));
        }
        for (rel, id, kind, lf) in items {
            let out = env.run(&["sign", id]);
            assert_code(&out, 0);
            let signed = env.read(rel);
            // Back to LF: no other line break is left, so the file kept its own.
            let as_lf = signed.replace(eol, "\n");
            assert!(!as_lf.contains('\r'), "{eol:?} {rel}: {signed:?}");
            let lines: Vec<&str> = as_lf.lines().collect();
            let at = usize::from(lf.starts_with("#!"));
            assert!(
                lines[at].contains(" rye:signed:"),
                "{eol:?} {rel}: {signed:?}"
            );
            // Every other line as it was (the tool's `rye:validated` line is replaced).
            let mut rest: Vec<&str> = lines.clone();
            rest.remove(at);
            let mut want: Vec<&str> = lf.lines().collect();
            want.retain(|l| !l.contains("rye:validated"));
            assert_eq!(rest, want, "{eol:?} {rel}");
            // The reference's rule over the text as Python's text mode reads it.
            let read = signed.replace("\r\n", "\n").replace('\r', "\n");
            let hashed = match kind {
                ItemKind::Tool => read
                    .lines()
                    .skip(at + 1)
                    .map(|l| format!("{l}\n"))
                    .collect(),
                ItemKind::Knowledge => read.split_once('\n').unwrap().1.to_owned(),
                ItemKind::Directive => {
                    let start = read.find("<directive").unwrap();
                    let end = read.rfind("</directive>").unwrap() + "</directive>".len();
                    read[start..end].trim().to_owned()
                }
            };
            let field = lines[at].split(':').nth(5).unwrap();
            assert_eq!(sha256_hex(hashed.as_bytes()), field, "{eol:?} {rel}");
            assert_verifies(&env, kind, &env.project.join(".ai").join(rel));
        }
        assert_cli_verifies(&env, &items.map(|(rel, ..)| rel));
    }
}

/// A batch large enough to be made durable by syncing its file system (`syncfs`, from 64 files)
/// rather than each file: every item signed once and verifying, nothing else in the folders.
/// Half the files written more than the racy window (2 s) before the batch, so that they are
/// checked by their stamps when replaced; the other half just before, checked by their bytes.
#[test]
fn a_large_batch_is_signed_and_left_in_place() {
    let env = Env::new();
    let write = |i: usize| env.write(&format!("tools/many/d{}/t{i}.py", i % 7), PY_TOOL);
    let mut paths: Vec<PathBuf> = (0..40).map(write).collect();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    paths.extend((40..80).map(write));
    let out = env.run(&["sign", "many/**", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["total"], 80, "{v}");
    assert_eq!(v["signed"].as_array().map(Vec::len), Some(80), "{v}");
    for p in &paths {
        assert_eq!(signature_lines(&std::fs::read_to_string(p).unwrap()), 1);
        assert_verifies(&env, ItemKind::Tool, p);
    }
    for d in 0..7 {
        let dir = env.project.join(format!(".ai/tools/many/d{d}"));
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(
            left,
            paths.iter().filter(|p| p.parent() == Some(&dir)).count()
        );
    }
}

/// §12.9 batch: one invalid tool fails with its reason, the others are signed; exit 1.
#[test]
fn batch_glob_signs_the_valid_and_lists_the_failed() {
    let env = Env::new();
    let a = env.write("tools/batch/a.py", PY_TOOL);
    let b = env.write("tools/batch/b.yaml", YAML_TOOL);
    let c = env.write("tools/batch/sub/c.js", JS_TOOL);
    env.write(
        "tools/batch/bad.py",
        "__tool_type__ = \"python\"\n__version__ = \"not a version\"\n",
    );
    env.write("tools/other/x.py", PY_TOOL);
    let out = env.run(&["sign", "batch/**", "--json"]);
    assert_code(&out, 1);
    let v = json_of(&out);
    assert_eq!(v["status"], "completed");
    assert_eq!(v["total"], 4);
    let signed: Vec<&str> = v["signed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(signed, ["batch/a", "batch/b", "batch/sub/c"]);
    assert_eq!(v["failed"][0]["item"], "batch/bad");
    assert_eq!(v["failed"][0]["error"], "Validation failed");
    assert!(
        v["failed"][0]["details"][0]
            .as_str()
            .unwrap()
            .contains("not a version"),
        "{v}"
    );
    assert_eq!(v["summary"], "Signed 3/4 items, 1 failed");
    for p in [&a, &b, &c] {
        assert_verifies(&env, ItemKind::Tool, p);
    }
    assert_cli_verifies(
        &env,
        &[
            "tools/batch/a.py",
            "tools/batch/b.yaml",
            "tools/batch/sub/c.js",
        ],
    );
    assert!(!env.read("tools/batch/bad.py").contains("rye:signed"));
    assert!(!env.read("tools/other/x.py").contains("rye:signed"));

    // A pattern without `/` matches file names at any depth; no match is an error.
    let out = env.run(&["sign", "?"]);
    assert_code(&out, 0);
    assert!(env.read("tools/other/x.py").contains("rye:signed"));
    let out = env.run(&["sign", "zz*", "--json"]);
    assert_code(&out, 1);
    assert_eq!(
        json_of(&out)["error"],
        "No tools found matching pattern: zz*"
    );
}

/// §14.62: after signing, an edit is `Integrity failed`, and a key nobody trusts is `Untrusted key`.
#[test]
fn s62_tampered_and_untrusted_after_signing() {
    let env = Env::new();
    let path = env.write("tools/t.py", PY_TOOL);
    assert_code(&env.run(&["sign", "t"]), 0);
    assert_verifies(&env, ItemKind::Tool, &path);
    let p = path.to_str().unwrap();
    let other = key_pair_from_seed(&[1; 32]).unwrap().public_pem;
    let v = verdict(ItemKind::Tool, &path, &other);
    assert!(
        v.error_text(p).unwrap().starts_with("Untrusted key "),
        "{v:?}"
    );
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("print('tampered')\n");
    std::fs::write(&path, text).unwrap();
    let v = verdict(ItemKind::Tool, &path, &env.public_pem());
    assert!(
        v.error_text(p)
            .unwrap()
            .starts_with(&format!("Integrity failed: {p} (expected ")),
        "{v:?}"
    );
}

#[test]
fn sign_in_the_user_space_and_with_a_legacy_key_pair() {
    let env = Env::new();
    // The reference's key layout `<user>/.ai/keys/` is read when the seed-era dir is empty.
    let pair = key_pair_from_seed(&[5; 32]).unwrap();
    let legacy = env.user.join(".ai/keys");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("private_key.pem"), &pair.private_pem).unwrap();
    std::fs::write(legacy.join("public_key.pem"), &pair.public_pem).unwrap();
    let fp = fingerprint(pair.public_pem.as_bytes());
    let path = env.user.join(".ai/tools/mine/u.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, YAML_TOOL).unwrap();
    let out = env.run(&["sign", "mine/u", "--space", "user", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["location"], "user");
    assert_eq!(v["signature"]["pubkey_fp"], fp.as_str());
    assert!(!env.signing_dir().exists(), "no new key is generated");
    assert!(
        env.user
            .join(format!(".ai/config/keys/trusted/{fp}.toml"))
            .is_file(),
        "the key is trusted on first use"
    );
    let v = verdict(ItemKind::Tool, &path, &pair.public_pem);
    assert!(matches!(v, Verdict::Verified { .. }), "{v:?}");
    // The project space has no such tool.
    assert_code(&env.run(&["sign", "mine/u"]), 1);
}

#[test]
fn sign_usage_errors_exit_2() {
    let env = Env::new();
    env.write("tools/a.py", PY_TOOL);
    assert_code(&env.run(&["sign", "../a"]), 2);
    assert_code(&env.run(&["sign", "directive:a", "--type", "tool"]), 2);
    assert_code(&env.run(&["sign", "a", "--space", "system"]), 2);
}

/// A symlinked tool: the target is rewritten once, the link stays a link, both ids are reported.
#[test]
fn batch_signs_a_symlinked_file_once_and_keeps_the_link() {
    let env = Env::new();
    let real = env.write("tools/s/real.py", PY_TOOL);
    let link = env.project.join(".ai/tools/s/link.py");
    std::os::unix::fs::symlink("real.py", &link).unwrap();
    let out = env.run(&["sign", "s/*", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["signed"], serde_json::json!(["s/link", "s/real"]));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(signature_lines(&env.read("tools/s/real.py")), 1);
    assert_verifies(&env, ItemKind::Tool, &real);
}

/// A symlinked directory: `b/x` and `a/x` are one file (same inode, different paths); it is
/// signed once, both ids are reported, and the directory link stays a link.
#[test]
fn batch_signs_a_file_reached_through_a_linked_directory_once() {
    let env = Env::new();
    let real = env.write("tools/a/x.py", PY_TOOL);
    let dir_link = env.project.join(".ai/tools/b");
    std::os::unix::fs::symlink("a", &dir_link).unwrap();
    let out = env.run(&["sign", "*", "--json"]);
    assert_code(&out, 0);
    let v = json_of(&out);
    assert_eq!(v["signed"], serde_json::json!(["a/x", "b/x"]));
    assert!(
        std::fs::symlink_metadata(&dir_link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(signature_lines(&env.read("tools/a/x.py")), 1);
    assert_verifies(&env, ItemKind::Tool, &real);
}

/// Issue 35 item 2 (§10.7): re-signing an edited tool removes the lockfiles that pinned its old
/// text, and says which, so that edit → sign → exec works; a lockfile that pins the same text,
/// or another tool, stays.
#[test]
fn sign_removes_the_lockfiles_that_pinned_the_old_text() {
    let env = Env::new();
    env.write("tools/my/hello.py", PY_TOOL);
    env.write("tools/my/other.py", PY_TOOL);
    assert_code(&env.run(&["keys", "generate"]), 0);
    assert_code(&env.run(&["sign", "my/*"]), 0);
    assert_code(&env.run(&["lock", "my/hello"]), 0);
    assert_code(&env.run(&["lock", "my/other"]), 0);
    let hello_lock = env.project.join(".ai/lockfiles/my/hello@1.0.0.lock.json");
    let other_lock = env.project.join(".ai/lockfiles/my/other@1.0.0.lock.json");
    assert!(hello_lock.is_file() && other_lock.is_file());

    // Signing the same text again: the lockfile still matches and stays.
    let out = env.run(&["sign", "my/hello"]);
    assert_code(&out, 0);
    assert!(hello_lock.is_file(), "{}", stderr(&out));

    let edited = env
        .read("tools/my/hello.py")
        .replace("hello\")", "hello, again\")");
    env.write("tools/my/hello.py", &edited);
    let out = env.run(&["sign", "my/hello"]);
    assert_code(&out, 0);
    assert!(!hello_lock.exists(), "the stale lockfile is gone");
    assert!(other_lock.is_file(), "another tool's lockfile stays");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("note: removed {}", hello_lock.display()))
            && err.contains("ryechain lock my/hello --force"),
        "{err}"
    );
}
