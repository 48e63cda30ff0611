//! L6 `ryechain lock ITEM [PATH] [--force]`: build the lockfile of a tool whose chain is valid
//! (§10.7), warn about chain elements that fail integrity verification (§10.5), and write it to
//! `<project>/.ai/lockfiles/<id>@<version>.lock.json` (sub-directories created, temp file then
//! rename, never overwriting without `--force`).
#![allow(
    clippy::disallowed_methods,
    reason = "the lock edge writes the lockfile and reads the clock"
)]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the CLI prints")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;

use super::{Context, absolute, print_notices};
use crate::analysis::chain_view::chain_of;
use crate::db::{Db, Settings};
use crate::integrity::lockfile::{build_lockfile, lockfile_name};
use crate::integrity::signature_status;
use crate::integrity::timefmt::iso_timestamp;
use crate::model::item_id_problem;
use crate::resolve::{chain, resolve_root};

/// `generated_at` for now: `YYYY-MM-DDTHH:MM:SS.ffffff+00:00` (Python's `isoformat()`).
fn now_iso() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso_timestamp(
        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        d.subsec_micros(),
    )
}

/// Write `text` to `path` atomically: a temp file in the same directory, then rename.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

pub fn lock(ctx: &Context<'_>, item: &str, path: &Path, force: bool) -> anyhow::Result<u8> {
    if let Some(reason) = item_id_problem(item) {
        anyhow::bail!("invalid item id `{item}`: {reason}");
    }
    let project = absolute(ctx.sys, path)?;
    let (host, notices) = ctx.host(&project, Settings::default())?;
    print_notices(&notices);
    let db = host.snapshot();
    // The chain must be one that runs: found, built without error, ending at a primitive, and
    // passing §4 validation (the reference writes a lockfile only after a successful run).
    let view = chain_of(&db, item);
    if !view.found {
        eprintln!("error: Tool not found: {item}");
        return Ok(1);
    }
    if let Some(err) = &view.error {
        eprintln!("error: {err}; no lockfile written");
        return Ok(1);
    }
    if !view.validation.valid {
        eprintln!(
            "error: Chain validation failed: {}; no lockfile written",
            view.validation.issues.join("; ")
        );
        return Ok(1);
    }
    let lock = match build_lockfile(&db, item, &now_iso()) {
        Ok(lock) => lock,
        Err(e) => {
            eprintln!("error: {e}; no lockfile written");
            return Ok(1);
        }
    };
    let target: PathBuf = project
        .join(".ai")
        .join("lockfiles")
        .join(lockfile_name(&lock.root.tool_id, &lock.root.version));
    if !force && target.exists() {
        eprintln!(
            "error: {} already exists; pass --force to overwrite it",
            target.display()
        );
        return Ok(1);
    }
    // Integrity verification (§10.5) would refuse these elements at execution; the lockfile
    // records their hashes anyway, so warn, do not refuse.
    let db_ref: &dyn Db = &db;
    if let Some(root) = &resolve_root(db_ref, item).found {
        for e in &chain(db_ref, root.file).elements {
            let Some(file) = e.file else { continue };
            let shown = file.path(db_ref).display().to_string();
            if let Some(text) = signature_status(db_ref, file).error_text(&shown) {
                eprintln!("warning: {text} (execution verifies every chain element)");
            }
        }
    }
    write_atomic(&target, &lock.to_text())?;
    println!("{}", target.display());
    Ok(0)
}
