//! L5 the one door from the edges into the database: `Analysis`, a read-only view with methods
//! that answer in plain data (files, ids, spaces, paths, byte spans, labels; never JSON or
//! markdown), and `Snapshot`, an owned view for another thread. The CLI, the language server and
//! the exec planner ask it; none of them names a query (`tests/tidy.rs`).
//!
//! As rust-analyzer's `Analysis`, every method may be cancelled by a change applied to the host
//! while it runs on a snapshot (salsa unwinds with `Cancelled`; the language server catches it).
//! A view borrows the database, so a change cannot be applied while a view lives on the same
//! thread (an owned clone would make `Host::apply` wait for it forever).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::db::{Db, RootDb, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::integrity::TrustStore;
use crate::model::{SpaceKind, Span};

use super::chain_view::ChainView;
use super::ide::{self, HeaderSymbol, Hover, IdCompletion, QuickFix};

/// A read-only view of the database (see the module docs).
#[derive(Clone, Copy)]
pub struct Analysis<'db> {
    pub(crate) db: &'db RootDb,
}

/// An owned view of the database for another thread: the memos are shared, a change applied to
/// the host cancels the work running on it.
pub struct Snapshot {
    db: RootDb,
}

impl Snapshot {
    pub(crate) fn new(db: RootDb) -> Snapshot {
        Snapshot { db }
    }
    pub fn analysis(&self) -> Analysis<'_> {
        Analysis { db: &self.db }
    }
}

/// One node of the executor graph: an item in a space (a primitive has no file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphNode {
    pub item_id: String,
    /// The space's label.
    pub space: String,
    pub path: Option<PathBuf>,
}

/// One edge: `from` names `executor_id`, which resolves to `to` (`None`: to nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEdge {
    pub from: usize,
    pub to: Option<usize>,
    pub executor_id: String,
}

/// Every tool and the executor each names, as `ryechain graph` draws them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
}

impl<'db> Analysis<'db> {
    pub(crate) fn new(db: &'db RootDb) -> Analysis<'db> {
        Analysis { db }
    }

    // ---- files -------------------------------------------------------------------------------

    /// The loaded file at `path` (the first space in search order that holds it).
    pub fn file_at(&self, path: &Path) -> Option<SourceFile> {
        self.db.file_at(path)
    }

    /// The paths of the loaded files below `dir`.
    pub fn paths_under(&self, dir: &Path) -> Vec<PathBuf> {
        self.db.paths_under(dir)
    }

    pub fn path(&self, file: SourceFile) -> &'db Path {
        file.path(self.db).as_path()
    }

    /// The file's path inside its space's `.ai/` folder.
    pub fn rel(&self, file: SourceFile) -> &'db str {
        file.rel(self.db)
    }

    /// The label of the space the file was loaded from.
    pub fn space_label(&self, file: SourceFile) -> String {
        file.space(self.db).label()
    }

    pub fn space_kind(&self, file: SourceFile) -> SpaceKind {
        file.space(self.db).kind()
    }

    /// The file's text as the database holds it (`None`: not UTF-8, unreadable, not a file).
    pub fn text(&self, file: SourceFile) -> Option<Cow<'db, str>> {
        file.contents(self.db).text()
    }

    /// The root folder of each loaded space, with its kind, in search order.
    pub fn space_roots(&self) -> Vec<(SpaceKind, PathBuf)> {
        let db = self.db;
        db.workspace()
            .roots(db)
            .iter()
            .map(|r| (r.space(db).kind(), r.root(db).as_ref().clone()))
            .collect()
    }

    // ---- diagnostics -------------------------------------------------------------------------

    /// One file's diagnostics as lint reports them (enabled rules, severities in force), with
    /// byte spans.
    pub fn diagnostics(&self, file: SourceFile) -> Vec<Diagnostic> {
        super::checked_diagnostics(self.db, file)
    }

    /// The workspace-wide diagnostics (executor cycles), as lint reports them.
    pub fn graph_diagnostics(&self) -> Vec<Diagnostic> {
        super::checked_graph_diagnostics(self.db)
    }

    /// The diagnostics of each of `files`, computed in parallel, in order, with each file's path.
    pub fn diagnostics_of(&self, files: &[SourceFile]) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        super::par_files(self.db, files, &|db, f| {
            (
                f.path(db).as_ref().clone(),
                super::checked_diagnostics(db, f),
            )
        })
    }

    /// The files lint looks at.
    pub fn lint_files(&self) -> Vec<SourceFile> {
        super::lint_files(self.db)
    }

    /// The whole workspace's lint, in parallel.
    pub fn lint(
        &self,
        opts: &super::LintOptions,
        progress: &(dyn Fn(usize) + Sync),
    ) -> super::LintReport {
        super::lint(self.db, opts, progress)
    }

    // ---- chains ------------------------------------------------------------------------------

    /// The chain of `item_id` resolved from the project space: the structure `chain`,
    /// `exec --dry-run`, the hover and the agents' answers all render.
    pub fn chain(&self, item_id: &str) -> ChainView {
        super::chain_view::chain_of(self.db, item_id)
    }

    /// The ids the chain of `file` reads that `loaded` does not hold yet (lazy loading).
    pub fn chain_needs(
        &self,
        file: SourceFile,
        loaded: &crate::exec::facts::Loaded,
    ) -> Vec<String> {
        super::lazy::file_chain_needs(self.db, file, loaded)
    }

    /// The ids the chains of `files` read that `loaded` does not hold yet, found in parallel
    /// (the first pass parses every file; its memos serve the checks after), sorted, each once.
    pub fn chains_needs(
        &self,
        files: &[SourceFile],
        loaded: &crate::exec::facts::Loaded,
    ) -> Vec<String> {
        let per_file = super::par_chunks(self.db, files, &|db, part| {
            part.iter()
                .map(|&f| super::lazy::file_chain_needs(db, f, loaded))
                .collect()
        });
        let needs: std::collections::BTreeSet<String> = per_file.into_iter().flatten().collect();
        needs.into_iter().collect()
    }

    /// The ids the chain of `item_id` reads that `loaded` does not hold yet.
    pub fn item_chain_needs(
        &self,
        item_id: &str,
        loaded: &crate::exec::facts::Loaded,
    ) -> Vec<String> {
        super::lazy::chain_needs(self.db, item_id, loaded)
    }

    /// Every tool and the executor each names.
    pub fn executor_graph(&self) -> Graph {
        let db = self.db;
        let g = crate::resolve::graph::executor_graph(db);
        Graph {
            nodes: g
                .nodes
                .iter()
                .map(|n| GraphNode {
                    item_id: n.item_id.to_string(),
                    space: n.space.label(),
                    path: n.file.map(|f| f.path(db).as_ref().clone()),
                })
                .collect(),
            edges: g
                .edges
                .iter()
                .map(|e| GraphEdge {
                    from: e.from,
                    to: e.to,
                    executor_id: e.executor_id.to_string(),
                })
                .collect(),
        }
    }

    /// The item ids visible from `space` (its own and every space it may see), sorted, each once.
    pub fn visible_items(&self, space: SpaceKind) -> Vec<String> {
        let mut ids: Vec<String> = crate::resolve::visible_ids(self.db, space)
            .iter()
            .map(str::to_owned)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    // ---- the editor --------------------------------------------------------------------------

    /// The executor id written at byte `offset` of `file`, with the span of its characters.
    pub fn executor_at(&self, file: SourceFile, offset: usize) -> Option<(String, Span)> {
        ide::executor_at(self.db, file, offset)
    }

    /// The chain behind the executor id at `offset`.
    pub fn hover(&self, file: SourceFile, offset: usize) -> Option<Hover> {
        ide::hover(self.db, file, offset)
    }

    /// The file the executor id at `offset` resolves to, from the file's space.
    pub fn definition(&self, file: SourceFile, offset: usize) -> Option<PathBuf> {
        ide::definition(self.db, file, offset).map(|f| f.path(self.db).as_ref().clone())
    }

    /// The executor ids to offer at `offset` of `file`: the span they replace (from the line's
    /// text alone, so a header that does not parse while the user types still completes), the
    /// candidates, runtimes and primitives first, and whether more matched than were returned.
    pub fn completions(
        &self,
        file: SourceFile,
        offset: usize,
    ) -> Option<(Span, Vec<IdCompletion>, bool)> {
        let text = self.text(file)?;
        let (start, end) = ide::executor_value_on_line(&text, offset)?;
        let prefix = &text[start..offset.min(text.len()).max(start)];
        let (ids, more) = ide::complete_ids(self.db, file, prefix);
        Some((Span::new(start, end), ids, more))
    }

    /// The metadata keys a tool file sets, in file order.
    pub fn document_symbols(&self, file: SourceFile) -> Vec<HeaderSymbol> {
        ide::header_symbols(self.db, file)
    }

    /// The certain fixes of `file` whose edit or finding touches `range` (byte offsets).
    pub fn quick_fixes(&self, file: SourceFile, range: std::ops::Range<usize>) -> Vec<QuickFix> {
        ide::quick_fixes(self.db, file, range)
    }

    // ---- integrity ---------------------------------------------------------------------------

    /// The keys this workspace trusts, and the documents that declare them.
    pub fn trust_store(&self) -> &'db TrustStore {
        crate::integrity::trust_store(self.db)
    }

    /// The execution policy in force (`--allow-unsigned` or the configuration's).
    pub fn policy(&self, allow_unsigned_flag: bool) -> super::verify::Policy {
        super::verify::Policy::resolve(self.db, allow_unsigned_flag)
    }

    /// What the person should know about the policy (a config that cannot weaken it, …).
    pub fn policy_notices(&self) -> Vec<String> {
        super::verify::Policy::notices(self.db)
    }

    /// Every element of `item_id`'s chain, and `extra` files, verified (`None`: not found).
    pub fn verify_chain(
        &self,
        item_id: &str,
        extra: &[super::verify::ExtraFile],
    ) -> Option<super::verify::ChainVerification> {
        super::verify::verify_chain(self.db, item_id, extra)
    }

    /// Every signable file of the workspace, verified.
    pub fn verify_all(&self) -> Vec<super::verify::FileVerdict> {
        super::verify::verify_all(self.db)
    }

    /// The lockfile of `item_id`'s chain as `exec` and `lock` write it, stamped `generated_at`.
    pub fn build_lockfile(
        &self,
        item_id: &str,
        generated_at: &str,
    ) -> Result<crate::integrity::lockfile::Lockfile, String> {
        crate::integrity::lockfile::build_lockfile(self.db, item_id, generated_at)
    }

    /// Raw access for the host-side code that lives beside the database (the loader, the lint
    /// cache): never for an edge.
    pub(crate) fn db(&self) -> &'db dyn Db {
        self.db
    }
}
