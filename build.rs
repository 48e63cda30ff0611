//! Build script: embeds `rules/**/*.yaml` and the system bundle `.ai/**` into the binary.
#![allow(
    clippy::disallowed_methods,
    reason = "a build script reads the repo and writes OUT_DIR"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `p` relative to the repository, `/`-separated.
fn repo_rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .expect("under the repo")
        .to_string_lossy()
        .replace('\\', "/")
}

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=rules");
    println!("cargo:rerun-if-changed=.ai");
    let mut src = String::new();

    let mut rules = Vec::new();
    collect(&root.join("rules"), &mut rules);
    rules.retain(|p| p.extension().is_some_and(|e| e == "yaml"));
    rules.sort();
    src.push_str("pub static RULE_FILES: &[(&str, &str)] = &[\n");
    for p in &rules {
        let rel = p
            .strip_prefix(root.join("rules"))
            .expect("under rules/")
            .to_string_lossy()
            .replace('\\', "/");
        writeln!(
            src,
            "    ({rel:?}, include_str!({:?})),",
            p.display().to_string()
        )
        .expect("write to String");
    }
    src.push_str("];\n");

    // The same rules as JSON, converted here once so that start-up deserializes JSON (several
    // times faster than YAML; rule compilation was a third of a short `exec`). An empty string
    // marks a file that did not convert: the registry then compiles its YAML and reports why.
    src.push_str("pub static RULE_JSON: &[&str] = &[\n");
    for p in &rules {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let json = serde_yaml::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| serde_json::to_string(&v).ok())
            .unwrap_or_default();
        writeln!(src, "    {json:?},").expect("write to String");
    }
    src.push_str("];\n");

    // Each rule's message template by id: the one place the reference's texts are written
    // (`message.rs` renders them for resolution, execution and the editor; lint renders the
    // same rule's template).
    src.push_str("pub static RULE_MESSAGES: &[(&str, &str)] = &[\n");
    for p in &rules {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let Ok(doc) = serde_yaml::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if let (Some(id), Some(message)) = (doc["id"].as_str(), doc["message"].as_str()) {
            writeln!(src, "    ({id:?}, {message:?}),").expect("write to String");
        }
    }
    src.push_str("];\n");

    let mut system = Vec::new();
    collect(&root.join(".ai"), &mut system);
    system.sort();
    src.push_str("pub static SYSTEM_FILES: &[(&str, &[u8])] = &[\n");
    for p in &system {
        let rel = repo_rel(&root, p);
        writeln!(
            src,
            "    ({rel:?}, include_bytes!({:?})),",
            p.display().to_string()
        )
        .expect("write to String");
    }
    src.push_str("];\n");

    // The YAML extractors of the bundle as JSON, for the same reason as the rules: a short
    // `exec` otherwise parses them with libyaml, whose code it touches for nothing else. Only
    // where the JSON reads back as the same document (`serde_yaml::Value`); `""` otherwise.
    src.push_str("pub static SYSTEM_YAML_JSON: &[(&str, &str)] = &[\n");
    for p in &system {
        let rel = repo_rel(&root, p);
        if !(rel.starts_with(".ai/tools/rye/core/extractors/") && rel.ends_with(".yaml")) {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let json = serde_yaml::from_str::<serde_yaml::Value>(&text)
            .ok()
            .and_then(|v| {
                let json = serde_json::to_string(&v).ok()?;
                let back: serde_yaml::Value = serde_json::from_str(&json).ok()?;
                (back == v).then_some(json)
            })
            .unwrap_or_default();
        writeln!(src, "    ({rel:?}, {json:?}),").expect("write to String");
    }
    src.push_str("];\n");

    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    std::fs::write(out, src).expect("write embedded.rs");

    commit_env(&root);
}

/// `RYECHAIN_COMMIT` (`<short hash> <commit date>`) for `--version`, as cargo prints its own,
/// when the source is a git checkout and git runs; empty otherwise (a source tarball). The build
/// runs again when the checked-out commit moves.
fn commit_env(root: &Path) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["log", "-1", "--format=%h %cd", "--date=short", "--abbrev=9"]);
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = root.join(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Ok(head) = std::fs::read_to_string(dir.join("HEAD"))
            && let Some(reference) = head.trim().strip_prefix("ref: ")
        {
            println!("cargo:rerun-if-changed={}", dir.join(reference).display());
        }
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("packed-refs").display()
        );
    }
    println!(
        "cargo:rustc-env=RYECHAIN_COMMIT={}",
        commit.unwrap_or_default()
    );
}
