//! L4 the lint of state graphs: the problems `rules::graph` finds in a graph tool's config, each
//! emitted by its rule at the span its path names in the header (`graph_file_diagnostics`, with
//! the file's own checks), and the actions naming tools no space holds
//! (`graph_action_diagnostics`, with the chain checks, which already depend on resolution).

use super::graph::{At, GraphIssue, Seg, action_refs, analyze, node_names};
use super::{Check, Site, of_kind};
use crate::db::Db;
use crate::diagnostic::Diagnostic;
use crate::model::{Metadata, Span, Spanned, Value};

/// Whether a header is a state graph's.
pub fn is_graph(meta: &Metadata) -> bool {
    meta.tool_type_str() == Some(super::graph::GRAPH_TOOL_TYPE)
}

/// The span a path names in the config (the deepest part of it the config has), relative to the
/// header; the tool type's when there is no config.
pub fn span_at(meta: &Metadata, at: Option<&At>) -> Option<Span> {
    let Some(config) = meta.config() else {
        return meta.tool_type().map(|t| t.span);
    };
    let Some(at) = at else {
        return Some(config.span);
    };
    let mut here: &Spanned<Value> = config;
    let mut key_span = None;
    for seg in &at.path {
        let next = match seg {
            Seg::Key(k) => here.value.as_map().and_then(|m| {
                m.iter()
                    .rev()
                    .find(|(key, _)| key.value.as_str() == k.as_str())
                    .map(|(key, v)| (Some(key.span), v))
            }),
            Seg::Index(i) => here
                .value
                .as_list()
                .and_then(|l| l.get(*i))
                .map(|v| (None, v)),
        };
        let Some((k, v)) = next else {
            return Some(key_span.unwrap_or(here.span));
        };
        key_span = k;
        here = v;
    }
    Some(match (at.key, key_span) {
        (true, Some(k)) => k,
        _ => here.span,
    })
}

fn listed(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The findings of a graph's shape, start, edges, reachability and nodes. `site` turns a span of
/// the header into the finding's site.
pub fn graph_file_diagnostics<'a>(
    db: &'a dyn Db,
    meta: &Metadata,
    item_id: &str,
    site: &dyn Fn(Option<Span>) -> Site<'a>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if !is_graph(meta) {
        return out;
    }
    let config = meta.config().map(|c| c.value.to_json());
    let names = node_names(config.as_ref());
    let start = config
        .as_ref()
        .and_then(|c| c.get("start"))
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_owned();
    for issue in analyze(config.as_ref()) {
        let id = ("item_id", item_id.to_owned());
        match issue {
            GraphIssue::Shape { at, problem } => {
                for rule in of_kind(db, |c| matches!(c, Check::GraphShape { .. })) {
                    let vars = [id.clone(), ("problem", problem.clone())];
                    out.push(rule.emit(site(span_at(meta, Some(&at))), &vars, None, Vec::new()));
                }
            }
            GraphIssue::Start { at, problem } => {
                for rule in of_kind(db, |c| matches!(c, Check::GraphStart { .. })) {
                    let vars = [
                        id.clone(),
                        ("problem", problem.clone()),
                        ("nodes", listed(&names)),
                    ];
                    out.push(rule.emit(site(span_at(meta, at.as_ref())), &vars, None, Vec::new()));
                }
            }
            GraphIssue::Target { at, node, target } => {
                for rule in of_kind(db, |c| matches!(c, Check::GraphTarget { .. })) {
                    let vars = [
                        id.clone(),
                        ("node", node.clone()),
                        ("target", target.clone()),
                        ("nodes", listed(&names)),
                    ];
                    out.push(rule.emit(site(span_at(meta, Some(&at))), &vars, None, Vec::new()));
                }
            }
            GraphIssue::Unreachable { at, node } => {
                for rule in of_kind(db, |c| matches!(c, Check::GraphUnreachable { .. })) {
                    let vars = [id.clone(), ("node", node.clone()), ("start", start.clone())];
                    out.push(rule.emit(site(span_at(meta, Some(&at))), &vars, None, Vec::new()));
                }
            }
            GraphIssue::NoAction {
                at,
                node,
                node_type,
            } => {
                for rule in of_kind(db, |c| matches!(c, Check::GraphNodeAction { .. })) {
                    let vars = [
                        id.clone(),
                        ("node", node.clone()),
                        ("node_type", node_type.clone().unwrap_or_default()),
                    ];
                    let variant = node_type.is_some().then_some("unknown_type");
                    out.push(rule.emit(site(span_at(meta, Some(&at))), &vars, variant, Vec::new()));
                }
            }
        }
    }
    out
}

/// The actions of a graph naming, by a literal id, a tool that resolves in no space (searched
/// as `rye_execute` searches: project, user, system), or an id that can name no file.
pub fn graph_action_diagnostics<'a>(
    db: &'a dyn Db,
    meta: &Metadata,
    item_id: &str,
    site: &dyn Fn(Option<Span>) -> Site<'a>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if !is_graph(meta) {
        return out;
    }
    let config = meta.config().map(|c| c.value.to_json());
    for action in action_refs(config.as_ref()) {
        let problem = crate::model::item_id_problem(&action.item_id);
        if problem.is_none()
            && crate::resolve::resolve(db, &action.item_id, crate::model::SpaceKind::Project)
                .found
                .is_some()
        {
            continue;
        }
        for rule in of_kind(db, |c| matches!(c, Check::GraphAction { .. })) {
            let vars = [
                ("item_id", item_id.to_owned()),
                ("node", action.node.clone()),
                ("action_id", action.item_id.clone()),
                ("reason", problem.unwrap_or_default().to_owned()),
            ];
            let variant = problem.is_some().then_some("invalid");
            out.push(rule.emit(
                site(span_at(meta, Some(&action.at))),
                &vars,
                variant,
                Vec::new(),
            ));
        }
    }
    out
}

/// The literal tool ids a graph's actions name (what its findings read, for the lazy loaders
/// and the kept lints).
pub fn graph_action_ids(meta: &Metadata) -> Vec<String> {
    if !is_graph(meta) {
        return Vec::new();
    }
    let config = meta.config().map(|c| c.value.to_json());
    action_refs(config.as_ref())
        .into_iter()
        .map(|a| a.item_id)
        .collect()
}
