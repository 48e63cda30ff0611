//! L6 `ryechain lock ITEM [PATH] [--force]`: build the lockfile of a tool whose chain is valid
//! (§10.7), warn about chain elements that fail integrity verification (§10.5), and write it to
//! `<project>/.ai/lockfiles/<id>@<version>.lock.json` (sub-directories created, temp file then
//! rename, never overwriting without `--force`).
#![allow(
    clippy::disallowed_methods,
    reason = "the lock edge writes the lockfile and reads the clock"
)]

use std::path::{Path, PathBuf};

use super::{Context, print_notices};
use crate::db::Settings;
use crate::integrity::ItemKind;
use crate::integrity::lockfile::lockfile_rel;
use crate::integrity::timefmt::iso_timestamp;
use crate::model::item_id_problem;

pub fn lock(ctx: &Context<'_>, item: &str, path: &Path, force: bool) -> anyhow::Result<u8> {
    if let Some(reason) = item_id_problem(item) {
        anyhow::bail!(crate::message::invalid_item_id(item, reason));
    }
    let project = ctx.project_root(path)?;
    let (host, notices) = ctx.host(&project, Settings::default())?;
    print_notices(&notices);
    let a = host.analysis();
    // The chain must be one that runs: found, built without error, ending at a primitive, and
    // passing §4 validation (the reference writes a lockfile only after a successful run).
    let view = a.chain(item);
    if !view.found {
        errln!("error: {}", crate::message::tool_not_found(item));
        errln!("{}", ctx.not_found_help(&project, ItemKind::Tool, item));
        return Ok(1);
    }
    if let Some(err) = &view.error {
        errln!("error: {err}; no lockfile written");
        return Ok(1);
    }
    if !view.validation.valid {
        errln!(
            "error: {}; no lockfile written",
            crate::message::chain_validation_failed(&view.validation.issues)
        );
        return Ok(1);
    }
    let lock = match a.build_lockfile(item, &{
        let (secs, micros) = super::now();
        iso_timestamp(secs, micros)
    }) {
        Ok(lock) => lock,
        Err(e) => {
            errln!("error: {e}; no lockfile written");
            return Ok(1);
        }
    };
    let rel = match lockfile_rel(&lock.root.tool_id, &lock.root.version) {
        Ok(rel) => rel,
        Err(e) => {
            errln!("error: {e}");
            return Ok(1);
        }
    };
    let ai = project.join(".ai");
    let target: PathBuf = ai.join(rel.as_str());
    if !force && target.exists() {
        errln!(
            "error: {} already exists; pass --force to overwrite it",
            target.display()
        );
        return Ok(1);
    }
    // Integrity verification (§10.5) would refuse these elements at execution; the lockfile
    // records their hashes anyway, so warn, do not refuse.
    for f in a
        .verify_chain(item, &[])
        .map(|v| v.files)
        .unwrap_or_default()
    {
        if let Some(text) = f.error {
            errln!("warning: {text} (execution verifies every chain element)");
        }
    }
    let written =
        crate::system::space_write::write_in_space(&ai, &rel, lock.to_text().as_bytes(), 0o644)?;
    outln!("{}", written.display());
    Ok(0)
}
