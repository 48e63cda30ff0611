//! L5 the state graph's walk as a step machine: which node runs next, what its action is
//! (interpolated, capability-checked), what its result does to the state (`assign`, `collect`,
//! `_last_error`), which edge is taken (first matching `when` wins), and when the walk ends
//! (`return`, no `next`, an error under `on_error: fail`, `max_steps`). The edge drives it:
//! `next` says what to run, `complete` takes the results, and after every step the edge persists
//! `run()`. Nothing here runs, reads or writes; time comes in as a `Clock`.

use serde_json::{Map, Value as Json, json};

use super::caps;
use super::cond::matches;
use super::interp::{interpolate, strip_nulls};

/// The cap on steps of a graph that sets no `max_steps` (the upstream's default): a cycle without
/// an exit ends with a clear error, never a walk that runs until its timeout.
pub const DEFAULT_MAX_STEPS: u64 = 100;

/// Envelope keys of a `rye_execute` answer that are not the tool's result (the upstream's
/// `_DROP_KEYS`).
const DROP_KEYS: [&str; 5] = ["chain", "metadata", "path", "source", "resolved_env_keys"];

/// Caller parameters that are the runtime's, not the graph's inputs.
pub const RUNTIME_PARAMS: [&str; 2] = ["capabilities", "resume_run_id"];

/// The time of a step, from the edge: `_now` (ISO 8601 UTC, `2026-03-02T12:00:00Z`) and
/// `_timestamp` (Unix milliseconds).
#[derive(Clone, Debug)]
pub struct Clock {
    pub now: String,
    pub millis: i64,
}

/// A graph ready to walk, read from its tool file's document.
#[derive(Clone, Debug)]
pub struct Graph {
    /// The graph tool's item id.
    pub id: String,
    nodes: Map<String, Json>,
    start: String,
    max_steps: u64,
    max_steps_set: bool,
    continue_on_error: bool,
    permissions: Vec<String>,
    config_schema: Option<Json>,
}

impl Graph {
    /// The graph of a tool document (the whole YAML file as JSON). `Err`: why it cannot be
    /// walked — the error findings lint reports for it (`rules::graph`), joined.
    pub fn from_document(id: &str, doc: &Json) -> Result<Graph, String> {
        let config = doc.get("config");
        let problems: Vec<String> = crate::rules::graph::analyze(config)
            .into_iter()
            .filter_map(|issue| {
                use crate::rules::graph::GraphIssue as I;
                match issue {
                    I::Shape { problem, .. } | I::Start { problem, .. } => Some(problem),
                    I::Target { node, target, .. } => Some(format!(
                        "node `{node}` goes to `{target}`, which is no node of the graph"
                    )),
                    I::NoAction { node, .. } => Some(format!(
                        "node `{node}` has no `action` and is no `return` node"
                    )),
                    I::Unreachable { .. } => None,
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(format!(
                "Graph validation failed for `{id}`: {}",
                problems.join("; ")
            ));
        }
        // `analyze` vouched for these shapes.
        let config = config
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let nodes = config
            .get("nodes")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let start = config
            .get("start")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        let max = config.get("max_steps").and_then(Json::as_u64);
        let permissions = match doc.get("permissions") {
            None | Some(Json::Null) => Vec::new(),
            Some(v) => strings(v).ok_or_else(|| {
                format!("Graph validation failed for `{id}`: `permissions` must be a list of capability strings")
            })?,
        };
        Ok(Graph {
            id: id.to_owned(),
            nodes,
            start,
            max_steps: max.unwrap_or(DEFAULT_MAX_STEPS),
            max_steps_set: max.is_some(),
            continue_on_error: config.get("on_error").and_then(Json::as_str) == Some("continue"),
            permissions,
            config_schema: doc.get("config_schema").cloned(),
        })
    }
}

fn strings(v: &Json) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Completed,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Error => "error",
        }
    }
    pub fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "running" => Status::Running,
            "completed" => Status::Completed,
            "error" => Status::Error,
            _ => return None,
        })
    }
}

/// What a run persists after every step: enough to resume it.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub graph_id: String,
    pub run_id: String,
    pub status: Status,
    /// The node the walk runs next (the node that failed, for a run that stopped on an error).
    pub current: Option<String>,
    /// Steps taken, over every call of the run.
    pub steps: u64,
    pub state: Map<String, Json>,
    pub started_at: String,
}

/// An action to run: `execute` of an item with parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub item_type: String,
    pub item_id: String,
    pub params: Map<String, Json>,
}

/// What the edge does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Run these (each independently; at the same time when `parallel`), then `complete` with
    /// their answers in order.
    Run { calls: Vec<Call>, parallel: bool },
    /// A step ended without running anything (a denied action, a `return`…): persist, then
    /// `next` again.
    Stepped,
    /// The walk ended: persist, and answer this.
    Done(Json),
}

/// A step waiting for its results.
#[derive(Clone, Debug)]
enum Pending {
    Action {
        node: String,
    },
    Foreach {
        node: String,
        /// One per item: an answer already known (a denied action), or the index of its call.
        slots: Vec<Result<usize, Json>>,
    },
}

/// A walk of one run.
#[derive(Clone, Debug)]
pub struct Walk {
    graph: Graph,
    run: Run,
    capabilities: Vec<String>,
    /// Steps taken before this call (a resumed run's budget of `max_steps` starts afresh).
    steps_before: u64,
    pending: Option<Pending>,
    done: Option<Json>,
    warnings: Vec<String>,
}

/// A mapping parameter as a list of strings, or why not.
fn capabilities(params: &Map<String, Json>, graph: &Graph) -> Result<Vec<String>, String> {
    match params.get("capabilities") {
        None => Ok(graph.permissions.clone()),
        Some(v) => strings(v).ok_or_else(|| {
            "`capabilities` must be a list of capability strings (e.g. [\"rye.execute.tool.*\"])"
                .to_owned()
        }),
    }
}

impl Walk {
    /// A fresh run: the inputs are the caller's parameters (without the runtime's own) with the
    /// `config_schema`'s defaults, checked against its `required`; the state starts as
    /// `{inputs}`. `Err`: the refusal's text.
    pub fn start(
        graph: Graph,
        params: &Map<String, Json>,
        run_id: &str,
        clock: &Clock,
    ) -> Result<Walk, String> {
        let capabilities = capabilities(params, &graph)?;
        let mut inputs: Map<String, Json> = params
            .iter()
            .filter(|(k, _)| !RUNTIME_PARAMS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(schema) = &graph.config_schema {
            if let Some(props) = schema.get("properties").and_then(Json::as_object) {
                for (k, prop) in props {
                    if let Some(d) = prop.get("default")
                        && !inputs.contains_key(k)
                    {
                        inputs.insert(k.clone(), d.clone());
                    }
                }
            }
            let missing: Vec<&str> = schema
                .get("required")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .filter(|k| !inputs.contains_key(*k))
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "Input validation failed: missing required input{} {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing
                        .iter()
                        .map(|m| format!("'{m}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        let mut state = Map::new();
        state.insert("inputs".to_owned(), Json::Object(inputs));
        let run = Run {
            graph_id: graph.id.clone(),
            run_id: run_id.to_owned(),
            status: Status::Running,
            current: Some(graph.start.clone()),
            steps: 0,
            state,
            started_at: clock.now.clone(),
        };
        Ok(Walk {
            graph,
            run,
            capabilities,
            steps_before: 0,
            pending: None,
            done: None,
            warnings: Vec::new(),
        })
    }

    /// A persisted run continued from its current node. `Err`: why it cannot be.
    pub fn resume(graph: Graph, params: &Map<String, Json>, run: Run) -> Result<Walk, String> {
        if run.graph_id != graph.id {
            return Err(format!(
                "Cannot resume: run `{}` is a run of `{}`, not of `{}`",
                run.run_id, run.graph_id, graph.id
            ));
        }
        if run.status == Status::Completed {
            return Err(format!(
                "Cannot resume: run `{}` completed already (after {} steps); start a new run",
                run.run_id, run.steps
            ));
        }
        let Some(current) = &run.current else {
            return Err(format!(
                "Cannot resume: run `{}` has no current node",
                run.run_id
            ));
        };
        if !graph.nodes.contains_key(current) {
            return Err(format!(
                "Cannot resume: run `{}` stopped at node `{current}`, which the graph no longer has",
                run.run_id
            ));
        }
        let capabilities = capabilities(params, &graph)?;
        let mut run = run;
        run.status = Status::Running;
        let steps_before = run.steps;
        Ok(Walk {
            graph,
            run,
            capabilities,
            steps_before,
            pending: None,
            done: None,
            warnings: Vec::new(),
        })
    }

    /// The run as it stands (what the edge persists after every step).
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// Add a warning to the answer (the edge's own: a state that could not be signed…).
    pub fn warn(&mut self, warning: String) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    fn warn_all(&mut self, warnings: Vec<String>) {
        for w in warnings {
            self.warn(w);
        }
    }

    fn inputs(&self) -> Json {
        self.run.state.get("inputs").cloned().unwrap_or(json!({}))
    }

    /// The interpolation context of a step.
    fn context(&self, clock: &Clock) -> Map<String, Json> {
        let mut ctx = Map::new();
        ctx.insert("state".to_owned(), Json::Object(self.run.state.clone()));
        ctx.insert("inputs".to_owned(), self.inputs());
        ctx.insert("_now".to_owned(), Json::String(clock.now.clone()));
        ctx.insert("_timestamp".to_owned(), Json::from(clock.millis));
        ctx
    }

    /// What comes next. After `Run`, call `complete`; after `Stepped`, persist and call again.
    pub fn next(&mut self, clock: &Clock) -> Next {
        if let Some(done) = &self.done {
            return Next::Done(done.clone());
        }
        if self.pending.is_some() {
            // `complete` was not called: a bug of the edge, answered as an error.
            return self.finish_error(
                "the walk was asked for its next step before the last one completed".to_owned(),
                None,
            );
        }
        let Some(current) = self.run.current.clone() else {
            return self.finish_completed(None);
        };
        if self.run.steps - self.steps_before >= self.graph.max_steps {
            let why = if self.graph.max_steps_set {
                format!(
                    "Max steps exceeded ({}): the walk took {} steps without ending; the next node was `{current}`",
                    self.graph.max_steps, self.graph.max_steps
                )
            } else {
                format!(
                    "Max steps exceeded ({}, the default cap of a graph without `max_steps`): the walk took {} steps without ending (a cycle with no way out?); the next node was `{current}`; set `config.max_steps` if the graph needs more",
                    self.graph.max_steps, self.graph.max_steps
                )
            };
            return self.finish_error(why, None);
        }
        let Some(node) = self.graph.nodes.get(&current).cloned() else {
            return self.finish_error(format!("Node '{current}' not found in graph"), None);
        };
        self.run.steps += 1;
        match node.get("type").and_then(Json::as_str) {
            Some("return") => {
                let output = node.get("output").map(|t| {
                    let mut w = Vec::new();
                    let v = interpolate(t, &Json::Object(self.context(clock)), &mut w);
                    self.warn_all(w);
                    v
                });
                self.finish_completed(output)
            }
            Some("foreach") => self.start_foreach(&current, &node, clock),
            _ => self.start_action(&current, &node, clock),
        }
    }

    /// An action interpolated in `ctx`: the call, or the answer it gets without running (a
    /// denied capability).
    fn prepare(&mut self, action: &Json, ctx: &Json) -> Result<Call, Json> {
        let mut w = Vec::new();
        let item_id = action
            .get("item_id")
            .map(|v| interpolate(v, ctx, &mut w))
            .unwrap_or(Json::Null);
        let params = action
            .get("params")
            .map(|v| strip_nulls(interpolate(v, ctx, &mut w)))
            .unwrap_or(json!({}));
        self.warn_all(w);
        let primary = action
            .get("primary")
            .and_then(Json::as_str)
            .unwrap_or("execute");
        let item_type = action
            .get("item_type")
            .and_then(Json::as_str)
            .unwrap_or("tool")
            .to_owned();
        let Some(item_id) = item_id.as_str().map(str::to_owned) else {
            return Err(error_result(format!(
                "the action's item_id resolved to {}, not an item id",
                crate::pyrepr::py_repr(&item_id)
            )));
        };
        let Json::Object(params) = params else {
            return Err(error_result(
                "the action's params resolved to something other than a mapping".to_owned(),
            ));
        };
        if let Some(why) = caps::denied(&self.capabilities, primary, &item_type, &item_id) {
            return Err(error_result(why));
        }
        Ok(Call {
            item_type,
            item_id,
            params,
        })
    }

    fn start_action(&mut self, name: &str, node: &Json, clock: &Clock) -> Next {
        let ctx = Json::Object(self.context(clock));
        let Some(action) = node.get("action") else {
            // `from_document` refuses such a graph; never reached.
            return self.finish_error(format!("Node '{name}' has no 'action'"), Some(name));
        };
        match self.prepare(action, &ctx) {
            Ok(call) => {
                self.pending = Some(Pending::Action {
                    node: name.to_owned(),
                });
                Next::Run {
                    calls: vec![call],
                    parallel: false,
                }
            }
            Err(answer) => self.after_action(name, node, answer, clock),
        }
    }

    fn start_foreach(&mut self, name: &str, node: &Json, clock: &Clock) -> Next {
        let ctx = Json::Object(self.context(clock));
        let mut w = Vec::new();
        let over = node.get("over").cloned().unwrap_or(Json::Null);
        let items = interpolate(&over, &ctx, &mut w);
        self.warn_all(w);
        let Json::Array(items) = items else {
            let why = format!(
                "foreach node `{name}`: `over` ({}) is {}, not a list",
                crate::exec::template::py_str(&over),
                match &items {
                    Json::Null => "not set".to_owned(),
                    other => format!("{} ({})", kind_of(other), short(other)),
                }
            );
            return self.after_action(name, node, error_result(why), clock);
        };
        let as_var = node
            .get("as")
            .and_then(Json::as_str)
            .unwrap_or("item")
            .to_owned();
        let action = node.get("action").cloned().unwrap_or(Json::Null);
        let mut calls = Vec::new();
        let mut slots = Vec::new();
        for item in items {
            // The item is a name of its own and, while the iteration runs, a key of the state.
            let mut ictx = self.context(clock);
            if let Some(Json::Object(state)) = ictx.get_mut("state") {
                state.insert(as_var.clone(), item.clone());
            }
            ictx.insert(as_var.clone(), item);
            match self.prepare(&action, &Json::Object(ictx)) {
                Ok(call) => {
                    slots.push(Ok(calls.len()));
                    calls.push(call);
                }
                Err(answer) => slots.push(Err(answer)),
            }
        }
        let parallel = node.get("parallel").and_then(Json::as_bool) == Some(true);
        if calls.is_empty() {
            let collected = slots.into_iter().filter_map(Result::err).collect();
            return self.finish_foreach(name, node, collected, clock);
        }
        self.pending = Some(Pending::Foreach {
            node: name.to_owned(),
            slots,
        });
        Next::Run { calls, parallel }
    }

    /// Take the answers of the calls `next` asked for (`rye_execute` answers, in order).
    pub fn complete(&mut self, answers: Vec<Json>, clock: &Clock) -> Next {
        let Some(pending) = self.pending.take() else {
            return self.finish_error("results came for a step that ran nothing".to_owned(), None);
        };
        let mut results: Vec<Option<Json>> =
            answers.iter().map(|a| Some(unwrap_result(a))).collect();
        match pending {
            Pending::Action { node } => {
                let body = self.graph.nodes.get(&node).cloned().unwrap_or(Json::Null);
                let result = results
                    .first_mut()
                    .and_then(Option::take)
                    .unwrap_or_else(|| error_result("the action gave no answer".to_owned()));
                self.after_action(&node, &body, result, clock)
            }
            Pending::Foreach { node, slots } => {
                let body = self.graph.nodes.get(&node).cloned().unwrap_or(Json::Null);
                let collected = slots
                    .into_iter()
                    .map(|slot| match slot {
                        Ok(i) => results
                            .get_mut(i)
                            .and_then(Option::take)
                            .unwrap_or_else(|| {
                                error_result("the iteration gave no answer".to_owned())
                            }),
                        Err(answer) => answer,
                    })
                    .collect();
                self.finish_foreach(&node, &body, collected, clock)
            }
        }
    }

    /// What an action's result does: an error sets `_last_error` and takes the node's
    /// `on_error`, else ends the walk (`on_error: fail`, the default) or skips `assign`
    /// (`continue`); a success is assigned into the state; then the edges are evaluated.
    fn after_action(&mut self, name: &str, node: &Json, result: Json, clock: &Clock) -> Next {
        if is_error(&result) {
            let error = error_text(&result);
            self.run.state.insert(
                "_last_error".to_owned(),
                json!({"node": name, "error": error}),
            );
            if let Some(to) = node.get("on_error").and_then(Json::as_str) {
                self.run.current = Some(to.to_owned());
                return Next::Stepped;
            }
            if !self.graph.continue_on_error {
                return self.finish_error(error, Some(name));
            }
        } else if let Some(assign) = node.get("assign").and_then(Json::as_object) {
            let mut ctx = self.context(clock);
            ctx.insert("result".to_owned(), result.clone());
            let ctx = Json::Object(ctx);
            let mut w = Vec::new();
            for (key, template) in assign {
                let value = interpolate(template, &ctx, &mut w);
                self.run.state.insert(key.clone(), value);
            }
            self.warn_all(w);
        }
        self.run.current = self.edge(node, &result);
        Next::Stepped
    }

    fn finish_foreach(
        &mut self,
        name: &str,
        node: &Json,
        collected: Vec<Json>,
        _clock: &Clock,
    ) -> Next {
        let failed = collected.iter().filter(|r| is_error(r)).count();
        if failed > 0 {
            self.warn(format!(
                "foreach node `{name}`: {failed} of {} iterations failed (their results, `status: error`, are among the collected ones)",
                collected.len()
            ));
        }
        if let Some(key) = node.get("collect").and_then(Json::as_str) {
            self.run
                .state
                .insert(key.to_owned(), Json::Array(collected));
        }
        let as_var = node.get("as").and_then(Json::as_str).unwrap_or("item");
        self.run.state.remove(as_var);
        self.run.current = self.edge(node, &json!({}));
        Next::Stepped
    }

    /// The node's next node: a name, or the first conditional edge whose `when` matches (an edge
    /// without `when` always does); `None` when there is none (the walk ends there).
    fn edge(&mut self, node: &Json, result: &Json) -> Option<String> {
        match node.get("next")? {
            Json::String(s) => Some(s.clone()),
            Json::Array(edges) => {
                let doc = json!({
                    "state": Json::Object(self.run.state.clone()),
                    "result": result,
                    "inputs": self.inputs(),
                });
                let mut w = Vec::new();
                let to = edges.iter().find_map(|e| {
                    let hit = e.get("when").is_none_or(|c| matches(&doc, c, &mut w));
                    hit.then(|| e.get("to").and_then(Json::as_str).map(str::to_owned))
                        .flatten()
                });
                self.warn_all(w);
                to
            }
            _ => None,
        }
    }

    fn finish_completed(&mut self, output: Option<Json>) -> Next {
        self.run.status = Status::Completed;
        let mut answer = self.answer(true);
        if let Some(output) = output {
            answer.insert("output".to_owned(), output);
        }
        self.done = Some(Json::Object(answer));
        Next::Done(self.done.clone().unwrap_or(Json::Null))
    }

    fn finish_error(&mut self, error: String, node: Option<&str>) -> Next {
        self.run.status = Status::Error;
        let mut answer = self.answer(false);
        answer.insert("error".to_owned(), Json::String(error));
        if let Some(node) = node {
            answer.insert("node".to_owned(), Json::String(node.to_owned()));
        }
        self.done = Some(Json::Object(answer));
        Next::Done(self.done.clone().unwrap_or(Json::Null))
    }

    fn answer(&self, success: bool) -> Map<String, Json> {
        let mut out = Map::new();
        out.insert("success".to_owned(), Json::Bool(success));
        out.insert("status".to_owned(), json!(self.run.status.as_str()));
        out.insert("graph_id".to_owned(), json!(self.run.graph_id));
        out.insert("graph_run_id".to_owned(), json!(self.run.run_id));
        out.insert("steps".to_owned(), json!(self.run.steps));
        out.insert("state".to_owned(), Json::Object(self.run.state.clone()));
        out
    }

    /// The answer with the warnings so far (the edge calls it for the final answer).
    pub fn answer_with_warnings(&self, done: Json) -> Json {
        let mut done = done;
        if !self.warnings.is_empty()
            && let Some(obj) = done.as_object_mut()
        {
            obj.insert("warnings".to_owned(), json!(self.warnings));
        }
        done
    }
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    }
}

/// A value shown briefly in a message.
fn short(v: &Json) -> String {
    let text = crate::pyrepr::py_repr(v);
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// An error result as an action's unwrapped answer.
pub fn error_result(error: String) -> Json {
    json!({"status": "error", "error": error})
}

/// Whether an unwrapped result is an error.
pub fn is_error(result: &Json) -> bool {
    result.get("status").and_then(Json::as_str) == Some("error")
}

fn error_text(result: &Json) -> String {
    match result.get("error") {
        Some(Json::String(s)) if !s.is_empty() => s.clone(),
        Some(Json::Null) | None => "unknown".to_owned(),
        Some(other) => crate::exec::template::py_str(other),
    }
}

/// A `rye_execute` answer unwrapped (the upstream's `_unwrap_result`): the tool's `data` lifted
/// to the top (envelope keys dropped), and `status: error` set when the answer was an error or
/// the data says `success: false` (with the answer's `error` when the data has none).
pub fn unwrap_result(raw: &Json) -> Json {
    let Json::Object(raw) = raw else {
        return if raw.is_null() {
            json!({})
        } else {
            json!({"result": raw})
        };
    };
    let outer_error = raw.get("status").and_then(Json::as_str) == Some("error");
    let keep = |m: &Map<String, Json>| -> Map<String, Json> {
        m.iter()
            .filter(|(k, _)| !DROP_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if let Some(Json::Object(inner)) = raw.get("data") {
        let mut out = keep(inner);
        if outer_error || out.get("success") == Some(&Json::Bool(false)) {
            out.insert("status".to_owned(), json!("error"));
            if outer_error
                && let Some(e) = raw.get("error")
                && !out.contains_key("error")
            {
                out.insert("error".to_owned(), e.clone());
            }
        }
        return Json::Object(out);
    }
    let mut out = keep(raw);
    if outer_error || out.get("success") == Some(&Json::Bool(false)) {
        out.insert("status".to_owned(), json!("error"));
    }
    Json::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> Clock {
        Clock {
            now: "2026-01-01T00:00:00Z".to_owned(),
            millis: 1_767_225_600_000,
        }
    }

    fn graph(config: Json) -> Graph {
        let doc = json!({"tool_type": "graph", "permissions": ["rye.execute.tool.t.*"], "config": config});
        Graph::from_document("t/g", &doc).unwrap()
    }

    fn ok(data: Json) -> Json {
        json!({"status": "success", "type": "tool", "item_id": "t/x", "data": data, "chain": ["t/x"]})
    }

    /// Walk to the end, answering each call with `answer(call)`; the calls made, and the answer.
    fn drive(mut w: Walk, answer: &dyn Fn(&Call) -> Json) -> (Vec<Call>, Json) {
        let mut made = Vec::new();
        for _ in 0..1000 {
            match w.next(&clock()) {
                Next::Run { calls, .. } => {
                    let answers = calls.iter().map(answer).collect();
                    made.extend(calls);
                    if let Next::Done(d) = w.complete(answers, &clock()) {
                        return (made, d);
                    }
                }
                Next::Stepped => {}
                Next::Done(d) => return (made, d),
            }
        }
        panic!("the walk did not end");
    }

    fn start(config: Json, params: Json) -> Walk {
        Walk::start(graph(config), params.as_object().unwrap(), "r1", &clock()).unwrap()
    }

    #[test]
    fn edges_assign_and_return() {
        let config = json!({"start": "a", "nodes": {
            "a": {"action": {"item_id": "t/x", "params": {"n": "${inputs.n}", "gone": "${state.nope}"}},
                  "assign": {"n": "${result.n}", "at": "${_now}"},
                  "next": [{"to": "big", "when": {"path": "result.n", "op": "gt", "value": 5}}, {"to": "small"}]},
            "big": {"type": "return", "output": {"n": "${state.n}"}},
            "small": {"type": "return"}}});
        let (calls, done) = drive(start(config.clone(), json!({"n": 7})), &|c| {
            ok(json!({"n": c.params["n"]}))
        });
        assert_eq!(
            calls[0].params,
            json!({"n": 7}).as_object().cloned().unwrap(),
            "a null parameter is dropped"
        );
        assert_eq!(done["output"], json!({"n": 7}));
        assert_eq!(done["state"]["at"], "2026-01-01T00:00:00Z");
        assert_eq!(done["steps"], 2);
        let (_, done) = drive(start(config, json!({"n": 1})), &|c| {
            ok(json!({"n": c.params["n"]}))
        });
        assert_eq!(done["status"], "completed");
        assert!(done.get("output").is_none());
    }

    #[test]
    fn errors_set_last_error_and_take_on_error() {
        let config = json!({"start": "a", "nodes": {
            "a": {"action": {"item_id": "t/x"}, "assign": {"never": 1}, "on_error": "b", "next": "c"},
            "b": {"action": {"item_id": "t/y"}},
            "c": {"type": "return"}}});
        let fail = |c: &Call| {
            if c.item_id == "t/x" {
                json!({"status": "error", "error": "Process exited with code 1", "data": {"stdout": ""}})
            } else {
                ok(json!({}))
            }
        };
        let (calls, done) = drive(start(config, json!({})), &fail);
        assert_eq!(calls.len(), 2);
        assert_eq!(done["success"], true, "b has no next: the walk ends there");
        assert_eq!(
            done["state"]["_last_error"],
            json!({"node": "a", "error": "Process exited with code 1"})
        );
        assert!(done["state"].get("never").is_none());
        // `success: false` in the data is an error too, under the default `fail` policy.
        let config = json!({"start": "a", "nodes": {"a": {"action": {"item_id": "t/x"}, "next": "c"}, "c": {"type": "return"}}});
        let (_, done) = drive(start(config, json!({})), &|_| {
            ok(json!({"success": false, "error": "nope"}))
        });
        assert_eq!(
            (
                done["success"].clone(),
                done["error"].clone(),
                done["node"].clone()
            ),
            (json!(false), json!("nope"), json!("a"))
        );
    }

    #[test]
    fn foreach_slots_denied_items_and_keeps_order() {
        let config = json!({"start": "f", "nodes": {
            "f": {"type": "foreach", "over": "${inputs.ids}", "as": "id", "parallel": true, "collect": "out",
                  "action": {"item_id": "${id}"}, "next": "done"},
            "done": {"type": "return"}}});
        let mut w = start(config, json!({"ids": ["t/a", "other/b", "t/c"]}));
        let Next::Run { calls, parallel } = w.next(&clock()) else {
            panic!()
        };
        assert!(parallel);
        assert_eq!(
            calls.iter().map(|c| c.item_id.as_str()).collect::<Vec<_>>(),
            ["t/a", "t/c"]
        );
        let answers = calls.iter().map(|c| ok(json!({"id": c.item_id}))).collect();
        assert_eq!(w.complete(answers, &clock()), Next::Stepped);
        let Next::Done(done) = w.next(&clock()) else {
            panic!()
        };
        let out = done["state"]["out"].as_array().unwrap();
        assert_eq!(out[0], json!({"id": "t/a"}));
        assert_eq!(out[1]["status"], "error");
        assert!(
            out[1]["error"]
                .as_str()
                .unwrap()
                .contains("rye.execute.tool.other.b")
        );
        assert_eq!(out[2], json!({"id": "t/c"}));
        assert!(done["state"].get("id").is_none());
        assert!(done["warnings"].is_null(), "warnings are the edge's to add");
    }

    #[test]
    fn max_steps_default_and_resume_budget() {
        let config =
            json!({"start": "a", "nodes": {"a": {"action": {"item_id": "t/x"}, "next": "a"}}});
        let (calls, done) = drive(start(config.clone(), json!({})), &|_| ok(json!({})));
        assert_eq!(calls.len(), DEFAULT_MAX_STEPS as usize);
        assert!(done["error"].as_str().unwrap().contains("the default cap"));
        // A failed run resumes at its node with a fresh budget; a completed one does not.
        let mut run = Walk::start(graph(config.clone()), &Map::new(), "r1", &clock())
            .unwrap()
            .run()
            .clone();
        run.steps = 100;
        run.status = Status::Error;
        let w = Walk::resume(graph(config.clone()), &Map::new(), run.clone()).unwrap();
        let (calls, _) = drive(w, &|_| ok(json!({})));
        assert_eq!(calls.len(), DEFAULT_MAX_STEPS as usize);
        run.status = Status::Completed;
        assert!(
            Walk::resume(graph(config), &Map::new(), run)
                .unwrap_err()
                .contains("completed already")
        );
    }

    #[test]
    fn unwrapping_as_the_upstream() {
        assert_eq!(
            unwrap_result(&ok(json!({"stdout": "42"}))),
            json!({"stdout": "42"})
        );
        assert_eq!(
            unwrap_result(&json!({"status": "error", "error": "E", "data": {"stdout": ""}})),
            json!({"stdout": "", "status": "error", "error": "E"})
        );
        assert_eq!(unwrap_result(&json!([1])), json!({"result": [1]}));
        assert_eq!(
            unwrap_result(&json!({"status": "error", "error": "refused", "chain": []})),
            json!({"status": "error", "error": "refused"})
        );
    }
}
