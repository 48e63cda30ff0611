//! Repository hygiene: every source file opens with a `//!` line saying what it owns, and the
//! layering of DESIGN.md holds (lower layers never import higher ones; core never does I/O).
#![allow(
    clippy::disallowed_methods,
    reason = "the tidy test reads the source tree"
)]

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "examples"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    files.push(root.join("build.rs"));
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn every_module_starts_with_a_doc_line() {
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, _)| !rel.contains("/snapshots/") && !rel.contains("/fixtures/"))
        .filter(|(_, text)| !text.trim_start().starts_with("//!"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading `//!` line: {missing:?}"
    );
}

/// (module prefix, layer) for `src/`; a file may only import modules of its layer or below.
const LAYERS: &[(&str, u8)] = &[
    ("src/model.rs", 0),
    ("src/diagnostic.rs", 0),
    ("src/error.rs", 0),
    ("src/embedded.rs", 0),
    ("src/system/", 1),
    ("src/db/", 2),
    ("src/parse/", 3),
    ("src/resolve/", 3),
    ("src/config.rs", 3),
    ("src/integrity/", 3),
    ("src/rules/", 4),
    ("src/analysis/", 5),
    ("src/exec/run.rs", 6),
    ("src/exec/run/", 6),
    ("src/exec/gather.rs", 6),
    ("src/exec/", 5),
    ("src/synth.rs", 5),
    ("src/render/", 6),
    ("src/load.rs", 6),
    ("src/lint_cache/", 6),
    ("src/cli/", 6),
    ("src/lsp/", 6),
    ("src/testing.rs", 6),
];

const MODULE_LAYER: &[(&str, u8)] = &[
    ("model", 0),
    ("diagnostic", 0),
    ("error", 0),
    ("embedded", 0),
    ("system", 1),
    ("db", 2),
    ("parse", 3),
    ("resolve", 3),
    ("config", 3),
    ("integrity", 3),
    ("rules", 4),
    ("analysis", 5),
    ("exec", 5),
    ("exec::run", 6),
    ("exec::gather", 6),
    ("synth", 5),
    ("render", 6),
    ("load", 6),
    ("lint_cache", 6),
    ("cli", 6),
    ("lsp", 6),
    ("testing", 6),
];

#[test]
fn layers_only_import_downwards_and_core_does_no_io() {
    let mut violations = Vec::new();
    for (rel, text) in sources().into_iter().filter(|(r, _)| r.starts_with("src/")) {
        let Some(&(_, layer)) = LAYERS.iter().find(|(p, _)| rel.starts_with(p)) else {
            continue;
        };
        for (module, mlayer) in MODULE_LAYER {
            let uses = text.contains(&format!("crate::{module}::"))
                || text.contains(&format!("crate::{module}}}"));
            if uses && *mlayer > layer {
                violations.push(format!(
                    "{rel} (layer {layer}) uses crate::{module} (layer {mlayer})"
                ));
            }
        }
        // Edges (layer 6) and the OS implementation may do I/O; nothing else.
        let is_edge = layer == 6
            || rel == "src/system/os.rs"
            || rel == "src/system/space_write.rs"
            || rel == "src/main.rs";
        if !is_edge {
            for io in [
                "std::fs::",
                "std::process::",
                "std::env::var",
                "println!",
                "eprintln!",
                "print!(",
            ] {
                if text
                    .lines()
                    .any(|l| l.contains(io) && !l.trim_start().starts_with("//"))
                {
                    violations.push(format!("{rel} is core code but uses `{io}`"));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The generator and test support are not part of the product library: both modules are compiled
/// only with the `testing` feature, which only the crate's own dev-dependency turns on.
#[test]
fn generator_and_test_support_are_behind_the_testing_feature() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    for module in ["synth", "testing"] {
        let at = lib
            .find(&format!("pub mod {module};"))
            .unwrap_or_else(|| panic!("src/lib.rs declares {module}"));
        let before = &lib[..at];
        let gate = before.rfind("#[cfg(feature = \"testing\")]");
        let previous_item = before.rfind(';');
        assert!(
            gate.is_some_and(|g| previous_item.is_none_or(|p| g > p)),
            "`pub mod {module}` must be gated by the `testing` feature"
        );
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let default = manifest
        .lines()
        .find(|l| l.replace(" ", "").starts_with("default="));
    assert!(
        default.is_none_or(|l| !l.contains("testing")),
        "the testing feature must stay off by default"
    );
}
