//! L5 the analysis host: `Host` owns the database and applies changes; `lint` computes every
//! file's diagnostics in parallel (rayon, one db clone per job, each file under `catch_unwind`),
//! applies rule selection and severities, and turns spans into located findings.

mod api;
pub mod chain_view;
pub mod ide;
pub mod lazy;
pub mod live;
pub mod scope;
pub mod suppress;
pub mod verify;

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use crate::config::lint_config;
use crate::db::{Change, Db, RootDb, SourceFile};
use crate::diagnostic::{
    Diagnostic, Excerpt, Finding, FindingNote, Fix, LineIndex, Severity, Summary, sort_findings,
};
use crate::integrity::batch::{Job, verify_each};
use crate::integrity::{Claim, ItemKind, Verdict, claim_of};
use crate::model::{SpaceKind, SpaceSet};
use crate::place::Place;
use crate::resolve::{tool_count, tool_files, tool_id_ref, walk_chain};
use crate::rules::Rule;
use crate::rules::checks::{
    chain_diagnostics, compute_chain_diagnostics_of, compute_file_diagnostics, file_diagnostics,
    graph_diagnostics,
};
use crate::rules::integrity::{compute_integrity_diagnostics_given, integrity_diagnostics};

pub use api::{Analysis, Graph, Snapshot};

/// Rule id used for a panic caught while checking one file (not a rule: an internal defect).
pub const INTERNAL_ERROR: &str = "internal-error";

/// Owns the database; the only place changes are applied.
#[derive(Default)]
pub struct Host {
    db: RootDb,
}

impl Host {
    pub fn new() -> Self {
        Host { db: RootDb::new() }
    }
    /// A host whose database can record which queries execute (tests of incrementality).
    pub fn with_event_log() -> Self {
        Host {
            db: RootDb::with_event_log(),
        }
    }
    pub fn apply(&mut self, change: Change) {
        change.apply(&mut self.db);
    }
    /// Run `set` instead of the embedded rules (each rule executed as itself).
    pub fn use_rules(&mut self, set: crate::rules::RuleSet) {
        crate::rules::install(&mut self.db, set);
    }
    /// The one door for the edges: a view answering in plain data.
    pub fn analysis(&self) -> Analysis<'_> {
        Analysis::new(&self.db)
    }
    /// An owned view for another thread (the language server's requests).
    pub fn analysis_snapshot(&self) -> Snapshot {
        Snapshot::new(self.db.clone())
    }
    /// The raw database, for tests and the host-side code beside it (loader, lint cache).
    pub fn db(&self) -> &RootDb {
        &self.db
    }
    /// A read-only view sharing the database's memoized results.
    pub fn snapshot(&self) -> RootDb {
        self.db.clone()
    }
}

/// How to present findings.
#[derive(Clone, Debug, Default)]
pub struct LintOptions {
    /// Paths under this directory are shown relative to it.
    pub display_base: Option<PathBuf>,
}

#[derive(Clone, Debug, Default)]
pub struct LintReport {
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// Panics caught while checking files (each also appears as an `internal-error` finding).
    pub internal_errors: usize,
}

/// Which rules run and at what severity: CLI `--select` replaces the config's `select`,
/// `--ignore` adds to its `ignore`; config severities override rule defaults (`off` disables).
/// An opt-in rule (`enabled: false`) needs its id in the selection or a config severity.
pub fn effective_severity(db: &dyn Db, rule: &Rule) -> Option<Severity> {
    let settings = db.workspace().settings(db);
    let cfg = lint_config(db);
    let matches =
        |tok: &String| tok == "ALL" || tok.as_str() == rule.id.as_ref() || *tok == rule.family;
    let select = settings.select.as_ref().or(cfg.select.as_ref());
    let selected = select.is_none_or(|s| s.iter().any(matches));
    let ignored = cfg.ignore.iter().chain(&settings.ignore).any(matches);
    if !selected || ignored {
        return None;
    }
    match cfg
        .severity
        .iter()
        .rev()
        .find(|(id, _)| id.as_str() == rule.id.as_ref())
    {
        Some((_, sev)) => *sev,
        // An opt-in rule runs only when a selection names it by its id.
        None if !rule.enabled => select
            .is_some_and(|s| s.iter().any(|t| t.as_str() == rule.id.as_ref()))
            .then_some(rule.severity),
        None => Some(rule.severity),
    }
}

/// Files the lint looks at: every tool file, plus config and extractor files (they can carry
/// problems of their own).
pub fn lint_files(db: &dyn Db) -> Vec<SourceFile> {
    let mut files = tool_files(db).clone();
    files.extend(lint_config(db).sources.iter().copied());
    // Directives, knowledge, trust-store documents, key approvals and lockfiles (tools are
    // already in).
    for root in db.workspace().roots(db) {
        files.extend(
            root.entries(db)
                .filter(|(rel, _)| {
                    matches!(
                        Place::of(rel),
                        Place::Directive
                            | Place::Knowledge
                            | Place::Lockfile
                            | Place::TrustDocument
                            | Place::KeyApproval
                    )
                })
                .map(|(_, f)| f),
        );
    }
    for &f in &crate::resolve::extractor_config(db).sources {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    files
}

/// The findings of the lint rules at one file (its own and those of the chain it roots), with
/// the severities in force, each as `message [rule-id]`: the errors, then the warnings. The
/// integrity family and the rules in `skip` are left out (signing, the execution policy or a
/// later stage answer for them).
pub fn item_findings(db: &RootDb, file: SourceFile, skip: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    // Computed, not memoized (as a one-shot lint does): `sign` asks once per tool of a batch.
    let mut diags = crate::rules::checks::compute_file_diagnostics(db, file);
    diags.extend(crate::rules::checks::compute_chain_diagnostics(db, file));
    let diags: Vec<Diagnostic> = diags.into_iter().filter_map(|d| effective(db, d)).collect();
    // What a suppression comment or `lint.per-file-ignores` takes out of the lint is out of
    // these too: lint, `sign` and `exec` agree.
    for d in suppress::suppress(db, file, diags, false) {
        let Some(rule) = crate::rules::rule_set(db).get(&d.rule) else {
            continue;
        };
        if rule.family == "integrity" || skip.contains(&rule.id.as_ref()) {
            continue;
        }
        let text = format!("{} [{}]", d.message, rule.id);
        match d.severity {
            Severity::Error => errors.push(text),
            Severity::Warning => warnings.push(text),
            Severity::Info => {}
        }
    }
    (errors, warnings)
}

/// Whether any rule of the integrity family is enabled (if none is, files are not hashed at all).
pub fn integrity_enabled(db: &dyn Db) -> bool {
    crate::rules::rule_set(db)
        .rules
        .iter()
        .any(|r| r.family == "integrity" && effective_severity(db, r).is_some())
}

/// `file`'s diagnostics and whether a panic was caught; with `chain_ids`, also the ids its
/// chain reads when it is a tool (`lazy::chain_ids_of`, from the same walk of its chain).
/// What a lockfile's findings read (`None` for any other file that is not a tool).
fn lockfile_ids(db: &RootDb, file: SourceFile) -> Option<lazy::ChainIds> {
    crate::integrity::lockfile::is_lockfile_rel(file.rel(db))
        .then(|| lazy::lockfile_chain_ids(db, file))
}

fn check_file(
    db: &RootDb,
    file: SourceFile,
    integrity: bool,
    checks: Checks,
    verdict: Option<Verdict>,
    chain_ids: bool,
) -> (Vec<Diagnostic>, bool, Option<lazy::ChainIds>) {
    let run = || match checks {
        Checks::Memoized => {
            let mut d = file_diagnostics(db, file).clone();
            d.extend(chain_diagnostics(db, file).iter().cloned());
            if integrity {
                d.extend(integrity_diagnostics(db, file).iter().cloned());
            }
            let ids = if !chain_ids {
                None
            } else if tool_id_ref(db, file).is_some() {
                Some(lazy::file_chain_ids(db, file))
            } else {
                lockfile_ids(db, file)
            };
            (d, ids)
        }
        Checks::OneShot => {
            let mut d = compute_file_diagnostics(db, file);
            let mut ids = None;
            if tool_id_ref(db, file).is_some() {
                let ch = walk_chain(db, file);
                d.extend(compute_chain_diagnostics_of(db, file, &ch));
                ids = chain_ids.then(|| lazy::chain_ids_of(db, file, &ch));
            } else if chain_ids {
                ids = lockfile_ids(db, file);
            }
            if integrity {
                d.extend(compute_integrity_diagnostics_given(db, file, verdict));
            }
            (d, ids)
        }
    };
    match std::panic::catch_unwind(AssertUnwindSafe(run)) {
        Ok((d, ids)) => (d, false, ids),
        // A change arrived while this snapshot was being read (editor, `--watch`): not a defect;
        // the caller's `salsa::Cancelled::catch` drops the stale work.
        Err(payload) if payload.is::<salsa::Cancelled>() => std::panic::resume_unwind(payload),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            let diag = Diagnostic {
                rule: Arc::from(INTERNAL_ERROR),
                severity: Severity::Error,
                path: file.path(db).clone(),
                span: None,
                item_id: None,
                space: Some(file.space(db).clone()),
                message: format!("ryechain failed while checking this file: {msg}"),
                help: Some(Arc::from(
                    "this is a bug in ryechain; please report it with the file",
                )),
                notes: Vec::new(),
                suggestions: None,
                edit: None,
            };
            (vec![diag], true, None)
        }
    }
}

/// Whether a lint keeps each file's findings as memos.
///
/// The queries under them (metadata, resolution, hashes, verdicts) are memoized either way; only
/// the three per-file finding lists (`file_diagnostics`, `chain_diagnostics`,
/// `integrity_diagnostics`) differ. Same findings in both modes (tests/lint_cache.rs compares).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    /// A long-lived host (`--watch`, the editor): after an edit, a file whose inputs did not
    /// change is answered from its memo.
    Memoized,
    /// A one-shot lint reads each file's findings once: their memos (a result and a list of
    /// dependencies per query, three per tool) would only raise the run's peak, by about 45 MB
    /// at 100k tools.
    OneShot,
}

/// Keep a diagnostic if its rule is enabled, with the severity in force.
fn effective(db: &RootDb, mut d: Diagnostic) -> Option<Diagnostic> {
    if d.rule.as_ref() != INTERNAL_ERROR {
        let rule = crate::rules::rule_set(db).get(&d.rule)?;
        d.severity = effective_severity(db, rule)?;
    }
    Some(d)
}

/// `file`'s diagnostics with the rules in force: selected, at their severities, without what
/// its suppression comments and `lint.per-file-ignores` take out, plus the `unused-suppression`
/// findings of its comments.
fn in_force(db: &RootDb, file: SourceFile, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let diags = diags.into_iter().filter_map(|d| effective(db, d)).collect();
    suppress::suppress(db, file, diags, true)
}

/// One file's diagnostics from its memos, as an editor or `--watch` reads them (rules not yet
/// selected, severities not yet applied).
fn memoized_diagnostics(db: &RootDb, file: SourceFile) -> Vec<Diagnostic> {
    let checked = check_file(
        db,
        file,
        integrity_enabled(db),
        Checks::Memoized,
        None,
        false,
    );
    checked.0
}

/// One file's diagnostics as the lint reports them (enabled rules only, severities in force), with
/// byte spans: what the editor converts into its own positions.
pub fn checked_diagnostics(db: &RootDb, file: SourceFile) -> Vec<Diagnostic> {
    in_force(db, file, memoized_diagnostics(db, file))
}

/// The graph-wide diagnostics (cycles) as the lint reports them, with byte spans.
pub fn checked_graph_diagnostics(db: &RootDb) -> Vec<Diagnostic> {
    suppress::suppress_graph(db, checked_graph_diagnostics_unsuppressed(db))
}

/// The graph-wide diagnostics with the rules in force, before any suppression: what tells
/// whether a comment naming a graph-wide rule is used.
fn checked_graph_diagnostics_unsuppressed(db: &RootDb) -> Vec<Diagnostic> {
    graph_diagnostics(db)
        .iter()
        .cloned()
        .filter_map(|d| effective(db, d))
        .collect()
}

/// The located findings of one file (its own, its chain's, and its integrity when that family is
/// enabled), with rule selection and severities applied: what `lint` computes per file, for the
/// editor and the benchmarks. Graph-wide findings (cycles) are not included; see `graph_findings`.
#[cfg(any(test, feature = "testing"))]
pub fn file_findings(db: &RootDb, file: SourceFile, opts: &LintOptions) -> Vec<Finding> {
    let diags = in_force(db, file, memoized_diagnostics(db, file));
    let mut lines = Lines::default();
    diags
        .iter()
        .map(|d| locate(db, d, opts, &mut lines))
        .collect()
}

/// The located graph-wide findings (executor cycles: every strongly connected component once).
pub fn graph_findings(db: &RootDb, opts: &LintOptions) -> Vec<Finding> {
    let mut lines = Lines::default();
    checked_graph_diagnostics(db)
        .iter()
        .map(|d| locate(db, d, opts, &mut lines))
        .collect()
}

/// `f` on every file, in parallel, results in file order. Work is split into chunks; each rayon
/// job gets its own database clone, made on this thread and moved into the job (salsa handles are
/// `Send`, not `Sync`), never created inside a query.
pub fn par_files<T: Send>(
    db: &RootDb,
    files: &[SourceFile],
    f: &(dyn Fn(&RootDb, SourceFile) -> T + Sync),
) -> Vec<T> {
    par_chunks_with_progress(
        db,
        files,
        &|db, part| part.iter().map(|&file| f(db, file)).collect(),
        &|_| {},
        None,
    )
}

/// `par_files` with `f` given a chunk of files at a time (it returns one result per file, in
/// order).
pub fn par_chunks<T: Send>(
    db: &RootDb,
    files: &[SourceFile],
    f: &(dyn Fn(&RootDb, &[SourceFile]) -> Vec<T> + Sync),
) -> Vec<T> {
    par_chunks_with_progress(db, files, f, &|_| {}, None)
}

/// `par_files` with `f` given a chunk of files at a time (it returns one result per file, in
/// order), calling `progress` with the number of files each finished chunk held. `side`: one more
/// job run beside the chunks (spawned first, so the other thread takes it while this one starts
/// on the chunks from the last).
pub(crate) fn par_chunks_with_progress<'a, I: Sync, T: Send>(
    db: &RootDb,
    files: &'a [I],
    f: &'a (dyn Fn(&RootDb, &[I]) -> Vec<T> + Sync),
    progress: &'a (dyn Fn(usize) + Sync),
    side: Option<Box<dyn FnOnce() + Send + 'a>>,
) -> Vec<T> {
    let threads = rayon::current_num_threads().max(1);
    // Small enough that the threads finish together (the last chunks and the side job even
    // out): at 100k tools, 64 chunks on two threads lint `--ignore integrity` 0.04 s sooner than
    // 16 did; each chunk's signatures are still verified in one batch of ~1.5k.
    let chunk = (files.len() / (threads * 32)).max(32);
    let results: std::sync::Mutex<Vec<(usize, Vec<T>)>> = std::sync::Mutex::default();
    let jobs: Vec<(usize, &[I], RootDb)> = files
        .chunks(chunk)
        .enumerate()
        .map(|(i, part)| (i, part, db.clone()))
        .collect();
    let results_ref = &results;
    rayon::scope(move |scope| {
        if let Some(side) = side {
            scope.spawn(move |_| side());
        }
        for (i, part, db) in jobs {
            scope.spawn(move |_| {
                let out: Vec<T> = f(&db, part);
                drop(db);
                progress(part.len());
                if let Ok(mut r) = results_ref.lock() {
                    r.push((i, out));
                }
            });
        }
    });
    let mut parts = results.into_inner().unwrap_or_default();
    parts.sort_by_key(|(i, _)| *i);
    // Sized once: grown by doubling, the list of 100k parts took twice its room at the peak.
    let mut all = Vec::with_capacity(parts.iter().map(|(_, out)| out.len()).sum());
    for (_, out) in parts {
        all.extend(out);
    }
    all
}

/// One checked file's part of a lint.
#[derive(Clone, Debug)]
pub struct LintedFile {
    pub file: SourceFile,
    pub findings: Vec<Finding>,
    /// What its findings depend on, when asked for and the file is a tool.
    pub deps: Option<FileDeps>,
    /// A panic was caught while checking it.
    pub panicked: bool,
}

/// What one tool's findings depend on beyond its text (`lazy::file_chain_ids`).
#[derive(Clone, Debug)]
pub struct FileDeps {
    /// The ids besides its own, as the index of their list in the `DepIds` the lint was given
    /// (most tools' lists are one of a few: the same runtimes and primitives).
    pub list: u32,
    /// Its chain runs into a cycle, or stops at the length limit before it could tell
    /// (`lazy::ChainIds::cycle`).
    pub cycle: bool,
    /// The executor id its chain stops at because it resolves nowhere.
    pub missing: Option<Box<str>>,
}

impl LintedFile {
    pub fn cycle(&self) -> bool {
        self.deps.as_ref().is_some_and(|d| d.cycle)
    }
    pub fn missing(&self) -> Option<&str> {
        self.deps.as_ref().and_then(|d| d.missing.as_deref())
    }
}

/// Interns the dependency ids of a lint (`LintedFile::deps`), shared by its threads: ids, and
/// lists of id indices — most tools name the same few runtimes, so each keeps one `u32`.
#[derive(Debug, Default)]
pub struct DepIds {
    inner: std::sync::Mutex<DepTables>,
}

#[derive(Debug, Default)]
struct DepTables {
    ids: Vec<String>,
    index: rustc_hash::FxHashMap<String, u32>,
    lists: Vec<Box<[u32]>>,
    list_index: rustc_hash::FxHashMap<Box<[u32]>, u32>,
}

impl DepIds {
    /// The ids of list `list`.
    fn list_ids(&self, list: u32) -> Vec<String> {
        let t = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.lists
            .get(list as usize)
            .map(|l| {
                l.iter()
                    .filter_map(|&j| t.ids.get(j as usize).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tables [`DepIds::into_tables`] gave, interned again (indices unchanged).
    fn from_tables(ids: Vec<String>, lists: Vec<Box<[u32]>>) -> DepIds {
        let index = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        let list_index = lists
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        DepIds {
            inner: std::sync::Mutex::new(DepTables {
                ids,
                index,
                lists,
                list_index,
            }),
        }
    }

    /// The index of the list of `ids`.
    fn intern(&self, ids: Vec<String>) -> u32 {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let t = &mut *guard;
        let list: Box<[u32]> = ids
            .into_iter()
            .map(|id| {
                if let Some(&i) = t.index.get(&id) {
                    return i;
                }
                let i = u32::try_from(t.ids.len()).unwrap_or(u32::MAX);
                t.ids.push(id.clone());
                t.index.insert(id, i);
                i
            })
            .collect();
        if let Some(&l) = t.list_index.get(&list) {
            return l;
        }
        let l = u32::try_from(t.lists.len()).unwrap_or(u32::MAX);
        t.lists.push(list.clone());
        t.list_index.insert(list, l);
        l
    }

    /// The interned ids by index, and the interned lists (of id indices) by index.
    pub fn into_tables(self) -> (Vec<String>, Vec<Box<[u32]>>) {
        let t = self
            .inner
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (t.ids, t.lists)
    }
}

/// A lint before its findings are merged: each checked file's part, and the graph-wide findings.
#[derive(Clone, Debug, Default)]
pub struct LintParts {
    pub files: Vec<LintedFile>,
    pub graph: Vec<Finding>,
    /// `Summary::files` and `Summary::tools`.
    pub file_count: usize,
    pub tool_count: usize,
    /// The ids `dep_lists` index (empty unless deps were asked for).
    pub dep_ids: Vec<String>,
    /// The lists `LintedFile::deps` index.
    pub dep_lists: Vec<Box<[u32]>>,
}

impl LintParts {
    /// The report: every finding (moved), sorted, with the totals.
    pub fn into_report(self) -> LintReport {
        let internal_errors = self.files.iter().filter(|f| f.panicked).count();
        // Sized once: grown by doubling, the list of 100k findings reserved up to twice its size.
        let total = self.graph.len() + self.files.iter().map(|f| f.findings.len()).sum::<usize>();
        let mut findings: Vec<Finding> = Vec::with_capacity(total);
        for f in self.files {
            findings.extend(f.findings);
        }
        findings.extend(self.graph);
        sort_findings(&mut findings);
        report_of(findings, self.file_count, self.tool_count, internal_errors)
    }

    /// Take out the findings `shown` does not ask for (`scope::Uses`): what a file of another
    /// space reports, unless a tool of a shown space uses that file. Reads the database only when
    /// some finding is outside the shown spaces.
    pub fn hide_unused(&mut self, db: &dyn Db, shown: SpaceSet) -> scope::Hidden {
        use scope::{Owner, outside};
        let mut hidden = scope::Hidden::default();
        let any_outside = self
            .files
            .iter()
            .flat_map(|lf| &lf.findings)
            .chain(&self.graph)
            .any(|f| outside(f, shown));
        if !any_outside {
            return hidden;
        }
        let files: Vec<(SpaceKind, &str)> = self
            .files
            .iter()
            .map(|lf| (lf.file.space(db).kind(), &**lf.file.rel(db)))
            .collect();
        let reads = |i: usize| -> Vec<String> {
            let lf = &self.files[i];
            if let Some(d) = &lf.deps {
                return self
                    .dep_lists
                    .get(d.list as usize)
                    .map(|l| {
                        l.iter()
                            .filter_map(|&j| self.dep_ids.get(j as usize).cloned())
                            .collect()
                    })
                    .unwrap_or_default();
            }
            lazy::file_chain_ids(db, lf.file).ids
        };
        let uses = scope::Uses::new(&files, reads, shown);
        for (i, lf) in self.files.iter_mut().enumerate() {
            lf.findings.retain(|f| {
                let show = uses.shows(Owner::File(i), f, shown);
                if !show {
                    hidden.add(f);
                }
                show
            });
        }
        self.graph.retain(|f| {
            let show = uses.shows(Owner::Graph, f, shown);
            if !show {
                hidden.add(f);
            }
            show
        });
        hidden
    }
}

/// A report from sorted findings and the totals.
pub fn report_of(
    findings: Vec<Finding>,
    files: usize,
    tools: usize,
    internal_errors: usize,
) -> LintReport {
    let summary = Summary {
        files,
        tools,
        errors: findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count(),
        warnings: findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count(),
        ..Summary::default()
    };
    LintReport {
        findings,
        summary,
        internal_errors,
    }
}

/// [`lint_file`] over a chunk of files, in order. A one-shot lint with the integrity rules settles
/// the chunk's verdicts first ([`batch_verdicts`]: one batch verification of the chunk's
/// signatures, not one verification per file).
pub fn lint_chunk(
    db: &RootDb,
    files: &[SourceFile],
    opts: &LintOptions,
    integrity: bool,
    deps: Option<&DepIds>,
    checks: Checks,
) -> Vec<LintedFile> {
    let verdicts = if integrity && checks == Checks::OneShot {
        batch_verdicts(db, files)
    } else {
        vec![None; files.len()]
    };
    files
        .iter()
        .zip(verdicts)
        .map(|(&file, verdict)| lint_file(db, file, opts, integrity, deps, checks, verdict))
        .collect()
}

/// The integrity verdicts of `files` whose integrity is checked (item files read as text), the
/// pending signatures verified in one batch (`integrity::batch`). `None` for the other files,
/// and for a file whose claim panicked: its own check meets the panic again and reports it.
fn batch_verdicts(db: &RootDb, files: &[SourceFile]) -> Vec<Option<Verdict>> {
    let claims: Vec<Option<Claim>> = files
        .iter()
        .map(|&file| {
            let checked = ItemKind::of_rel(file.rel(db)).is_some()
                && matches!(file.contents(db), crate::db::FileContents::Text(_));
            if !checked {
                return None;
            }
            match std::panic::catch_unwind(AssertUnwindSafe(|| claim_of(db, file))) {
                Ok(claim) => Some(claim),
                Err(payload) if payload.is::<salsa::Cancelled>() => {
                    std::panic::resume_unwind(payload)
                }
                Err(_) => None,
            }
        })
        .collect();
    let valid = {
        let jobs: Vec<Job<'_>> = claims
            .iter()
            .filter_map(|c| match c {
                Some(Claim::Verify(pending)) => Some(pending.job()),
                _ => None,
            })
            .collect();
        verify_each(&jobs)
    };
    let mut valid = valid.into_iter();
    claims
        .into_iter()
        .map(|claim| {
            claim.map(|claim| match claim {
                Claim::Settled(verdict) => verdict,
                Claim::Verify(pending) => pending.settle(valid.next() == Some(true)),
            })
        })
        .collect()
}

/// Check `file` as the lint does: its located findings, whether a panic was caught, and (when
/// `deps`) the ids its findings depend on and whether its chain cycles. `integrity`: the value
/// of `integrity_enabled` (asked once per lint, not per file); `verdict`: the file's integrity
/// verdict when it is already settled (see [`lint_chunk`]).
fn lint_file(
    db: &RootDb,
    file: SourceFile,
    opts: &LintOptions,
    integrity: bool,
    deps: Option<&DepIds>,
    checks: Checks,
    verdict: Option<Verdict>,
) -> LintedFile {
    let (diags, panicked, chain_ids) =
        check_file(db, file, integrity, checks, verdict, deps.is_some());
    let mut lines = Lines::default();
    let mut findings: Vec<Finding> = in_force(db, file, diags)
        .iter()
        .map(|d| locate(db, d, opts, &mut lines))
        .collect();
    // Kept until the lint ends: without this a file's one finding sat in room for four (a
    // vector's first growth), about 1 KB a file on a tree where every file has one (unsigned).
    findings.shrink_to_fit();
    let deps = match (deps, chain_ids) {
        (Some(table), Some(c)) => Some(FileDeps {
            list: table.intern(c.ids),
            cycle: c.cycle,
            missing: c.missing.map(String::into_boxed_str),
        }),
        _ => None,
    };
    LintedFile {
        file,
        findings,
        deps,
        panicked,
    }
}

/// Lint every file of the workspace (in parallel, see `par_files`), keeping each file's part;
/// `deps`: record what each tool's findings depend on (for the lint cache); `checks`: whether
/// the findings stay memoized. `progress` is called with the number of files finished.
pub fn lint_parts(
    db: &RootDb,
    opts: &LintOptions,
    progress: &(dyn Fn(usize) + Sync),
    deps: bool,
    checks: Checks,
) -> LintParts {
    let files = lint_files(db);
    let integrity = integrity_enabled(db);
    let table = deps.then(DepIds::default);
    // The executor graph (one query over every tool, on one thread) is built beside the files'
    // checks rather than after them: it was the last 0.1 s of a 100k-tool lint, one core idle.
    // It reads the metadata the checks read; salsa computes each once, whichever thread asks
    // first, and the other waits for it.
    let graph = std::sync::OnceLock::new();
    let graph_db = db.clone();
    let graph_ref = &graph;
    let parts = par_chunks_with_progress(
        db,
        &files,
        &|db, part| lint_chunk(db, part, opts, integrity, table.as_ref(), checks),
        progress,
        Some(Box::new(move || {
            let _ = graph_ref.set(graph_findings(&graph_db, opts));
        })),
    );
    let graph = graph
        .into_inner()
        .unwrap_or_else(|| graph_findings(db, opts));
    let (dep_ids, dep_lists) = table.map(DepIds::into_tables).unwrap_or_default();
    LintParts {
        dep_ids,
        dep_lists,
        files: parts,
        graph,
        file_count: loaded_file_count(db),
        tool_count: tool_count(db),
    }
}

/// Files loaded from every space (`Summary::files`: a directory given as two spaces counts twice).
pub fn loaded_file_count(db: &RootDb) -> usize {
    db.workspace()
        .roots(db)
        .iter()
        .map(|r| r.files(db).len())
        .sum()
}

/// Lint every file of the workspace (in parallel, see `par_files`), keeping the findings as memos
/// (`Checks::Memoized`: `--watch` lints the same host again after each change). `progress` is
/// called with the number of files finished.
pub fn lint(db: &RootDb, opts: &LintOptions, progress: &(dyn Fn(usize) + Sync)) -> LintReport {
    lint_parts(db, opts, progress, false, Checks::Memoized).into_report()
}

/// Show `path` relative to `base` when it lies below it.
pub fn display_path(path: &Path, base: Option<&Path>) -> String {
    base.and_then(|b| path.strip_prefix(b).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The texts and line indexes located findings needed so far: the findings of one file point
/// into a few files, and each index is built once for them (it was built once or twice per
/// finding, so a 7 MB module with many syntax errors was scanned twice per error).
#[derive(Default)]
pub struct Lines {
    files: Vec<(Arc<PathBuf>, Option<Rc<Known>>)>,
}

/// A file's text (expanded, when it was held compressed) and its line index.
struct Known {
    text: crate::db::Text,
    index: LineIndex,
}

impl Known {
    fn text(&self) -> &str {
        self.text.plain().unwrap_or_default()
    }
}

impl Lines {
    fn of(&mut self, db: &RootDb, path: &Arc<PathBuf>) -> Option<Rc<Known>> {
        if let Some((_, known)) = self.files.iter().find(|(p, _)| p == path) {
            return known.clone();
        }
        let text = match db.file_at(path)?.contents(db) {
            crate::db::FileContents::Text(t) => Some(t.expanded()),
            _ => None,
        };
        let known = text.map(|text| {
            let index = LineIndex::new(text.plain().unwrap_or_default());
            Rc::new(Known { text, index })
        });
        self.files.push((path.clone(), known.clone()));
        known
    }
}

/// Resolve a diagnostic's spans into lines, columns and a source excerpt (`lines`: the texts and
/// line indexes earlier findings needed).
pub fn locate(db: &RootDb, d: &Diagnostic, opts: &LintOptions, lines: &mut Lines) -> Finding {
    let base = opts.display_base.as_deref();
    let known = lines.of(db, &d.path);
    let (mut line, mut column, mut end_line, mut end_column) = (1, 1, 1, 1);
    let mut excerpt = None;
    if let Some(known) = &known {
        let (text, idx) = (known.text(), &known.index);
        let span = d.span.unwrap_or_default();
        (line, column) = idx.line_col(text, span.start);
        (end_line, end_column) = idx.line_col(text, span.end);
        let first = idx.line_range(text, line);
        let last = idx.line_range(text, end_line);
        let start_byte = (span.start as usize).clamp(first.start, text.len());
        let end_byte = (span.end as usize).clamp(start_byte, last.end.max(start_byte));
        if first.start <= last.end && last.end <= text.len() {
            excerpt = Some(excerpt_of(
                text,
                line,
                first.start..last.end,
                start_byte..end_byte,
            ));
        }
    }
    let notes = d
        .notes
        .iter()
        .map(|n| FindingNote {
            message: n.message.clone(),
            path: n.path.as_ref().map(|p| display_path(p, base)),
            line: n.path.as_ref().map(|p| match (lines.of(db, p), n.span) {
                (Some(known), Some(s)) => known.index.line_col(known.text(), s.start).0,
                _ => 1,
            }),
        })
        .collect();
    let fix = known.and_then(|known| fix_of(known.text(), &known.index, d));
    Finding {
        rule: d.rule.clone(),
        severity: d.severity,
        path: display_path(&d.path, base),
        line,
        column,
        end_line,
        end_column,
        item_id: d.item_id.clone(),
        space: d.space.as_ref().map(space_label),
        message: d.message.clone(),
        help: d.help.clone(),
        notes,
        excerpt,
        suggestions: d
            .suggestions
            .as_ref()
            .map(|s| s.replacements.clone())
            .unwrap_or_default(),
        fix,
    }
}

/// The label of a space (`project`, `user`, `system:<bundle>`), one shared text per space: a
/// finding per tool on a 100k tree held 100k copies of `project`.
fn space_label(space: &crate::model::Space) -> Arc<str> {
    static LABELS: std::sync::Mutex<Vec<(crate::model::Space, Arc<str>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut labels = LABELS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, label)) = labels.iter().find(|(s, _)| s == space) {
        return label.clone();
    }
    let label: Arc<str> = Arc::from(space.label());
    // A handful of spaces per run; a long-lived process meeting many bundles keeps the latest.
    if labels.len() >= 64 {
        labels.remove(0);
    }
    labels.push((space.clone(), label.clone()));
    label
}

/// An excerpt longer than this keeps only a window of about this many bytes around the start of
/// the span: a finding on a 20 KB line (or spanning a whole large file) would otherwise copy it
/// into every finding held until the report is printed, for a terminal that shows one screen.
pub const EXCERPT_BYTES: usize = 1024;

/// The source excerpt of `lines` (the whole lines the span touches, starting at 1-based `line`)
/// with `span` underlined, cut to a window of at most [`EXCERPT_BYTES`] (plus `…` marks where
/// text was left out) when it is longer. The window starts at the first line's start, or a
/// quarter window before the span when the span starts further into the line; it ends at the last
/// line break inside it when there is one after the span's start.
fn excerpt_of(text: &str, line: u32, lines: Range<usize>, span: Range<usize>) -> Excerpt {
    if lines.len() <= EXCERPT_BYTES {
        return Excerpt {
            line_start: line,
            text: text[lines.clone()].to_owned(),
            highlight: (span.start - lines.start)..(span.end - lines.start),
        };
    }
    let floor = |mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    // The span's start on a character boundary (a span is not trusted to cut none).
    let at = floor(span.start.clamp(lines.start, lines.end));
    let mut from = lines.start;
    if at - from > EXCERPT_BYTES / 4 {
        from = floor(at - EXCERPT_BYTES / 4);
    }
    let mut to = floor((from + EXCERPT_BYTES).min(lines.end)).max(at);
    if let Some(nl) = text[at..to].rfind('\n') {
        to = at + nl;
        if to > at && text[..to].ends_with('\r') {
            to -= 1;
        }
    }
    let head = if from > lines.start { "…" } else { "" };
    let tail = if to < lines.end { "…" } else { "" };
    let shift = |at: usize| at.clamp(from, to) - from + head.len();
    Excerpt {
        line_start: line,
        text: format!("{head}{}{tail}", &text[from..to]),
        highlight: shift(span.start)..shift(span.end),
    }
}

/// The fix of a finding, located: its own edit, or its certain suggestion where `original`
/// stands inside the primary span (inside the quotes of a string literal, say; none when it is
/// not written there verbatim: escapes).
fn fix_of(text: &str, idx: &LineIndex, d: &Diagnostic) -> Option<Box<Fix>> {
    let (span, replacement) = fix_span(text, d)?;
    let (line, column) = idx.line_col(text, span.start);
    let (end_line, end_column) = idx.line_col(text, span.end);
    let title = match &d.edit {
        Some(e) => e.title.clone(),
        None => format!("Replace with `{replacement}`"),
    };
    Some(Box::new(Fix {
        line,
        column,
        end_line,
        end_column,
        replacement: replacement.into_owned(),
        title,
    }))
}

/// The byte span a certain suggestion replaces in `text` (where `original` stands inside the
/// primary span) and its replacement; `None` when there is no certain suggestion or the original
/// is not written verbatim there (escapes).
pub fn fix_span<'d>(
    text: &str,
    d: &'d Diagnostic,
) -> Option<(crate::model::Span, std::borrow::Cow<'d, str>)> {
    if let Some(edit) = &d.edit {
        // Only an edit that still fits the text (the file may have changed since).
        text.get(edit.span.start as usize..edit.span.end as usize)?;
        if !edit.line_after {
            return Some((edit.span, edit.replacement.as_str().into()));
        }
        let rest = &text[edit.span.end as usize..];
        let eol = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let tail = rest[..eol].trim_start();
        if !(tail.is_empty() || tail.starts_with('#')) {
            return None;
        }
        let at = edit.span.end as usize + eol;
        // After the line break (`\r\n` kept whole), in the file's own line ending.
        let newline = if rest[eol..].starts_with("\r\n") {
            "\r\n"
        } else if rest[eol..].starts_with('\r') {
            "\r"
        } else {
            "\n"
        };
        return Some(if at == text.len() {
            (
                crate::model::Span::new(at, at),
                format!("{newline}{}", edit.replacement).into(),
            )
        } else {
            let after = at + newline.len();
            (
                crate::model::Span::new(after, after),
                format!("{}{newline}", edit.replacement).into(),
            )
        });
    }
    let s = d.suggestions.as_ref().filter(|s| s.certain)?;
    let replacement = s.replacements.first()?;
    let span = d.span?;
    let within = text.get(span.start as usize..span.end as usize)?;
    let at = span.start as usize + within.find(s.original.as_str())?;
    Some((
        crate::model::Span::new(at, at + s.original.len()),
        replacement.as_str().into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::{EXCERPT_BYTES, excerpt_of};

    fn underlined(e: &crate::diagnostic::Excerpt) -> &str {
        &e.text[e.highlight.clone()]
    }

    #[test]
    fn short_excerpts_are_whole_lines() {
        let text = "a = 1\nbad = [\n  2]\nz = 3\n";
        let e = excerpt_of(text, 2, 6..18, 12..18);
        assert_eq!(e.text, "bad = [\n  2]");
        assert_eq!(underlined(&e), "[\n  2]");
        assert_eq!(e.line_start, 2);
    }

    #[test]
    fn a_long_line_keeps_a_window_around_the_span() {
        let line = format!("x = {}", "[".repeat(20_000));
        let at = 15_000;
        let e = excerpt_of(&line, 1, 0..line.len(), at..at + 1);
        assert!(
            e.text.len() <= EXCERPT_BYTES + 2 * "…".len(),
            "{}",
            e.text.len()
        );
        assert!(e.text.starts_with('…') && e.text.ends_with('…'));
        assert_eq!(underlined(&e), "[");
        // The span near the line's start: the window starts there, without a mark.
        let e = excerpt_of(&line, 1, 0..line.len(), 0..1);
        assert!(e.text.starts_with("x = [[") && e.text.ends_with('…'));
        assert_eq!(underlined(&e), "x");
    }

    #[test]
    fn a_long_span_over_many_lines_ends_at_a_line_break() {
        let text: String = (0..1000).map(|i| format!("line {i}\r\n")).collect();
        let e = excerpt_of(&text, 1, 0..text.len() - 2, 0..text.len() - 2);
        assert!(e.text.len() <= EXCERPT_BYTES + "…".len());
        // Cut before a line break (and its `\r`), not inside a line.
        let kept = e.text.strip_suffix('…').expect("marked as cut");
        assert!(kept.ends_with(|c: char| c.is_ascii_digit()), "{kept:?}");
        assert!(text.starts_with(&format!("{kept}\r\n")));
        assert!(e.text.starts_with("line 0\r\nline 1"));
        assert_eq!(underlined(&e), e.text.trim_end_matches('…'));
    }

    #[test]
    fn windows_fall_on_character_boundaries() {
        let line = "é".repeat(5_000);
        for at in [0, 2, 1_000, 6_000, 9_998] {
            let e = excerpt_of(&line, 1, 0..line.len(), at..at + 2);
            assert_eq!(underlined(&e), "é", "span at {at}");
            assert!(e.text.len() <= EXCERPT_BYTES + 2 * "…".len());
        }
        // A span that cuts a character does not panic (the renderer widens the underline).
        for at in [1, 999, 6_001, 9_999] {
            let e = excerpt_of(&line, 1, 0..line.len(), at..at + 2);
            assert!(
                e.text.len() <= EXCERPT_BYTES + 2 * "…".len(),
                "span at {at}"
            );
        }
    }
}
