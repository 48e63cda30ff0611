//! L6 the full run: load and check everything, then build the cache from what was checked and a
//! census taken after the files were read.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::analysis::{Analysis, Host, LintParts, par_chunks};
use crate::db::{Db, RootDb, SourceFile};
use crate::diagnostic::compare_findings;
use crate::load::{Census, CensusKind, SpaceSource, SpaceSpec, census, load};
use crate::resolve::tool_id_ref;
use crate::system::os::now_ns;

use super::report::{note_uses, report_from};
use super::trust::{next_dirs, settle_and_write, trusted};
use super::{CacheData, CachedLint, Entry, GRAPH, How, Outcome, Spent, cannot_write, content_hash};

/// A full run in place of a cache that is missing or cannot be used; `damage`, when there is
/// some, is warned about.
pub(super) fn without_cache(
    lint: &CachedLint<'_>,
    full: &dyn Fn(Analysis<'_>) -> LintParts,
    damage: Option<String>,
) -> Outcome {
    let warnings = damage
        .map(|why| {
            format!(
                "discarding the lint cache {}: {why}; it is rebuilt",
                lint.path.display()
            )
        })
        .into_iter()
        .collect();
    full_run(lint, full, warnings, "no usable cache".to_owned())
}

/// Load everything, check everything, cache it.
pub(super) fn full_run(
    lint: &CachedLint<'_>,
    full: &dyn Fn(Analysis<'_>) -> LintParts,
    mut warnings: Vec<String>,
    why: String,
) -> Outcome {
    let run_start = now_ns();
    crate::memory::purge_freed_pages_soonest();
    let loaded = load(lint.sys, lint.specs);
    let mut host = Host::new();
    let mut change = loaded.change;
    change.settings = Some(lint.settings.clone());
    host.apply(change);
    let db = host.snapshot();
    let parts = full(crate::analysis::Analysis::new(&db));
    // A run that hit an internal error is not cached.
    if parts.files.iter().any(|f| f.panicked) {
        let mut parts = parts;
        let hidden = parts.hide_unused(&db, lint.shown);
        let mut report = parts.into_report();
        report.summary.hidden = hidden.count;
        report.summary.hidden_spaces = hidden.spaces;
        return Outcome {
            report,
            notices: loaded.notices,
            warnings,
            how: How::Full(why),
            dirs_on_trust: None,
            spent: Spent::default(),
        };
    }
    let rows = rows_of(lint, &db);
    // The files' texts and every memo go before the census is taken and the cache built. (The
    // census taken while they are freed, on the other thread, was no sooner: both use the two
    // cores.)
    drop((db, host));
    crate::memory::release_freed_memory();
    // Built on a pool thread: the memory just freed was mostly allocated by the pool's threads,
    // and an allocator with per-thread heaps (mimalloc) hands it out again there first, so the
    // cache does not raise the run's peak.
    let (data, written) = rayon::scope(|_| {
        // Stamped after the files were read: a file written since has a ctime past
        // `run_start`, so it is racy and read again next time.
        let census = census(lint.sys, lint.specs, &|_, _, _| None);
        let mut data = cache_data(lint, rows, parts);
        note_uses(lint, &mut data);
        attach_census(&mut data, lint.specs, census, run_start);
        let written = settle_and_write(&lint.path, &mut data);
        (data, written)
    });
    if let Err(e) = written {
        warnings.push(cannot_write(lint, &e));
    }
    let mut spent = Spent::default();
    Outcome {
        report: report_from(lint, data, 0, &mut spent),
        notices: loaded.notices,
        warnings,
        how: How::Full(why),
        dirs_on_trust: None,
        spent,
    }
}

/// Index of `file`'s space in `specs`.
pub(super) fn space_index(db: &dyn Db, specs: &[SpaceSpec], file: SourceFile) -> Option<u32> {
    let space = file.space(db);
    specs
        .iter()
        .position(|s| &s.space == space)
        .and_then(|i| u32::try_from(i).ok())
}

/// Every file of `db`'s roots by (space index, rel).
pub(super) fn files_of(db: &dyn Db, specs: &[SpaceSpec]) -> FxHashMap<(u32, String), SourceFile> {
    let mut out = FxHashMap::default();
    for root in db.workspace().roots(db) {
        for &f in root.files(db).iter() {
            if let Some(i) = space_index(db, specs, f) {
                out.insert((i, f.rel(db).to_string()), f);
            }
        }
    }
    out
}

/// A file's row of [`Rows`].
pub(super) type Row = (u32, Arc<str>, u128, bool);

/// What the cache keeps of each file of a full run's database, by `SourceFile`: small, so it can
/// outlive the database (whose texts and memos are the run's peak).
pub(super) struct Rows {
    /// (space index, rel, content hash, is a tool), in load order.
    pub rows: Vec<Row>,
    pub index: FxHashMap<SourceFile, u32>,
}

pub(super) fn rows_of(lint: &CachedLint<'_>, db: &RootDb) -> Rows {
    // Sized once: built while the database is alive, at the run's peak (grown by doubling, the
    // two held up to twice their size).
    let total: usize = db
        .workspace()
        .roots(db)
        .iter()
        .map(|r| r.files(db).len())
        .sum();
    let mut files: Vec<SourceFile> = Vec::with_capacity(total);
    for root in db.workspace().roots(db) {
        files.extend(root.files(db).iter().copied());
    }
    // Each text hashed on the pool (214 MB at 100k tools: 50 ms on one thread).
    let rows: Vec<Option<Row>> = par_chunks(db, &files, &|db, part| {
        part.iter()
            .map(|&f| {
                let space = space_index(db, lint.specs, f)?;
                Some((
                    space,
                    f.rel(db).clone(),
                    content_hash(f.contents(db)),
                    tool_id_ref(db, f).is_some(),
                ))
            })
            .collect()
    });
    let mut index: FxHashMap<SourceFile, u32> =
        FxHashMap::with_capacity_and_hasher(total, Default::default());
    let mut kept = Vec::with_capacity(total);
    for (f, row) in files.into_iter().zip(rows) {
        if let Some(row) = row {
            index.insert(f, u32::try_from(kept.len()).unwrap_or(u32::MAX));
            kept.push(row);
        }
    }
    Rows { rows: kept, index }
}

/// The cache of a full run, without stamps (`attach_census` adds them).
pub(super) fn cache_data(lint: &CachedLint<'_>, rows: Rows, parts: LintParts) -> CacheData {
    let mut entries: Vec<Entry> = rows
        .rows
        .into_iter()
        .map(|(space, rel, content, tool)| Entry {
            space,
            rel,
            kind: None,
            content,
            racy: false,
            tool,
            deps: Vec::new(),
            missing: None,
        })
        .collect();
    let mut findings = Vec::new();
    for lf in parts.files {
        let Some(&i) = rows.index.get(&lf.file) else {
            continue;
        };
        let entry = &mut entries[i as usize];
        if let Some(d) = lf.deps {
            entry.deps = parts
                .dep_lists
                .get(d.list as usize)
                .map(|l| l.to_vec())
                .unwrap_or_default();
            entry.missing = d.missing.map(String::from);
        }
        findings.extend(lf.findings.into_iter().map(|f| (i, f)));
    }
    findings.extend(parts.graph.into_iter().map(|f| (GRAPH, f)));
    findings.sort_by(|a, b| compare_findings(&a.1, &b.1));
    CacheData {
        key: lint.key.clone(),
        notices: Vec::new(),
        ids: parts.dep_ids,
        entries,
        dirs: Vec::new(),
        findings,
        used_by: Vec::new(),
    }
}

/// Give each on-disk entry of a full run its census kind. A file the census no longer finds
/// (deleted since it was read) gets no stamp, so it never matches the next census.
pub(super) fn attach_census(
    data: &mut CacheData,
    specs: &[SpaceSpec],
    census: Census,
    run_start: i64,
) {
    let kinds: FxHashMap<(u32, &str), &CensusKind> = census
        .entries
        .iter()
        .map(|e| ((e.space, e.rel.as_str()), &e.kind))
        .collect();
    for e in &mut data.entries {
        if matches!(
            specs.get(e.space as usize).map(|s| &s.source),
            Some(SpaceSource::Dir(_))
        ) {
            let kind = kinds
                .get(&(e.space, &*e.rel))
                .map_or(CensusKind::Plain(None), |k| (*k).clone());
            e.racy = !trusted(&kind, run_start);
            e.kind = Some(kind);
        }
    }
    drop(kinds);
    data.notices = census.notices;
    data.dirs = next_dirs(Vec::new(), &census.vouched, census.dirs, run_start).0;
}
