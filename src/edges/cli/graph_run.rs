//! L6 `ryechain graph-run` (hidden, internal): the process of the state-graph runtime
//! (`rye/core/runtimes/state-graph/runtime` runs `${RYECHAIN_EXE} graph-run {tool_path}
//! {params_json} {project_path} {user_space} {system_space}`). It opens the same spaces, finds the
//! graph by its file and vouches for it again (its whole chain under the execution policy,
//! before any node runs), then drives the core's walk (`exec::graph::walk`): each action runs
//! through the executor in this process (`runner::execute::Session`, integrity of its chain
//! checked there; a parallel foreach's iterations each in a worker of their own), and after every
//! step the run's state is written, signed with the person's trusted key when there is one, as a
//! knowledge item inside the project (`system::space_write`). It answers one JSON object on
//! stdout (`success`, `status`, `state`, `graph_run_id`, …), which becomes the tool's `data`.
#![allow(
    clippy::disallowed_methods,
    reason = "the graph runtime's edge reads the clock, the environment and its key, and writes the run's state"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use serde_json::{Map, Value as Json, json};

use super::Context;
use crate::db::Settings;
use crate::exec::graph::state_doc::{self, knowledge_id, run_id_problem, state_rel};
use crate::exec::graph::walk::{Call, Clock, Graph, Next, Run, Walk};
use crate::exec::graph::{GraphSource, graph_source};
use crate::integrity::ItemKind;
use crate::load::{SpaceSource, SpaceSpec};
use crate::model::Space;
use crate::runner::execute::{ExecCall, Executed, Session};
use crate::system::os::OsSystem;

/// How deep graphs may run graphs (each level a process): past it, a graph refuses to start.
pub const MAX_GRAPH_DEPTH: u32 = 16;

/// The variable carrying the nesting depth to the graphs a graph's actions start.
const DEPTH_VAR: &str = "RYECHAIN_GRAPH_DEPTH";

/// At most this many iterations of a parallel foreach run at once.
const PARALLEL_LIMIT: usize = 8;

#[derive(Args, Debug)]
pub struct GraphRunArgs {
    /// The graph tool's file (`{tool_path}`).
    graph: PathBuf,
    /// The caller's parameters as a JSON object (`{params_json}`).
    #[arg(allow_hyphen_values = true)]
    params: String,
    /// The project directory (`{project_path}`).
    project: PathBuf,
    /// The user space base directory (`{user_space}`; empty: none).
    #[arg(default_value = "")]
    user: String,
    /// The first system bundle's directory (`{system_space}`; empty: the embedded bundle).
    #[arg(default_value = "")]
    system: String,
}

/// Seconds and milliseconds now.
fn clock() -> Clock {
    let (secs, micros) = crate::runner::execute::now();
    Clock {
        now: crate::integrity::timefmt::signature_timestamp(secs),
        millis: secs.saturating_mul(1000) + i64::from(micros / 1000),
    }
}

/// The spaces the calling `exec` had: the project, the user space when it had one, the first
/// system bundle (or the embedded one).
fn spaces(args: &GraphRunArgs) -> Vec<SpaceSpec> {
    let mut specs = vec![SpaceSpec {
        space: Space::Project,
        source: SpaceSource::Dir(args.project.clone()),
    }];
    if !args.user.is_empty() {
        specs.push(SpaceSpec {
            space: Space::User,
            source: SpaceSource::Dir(PathBuf::from(&args.user)),
        });
    }
    let system = if args.system.is_empty() {
        ("ryechain".to_owned(), SpaceSource::Embedded)
    } else {
        let dir = PathBuf::from(&args.system);
        let id = dir.file_name().map_or_else(
            || "bundle0".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        (id, SpaceSource::Dir(dir))
    };
    specs.push(SpaceSpec {
        space: Space::System {
            order: 0,
            bundle: Arc::from(system.0),
        },
        source: system.1,
    });
    specs
}

/// The tool id of the graph file: its path below a space's `.ai/tools/`, without extension.
fn graph_id(specs: &[SpaceSpec], graph: &Path) -> Option<String> {
    let real = graph.canonicalize().ok()?;
    specs.iter().find_map(|s| {
        let SpaceSource::Dir(dir) = &s.source else {
            return None;
        };
        let tools = dir.join(".ai").join("tools").canonicalize().ok()?;
        let rel = real.strip_prefix(&tools).ok()?.with_extension("");
        rel.to_str().map(str::to_owned)
    })
}

fn refused(error: impl Into<String>) -> Json {
    json!({"success": false, "status": "error", "error": error.into()})
}

pub fn graph_run(ctx: &Context<'_>, args: &GraphRunArgs) -> anyhow::Result<u8> {
    // Every process this one starts goes through the runner; what a tool leaves is ours to end.
    crate::runner::adopt_orphans();
    // The spaces (and so the signing key's folder) of the calling `exec`, as it passed them.
    let ctx = Context {
        sys: ctx.sys,
        system_space: Vec::new(),
        user_space: (!args.user.is_empty())
            .then(|| PathBuf::from(&args.user))
            .or_else(|| ctx.user_space.clone()),
    };
    let answer = walk_graph(&ctx, args);
    super::write_stdout(&format!("{}\n", serde_json::to_string(&answer)?))?;
    Ok(0)
}

fn walk_graph(ctx: &Context<'_>, args: &GraphRunArgs) -> Json {
    let depth: u32 = std::env::var(DEPTH_VAR)
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    if depth >= MAX_GRAPH_DEPTH {
        return refused(format!(
            "graphs are nested {depth} deep (a graph's action runs a graph, which runs a graph…); the limit is {MAX_GRAPH_DEPTH}"
        ));
    }
    let params = match serde_json::from_str::<Json>(&args.params) {
        Ok(Json::Object(m)) => m,
        Ok(_) => return refused("the graph's parameters must be a JSON object"),
        Err(e) => return refused(format!("the graph's parameters are not JSON: {e}")),
    };
    let specs = spaces(args);
    let Some(id) = graph_id(&specs, &args.graph) else {
        return refused(format!(
            "{} is no tool file of the project, user or system space",
            args.graph.display()
        ));
    };
    let sys = &OsSystem;
    let mut session = Session::open(sys, &specs, Settings::default());
    print_notices(&std::mem::take(&mut session.notices));
    let mut env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    env.insert(DEPTH_VAR.to_owned(), (depth + 1).to_string());
    // The caller's `--allow-unsigned`, as the runner handed it to this process.
    let allow_unsigned =
        std::env::var(crate::runner::execute::ALLOW_UNSIGNED).as_deref() == Ok("1");
    let policy = session.policy(allow_unsigned);
    let source = session.settle(env.clone(), |a, facts| {
        match graph_source(a, &id, &policy, facts) {
            GraphSource::Need(needs) => Err(needs),
            other => Ok(other),
        }
    });
    let (path, text) = match source {
        Ok(GraphSource::Ready { path, text }) => (path, text),
        Ok(GraphSource::Refused(e)) => return refused(e),
        Ok(GraphSource::Need(_)) => return refused("the graph could not be loaded"),
        Err(e) => return refused(e),
    };
    if path.canonicalize().ok() != args.graph.canonicalize().ok() {
        return refused(format!(
            "`{id}` resolves to {}, not to the graph file {} the runtime was given",
            path.display(),
            args.graph.display()
        ));
    }
    let doc: Json = match crate::parse::guard::yaml_from_str(&text) {
        Ok(doc) => doc,
        Err(e) => return refused(format!("the graph `{id}` does not parse: {e}")),
    };
    let graph = match Graph::from_document(&id, &doc) {
        Ok(g) => g,
        Err(e) => return refused(e),
    };
    let start = clock();
    let walk = match params.get("resume_run_id") {
        None | Some(Json::Null) => {
            let mut random = [0u8; 4];
            let _ = getrandom::getrandom(&mut random);
            let run_id =
                state_doc::new_run_id(&id, start.millis, u32::from_le_bytes(random) & 0xff_ffff);
            Walk::start(graph, &params, &run_id, &start)
        }
        Some(Json::String(run_id)) => match resume(&mut session, &id, run_id, allow_unsigned) {
            Ok(run) => Walk::resume(graph, &params, run),
            Err(e) => Err(e),
        },
        Some(_) => Err("`resume_run_id` must be a run id (a string)".to_owned()),
    };
    let mut walk = match walk {
        Ok(w) => w,
        Err(e) => return refused(e),
    };
    let signer = Signer::new(ctx, &session);
    let project = args.project.clone();
    let persist = |walk: &mut Walk, session: &Session<'_>| -> Result<(), String> {
        let outcome = signer.write(session, &project, walk.run());
        if let Some(w) = &signer.warning {
            walk.warn(w.clone());
        }
        outcome
    };
    if let Err(e) = persist(&mut walk, &session) {
        return refused(e);
    }
    let launcher = crate::runner::worker::Launcher::new(crate::runner::worker::program());
    loop {
        let step = walk.next(&clock());
        let step = match step {
            Next::Run { calls, parallel } => {
                let answers = if parallel && calls.len() > 1 {
                    run_parallel(&calls, &specs, &env, &launcher, allow_unsigned)
                } else {
                    calls
                        .iter()
                        .map(|c| run_call(&mut session, c, &env, allow_unsigned))
                        .collect()
                };
                walk.complete(answers, &clock())
            }
            other => other,
        };
        if let Err(e) = persist(&mut walk, &session) {
            let mut out = refused(format!("the run's state cannot be written: {e}"));
            if let Some(obj) = out.as_object_mut() {
                obj.insert("graph_run_id".to_owned(), json!(walk.run().run_id));
                obj.insert("steps".to_owned(), json!(walk.run().steps));
                obj.insert("state".to_owned(), Json::Object(walk.run().state.clone()));
            }
            launcher.close();
            return out;
        }
        if let Next::Done(done) = step {
            launcher.close();
            let mut answer = walk.answer_with_warnings(done);
            if let Some(obj) = answer.as_object_mut() {
                let run = walk.run();
                obj.insert(
                    "state_item".to_owned(),
                    json!(knowledge_id(&run.graph_id, &run.run_id)),
                );
            }
            return answer;
        }
    }
}

fn print_notices(notices: &[String]) {
    for n in notices {
        super::write_stderr(&format!("note: {n}\n"));
    }
}

/// A persisted run read back: found in the project as a knowledge item, verified under the
/// execution policy (an unsigned state is refused unless the person's policy accepts unsigned
/// items; a tampered one always is), and parsed.
fn resume(
    session: &mut Session<'_>,
    graph_id: &str,
    run_id: &str,
    allow_unsigned: bool,
) -> Result<Run, String> {
    if let Some(why) = run_id_problem(run_id) {
        return Err(format!("Cannot resume: `{run_id}` is no run id: {why}"));
    }
    let kid = knowledge_id(graph_id, run_id);
    let answer =
        session.execute_document(ItemKind::Knowledge, &kid, Map::new(), false, allow_unsigned)?;
    match answer {
        crate::exec::document::DocAnswer::Knowledge { data, .. } => {
            let body = data.get("body").and_then(Json::as_str).unwrap_or_default();
            let run = state_doc::parse(&data, body).map_err(|e| {
                format!(
                    "Cannot resume from .ai/{}: {e}",
                    state_rel(graph_id, run_id)
                )
            })?;
            if run.run_id != run_id {
                return Err(format!(
                    "Cannot resume: .ai/{} holds run `{}`, not `{run_id}`",
                    state_rel(graph_id, run_id),
                    run.run_id
                ));
            }
            Ok(run)
        }
        crate::exec::document::DocAnswer::Error { error, .. } => Err(format!(
            "Cannot resume run `{run_id}` of `{graph_id}`: {error}"
        )),
        _ => Err(format!("Cannot resume: {kid} is no knowledge entry")),
    }
}

/// One action through the executor, answered as `rye_execute` answers.
fn run_call(
    session: &mut Session<'_>,
    call: &Call,
    env: &BTreeMap<String, String>,
    allow_unsigned: bool,
) -> Json {
    match call.item_type.as_str() {
        "tool" => {
            let executed = session.execute(ExecCall {
                item_id: call.item_id.clone(),
                params: call.params.clone(),
                dry_run: false,
                trace: false,
                timeout: None,
                output_cap: crate::exec::DEFAULT_OUTPUT_CAP,
                allow_unsigned,
                use_lockfile: true,
                env: env.clone(),
            });
            print_notices(&std::mem::take(&mut session.notices));
            match executed {
                Ok(Executed::Answered(r)) => crate::render::exec::response(&r, None),
                Ok(Executed::DryRun(view)) => crate::render::exec::dry_run_response(&view, None),
                Ok(Executed::HttpDryRun(view, request)) => {
                    crate::render::exec::http_dry_run_response(&view, &request, None)
                }
                Err(e) => json!({"status": "error", "error": e}),
            }
        }
        kind => {
            let kind = if kind == "directive" {
                ItemKind::Directive
            } else {
                ItemKind::Knowledge
            };
            match session.execute_document(
                kind,
                &call.item_id,
                call.params.clone(),
                false,
                allow_unsigned,
            ) {
                Ok(a) => crate::render::exec::document_response(&a, None),
                Err(e) => json!({"status": "error", "error": e}),
            }
        }
    }
}

/// A parallel foreach's calls, at most `PARALLEL_LIMIT` at a time, each in a session of its own
/// whose processes run in a worker of their own (`runner::worker`: each run's orphans are its
/// worker's, however many run beside it). Answers in the calls' order.
fn run_parallel(
    calls: &[Call],
    specs: &[SpaceSpec],
    env: &BTreeMap<String, String>,
    launcher: &Arc<crate::runner::worker::Launcher>,
    allow_unsigned: bool,
) -> Vec<Json> {
    let answers: Mutex<Vec<Option<Json>>> = Mutex::new(vec![None; calls.len()]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_LIMIT.min(calls.len()) {
            scope.spawn(|| {
                let sys = &OsSystem;
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(call) = calls.get(i) else {
                        return;
                    };
                    let mut session = Session::open(sys, specs, Settings::default());
                    let mut worker = crate::runner::worker::Worker::new(
                        Arc::clone(launcher),
                        crate::runner::worker::Control::new(),
                    );
                    session.spawn_with(Box::new(move |plan| worker.run(plan)));
                    let answer = run_call(&mut session, call, env, allow_unsigned);
                    answers.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(answer);
                }
            });
        }
    });
    answers
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .map(|a| {
            a.unwrap_or_else(|| json!({"status": "error", "error": "the iteration did not run"}))
        })
        .collect()
}

/// The person's trusted signing key, if there is one, and what writing without one means.
struct Signer {
    key: Option<super::keys::SigningKeyPair>,
    /// Said once in the answer when the state is written unsigned.
    warning: Option<String>,
}

impl Signer {
    /// The key `ryechain sign` would use, only when the trust store trusts it: a graph run
    /// never makes or trusts a key (as an agent's `rye_sign`).
    fn new(ctx: &Context<'_>, session: &Session<'_>) -> Signer {
        let dir = super::keys::signing_dir(ctx)
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "the signing folder".to_owned());
        match super::keys::load_signing_key(ctx) {
            Ok(Some(pair))
                if session
                    .analysis()
                    .trust_store()
                    .lookup(&pair.fingerprint)
                    .is_some() =>
            {
                Signer {
                    key: Some(pair),
                    warning: None,
                }
            }
            Ok(Some(pair)) => Signer {
                key: None,
                warning: Some(format!(
                    "the run's state is written unsigned: the signing key {} is not trusted (`ryechain keys trust {}`); resuming an unsigned state is refused unless unsigned items may run",
                    pair.fingerprint,
                    pair.dir.join(super::keys::PUBLIC_KEY_FILE).display()
                )),
            },
            Ok(None) => Signer {
                key: None,
                warning: Some(format!(
                    "the run's state is written unsigned: no signing key in {dir} (`ryechain keys generate` makes one, never a graph run); resuming an unsigned state is refused unless unsigned items may run"
                )),
            },
            Err(e) => Signer {
                key: None,
                warning: Some(format!("the run's state is written unsigned: {e:#}")),
            },
        }
    }

    /// Write the run's state at `.ai/knowledge/graphs/<graph_id>/<run_id>.md` in the project,
    /// signed when there is a key, inside the space (no symlink followed out of it).
    fn write(&self, session: &Session<'_>, project: &Path, run: &Run) -> Result<(), String> {
        let (secs, _) = crate::runner::execute::now();
        let rel = state_rel(&run.graph_id, &run.run_id);
        let rel = crate::model::SpaceRel::new(&rel)?;
        let text = state_doc::render(run, &crate::integrity::timefmt::signature_timestamp(secs));
        let text = match &self.key {
            Some(pair) => {
                let fmt = session
                    .analysis()
                    .signature_format_at(ItemKind::Knowledge, rel.as_str());
                crate::integrity::sign_text(
                    ItemKind::Knowledge,
                    &fmt,
                    &text,
                    &pair.key,
                    &pair.fingerprint,
                    crate::integrity::timefmt::signature_timestamp(secs),
                )
                .map(|(signed, _)| signed)
                .map_err(str::to_owned)?
            }
            None => text,
        };
        crate::system::space_write::write_in_space(
            &project.join(".ai"),
            &rel,
            text.as_bytes(),
            0o644,
        )
        .map(drop)
        .map_err(|e| e.to_string())
    }
}
