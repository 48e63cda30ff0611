//! L6 `ryechain exec`: parses the request, loads only what the planner asks for, answers its
//! questions about the machine, runs the plan, writes the lockfile after a success, and prints the
//! seed-003 response (JSON on a pipe, a short human rendering on a terminal or with `--format human`).
#![allow(
    clippy::disallowed_methods,
    reason = "the exec edge reads the environment, the params file and writes lockfiles"
)]

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use serde_json::{Map, Value as Json};

use super::Context;
use crate::db::Settings;
use crate::exec::DEFAULT_OUTPUT_CAP;
use crate::exec::document::DocAnswer;
use crate::exec::response::Response;
use crate::runner::execute::{ExecCall, Executed, Session};

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExecFormat {
    Json,
    Human,
}

/// The kind of item `exec` runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExecType {
    /// Run a tool through its chain.
    Tool,
    /// Answer a directive's steps, inputs filled in, for the caller to follow.
    Directive,
    /// Answer a knowledge entry's metadata and body.
    Knowledge,
}

impl ExecType {
    /// The item kind of this type.
    pub fn kind(self) -> crate::integrity::ItemKind {
        match self {
            ExecType::Tool => crate::integrity::ItemKind::Tool,
            ExecType::Directive => crate::integrity::ItemKind::Directive,
            ExecType::Knowledge => crate::integrity::ItemKind::Knowledge,
        }
    }
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The item id (`rye/bash/bash`; a directive's or entry's id under `directives/` or
    /// `knowledge/`, without `.md`).
    #[arg(add = clap_complete::ArgValueCompleter::new(super::complete::tool_ids))]
    item: String,
    /// The project directory (containing `.ai/`).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Parameters for the tool: a JSON object, or `@FILE` to read one from a file.
    #[arg(long)]
    params: Option<String>,
    /// Build and validate the chain only (no signatures checked, nothing run).
    #[arg(long)]
    dry_run: bool,
    /// Add the trace of every resolution, verification and environment step to the response.
    #[arg(long)]
    trace: bool,
    /// Seconds before the tool is killed (replaces the runtime's `timeout`).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Bytes kept of each of the tool's stdout and stderr (default 8 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_OUTPUT_CAP)]
    max_output: usize,
    /// Run unsigned items (as `integrity.require_signatures: false` does).
    #[arg(long)]
    allow_unsigned: bool,
    /// Neither check nor write the tool's lockfile.
    #[arg(long)]
    no_lockfile: bool,
    /// Do not run the tool in a cgroup of its own (Linux): what it leaves behind is then ended
    /// through its process group and as orphans re-parented to ryechain only.
    #[arg(long)]
    no_cgroup: bool,
    /// Output format (default: human on a terminal, JSON otherwise).
    #[arg(long, value_enum)]
    format: Option<ExecFormat>,
    #[arg(long)]
    max_depth: Option<usize>,
    /// What the item is: a tool (default), a directive or a knowledge entry. Directives and
    /// knowledge run nothing: their signature is verified, and the answer is their content.
    #[arg(long = "type", value_enum, default_value = "tool")]
    item_type: ExecType,
}

/// The caller's parameters: a JSON object given inline or as `@FILE`.
fn read_params(
    sys: &dyn crate::system::System,
    raw: Option<&str>,
) -> Result<Map<String, Json>, String> {
    let Some(raw) = raw else {
        return Ok(Map::new());
    };
    let text = match raw.strip_prefix('@') {
        Some(file) => match sys.read(Path::new(file), crate::load::MAX_FILE_BYTES) {
            crate::system::ReadResult::Bytes(b) => String::from_utf8(b)
                .map_err(|_| format!("--params file {file} is not valid UTF-8"))?,
            crate::system::ReadResult::TooLarge(n) => {
                return Err(format!("--params file {file} is too large ({n} bytes)"));
            }
            crate::system::ReadResult::Error(e) => {
                return Err(format!("--params file {file} cannot be read: {e}"));
            }
        },
        None => raw.to_owned(),
    };
    match serde_json::from_str::<Json>(&text) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "--params must be a JSON object, not {}",
            match other {
                Json::Array(_) => "an array",
                Json::String(_) => "a string",
                Json::Number(_) => "a number",
                Json::Bool(_) => "a boolean",
                _ => "null",
            }
        )),
        Err(e) => Err(format!("--params is not valid JSON: {e}")),
    }
}

/// Print a response (seed 003's JSON, or its human rendering); exit 1 unless it succeeded.
fn print_answer(response: &Json, success: bool, format: ExecFormat) -> anyhow::Result<u8> {
    let text = match format {
        ExecFormat::Json => serde_json::to_string_pretty(response)?,
        ExecFormat::Human => crate::render::exec::human(response),
    };
    super::write_stdout(&format!("{text}\n"))?;
    Ok(u8::from(!success))
}

pub fn exec(ctx: &Context<'_>, args: &ExecArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    crate::memory::never_purge_freed_pages();
    let sys = ctx.sys;
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        ExecFormat::Human
    } else {
        ExecFormat::Json
    });
    // The whole call, timed by the edge.
    let ms = || Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    // In the shape of the answer the item's kind gives.
    let refused = |error: String| match args.item_type {
        ExecType::Tool => {
            let r = Response::refused(args.item.as_str(), error, Vec::new(), None);
            crate::render::exec::response(&r, ms())
        }
        _ => {
            let a = DocAnswer::Error {
                item_id: args.item.clone(),
                error,
                error_type: None,
                declared_inputs: None,
            };
            crate::render::exec::document_response(&a, ms())
        }
    };
    let params = match read_params(sys, args.params.as_deref()) {
        Ok(p) => p,
        Err(error) => {
            // A usage error (exit 2), answered in the response's shape for agents reading it.
            print_answer(&refused(error), false, format)?;
            return Ok(2);
        }
    };
    // An id that can never name a file is a usage error too (as in `chain`, `lock`, `verify`,
    // `sign`), answered in the planner's words.
    if let Some(reason) = crate::model::item_id_problem(&args.item) {
        let error = crate::message::invalid_item_id(&args.item, reason);
        print_answer(&refused(error), false, format)?;
        return Ok(2);
    }
    let timeout = match args.timeout {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t <= 1e9 => Some(Duration::from_secs_f64(t)),
        Some(t) => anyhow::bail!("--timeout must be a positive number of seconds, not {t}"),
    };
    let settings = Settings {
        max_depth: args.max_depth,
        ..Settings::default()
    };
    let (specs, notices) = ctx.spaces(&args.path)?;
    super::print_notices(&notices);
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    // Nothing a tool (or an interpreter probe) starts outlives its run: this process spawns
    // children only through `runner`, one at a time, so it may adopt and end their orphans.
    crate::runner::adopt_orphans();
    crate::runner::use_cgroups(!args.no_cgroup);
    // The database and the loader live until the process ends, which takes everything back at
    // once: dropping them piece by piece was a tenth of a millisecond of every run.
    let session = &mut *Box::leak(Box::new(Session::open(sys, &specs, settings)));
    super::print_notices(&std::mem::take(&mut session.notices));
    let document = (args.item_type != ExecType::Tool).then(|| args.item_type.kind());
    if let Some(kind) = document {
        let answer = session
            .execute_document(kind, &args.item, params, args.dry_run, args.allow_unsigned)
            .map_err(|e| anyhow::anyhow!(e))?;
        let json = crate::render::exec::document_response(&answer, ms());
        return print_answer(&json, answer.success(), format);
    }
    let executed = session.execute(ExecCall {
        item_id: args.item.clone(),
        params,
        dry_run: args.dry_run,
        trace: args.trace,
        timeout,
        output_cap: args.max_output,
        allow_unsigned: args.allow_unsigned,
        use_lockfile: !args.no_lockfile,
        env,
    });
    super::print_notices(&session.notices);
    match executed.map_err(|e| anyhow::anyhow!(e))? {
        Executed::DryRun(view) => {
            let json = crate::render::exec::dry_run_response(&view, ms());
            print_answer(&json, view.passed(), format)
        }
        Executed::HttpDryRun(view, request) => {
            let json = crate::render::exec::http_dry_run_response(&view, &request, ms());
            print_answer(&json, view.passed(), format)
        }
        Executed::Answered(r) => {
            let json = crate::render::exec::response(&r, ms());
            print_answer(&json, r.success(), format)
        }
    }
}
