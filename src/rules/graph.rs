//! L4 the shape of a state graph (a tool with `tool_type: graph` whose `config` is
//! `{start, max_steps, on_error, nodes}`, the upstream's "State Graphs" format): what is wrong
//! with one graph's config — a start naming no node, edges to unknown nodes, unreachable nodes,
//! nodes with nothing to do, values of the wrong shape — and the tool ids its actions name. Pure,
//! on the config as JSON; each problem says where it is as a path into the config, which lint
//! turns into a span and the state-graph runtime (`exec::graph`) into its refusal. One analysis,
//! so lint and a run never disagree on what a graph means.

use std::collections::{BTreeSet, VecDeque};

use serde_json::{Map, Value as Json};

/// The `tool_type` of a graph tool.
pub const GRAPH_TOOL_TYPE: &str = "graph";

/// The node types besides the default (an action node).
pub const NODE_TYPES: [&str; 2] = ["return", "foreach"];

/// The operators of a `when` condition (the upstream's `condition_evaluator`).
pub const CONDITION_OPS: [&str; 10] = [
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "regex", "exists",
];

/// The item types an action may execute (`primary: execute`).
pub const ACTION_ITEM_TYPES: [&str; 3] = ["tool", "directive", "knowledge"];

/// The graph-level `on_error` policies.
pub const ERROR_POLICIES: [&str; 2] = ["fail", "continue"];

/// One step of a path into the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Where a problem is: a path from the config's value; `key` points at the last key itself
/// rather than at its value (a node's name, not its body).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct At {
    pub path: Vec<Seg>,
    pub key: bool,
}

impl At {
    fn of(path: &[Seg]) -> At {
        At {
            path: path.to_vec(),
            key: false,
        }
    }
    fn key_of(path: &[Seg]) -> At {
        At {
            path: path.to_vec(),
            key: true,
        }
    }
}

fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Key(k.to_owned()));
    p
}

fn index(path: &[Seg], i: usize) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Index(i));
    p
}

/// What is wrong with a graph, each kind the finding of one rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphIssue {
    /// A value of the wrong shape (`invalid-graph`).
    Shape { at: At, problem: String },
    /// No `start`, or a start naming no node (`graph-missing-start`); `at` is `None` when the
    /// graph has no `config` at all.
    Start { at: Option<At>, problem: String },
    /// An edge (`next`, a conditional edge's `to`, a node's `on_error`) to a node the graph does
    /// not have (`graph-unknown-node`).
    Target {
        at: At,
        node: String,
        target: String,
    },
    /// A node no walk from the start reaches (`graph-unreachable-node`).
    Unreachable { at: At, node: String },
    /// A node that is neither `return` nor `foreach` and has no `action`
    /// (`graph-node-without-action`); `node_type` is a `type` that is no node type.
    NoAction {
        at: At,
        node: String,
        node_type: Option<String>,
    },
}

/// A tool an action runs, by a literal id (an id with `${…}` in it is known only at run time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionRef {
    pub at: At,
    pub node: String,
    pub item_id: String,
}

/// The nodes of a config, when `nodes` is a mapping.
fn nodes(config: &Json) -> Option<&Map<String, Json>> {
    config.get("nodes")?.as_object()
}

/// The edges a node has, with where each is said: `next` (a string, or each `to` of a list) and
/// a node-level `on_error` naming a node.
pub fn edges<'a>(node: &'a Json, path: &[Seg]) -> Vec<(&'a str, At)> {
    let mut out = Vec::new();
    match node.get("next") {
        Some(Json::String(s)) => out.push((s.as_str(), At::of(&key(path, "next")))),
        Some(Json::Array(list)) => {
            for (i, e) in list.iter().enumerate() {
                if let Some(Json::String(to)) = e.get("to") {
                    out.push((
                        to.as_str(),
                        At::of(&key(&index(&key(path, "next"), i), "to")),
                    ));
                }
            }
        }
        _ => {}
    }
    if let Some(Json::String(s)) = node.get("on_error") {
        out.push((s.as_str(), At::of(&key(path, "on_error"))));
    }
    out
}

/// Every problem of a graph's `config` (`None`: the tool has no config), in a stable order.
pub fn analyze(config: Option<&Json>) -> Vec<GraphIssue> {
    let mut out = Vec::new();
    let Some(config) = config else {
        out.push(GraphIssue::Start {
            at: None,
            problem: "the graph has no `config` (it needs `start` and `nodes`)".to_owned(),
        });
        return out;
    };
    let Some(cfg) = config.as_object() else {
        out.push(GraphIssue::Shape {
            at: At::default(),
            problem: format!(
                "`config` must be a mapping with `start` and `nodes`, not {}",
                crate::message::json_type(config)
            ),
        });
        return out;
    };
    let top = Vec::new();
    if let Some(v) = cfg.get("max_steps")
        && v.as_u64().is_none_or(|n| n == 0)
    {
        out.push(GraphIssue::Shape {
            at: At::of(&key(&top, "max_steps")),
            problem: format!(
                "`max_steps` must be a positive whole number, not {}",
                shown(v)
            ),
        });
    }
    if let Some(v) = cfg.get("on_error")
        && !v.as_str().is_some_and(|s| ERROR_POLICIES.contains(&s))
    {
        out.push(GraphIssue::Shape {
            at: At::of(&key(&top, "on_error")),
            problem: format!(
                "the graph's `on_error` must be `fail` or `continue`, not {}",
                shown(v)
            ),
        });
    }
    let nodes = match cfg.get("nodes") {
        None => {
            out.push(GraphIssue::Shape {
                at: At::default(),
                problem: "`config` has no `nodes`".to_owned(),
            });
            None
        }
        Some(Json::Object(m)) if m.is_empty() => {
            out.push(GraphIssue::Shape {
                at: At::of(&key(&top, "nodes")),
                problem: "`nodes` is empty".to_owned(),
            });
            None
        }
        Some(Json::Object(m)) => Some(m),
        Some(other) => {
            out.push(GraphIssue::Shape {
                at: At::of(&key(&top, "nodes")),
                problem: format!(
                    "`nodes` must be a mapping of node names to nodes, not {}",
                    crate::message::json_type(other)
                ),
            });
            None
        }
    };
    let names: Vec<&str> = nodes
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    match cfg.get("start") {
        None => out.push(GraphIssue::Start {
            at: Some(At::default()),
            problem: "`config` has no `start`".to_owned(),
        }),
        Some(Json::String(s)) if nodes.is_none() || names.contains(&s.as_str()) => {}
        Some(Json::String(s)) => out.push(GraphIssue::Start {
            at: Some(At::of(&key(&top, "start"))),
            problem: format!("`start` names `{s}`, which is no node of the graph"),
        }),
        Some(other) => out.push(GraphIssue::Start {
            at: Some(At::of(&key(&top, "start"))),
            problem: format!(
                "`start` must be a node's name, not {}",
                crate::message::json_type(other)
            ),
        }),
    }
    let Some(nodes) = nodes else {
        return out;
    };
    for (name, node) in nodes {
        let path = key(&key(&top, "nodes"), name);
        node_issues(name, node, &path, &names, &mut out);
    }
    // Reachability: a walk from the start along every edge.
    if let Some(Json::String(start)) = cfg.get("start")
        && nodes.contains_key(start)
    {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut queue = VecDeque::from([start.as_str()]);
        while let Some(n) = queue.pop_front() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = nodes.get(n) {
                for (to, _) in edges(node, &[]) {
                    if nodes.contains_key(to) && !seen.contains(to) {
                        queue.push_back(to);
                    }
                }
            }
        }
        for name in nodes.keys().filter(|n| !seen.contains(n.as_str())) {
            out.push(GraphIssue::Unreachable {
                at: At::key_of(&key(&key(&top, "nodes"), name)),
                node: name.clone(),
            });
        }
    }
    out
}

/// A value as a message shows it: JSON, strings quoted.
fn shown(v: &Json) -> String {
    match v {
        Json::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

fn node_issues(name: &str, node: &Json, path: &[Seg], names: &[&str], out: &mut Vec<GraphIssue>) {
    let shape = |at: At, problem: String| GraphIssue::Shape { at, problem };
    let Some(n) = node.as_object() else {
        out.push(shape(
            At::of(path),
            format!(
                "node `{name}` must be a mapping, not {}",
                crate::message::json_type(node)
            ),
        ));
        return;
    };
    let node_type = n.get("type");
    let kind = match node_type {
        None => None,
        Some(Json::String(t)) if NODE_TYPES.contains(&t.as_str()) => Some(t.as_str()),
        Some(Json::String(t)) => {
            if !n.contains_key("action") {
                out.push(GraphIssue::NoAction {
                    at: At::key_of(path),
                    node: name.to_owned(),
                    node_type: Some(t.clone()),
                });
            } else {
                out.push(shape(
                    At::of(&key(path, "type")),
                    format!(
                        "node `{name}` has `type: {t}`, which is no node type (`return`, `foreach`, or none for an action node)"
                    ),
                ));
            }
            return;
        }
        Some(other) => {
            out.push(shape(
                At::of(&key(path, "type")),
                format!(
                    "node `{name}`'s `type` must be `return` or `foreach`, not {}",
                    crate::message::json_type(other)
                ),
            ));
            return;
        }
    };
    if kind == Some("return") {
        return;
    }
    if !n.contains_key("action") {
        if kind == Some("foreach") {
            out.push(shape(
                At::key_of(path),
                format!("foreach node `{name}` has no `action` to run for each item"),
            ));
        } else {
            out.push(GraphIssue::NoAction {
                at: At::key_of(path),
                node: name.to_owned(),
                node_type: None,
            });
        }
    }
    if let Some(action) = n.get("action") {
        action_issues(name, action, &key(path, "action"), out);
    }
    if kind == Some("foreach") {
        match n.get("over") {
            None => out.push(shape(
                At::key_of(path),
                format!("foreach node `{name}` has no `over` (the list to iterate, e.g. `${{state.items}}`)"),
            )),
            Some(Json::String(_) | Json::Array(_)) => {}
            Some(other) => out.push(shape(
                At::of(&key(path, "over")),
                format!(
                    "foreach node `{name}`'s `over` must be an expression or a list, not {}",
                    crate::message::json_type(other)
                ),
            )),
        }
        for field in ["as", "collect"] {
            if let Some(v) = n.get(field)
                && !v
                    .as_str()
                    .is_some_and(|s| !s.is_empty() && !s.contains('.'))
            {
                out.push(shape(
                    At::of(&key(path, field)),
                    format!(
                        "foreach node `{name}`'s `{field}` must be a plain name, not {}",
                        shown(v)
                    ),
                ));
            }
        }
        if let Some(v) = n.get("parallel")
            && !v.is_boolean()
        {
            out.push(shape(
                At::of(&key(path, "parallel")),
                format!(
                    "foreach node `{name}`'s `parallel` must be true or false, not {}",
                    shown(v)
                ),
            ));
        }
    }
    if let Some(v) = n.get("assign")
        && !v.is_object()
    {
        out.push(shape(
            At::of(&key(path, "assign")),
            format!(
                "node `{name}`'s `assign` must be a mapping of state keys to values, not {}",
                crate::message::json_type(v)
            ),
        ));
    }
    match n.get("on_error") {
        None | Some(Json::String(_)) => {}
        Some(other) => out.push(shape(
            At::of(&key(path, "on_error")),
            format!(
                "node `{name}`'s `on_error` must name a node, not {}",
                crate::message::json_type(other)
            ),
        )),
    }
    match n.get("next") {
        None | Some(Json::String(_)) => {}
        Some(Json::Array(list)) => {
            for (i, e) in list.iter().enumerate() {
                let at = index(&key(path, "next"), i);
                let Some(edge) = e.as_object() else {
                    out.push(shape(
                        At::of(&at),
                        format!(
                            "node `{name}`'s edge {} must be a mapping `{{to, when}}`, not {}",
                            i + 1,
                            crate::message::json_type(e)
                        ),
                    ));
                    continue;
                };
                if !edge.get("to").is_some_and(Json::is_string) {
                    out.push(shape(
                        At::of(&at),
                        format!(
                            "node `{name}`'s edge {} has no `to` naming the next node",
                            i + 1
                        ),
                    ));
                }
                if let Some(when) = edge.get("when") {
                    condition_issues(name, when, &key(&at, "when"), out);
                }
            }
        }
        Some(other) => out.push(shape(
            At::of(&key(path, "next")),
            format!(
                "node `{name}`'s `next` must be a node's name or a list of `{{to, when}}`, not {}",
                crate::message::json_type(other)
            ),
        )),
    }
    for (target, at) in edges(node, path) {
        if !names.contains(&target) {
            out.push(GraphIssue::Target {
                at,
                node: name.to_owned(),
                target: target.to_owned(),
            });
        }
    }
}

fn action_issues(name: &str, action: &Json, path: &[Seg], out: &mut Vec<GraphIssue>) {
    let shape = |at: At, problem: String| GraphIssue::Shape { at, problem };
    let Some(a) = action.as_object() else {
        out.push(shape(
            At::of(path),
            format!(
                "node `{name}`'s `action` must be a mapping `{{primary, item_type, item_id, params}}`, not {}",
                crate::message::json_type(action)
            ),
        ));
        return;
    };
    if let Some(p) = a.get("primary")
        && p.as_str() != Some("execute")
    {
        out.push(shape(
            At::of(&key(path, "primary")),
            format!(
                "node `{name}`'s action has `primary: {}`; the state-graph runtime runs `execute` actions only",
                p.as_str().map_or_else(|| p.to_string(), str::to_owned)
            ),
        ));
    }
    if let Some(t) = a.get("item_type")
        && !t.as_str().is_some_and(|t| ACTION_ITEM_TYPES.contains(&t))
    {
        out.push(shape(
            At::of(&key(path, "item_type")),
            format!(
                "node `{name}`'s action has `item_type` {}; it must be tool, directive or knowledge",
                shown(t)
            ),
        ));
    }
    match a.get("item_id") {
        Some(Json::String(s)) if !s.trim().is_empty() => {}
        Some(other) => out.push(shape(
            At::of(&key(path, "item_id")),
            format!(
                "node `{name}`'s action's `item_id` must be an item id, not {}",
                shown(other)
            ),
        )),
        None => out.push(shape(
            At::of(path),
            format!("node `{name}`'s action has no `item_id`"),
        )),
    }
    if let Some(p) = a.get("params")
        && !p.is_object()
    {
        out.push(shape(
            At::of(&key(path, "params")),
            format!(
                "node `{name}`'s action's `params` must be a mapping, not {}",
                crate::message::json_type(p)
            ),
        ));
    }
}

/// Problems of a `when` condition: `{path, op, value}`, or `any`/`all` (a list) or `not`.
pub fn condition_problem(when: &Json) -> Option<String> {
    let Some(c) = when.as_object() else {
        return Some(format!(
            "a condition must be a mapping `{{path, op, value}}`, not {}",
            crate::message::json_type(when)
        ));
    };
    for combinator in ["any", "all"] {
        if let Some(list) = c.get(combinator) {
            let Some(list) = list.as_array() else {
                return Some(format!("`{combinator}` must be a list of conditions"));
            };
            return list.iter().find_map(condition_problem);
        }
    }
    if let Some(inner) = c.get("not") {
        return condition_problem(inner);
    }
    if !c.get("path").is_some_and(Json::is_string) {
        return Some("a condition needs a `path` (e.g. `state.count`)".to_owned());
    }
    let op = match c.get("op") {
        None => "eq",
        Some(Json::String(op)) => op.as_str(),
        Some(other) => {
            return Some(format!(
                "`op` must be a string, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    if !CONDITION_OPS.contains(&op) {
        return Some(format!(
            "`op: {op}` is no operator (use one of {})",
            CONDITION_OPS.join(", ")
        ));
    }
    if op == "regex" {
        match c.get("value") {
            Some(Json::String(re)) => {
                if let Err(e) = regex::Regex::new(re) {
                    // The parser's message ends with the reason, after a picture of the pattern.
                    let e = e.to_string();
                    let why = e.lines().last().unwrap_or_default().trim();
                    let why = why.strip_prefix("error: ").unwrap_or(why);
                    return Some(format!("`value` is no regular expression ({why})"));
                }
            }
            _ => return Some("`op: regex` needs a string `value`".to_owned()),
        }
    }
    None
}

fn condition_issues(name: &str, when: &Json, path: &[Seg], out: &mut Vec<GraphIssue>) {
    if let Some(problem) = condition_problem(when) {
        out.push(GraphIssue::Shape {
            at: At::of(path),
            problem: format!("node `{name}`'s condition: {problem}"),
        });
    }
}

/// The tools the graph's actions name by a literal id (`item_type: tool`, the default), in node
/// order: what lint resolves and what a lazy load must read for the graph's findings.
pub fn action_refs(config: Option<&Json>) -> Vec<ActionRef> {
    let mut out = Vec::new();
    let Some(nodes) = config.and_then(nodes) else {
        return out;
    };
    for (name, node) in nodes {
        let Some(action) = node.get("action") else {
            continue;
        };
        if action.get("item_type").is_some_and(|t| t != "tool") {
            continue;
        }
        if let Some(Json::String(id)) = action.get("item_id")
            && !id.contains("${")
            && !id.trim().is_empty()
        {
            out.push(ActionRef {
                at: At::of(&[
                    Seg::Key("nodes".to_owned()),
                    Seg::Key(name.clone()),
                    Seg::Key("action".to_owned()),
                    Seg::Key("item_id".to_owned()),
                ]),
                node: name.clone(),
                item_id: id.clone(),
            });
        }
    }
    out
}

/// The node names of a config, in the order written (for help texts).
pub fn node_names(config: Option<&Json>) -> Vec<String> {
    config
        .and_then(nodes)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn issues(config: Json) -> Vec<GraphIssue> {
        analyze(Some(&config))
    }

    #[test]
    fn a_sound_graph_has_no_issue() {
        let g = json!({"start": "a", "max_steps": 5, "nodes": {
            "a": {"action": {"primary": "execute", "item_type": "tool", "item_id": "x/y"},
                  "next": [{"to": "b", "when": {"path": "result.n", "op": "gt", "value": 1}}, {"to": "c"}]},
            "b": {"type": "foreach", "over": "${state.items}", "as": "it", "collect": "out",
                  "action": {"item_id": "x/z"}, "next": "c", "on_error": "c"},
            "c": {"type": "return"}
        }});
        assert_eq!(issues(g), Vec::new());
    }

    #[test]
    fn start_targets_and_reachability() {
        let g = json!({"start": "nope", "nodes": {"a": {"type": "return"}}});
        assert!(matches!(&issues(g)[..], [GraphIssue::Start { .. }]));
        let g = json!({"nodes": {"a": {"type": "return"}}});
        assert!(matches!(&issues(g)[..], [GraphIssue::Start { .. }]));
        let g = json!({"start": "a", "nodes": {
            "a": {"action": {"item_id": "t"}, "next": "ghost", "on_error": "b"},
            "b": {"type": "return"}, "c": {"type": "return"}}});
        let got = issues(g);
        assert!(
            got.iter()
                .any(|i| matches!(i, GraphIssue::Target { target, .. } if target == "ghost"))
        );
        assert!(
            got.iter()
                .any(|i| matches!(i, GraphIssue::Unreachable { node, .. } if node == "c"))
        );
        assert!(
            !got.iter()
                .any(|i| matches!(i, GraphIssue::Unreachable { node, .. } if node == "b"))
        );
    }

    #[test]
    fn nodes_without_action_and_bad_shapes() {
        let g = json!({"start": "a", "nodes": {
            "a": {"next": "b"}, "b": {"type": "retrun"},
            "c": {"type": "foreach", "action": {"item_id": "t"}}}});
        let got = issues(g);
        assert!(got.iter().any(
            |i| matches!(i, GraphIssue::NoAction { node, node_type: None, .. } if node == "a")
        ));
        assert!(got.iter().any(
            |i| matches!(i, GraphIssue::NoAction { node_type: Some(t), .. } if t == "retrun")
        ));
        assert!(got.iter().any(
            |i| matches!(i, GraphIssue::Shape { problem, .. } if problem.contains("no `over`"))
        ));
        let g = json!({"start": "a", "max_steps": 0, "on_error": "retry", "nodes": {
            "a": {"action": {"item_id": "t"}, "next": [{"when": {"path": "x", "op": "like"}}]}}});
        let got = issues(g);
        for needle in ["max_steps", "`on_error`", "no `to`", "`op: like`"] {
            assert!(
                got.iter().any(
                    |i| matches!(i, GraphIssue::Shape { problem, .. } if problem.contains(needle))
                ),
                "{needle}: {got:?}"
            );
        }
    }

    #[test]
    fn literal_tool_actions_only() {
        let g = json!({"nodes": {
            "a": {"action": {"item_id": "demo/x"}},
            "b": {"action": {"item_id": "${state.tool}"}},
            "c": {"action": {"item_type": "directive", "item_id": "d"}}}});
        let refs = action_refs(Some(&g));
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].item_id, "demo/x");
    }
}
