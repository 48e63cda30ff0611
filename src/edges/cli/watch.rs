//! `ryechain lint --watch`: after the first report, watch the on-disk spaces (`notify`; events
//! gathered into a batch until the changes pause), apply each batch as one change to the same
//! database and re-check only the files it reaches (`analysis::live::LiveLint`), print the
//! findings that appeared and the ones that went away, with the time it took. Ctrl-C ends it
//! cleanly.
//!
//! The batching is written here rather than taken from `notify-debouncer-mini`, which keeps no
//! event kinds: the inotify backend reports every file *opened* (ryechain's own re-reads
//! included), and only writes, creations, removals and renames may start a re-check.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use crate::analysis::Host;
use crate::analysis::live::LiveLint;
use crate::diagnostic::Finding;
use crate::load::{Reloader, SpaceSpec};
use crate::model::SpaceSet;
use crate::system::System;

/// A batch ends when no event came for this long...
const DEBOUNCE: Duration = Duration::from_millis(100);
/// ...or when it has been gathering for this long (a long `git checkout`).
const MAX_BATCH: Duration = Duration::from_secs(2);

static STOP: AtomicBool = AtomicBool::new(false);

fn line(f: &Finding) -> String {
    format!(
        "{}:{}:{}: {}[{}] {}",
        f.path,
        f.line,
        f.column,
        f.severity.as_str(),
        f.rule,
        f.message
    )
}

/// What the watch reports: the spaces shown whole (`lint --space`) and, when the last report
/// was not the live lint's whole report, its findings (`LiveLint::scope_delta`).
pub struct Scope {
    pub shown: SpaceSet,
    pub findings: Option<Vec<Finding>>,
}

/// Watch until Ctrl-C. `live` is the first run's lint of `host`, `links` the symlinks its load
/// met, `scope` what the first report showed; `json` prints one JSON object per batch.
pub fn watch(
    sys: &dyn System,
    specs: &[SpaceSpec],
    mut host: Host,
    links: &[PathBuf],
    mut live: LiveLint,
    mut scope: Scope,
    json: bool,
) -> anyhow::Result<u8> {
    let mut reloader = Reloader::new(sys, specs);
    reloader.note_links(links);
    let dirs: Vec<PathBuf> = reloader
        .ai_dirs()
        .filter(|d| sys.is_dir(d))
        .map(Path::to_path_buf)
        .collect();
    let (tx, rx) = std::sync::mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher = notify::recommended_watcher(move |e| {
        let _ = tx.send(e);
    })
    .map_err(|e| anyhow::anyhow!("cannot watch for changes: {e}"))?;
    for d in &dirs {
        watcher
            .watch(d, RecursiveMode::Recursive)
            .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", d.display()))?;
    }
    // Ctrl-C sets `STOP` (every time: the loop below ends within its next wait). Refused only
    // for a signal that cannot be caught, which SIGINT is not.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, &STOP);
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    if !json {
        outln!("watching {} for changes (Ctrl-C to stop)", shown.join(", "));
    }
    while !STOP.load(Ordering::SeqCst) {
        let first = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(e) => e,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        // Gather until the changes pause.
        let mut events = vec![first];
        let gathering = Instant::now();
        while gathering.elapsed() < MAX_BATCH {
            match rx.recv_timeout(DEBOUNCE) {
                Ok(e) => events.push(e),
                Err(_) => break,
            }
        }
        let mut paths: Vec<PathBuf> = Vec::new();
        for e in events {
            match e {
                Ok(event) => paths.extend(crate::load::watched_paths(&event, sys)),
                Err(e) => errln!("warning: the file watcher reported: {e}"),
            }
        }
        paths.sort();
        paths.dedup();
        if paths.is_empty() {
            continue;
        }
        let started = Instant::now();
        let a = host.analysis();
        let change = reloader.reload(&paths, &|dir| a.paths_under(dir));
        if change.files.is_empty() {
            continue;
        }
        let mut delta = live.apply(&mut host, change);
        // A change can bring another space's file into use (or out of it) without touching it:
        // new and fixed are told against what the last report showed.
        live.scope_delta(
            host.analysis(),
            scope.shown,
            &mut delta,
            &mut scope.findings,
        );
        let took = started.elapsed();
        if delta.changed == 0 {
            continue;
        }
        if json {
            let line = serde_json::json!({
                "changed_files": delta.changed,
                "rechecked_files": delta.rechecked,
                "full": delta.full,
                "ms": took.as_secs_f64() * 1000.0,
                "new": crate::render::json::findings_json(&delta.new.iter().collect::<Vec<_>>()),
                "fixed": crate::render::json::findings_json(&delta.fixed.iter().collect::<Vec<_>>()),
                "errors": delta.summary.errors,
                "warnings": delta.summary.warnings,
                "internal_errors": delta.internal_errors,
            });
            outln!("{line}");
        } else {
            let why = delta
                .full
                .as_deref()
                .map(|w| format!(" (everything: {w})"))
                .unwrap_or_default();
            outln!(
                "{} file(s) changed, {} re-checked{why} in {:.2} ms: {} new, {} fixed ({} errors, {} warnings in all)",
                delta.changed,
                delta.rechecked,
                took.as_secs_f64() * 1000.0,
                delta.new.len(),
                delta.fixed.len(),
                delta.summary.errors,
                delta.summary.warnings
            );
            for f in &delta.new {
                outln!("  + {}", line(f));
            }
            for f in &delta.fixed {
                outln!("  - {}", line(f));
            }
            if delta.internal_errors > 0 {
                errln!(
                    "error: ryechain hit {} internal error(s); the results are incomplete",
                    delta.internal_errors
                );
            }
        }
    }
    drop(watcher);
    if !json {
        outln!("stopped watching");
    }
    Ok(0)
}
