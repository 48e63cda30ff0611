//! L6 one `rye_execute` of a tool (§12.3), for every edge that offers it (`ryechain exec`, the MCP
//! server): open the spaces lazily, plan, answer the planner's questions (items through the
//! loader, the rest through the machine), run the plan, write the lockfile after a success. It
//! answers in data (`Executed`); the caller renders it.
#![allow(
    clippy::disallowed_methods,
    reason = "the execution edge reads the clock and writes lockfiles"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::analysis::chain_view::ChainView;
use crate::analysis::{Analysis, Host};
use crate::db::{Change, Settings};
use crate::exec::document::{DocAnswer, DocRequest, DocStep, plan_document};
use crate::exec::facts::{Facts, Need};
use crate::exec::load::{LoadAnswer, LoadRequest, LoadStep, plan_load};
use crate::exec::plan::{ExecRequest, Step, finish, plan};
use crate::exec::response::{End, Response};
use crate::load::{ItemLoader, SpaceSource, SpaceSpec};
use crate::model::{Space, SpaceKind};
use crate::system::System;

/// Planning rounds before giving up (each round answers every question the planner asked; a
/// chain of 10 elements with anchors and CONFIG_RESOLVE needs about a dozen).
const MAX_ROUNDS: usize = 64;

/// What the caller asks for, beside the spaces.
#[derive(Clone, Debug)]
pub struct ExecCall {
    pub item_id: String,
    pub params: Map<String, Json>,
    pub dry_run: bool,
    pub trace: bool,
    /// Replaces the configured timeout.
    pub timeout: Option<Duration>,
    pub output_cap: usize,
    /// Run unsigned items (as `integrity.require_signatures: false` does).
    pub allow_unsigned: bool,
    /// Check the lockfile before running and write one after a success (§10.7).
    pub use_lockfile: bool,
    /// The process environment the tool's env is resolved from.
    pub env: BTreeMap<String, String>,
}

/// How a call ended.
#[derive(Debug)]
pub enum Executed {
    /// The dry run's chain, built and validated (§12.4).
    DryRun(Box<ChainView>),
    /// Refused, or run.
    Answered(Box<Response>),
}

/// What starts a plan's process and answers what it did (`runner::run`, or a worker's).
pub type Spawn<'s> = dyn FnMut(&crate::exec::ExecutionPlan) -> crate::exec::ProcessOutcome + 's;

/// The spaces of one call, loaded lazily: only what the planner asks for is read.
pub struct Session<'s> {
    sys: &'s dyn System,
    host: Host,
    loader: ItemLoader<'s>,
    specs: Vec<SpaceSpec>,
    /// What starts the call's processes (the tool, and the commands the planner asks about):
    /// `runner::run` in this process unless `spawn_with` named another (the MCP server's
    /// per-call worker, `runner::worker`).
    spawn: Option<Box<Spawn<'s>>>,
    /// What the person should know that is about no one file (a missing space, the execution
    /// policy's notices), in the order met.
    pub notices: Vec<String>,
}

impl<'s> Session<'s> {
    pub fn open(sys: &'s dyn System, specs: &[SpaceSpec], settings: Settings) -> Session<'s> {
        let (loader, outcome) = ItemLoader::new(sys, specs);
        let mut host = Host::new();
        let mut change = outcome.change;
        change.settings = Some(settings);
        host.apply(change);
        let mut notices = outcome.notices;
        notices.extend(host.analysis().policy_notices());
        Session {
            sys,
            host,
            loader,
            specs: specs.to_vec(),
            spawn: None,
            notices,
        }
    }

    /// Start this session's processes with `spawn` instead of `runner::run`.
    pub fn spawn_with(&mut self, spawn: Box<Spawn<'s>>) {
        self.spawn = Some(spawn);
    }

    fn spawn(&mut self, plan: &crate::exec::ExecutionPlan) -> crate::exec::ProcessOutcome {
        match &mut self.spawn {
            Some(spawn) => spawn(plan),
            None => super::run(plan),
        }
    }

    /// The execution policy (`allow_unsigned`: the person's `--allow-unsigned`).
    pub fn policy(&self, allow_unsigned: bool) -> crate::analysis::verify::Policy {
        self.host.analysis().policy(allow_unsigned)
    }

    fn dir_of(&self, pick: impl Fn(&Space) -> bool) -> Option<PathBuf> {
        self.specs.iter().find_map(|s| match &s.source {
            SpaceSource::Dir(dir) if pick(&s.space) => Some(dir.clone()),
            _ => None,
        })
    }

    /// Run one call. `Err`: the session has no project space, or the planner did not settle (a
    /// bug); every answer about the tool, refusals included, is `Ok`.
    pub fn execute(&mut self, call: ExecCall) -> Result<Executed, String> {
        let project = self
            .dir_of(|s| matches!(s, Space::Project))
            .ok_or("no project space")?;
        let req = ExecRequest {
            item_id: call.item_id,
            project_path: project.clone(),
            user_space: self.dir_of(|s| matches!(s, Space::User)),
            system_space: self.dir_of(|s| matches!(s, Space::System { .. })),
            params: call.params,
            dry_run: call.dry_run,
            trace: call.trace,
            timeout: call.timeout,
            output_cap: call.output_cap,
            policy: self.host.analysis().policy(call.allow_unsigned),
            use_lockfile: call.use_lockfile,
        };
        let mut env = call.env;
        with_ryechain_exe(&mut env);
        let mut facts = Facts::lazy(env);
        for _ in 0..MAX_ROUNDS {
            match plan(self.host.analysis(), &req, &facts) {
                Step::Need(needs) => self.answer_needs(&needs, &mut facts),
                Step::DryRun(view) => return Ok(Executed::DryRun(view)),
                Step::Refused(mut r) => {
                    if matches!(&r.end, End::Refused { error } if *error == crate::message::tool_not_found(&req.item_id))
                    {
                        r.hint = self.nearest_hint(&req.item_id);
                    }
                    return Ok(Executed::Answered(r));
                }
                Step::Run(prepared) => {
                    let outcome = self.spawn(&prepared.plan);
                    let mut r = finish(&req, &prepared, &outcome);
                    if r.success()
                        && let Some((rel, _version)) = &prepared.lockfile_due
                    {
                        let created =
                            write_lockfile(self.host.analysis(), &req.item_id, &project, rel);
                        if let End::Ran {
                            lockfile_created, ..
                        } = &mut r.end
                        {
                            *lockfile_created = created.is_ok();
                        }
                        if let Err(e) = created {
                            self.notices
                                .push(format!("the lockfile was not written: {e}"));
                        }
                    }
                    return Ok(Executed::Answered(Box::new(r)));
                }
            }
        }
        Err(format!(
            "planning `{}` did not settle after {MAX_ROUNDS} rounds (a bug in ryechain)",
            req.item_id
        ))
    }

    /// Execute a directive or a knowledge entry in the caller's thread (§12.5, §12.6): nothing
    /// runs; the item is found, verified, read and answered. `Err`: the planner did not settle.
    pub fn execute_document(
        &mut self,
        kind: crate::integrity::ItemKind,
        item_id: &str,
        params: Map<String, Json>,
        dry_run: bool,
        allow_unsigned: bool,
    ) -> Result<DocAnswer, String> {
        let req = DocRequest {
            kind,
            item_id: item_id.to_owned(),
            params,
            dry_run,
            policy: self.host.analysis().policy(allow_unsigned),
        };
        let mut facts = Facts::lazy(BTreeMap::new());
        for _ in 0..MAX_ROUNDS {
            match plan_document(self.host.analysis(), &req, &facts) {
                DocStep::Need(needs) => self.answer_needs(&needs, &mut facts),
                DocStep::Answer(answer) => return Ok(answer),
            }
        }
        Err(format!(
            "planning `{item_id}` did not settle after {MAX_ROUNDS} rounds (a bug in ryechain)"
        ))
    }

    /// Load an item (§12.8): found, verified, its content answered; with a destination, copied
    /// there under the same category path (never over a file that is already there). `Err`: the
    /// planner did not settle.
    pub fn load(&mut self, req: &LoadRequest) -> Result<(LoadAnswer, Option<PathBuf>), String> {
        let mut facts = Facts::lazy(BTreeMap::new());
        for _ in 0..MAX_ROUNDS {
            match plan_load(self.host.analysis(), req, &facts) {
                LoadStep::Need(needs) => self.answer_needs(&needs, &mut facts),
                LoadStep::Answer(LoadAnswer::Loaded(loaded)) => {
                    let Some((dest, rel)) = &loaded.copy_to else {
                        return Ok((LoadAnswer::Loaded(loaded), None));
                    };
                    return Ok(match self.copy(*dest, rel, &loaded.content) {
                        Ok(path) => (LoadAnswer::Loaded(loaded), Some(path)),
                        Err(error) => (
                            LoadAnswer::Error {
                                item_id: loaded.item_id.clone(),
                                kind: loaded.kind,
                                error,
                                error_type: None,
                            },
                            None,
                        ),
                    });
                }
                LoadStep::Answer(answer) => return Ok((answer, None)),
            }
        }
        Err(format!(
            "planning the load of `{}` did not settle after {MAX_ROUNDS} rounds (a bug in ryechain)",
            req.item_id
        ))
    }

    /// Write `content` at `<space>/.ai/<rel>`, inside the space (no symlink followed out of it),
    /// unless a file is there already.
    fn copy(&self, dest: SpaceKind, rel: &str, content: &str) -> Result<PathBuf, String> {
        let dir = self
            .dir_of(|s| s.kind() == dest)
            .ok_or_else(|| format!("there is no {} space to copy into", dest.name()))?;
        let ai = dir.join(".ai");
        let target = ai.join(rel);
        // Anything there — a file, a folder, a dangling symlink — is left alone.
        if std::fs::symlink_metadata(&target).is_ok() {
            return Err(format!(
                "{} exists already: delete it first to load this item over it",
                target.display()
            ));
        }
        let rel = crate::model::SpaceRel::new(rel)?;
        crate::system::space_write::write_in_space(&ai, &rel, content.as_bytes(), 0o644)
            .map_err(|e| format!("{} cannot be written: {e}", target.display()))
    }

    /// `did you mean `x`?` for a tool id no space holds, from the spaces read whole (only a
    /// refused call pays for it).
    fn nearest_hint(&self, id: &str) -> Option<String> {
        let outcome = crate::load::load(self.sys, &self.specs);
        let mut host = Host::new();
        host.apply(outcome.change);
        let near = host
            .analysis()
            .nearest_item(crate::integrity::ItemKind::Tool, id)?;
        Some(format!("did you mean `{near}`?"))
    }

    /// Answer one round of questions: items and space files through the loader (into the
    /// database), the rest through the machine.
    fn answer_needs(&mut self, needs: &[Need], facts: &mut Facts) {
        let items: Vec<String> = needs
            .iter()
            .filter_map(|n| match n {
                Need::Item(id) => Some(id.clone()),
                _ => None,
            })
            .collect();
        let rels: Vec<String> = needs
            .iter()
            .filter_map(|n| match n {
                Need::SpaceFile(rel) => Some(rel.clone()),
                _ => None,
            })
            .collect();
        let mut change = Change::default();
        if !items.is_empty() {
            change
                .files
                .extend(self.loader.probe_items(self.host.analysis(), &items).files);
            for id in &items {
                facts.items.insert(id);
            }
        }
        if !rels.is_empty() {
            change
                .files
                .extend(self.loader.probe_space_files(&rels).files);
            for rel in &rels {
                facts.space_files.insert(rel);
            }
        }
        if !change.files.is_empty() {
            self.host.apply(change);
        }
        match &mut self.spawn {
            Some(spawn) => super::gather::answer_with(self.sys, needs, facts, spawn),
            None => super::gather::answer(self.sys, needs, facts),
        }
    }
}

/// The variable naming the running ryechain, for runtimes whose command is ryechain itself
/// (`command: "${RYECHAIN_EXE}"` with a hidden internal subcommand, issue 33).
pub const RYECHAIN_EXE: &str = "RYECHAIN_EXE";

/// Put `RYECHAIN_EXE` (the absolute path of the running executable) in the environment the
/// planner reads for `${VAR}` (§5.6, as `RYE_KERNEL_PYTHON`); it replaces any value the caller's
/// environment had, so a runtime of the system space always reaches this very binary.
pub fn with_ryechain_exe(env: &mut BTreeMap<String, String>) {
    if let Some(exe) = std::env::current_exe()
        .ok()
        .and_then(|p| p.into_os_string().into_string().ok())
    {
        env.insert(RYECHAIN_EXE.to_owned(), exe);
    }
}

/// Seconds and microseconds since the epoch.
pub fn now() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (
        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        d.subsec_micros(),
    )
}

/// Write `<project>/.ai/<rel>` after a successful run (§10.7): the lockfile of the chain as it ran.
fn write_lockfile(
    a: Analysis<'_>,
    item_id: &str,
    project: &Path,
    rel: &crate::model::SpaceRel,
) -> Result<(), String> {
    let (secs, micros) = now();
    let generated_at = crate::integrity::timefmt::iso_timestamp(secs, micros);
    let lock = a.build_lockfile(item_id, &generated_at)?;
    crate::system::space_write::write_in_space(
        &project.join(".ai"),
        rel,
        lock.to_text().as_bytes(),
        0o644,
    )
    .map(drop)
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ryechain_exe_is_this_executable_whatever_the_caller_said() {
        let mut env = BTreeMap::from([(RYECHAIN_EXE.to_owned(), "/bin/false".to_owned())]);
        with_ryechain_exe(&mut env);
        let exe = std::env::current_exe().unwrap();
        assert_eq!(env[RYECHAIN_EXE], exe.to_str().unwrap());
        assert!(Path::new(&env[RYECHAIN_EXE]).is_absolute());
    }
}
