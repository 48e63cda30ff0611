//! L6 answering the planner's questions about the machine (`facts::Need`): paths, small texts,
//! interpreter commands and `verify_deps` walks (§6.6), through `System` where it has the answer.
#![allow(
    clippy::disallowed_methods,
    reason = "the System trait has no file kind, mode bits or non-following directory listing; \
              this edge reads them directly (and spawns commands through runner)"
)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::run;
use crate::exec::facts::{DepFile, DepListing, DepWalk, Facts, Need, PathFact, PathKind};
use crate::exec::{ExecutionPlan, ExitKind, ProcessOutcome};
use crate::system::{ReadResult, System};

/// Largest `.env`-style text read for `Need::Text`.
pub const TEXT_LIMIT: u64 = 1024 * 1024;
/// Largest dependency file read by a walk.
pub const DEP_TEXT_LIMIT: u64 = 8 * 1024 * 1024;
/// Time limit of an interpreter command (§5.4: 5 s); the whole process group is killed after it.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// Output kept from an interpreter command (only its first line matters).
const COMMAND_OUTPUT_CAP: usize = 64 * 1024;

/// Answer every need the edge owns into `facts`. `Need::Item` and `Need::SpaceFile` belong to the
/// loader and are left to the caller.
pub fn answer(sys: &dyn System, needs: &[Need], facts: &mut Facts) {
    answer_with(sys, needs, facts, &mut run);
}

/// `answer`, with the commands a need names started by `spawn` (a session's worker, `worker`).
pub fn answer_with(
    sys: &dyn System,
    needs: &[Need],
    facts: &mut Facts,
    spawn: &mut dyn FnMut(&ExecutionPlan) -> ProcessOutcome,
) {
    for need in needs {
        match need {
            Need::Path(p) => {
                let fact = path_fact(sys, p);
                facts.paths.insert(p.clone(), fact);
            }
            Need::Text(p) => {
                let text = small_text(sys, p);
                facts.texts.insert(p.clone(), text);
            }
            Need::Command(argv) => {
                let line = command_line(argv, &facts.env, COMMAND_TIMEOUT, spawn);
                facts.commands.insert(argv.clone(), line);
            }
            Need::Walk(w) => {
                let listing = walk(sys, w);
                facts.walks.insert(w.clone(), listing);
            }
            Need::Item(_) | Need::SpaceFile(_) => {}
        }
    }
}

/// What is at `p`, symlinks followed. Kind and canonical path come from `System`; the execute bit
/// and "something other than a file or directory" from the file's metadata.
pub fn path_fact(sys: &dyn System, p: &Path) -> PathFact {
    let kind = if sys.is_file(p) {
        PathKind::File
    } else if sys.is_dir(p) {
        PathKind::Dir
    } else if std::fs::metadata(p).is_ok() {
        PathKind::Other
    } else {
        return PathFact::missing();
    };
    let executable = kind == PathKind::File
        && std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    PathFact {
        kind,
        executable,
        real: sys.canonicalize(p).ok(),
    }
}

/// A small regular file's text (at most `TEXT_LIMIT` bytes, UTF-8), else `None`.
pub fn small_text(sys: &dyn System, p: &Path) -> Option<Arc<str>> {
    // Only regular files are opened: opening a FIFO would block.
    if !sys.is_file(p) {
        return None;
    }
    match sys.read(p, TEXT_LIMIT) {
        ReadResult::Bytes(b) => String::from_utf8(b).ok().map(Arc::from),
        ReadResult::TooLarge(_) | ReadResult::Error(_) => None,
    }
}

/// Run `argv` through `spawn` (no shell, null stdin, the caller's environment, `timeout` killing
/// the group) and return its first non-empty stdout line, trimmed, when it exits 0 (§5.4
/// `command`, `system_binary`, `version_manager`).
fn command_line(
    argv: &[String],
    env: &BTreeMap<String, String>,
    timeout: Duration,
    spawn: &mut dyn FnMut(&ExecutionPlan) -> ProcessOutcome,
) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let plan = ExecutionPlan {
        program: program.clone(),
        args: args.to_vec(),
        env: env.clone(),
        cwd: None,
        stdin: None,
        timeout,
        output_cap: COMMAND_OUTPUT_CAP,
    };
    let out = spawn(&plan);
    if out.exit != ExitKind::Code(0) {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

fn ends_with_any(name: &std::ffi::OsStr, extensions: &[String]) -> bool {
    let name = name.as_encoded_bytes();
    extensions
        .iter()
        .any(|e| !e.is_empty() && name.ends_with(e.as_bytes()))
}

/// A dependency file's text, or why there is none.
fn dep_text(sys: &dyn System, p: &Path) -> Result<Arc<str>, String> {
    match sys.read(p, DEP_TEXT_LIMIT) {
        ReadResult::Bytes(b) => String::from_utf8(b)
            .map(Arc::from)
            .map_err(|_| "not UTF-8 text".to_owned()),
        ReadResult::TooLarge(n) => Err(format!(
            "too large ({n} bytes, the limit is {DEP_TEXT_LIMIT})"
        )),
        ReadResult::Error(e) => Err(e),
    }
}

/// The `verify_deps` walk (§6.6): from the canonical base, without following symlinked
/// directories, pruning `exclude_dirs` names at every depth, descending only when `recursive`.
/// Files (and symlinks to files) whose name ends with one of the extensions are listed with their
/// canonical path, so the planner can refuse a symlink that escapes the base. Symlinks to
/// directories, FIFOs, sockets and devices are skipped without being opened. A dangling symlink
/// with a listed extension is reported with `real: None` (the planner refuses it).
pub fn walk(sys: &dyn System, w: &DepWalk) -> DepListing {
    let Ok(base) = sys.canonicalize(&w.base) else {
        return DepListing {
            real_base: None,
            files: Vec::new(),
            errors: Vec::new(),
        };
    };
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut pending = vec![base.clone()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                errors.push(format!("{}: {e}", dir.display()));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    errors.push(format!("{}: {e}", dir.display()));
                    continue;
                }
            };
            let path = entry.path();
            let name = entry.file_name();
            let Ok(ftype) = entry.file_type() else {
                errors.push(format!("{}: cannot read its type", path.display()));
                continue;
            };
            if ftype.is_dir() {
                let excluded = w.exclude_dirs.iter().any(|x| name == x.as_str());
                if w.recursive && !excluded {
                    pending.push(path);
                }
                continue;
            }
            if !ends_with_any(&name, &w.extensions) {
                continue;
            }
            if ftype.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_file() => {}
                    Ok(_) => continue, // a directory or a FIFO behind the link: not followed
                    Err(e) => {
                        files.push(DepFile {
                            real: None,
                            text: Err(format!("broken symlink: {e}")),
                            path,
                        });
                        continue;
                    }
                }
            } else if !ftype.is_file() {
                continue; // FIFO, socket, device
            }
            let real = sys.canonicalize(&path).ok();
            let text = dep_text(sys, &path);
            files.push(DepFile { path, real, text });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    errors.sort();
    DepListing {
        real_base: Some(base),
        files,
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_match_is_an_exact_suffix() {
        let exts = vec![".py".to_owned(), ".yaml".to_owned()];
        assert!(ends_with_any(std::ffi::OsStr::new("a.py"), &exts));
        assert!(!ends_with_any(std::ffi::OsStr::new("a.PY"), &exts));
        assert!(!ends_with_any(std::ffi::OsStr::new("a.pyc"), &exts));
        assert!(!ends_with_any(
            std::ffi::OsStr::new("a.py"),
            &[String::new()]
        ));
    }

    #[test]
    fn empty_argv_has_no_answer() {
        assert_eq!(
            command_line(&[], &BTreeMap::new(), Duration::from_secs(1), &mut run),
            None
        );
    }
}
