//! The language server's state and main loop: one `Host` mutated only here, open buffers
//! overlaid on the disk, every request and every diagnostics pass computed on a snapshot on the
//! thread pool. A change cancels the work of older snapshots through salsa (`Cancelled`); results
//! of an older generation are never published or answered.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lt;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::json;

use super::position::{Encoding, Lines, apply_change};
use super::uri;
use crate::analysis::lazy::Loaded;
use crate::analysis::live::{LiveLint, Plan, Rechecked};
use crate::analysis::{Analysis, Host, LintOptions};
use crate::db::{Change, FileChange, Settings, SourceFile};
use crate::diagnostic::{Diagnostic, Severity};
use crate::load::{ItemLoader, LoadOutcome, Reloader, SpaceSpec, load};
use crate::model::Span;
use crate::system::System;

/// `initializationOptions` the server understands (all optional; camelCase in JSON).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitOptions {
    /// The user space base directory (`.ai` is appended), as `--user-space`.
    pub user_space: Option<PathBuf>,
    /// System bundles (`DIR` or `ID=DIR`), as `--system-space`.
    pub system_space: Option<Vec<String>>,
    /// Rules or families to run, as `lint --select`.
    pub select: Option<Vec<String>>,
    /// Rules or families to skip, as `lint --ignore`.
    pub ignore: Option<Vec<String>>,
    /// Maximum chain length, as `lint --max-depth`.
    pub max_depth: Option<usize>,
}

/// Finds the spaces for a project directory and the options of `initialize`, with warnings.
pub type SpacesFn<'a> =
    dyn Fn(&Path, &InitOptions) -> anyhow::Result<(Vec<SpaceSpec>, Vec<String>)> + Sync + 'a;
/// Maps an embedded file (`bundle`, path relative to the bundle root) to its copy on disk.
pub type MaterialisedFn = dyn Fn(&str, &str) -> Option<PathBuf> + Send + Sync;
/// Maps a rule id to the URI of its documentation page.
pub type RuleDocFn = dyn Fn(&str) -> Option<lt::Uri> + Send + Sync;

/// The command of the "Re-sign this item" code action.
pub const SIGN_COMMAND: &str = "ryechain.sign";

/// One "Re-sign this item": the item, the space whose file is signed, and the spaces the server
/// reads (the project, and `initialize`'s overrides of the user space and bundles).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignRequest {
    pub project: PathBuf,
    pub kind: crate::integrity::ItemKind,
    pub item_id: String,
    pub space: crate::model::SpaceKind,
    pub user_space: Option<PathBuf>,
    pub system_space: Option<Vec<String>>,
}

/// `ryechain sign`'s flow for one item, run for the person at the editor: validation, their
/// key (never made or trusted here: an error names `ryechain keys generate` / `keys trust`),
/// stale lockfiles removed; answering `rye_sign`'s JSON (`status` `signed` or `error`). Handed
/// in by the command, so this edge imports no other.
pub type SignFn = dyn Fn(&SignRequest) -> anyhow::Result<serde_json::Value> + Send + Sync;

/// What the edge supplies: how to find the spaces for a project directory, and where things the
/// editor may open live outside the workspace.
pub struct Setup<'a> {
    pub sys: &'a dyn System,
    /// The spaces for a project directory and the options of `initialize` (flags and environment
    /// already folded in by the caller), with setup warnings.
    pub spaces: &'a SpacesFn<'a>,
    /// The read-only copy of an embedded file on disk (`bundle`, path relative to the bundle's
    /// root), so the editor can open it.
    pub materialised: Arc<MaterialisedFn>,
    /// The documentation page of a rule (its `codeDescription` link).
    pub rule_doc: Arc<RuleDocFn>,
    /// Settings from the command line; `initializationOptions` override them.
    pub settings: Settings,
    /// The sign flow behind "Re-sign this item" (`None`: the action is not offered).
    pub sign: Option<Arc<SignFn>>,
}

/// An open buffer.
struct Doc {
    uri: lt::Uri,
    version: i32,
    text: String,
}

/// What the pool sends back to the main loop.
enum Task {
    /// Diagnostics of some paths, computed at `generation`; `all` when this covers every file
    /// (paths not listed have none).
    Diagnostics {
        generation: u64,
        all: bool,
        files: Vec<(PathBuf, Vec<Diagnostic>)>,
        graph: Option<Vec<Diagnostic>>,
        /// A workspace pass's lint, kept to re-check only what the next changes reach.
        live: Option<Box<LivePass>>,
    },
    Response {
        generation: u64,
        response: Response,
    },
    /// A "Re-sign this item" command ran: its answer, and the file it may have rewritten.
    Signed {
        response: Response,
        path: PathBuf,
        /// The buffer's text when the command started (the file's text then), if it was open.
        buffer: Option<String>,
        /// What the person is told.
        message: (lt::MessageType, String),
    },
}

/// What a workspace pass did to the lint kept between passes.
enum LivePass {
    /// Linted every file afresh.
    Built(LiveLint),
    /// Re-checked what the plan reaches, to be committed.
    Rechecked(Plan, Rechecked),
}

/// Shared by the pool jobs: how diagnostics become protocol values.
struct Env {
    enc: Encoding,
    materialised: Arc<MaterialisedFn>,
    rule_doc: Arc<RuleDocFn>,
}

pub struct Server<'s> {
    conn: &'s Connection,
    host: Host,
    reloader: Reloader<'s>,
    env: Arc<Env>,
    docs: FxHashMap<PathBuf, Doc>,
    /// Diagnostics last sent, per path, with the buffer version they were sent for (absent =
    /// none sent, or cleared and closed).
    published: FxHashMap<PathBuf, (Option<i32>, Vec<lt::Diagnostic>)>,
    /// The last graph-wide diagnostics (cycles), merged into the fast pass of open files.
    graph: Vec<Diagnostic>,
    generation: u64,
    tasks_tx: Sender<Task>,
    tasks_rx: Receiver<Task>,
    /// Requests the client cancelled (`$/cancelRequest`), answered already.
    cancelled: FxHashSet<RequestId>,
    /// The client pulls diagnostics of open files (`textDocument/diagnostic`).
    pull: bool,
    /// The client accepts `workspace/diagnostic/refresh`.
    refresh: bool,
    shutdown: bool,
    next_request: i32,
    /// Until the full load lands: the single-item loader and what changed on disk meanwhile.
    lazy: Option<Lazy<'s>>,
    settings: Settings,
    /// Requests being computed on the pool, to ask again when a change cancels them.
    inflight: FxHashMap<RequestId, Inflight>,
    /// The generation whose workspace pass is still to start, and when.
    workspace_due: Option<(u64, std::time::Instant)>,
    /// The lint of the last workspace pass taken, with what each file's findings read: a pass
    /// re-checks only what the changes since reach (`None`: the next pass lints every file).
    live: Option<Arc<LiveLint>>,
    /// What the changes since the last pass taken alter (their plans merged).
    pending: Option<Plan>,
    sys: &'s dyn System,
    /// The project directory, and `initialize`'s spaces, for "Re-sign this item".
    project: PathBuf,
    init: InitOptions,
    sign: Option<Arc<SignFn>>,
    /// The client applies edits the server asks for (`workspace/applyEdit`).
    apply_edit: bool,
}

/// A request on the pool, kept to be asked again after a change elsewhere cancels it.
struct Inflight {
    request: Request,
    /// The version of the request's document when it arrived (`None`: not open, or no document).
    version: Option<i32>,
    tries: u8,
}

/// How many times a request cancelled by changes elsewhere is asked again.
const MAX_RETRIES: u8 = 3;

/// The version of the open document a request is about, if any.
fn request_version(
    req: &Request,
    docs: &FxHashMap<PathBuf, Doc>,
    reloader: &Reloader<'_>,
) -> Option<i32> {
    let uri = req.params.get("textDocument")?.get("uri")?.as_str()?;
    let uri: lt::Uri = uri.parse().ok()?;
    let path = uri::to_path(&uri)?;
    let (_, key, _) = reloader.locate(&path)?;
    docs.get(&key).map(|d| d.version)
}

/// How long the edits must pause before the whole workspace is re-checked.
const WORKSPACE_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

/// The state of a server whose full load is still running.
struct Lazy<'s> {
    loader: ItemLoader<'s>,
    full: Receiver<LoadOutcome>,
    /// Paths reported changed on disk before the full load landed (re-read after it).
    disk_changes: Vec<PathBuf>,
}

/// The server's capabilities for a client.
fn capabilities(enc: Encoding, pull: bool, sign: bool) -> lt::ServerCapabilities {
    lt::ServerCapabilities {
        position_encoding: Some(match enc {
            Encoding::Utf8 => lt::PositionEncodingKind::UTF8,
            Encoding::Utf16 => lt::PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(lt::TextDocumentSyncCapability::Options(
            lt::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lt::TextDocumentSyncKind::INCREMENTAL),
                save: Some(lt::TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        hover_provider: Some(lt::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lt::OneOf::Left(true)),
        document_symbol_provider: Some(lt::OneOf::Left(true)),
        completion_provider: Some(lt::CompletionOptions {
            trigger_characters: Some(vec!["/".to_owned(), "\"".to_owned(), "'".to_owned()]),
            ..Default::default()
        }),
        code_action_provider: Some(lt::CodeActionProviderCapability::Options(
            lt::CodeActionOptions {
                code_action_kinds: Some(vec![lt::CodeActionKind::QUICKFIX]),
                ..Default::default()
            },
        )),
        execute_command_provider: sign.then(|| lt::ExecuteCommandOptions {
            commands: vec![SIGN_COMMAND.to_owned()],
            ..Default::default()
        }),
        diagnostic_provider: pull.then(|| {
            lt::DiagnosticServerCapabilities::Options(lt::DiagnosticOptions {
                identifier: Some("ryechain".to_owned()),
                inter_file_dependencies: true,
                workspace_diagnostics: false,
                work_done_progress_options: Default::default(),
            })
        }),
        ..Default::default()
    }
}

fn negotiate_encoding(caps: &lt::ClientCapabilities) -> Encoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    if offered.is_some_and(|e| e.contains(&lt::PositionEncodingKind::UTF8)) {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    }
}

/// The project directory: the first workspace folder, else `rootUri`, else `rootPath`, else the
/// working directory.
#[allow(
    deprecated,
    reason = "rootUri and rootPath are still sent by older clients"
)]
fn project_dir(params: &lt::InitializeParams, sys: &dyn System) -> anyhow::Result<PathBuf> {
    let from_uri = |u: &lt::Uri| uri::to_path(u);
    if let Some(p) = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .and_then(|f| from_uri(&f.uri))
    {
        return Ok(p);
    }
    if let Some(p) = params.root_uri.as_ref().and_then(from_uri) {
        return Ok(p);
    }
    if let Some(p) = &params.root_path {
        return Ok(PathBuf::from(p));
    }
    Ok(sys.current_dir()?)
}

/// Run the server on `conn` until `exit` or the end of input. Returns whether `shutdown` came
/// before the end (the process exits 0 then, 1 otherwise, as the protocol asks).
pub fn run(conn: &Connection, setup: &Setup<'_>) -> anyhow::Result<bool> {
    let (id, params) = match conn.initialize_start() {
        Ok(x) => x,
        // The client went away or said `exit` before `initialize`: nothing to serve.
        Err(_) => return Ok(false),
    };
    let params: lt::InitializeParams = match serde_json::from_value(params) {
        Ok(p) => p,
        Err(e) => {
            conn.sender
                .send(
                    Response::new_err(
                        id,
                        ErrorCode::InvalidParams as i32,
                        format!("invalid initialize parameters: {e}"),
                    )
                    .into(),
                )
                .ok();
            anyhow::bail!("invalid initialize parameters: {e}");
        }
    };
    let init: InitOptions = match params.initialization_options.clone() {
        Some(v) if !v.is_null() => match serde_json::from_value(v) {
            Ok(o) => o,
            Err(e) => {
                let msg = format!("invalid initializationOptions: {e}");
                conn.sender
                    .send(
                        Response::new_err(id, ErrorCode::InvalidParams as i32, msg.clone()).into(),
                    )
                    .ok();
                anyhow::bail!(msg);
            }
        },
        _ => InitOptions::default(),
    };
    let enc = negotiate_encoding(&params.capabilities);
    let text_caps = params.capabilities.text_document.as_ref();
    let pull = text_caps.and_then(|t| t.diagnostic.as_ref()).is_some();
    let workspace_caps = params.capabilities.workspace.as_ref();
    let refresh = workspace_caps
        .and_then(|w| w.diagnostic.as_ref()?.refresh_support)
        .unwrap_or(false);
    let watch_dynamic = workspace_caps
        .and_then(|w| w.did_change_watched_files.as_ref()?.dynamic_registration)
        .unwrap_or(false);
    let apply_edit = workspace_caps.and_then(|w| w.apply_edit).unwrap_or(false);
    let project = project_dir(&params, setup.sys)?;
    let result = json!({
        "capabilities": capabilities(enc, pull, setup.sign.is_some()),
        "serverInfo": {"name": "ryechain", "version": env!("CARGO_PKG_VERSION")},
    });
    if conn.initialize_finish(id, result).is_err() {
        return Ok(false);
    }
    let (specs, notices) = match (setup.spaces)(&project, &init) {
        Ok(x) => x,
        Err(e) => {
            show_message(conn, lt::MessageType::ERROR, &format!("ryechain: {e:#}"));
            (Vec::new(), Vec::new())
        }
    };
    for n in &notices {
        show_message(conn, lt::MessageType::WARNING, &format!("ryechain: {n}"));
    }
    let mut settings = setup.settings.clone();
    if init.select.is_some() {
        settings.select = init.select.clone();
    }
    if let Some(ignore) = &init.ignore {
        settings.ignore = ignore.clone();
    }
    if init.max_depth.is_some() {
        settings.max_depth = init.max_depth;
    }
    // The base load (extractors, config, trust store) now; the full load of every space on a
    // thread of its own. Until it lands, an opened file's chain is loaded on demand (the
    // single-item loader), so its first diagnostics do not wait for the whole workspace.
    let (loader, base) = ItemLoader::new(setup.sys, &specs);
    for n in &base.notices {
        show_message(conn, lt::MessageType::WARNING, &format!("ryechain: {n}"));
    }
    let mut change = base.change;
    change.settings = Some(settings.clone());
    let mut host = Host::new();
    host.apply(change);
    let (tasks_tx, tasks_rx) = unbounded();
    let env = Arc::new(Env {
        enc,
        materialised: setup.materialised.clone(),
        rule_doc: setup.rule_doc.clone(),
    });
    let sys = setup.sys;
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = crossbeam_channel::bounded(1);
        let specs_ref = &specs;
        std::thread::Builder::new()
            .name("lsp-load".to_owned())
            .spawn_scoped(scope, move || {
                full_tx.send(load(sys, specs_ref)).ok();
            })?;
        let mut server = Server {
            conn,
            host,
            reloader: Reloader::new(sys, &specs),
            env,
            docs: FxHashMap::default(),
            published: FxHashMap::default(),
            graph: Vec::new(),
            generation: 0,
            tasks_tx,
            tasks_rx,
            cancelled: FxHashSet::default(),
            pull,
            refresh,
            shutdown: false,
            next_request: 0,
            lazy: Some(Lazy {
                loader,
                full: full_rx,
                disk_changes: Vec::new(),
            }),
            settings,
            workspace_due: None,
            live: None,
            pending: None,
            inflight: FxHashMap::default(),
            sys,
            project: project.clone(),
            init: init.clone(),
            sign: setup.sign.clone(),
            apply_edit,
        };
        if watch_dynamic {
            server.register_watchers();
        }
        server.main_loop()
    })
}

fn show_message(conn: &Connection, typ: lt::MessageType, message: &str) {
    let params = lt::ShowMessageParams {
        typ,
        message: message.to_owned(),
    };
    conn.sender
        .send(Notification::new("window/showMessage".to_owned(), params).into())
        .ok();
}

impl Server<'_> {
    fn main_loop(&mut self) -> anyhow::Result<bool> {
        loop {
            crossbeam_channel::select! {
                recv(self.conn.receiver) -> msg => match msg {
                    // The client closed stdin: end as after `exit`.
                    Err(_) => return Ok(self.shutdown),
                    Ok(msg) => {
                        if self.handle(msg) {
                            return Ok(self.shutdown);
                        }
                    }
                },
                recv(self.tasks_rx) -> task => {
                    if let Ok(task) = task {
                        self.on_task(task);
                    }
                }
                recv(self.full_load()) -> outcome => {
                    if let Ok(outcome) = outcome {
                        self.on_full_load(outcome);
                    }
                }
                recv(self.workspace_timer()) -> _ => {
                    if let Some((generation, _)) = self.workspace_due.take()
                        && generation == self.generation
                    {
                        self.start_workspace_pass();
                    }
                }
            }
        }
    }

    /// Fires when the pending workspace pass is due (never, when none is pending).
    fn workspace_timer(&self) -> Receiver<std::time::Instant> {
        match self.workspace_due {
            Some((_, at)) => crossbeam_channel::at(at),
            None => crossbeam_channel::never(),
        }
    }

    /// The channel the full load arrives on (never ready once it has).
    fn full_load(&self) -> Receiver<LoadOutcome> {
        match &self.lazy {
            Some(l) => l.full.clone(),
            None => crossbeam_channel::never(),
        }
    }

    /// Replace the partial inputs by the full load, with the open buffers on top, and re-read
    /// what changed on disk while it ran.
    fn on_full_load(&mut self, outcome: LoadOutcome) {
        let Some(lazy) = self.lazy.take() else { return };
        for n in &outcome.notices {
            show_message(
                self.conn,
                lt::MessageType::WARNING,
                &format!("ryechain: {n}"),
            );
        }
        self.reloader.note_links(&outcome.links);
        let mut change = outcome.change;
        change.settings = Some(self.settings.clone());
        let mut open: Vec<&PathBuf> = self.docs.keys().collect();
        open.sort();
        for path in open {
            if let Some(spec) = self.reloader.buffer(path, &self.docs[path].text) {
                change.files.push(FileChange::Write(spec));
            }
        }
        self.apply(change, &[]);
        if !lazy.disk_changes.is_empty() {
            self.reload_paths(lazy.disk_changes);
        }
    }

    /// In the lazy phase, load the candidate files of every id the chain of `path` reads, round
    /// after round until nothing is missing (as `load::load_items` does), never over a buffer.
    fn probe_chain(&mut self, path: &Path) {
        loop {
            let Some(lazy) = &mut self.lazy else { return };
            let a = self.host.analysis();
            let Some(file) = a.file_at(path) else { return };
            let loaded = Loaded::Some(lazy.loader.probed_items().clone());
            let needs = a.chain_needs(file, &loaded);
            if needs.is_empty() {
                return;
            }
            let mut change = lazy.loader.probe_items(a, &needs);
            change.files.retain(|c| match c {
                FileChange::Write(spec) => !self.docs.contains_key(&spec.path),
                FileChange::Remove(_) => true,
            });
            self.apply_inputs(change);
        }
    }

    /// Apply `change` to the host, telling the kept lint what it alters first.
    fn apply_inputs(&mut self, change: Change) {
        if let Some(live) = &self.live {
            let plan = live.plan(self.host.analysis(), &change);
            match &mut self.pending {
                Some(p) => p.merge(plan),
                None => self.pending = Some(plan),
            }
        }
        self.host.apply(change);
    }

    /// Answer a request (it is no longer in flight).
    fn respond(&mut self, response: Response) {
        self.inflight.remove(&response.id);
        self.send(response);
    }

    fn send(&self, msg: impl Into<Message>) {
        self.conn.sender.send(msg.into()).ok();
    }

    /// Handle one message; `true` ends the loop.
    fn handle(&mut self, msg: Message) -> bool {
        match msg {
            Message::Request(req) => self.on_request(req),
            Message::Notification(n) => return self.on_notification(n),
            // Answers to our own requests (watcher registration, refresh): nothing to do.
            Message::Response(_) => {}
        }
        false
    }

    fn register_watchers(&mut self) {
        let mut watchers = vec![lt::FileSystemWatcher {
            glob_pattern: lt::GlobPattern::String("**/.ai/**".to_owned()),
            kind: None,
        }];
        // Spaces outside the workspace folder (user space, bundles on disk).
        for ai in self.reloader.ai_dirs() {
            if let Some(base) = uri::from_path(ai) {
                watchers.push(lt::FileSystemWatcher {
                    glob_pattern: lt::GlobPattern::Relative(lt::RelativePattern {
                        base_uri: lt::OneOf::Right(base),
                        pattern: "**/*".to_owned(),
                    }),
                    kind: None,
                });
            }
        }
        let options = lt::DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = lt::RegistrationParams {
            registrations: vec![lt::Registration {
                id: "ryechain-watch-ai".to_owned(),
                method: "workspace/didChangeWatchedFiles".to_owned(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        self.request("client/registerCapability", params);
    }

    fn request(&mut self, method: &str, params: impl serde::Serialize) {
        self.next_request += 1;
        let id = RequestId::from(format!("ryechain-{}", self.next_request));
        self.send(Request::new(id, method.to_owned(), params));
    }

    fn on_request(&mut self, req: Request) {
        if self.shutdown {
            self.respond(Response::new_err(
                req.id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".to_owned(),
            ));
            return;
        }
        let id = req.id.clone();
        let method = req.method.clone();
        self.inflight.entry(id.clone()).or_insert_with(|| Inflight {
            request: req.clone(),
            version: request_version(&req, &self.docs, &self.reloader),
            tries: 0,
        });
        match method.as_str() {
            "initialize" => self.respond(Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is already initialized".to_owned(),
            )),
            "shutdown" => {
                self.shutdown = true;
                self.respond(Response::new_ok(id, serde_json::Value::Null));
            }
            "textDocument/hover" => self.spawn_position::<lt::HoverParams>(
                req,
                |p| p.text_document_position_params,
                hover,
            ),
            "textDocument/definition" => self.spawn_position::<lt::GotoDefinitionParams>(
                req,
                |p| p.text_document_position_params,
                definition,
            ),
            "textDocument/completion" => self.spawn_position::<lt::CompletionParams>(
                req,
                |p| p.text_document_position,
                completion,
            ),
            "textDocument/documentSymbol" => self.spawn_document::<lt::DocumentSymbolParams>(
                req,
                |p| p.text_document.uri.clone(),
                |a, env, file, _, _| document_symbols(a, env, file),
            ),
            "textDocument/codeAction" => self.spawn_document::<lt::CodeActionParams>(
                req,
                |p| p.text_document.uri.clone(),
                code_actions,
            ),
            "workspace/executeCommand" => self.execute_command(req),
            "textDocument/diagnostic" => {
                let graph = self.graph.clone();
                self.spawn_document::<lt::DocumentDiagnosticParams>(
                    req,
                    |p| p.text_document.uri.clone(),
                    move |a, env, file, _, uri| pull_report(a, env, file, uri, &graph),
                )
            }
            _ => self.respond(Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("ryechain does not handle `{method}`"),
            )),
        }
    }

    /// `workspace/executeCommand`: "Re-sign this item" runs the sign flow on a thread of its
    /// own, on the file on disk, which must hold what the editor shows (an open buffer with
    /// unsaved edits is refused: the person signs what they saved).
    fn execute_command(&mut self, req: Request) {
        let id = req.id.clone();
        let params: lt::ExecuteCommandParams = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => return self.invalid_params(id, &e),
        };
        let fail = |message: String| {
            Response::new_err(id.clone(), ErrorCode::InvalidParams as i32, message)
        };
        let Some(sign) = self.sign.clone().filter(|_| params.command == SIGN_COMMAND) else {
            let message = format!("ryechain has no command `{}`", params.command);
            return self.respond(fail(message));
        };
        let arg = params.arguments.first().cloned().unwrap_or_default();
        let target = arg["uri"]
            .as_str()
            .and_then(|u| u.parse::<lt::Uri>().ok())
            .and_then(|u| uri::to_path(&u))
            .and_then(|p| self.reloader.locate(&p));
        let Some((_, path, _)) = target else {
            return self.respond(fail(
                "`ryechain.sign` takes {\"uri\": …} of an item in the project or user space"
                    .to_owned(),
            ));
        };
        let a = self.host.analysis();
        let Some(item) = a.file_at(&path).and_then(|f| signable(a, f)) else {
            return self.respond(fail(format!(
                "{} is no tool, directive or knowledge item of the project or user space",
                path.display()
            )));
        };
        // What the editor shows must be what is signed: the file on disk.
        let buffer = self.docs.get(&path).map(|d| d.text.clone());
        if let Some(text) = &buffer {
            let disk = match self.sys.read(&path, 64 << 20) {
                crate::system::ReadResult::Bytes(b) => String::from_utf8(b).ok(),
                _ => None,
            };
            if disk.as_deref() != Some(text.as_str()) {
                let message = format!(
                    "{} has unsaved changes: save it, then re-sign (what is signed is the file on disk)",
                    path.display()
                );
                show_message(
                    self.conn,
                    lt::MessageType::WARNING,
                    &format!("ryechain: {message}"),
                );
                return self.respond(Response::new_err(
                    id,
                    ErrorCode::RequestFailed as i32,
                    message,
                ));
            }
        }
        let request = SignRequest {
            project: self.project.clone(),
            kind: item.kind,
            item_id: item.id.clone(),
            space: item.space,
            user_space: self.init.user_space.clone(),
            system_space: self.init.system_space.clone(),
        };
        let tx = self.tasks_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("lsp-sign".to_owned())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| sign(&request)));
                let (response, message) = match outcome {
                    Ok(Ok(answer)) if answer["status"] == "signed" => (
                        Response::new_ok(id, answer),
                        (
                            lt::MessageType::INFO,
                            format!(
                                "ryechain: signed {} {} ({})",
                                request.kind.name(),
                                request.item_id,
                                request.space.name()
                            ),
                        ),
                    ),
                    Ok(Ok(answer)) => {
                        let mut error = answer["error"].as_str().unwrap_or("not signed").to_owned();
                        for issue in answer["issues"].as_array().into_iter().flatten() {
                            if let Some(i) = issue.as_str() {
                                error.push_str(&format!("; {i}"));
                            }
                        }
                        (
                            Response::new_err(id, ErrorCode::RequestFailed as i32, error.clone()),
                            (lt::MessageType::ERROR, format!("ryechain: {error}")),
                        )
                    }
                    Ok(Err(e)) => (
                        Response::new_err(id, ErrorCode::RequestFailed as i32, format!("{e:#}")),
                        (lt::MessageType::ERROR, format!("ryechain: {e:#}")),
                    ),
                    Err(_) => (
                        Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            "ryechain failed while signing; this is a bug, please report it"
                                .to_owned(),
                        ),
                        (
                            lt::MessageType::ERROR,
                            "ryechain failed while signing; this is a bug, please report it"
                                .to_owned(),
                        ),
                    ),
                };
                tx.send(Task::Signed {
                    response,
                    path,
                    buffer,
                    message,
                })
                .ok();
            });
        if spawned.is_err() {
            self.respond(Response::new_err(
                req.id,
                ErrorCode::InternalError as i32,
                "cannot start a thread to sign".to_owned(),
            ));
        }
    }

    /// After "Re-sign this item": tell the person, answer, and read the file again. An open
    /// buffer that still shows the old text is brought to the new one through the client
    /// (`workspace/applyEdit`), which then sends it back as an edit; else the disk is read.
    #[allow(
        clippy::mutable_key_type,
        reason = "lsp-types keys WorkspaceEdit::changes by Uri, whose hash never changes"
    )]
    fn on_signed(
        &mut self,
        response: Response,
        path: PathBuf,
        buffer: Option<String>,
        message: (lt::MessageType, String),
    ) {
        let signed = response.response_result.is_ok();
        show_message(self.conn, message.0, &message.1);
        self.respond(response);
        if !signed {
            return;
        }
        let disk = match self.sys.read(&path, 64 << 20) {
            crate::system::ReadResult::Bytes(b) => String::from_utf8(b).ok(),
            _ => None,
        };
        match (self.docs.get(&path), buffer, disk) {
            (Some(doc), Some(before), Some(now)) if doc.text == before && self.apply_edit => {
                let whole = Lines::new(&doc.text).range(0, doc.text.len(), self.env.enc);
                let mut changes = std::collections::HashMap::new();
                changes.insert(
                    doc.uri.clone(),
                    vec![lt::TextEdit {
                        range: whole,
                        new_text: now,
                    }],
                );
                let edit = lt::WorkspaceEdit {
                    changes: Some(changes),
                    ..Default::default()
                };
                self.request(
                    "workspace/applyEdit",
                    lt::ApplyWorkspaceEditParams {
                        label: Some("ryechain: signed".to_owned()),
                        edit,
                    },
                );
            }
            // The client cannot be asked to take the new text (or the buffer moved on): the
            // person reloads it.
            (Some(_), _, _) => show_message(
                self.conn,
                lt::MessageType::INFO,
                &format!(
                    "ryechain: the signed text of {} is on disk; reload the file",
                    path.display()
                ),
            ),
            (None, _, _) => self.reload_paths(vec![path]),
        }
    }

    /// A request about a position in a document, answered on a snapshot.
    fn spawn_position<P>(
        &mut self,
        req: Request,
        pos: fn(P) -> lt::TextDocumentPositionParams,
        f: fn(Analysis<'_>, &Env, SourceFile, usize, &lt::Uri) -> serde_json::Value,
    ) where
        P: serde::de::DeserializeOwned,
    {
        let id = req.id.clone();
        let params: P = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => return self.invalid_params(id, &e),
        };
        let tdp = pos(params);
        let position = tdp.position;
        self.spawn(id, tdp.text_document.uri, move |a, env, file, uri| {
            let text = a.text(file).unwrap_or_default();
            let offset = Lines::new(&text).offset(position, env.enc);
            f(a, env, file, offset, uri)
        });
    }

    /// A request about a whole document, answered on a snapshot.
    fn spawn_document<P>(
        &mut self,
        req: Request,
        uri_of: fn(&P) -> lt::Uri,
        f: impl FnOnce(Analysis<'_>, &Env, SourceFile, P, &lt::Uri) -> serde_json::Value
        + Send
        + 'static,
    ) where
        P: serde::de::DeserializeOwned + Send + 'static,
    {
        let id = req.id.clone();
        let params: P = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => return self.invalid_params(id, &e),
        };
        let uri = uri_of(&params);
        self.spawn(id, uri, move |a, env, file, uri| {
            f(a, env, file, params, uri)
        });
    }

    fn invalid_params(&mut self, id: RequestId, e: &serde_json::Error) {
        self.respond(Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            format!("invalid parameters: {e}"),
        ));
    }

    /// Answer `id` with `f` run on a snapshot on the pool. A document outside every space (or
    /// not loaded) gets `null`; a change that cancels the snapshot gets `ContentModified`.
    fn spawn(
        &mut self,
        id: RequestId,
        uri: lt::Uri,
        f: impl FnOnce(Analysis<'_>, &Env, SourceFile, &lt::Uri) -> serde_json::Value + Send + 'static,
    ) {
        let snap = self.host.analysis_snapshot();
        let file = uri::to_path(&uri)
            .and_then(|p| self.reloader.locate(&p))
            .and_then(|(_, p, _)| snap.analysis().file_at(&p));
        let Some(file) = file else {
            self.respond(Response::new_ok(id, serde_json::Value::Null));
            return;
        };
        let env = self.env.clone();
        let tx = self.tasks_tx.clone();
        let generation = self.generation;
        rayon::spawn(move || {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                salsa::Cancelled::catch(AssertUnwindSafe(|| f(snap.analysis(), &env, file, &uri)))
            }));
            drop(snap);
            let response = match outcome {
                Ok(Ok(value)) => Response::new_ok(id, value),
                Ok(Err(_cancelled)) => Response::new_err(
                    id,
                    ErrorCode::ContentModified as i32,
                    "the workspace changed while this was computed; ask again".to_owned(),
                ),
                Err(_) => Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    "ryechain failed while answering; this is a bug, please report it".to_owned(),
                ),
            };
            tx.send(Task::Response {
                generation,
                response,
            })
            .ok();
        });
    }

    fn on_notification(&mut self, n: Notification) -> bool {
        match n.method.as_str() {
            "exit" => return true,
            "textDocument/didOpen" => {
                if let Ok(p) = serde_json::from_value::<lt::DidOpenTextDocumentParams>(n.params) {
                    let doc = p.text_document;
                    self.open(doc.uri, doc.version, doc.text);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = serde_json::from_value::<lt::DidChangeTextDocumentParams>(n.params) {
                    self.change(p);
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = serde_json::from_value::<lt::DidCloseTextDocumentParams>(n.params) {
                    self.close(&p.text_document.uri);
                }
            }
            "workspace/didChangeWatchedFiles" => {
                if let Ok(p) = serde_json::from_value::<lt::DidChangeWatchedFilesParams>(n.params) {
                    self.disk_changed(&p.changes);
                }
            }
            "$/cancelRequest" => {
                if let Ok(p) = serde_json::from_value::<lt::CancelParams>(n.params) {
                    let id = match p.id {
                        lt::NumberOrString::Number(n) => RequestId::from(n),
                        lt::NumberOrString::String(s) => RequestId::from(s),
                    };
                    // Only a request still being computed is answered here (once); one already
                    // answered is not answered twice.
                    if !self.inflight.contains_key(&id) {
                        return false;
                    }
                    self.cancelled.insert(id.clone());
                    self.respond(Response::new_err(
                        id,
                        ErrorCode::RequestCanceled as i32,
                        "cancelled".to_owned(),
                    ));
                }
            }
            // didSave (the buffer is already in), configuration, `$/` notifications: nothing.
            _ => {}
        }
        false
    }

    /// Apply a change to the inputs (cancelling every snapshot's work) and start a new
    /// diagnostics pass, the paths in `first` before the other open files.
    fn apply(&mut self, change: Change, first: &[PathBuf]) {
        if change.files.is_empty() && change.roots.is_none() && change.settings.is_none() {
            return;
        }
        self.apply_inputs(change);
        self.changed(first);
    }

    /// After inputs changed: a new generation and its diagnostics passes.
    fn changed(&mut self, first: &[PathBuf]) {
        self.generation += 1;
        self.schedule_diagnostics(first);
    }

    fn open(&mut self, uri: lt::Uri, version: i32, text: String) {
        let Some(path) = uri::to_path(&uri) else {
            return;
        };
        let Some(spec) = self.reloader.buffer(&path, &text) else {
            return;
        };
        self.docs
            .insert(spec.path.clone(), Doc { uri, version, text });
        self.edit_buffer(spec);
    }

    /// Put a buffer's text in, load what its chain needs (lazy phase), and re-check, this file
    /// first.
    fn edit_buffer(&mut self, spec: crate::db::change::FileSpec) {
        let key = spec.path.clone();
        self.apply_inputs(Change {
            files: vec![FileChange::Write(spec)],
            ..Change::default()
        });
        self.probe_chain(&key);
        self.changed(&[key]);
    }

    fn change(&mut self, p: lt::DidChangeTextDocumentParams) {
        let Some(path) = uri::to_path(&p.text_document.uri) else {
            return;
        };
        let Some((_, key, _)) = self.reloader.locate(&path) else {
            return;
        };
        let enc = self.env.enc;
        let Some(doc) = self.docs.get_mut(&key) else {
            return;
        };
        for c in p.content_changes {
            apply_change(&mut doc.text, c.range, &c.text, enc);
        }
        doc.version = p.text_document.version;
        let Some(spec) = self.reloader.buffer(&key, &doc.text) else {
            return;
        };
        self.edit_buffer(spec);
    }

    fn close(&mut self, uri: &lt::Uri) {
        let Some(path) = uri::to_path(uri) else {
            return;
        };
        let Some((_, key, _)) = self.reloader.locate(&path) else {
            return;
        };
        if self.docs.remove(&key).is_none() {
            return;
        }
        // The disk is the truth again (an unsaved buffer's edits are gone).
        let a = self.host.analysis();
        let change = self
            .reloader
            .reload(std::slice::from_ref(&key), &|dir| a.paths_under(dir));
        self.apply(change, &[]);
    }

    fn disk_changed(&mut self, events: &[lt::FileEvent]) {
        let paths: Vec<PathBuf> = events.iter().filter_map(|e| uri::to_path(&e.uri)).collect();
        if let Some(lazy) = &mut self.lazy {
            lazy.disk_changes.extend(paths.iter().cloned());
        }
        self.reload_paths(paths);
    }

    /// Re-read `paths` from disk, except open buffers (they win until closed).
    fn reload_paths(&mut self, paths: Vec<PathBuf>) {
        let paths: Vec<PathBuf> = paths
            .into_iter()
            .filter(|p| {
                self.reloader
                    .locate(p)
                    .is_none_or(|(_, key, _)| !self.docs.contains_key(&key))
            })
            .collect();
        if paths.is_empty() {
            return;
        }
        let a = self.host.analysis();
        let change = self.reloader.reload(&paths, &|dir| a.paths_under(dir));
        self.apply(change, &[]);
    }

    /// Start the two diagnostics passes of this generation on a snapshot: the open files first
    /// (`first` before the others), then every file of the workspace.
    fn schedule_diagnostics(&mut self, first: &[PathBuf]) {
        let snap = self.host.analysis_snapshot();
        let generation = self.generation;
        let mut open: Vec<PathBuf> = first.to_vec();
        let first_len = open.len();
        let mut rest: Vec<&PathBuf> = self.docs.keys().filter(|p| !first.contains(p)).collect();
        rest.sort();
        open.extend(rest.into_iter().cloned());
        let tx = self.tasks_tx.clone();
        // The workspace pass waits until the edits pause (`WORKSPACE_DELAY` without a change), so
        // typing never queues behind it; the open files are checked at once, on a thread of
        // their own rather than the pool, which a running workspace pass may occupy.
        self.workspace_due = self
            .lazy
            .is_none()
            .then(|| (generation, std::time::Instant::now() + WORKSPACE_DELAY));
        let spawned = std::thread::Builder::new()
            .name("lsp-open-files".to_owned())
            .spawn(move || {
                // The edited file alone first (its diagnostics are what the user waits for),
                // then the other open files; each batch is published on arrival.
                let split = first_len.min(open.len());
                for batch in [&open[..split], &open[split..]] {
                    if batch.is_empty() {
                        continue;
                    }
                    let a = snap.analysis();
                    let fast = salsa::Cancelled::catch(AssertUnwindSafe(|| {
                        batch
                            .iter()
                            .filter_map(|p| Some((p.clone(), a.diagnostics(a.file_at(p)?))))
                            .collect::<Vec<_>>()
                    }));
                    let Ok(files) = fast else { return };
                    let task = Task::Diagnostics {
                        generation,
                        all: false,
                        files,
                        graph: None,
                        live: None,
                    };
                    if tx.send(task).is_err() {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            show_message(
                self.conn,
                lt::MessageType::ERROR,
                "ryechain: cannot start a thread to check the open files",
            );
        }
    }

    /// Start the workspace pass of the current generation on the pool. With a kept lint, it
    /// re-checks what the changes since the last pass reach (the files whose findings may
    /// differ, and the graph-wide findings when an edge may have moved) and publishes those
    /// files; without one (the first pass), or when a change reaches everything (config,
    /// extractors, trust store), every file, then the graph-wide findings, and its result
    /// replaces what the client was told about every file.
    fn start_workspace_pass(&mut self) {
        let snap = self.host.analysis_snapshot();
        let generation = self.generation;
        let tx = self.tasks_tx.clone();
        let live = self.live.clone();
        let plan = self.pending.clone();
        if live.is_some() && plan.as_ref().is_none_or(Plan::is_empty) {
            // Nothing the kept lint checks changed (a write of what a file held).
            return;
        }
        // The files the last graph-wide findings are about: published again when those change.
        let graph_paths: FxHashSet<PathBuf> =
            self.graph.iter().map(|d| d.path.as_ref().clone()).collect();
        rayon::spawn(move || {
            let a = snap.analysis();
            let pass = salsa::Cancelled::catch(AssertUnwindSafe(|| match (&live, plan) {
                (Some(live), Some(plan)) => {
                    let rechecked = live.recheck(a, &plan);
                    let Some(reached) = rechecked.files() else {
                        let with = rechecked.files_with_findings().unwrap_or_default();
                        let (files, graph) = whole_pass(a, &with);
                        return (
                            true,
                            files,
                            Some(graph),
                            LivePass::Rechecked(plan, rechecked),
                        );
                    };
                    let mut paths: FxHashSet<PathBuf> =
                        reached.map(|f| a.path(f).to_path_buf()).collect();
                    let graph = rechecked.graph_changed().then(|| {
                        let graph = a.graph_diagnostics();
                        paths.extend(graph_paths.iter().cloned());
                        paths.extend(graph.iter().map(|d| d.path.as_ref().clone()));
                        graph
                    });
                    // (In any order: `publish` sorts what it sends.)
                    let files = paths
                        .into_iter()
                        .map(|p| {
                            let diags = a.file_at(&p).map(|f| a.diagnostics(f)).unwrap_or_default();
                            (p, diags)
                        })
                        .collect();
                    (false, files, graph, LivePass::Rechecked(plan, rechecked))
                }
                _ => {
                    let built = LiveLint::new(a, LintOptions::default(), &|_| {});
                    let (files, graph) = whole_pass(a, &built.files_with_findings());
                    (true, files, Some(graph), LivePass::Built(built))
                }
            }));
            // The kept lint is shared no longer once the pass is done (its result is committed
            // to it on the main thread).
            drop(live);
            drop(snap);
            if let Ok((all, files, graph, live)) = pass {
                tx.send(Task::Diagnostics {
                    generation,
                    all,
                    files,
                    graph,
                    live: Some(Box::new(live)),
                })
                .ok();
            }
        });
    }

    fn on_task(&mut self, task: Task) {
        match task {
            Task::Signed {
                response,
                path,
                buffer,
                message,
            } => self.on_signed(response, path, buffer, message),
            Task::Response {
                generation,
                response,
            } => {
                let inflight = self.inflight.remove(&response.id);
                if self.cancelled.remove(&response.id) {
                    return;
                }
                let modified = matches!(&response.response_result,
                    Err(e) if e.code == ErrorCode::ContentModified as i32);
                if generation < self.generation || modified {
                    // Computed on facts older than the last change (or cancelled by it). When
                    // the request's own document is unchanged since it was sent (the change was
                    // elsewhere: another file, the full load landing), its positions still hold:
                    // ask again on the current snapshot. Otherwise the answer is ContentModified.
                    if let Some(mut f) = inflight
                        && f.tries < MAX_RETRIES
                        && f.version == request_version(&f.request, &self.docs, &self.reloader)
                    {
                        f.tries += 1;
                        let request = f.request.clone();
                        self.inflight.insert(response.id.clone(), f);
                        self.on_request(request);
                        return;
                    }
                    self.respond(Response::new_err(
                        response.id,
                        ErrorCode::ContentModified as i32,
                        "the document changed while this was computed; ask again".to_owned(),
                    ));
                    return;
                }
                self.respond(response);
            }
            Task::Diagnostics {
                generation,
                all,
                files,
                graph,
                live,
            } => {
                if generation != self.generation {
                    // Computed on older inputs: what it re-checked stays pending, with the
                    // changes since, for the next pass.
                    return;
                }
                match live.map(|l| *l) {
                    Some(LivePass::Built(built)) => {
                        self.live = Some(Arc::new(built));
                        self.pending = None;
                    }
                    Some(LivePass::Rechecked(plan, rechecked)) => {
                        match self.live.as_mut().and_then(Arc::get_mut) {
                            Some(kept) => {
                                kept.commit(self.host.analysis(), &plan, rechecked);
                                self.pending = None;
                            }
                            // Still shared (cannot happen: a pass drops its share before it
                            // reports): the next pass lints every file again.
                            None => self.live = None,
                        }
                    }
                    None => {}
                }
                if let Some(graph) = graph {
                    self.graph = graph;
                }
                self.publish(all, files);
            }
        }
    }

    /// Convert and publish what differs from what the client has. With `all`, paths not in
    /// `files` have no diagnostics (published empty if they had some).
    fn publish(&mut self, all: bool, files: Vec<(PathBuf, Vec<Diagnostic>)>) {
        let mut by_path: FxHashMap<PathBuf, Vec<Diagnostic>> = FxHashMap::default();
        for (path, diags) in files {
            by_path.entry(path).or_default().extend(diags);
        }
        // Graph findings (cycles) belong to their member files.
        for d in &self.graph {
            if all || by_path.contains_key(d.path.as_ref()) {
                by_path
                    .entry(d.path.as_ref().clone())
                    .or_default()
                    .push(d.clone());
            }
        }
        let mut targets: Vec<PathBuf> = by_path.keys().cloned().collect();
        if all {
            targets.extend(
                self.published
                    .keys()
                    .filter(|p| !by_path.contains_key(*p))
                    .cloned(),
            );
        }
        targets.sort();
        let mut pulled_changed = false;
        for path in targets {
            let diags = by_path.remove(&path).unwrap_or_default();
            let open = self.docs.contains_key(&path);
            if self.pull && open {
                pulled_changed = true;
                // Pulled, not pushed: clear anything pushed before it was opened.
                if self.published.remove(&path).is_some() {
                    self.send_publish(&path, Vec::new(), None);
                }
                continue;
            }
            let converted: Vec<lt::Diagnostic> = diags
                .iter()
                .map(|d| to_lsp(self.host.analysis(), &self.env, d))
                .collect();
            let version = self.docs.get(&path).map(|d| d.version);
            // An open buffer hears about every version once (even "no findings"); other files
            // only when what they have changes.
            let same = match self.published.get(&path) {
                Some((v, old)) => *old == converted && (!open || *v == version),
                None => converted.is_empty() && !open,
            };
            if same {
                continue;
            }
            if converted.is_empty() && !open {
                self.published.remove(&path);
            } else {
                self.published
                    .insert(path.clone(), (version, converted.clone()));
            }
            self.send_publish(&path, converted, version);
        }
        if pulled_changed && self.refresh {
            self.request("workspace/diagnostic/refresh", serde_json::Value::Null);
        }
    }

    fn send_publish(&self, path: &Path, diagnostics: Vec<lt::Diagnostic>, version: Option<i32>) {
        let uri = match self.docs.get(path) {
            Some(d) => Some(d.uri.clone()),
            None => uri::from_path(path),
        };
        let Some(uri) = uri else { return };
        let params = lt::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(
            "textDocument/publishDiagnostics".to_owned(),
            params,
        ));
    }
}

/// The diagnostics of a whole workspace pass: those of `with`, the files the pass's lint found
/// something in (`LiveLint`: its findings are these diagnostics, located; asked of every file
/// again, the memos cost 46 ms at 100k tools), and the graph-wide ones. Files without findings
/// are left out: a whole pass publishes them only if they had some (`publish` with `all`), and
/// at 100k files their paths, hashed, sorted and compared with what was published, were as long
/// as the pass's re-check.
fn whole_pass(
    a: Analysis<'_>,
    with: &[SourceFile],
) -> (Vec<(PathBuf, Vec<Diagnostic>)>, Vec<Diagnostic>) {
    (a.diagnostics_of(with), a.graph_diagnostics())
}

/// The range of `span` in the file at `path` (the start of the file when there is no text).
fn range_in(a: Analysis<'_>, path: &Path, span: Option<Span>, enc: Encoding) -> lt::Range {
    // The file's text as the database holds it (a shared handle, not a copy).
    let text = a.file_at(path).and_then(|f| a.text(f));
    match (text, span) {
        (Some(t), Some(s)) => Lines::new(&t).range(s.start as usize, s.end as usize, enc),
        _ => lt::Range::default(),
    }
}

fn location_of(
    a: Analysis<'_>,
    env: &Env,
    path: &Path,
    span: Option<Span>,
) -> Option<lt::Location> {
    let disk = super::openable(path, &*env.materialised)?;
    Some(lt::Location {
        uri: uri::from_path(&disk)?,
        range: range_in(a, path, span, env.enc),
    })
}

/// One diagnostic in protocol form: the rule id as `code`, its documentation as the
/// `codeDescription`, the help and suggestions in the message, the notes as related information.
fn to_lsp(a: Analysis<'_>, env: &Env, d: &Diagnostic) -> lt::Diagnostic {
    let mut message = d.message.clone();
    if let Some(s) = d
        .suggestions
        .as_ref()
        .filter(|s| !s.replacements.is_empty())
    {
        let list: Vec<String> = s.replacements.iter().map(|r| format!("`{r}`")).collect();
        message.push_str(&format!("\ndid you mean {}?", list.join(", ")));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<lt::DiagnosticRelatedInformation> = d
        .notes
        .iter()
        .filter_map(|n| {
            let location = location_of(a, env, n.path.as_deref()?, n.span)?;
            Some(lt::DiagnosticRelatedInformation {
                location,
                message: n.message.clone(),
            })
        })
        .collect();
    lt::Diagnostic {
        range: range_in(a, &d.path, d.span, env.enc),
        severity: Some(match d.severity {
            Severity::Error => lt::DiagnosticSeverity::ERROR,
            Severity::Warning => lt::DiagnosticSeverity::WARNING,
            Severity::Info => lt::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lt::NumberOrString::String(d.rule.to_string())),
        code_description: (env.rule_doc)(&d.rule).map(|href| lt::CodeDescription { href }),
        source: Some("ryechain".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

fn hover(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    offset: usize,
    _: &lt::Uri,
) -> serde_json::Value {
    let show = |p: &Path| {
        super::openable(p, &*env.materialised)
            .map_or_else(|| p.display().to_string(), |d| d.display().to_string())
    };
    let Some(h) = a.hover(file, offset) else {
        return serde_json::Value::Null;
    };
    let text = a.text(file).unwrap_or_default();
    let span = h.span;
    let hover = lt::Hover {
        contents: lt::HoverContents::Markup(lt::MarkupContent {
            kind: lt::MarkupKind::Markdown,
            value: crate::render::hover::markdown(&h, &show),
        }),
        range: Some(Lines::new(&text).range(span.start as usize, span.end as usize, env.enc)),
    };
    serde_json::to_value(hover).unwrap_or_default()
}

fn definition(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    offset: usize,
    _: &lt::Uri,
) -> serde_json::Value {
    let Some(target) = a.definition(file, offset) else {
        return serde_json::Value::Null;
    };
    match location_of(a, env, &target, Some(Span::empty(0))) {
        Some(loc) => {
            serde_json::to_value(lt::GotoDefinitionResponse::Scalar(loc)).unwrap_or_default()
        }
        None => serde_json::Value::Null,
    }
}

fn completion(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    offset: usize,
    _: &lt::Uri,
) -> serde_json::Value {
    let Some((span, ids, more)) = a.completions(file, offset) else {
        return serde_json::Value::Null;
    };
    let text = a.text(file).unwrap_or_default();
    let range = Lines::new(&text).range(span.start as usize, span.end as usize, env.enc);
    let items: Vec<lt::CompletionItem> = ids
        .into_iter()
        .enumerate()
        .map(|(i, c)| lt::CompletionItem {
            label: c.id.clone(),
            kind: Some(if c.runtime {
                lt::CompletionItemKind::MODULE
            } else {
                lt::CompletionItemKind::REFERENCE
            }),
            detail: Some(c.detail),
            tags: c
                .deprecated
                .then(|| vec![lt::CompletionItemTag::DEPRECATED]),
            sort_text: Some(format!("{i:05}")),
            filter_text: Some(c.id.clone()),
            text_edit: Some(lt::CompletionTextEdit::Edit(lt::TextEdit {
                range,
                new_text: c.id,
            })),
            ..Default::default()
        })
        .collect();
    serde_json::to_value(lt::CompletionResponse::List(lt::CompletionList {
        is_incomplete: more,
        items,
    }))
    .unwrap_or_default()
}

#[allow(deprecated, reason = "DocumentSymbol::deprecated must still be set")]
fn document_symbols(a: Analysis<'_>, env: &Env, file: SourceFile) -> serde_json::Value {
    let text = a.text(file).unwrap_or_default();
    let lines = Lines::new(&text);
    let symbols: Vec<lt::DocumentSymbol> = a
        .document_symbols(file)
        .into_iter()
        .map(|s| {
            let range = lines.range(s.span.start as usize, s.span.end as usize, env.enc);
            lt::DocumentSymbol {
                name: s.name.to_owned(),
                detail: s.detail,
                kind: lt::SymbolKind::PROPERTY,
                tags: None,
                deprecated: None,
                range,
                selection_range: range,
                children: None,
            }
        })
        .collect();
    serde_json::to_value(lt::DocumentSymbolResponse::Nested(symbols)).unwrap_or_default()
}

#[allow(
    clippy::mutable_key_type,
    reason = "lsp-types keys WorkspaceEdit::changes by Uri, whose hash never changes"
)]
fn code_actions(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    p: lt::CodeActionParams,
    uri: &lt::Uri,
) -> serde_json::Value {
    let text = a.text(file).unwrap_or_default();
    let lines = Lines::new(&text);
    let range = lines.offset(p.range.start, env.enc)..lines.offset(p.range.end, env.enc);
    let mut actions: Vec<lt::CodeActionOrCommand> = a
        .quick_fixes(file, range.clone(), &now_stamp())
        .into_iter()
        .map(|fix| {
            let edit_range = lines.range(fix.span.start as usize, fix.span.end as usize, env.enc);
            let mut changes = std::collections::HashMap::new();
            changes.insert(
                uri.clone(),
                vec![lt::TextEdit {
                    range: edit_range,
                    new_text: fix.replacement.clone(),
                }],
            );
            lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
                title: fix.title,
                kind: Some(lt::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![to_lsp(a, env, &fix.diagnostic)]),
                edit: Some(lt::WorkspaceEdit {
                    changes: Some(changes),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            })
        })
        .collect();
    actions.extend(resign_action(a, env, file, range, uri));
    serde_json::to_value(actions).unwrap_or_default()
}

/// An item "Re-sign this item" may sign: its kind, id and writable space.
struct Signable {
    kind: crate::integrity::ItemKind,
    id: String,
    space: crate::model::SpaceKind,
}

/// `file` as an item of the project or user space (`None` for anything else: a system bundle is
/// not the person's to sign).
fn signable(a: Analysis<'_>, file: SourceFile) -> Option<Signable> {
    use crate::model::SpaceKind;
    let space = a.space_kind(file);
    if !matches!(space, SpaceKind::Project | SpaceKind::User) {
        return None;
    }
    let rel = a.rel(file);
    let kind = crate::integrity::ItemKind::of_rel(rel)?;
    let id = match kind {
        crate::integrity::ItemKind::Tool => crate::resolve::split_tool_rel(rel)?.0.to_owned(),
        _ => rel
            .strip_prefix(kind.dir())?
            .strip_suffix(".md")?
            .to_owned(),
    };
    Some(Signable { kind, id, space })
}

/// The integrity findings that re-signing the file answers.
const RESIGN_ANSWERS: [&str; 4] = [
    "unsigned-item",
    "content-hash-mismatch",
    "malformed-signature",
    "bad-signature",
];

/// "Re-sign this item" for an item whose signature a finding in `range` says is missing or
/// stale: a command (`ryechain.sign`) the server runs through `ryechain sign`'s flow.
fn resign_action(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    range: std::ops::Range<usize>,
    uri: &lt::Uri,
) -> Option<lt::CodeActionOrCommand> {
    let item = signable(a, file)?;
    let found: Vec<Diagnostic> = a
        .diagnostics(file)
        .into_iter()
        .filter(|d| RESIGN_ANSWERS.contains(&d.rule.as_ref()))
        .filter(|d| {
            d.span
                .is_none_or(|s| s.start as usize <= range.end && range.start <= s.end as usize)
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let title = format!(
        "Re-sign this {} (`ryechain sign {}`)",
        item.kind.name(),
        item.id
    );
    let command = lt::Command {
        title: title.clone(),
        command: SIGN_COMMAND.to_owned(),
        arguments: Some(vec![json!({
            "uri": uri.as_str(),
            "kind": item.kind.name(),
            "itemId": item.id,
            "space": item.space.name(),
        })]),
    };
    Some(lt::CodeActionOrCommand::CodeAction(lt::CodeAction {
        title,
        kind: Some(lt::CodeActionKind::QUICKFIX),
        diagnostics: Some(found.iter().map(|d| to_lsp(a, env, d)).collect()),
        command: Some(command),
        ..Default::default()
    }))
}

/// Now, as lockfiles stamp `generated_at` (a refreshed lockfile's).
fn now_stamp() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    crate::integrity::timefmt::iso_timestamp(
        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        d.subsec_micros(),
    )
}

fn pull_report(
    a: Analysis<'_>,
    env: &Env,
    file: SourceFile,
    _: &lt::Uri,
    graph: &[Diagnostic],
) -> serde_json::Value {
    let path = a.path(file);
    let mut diags = a.diagnostics(file);
    diags.extend(graph.iter().filter(|d| d.path.as_path() == path).cloned());
    let items = diags.iter().map(|d| to_lsp(a, env, d)).collect();
    let report = lt::DocumentDiagnosticReportResult::Report(lt::DocumentDiagnosticReport::Full(
        lt::RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: lt::FullDocumentDiagnosticReport {
                result_id: None,
                items,
            },
        },
    ));
    serde_json::to_value(report).unwrap_or_default()
}
