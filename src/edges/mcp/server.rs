//! L6 the MCP server's handler (`rmcp::ServerHandler`, written by hand so names and schemas are
//! data): `initialize`'s answer, `tools/list`, and `tools/call` of the execute tool, which checks
//! the arguments and runs the tool through the shared execution session
//! (`runner::execute::Session`) on tokio's blocking pool, its processes in a worker of the call's
//! own (`runner::worker`), so calls run side by side and a cancelled call's processes end,
//! answering seed 003's JSON as text (and as `structuredContent` where the protocol has it); of
//! the search tool, answered from the project's warm state (`warm`), kept between calls; of the
//! load tool, through the same session; and of the sign tool, through `ryechain sign`'s flow
//! (`SignItems`). A call that runs past a second reports progress each second when its client
//! asked for it.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use rustc_hash::FxHashSet;
use serde_json::{Value as Json, json};

use super::args::{self, ExecuteArgs};
use super::items::{self, LoadArgs};
use super::search::SearchArgs;
use super::tools::{ToolNames, execute_tool, load_tool, search_tool, sign_tool};
use super::warm::WarmProjects;
use crate::db::Settings;
use crate::exec::DEFAULT_OUTPUT_CAP;
use crate::exec::document::DocAnswer;
use crate::exec::response::Response;
use crate::load::SpaceSpec;
use crate::runner::execute::{ExecCall, Executed, Session};
use crate::runner::worker::{self, Control, Launcher, Worker};
use crate::system::System;

/// The spaces of a project directory, in search order, with the notices about them: the CLI's
/// `Context::spaces` under the command line's `--user-space`/`--system-space` (and their
/// environment variables), handed in by the command so this edge imports no other.
pub type Spaces = Arc<dyn Fn(&Path) -> anyhow::Result<(Vec<SpaceSpec>, Vec<String>)> + Send + Sync>;

/// One sign call, checked: what to sign, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignCall {
    /// The project directory (it holds `.ai/`).
    pub project: PathBuf,
    pub args: items::SignArgs,
}

/// `ryechain sign`'s flow (validate, then sign with the person's key, stale lockfiles removed),
/// answering `rye_sign`'s JSON (§12.9); handed in by the command, as `Spaces` is, so this edge
/// imports no other and the two cannot drift.
pub type SignItems = Arc<dyn Fn(&SignCall) -> anyhow::Result<Json> + Send + Sync>;

/// How often a call that has a progress token reports (the first report after this long).
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The first protocol revision with `structuredContent` in a tool's result.
const STRUCTURED_SINCE: ProtocolVersion = ProtocolVersion::V_2025_06_18;

/// Setup notices already written to stderr: each distinct text once per server.
#[derive(Clone, Default)]
struct Notices(Arc<Mutex<FxHashSet<String>>>);

impl Notices {
    fn show(&self, notices: &[String]) {
        let mut shown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut err = std::io::stderr().lock();
        for n in notices {
            if shown.insert(n.clone()) {
                // Nowhere left to report a failing stderr; stdout is the protocol's.
                let _ = writeln!(err, "warning: {n}");
            }
        }
    }
}

/// The server: what every call shares.
pub struct Server {
    names: ToolNames,
    tool: Tool,
    search_tool: Tool,
    load_tool: Tool,
    sign_tool: Tool,
    sys: &'static dyn System,
    spaces: Spaces,
    sign: SignItems,
    /// The project of a call that names none (`ryechain mcp PATH`).
    default_project: Option<PathBuf>,
    /// The process environment tools' environments are resolved from (§9).
    env: Arc<BTreeMap<String, String>>,
    /// Starts the calls' workers (`runner::worker`: this binary, one kept started ahead).
    launcher: Arc<Launcher>,
    /// The projects searched, loaded and watched, kept between calls (searches run one at a
    /// time on them, beside any execute call: a search spawns nothing).
    warm: Arc<Mutex<WarmProjects>>,
    notices: Notices,
}

impl Server {
    pub fn new(
        names: ToolNames,
        sys: &'static dyn System,
        spaces: Spaces,
        sign: SignItems,
        default_project: Option<PathBuf>,
        env: BTreeMap<String, String>,
    ) -> Server {
        Server {
            names,
            tool: execute_tool(names),
            search_tool: search_tool(names),
            load_tool: load_tool(names),
            sign_tool: sign_tool(names),
            sys,
            spaces,
            sign,
            default_project,
            env: Arc::new(env),
            launcher: Launcher::new(worker::program()),
            warm: Arc::default(),
            notices: Notices::default(),
        }
    }

    /// What starts the calls' workers: `Launcher::close` it when the server stops.
    pub fn launcher(&self) -> Arc<Launcher> {
        Arc::clone(&self.launcher)
    }

    /// The project directory of a call (`args::project_dir`, the server's default standing in).
    fn project(&self, given: Option<&str>) -> Result<PathBuf, String> {
        args::project_dir(self.sys, given, self.default_project.as_deref())
    }

    /// Write setup notices to stderr (each once per server).
    pub fn show_notices(&self, notices: &[String]) {
        self.notices.show(notices);
    }

    /// One execute call, answered in seed 003's JSON. Once `cancelled` completes (the request's
    /// token: the client's `notifications/cancelled`, or the session ending), the call's
    /// processes are killed and it answers as soon as they are gone (rmcp drops that answer).
    pub async fn execute(
        &self,
        arguments: Option<&JsonObject>,
        started: Instant,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Json {
        let args = match args::read(arguments) {
            Ok(args) => args,
            Err(error) => return refusal(error),
        };
        if !super::tools::ITEM_TYPES.contains(&args.item_type.as_str()) {
            return refusal(format!("Unknown item type: {}", args.item_type));
        }
        let project = match self.project(args.project_path.as_deref()) {
            Ok(dir) => dir,
            Err(error) => return refusal(error),
        };
        if let Some(arg) = args.threaded {
            return refusal(args::thread_refusal(arg));
        }
        let item_id = args.item_id.clone();
        let control = Control::new();
        let job = Job {
            sys: self.sys,
            spaces: Arc::clone(&self.spaces),
            project,
            args,
            env: Arc::clone(&self.env),
            notices: self.notices.clone(),
            started,
            worker: Worker::new(Arc::clone(&self.launcher), Arc::clone(&control)),
        };
        // A call dropped unanswered (the runtime shutting down) ends its processes too.
        let _cancel = CancelOnDrop(Arc::clone(&control));
        let mut ran = tokio::task::spawn_blocking(move || job.run());
        let ran = tokio::select! {
            ran = &mut ran => ran,
            () = cancelled => {
                control.cancel();
                ran.await
            }
        };
        ran.unwrap_or_else(|e| internal_error("executing", &item_id, &e))
    }
}

impl Server {
    /// One search call, answered in §12.7's JSON.
    pub async fn search(&self, arguments: Option<&JsonObject>) -> Json {
        let query = super::search::query_of(arguments);
        let args = match super::search::read(arguments) {
            Ok(args) => args,
            Err(error) => return crate::render::search::error(query.as_deref(), &error),
        };
        let project = match self.project(args.project_path.as_deref()) {
            Ok(dir) => dir,
            Err(error) => return crate::render::search::error(query.as_deref(), &error),
        };
        let job = SearchJob {
            sys: self.sys,
            spaces: Arc::clone(&self.spaces),
            project,
            args,
            warm: Arc::clone(&self.warm),
            notices: self.notices.clone(),
        };
        let ran = tokio::task::spawn_blocking(move || job.run()).await;
        ran.unwrap_or_else(|e| {
            crate::render::search::error(
                query.as_deref(),
                &format!("internal error in ryechain while searching (a bug): {e}"),
            )
        })
    }
}

impl Server {
    /// One load call, answered in §12.8's JSON.
    pub async fn load(&self, arguments: Option<&JsonObject>) -> Json {
        let args = match items::read_load(arguments) {
            Ok(args) => args,
            Err(error) => return refusal(error),
        };
        let project = match self.project(args.project_path.as_deref()) {
            Ok(dir) => dir,
            Err(error) => return refusal(error),
        };
        let (sys, spaces, notices) = (self.sys, Arc::clone(&self.spaces), self.notices.clone());
        let item_id = args.item_id.clone();
        let ran =
            tokio::task::spawn_blocking(move || load_item(sys, &spaces, &project, &args, &notices))
                .await;
        ran.unwrap_or_else(|e| internal_error("loading", &item_id, &e))
    }

    /// One sign call, answered in §12.9's JSON.
    pub async fn sign(&self, arguments: Option<&JsonObject>) -> Json {
        let args = match items::read_sign(arguments) {
            Ok(args) => args,
            Err(error) => return refusal(error),
        };
        let project = match self.project(args.project_path.as_deref()) {
            Ok(dir) => dir,
            Err(error) => return refusal(error),
        };
        let item_id = args.item_id.clone();
        let call = SignCall { project, args };
        let sign = Arc::clone(&self.sign);
        let ran = tokio::task::spawn_blocking(move || {
            sign(&call).unwrap_or_else(|e| {
                json!({"status": "error", "error": format!("{e:#}"), "item_id": call.args.item_id})
            })
        })
        .await;
        ran.unwrap_or_else(|e| internal_error("signing", &item_id, &e))
    }
}

/// The answer when a call's blocking job panicked (a bug).
fn internal_error(doing: &str, item_id: &str, e: &tokio::task::JoinError) -> Json {
    json!({
        "status": "error",
        "error": format!("internal error in ryechain while {doing} {item_id} (a bug): {e}"),
        "item_id": item_id,
    })
}

/// Load an item as `ryechain load` does: a fresh session (edits on disk are seen), the
/// signature verified under the execution policy before the content is given.
fn load_item(
    sys: &'static dyn System,
    spaces: &Spaces,
    project: &Path,
    args: &LoadArgs,
    notices: &Notices,
) -> Json {
    let refused = |error: String| json!({"status": "error", "error": error, "item_type": args.kind.name(), "item_id": args.item_id});
    if let Some(reason) = crate::model::item_id_problem(&args.item_id) {
        return refused(crate::message::invalid_item_id(&args.item_id, reason));
    }
    let (specs, found) = match spaces(project) {
        Ok(spaces) => spaces,
        Err(e) => return refused(format!("{e:#}")),
    };
    notices.show(&found);
    let mut session = Session::open(sys, &specs, Settings::default());
    notices.show(&std::mem::take(&mut session.notices));
    let req = crate::exec::load::LoadRequest {
        kind: args.kind,
        item_id: args.item_id.clone(),
        source: args.source,
        destination: args.destination,
        policy: session.policy(false),
    };
    match session.load(&req) {
        Ok((answer, copied)) => crate::render::exec::load_response(&answer, copied.as_deref()),
        Err(error) => refused(error),
    }
}

/// The blocking part of one search call.
struct SearchJob {
    sys: &'static dyn System,
    spaces: Spaces,
    project: PathBuf,
    args: SearchArgs,
    warm: Arc<Mutex<WarmProjects>>,
    notices: Notices,
}

impl SearchJob {
    /// Search the project's warm state, brought in line with the disk first.
    fn run(self) -> Json {
        let req = &self.args.request;
        let (specs, notices) = match (self.spaces)(&self.project) {
            Ok(spaces) => spaces,
            Err(e) => return crate::render::search::error(Some(&req.query), &format!("{e:#}")),
        };
        self.notices.show(&notices);
        let mut projects = self.warm.lock().unwrap_or_else(PoisonError::into_inner);
        let warm = projects.get(self.sys, &self.project, specs);
        self.notices.show(&warm.take_notices());
        let (a, index) = warm.search_view();
        let answer = match a.search_in(index, req) {
            Ok(answer) => answer,
            Err(e) => return crate::render::search::error(Some(&req.query), &e.to_string()),
        };
        let verdicts: Vec<_> = answer
            .hits
            .iter()
            .map(|h| a.verify_file(h.file, &h.id))
            .collect();
        let echo = crate::render::search::Echo {
            query: &req.query,
            item_type: req.kind.name(),
            source: req.source.name(),
            limit: req.limit,
            offset: req.offset,
            scope: self.args.scope.as_deref(),
            space: self.args.space.as_deref(),
        };
        crate::render::search::response(&answer, &verdicts, &echo, &|p| p.display().to_string())
    }
}

/// Cancels a call's processes when dropped.
struct CancelOnDrop(Arc<Control>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Answer `call`; while it runs, when the request's `_meta` holds a progress token, report
/// `notifications/progress` each second from the first on: the seconds so far as the progress
/// (no total: a run's length is unknown) and `what` with them as the message.
async fn with_progress(
    context: &RequestContext<RoleServer>,
    what: &str,
    call: impl Future<Output = Json>,
) -> Json {
    let Some(token) = context.meta.get_progress_token() else {
        return call.await;
    };
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut call = std::pin::pin!(call);
    loop {
        tokio::select! {
            answer = &mut call => return answer,
            _ = ticks.tick() => {
                let secs = started.elapsed().as_secs();
                let report = ProgressNotificationParam::new(token.clone(), secs as f64)
                    .with_message(format!("{what}: running for {secs} s"));
                // A client that is gone is the session's to notice, not the call's.
                let _ = context.peer.notify_progress(report).await;
            }
        }
    }
}

/// `{"status": "error", "error": …}`: a call refused before anything was looked up.
fn refusal(error: String) -> Json {
    json!({"status": "error", "error": error})
}

/// A response as a tool's result: one text item holding the JSON, the same object as
/// `structuredContent` when the negotiated protocol has it, and `isError` when the status is
/// `"error"`.
pub fn tool_result(response: Json, structured: bool) -> CallToolResult {
    let is_error = response.get("status").and_then(Json::as_str) == Some("error");
    let content = vec![ContentBlock::text(response.to_string())];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if structured {
        result.structured_content = Some(response);
    }
    result
}

/// Whether a result for a peer speaking `version` may carry `structuredContent` (2025-06-18 on;
/// revisions are dated, so they compare as strings).
pub fn has_structured_content(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= STRUCTURED_SINCE.as_str())
}

/// The blocking part of one tool call.
struct Job {
    sys: &'static dyn System,
    spaces: Spaces,
    project: PathBuf,
    args: ExecuteArgs,
    env: Arc<BTreeMap<String, String>>,
    notices: Notices,
    started: Instant,
    /// Starts the call's processes (commands the planner asks about, the tool).
    worker: Worker,
}

impl Job {
    /// Run the call as `ryechain exec` does: a fresh session per call (edits on disk since the
    /// last call are seen), the same rendering, the whole call timed.
    fn run(self) -> Json {
        let ms = || Some(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX));
        let item_id = self.args.item_id.as_str();
        let document = match self.args.item_type.as_str() {
            "directive" => Some(crate::integrity::ItemKind::Directive),
            "knowledge" => Some(crate::integrity::ItemKind::Knowledge),
            _ => None,
        };
        // An id that can never name a file is answered in the planner's words, as `exec` does.
        if let Some(reason) = crate::model::item_id_problem(item_id) {
            let error = crate::message::invalid_item_id(item_id, reason);
            if document.is_some() {
                let a = DocAnswer::Error {
                    item_id: item_id.to_owned(),
                    error,
                    error_type: None,
                    declared_inputs: None,
                };
                return crate::render::exec::document_response(&a, ms());
            }
            let r = Response::refused(item_id, error, Vec::new(), None);
            return crate::render::exec::response(&r, ms());
        }
        let (specs, notices) = match (self.spaces)(&self.project) {
            Ok(spaces) => spaces,
            Err(e) => {
                return json!({"status": "error", "error": format!("{e:#}"), "item_id": item_id});
            }
        };
        self.notices.show(&notices);
        let mut session = Session::open(self.sys, &specs, Settings::default());
        self.notices.show(&std::mem::take(&mut session.notices));
        let mut worker = self.worker;
        session.spawn_with(Box::new(move |plan| worker.run(plan)));
        if let Some(kind) = document {
            let answered = session.execute_document(
                kind,
                item_id,
                self.args.parameters.clone(),
                self.args.dry_run,
                false,
            );
            return match answered {
                Ok(a) => crate::render::exec::document_response(&a, ms()),
                Err(error) => json!({"status": "error", "error": error, "item_id": item_id}),
            };
        }
        let executed = session.execute(ExecCall {
            item_id: item_id.to_owned(),
            params: self.args.parameters.clone(),
            dry_run: self.args.dry_run,
            trace: false,
            timeout: None,
            output_cap: DEFAULT_OUTPUT_CAP,
            allow_unsigned: false,
            use_lockfile: true,
            env: (*self.env).clone(),
        });
        self.notices.show(&session.notices);
        match executed {
            Err(error) => json!({"status": "error", "error": error, "item_id": item_id}),
            Ok(Executed::DryRun(view)) => crate::render::exec::dry_run_response(&view, ms()),
            Ok(Executed::HttpDryRun(view, request)) => {
                crate::render::exec::http_dry_run_response(&view, &request, ms())
            }
            Ok(Executed::Answered(r)) => crate::render::exec::response(&r, ms()),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new(self.names.server_name(), env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            self.tool.clone(),
            self.search_tool.clone(),
            self.load_tool.clone(),
            self.sign_tool.clone(),
        ]))
    }

    /// rmcp hands on a request whose params do not parse as its method's as a custom request;
    /// for the methods this server serves that is a malformed request (-32602), not an unknown
    /// method (rmcp's default answer, -32601).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method;
        let error = match method.as_str() {
            "tools/call" => ErrorData::invalid_params(
                "Invalid tools/call params: `name` must be a string and `arguments`, when given, an object",
                None,
            ),
            "tools/list" => ErrorData::invalid_params(
                "Invalid tools/list params: `cursor`, when given, must be a string",
                None,
            ),
            _ => ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None),
        };
        Err(error)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let structured = has_structured_content(context.protocol_version().as_ref());
        let item = request.arguments.as_ref().and_then(|a| a.get("item_id"));
        let what = match item.and_then(Json::as_str) {
            Some(id) => format!("{} {id}", request.name),
            None => request.name.to_string(),
        };
        let what = what.as_str();
        let response = if request.name == self.tool.name {
            let call = self.execute(request.arguments.as_ref(), started, context.ct.cancelled());
            with_progress(&context, what, call).await
        } else if request.name == self.search_tool.name {
            with_progress(&context, what, self.search(request.arguments.as_ref())).await
        } else if request.name == self.load_tool.name {
            with_progress(&context, what, self.load(request.arguments.as_ref())).await
        } else if request.name == self.sign_tool.name {
            with_progress(&context, what, self.sign(request.arguments.as_ref())).await
        } else {
            // A protocol error (-32602), as the MCP specification answers an unknown tool.
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        Ok(tool_result(response, structured).into())
    }
}
