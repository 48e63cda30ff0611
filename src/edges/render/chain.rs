//! L6 the renderings of a chain and of the executor graph: the seed-003 dry-run JSON
//! (`exec --dry-run`, `chain --json`), the text of `ryechain chain`, and `graph` as JSON or DOT.
//! The analysis answers in plain data; only this file spells them out.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::analysis::Graph;
use crate::analysis::chain_view::ChainView;
use crate::analysis::verify::FileVerdict;
use crate::message;

/// The seed-003 dry-run response (§12.4), with `chain_detail` (DESIGN.md output decision).
pub fn dry_run(view: &ChainView) -> Json {
    if !view.found {
        return json!({"status": "error", "error": message::tool_not_found(&view.item_id)});
    }
    if let Some(err) = &view.error {
        return json!({"status": "error", "error": err, "item_id": view.item_id});
    }
    if !view.validation.valid {
        let error = message::chain_validation_failed(&view.validation.issues);
        return json!({"status": "error", "error": error, "item_id": view.item_id});
    }
    let chain: Vec<&str> = view.elements.iter().map(|e| e.item_id.as_str()).collect();
    let detail: Vec<serde_json::Value> = view
        .elements
        .iter()
        .map(|e| {
            json!({
                "item_id": e.item_id,
                "path": e.path.as_ref().map(|p| p.display().to_string()),
                "space": e.space,
                "tool_type": e.tool_type,
                "executor_id": e.executor_id,
                "integrity": e.integrity,
                "shadowed": e.shadowed.iter().map(|(p, s)| json!({"path": p.display().to_string(), "space": s})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "status": "validation_passed",
        "message": "Tool chain validation passed (dry run)",
        "item_id": view.item_id,
        "chain": chain,
        "validated_pairs": view.validation.pairs,
        "chain_detail": detail,
    })
}

/// The text of `ryechain chain ITEM`: each element with its space, file, integrity verdict and
/// shadowed candidates, then how the chain ends; and whether it passed (the exit status).
pub fn human(view: &ChainView, verdicts: &[FileVerdict]) -> (String, bool) {
    let mut out = String::new();
    // (Writing to a String cannot fail.)
    macro_rules! line {
        ($($arg:tt)*) => {{ let _ = writeln!(out, $($arg)*); }};
    }
    if !view.found {
        line!("{}", message::tool_not_found(&view.item_id));
        return (out, false);
    }
    for (i, e) in view.elements.iter().enumerate() {
        let arrow = if i == 0 { "  " } else { "→ " };
        let kind = if e.primitive { " [primitive]" } else { "" };
        let origin = e
            .origin
            .map(|o| format!(" (symlink into the {} space)", o.name()))
            .unwrap_or_default();
        let path = e.path.as_ref().map_or_else(
            || "(no file: resolved by key)".to_owned(),
            |p| p.display().to_string(),
        );
        line!(
            "{arrow}{} ({}{origin}){kind}\n    {path}",
            e.item_id,
            e.space
        );
        if let Some(v) = verdicts.iter().find(|v| Some(&v.path) == e.path.as_ref()) {
            match (v.verdict.key_fp(), &v.error) {
                (Some(fp), _) => line!("    integrity: verified (key {fp})"),
                (None, Some(err)) => line!("    integrity: {err}"),
                (None, None) => {}
            }
        }
        for (p, s) in &e.shadowed {
            line!("    shadows {} ({s})", p.display());
        }
    }
    if let Some(err) = &view.error {
        line!("\nerror: {err}");
        return (out, false);
    }
    if let Some((rule, message, help)) = &view.unknown_primitive_finding {
        line!("\nerror[{rule}]: {message}");
        if let Some(help) = help {
            line!("  = help: {help}");
        }
        return (out, false);
    }
    if let Some(id) = &view.unknown_primitive {
        line!(
            "\nwarning: the chain ends at `{id}`, which is not a registered primitive; running it fails with `{}`",
            message::unknown_primitive(id)
        );
    }
    for p in &view.validation.pairs {
        let ok = |b: bool| if b { "ok" } else { "FAILED" };
        line!(
            "pair {} → {}: space {}, io {}, version {}",
            p.child,
            p.parent,
            ok(p.space_ok),
            ok(p.io_ok),
            ok(p.version_ok)
        );
    }
    for w in &view.validation.warnings {
        line!("warning: {w}");
    }
    if view.validation.valid {
        line!(
            "\nvalidation passed ({} pairs)",
            view.validation.pairs.len()
        );
        (out, true)
    } else {
        line!(
            "\nerror: {}",
            message::chain_validation_failed(&view.validation.issues)
        );
        (out, false)
    }
}

/// A node's key in the graph outputs: `space:id`.
fn key(g: &Graph, i: usize) -> String {
    format!("{}:{}", g.nodes[i].space, g.nodes[i].item_id)
}

/// `ryechain graph --format json`: nodes (key, id, space, path) and edges (from, to, executor id).
pub fn graph_json(g: &Graph) -> Json {
    let nodes: Vec<Json> = (0..g.nodes.len())
        .map(|i| {
            let n = &g.nodes[i];
            json!({
                "key": key(g, i),
                "id": n.item_id,
                "space": n.space,
                "path": n.path.as_ref().map(|p| p.display().to_string()),
            })
        })
        .collect();
    let edges: Vec<Json> = g
        .edges
        .iter()
        .map(|e| json!({"from": key(g, e.from), "to": e.to.map(|t| key(g, t)), "executor_id": e.executor_id}))
        .collect();
    json!({"nodes": nodes, "edges": edges})
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `ryechain graph --format dot`: Graphviz, an id that resolves nowhere as a dashed red node.
pub fn graph_dot(g: &Graph) -> String {
    let mut out = String::from(
        "digraph executors {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    for (i, n) in g.nodes.iter().enumerate() {
        let shape = if n.path.is_none() {
            ", shape=ellipse"
        } else {
            ""
        };
        out.push_str(&format!(
            "  \"{}\" [label=\"{}\\n{}\"{shape}];\n",
            dot_escape(&key(g, i)),
            dot_escape(&n.item_id),
            dot_escape(&n.space)
        ));
    }
    let mut missing = 0;
    for e in &g.edges {
        match e.to {
            Some(to) => out.push_str(&format!(
                "  \"{}\" -> \"{}\";\n",
                dot_escape(&key(g, e.from)),
                dot_escape(&key(g, to))
            )),
            None => {
                missing += 1;
                out.push_str(&format!(
                    "  \"missing{missing}\" [label=\"{} (not found)\", style=dashed, color=red];\n  \"{}\" -> \"missing{missing}\" [style=dashed, color=red];\n",
                    dot_escape(&e.executor_id),
                    dot_escape(&key(g, e.from))
                ));
            }
        }
    }
    out.push_str("}\n");
    out
}
