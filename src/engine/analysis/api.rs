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

/// The config in force (`Analysis::config_settings`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigView {
    pub settings: Vec<crate::config::Setting>,
    pub files: Vec<SourceFile>,
    pub problems: Vec<(SourceFile, Option<usize>, String)>,
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

    /// What the file is (a tool, a runtime, a library module, a directive, a lockfile, …).
    pub fn file_kind(&self, file: SourceFile) -> crate::resolve::FileKind {
        crate::resolve::file_kind(self.db, file)
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

    /// Every file checked, in parallel, with what each file's findings read when `deps` (for the
    /// lint cache and `--watch`); `progress` hears how many files each finished chunk held.
    pub fn lint_parts(
        &self,
        opts: &super::LintOptions,
        progress: &(dyn Fn(usize) + Sync),
        deps: bool,
        checks: super::Checks,
    ) -> super::LintParts {
        super::lint_parts(self.db, opts, progress, deps, checks)
    }

    /// Take out of `parts` the findings `shown` does not ask for: those of files of other
    /// spaces no tool of a shown space uses (`scope`).
    pub fn hide_unused(
        &self,
        parts: &mut super::LintParts,
        shown: crate::model::SpaceSet,
    ) -> super::scope::Hidden {
        parts.hide_unused(self.db, shown)
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
    pub fn chain_needs(&self, file: SourceFile, loaded: &super::lazy::Loaded) -> Vec<String> {
        super::lazy::file_chain_needs(self.db, file, loaded)
    }

    /// The ids the chains of `files` read that `loaded` does not hold yet, found in parallel
    /// (the first pass parses every file; its memos serve the checks after), sorted, each once.
    pub fn chains_needs(&self, files: &[SourceFile], loaded: &super::lazy::Loaded) -> Vec<String> {
        let per_file = super::par_chunks(self.db, files, &|db, part| {
            part.iter()
                .map(|&f| super::lazy::file_chain_needs(db, f, loaded))
                .collect()
        });
        let needs: std::collections::BTreeSet<String> = per_file.into_iter().flatten().collect();
        needs.into_iter().collect()
    }

    /// The ids the chain of `item_id` reads that `loaded` does not hold yet.
    pub fn item_chain_needs(&self, item_id: &str, loaded: &super::lazy::Loaded) -> Vec<String> {
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

    // ---- search ------------------------------------------------------------------------------

    /// The items of `req.kind` that match `req` (§12.7), ranked: the page asked for and how many
    /// matched, from an index built for this search alone ([`Analysis::search_in`] searches one
    /// kept between searches).
    pub fn search(
        &self,
        req: &crate::facts::search::SearchRequest,
    ) -> Result<crate::facts::search::SearchAnswer, crate::facts::search::SearchError> {
        self.search_in(&self.search_index(), req)
    }

    /// Every item of every space with what a search reads of it, the documents of a large tree
    /// computed in parallel (chunks, a database clone per job, as the lint; each is memoized per
    /// file, `search_doc`).
    pub fn search_index(&self) -> crate::facts::search::SearchIndex {
        use crate::facts::search::{SearchIndex, search_doc};
        let db = self.db;
        let files = SearchIndex::item_files(db);
        let docs = super::par_chunks_with_progress(
            db,
            &files,
            &|db, part| {
                part.iter()
                    .map(|f| search_doc(db, f.file).clone())
                    .collect()
            },
            &|_| {},
            None,
        );
        SearchIndex::build(db, files, docs)
    }

    /// Bring `index` up to date after a change that wrote or removed `paths`; built again when
    /// the change reached what every document depends on (the spaces, an extractor).
    pub fn refresh_search_index(
        &self,
        index: &mut crate::facts::search::SearchIndex,
        paths: &[PathBuf],
    ) {
        if !index.refresh(self.db, paths) {
            *index = self.search_index();
        }
    }

    /// [`Analysis::search`] over a kept index. A large tree's items are matched in parallel.
    pub fn search_in(
        &self,
        index: &crate::facts::search::SearchIndex,
        req: &crate::facts::search::SearchRequest,
    ) -> Result<crate::facts::search::SearchAnswer, crate::facts::search::SearchError> {
        use crate::facts::search::{Compiled, answer, candidates, score_all};
        /// Fewer candidates than this are matched on the calling thread.
        const PARALLEL_FROM: usize = 4096;
        let db = self.db;
        let compiled = Compiled::new(db, req)?;
        let cands = candidates(index, req);
        let scores = if cands.len() < PARALLEL_FROM {
            score_all(&compiled, &cands)
        } else {
            super::par_chunks_with_progress(
                db,
                &cands,
                &|_, part| score_all(&compiled, part),
                &|_| {},
                None,
            )
        };
        Ok(answer(db, req, &cands, &scores))
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

    /// The certain fixes of `file` whose edit or finding touches `range` (byte offsets); a
    /// refreshed lockfile is stamped `generated_at`.
    pub fn quick_fixes(
        &self,
        file: SourceFile,
        range: std::ops::Range<usize>,
        generated_at: &str,
    ) -> Vec<QuickFix> {
        ide::quick_fixes(self.db, file, range, generated_at)
    }

    /// Every certain fix of `file` (`lint --fix`): a certain suggestion, a finding's own edit,
    /// a stale lockfile refreshed (stamped `generated_at`). Suppressed findings have none.
    pub fn fixes(&self, file: SourceFile, generated_at: &str) -> Vec<QuickFix> {
        ide::fixes(self.db, file, generated_at)
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

    /// A directive or knowledge entry by id as execution finds it: `<directives|knowledge>/<id>.md`
    /// in the first loaded space that holds it, in precedence order (project, user, system).
    pub fn document(&self, kind: crate::integrity::ItemKind, item_id: &str) -> Option<SourceFile> {
        self.document_in(None, kind, item_id)
    }

    /// `document`, in the spaces of `space` only (`None`: every space).
    pub fn document_in(
        &self,
        space: Option<SpaceKind>,
        kind: crate::integrity::ItemKind,
        item_id: &str,
    ) -> Option<SourceFile> {
        let db = self.db;
        let rel = format!("{}{item_id}.md", kind.dir());
        db.workspace()
            .roots(db)
            .iter()
            .filter(|root| space.is_none_or(|s| root.space(db).kind() == s))
            .find_map(|root| {
                root.entries(db)
                    .find(|(r, _)| r.as_ref() == rel)
                    .map(|(_, f)| f)
            })
    }

    /// An item's version as its kind writes it: a tool's header (`__version__`, `version`), a
    /// directive's `version` attribute, a knowledge entry's `version` key.
    pub fn version_of(&self, kind: crate::integrity::ItemKind, file: SourceFile) -> Option<String> {
        use crate::integrity::ItemKind;
        match kind {
            ItemKind::Tool => crate::integrity::lockfile::tool_version(self.db, file),
            ItemKind::Directive => match self.directive(file)? {
                Ok(d) => d.version.as_ref().map(|v| v.value.clone()),
                Err(_) => None,
            },
            ItemKind::Knowledge => match self.knowledge(file)? {
                Ok(k) => k.metadata.get("version").map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                Err(_) => None,
            },
        }
    }

    /// The id of `kind` nearest to `id` among those the loaded spaces hold (a misspelling's
    /// likely meaning), for a "did you mean".
    pub fn nearest_item(&self, kind: crate::integrity::ItemKind, id: &str) -> Option<String> {
        use crate::integrity::ItemKind;
        let db = self.db;
        match kind {
            ItemKind::Tool => {
                let ids = crate::resolve::visible_ids(db, SpaceKind::Project);
                crate::message::nearest(id, ids.iter()).map(str::to_owned)
            }
            _ => {
                let mut ids: Vec<String> = Vec::new();
                for space in [SpaceKind::Project, SpaceKind::User, SpaceKind::System] {
                    ids.extend(self.items(space, kind).into_iter().map(|(id, _)| id));
                }
                crate::message::nearest(id, ids.iter().map(String::as_str)).map(str::to_owned)
            }
        }
    }

    /// Where an item of `kind` is looked for: each loaded space's label and folder for that kind.
    pub fn searched(&self, kind: crate::integrity::ItemKind) -> Vec<(String, PathBuf)> {
        let db = self.db;
        db.workspace()
            .roots(db)
            .iter()
            .map(|r| (r.space(db).label(), r.root(db).join(kind.dir())))
            .collect()
    }

    /// One file verified as the chain's elements are (its verdict, and the error text when it
    /// does not pass).
    pub fn verify_file(&self, file: SourceFile, item_id: &str) -> super::verify::FileVerdict {
        super::verify::file_verdict(self.db, file, Some(item_id.to_owned()))
    }

    /// The directive in `file` (`None`: the file has no text).
    pub fn directive(
        &self,
        file: SourceFile,
    ) -> Option<
        &'db Result<crate::parse::directive::Directive, crate::parse::directive::DirectiveError>,
    > {
        crate::resolve::docs::directive_doc(self.db, file).as_ref()
    }

    /// The knowledge entry in `file` (`None`: the file has no text).
    pub fn knowledge(
        &self,
        file: SourceFile,
    ) -> Option<
        &'db Result<crate::parse::knowledge::Knowledge, crate::parse::knowledge::KnowledgeError>,
    > {
        crate::resolve::docs::knowledge_doc(self.db, file).as_ref()
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

    /// The lint findings on the files of `item_id`'s chain (as [`Analysis::item_findings`] gives
    /// them per file), each once, in chain order.
    pub fn chain_findings(&self, item_id: &str, skip: &[&str]) -> (Vec<String>, Vec<String>) {
        let db = self.db;
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let Some(root) = &crate::resolve::resolve_root(db, item_id).found else {
            return (errors, warnings);
        };
        for file in crate::resolve::chain(db, root.file)
            .elements
            .iter()
            .filter_map(|e| e.file)
        {
            let (e, w) = super::item_findings(db, file, skip);
            errors.extend(e);
            warnings.extend(w);
        }
        errors.dedup();
        warnings.dedup();
        (errors, warnings)
    }

    /// The lint findings at `file` (its own and its chain's) with the severities in force, as
    /// `message [rule-id]`: errors, then warnings; the integrity family and `skip` left out.
    pub fn item_findings(&self, file: SourceFile, skip: &[&str]) -> (Vec<String>, Vec<String>) {
        super::item_findings(self.db, file, skip)
    }

    // ---- lockfiles and config files ----------------------------------------------------------

    /// The version of the tool `item_id` resolves to from the project (`None`: not found, or no
    /// version a lockfile can record).
    pub fn root_version(&self, item_id: &str) -> Option<String> {
        let db: &dyn Db = self.db;
        let root = crate::resolve::resolve_root(db, item_id)
            .found
            .as_ref()?
            .file;
        crate::integrity::lockfile::tool_version(db, root)
    }

    /// The item ids the lockfile of `item_id` at `version` records (`None`: no such lockfile,
    /// or one that does not load).
    pub fn lockfile_ids(&self, item_id: &str, version: &str) -> Option<Vec<String>> {
        let db: &dyn Db = self.db;
        let file = crate::integrity::lockfile::find_lockfile(db, item_id, version)?;
        let lock = crate::integrity::lockfile::lockfile(db, file)
            .as_ref()
            .ok()?;
        Some(
            lock.resolved_chain
                .iter()
                .filter_map(|e| e.get("item_id").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
                .collect(),
        )
    }

    /// The lockfile check of `item_id` before it runs (§10.7).
    pub fn check_lockfile(&self, item_id: &str) -> crate::integrity::lockfile::LockCheck {
        crate::integrity::lockfile::check_lockfile(self.db, item_id)
    }

    /// The config settings in force, each with the file and line that set it
    /// (`ryechain config`); the config files read, lowest precedence first; and the problems
    /// lint reports in them (file, line, message), the project's ignored lowering of the
    /// integrity policy among them.
    pub fn config_settings(&self) -> ConfigView {
        let db = self.db;
        let cfg = crate::config::lint_config(db);
        let line = |file: SourceFile, span: Option<Span>| {
            let text = file.contents(db).text()?;
            let at = (span?.start as usize).min(text.len());
            Some(
                text.as_bytes()[..at]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1,
            )
        };
        let mut problems: Vec<(SourceFile, Option<usize>, String)> = cfg
            .problems
            .iter()
            .map(|(f, span, m)| (*f, line(*f, *span), m.clone()))
            .collect();
        problems.extend(cfg.lowering_ignored.iter().map(|(f, span)| {
            (
                *f,
                line(*f, *span),
                crate::message::rule_message("project-disables-signatures").to_owned(),
            )
        }));
        ConfigView {
            settings: crate::config::effective_settings(db),
            files: cfg.sources.clone(),
            problems,
        }
    }

    /// The file at `.ai/<rel>` of each space, in search order (project, user, bundles).
    pub fn files_at(&self, rel: &str) -> Vec<SourceFile> {
        let db = self.db;
        let mut out = Vec::new();
        for root in db.workspace().roots(db) {
            let (files, rels) = (root.files(db), root.rels(db));
            let i = rels.partition_point(|r| r.as_ref() < rel);
            if let (Some(&f), Some(r)) = (files.get(i), rels.get(i))
                && r.as_ref() == rel
            {
                out.push(f);
            }
        }
        out
    }

    /// The file's text, or why it has none (`it is not valid UTF-8 (…)`, the system's reason).
    pub fn contents(&self, file: SourceFile) -> Result<Cow<'db, str>, String> {
        let c = file.contents(self.db);
        c.text().ok_or_else(|| c.problem().unwrap_or_default())
    }

    /// `text` (the file's) verified as a tool of its extension's signature format against the
    /// trust store (`None`: a file of the embedded bundle, trusted as it is).
    pub fn verify_as_tool(
        &self,
        file: SourceFile,
        text: &str,
    ) -> Option<crate::integrity::Verdict> {
        use crate::integrity::{ItemKind, extension_of, formats_of, is_embedded, verify_text};
        let db: &dyn Db = self.db;
        if is_embedded(db, file) {
            return None;
        }
        let fmt = formats_of(db, ItemKind::Tool).get(ItemKind::Tool, extension_of(file.rel(db)));
        let store = self.trust_store();
        let trusted = |fp: &str| store.lookup(fp).map(|(k, _)| k.pem.clone());
        Some(verify_text(ItemKind::Tool, &fmt, text, &trusted))
    }

    // ---- signing -----------------------------------------------------------------------------

    /// The `.ai` folder of the first loaded space of `kind`.
    pub fn space_root(&self, kind: SpaceKind) -> Option<PathBuf> {
        self.first_root(kind)
            .map(|r| r.root(self.db).as_ref().clone())
    }

    /// The first loaded space of `kind`, in search order.
    fn first_root(&self, kind: SpaceKind) -> Option<crate::db::SpaceRoot> {
        let db = self.db;
        db.workspace()
            .roots(db)
            .iter()
            .copied()
            .find(|r| r.space(db).kind() == kind)
    }

    /// The items of `item` kind in the first loaded space of `space`: (item id, file), sorted by
    /// id, then (two files of one tool id) by the extractors' extension order.
    pub fn items(
        &self,
        space: SpaceKind,
        item: crate::integrity::ItemKind,
    ) -> Vec<(String, SourceFile)> {
        use crate::integrity::ItemKind;
        let db = self.db;
        let Some(root) = self.first_root(space) else {
            return Vec::new();
        };
        let cfg = crate::resolve::extractor_config(db);
        use crate::place::Place;
        use crate::resolve::FileKind;
        let mut out: Vec<(String, usize, SourceFile)> = root
            .entries(db)
            .filter_map(|(rel, f)| match (item, crate::resolve::place_kind(db, f)) {
                (ItemKind::Tool, FileKind::Tool | FileKind::At(Place::Extractor)) => {
                    let (id, ext) = crate::resolve::split_tool_rel(rel.as_ref())?;
                    Some((id.to_owned(), cfg.extension_rank(ext)?, f))
                }
                (ItemKind::Directive, FileKind::At(Place::Directive))
                | (ItemKind::Knowledge, FileKind::At(Place::Knowledge)) => {
                    let id = rel.strip_prefix(item.dir())?.strip_suffix(".md")?;
                    (!id.is_empty()).then(|| (id.to_owned(), 0, f))
                }
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        out.into_iter().map(|(id, _, f)| (id, f)).collect()
    }

    /// The file tool `id` resolves to inside the first loaded space of `space` alone.
    pub fn tool_in(&self, space: SpaceKind, id: &str) -> Option<SourceFile> {
        let db = self.db;
        let root = self.first_root(space)?;
        crate::resolve::space_index(db, root).first(id, crate::resolve::extractor_config(db))
    }

    /// The `validation_schema.fields` of the first extractor for `kind` that declares one.
    pub fn validation_schema(
        &self,
        kind: crate::integrity::ItemKind,
    ) -> Option<serde_yaml::Mapping> {
        use crate::resolve::extractor::{EXTRACTORS_DIR, extractor_item_type};
        let db = self.db;
        for root in db.workspace().roots(db) {
            for (rel, file) in root.entries(db) {
                if !rel.starts_with(EXTRACTORS_DIR)
                    || rel.ends_with(".py")
                    || extractor_item_type(rel) != Some(kind.name())
                {
                    continue;
                }
                let Some(text) = file.contents(db).text() else {
                    continue;
                };
                let Ok(doc) = crate::parse::guard::yaml_from_str::<serde_yaml::Value>(&text) else {
                    continue;
                };
                if let Some(fields) = doc
                    .get("validation_schema")
                    .and_then(|s| s.get("fields"))
                    .and_then(|f| f.as_mapping())
                {
                    return Some(fields.clone());
                }
            }
        }
        None
    }

    /// Whether an extractor names a metadata parser for the tool file's extension (§2.6).
    pub fn has_metadata_parser(&self, file: SourceFile) -> bool {
        let ext = crate::resolve::split_tool_rel(file.rel(self.db)).map_or("", |(_, e)| e);
        crate::resolve::extractor_config(self.db)
            .parser_for(ext)
            .is_some()
    }

    /// A tool file's header and what stopped it parsing (byte spans and messages).
    pub fn header(
        &self,
        file: SourceFile,
    ) -> (
        std::sync::Arc<crate::model::Metadata>,
        Vec<crate::model::ParseProblem>,
    ) {
        let parsed = crate::resolve::parse_file(self.db, file);
        (parsed.metadata.clone(), parsed.problems.clone())
    }

    /// Why a file has no text, in lint's words (`symlink-escape`, `unreadable-file`).
    pub fn unreadable_reason(&self, file: SourceFile) -> Option<String> {
        crate::rules::checks::unreadable_message(self.db, file.contents(self.db))
    }

    /// The file's text as the database holds it (shared, possibly compressed).
    pub fn text_handle(&self, file: SourceFile) -> Option<crate::db::Text> {
        match file.contents(self.db) {
            crate::db::FileContents::Text(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// How an item of `kind` at the file's place is signed (§10.1).
    pub fn signature_format(
        &self,
        kind: crate::integrity::ItemKind,
        file: SourceFile,
    ) -> crate::integrity::SignatureFormat {
        crate::integrity::format_for(self.db, kind, file.rel(self.db))
    }

    /// How an item of `kind` written at `rel` (below a space's `.ai/`) is signed (§10.1): for a
    /// file not loaded (yet), as a run's state.
    pub fn signature_format_at(
        &self,
        kind: crate::integrity::ItemKind,
        rel: &str,
    ) -> crate::integrity::SignatureFormat {
        crate::integrity::format_for(self.db, kind, rel)
    }

    /// `f` on every item, in parallel, results in order (as the lint: chunks, each rayon job
    /// with its own view on a database clone made on this thread).
    pub fn par_map<T: Sync, R: Send>(
        &self,
        items: &[T],
        f: &(dyn Fn(Analysis<'_>, &T) -> R + Sync),
    ) -> Vec<R> {
        super::par_chunks_with_progress(
            self.db,
            items,
            &|db, part| part.iter().map(|x| f(Analysis::new(db), x)).collect(),
            &|_| {},
            None,
        )
    }

    /// Raw access for the host-side code that lives beside the database (the loader, the lint
    /// cache): never for an edge.
    pub(crate) fn db(&self) -> &'db dyn Db {
        self.db
    }
}
