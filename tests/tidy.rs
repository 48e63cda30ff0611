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
    for dir in ["src", "tests", "benches", "examples", "crates"] {
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

/// (folder, layer) for `src/`: one folder per layer; a file may only import modules of its layer
/// or below.
const LAYERS: &[(&str, u8)] = &[
    ("src/base/", 0),
    ("src/system/", 1),
    ("src/db/", 2),
    ("src/facts/", 3),
    ("src/rules/", 4),
    ("src/engine/", 5),
    ("src/edges/", 6),
];

const MODULE_LAYER: &[(&str, u8)] = &[
    ("base", 0),
    ("facts", 3),
    ("engine", 5),
    ("edges", 6),
    ("model", 0),
    ("diagnostic", 0),
    ("error", 0),
    ("embedded", 0),
    ("message", 0),
    ("place", 0),
    ("pyrepr", 0),
    ("system", 1),
    ("db", 2),
    ("parse", 3),
    ("resolve", 3),
    ("config", 3),
    ("integrity", 3),
    ("rules", 4),
    ("analysis", 5),
    ("exec", 5),
    ("runner", 6),
    ("render", 6),
    ("load", 6),
    ("lint_cache", 6),
    ("memory", 6),
    ("cli", 6),
    ("lsp", 6),
    ("testing", 6),
];

#[test]
fn layers_only_import_downwards_and_core_does_no_io() {
    let mut violations = Vec::new();
    for (rel, text) in sources().into_iter().filter(|(r, _)| r.starts_with("src/")) {
        let Some(&(_, layer)) = LAYERS.iter().find(|(p, _)| rel.starts_with(p)) else {
            // Only the crate's root files stand outside a layer's folder.
            if rel != "src/lib.rs" && rel != "src/main.rs" {
                violations.push(format!("{rel} is in no layer's folder"));
            }
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

/// Test support is not part of the product library: compiled only with the `testing` feature,
/// which only the crate's own dev-dependency turns on. The synthetic-tree generator is not in the
/// product crate at all: it is the workspace member `crates/synth`, a dev-dependency only.
#[test]
fn test_support_is_behind_the_testing_feature_and_the_generator_is_dev_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Declared in its layer's folder and handed on at the root, each behind the feature.
    for (file, item) in [
        ("src/edges/mod.rs", "pub mod testing;"),
        ("src/lib.rs", "pub use edges::testing;"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let at = text
            .find(item)
            .unwrap_or_else(|| panic!("{file} has `{item}`"));
        let before = &text[..at];
        let gate = before.rfind("#[cfg(feature = \"testing\")]");
        let previous_item = before.rfind(';');
        assert!(
            gate.is_some_and(|g| previous_item.is_none_or(|p| g > p)),
            "`{item}` in {file} must be gated by the `testing` feature"
        );
    }
    let read = |path: &str| -> toml::Table {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        text.parse()
            .unwrap_or_else(|e| panic!("{path} is TOML: {e}"))
    };
    let manifest = read("Cargo.toml");
    let default = manifest
        .get("features")
        .and_then(|f| f.get("default"))
        .and_then(toml::Value::as_array);
    assert!(
        default.is_none_or(|d| !d.iter().any(|f| f.as_str() == Some("testing"))),
        "the testing feature must stay off by default"
    );
    let names = |table: &str| -> Vec<String> {
        manifest
            .get(table)
            .and_then(toml::Value::as_table)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert!(
        !names("dependencies").iter().any(|d| d == "ryechain-synth"),
        "the product must not depend on the generator"
    );
    assert!(
        names("dev-dependencies")
            .iter()
            .any(|d| d == "ryechain-synth"),
        "the tests, benchmarks and examples reach the generator as a dev-dependency"
    );
    // A workspace member and a default one, so `cargo test` and `cargo clippy` at the root
    // cover it; never published.
    for key in ["members", "default-members"] {
        let members = manifest
            .get("workspace")
            .and_then(|w| w.get(key))
            .and_then(toml::Value::as_array)
            .unwrap_or_else(|| panic!("Cargo.toml has workspace.{key}"));
        assert!(
            members.iter().any(|m| m.as_str() == Some("crates/synth")),
            "workspace.{key} names crates/synth"
        );
    }
    let synth = read("crates/synth/Cargo.toml");
    assert_eq!(
        synth.get("package").and_then(|p| p.get("publish")),
        Some(&toml::Value::Boolean(false)),
        "ryechain-synth is never published"
    );
    // No generator module is left in the product's source.
    let leftovers: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, text)| {
            rel.starts_with("src/") && (rel.contains("synth") || text.contains("mod synth"))
        })
        .map(|(rel, _)| rel)
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// §31.6: every layer is private to the crate (`pub(crate)` unless the `testing` feature opens it
/// to the tests), and what the crate exports is the API `lib.rs` names: items, never a layer or a
/// module of one.
#[test]
fn layers_are_private_and_lib_rs_exports_the_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let code: String = lib
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    // Each layer is declared twice: public under the `testing` feature, private to the crate
    // without it; and no other module is public.
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    for (folder, _) in LAYERS {
        let name = folder.trim_start_matches("src/").trim_end_matches('/');
        for (gate, decl) in [
            ("#[cfg(feature = \"testing\")]", format!("pub mod {name};")),
            (
                "#[cfg(not(feature = \"testing\"))]",
                format!("pub(crate) mod {name};"),
            ),
        ] {
            assert!(
                lines.windows(2).any(|w| w[0] == gate && w[1] == decl),
                "layer `{name}` is declared `{gate} {decl}`"
            );
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("pub mod") {
            assert!(
                i > 0 && lines[i - 1] == "#[cfg(feature = \"testing\")]",
                "`{line}`: lib.rs declares no public module but behind the testing feature"
            );
        }
    }
    let outside_macro = &code[code.find("internal! {").expect("the root aliases")..];
    // Every `pub use` that is not behind the `testing` feature names items, not modules.
    let mut exported = Vec::new();
    let mut gated = false;
    for line in outside_macro.lines().map(str::trim) {
        if line.starts_with("#[cfg(feature = \"testing\")]") {
            gated = true;
            continue;
        }
        if line.starts_with("pub use") && !gated {
            let start = outside_macro.find(line).unwrap();
            let stmt = &outside_macro[start..start + outside_macro[start..].find(';').unwrap()];
            let stmt = stmt.trim_start_matches("pub use").trim();
            let (prefix, leaves): (&str, Vec<&str>) = match stmt.find('{') {
                Some(b) => (
                    stmt[..b].trim_end_matches("::"),
                    stmt[b + 1..stmt.rfind('}').unwrap()].split(',').collect(),
                ),
                None => stmt.rsplit_once("::").map(|(p, l)| (p, vec![l])).unwrap(),
            };
            let dir = root.join("src").join(prefix.replace("::", "/"));
            exported.extend(
                leaves
                    .into_iter()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        (
                            l,
                            dir.join(format!("{l}.rs")).exists() || dir.join(l).is_dir(),
                        )
                    }),
            );
        }
        if !line.starts_with("#[") && !line.starts_with("///") {
            gated = false;
        }
    }
    assert!(
        exported.iter().any(|(l, _)| *l == "Host") && exported.iter().any(|(l, _)| *l == "main"),
        "the API is found: {exported:?}"
    );
    let modules: Vec<&str> = exported
        .iter()
        .filter(|(leaf, is_module)| *is_module || leaf.ends_with('*'))
        .map(|(leaf, _)| *leaf)
        .collect();
    assert!(
        modules.is_empty(),
        "lib.rs exports modules, not an API: {modules:?}"
    );
}

/// The source without `//` comments (line and doc comments) and without the contents of string
/// literals (a message may quote code).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = '\0';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if in_str {
                if c == '"' && prev != '\\' {
                    in_str = false;
                    kept.push('"');
                }
                prev = if prev == '\\' && c == '\\' { '\0' } else { c };
                i += 1;
                continue;
            }
            if c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\'' {
                in_str = true;
                prev = '\0';
                kept.push('"');
                i += 1;
                continue;
            }
            kept.push(c);
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module path of a source file under `src/` (`src/resolve/mod.rs` → `resolve`,
/// `src/resolve/graph.rs` → `resolve::graph`).
fn module_of(rel: &str) -> String {
    let p = rel.trim_start_matches("src/").trim_end_matches(".rs");
    let p = p.trim_end_matches("/mod");
    root_alias(&p.replace('/', "::"))
}

/// The path a module is named by in the code: `lib.rs` hands every module of a layer's folder on
/// at the crate root (`pub use facts::{resolve, …}`), so `facts::resolve::graph` is
/// `resolve::graph`.
fn root_alias(module: &str) -> String {
    const LAYER_FOLDERS: [&str; 4] = ["base", "facts", "engine", "edges"];
    match module.split_once("::") {
        Some((folder, rest)) if LAYER_FOLDERS.contains(&folder) => rest.to_owned(),
        _ => module.to_owned(),
    }
}

/// The queries of the database: every `#[salsa::tracked]` function, and every public function of
/// the fact and rule layers whose first parameter is the database, each as `module::name`.
fn queries(sources: &[(String, String)]) -> Vec<String> {
    let core = ["src/db/", "src/facts/", "src/rules/"];
    let mut out = Vec::new();
    for (rel, text) in sources {
        if !core.iter().any(|c| rel.starts_with(c)) {
            continue;
        }
        let module = module_of(rel);
        let code = code_only(text);
        let mut tracked_next = false;
        for line in code.lines() {
            let l = line.trim_start();
            if l.starts_with("#[salsa::tracked") {
                tracked_next = true;
                continue;
            }
            let Some(at) = l.find("fn ") else { continue };
            if !(at == 0 || l[..at].trim_end().ends_with("pub") || l[..at].contains("pub(")) {
                continue;
            }
            let name: String = l[at + 3..].chars().take_while(|&c| is_ident(c)).collect();
            let rest = &l[at + 3 + name.len()..];
            let params = rest
                .trim_start_matches(|c| c != '(')
                .trim_start_matches('(');
            let takes_db = params.trim_start().starts_with("db:");
            let public = l.starts_with("pub fn") || l.starts_with("pub(crate) fn");
            if tracked_next || (public && takes_db) {
                out.push(format!("{module}::{name}"));
            }
            tracked_next = false;
        }
    }
    // A query re-exported (`pub use extractor::extractor_config;` in `resolve`) is named by
    // that path too.
    for (rel, text) in sources {
        if !core.iter().any(|c| rel.starts_with(c)) {
            continue;
        }
        let module = module_of(rel);
        let code = code_only(text);
        let mut rest = code.as_str();
        while let Some(at) = rest.find("pub use ") {
            let tail = &rest[at + "pub use ".len()..];
            let end = tail.find(';').unwrap_or(tail.len());
            for path in use_paths(&format!("use crate::{};", &tail[..end])) {
                let path = path
                    .trim_start_matches("crate::")
                    .trim_start_matches("self::");
                let name = path.rsplit("::").next().unwrap_or(path);
                let direct = path.to_owned();
                let nested = format!("{module}::{path}");
                if out.contains(&direct) || out.contains(&nested) {
                    out.push(format!("{module}::{name}"));
                }
            }
            rest = &tail[end..];
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every full path a `use crate::…;` tree names (`use crate::a::{b, c::{d}}` → `a::b`, `a::c::d`).
fn use_paths(code: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head = tree[..open].trim().trim_end_matches("::");
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let base = join(prefix, head);
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&base, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&base, &inner[start..], out);
        } else if !tree.is_empty() {
            let name = tree.split(" as ").next().unwrap_or(tree).trim();
            if name == "self" {
                out.push(prefix.to_owned());
            } else {
                out.push(join(prefix, name));
            }
        }
    }
    fn join(a: &str, b: &str) -> String {
        match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_owned(),
            (_, true) => a.to_owned(),
            _ => format!("{a}::{b}"),
        }
    }
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use crate::") {
        let before = rest[..at].chars().last();
        let tail = &rest[at + "use crate::".len()..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before.is_none_or(|c| !is_ident(c)) {
            expand("", &tail[..end], &mut out);
        }
        rest = &tail[end..];
    }
    out
}

/// Queries an edge's code names: imported (`use crate::resolve::chain`), called by a full path
/// (`crate::resolve::chain(`), or called through an imported module (`lockfile::find_lockfile(`).
fn named_queries(code: &str, queries: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let uses = use_paths(code);
    for path in &uses {
        if queries.contains(path) {
            found.push(path.clone());
        }
        if path.ends_with("::*") {
            let module = path.trim_end_matches("::*");
            if queries
                .iter()
                .any(|q| q.rsplit_once("::").is_some_and(|(m, _)| m == module))
            {
                found.push(path.clone());
            }
        }
    }
    // `a::b::name(`: a full path after `crate::`, or one starting at an imported module.
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) && (i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == ':')) {
            let mut j = i;
            while j < bytes.len() && (is_ident(bytes[j]) || bytes[j] == ':') {
                j += 1;
            }
            let path: String = bytes[i..j].iter().collect();
            if bytes.get(j) == Some(&'(') && path.contains("::") {
                let path = path.trim_start_matches("crate::");
                let (head, rest) = path.split_once("::").unwrap_or((path, ""));
                let full = match uses.iter().find(|u| u.rsplit("::").next() == Some(head)) {
                    Some(module) if !rest.is_empty() => format!("{module}::{rest}"),
                    _ => path.to_owned(),
                };
                if queries.contains(&full) {
                    found.push(full);
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The edges (the CLI, the language server, the MCP server, the exec planner and runner, the
/// renderers) reach the database only through `analysis::Analysis`: none names a query, holds the
/// database, or asks the host for it.
#[test]
fn edges_name_no_query_and_hold_no_database() {
    let sources = sources();
    let queries = queries(&sources);
    // The list is read from the source: it cannot silently be empty.
    for q in [
        "resolve::chain",
        "resolve::metadata",
        "integrity::trust_store",
    ] {
        assert!(
            queries.contains(&q.to_owned()),
            "{q} not found among {queries:?}"
        );
    }
    let edges = [
        "src/edges/cli/",
        "src/edges/lsp/",
        "src/edges/mcp/",
        "src/engine/exec/",
        "src/edges/runner/",
        "src/edges/render/",
        "src/main.rs",
    ];
    let mut violations = Vec::new();
    for (rel, text) in &sources {
        if !edges.iter().any(|e| rel.starts_with(e)) {
            continue;
        }
        let code = code_only(text);
        for q in named_queries(&code, &queries) {
            violations.push(format!("{rel} names the query `{q}`"));
        }
        for held in ["RootDb", "dyn Db", ".db()", ".snapshot()"] {
            if code.contains(held) {
                violations.push(format!("{rel} uses `{held}`"));
            }
        }
    }
    violations.sort();
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The detector finds what it must (so the test above cannot pass by finding nothing).
#[test]
fn the_query_detector_finds_imports_paths_and_module_calls() {
    let q = vec![
        "resolve::chain".to_owned(),
        "integrity::lockfile::find_lockfile".to_owned(),
    ];
    let cases = [
        ("use crate::resolve::{Chain, chain};", true),
        ("use crate::resolve::chain as walk;", true),
        ("let c = crate::resolve::chain(db, f);", true),
        (
            "use crate::integrity::lockfile;\nlet f = lockfile::find_lockfile(db, id, v);",
            true,
        ),
        (
            "use crate::integrity::{lockfile::{self}};\nlockfile::find_lockfile(x);",
            true,
        ),
        ("use crate::resolve::*;", true),
        ("let it = a.chain(b).chain(c);", false),
        ("use crate::analysis::chain_view::ChainView;", false),
        ("// crate::resolve::chain(db, f)", false),
        ("let s = \"crate::resolve::chain(db)\";", false),
    ];
    for (code, expected) in cases {
        let found = !named_queries(&code_only(code), &q).is_empty();
        assert_eq!(found, expected, "{code}");
    }
}

/// The module path of a file (`src/a/b.rs` → `a::b`, `src/a/mod.rs` → `a`, `src/lib.rs` → ``).
fn module_path(rel: &str) -> String {
    let p = rel.trim_start_matches("src/").trim_end_matches(".rs");
    let p = p.trim_end_matches("/mod");
    if p == "lib" || p == "main" {
        return String::new();
    }
    root_alias(&p.replace('/', "::"))
}

/// The modules `code` (the file of module `me`) imports: every `use crate::…`, `use super::…`
/// and `crate::…::name` path, resolved to the longest module in `modules` it starts with.
fn imported_modules(me: &str, is_mod_rs: bool, code: &str, modules: &[String]) -> Vec<String> {
    let resolve = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        (1..=segs.len())
            .rev()
            .map(|n| segs[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    // `super::` of a file module is its parent; of a `mod.rs`, the folder's parent too.
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_owned())
    };
    let base_of_super = if is_mod_rs || !me.is_empty() {
        parent(me)
    } else {
        String::new()
    };
    let mut out = Vec::new();
    for path in use_paths(code) {
        out.extend(resolve(&path));
    }
    // `use super::…` trees, expanded like `use crate::…` ones.
    let supers = code.replace("use super::", "use crate::SUPER::");
    for path in use_paths(&supers) {
        if let Some(rest) = path.strip_prefix("SUPER::") {
            let full = if base_of_super.is_empty() {
                rest.to_owned()
            } else {
                format!("{base_of_super}::{rest}")
            };
            out.extend(resolve(&full));
        }
    }
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let tail = &rest[at + "crate::".len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        out.extend(resolve(tail[..end].trim_end_matches(':')));
        rest = &tail[end..];
    }
    out.retain(|m| m != me && !m.starts_with(&format!("{me}::")) && !(me.is_empty()));
    out.sort();
    out.dedup();
    out
}

/// The unit a module belongs to in the layer table (`exec::run` apart from `exec`).
fn unit_of(module: &str) -> String {
    let mut best = module.split("::").next().unwrap_or("").to_owned();
    for (prefix, _) in MODULE_LAYER {
        if (module == *prefix || module.starts_with(&format!("{prefix}::")))
            && prefix.len() > best.len()
        {
            best = (*prefix).to_owned();
        }
    }
    best
}

/// Cycles among `nodes` given `edges` (strongly connected components of more than one node).
fn cycles(edges: &[(String, String)]) -> Vec<Vec<String>> {
    let mut g = petgraph::graph::DiGraph::<String, ()>::new();
    let mut index = std::collections::BTreeMap::new();
    for (a, b) in edges {
        for n in [a, b] {
            if !index.contains_key(n) {
                index.insert(n.clone(), g.add_node(n.clone()));
            }
        }
        g.add_edge(index[a], index[b], ());
    }
    petgraph::algo::tarjan_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|&i| g[i].clone()).collect();
            names.sort();
            names
        })
        .collect()
}

/// No two modules import each other, directly or round a loop: neither two files (a parent's
/// `mod.rs` handing on its children's names is not an import of them) nor two units of the layer
/// table (`exec` and `analysis`, say).
#[test]
fn no_module_imports_itself_round_a_loop() {
    let sources: Vec<(String, String)> = sources()
        .into_iter()
        .filter(|(rel, _)| rel.starts_with("src/"))
        .collect();
    let modules: Vec<String> = sources.iter().map(|(rel, _)| module_path(rel)).collect();
    let mut file_edges = Vec::new();
    let mut unit_edges = Vec::new();
    for (rel, text) in &sources {
        let me = module_path(rel);
        let code = code_only(text);
        // A unit test module (at the end of its file) may compare with a sibling: not a
        // dependency of the product.
        let code = match code.find("#[cfg(test)]\nmod ") {
            Some(at) => &code[..at],
            None => &code,
        };
        for m in imported_modules(&me, rel.ends_with("/mod.rs"), code, &modules) {
            file_edges.push((me.clone(), m.clone()));
            let (a, b) = (unit_of(&me), unit_of(&m));
            if a != b && !a.is_empty() && !b.is_empty() {
                unit_edges.push((a, b));
            }
        }
    }
    assert!(
        file_edges.len() > 100,
        "the import scan finds the imports: {file_edges:?}"
    );
    let files = cycles(&file_edges);
    let units = cycles(&unit_edges);
    assert!(
        files.is_empty() && units.is_empty(),
        "cycles between files: {files:#?}\ncycles between units of the layer table: {units:#?}"
    );
}

/// The cycle detector sees a loop through `super::` and one through `crate::` paths.
#[test]
fn the_cycle_detector_sees_loops() {
    let modules: Vec<String> = ["a", "a::x", "a::y", "b"].map(str::to_owned).to_vec();
    let x = imported_modules("a::x", false, "use super::y::f;\n", &modules);
    let y = imported_modules("a::y", false, "fn g() { crate::a::x::h(); }\n", &modules);
    assert_eq!(x, ["a::y"]);
    assert_eq!(y, ["a::x"]);
    let edges: Vec<(String, String)> = [("a::x", "a::y"), ("a::y", "a::x"), ("a::y", "b")]
        .map(|(p, q)| (p.to_owned(), q.to_owned()))
        .to_vec();
    assert_eq!(
        cycles(&edges),
        vec![vec!["a::x".to_owned(), "a::y".to_owned()]]
    );
    // A parent handing on its child's names is not a loop.
    let parent = imported_modules("a", true, "pub use x::f;\nuse crate::a::x::g;\n", &modules);
    assert!(parent.is_empty(), "{parent:?}");
}
