//! L6 the loader edge: walks each space's `.ai/` item, trust-store and lockfile dirs and reads `.ai/config/ryechain.yaml` through
//! a `System`, classifies symlinks by the space they really point into, and builds the `Change`
//! that feeds the database. Problems become file contents (diagnosed later) or notices.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::db::change::{FileSpec, RootSpec};
use crate::db::{Change, FileContents};
use crate::model::{Space, SpaceKind};
use crate::rules::embedded_system_files;
use crate::system::{ReadResult, System, WalkEntry};

/// Tool files above this size are not read (reported by `unreadable-file`).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Where a space's files come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpaceSource {
    /// A directory that contains `.ai/`.
    Dir(PathBuf),
    /// ryechain's own bundle, compiled into the binary.
    Embedded,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceSpec {
    pub space: Space,
    pub source: SpaceSource,
}

#[derive(Debug, Default)]
pub struct LoadOutcome {
    pub change: Change,
    /// Things the user should know that are not about one file (a missing `.ai/`, a walk error).
    pub notices: Vec<String>,
}

/// The path prefix of embedded files, shown in diagnostics.
pub fn embedded_root(bundle: &str) -> PathBuf {
    PathBuf::from(format!("{}{bundle}>", crate::model::EMBEDDED_PATH_PREFIX))
}

fn rel_of(ai: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(ai).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

fn contents_of(read: ReadResult) -> FileContents {
    match read {
        ReadResult::Bytes(bytes) => match String::from_utf8(bytes) {
            Ok(s) => FileContents::Text(s.into()),
            Err(e) => FileContents::NotUtf8 {
                valid_up_to: e.utf8_error().valid_up_to(),
            },
        },
        ReadResult::TooLarge(size) => FileContents::TooLarge {
            size,
            limit: MAX_FILE_BYTES,
        },
        ReadResult::Error(msg) => FileContents::Unreadable(msg),
    }
}

/// Load every space. Never fails: what cannot be read is recorded.
pub fn load(sys: &dyn System, spaces: &[SpaceSpec]) -> LoadOutcome {
    let mut notices = Vec::new();
    // Canonical `.ai` roots of every on-disk space, to tell which space a symlink points into.
    let mut real_roots: Vec<(PathBuf, SpaceKind)> = Vec::new();
    for spec in spaces {
        if let SpaceSource::Dir(base) = &spec.source
            && let Ok(real) = sys.canonicalize(&base.join(".ai"))
        {
            real_roots.push((real, spec.space.kind()));
        }
    }
    let mut roots = Vec::with_capacity(spaces.len());
    for spec in spaces {
        let root = match &spec.source {
            SpaceSource::Embedded => load_embedded(&spec.space),
            SpaceSource::Dir(base) => load_dir(sys, &spec.space, base, &real_roots, &mut notices),
        };
        roots.push(root);
    }
    LoadOutcome {
        change: Change {
            roots: Some(roots),
            ..Change::default()
        },
        notices,
    }
}

/// Directories of a space's `.ai/` the loader walks: items of every kind (§1, §10), the
/// trust-store layouts (§10.4) and lockfiles (§10.7).
pub const WALKED_DIRS: [&str; 6] = [
    "tools",
    "directives",
    "knowledge",
    "config/keys/trusted",
    "trusted_keys",
    "lockfiles",
];

/// Whether a path relative to `.ai/` is one the loader reads (walked dirs and config files).
fn is_loaded_rel(rel: &str) -> bool {
    WALKED_DIRS
        .iter()
        .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
        || crate::config::CONFIG_RELS.contains(&rel)
}

fn load_embedded(space: &Space) -> RootSpec {
    let bundle = match space {
        Space::System { bundle, .. } => bundle.to_string(),
        other => other.label(),
    };
    let root = embedded_root(&bundle).join(".ai");
    let files = embedded_system_files()
        .iter()
        .filter_map(|(rel, bytes)| {
            let rel = rel.strip_prefix(".ai/")?;
            is_loaded_rel(rel).then(|| FileSpec {
                space: space.clone(),
                path: root.join(rel),
                rel: rel.to_owned(),
                contents: contents_of(ReadResult::Bytes(bytes.to_vec())),
                link_origin: None,
            })
        })
        .collect();
    RootSpec {
        space: space.clone(),
        root,
        files,
    }
}

fn load_dir(
    sys: &dyn System,
    space: &Space,
    base: &Path,
    real_roots: &[(PathBuf, SpaceKind)],
    notices: &mut Vec<String>,
) -> RootSpec {
    let ai = base.join(".ai");
    let mut root = RootSpec {
        space: space.clone(),
        root: ai.clone(),
        files: Vec::new(),
    };
    if !sys.is_dir(&ai) {
        notices.push(format!(
            "the {} space has no `.ai/` directory at {}",
            space.label(),
            ai.display()
        ));
        return root;
    }
    let mut entries: Vec<WalkEntry> = Vec::new();
    for dir in WALKED_DIRS {
        let dir = ai.join(dir);
        if sys.is_dir(&dir) {
            entries.extend(sys.walk(&dir));
        }
    }
    for name in crate::config::CONFIG_RELS {
        let p = ai.join(name);
        if sys.is_file(&p) {
            entries.push(WalkEntry {
                path: p,
                is_symlink: false,
                error: None,
            });
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let parent_cache: Mutex<FxHashMap<PathBuf, Option<PathBuf>>> = Mutex::default();
    let real_parent = |dir: &Path| -> Option<PathBuf> {
        if let Some(hit) = parent_cache.lock().ok().and_then(|c| c.get(dir).cloned()) {
            return hit;
        }
        let real = sys.canonicalize(dir).ok();
        if let Ok(mut c) = parent_cache.lock() {
            c.insert(dir.to_path_buf(), real.clone());
        }
        real
    };
    let own_kind = space.kind();
    let results: Vec<Result<FileSpec, String>> = entries
        .par_iter()
        .map(|entry| {
            if let Some(err) = &entry.error {
                // A walk error at a file path with a tool extension becomes that file's problem.
                let rel = rel_of(&ai, &entry.path).filter(|r| r.contains('.') && !r.ends_with('/'));
                return match rel {
                    Some(rel) if !sys.is_dir(&entry.path) => Ok(FileSpec {
                        space: space.clone(),
                        path: entry.path.clone(),
                        rel,
                        contents: FileContents::Unreadable(err.clone()),
                        link_origin: None,
                    }),
                    _ => Err(format!("{}: {err}", entry.path.display())),
                };
            }
            let Some(rel) = rel_of(&ai, &entry.path) else {
                return Err(format!(
                    "{}: not valid UTF-8 in its path; skipped",
                    entry.path.display()
                ));
            };
            let real = if entry.is_symlink {
                sys.canonicalize(&entry.path).ok()
            } else {
                entry
                    .path
                    .parent()
                    .and_then(&real_parent)
                    .zip(entry.path.file_name())
                    .map(|(p, n)| p.join(n))
            };
            let owner = real.as_ref().and_then(|r| {
                real_roots
                    .iter()
                    .filter(|(root, _)| r.starts_with(root))
                    .max_by_key(|(root, _)| root.as_os_str().len())
            });
            let (contents, link_origin) = match (owner, &real) {
                (None, Some(real)) => (
                    FileContents::SymlinkEscape {
                        target: real.display().to_string(),
                    },
                    None,
                ),
                (None, None) => (
                    FileContents::Unreadable("the file's real path cannot be resolved".to_owned()),
                    None,
                ),
                (Some((_, kind)), _) => {
                    let origin = (*kind != own_kind).then_some(*kind);
                    (contents_of(sys.read(&entry.path, MAX_FILE_BYTES)), origin)
                }
            };
            Ok(FileSpec {
                space: space.clone(),
                path: entry.path.clone(),
                rel,
                contents,
                link_origin,
            })
        })
        .collect();
    for r in results {
        match r {
            Ok(f) => root.files.push(f),
            Err(msg) => notices.push(msg),
        }
    }
    root
}
