//! L2 the only writer of inputs: a `Change` (roots, file writes and removals, settings) applied as one
//! transaction. Durability follows where data comes from: system HIGH, user MEDIUM, project LOW.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use salsa::{Durability, Setter};

use super::{FileContents, RootDb, SourceFile, SpaceRoot};
use crate::model::{Space, SpaceKind};

/// Workspace-wide settings from the edge (CLI flags). Config files are read by queries instead.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    /// `--select`: rule ids or family names; `None` = what the config files say (default: all).
    pub select: Option<Vec<String>>,
    /// `--ignore`: rule ids or family names, applied after `select`.
    pub ignore: Vec<String>,
    /// `--max-depth`: overrides the configured maximum chain length.
    pub max_depth: Option<usize>,
    /// The primitive map keys (DESIGN.md: terminate without needing a file).
    pub primitives: Vec<String>,
}

/// Primitive ids of DESIGN.md: subprocess, its seed-001 alias `execute`, and the HTTP client.
pub const DEFAULT_PRIMITIVES: [&str; 3] = [
    "rye/core/primitives/subprocess",
    "rye/core/primitives/execute",
    "rye/core/primitives/http_client",
];

impl Default for Settings {
    fn default() -> Self {
        Settings {
            select: None,
            ignore: Vec::new(),
            max_depth: None,
            primitives: DEFAULT_PRIMITIVES.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// One file as the loader read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpec {
    pub space: Space,
    pub path: PathBuf,
    /// Relative to the space's `.ai/`, `/`-separated.
    pub rel: String,
    pub contents: FileContents,
    pub link_origin: Option<SpaceKind>,
}

/// One space with all its files (a full load).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootSpec {
    pub space: Space,
    /// The `.ai` directory.
    pub root: PathBuf,
    pub files: Vec<FileSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChange {
    /// Create the file or replace its contents.
    Write(FileSpec),
    Remove(PathBuf),
}

/// A transaction on the inputs.
#[derive(Clone, Debug, Default)]
pub struct Change {
    /// Replace every space (a fresh load); `None` keeps them.
    pub roots: Option<Vec<RootSpec>>,
    pub files: Vec<FileChange>,
    pub settings: Option<Settings>,
}

pub fn durability(kind: SpaceKind) -> Durability {
    match kind {
        SpaceKind::System => Durability::HIGH,
        SpaceKind::User => Durability::MEDIUM,
        SpaceKind::Project => Durability::LOW,
    }
}

impl Change {
    pub fn apply(self, db: &mut RootDb) {
        let ws = db.workspace.expect("workspace is created in RootDb::new");
        if let Some(settings) = self.settings
            && ws.settings(db) != &settings
        {
            ws.set_settings(db).to(settings);
        }
        if let Some(roots) = self.roots {
            let mut new_roots = Vec::with_capacity(roots.len());
            for mut spec in roots {
                let d = durability(spec.space.kind());
                // Sorted as specs, by their own strings: sorting the inputs read two salsa fields
                // per comparison.
                spec.files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
                let files: Vec<SourceFile> =
                    spec.files.into_iter().map(|f| new_file(db, f, d)).collect();
                let rels: Vec<Arc<str>> = files.iter().map(|f| f.rel(db).clone()).collect();
                let root = SpaceRoot::builder(
                    spec.space,
                    Arc::new(spec.root),
                    Arc::new(files),
                    Arc::new(rels),
                )
                .durability(d)
                .new(db);
                new_roots.push(root);
            }
            ws.set_roots(db).to(new_roots);
        }
        for change in self.files {
            match change {
                FileChange::Write(spec) => write_file(db, spec),
                FileChange::Remove(path) => remove_file(db, &path),
            }
        }
    }
}

fn new_file(db: &RootDb, f: FileSpec, d: Durability) -> SourceFile {
    SourceFile::builder(
        Arc::new(f.path),
        Arc::from(f.rel.as_str()),
        f.space,
        f.link_origin,
        f.contents,
    )
    .durability(d)
    .new(db)
}

fn root_of(db: &RootDb, space: &Space) -> Option<SpaceRoot> {
    let ws = db.workspace.expect("workspace is created in RootDb::new");
    ws.roots(db).iter().copied().find(|r| r.space(db) == space)
}

fn write_file(db: &mut RootDb, spec: FileSpec) {
    let d = durability(spec.space.kind());
    if let Some(file) = db.file_at(&spec.path) {
        if file.contents(db) != &spec.contents {
            file.set_contents(db).with_durability(d).to(spec.contents);
        }
        if file.link_origin(db) != spec.link_origin {
            file.set_link_origin(db)
                .with_durability(d)
                .to(spec.link_origin);
        }
        return;
    }
    let Some(root) = root_of(db, &spec.space) else {
        // A file of a space that is not loaded has nowhere to go; the edge only sends known spaces.
        return;
    };
    let file = new_file(db, spec, d);
    let mut files: Vec<SourceFile> = root.files(db).as_ref().clone();
    let mut rels: Vec<Arc<str>> = root.rels(db).as_ref().clone();
    let rel = file.rel(db).clone();
    let at = rels.partition_point(|r| r.as_ref() < rel.as_ref());
    files.insert(at, file);
    rels.insert(at, rel);
    root.set_files(db).with_durability(d).to(Arc::new(files));
    root.set_rels(db).with_durability(d).to(Arc::new(rels));
}

fn remove_file(db: &mut RootDb, path: &Path) {
    let Some(file) = db.file_at(path) else {
        return;
    };
    let space = file.space(db).clone();
    let Some(root) = root_of(db, &space) else {
        return;
    };
    let (rels, files): (Vec<Arc<str>>, Vec<SourceFile>) = root
        .entries(db)
        .filter(|(_, f)| *f != file)
        .map(|(r, f)| (r.clone(), f))
        .unzip();
    let d = durability(space.kind());
    root.set_files(db).with_durability(d).to(Arc::new(files));
    root.set_rels(db).with_durability(d).to(Arc::new(rels));
}
