//! L5 a lint kept current across changes (`lint --watch`): each file's findings and the ids they
//! read, so that a change re-checks only the files it can reach — the changed files, the tools
//! whose chains read a changed id or share one, the graph-wide findings when an executor edge can
//! have moved — instead of asking every file's memos again (130–230 ms at 100k tools).
//!
//! Which files a change reaches is the argument of the lint cache (`lazy::file_chain_ids`): a
//! tool's findings read its own text, the files of its own id (shadowing, ambiguity), the files of
//! the ids its chain reads, and for a missing executor the set of every visible id; config,
//! extractor, trust-store files and lockfiles can move every finding, and re-check everything
//! (salsa still answers the untouched memos). `tests/incremental.rs` holds the result equal to a
//! fresh lint after random batches of changes, `tests/live_lint.rs` after an edit and a removal
//! of each file of every rule's fixture.

use std::collections::BTreeMap;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{
    Analysis, Checks, DepIds, Host, LintOptions, LintParts, LintReport, LintedFile, display_path,
    integrity_enabled, lint_chunk, lint_parts, loaded_file_count, par_chunks, report_of,
};
use crate::db::{Change, Db, FileChange, SourceFile};
use crate::diagnostic::{Finding, Severity, Summary, sort_findings};
use crate::model::{SpaceKind, SpaceSet};
use crate::place::Place;
use crate::resolve::{extractor_config, max_depth, space_index, split_tool_rel, tool_count};

/// Files whose change can move every finding: config, extractors, the trust store, lockfiles
/// (a lockfile's findings read the hashes of its whole chain), anything else that is not an
/// item. Items (tools, directives, knowledge) are the rest.
pub fn is_global(rel: &str) -> bool {
    match Place::of(rel) {
        Place::Tool | Place::Directive | Place::Knowledge => false,
        // A file beside the items (notes under `directives/`) is read by no check.
        Place::Other => {
            !(rel.starts_with(crate::place::DIRECTIVES_DIR)
                || rel.starts_with(crate::place::KNOWLEDGE_DIR))
        }
        _ => true,
    }
}

/// Whether the lint checks an item file of this `rel` (`lint_files`: tools of a known
/// extension, directives, knowledge, lockfiles: files a change to another file can re-check).
pub fn lintable(db: &dyn Db, rel: &str) -> bool {
    match split_tool_rel(rel) {
        Some((_, ext)) if extractor_config(db).has_extension(ext) => true,
        _ => matches!(
            Place::of(rel),
            Place::Directive | Place::Knowledge | Place::Lockfile
        ),
    }
}

/// A re-check of at most this many files runs on this thread; more go to the pool.
const SERIAL_MAX: usize = 32;

/// What a file's findings depend on, and the findings.
#[derive(Clone, Debug)]
struct Part {
    findings: Vec<Finding>,
    /// The index of its list of dependency ids in [`LiveLint::deps`], for a tool.
    list: Option<u32>,
    /// Its chain stops at an executor id that resolves nowhere (whose "did you mean" reads
    /// every visible id).
    missing: bool,
    panicked: bool,
}

/// The lint of a long-lived host, kept current by [`LiveLint::apply`].
pub struct LiveLint {
    opts: LintOptions,
    parts: FxHashMap<SourceFile, Part>,
    graph: Vec<Finding>,
    deps: DepIds,
    /// The files whose part has each dependency list.
    members: FxHashMap<u32, FxHashSet<SourceFile>>,
    summary: Summary,
    internal_errors: usize,
}

/// What one change did to the findings.
#[derive(Clone, Debug, Default)]
pub struct Delta {
    /// Files whose inputs the change altered (written with other contents, added or removed).
    pub changed: usize,
    /// Files checked again.
    pub rechecked: usize,
    /// Why every file was checked again, when it was.
    pub full: Option<String>,
    /// Findings that appeared and that went away (the same rule and message in the same file is
    /// the same finding, wherever its line moved), in report order.
    pub new: Vec<Finding>,
    pub fixed: Vec<Finding>,
    /// The totals after the change.
    pub summary: Summary,
    pub internal_errors: usize,
}

/// What a change alters, told before it is applied ([`LiveLint::plan`]). The plans of changes
/// applied one after another whose re-check has not been taken merge into one
/// ([`Plan::merge`]): re-checked on the host with every change applied, they reach what each
/// would have.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Files whose inputs changed (written with other contents, added or removed).
    altered: usize,
    /// Why every file must be checked again, when it must.
    full: Option<String>,
    /// For a full re-check whose changes can move no chain (a config, trust-store file or
    /// lockfile, nothing else): the chain length limit before them. When it is still the limit
    /// after, every tool's dependency ids are as they were, and the re-check keeps them instead
    /// of walking every chain again for them.
    keep_deps: Option<usize>,
    /// Files written with other contents.
    changed: Vec<SourceFile>,
    added: Vec<std::path::PathBuf>,
    removed: Vec<SourceFile>,
    /// The tool ids of changed, added and removed files.
    touched: FxHashSet<String>,
    ids_come_or_go: bool,
}

impl Plan {
    /// Nothing to check again.
    pub fn is_empty(&self) -> bool {
        self.altered == 0 && self.full.is_none()
    }

    /// This plan and `later`'s (made after this one's change was applied) as one.
    pub fn merge(&mut self, later: Plan) {
        // Only full plans keep dependency ids: a plan that is neither full nor empty altered items.
        self.keep_deps = match (self.is_empty(), later.is_empty()) {
            (true, _) => later.keep_deps,
            (_, true) => self.keep_deps,
            _ => self.keep_deps.filter(|_| later.keep_deps.is_some()),
        };
        self.altered += later.altered;
        if self.full.is_none() {
            self.full = later.full;
        }
        if self.full.is_some() {
            return;
        }
        // (A set, not a search of the list per file: many merged plans of many files each — a
        // branch checked out under the editor — made that quadratic.)
        if !later.changed.is_empty() {
            let mut seen: FxHashSet<SourceFile> = self.changed.iter().copied().collect();
            self.changed
                .extend(later.changed.into_iter().filter(|f| seen.insert(*f)));
        }
        self.added.extend(later.added);
        self.removed.extend(later.removed);
        self.touched.extend(later.touched);
        self.ids_come_or_go |= later.ids_come_or_go;
    }
}

/// What [`LiveLint::recheck`] found, for [`LiveLint::commit`].
pub enum Rechecked {
    /// Every file checked again; with `deps_kept`, without the dependency ids (the chains did
    /// not move: the ones kept stand).
    Full { parts: LintParts, deps_kept: bool },
    Some {
        /// The files checked again.
        targets: Vec<SourceFile>,
        /// The files the change removed.
        removed: Vec<SourceFile>,
        checked: Vec<LintedFile>,
        /// The graph-wide findings, when computed again.
        graph: Option<Vec<Finding>>,
    },
}

impl Rechecked {
    /// The files whose findings may differ from before (checked again or removed); `None`:
    /// every file.
    pub fn files(&self) -> Option<impl Iterator<Item = SourceFile> + '_> {
        match self {
            Rechecked::Full { .. } => None,
            Rechecked::Some {
                targets, removed, ..
            } => Some(targets.iter().chain(removed).copied()),
        }
    }

    /// For a re-check of every file, the files that have findings (graph-wide ones aside).
    pub fn files_with_findings(&self) -> Option<Vec<SourceFile>> {
        match self {
            Rechecked::Full { parts, .. } => Some(
                parts
                    .files
                    .iter()
                    .filter(|lf| !lf.findings.is_empty())
                    .map(|lf| lf.file)
                    .collect(),
            ),
            Rechecked::Some { .. } => None,
        }
    }

    /// Whether the graph-wide findings were computed again.
    pub fn graph_changed(&self) -> bool {
        match self {
            Rechecked::Full { .. } => true,
            Rechecked::Some { graph, .. } => graph.is_some(),
        }
    }
}

/// A finding as changes compare them: where lines shift under an edit, the same problem in the
/// same file is the same finding; at another severity (a config edit) it is another one, so
/// that the change is shown (fixed as an error, new as a warning).
type Key<'a> = (&'a str, &'a str, &'a str, Severity);

fn key(f: &Finding) -> Key<'_> {
    (&f.path, &f.rule, &f.message, f.severity)
}

/// The findings of `now` beyond those of `before` (by key, counting duplicates), cloned.
fn beyond(now: &[&Finding], before: &[&Finding]) -> Vec<Finding> {
    let mut left: BTreeMap<Key<'_>, usize> = BTreeMap::new();
    for f in before {
        *left.entry(key(f)).or_insert(0) += 1;
    }
    let mut out: Vec<Finding> = now
        .iter()
        .filter(|f| match left.get_mut(&key(f)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .map(|f| (*f).clone())
        .collect();
    sort_findings(&mut out);
    out
}

/// Errors and warnings among `findings`, as (errors, warnings).
fn severities<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> (usize, usize) {
    findings
        .into_iter()
        .fold((0, 0), |(e, w), f| match f.severity {
            Severity::Error => (e + 1, w),
            Severity::Warning => (e, w + 1),
            _ => (e, w),
        })
}

impl LiveLint {
    /// Lint every file of `db`, keeping what each file's findings read.
    pub fn new(a: Analysis<'_>, opts: LintOptions, progress: &(dyn Fn(usize) + Sync)) -> LiveLint {
        let db = a.db;
        let parts = lint_parts(db, &opts, progress, true, Checks::Memoized);
        LiveLint::from_parts(parts, opts)
    }

    /// From a lint of every file made with dependencies and memoized checks
    /// (`lint_parts(.., true, Checks::Memoized)`).
    pub fn from_parts(parts: LintParts, opts: LintOptions) -> LiveLint {
        let mut live = LiveLint {
            opts,
            parts: FxHashMap::default(),
            graph: Vec::new(),
            deps: DepIds::default(),
            members: FxHashMap::default(),
            summary: Summary::default(),
            internal_errors: 0,
        };
        live.replace_all(parts);
        live
    }

    /// Every finding, sorted, with the totals: what a fresh `lint` of the host would report.
    pub fn report(&self) -> LintReport {
        let mut findings: Vec<Finding> = self
            .parts
            .values()
            .flat_map(|p| p.findings.iter().cloned())
            .chain(self.graph.iter().cloned())
            .collect();
        sort_findings(&mut findings);
        report_of(
            findings,
            self.summary.files,
            self.summary.tools,
            self.internal_errors,
        )
    }

    /// [`LiveLint::report`] with only the findings `shown` asks for (`scope::Uses`), and what it
    /// left out in the summary: what a fresh `lint --space` of the host would report.
    pub fn scoped_report(&self, a: Analysis<'_>, shown: SpaceSet) -> LintReport {
        use super::scope::{Owner, Uses, outside};
        let db = a.db;
        let any_outside = self
            .parts
            .values()
            .flat_map(|p| &p.findings)
            .chain(&self.graph)
            .any(|f| outside(f, shown));
        if !any_outside {
            return self.report();
        }
        let parts: Vec<(&SourceFile, &Part)> = self.parts.iter().collect();
        let files: Vec<(SpaceKind, &str)> = parts
            .iter()
            .map(|(f, _)| (f.space(db).kind(), &**f.rel(db)))
            .collect();
        let reads = |i: usize| {
            parts[i]
                .1
                .list
                .map(|l| self.deps.list_ids(l))
                .unwrap_or_default()
        };
        let uses = Uses::new(&files, reads, shown);
        let mut hidden = super::scope::Hidden::default();
        let mut findings: Vec<Finding> = Vec::new();
        let owned = parts
            .iter()
            .enumerate()
            .flat_map(|(i, (_, p))| p.findings.iter().map(move |f| (Owner::File(i), f)))
            .chain(self.graph.iter().map(|f| (Owner::Graph, f)));
        for (owner, f) in owned {
            if uses.shows(owner, f, shown) {
                findings.push(f.clone());
            } else {
                hidden.add(f);
            }
        }
        sort_findings(&mut findings);
        let mut report = report_of(
            findings,
            self.summary.files,
            self.summary.tools,
            self.internal_errors,
        );
        report.summary.hidden = hidden.count;
        report.summary.hidden_spaces = hidden.spaces;
        report
    }

    /// Whether some finding is of a file outside the `shown` spaces (then a scoped report may
    /// differ from [`LiveLint::report`]).
    pub fn any_outside(&self, shown: SpaceSet) -> bool {
        self.parts
            .values()
            .flat_map(|p| &p.findings)
            .chain(&self.graph)
            .any(|f| super::scope::outside(f, shown))
    }

    /// `delta`, which [`LiveLint::apply`] just returned, seen through `shown`. `before` holds the
    /// scoped findings of the last report when some were hidden or outside `shown` (`None`: that
    /// report was [`LiveLint::report`] itself), and is brought up to date. A change can bring a
    /// file of another space into use, or out of it, without touching the file: new and fixed
    /// are then told against what the last report showed.
    pub fn scope_delta(
        &self,
        a: Analysis<'_>,
        shown: SpaceSet,
        delta: &mut Delta,
        before: &mut Option<Vec<Finding>>,
    ) {
        let outside_now = self.any_outside(shown);
        match before.take() {
            // Nothing outside before or now: the live delta is the scoped one.
            None if !outside_now => {}
            // Nothing was outside, so nothing was hidden and every old finding stays shown: what
            // went away is the live delta's; of what appeared, the hidden is left out.
            None => {
                let report = self.scoped_report(a, shown);
                delta.new.retain(|f| {
                    report
                        .findings
                        .binary_search_by(|g| crate::diagnostic::compare_findings(g, f))
                        .is_ok()
                });
                delta.summary = report.summary;
                *before = Some(report.findings);
            }
            Some(was) => {
                let report = self.scoped_report(a, shown);
                {
                    let now: Vec<&Finding> = report.findings.iter().collect();
                    let was: Vec<&Finding> = was.iter().collect();
                    delta.new = beyond(&now, &was);
                    delta.fixed = beyond(&was, &now);
                }
                delta.summary = report.summary;
                *before = outside_now.then_some(report.findings);
            }
        }
    }

    /// The files that have findings (graph-wide ones aside).
    pub fn files_with_findings(&self) -> Vec<SourceFile> {
        self.parts
            .iter()
            .filter(|(_, p)| !p.findings.is_empty())
            .map(|(&f, _)| f)
            .collect()
    }

    /// The totals of the current findings.
    #[cfg(any(test, feature = "testing"))]
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Take a whole lint's parts (their dependency lists re-interned here).
    fn replace_all(&mut self, parts: LintParts) {
        self.parts.clear();
        self.members.clear();
        let LintParts {
            files,
            graph,
            file_count,
            tool_count,
            dep_ids,
            dep_lists,
        } = parts;
        // The lint's own tables: each file's list index stays valid.
        self.deps = DepIds::from_tables(dep_ids, dep_lists);
        for lf in files {
            self.insert(lf);
        }
        self.graph = graph;
        self.summary.files = file_count;
        self.summary.tools = tool_count;
        self.recount();
    }

    /// Take a whole lint's parts made without dependency ids, keeping each file's (the chains did
    /// not move; a file new to the lint is not a tool, and one gone was not).
    fn replace_findings(&mut self, parts: LintParts) {
        // In place: a second map of every part, even for a moment, was 12 MB more at the peak
        // of a 100k-tool host.
        let files: Vec<SourceFile> = parts.files.iter().map(|lf| lf.file).collect();
        for lf in parts.files {
            match self.parts.get_mut(&lf.file) {
                Some(p) => {
                    p.findings = lf.findings;
                    p.panicked = lf.panicked;
                }
                None => {
                    let part = Part {
                        findings: lf.findings,
                        list: None,
                        missing: false,
                        panicked: lf.panicked,
                    };
                    self.parts.insert(lf.file, part);
                }
            }
        }
        if self.parts.len() != files.len() {
            let now: FxHashSet<SourceFile> = files.into_iter().collect();
            let gone: Vec<SourceFile> = self
                .parts
                .keys()
                .filter(|f| !now.contains(f))
                .copied()
                .collect();
            for f in gone {
                self.take(f);
            }
        }
        self.graph = parts.graph;
        self.summary.files = parts.file_count;
        self.summary.tools = parts.tool_count;
        self.recount();
    }

    /// Keep `lf` as its file's part (its dependency list an index into `self.deps`).
    fn insert(&mut self, lf: LintedFile) {
        let list = lf.deps.as_ref().map(|d| d.list);
        if let Some(l) = list {
            self.members.entry(l).or_default().insert(lf.file);
        }
        let part = Part {
            missing: lf.missing().is_some(),
            findings: lf.findings,
            list,
            panicked: lf.panicked,
        };
        self.parts.insert(lf.file, part);
    }

    /// Drop `file`'s part, returning it.
    fn take(&mut self, file: SourceFile) -> Option<Part> {
        let part = self.parts.remove(&file)?;
        if let Some(l) = part.list
            && let Some(m) = self.members.get_mut(&l)
        {
            m.remove(&file);
        }
        Some(part)
    }

    /// Errors, warnings and internal errors counted again from every part.
    fn recount(&mut self) {
        let (e, w) = severities(
            self.parts
                .values()
                .flat_map(|p| &p.findings)
                .chain(&self.graph),
        );
        self.summary.errors = e;
        self.summary.warnings = w;
        self.internal_errors = self.parts.values().filter(|p| p.panicked).count();
    }

    /// Apply `change` to `host` and bring the lint up to date, re-checking only what it reaches
    /// (`plan`, then the change applied, `recheck` and `commit`).
    pub fn apply(&mut self, host: &mut Host, change: Change) -> Delta {
        let plan = self.plan(host.analysis(), &change);
        host.apply(change);
        if plan.is_empty() {
            return self.delta(0, 0, None, Vec::new(), Vec::new());
        }
        let rechecked = self.recheck(host.analysis(), &plan);
        self.commit(host.analysis(), &plan, rechecked)
    }

    /// What `change` alters, told from `db` before it is applied: a write of what a file already
    /// holds alters nothing.
    pub fn plan(&self, a: Analysis<'_>, change: &Change) -> Plan {
        let db = a.db;
        let mut full: Option<String> = None;
        // Whether a chain may walk otherwise: the spaces, the settings (primitives, the limit),
        // an extractor (extensions, parsers) or an item changed. (The config's limit is compared
        // after the change, in `recheck`.)
        let mut chains_move = change.roots.is_some() || change.settings.is_some();
        if change.roots.is_some() {
            full = Some("the spaces were loaded again".to_owned());
        } else if let Some(s) = &change.settings
            && s != db.workspace().settings(db)
        {
            full = Some("the settings changed".to_owned());
        }
        let mut changed: Vec<SourceFile> = Vec::new();
        // Each added file's path and rel.
        let mut added: Vec<(&Path, &str)> = Vec::new();
        let mut removed: Vec<SourceFile> = Vec::new();
        // Each path once, by its last operation; a path written or removed more than once in one
        // change counts as removed and then added (a removal and a write make a new input).
        let mut last: FxHashMap<&Path, (usize, &FileChange)> = FxHashMap::default();
        for fc in &change.files {
            let path = match fc {
                FileChange::Write(spec) => spec.path.as_path(),
                FileChange::Remove(path) => path.as_path(),
            };
            let e = last.entry(path).or_insert((0, fc));
            *e = (e.0 + 1, fc);
        }
        let mut done: FxHashSet<&Path> = FxHashSet::default();
        for fc in &change.files {
            let path = match fc {
                FileChange::Write(spec) => spec.path.as_path(),
                FileChange::Remove(path) => path.as_path(),
            };
            if !done.insert(path) {
                continue;
            }
            let (ops, fc) = last[path];
            let before = db.file_at(path);
            let mut kind = None;
            match (fc, before) {
                (FileChange::Write(spec), Some(f))
                    if ops == 1
                        && f.contents(db) == &spec.contents
                        && f.link_origin(db) == spec.link_origin => {}
                (FileChange::Write(_), Some(f)) if ops == 1 => {
                    changed.push(f);
                    kind = Some("changed");
                }
                (FileChange::Write(spec), before) => {
                    removed.extend(before);
                    added.push((path, spec.rel.as_str()));
                    kind = Some("added");
                }
                (FileChange::Remove(_), Some(f)) => {
                    removed.push(f);
                    kind = Some("removed");
                }
                (FileChange::Remove(_), None) => {}
            }
            if let Some(kind) = kind {
                let rel = match fc {
                    FileChange::Write(spec) => spec.rel.as_str(),
                    FileChange::Remove(_) => before.map_or("", |f| &**f.rel(db)),
                };
                // A lockfile's findings read the ids it pins: written, added or removed, its own
                // entry of the table of what each file reads must be made again.
                chains_move |=
                    !is_global(rel) || matches!(Place::of(rel), Place::Extractor | Place::Lockfile);
                if full.is_none() && is_global(rel) {
                    full = Some(format!(".ai/{rel} was {kind}"));
                }
            }
        }
        let altered = changed.len() + added.len() + removed.len();
        if full.is_some() {
            return Plan {
                altered,
                full,
                keep_deps: (!chains_move).then(|| max_depth(db)),
                ..Plan::default()
            };
        }

        // The ids the change touches (a tool added, removed or changed) and whether ids came or
        // went.
        let mut plan = Plan {
            altered,
            ..Plan::default()
        };
        for &f in &changed {
            if let Some((id, _)) = split_tool_rel(f.rel(db)) {
                plan.touched.insert(id.to_owned());
            }
        }
        plan.changed = changed;
        for &f in &removed {
            if let Some((id, ext)) = split_tool_rel(f.rel(db)) {
                plan.touched.insert(id.to_owned());
                plan.ids_come_or_go |= extractor_config(db).has_extension(ext);
            }
        }
        plan.removed = removed;
        for &(path, rel) in &added {
            if let Some((id, ext)) = split_tool_rel(rel) {
                plan.touched.insert(id.to_owned());
                plan.ids_come_or_go |= extractor_config(db).has_extension(ext);
            }
            plan.added.push(path.to_path_buf());
        }
        plan
    }

    /// Check again, on `db` (the change applied), what `plan` reaches: read-only, so that an
    /// editor can run it off its main thread and drop it when a newer change comes.
    pub fn recheck(&self, a: Analysis<'_>, plan: &Plan) -> Rechecked {
        let db = a.db;
        if plan.full.is_some() {
            let deps_kept = plan.keep_deps == Some(max_depth(db));
            let parts = lint_parts(db, &self.opts, &|_| {}, !deps_kept, Checks::Memoized);
            return Rechecked::Full { parts, deps_kept };
        }
        // Written again after a removal, a file may be the same input still.
        let removed: Vec<SourceFile> = plan
            .removed
            .iter()
            .copied()
            .filter(|&f| db.file_at(f.path(db)) != Some(f))
            .collect();

        // What to check again: the changed and added files, every file of a touched id, every
        // tool whose chain reads one, and, when ids came or went, every tool whose missing
        // executor's suggestions read the set of ids.
        let mut targets: Vec<SourceFile> = Vec::new();
        let mut seen: FxHashSet<SourceFile> = FxHashSet::default();
        let mut push = |f: SourceFile, targets: &mut Vec<SourceFile>| {
            if seen.insert(f) {
                targets.push(f);
            }
        };
        for &f in &plan.changed {
            push(f, &mut targets);
        }
        for p in &plan.added {
            if let Some(f) = db.file_at(p) {
                push(f, &mut targets);
            }
        }
        for &root in db.workspace().roots(db) {
            let index = space_index(db, root);
            for id in &plan.touched {
                for &(_, f) in index.candidates(id) {
                    push(f, &mut targets);
                }
            }
        }
        for l in self.deps.lists_with(&plan.touched) {
            if let Some(m) = self.members.get(&l) {
                for &f in m {
                    push(f, &mut targets);
                }
            }
        }
        if plan.ids_come_or_go {
            for (&f, p) in &self.parts {
                if p.missing {
                    push(f, &mut targets);
                }
            }
        }
        // Only what the lint checks, what is still there, and not what was removed.
        let removed_set: FxHashSet<SourceFile> = removed.iter().copied().collect();
        targets.retain(|&f| {
            !removed_set.contains(&f)
                && db.file_at(f.path(db)) == Some(f)
                && lintable(db, f.rel(db))
        });

        let integrity = integrity_enabled(db);
        let opts = &self.opts;
        let deps = &self.deps;
        let checked: Vec<LintedFile> = if targets.len() <= SERIAL_MAX {
            lint_chunk(db, &targets, opts, integrity, Some(deps), Checks::Memoized)
        } else {
            par_chunks(db, &targets, &|db, part| {
                lint_chunk(db, part, opts, integrity, Some(deps), Checks::Memoized)
            })
        };
        // The graph-wide findings (each cycle, with its members and the tools that run into it)
        // are computed again, a query over every tool's edge, only when they may differ. The
        // tools whose edge may have moved (changed, added or removed, or naming a touched id)
        // are among the targets and the removed files (each names its edge's id among the ids
        // its chain reads). Over the executor graph, where each tool has at most one edge:
        // a cycle that appeared or went away holds such a tool, which then runs into a cycle
        // after or before; so does any tool whose walk to a cycle passes one. When none of
        // them ran into a cycle before (no finding names its path) and none does now (its
        // chain does not end in one or at the length limit), every cycle and everything that
        // runs into it is as it was, and the findings with them.
        let base = self.opts.display_base.as_deref();
        let old_graph_paths: FxHashSet<&str> = self
            .graph
            .iter()
            .flat_map(|g| {
                std::iter::once(g.path.as_str())
                    .chain(g.notes.iter().filter_map(|n| n.path.as_deref()))
            })
            .collect();
        let graph_dirty = checked.iter().any(LintedFile::cycle)
            || (!old_graph_paths.is_empty()
                && targets
                    .iter()
                    .chain(&removed)
                    .any(|f| old_graph_paths.contains(display_path(f.path(db), base).as_str())));
        let graph = graph_dirty.then(|| super::graph_findings(db, &self.opts));
        Rechecked::Some {
            targets,
            removed,
            checked,
            graph,
        }
    }

    /// Take what `recheck` found for `plan` on `db`, comparing what was with what is.
    pub fn commit(&mut self, a: Analysis<'_>, plan: &Plan, rechecked: Rechecked) -> Delta {
        let db = a.db;
        let (targets, removed, checked, graph) = match rechecked {
            Rechecked::Full { parts, deps_kept } => {
                let before = self.report().findings;
                let rechecked = parts.files.len();
                if deps_kept {
                    self.replace_findings(parts);
                } else {
                    self.replace_all(parts);
                }
                let after = self.report().findings;
                let before: Vec<&Finding> = before.iter().collect();
                let after: Vec<&Finding> = after.iter().collect();
                let new = beyond(&after, &before);
                let fixed = beyond(&before, &after);
                return self.delta(plan.altered, rechecked, plan.full.clone(), new, fixed);
            }
            Rechecked::Some {
                targets,
                removed,
                checked,
                graph,
            } => (targets, removed, checked, graph),
        };
        let mut old: Vec<Part> = Vec::new();
        for &f in removed.iter().chain(&targets) {
            old.extend(self.take(f));
        }
        let old_graph = graph.map(|g| std::mem::replace(&mut self.graph, g));
        let rechecked = checked.len();
        for lf in checked {
            self.insert(lf);
        }
        self.summary.files = loaded_file_count(db);
        self.summary.tools = tool_count(db);

        let before: Vec<&Finding> = old
            .iter()
            .flat_map(|p| &p.findings)
            .chain(old_graph.iter().flatten())
            .collect();
        let now: Vec<&Finding> = targets
            .iter()
            .filter_map(|f| self.parts.get(f))
            .flat_map(|p| &p.findings)
            .chain(
                old_graph
                    .as_ref()
                    .map(|_| &self.graph)
                    .into_iter()
                    .flatten(),
            )
            .collect();
        let new = beyond(&now, &before);
        let fixed = beyond(&before, &now);
        let (e_old, w_old) = severities(before.iter().copied());
        let (e_new, w_new) = severities(now.iter().copied());
        self.summary.errors = (self.summary.errors + e_new).saturating_sub(e_old);
        self.summary.warnings = (self.summary.warnings + w_new).saturating_sub(w_old);
        let panicked_now = targets
            .iter()
            .filter(|f| self.parts.get(f).is_some_and(|p| p.panicked))
            .count();
        let panicked_before = old.iter().filter(|p| p.panicked).count();
        self.internal_errors =
            (self.internal_errors + panicked_now).saturating_sub(panicked_before);
        self.delta(plan.altered, rechecked, None, new, fixed)
    }

    fn delta(
        &self,
        changed: usize,
        rechecked: usize,
        full: Option<String>,
        new: Vec<Finding>,
        fixed: Vec<Finding>,
    ) -> Delta {
        Delta {
            changed,
            rechecked,
            full,
            new,
            fixed,
            summary: self.summary,
            internal_errors: self.internal_errors,
        }
    }
}

impl DepIds {
    /// The lists that hold one of `ids`.
    fn lists_with(&self, ids: &FxHashSet<String>) -> Vec<u32> {
        let guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let hit: FxHashSet<u32> = ids
            .iter()
            .filter_map(|id| guard.index.get(id.as_str()).copied())
            .collect();
        if hit.is_empty() {
            return Vec::new();
        }
        guard
            .lists
            .iter()
            .enumerate()
            .filter(|(_, l)| l.iter().any(|i| hit.contains(i)))
            .filter_map(|(i, _)| u32::try_from(i).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::FileContents;
    use crate::model::Space;
    use std::sync::Arc;

    /// Merged plans list each changed file once, in the order first changed, and add up what
    /// they altered; a full plan absorbs the rest.
    #[test]
    fn merged_plans_list_each_changed_file_once_in_order() {
        let db = crate::db::RootDb::new();
        let files: Vec<SourceFile> = (0..6)
            .map(|i| {
                let rel: Arc<str> = format!("tools/t{i}.py").into();
                SourceFile::new(
                    &db,
                    Arc::new(std::path::PathBuf::from(format!("/p/.ai/{rel}"))),
                    rel,
                    Space::Project,
                    None,
                    FileContents::Unreadable("test".to_owned()),
                )
            })
            .collect();
        let plan = |ids: &[usize]| Plan {
            altered: ids.len(),
            changed: ids.iter().map(|&i| files[i]).collect(),
            ..Plan::default()
        };
        let mut merged = plan(&[3, 1]);
        merged.merge(plan(&[1, 4, 3, 0]));
        merged.merge(plan(&[]));
        merged.merge(plan(&[5, 4]));
        let order: Vec<SourceFile> = [3, 1, 4, 0, 5].iter().map(|&i| files[i]).collect();
        assert_eq!(merged.changed, order);
        assert_eq!(merged.altered, 8);
        assert!(!merged.is_empty());

        let mut full = plan(&[2]);
        full.merge(Plan {
            full: Some("the config changed".to_owned()),
            ..Plan::default()
        });
        full.merge(plan(&[0]));
        assert_eq!(full.full.as_deref(), Some("the config changed"));
        assert_eq!(full.changed, [files[2]]);
    }
}
