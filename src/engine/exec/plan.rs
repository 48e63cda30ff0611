//! L5 the execution pipeline of §12.3 as a pure function of (database, request, facts): lockfile
//! check → chain → integrity of every element under the execution policy → validation (the lint
//! rules) → anchor + verify_deps → env → CONFIG_RESOLVE → config and templating → the plan the
//! subprocess primitive runs, or the request the HTTP client primitive sends (`exec::http`). It
//! never spawns or reads: it answers with a `Step` — questions for the edge, a final answer (a
//! refusal or a dry run), or a plan to run or send.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::analysis::Analysis;
use crate::analysis::chain_view::ChainView;
use crate::analysis::verify::{ChainVerification, Policy};
use crate::exec::anchor::{AnchorElement, anchor_lib_problem, plan_anchor};
use crate::exec::config_resolve::{inject, resolve_config};
use crate::exec::env::{EnvElement, EnvOutcome, resolve_chain_env};
use crate::exec::facts::{Ask, Facts, Need};
use crate::exec::http::{HTTP_CLIENT_ID, HttpInput, HttpPrepared, plan_http};
use crate::exec::outcome::tool_result;
use crate::exec::response::{End, Response, TraceEvent};
use crate::exec::template::build_config;
use crate::integrity::lockfile::{LockCheck, lockfile_rel};
use crate::message;
use crate::model::item_id_problem;

/// One `rye_execute` call for a tool (§12.1), as the edge parsed it.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    pub item_id: String,
    /// The project directory (contains `.ai/`).
    pub project_path: PathBuf,
    /// The user space base directory (`None`: no user space).
    pub user_space: Option<PathBuf>,
    /// The first system bundle's root directory (`None` for the embedded bundle), §8.4.
    pub system_space: Option<PathBuf>,
    /// Caller parameters (a JSON object).
    pub params: Map<String, Json>,
    pub dry_run: bool,
    pub trace: bool,
    /// `--timeout`: replaces the configured timeout.
    pub timeout: Option<Duration>,
    pub output_cap: usize,
    pub policy: Policy,
    /// Check the lockfile before running and write one after a successful run (§10.7).
    pub use_lockfile: bool,
}

/// What the planner says next.
#[derive(Clone, Debug)]
pub enum Step {
    /// Answer these questions (load these items, probe these paths...) and plan again.
    Need(Vec<Need>),
    /// Refused: nothing to spawn.
    Refused(Box<Response>),
    /// A dry run (§12.4): the chain, built and validated, for the edge to render.
    DryRun(Box<ChainView>),
    /// Spawn this.
    Run(Box<Prepared>),
    /// Send this HTTP request (§9.3), or show it (a dry run of an HTTP chain).
    Http(Box<crate::exec::http::HttpPrepared>),
}

/// A plan ready to run, with what the response needs afterwards.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub plan: super::ExecutionPlan,
    /// Chain item ids, tool first.
    pub chain: Vec<String>,
    /// Trace events so far (`None` when no trace was asked for).
    pub trace: Option<Vec<TraceEvent>>,
    /// Warnings the run carries (validation warnings, unsigned CONFIG_RESOLVE files...).
    pub warnings: Vec<String>,
    /// Whether a lockfile was found and checked before the run.
    pub lockfile_used: bool,
    /// The lockfile to write after a successful run: (path relative to `.ai/`, version).
    pub lockfile_due: Option<(crate::model::SpaceRel, String)>,
}

/// Trace events (§11.2), kept only when asked for.
struct Trace(Option<Vec<TraceEvent>>);

impl Trace {
    fn push(&mut self, event: TraceEvent) {
        if let Some(events) = &mut self.0 {
            events.push(event);
        }
    }
}

/// The error response of §12.3: the error, the item, the chain so far and the trace.
fn refuse(req: &ExecRequest, error: impl Into<String>, chain: &[String], trace: Trace) -> Step {
    Step::Refused(Box::new(Response::refused(
        req.item_id.as_str(),
        error,
        chain.to_vec(),
        trace.0,
    )))
}

/// The `resolve` trace events of a chain (§11.2): every element, with the lower-precedence
/// candidates it hides. A primitive resolved by key has no path.
fn resolve_events(view: &ChainView) -> Vec<TraceEvent> {
    view.elements
        .iter()
        .map(|e| TraceEvent::Resolve {
            item_id: e.item_id.clone(),
            path: e.path.clone(),
            space: e.space.clone(),
            shadowed: e.shadowed.clone(),
        })
        .collect()
}

/// The `verify_integrity` trace events (§11.2): one per element with a file, `verified: false`
/// included when it fails (the open point decided as recommended).
fn verify_events(v: &ChainVerification, policy: &Policy) -> Vec<TraceEvent> {
    v.files
        .iter()
        .map(|f| TraceEvent::VerifyIntegrity {
            item_id: f.item_id.clone(),
            path: f.path.clone(),
            verified: f.verdict.passed(),
            accepted: policy.accepts(&f.verdict),
            key_fp: f.verdict.key_fp().map(str::to_owned),
        })
        .collect()
}

/// Rules whose finding the pipeline reports itself, with the reference's text, at its own stage.
const REPORTED_ELSEWHERE: &[&str] = &["unknown-primitive"];

/// The lockfile check (§10.7) with lazy loading: the root, its lockfile and every id the lockfile
/// names must be loaded first. `None` while something is still to be loaded.
fn lockfile_stage(a: Analysis<'_>, req: &ExecRequest, ask: &Ask<'_>) -> Option<LockCheck> {
    if !ask.item_loaded(&req.item_id) {
        return None;
    }
    let Some(version) = a.root_version(&req.item_id) else {
        return Some(LockCheck::NoLockfile);
    };
    // A version that makes no lockfile name (§10.7, DESIGN.md): no lockfile to check; the run
    // says why none is written.
    let Ok(rel) = lockfile_rel(&req.item_id, &version) else {
        return Some(LockCheck::NoLockfile);
    };
    if !ask.space_file_loaded(rel.as_str()) {
        return None;
    }
    if let Some(ids) = a.lockfile_ids(&req.item_id, &version) {
        let mut all = true;
        for id in ids.iter().filter(|id| item_id_problem(id).is_none()) {
            all &= ask.item_loaded(id);
        }
        if !all {
            return None;
        }
    }
    Some(a.check_lockfile(&req.item_id))
}

/// Plan one call. Pure: the same database, request and facts give the same step.
pub fn plan(a: Analysis<'_>, req: &ExecRequest, facts: &Facts) -> Step {
    let ask = Ask::new(facts);
    let mut trace = Trace(req.trace.then(Vec::new));
    let id = req.item_id.as_str();
    if let Some(reason) = item_id_problem(id) {
        return refuse(req, message::invalid_item_id(id, reason), &[], trace);
    }

    // §12.4: the dry run builds and validates only (no lockfile, no signatures).
    if req.dry_run {
        let needs = a.item_chain_needs(id, &facts.items);
        if !needs.is_empty() {
            return Step::Need(needs.into_iter().map(Need::Item).collect());
        }
        let view = a.chain(id);
        // An HTTP chain's dry run goes on to build the request it would send (still no
        // lockfile, no signatures, nothing sent).
        if !(view.passed() && view.run_error().is_none() && ends_at_http(&view)) {
            return Step::DryRun(Box::new(view));
        }
    }

    // 1. Lockfile check, before the chain is built (§10.7).
    let mut lockfile_used = false;
    let mut lockfile_due = None;
    if req.use_lockfile && !req.dry_run {
        let Some(check) = lockfile_stage(a, req, &ask) else {
            return Step::Need(ask.needs());
        };
        match check {
            // The reference's text first, then which file and what fixes it.
            LockCheck::Failed { message, file } => {
                let message = format!(
                    "{message} (lockfile: {}; delete it, or rewrite it from the current files with `ryechain lock {} --force`)",
                    a.path(file).display(),
                    req.item_id
                );
                return refuse(req, message, &[], trace);
            }
            LockCheck::Ok { .. } => lockfile_used = true,
            LockCheck::NoLockfile => {}
        }
    }

    // 2. The chain (§3), loading each element's candidates on demand.
    let needs = a.item_chain_needs(id, &facts.items);
    if !needs.is_empty() {
        return Step::Need(needs.into_iter().map(Need::Item).collect());
    }
    let view = a.chain(id);
    if !view.found {
        return refuse(req, message::tool_not_found(id), &[], trace);
    }
    let ids: Vec<String> = view.elements.iter().map(|e| e.item_id.clone()).collect();
    for e in resolve_events(&view) {
        trace.push(e);
    }
    if let Some(err) = &view.error {
        return refuse(req, err.clone(), &ids, trace);
    }

    // 3. Integrity of every element under the execution policy, before anything is spawned or
    // sent (a dry run checks none, §12.4).
    if !req.dry_run {
        let Some(verification) = a.verify_chain(id, &[]) else {
            return refuse(req, message::tool_not_found(id), &[], trace);
        };
        for e in verify_events(&verification, &req.policy) {
            trace.push(e);
        }
        if let Some(err) = verification.refusal(&req.policy) {
            return refuse(req, err.to_owned(), &ids, trace);
        }
    }

    // 4. Validation: every error finding of the lint rules on the chain refuses, naming the rule.
    let (errors, warnings) = a.chain_findings(id, REPORTED_ELSEWHERE);
    if !errors.is_empty() {
        let msg = message::chain_validation_failed(&errors);
        return refuse(req, msg, &ids, trace);
    }

    // §3.4: the chain must end at a registered primitive.
    if let Some(err) = view.run_error() {
        return refuse(req, err, &ids, trace);
    }
    let root_meta = view.elements.first().and_then(|e| e.metadata.clone());
    if root_meta.as_ref().and_then(|m| m.tool_type_str()) == Some("runtime") {
        return refuse(req, NotRun::RuntimeCalledDirectly.message(id), &ids, trace);
    }
    let mut warnings = warnings;
    if req.use_lockfile
        && !req.dry_run
        && !lockfile_used
        && let Some(version) = a.root_version(id)
    {
        match lockfile_rel(id, &version) {
            Ok(rel) => lockfile_due = Some((rel, version)),
            Err(why) => warnings.push(format!("{why}; none is written")),
        }
    }
    let primitive = view.elements.last().map_or("", |e| e.item_id.as_str());
    let http = primitive == HTTP_CLIENT_ID;
    if !SUBPROCESS_IDS.contains(&primitive) && !http {
        let msg = format!(
            "The primitive `{primitive}` is not available in ryechain yet; only the subprocess primitive ({}) and {HTTP_CLIENT_ID} run tools",
            SUBPROCESS_IDS.join(", ")
        );
        return refuse(req, msg, &ids, trace);
    }

    // 5. Anchor (§6.1–6.4) and verify_deps (§6.6): dependencies are verified before any env work.
    let elements = AnchorElement::from_chain(&view);
    let text = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let project = req.project_path.display().to_string();
    if let Some(problem) = anchor_lib_problem(&elements) {
        return refuse(req, problem, &ids, trace);
    }
    let Some(anchor) = plan_anchor(
        &elements,
        &project,
        &text(&req.user_space),
        &text(&req.system_space),
        &ask,
    ) else {
        return Step::Need(ask.needs());
    };
    match anchor.dependencies(&ask) {
        None => return Step::Need(ask.needs()),
        Some(Err(e)) => return refuse(req, e, &ids, trace),
        Some(Ok(deps)) if !deps.is_empty() && !req.dry_run => {
            let Some(v) = a.verify_chain(id, &deps) else {
                return refuse(req, message::tool_not_found(id), &ids, trace);
            };
            let extra = &v.files[v.files.len() - deps.len()..];
            for f in extra {
                trace.push(TraceEvent::VerifyIntegrity {
                    item_id: None,
                    path: f.path.clone(),
                    verified: f.verdict.passed(),
                    accepted: req.policy.accepts(&f.verdict),
                    key_fp: f.verdict.key_fp().map(str::to_owned),
                });
            }
            if let Some(err) = extra
                .iter()
                .find(|f| !req.policy.accepts(&f.verdict))
                .and_then(|f| f.error.as_deref())
            {
                return refuse(req, err.to_owned(), &ids, trace);
            }
        }
        Some(Ok(_)) => {}
    }

    // 6. The environment (§5), merged primitive → runtime → tool, then the anchor's env_paths.
    let env_configs: Vec<Option<Json>> = view
        .elements
        .iter()
        .map(|e| {
            e.metadata
                .as_ref()
                .and_then(|m| m.env_config().map(|v| v.value.to_json()))
        })
        .collect();
    let env_elements: Vec<EnvElement<'_>> = view
        .elements
        .iter()
        .zip(&env_configs)
        .map(|(e, cfg)| EnvElement {
            item_id: &e.item_id,
            env_config: cfg.as_ref(),
        })
        .collect();
    let vars = anchor.context.entries();
    let chain_env = match resolve_chain_env(&env_elements, &req.project_path, &vars, &ask) {
        EnvOutcome::Pending => return Step::Need(ask.needs()),
        EnvOutcome::Unresolved(u) => return refuse(req, u.message, &ids, trace),
        EnvOutcome::Ready(ce) => ce,
    };
    for c in &chain_env.contributions {
        trace.push(TraceEvent::ResolveEnv {
            contributed_by: c.item_id.clone(),
            keys: c.keys.clone(),
        });
    }
    let mut env = chain_env.env;
    anchor.apply_env(&mut env, ask.env());

    // 7. CONFIG_RESOLVE (§7.3): the tool's config files, injected as `resolved_config`.
    let mut params = req.params.clone();
    if let Some(decl) = root_meta.as_ref().and_then(|m| m.config_resolve()) {
        match resolve_config(a, &decl.value, &ask) {
            None => return Step::Need(ask.needs()),
            Some(Err(e)) => return refuse(req, e, &ids, trace),
            Some(Ok(resolved)) => {
                warnings.extend(resolved.warnings.iter().cloned());
                inject(&mut params, &resolved);
            }
        }
    }

    // 8. Config building and templating (§8.2–8.3): caller values are data, never templates.
    let configs: Vec<Json> = view
        .elements
        .iter()
        .map(|e| {
            e.metadata
                .as_ref()
                .and_then(|m| m.config().map(|v| v.value.to_json()))
                .unwrap_or(Json::Null)
        })
        .collect();
    let config_refs: Vec<&Json> = configs.iter().collect();
    let anchor_cwd = anchor.cwd();
    let mut context: Vec<(&str, &str)> = vars.to_vec();
    if let Some(cwd) = &anchor_cwd {
        context.push(("cwd", cwd));
    }
    let config = build_config(&config_refs, &params, &context, &env);
    if http {
        let input = HttpInput {
            element_configs: &config_refs,
            config: &config,
            params: &req.params,
            env: &env,
            timeout: req.timeout,
            output_cap: req.output_cap,
        };
        return match plan_http(&input) {
            Err(e) => refuse(req, e, &ids, trace),
            Ok((plan, more)) => {
                warnings.extend(more);
                Step::Http(Box::new(HttpPrepared {
                    plan,
                    chain: ids,
                    trace: trace.0,
                    warnings,
                    lockfile_used,
                    lockfile_due,
                    dry_run: req.dry_run.then(|| Box::new(view)),
                }))
            }
        };
    }
    match plan_from_config(req, &config, env) {
        Err(e) => refuse(req, e, &ids, trace),
        Ok(plan)
            if !runs_the_tool(
                &plan,
                &anchor.context.tool_path,
                configs.first().unwrap_or(&Json::Null),
                &config,
            ) =>
        {
            let not_run = NotRun::ToolNotNamed {
                plan: &plan,
                tool_path: &anchor.context.tool_path,
                runtime: ids.get(1).map_or("", String::as_str),
            };
            refuse(req, not_run.message(id), &ids, trace)
        }
        Ok(plan) => {
            // §13: the MCP server config the chain names is checked and verified before the
            // runtime is spawned (`exec::mcp_server`).
            let input = crate::exec::mcp_server::Input {
                config: &config,
                item_id: id,
                project: &req.project_path,
                user: req.user_space.as_deref(),
                system: req.system_space.as_deref(),
                policy: &req.policy,
            };
            match crate::exec::mcp_server::check(a, &input, &ask) {
                None => Step::Need(ask.needs()),
                Some(Err(e)) => refuse(req, e, &ids, trace),
                Some(Ok(checked)) => {
                    for e in checked.trace {
                        trace.push(e);
                    }
                    Step::Run(Box::new(Prepared {
                        plan,
                        chain: ids,
                        trace: trace.0,
                        warnings,
                        lockfile_used,
                        lockfile_due,
                    }))
                }
            }
        }
    }
}

/// Why a chain would run without running its tool: a run that did not run the tool is never a
/// success, so the planner refuses these before anything is spawned. The texts live here only.
enum NotRun<'a> {
    /// The item called is a runtime: its `{tool_path}` is its own YAML file.
    RuntimeCalledDirectly,
    /// The final command line names neither the tool's file nor anything of the tool's own config
    /// (the reference's `node_runtime.yaml` with `args: []`, §15.40).
    ToolNotNamed {
        plan: &'a super::ExecutionPlan,
        tool_path: &'a str,
        runtime: &'a str,
    },
}

impl NotRun<'_> {
    fn message(&self, id: &str) -> String {
        match self {
            NotRun::RuntimeCalledDirectly => format!(
                "`{id}` is a runtime: it runs the tools whose executor_id names it and has no \
                 tool of its own, so calling it directly would run nothing but its own YAML file; \
                 run one of its tools instead"
            ),
            NotRun::ToolNotNamed {
                plan,
                tool_path,
                runtime,
            } => format!(
                "The chain of {id} never runs {id}: its command line `{}` does not name the tool \
                 file {tool_path}, and the tool's own config supplies none of it; the runtime \
                 `{runtime}` must pass `{{tool_path}}` in its `args` or `input_data` (or the tool's \
                 config set `command`)",
                command_line(plan)
            ),
        }
    }
}

/// The plan's program and arguments as a shell would show them, long arguments shortened.
fn command_line(plan: &super::ExecutionPlan) -> String {
    const LONG: usize = 60;
    std::iter::once(&plan.program)
        .chain(&plan.args)
        .map(|a| {
            let short = match a.char_indices().nth(LONG) {
                Some((at, _)) => format!("{}…", &a[..at]),
                None => a.clone(),
            };
            let plain = !short.is_empty()
                && short
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_…{}".contains(c));
            if plain {
                short
            } else {
                crate::exec::template::shlex_quote(&short)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the final command line runs the tool: it names the tool's file — its path in the
/// program, an argument or the stdin text; its file name or module stem as an argument while the
/// tool's directory is the working directory or an entry of a `:`-list in the environment
/// (`PYTHONPATH`, `NODE_PATH`); or `package.stem` while the package's parent is — or the tool's
/// own config shapes it: it sets
/// `command`, `args` or `input_data`, or one of its string values (as templated) is the program
/// or an argument (an MCP tool's `tool_name` and `server_config_path`). A chain element without
/// a file has nothing to name.
fn runs_the_tool(
    plan: &super::ExecutionPlan,
    tool_path: &str,
    tool_config: &Json,
    config: &Map<String, Json>,
) -> bool {
    if tool_path.is_empty() {
        return true;
    }
    let line = || std::iter::once(&plan.program).chain(&plan.args);
    let stdin = plan.stdin.as_deref().map(String::from_utf8_lossy);
    if line().any(|a| a.contains(tool_path)) || stdin.is_some_and(|s| s.contains(tool_path)) {
        return true;
    }
    let path = std::path::Path::new(tool_path);
    let looked_in = |dir: &std::path::Path| {
        plan.cwd.as_deref() == Some(dir)
            || plan
                .env
                .values()
                .any(|v| v.split(':').any(|e| std::path::Path::new(e) == dir))
    };
    if let (Some(dir), Some(name), Some(stem)) = (
        path.parent(),
        path.file_name().and_then(|n| n.to_str()),
        path.file_stem().and_then(|n| n.to_str()),
    ) {
        if looked_in(dir) && line().any(|a| a == name || a == stem) {
            return true;
        }
        if let (Some(base), Some(package)) =
            (dir.parent(), dir.file_name().and_then(|n| n.to_str()))
        {
            let module = format!("{package}.{stem}");
            if looked_in(base) && line().any(|a| *a == module) {
                return true;
            }
        }
    }
    let Json::Object(own) = tool_config else {
        return false;
    };
    if ["command", "args", "input_data"]
        .iter()
        .any(|k| own.contains_key(*k))
    {
        return true;
    }
    own.keys()
        .filter_map(|k| config.get(k).and_then(Json::as_str))
        .filter(|v| !v.is_empty())
        .any(|v| line().any(|a| a == v))
}

/// The chain ends at the HTTP client primitive (§9.3).
fn ends_at_http(view: &ChainView) -> bool {
    view.elements
        .last()
        .is_some_and(|e| e.item_id == HTTP_CLIENT_ID)
}

/// Ids of the subprocess primitive (DESIGN.md: `execute` is its seed-001 alias).
const SUBPROCESS_IDS: &[&str] = &[
    "rye/core/primitives/subprocess",
    "rye/core/primitives/execute",
];

/// The subprocess primitive's config (§9.1) as a plan, with the clear errors §9.1.9 asks for
/// instead of the reference's internal exceptions. The primitive's own second templating round is
/// not repeated: it would expand `${…}` and `{…}` inside caller data (§15.24).
fn plan_from_config(
    req: &ExecRequest,
    config: &Map<String, Json>,
    env: std::collections::BTreeMap<String, String>,
) -> Result<super::ExecutionPlan, String> {
    let program = match config.get("command") {
        Some(Json::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Json::String(_)) | None | Some(Json::Null) => {
            return Err("No command specified: the chain's config has no `command` (or it templated to an empty string)".to_owned());
        }
        Some(other) => {
            return Err(format!(
                "The configured `command` must be a string, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    let args = match config.get("args") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, a) in items.iter().enumerate() {
                match a {
                    Json::String(s) => out.push(s.clone()),
                    Json::Number(n) => out.push(n.to_string()),
                    other => {
                        return Err(format!(
                            "The configured `args` must be strings: argument {} is {}",
                            i + 1,
                            crate::message::json_type(other)
                        ));
                    }
                }
            }
            out
        }
        Some(other) => {
            return Err(format!(
                "The configured `args` must be a list, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    let cwd = match config.get("cwd") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) if s.is_empty() => None,
        Some(Json::String(s)) => Some(req.project_path.join(s)),
        Some(other) => {
            return Err(format!(
                "The configured `cwd` must be a string, not {}",
                crate::message::json_type(other)
            ));
        }
    };
    // §9.1.5: stdin is fed only when there is input; otherwise it is null (never the caller's).
    let stdin = match config.get("input_data") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) if s.is_empty() => None,
        Some(Json::String(s)) => Some(s.clone().into_bytes()),
        Some(other) => Some(other.to_string().into_bytes()),
    };
    let timeout = match req.timeout {
        Some(t) => t,
        None => match config.get("timeout") {
            None | Some(Json::Null) => super::DEFAULT_TIMEOUT,
            Some(Json::Number(n)) => match n.as_f64() {
                Some(s) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s),
                _ => {
                    return Err(format!(
                        "The configured `timeout` must be a positive number of seconds, not {n}"
                    ));
                }
            },
            Some(other) => {
                return Err(format!(
                    "The configured `timeout` must be a number of seconds, not {}",
                    crate::message::json_type(other)
                ));
            }
        },
    };
    Ok(super::ExecutionPlan {
        program,
        args,
        env,
        cwd,
        stdin,
        timeout,
        output_cap: req.output_cap,
    })
}

/// The response after the primitive ran (§12.3, §9.2): success or error with the tool's data,
/// the chain, the lockfile flags (`lockfile_created` is the edge's, after it writes one),
/// warnings and the trace.
pub fn finish(req: &ExecRequest, prepared: &Prepared, outcome: &super::ProcessOutcome) -> Response {
    let result = tool_result(&prepared.plan, outcome);
    ran(
        &req.item_id,
        &prepared.chain,
        &prepared.warnings,
        &prepared.trace,
        prepared.lockfile_used,
        result,
    )
}

/// The response of a chain that ran (a process or a request): the chain, its warnings and the
/// result's, the trace, whether a lockfile was checked (`lockfile_created` is the edge's).
pub(crate) fn ran(
    item_id: &str,
    chain: &[String],
    warnings: &[String],
    trace: &Option<Vec<TraceEvent>>,
    lockfile_used: bool,
    result: crate::exec::outcome::ToolResult,
) -> Response {
    let mut warnings = warnings.to_vec();
    warnings.extend(result.warnings);
    Response {
        item_id: item_id.to_owned(),
        chain: chain.to_vec(),
        end: End::Ran {
            success: result.success,
            error: result.error,
            data: result.data,
            lockfile_used,
            lockfile_created: false,
        },
        warnings,
        trace: trace.clone(),
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::exec::ExecutionPlan;

    const TOOL: &str = "/p/.ai/tools/t/greet.py";

    fn plan(program: &str, args: &[&str]) -> ExecutionPlan {
        ExecutionPlan {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: None,
            stdin: None,
            timeout: Duration::from_secs(1),
            output_cap: 1,
        }
    }

    fn runs(p: &ExecutionPlan) -> bool {
        runs_the_tool(p, TOOL, &Json::Null, &Map::new())
    }

    #[test]
    fn the_path_anywhere_in_the_command_line_or_stdin_names_the_tool() {
        assert!(runs(&plan("python3", &[TOOL, "--project-path", "/p"])));
        assert!(runs(&plan(
            "python3",
            &["-c", "...", &format!("--file={TOOL}")]
        )));
        let mut p = plan("python3", &["-"]);
        p.stdin = Some(format!("exec(open({TOOL:?}).read())").into_bytes());
        assert!(runs(&p));
        assert!(!runs(&plan("node", &[])));
        assert!(!runs(&plan("python3", &["/p/.ai/tools/t/other.py"])));
    }

    #[test]
    fn the_module_or_file_name_names_the_tool_where_the_process_looks() {
        let mut p = plan("python3", &["-m", "greet"]);
        assert!(!runs(&p), "no directory of the tool in sight");
        p.env
            .insert("PYTHONPATH".into(), "/x:/p/.ai/tools/t".into());
        assert!(runs(&p));
        let mut p = plan("python3", &["-m", "t.greet"]);
        p.env.insert("PYTHONPATH".into(), "/p/.ai/tools/t".into());
        assert!(!runs(&p), "`t.greet` is found from the package's parent");
        p.env.insert("PYTHONPATH".into(), "/p/.ai/tools".into());
        assert!(runs(&p));
        let mut p = plan("python3", &["greet.py"]);
        p.cwd = Some(PathBuf::from("/p/.ai/tools/t"));
        assert!(runs(&p));
        p.cwd = Some(PathBuf::from("/p"));
        assert!(!runs(&p));
    }

    #[test]
    fn the_tools_own_config_shaping_the_command_line_runs_it() {
        let p = plan("python3", &["connect.py", "--tool", "list_issues"]);
        let config: Map<String, Json> = [("tool_name".to_owned(), json!("list_issues"))]
            .into_iter()
            .collect();
        assert!(runs_the_tool(&p, TOOL, &json!({"tool_name": "x"}), &config));
        assert!(!runs_the_tool(&p, TOOL, &json!({"other": "x"}), &config));
        assert!(runs_the_tool(&p, TOOL, &json!({"command": "git"}), &config));
        assert!(runs_the_tool(
            &p,
            TOOL,
            &json!({"input_data": "x"}),
            &config
        ));
        assert!(
            runs_the_tool(&plan("node", &[]), "", &Json::Null, &Map::new()),
            "an element without a file has nothing to name"
        );
    }

    #[test]
    fn the_refusal_shows_the_command_line_shortened_and_quoted() {
        let long = "x".repeat(100);
        let p = plan("/bin/python3", &["-c", &long, "a b", "it's"]);
        assert_eq!(
            command_line(&p),
            format!("/bin/python3 -c {}… 'a b' 'it'\"'\"'s'", "x".repeat(60))
        );
    }
}
