//! L6 the re-check after an edit: the census against the cache's entries, the files read again
//! and compared by content, the changed files and those whose chains read their ids checked
//! again, and the new cache merged from the old one and what was checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::lazy::Loaded;
use crate::analysis::lazy::{file_chain_needs, lockfile_chain_ids};
use crate::analysis::live::lintable;
use crate::analysis::{
    Checks, DepIds, Host, LintedFile, display_path, integrity_enabled, lint_chunk, par_chunks,
};
use crate::db::{RootDb, SourceFile};
use crate::diagnostic::{Finding, compare_findings};
use crate::integrity::lockfile::is_lockfile_rel;
use crate::load::{Census, CensusKind, ItemLoader, SpaceSource, SpaceSpec};
use crate::model::SpaceKind;
use crate::resolve::{
    VisibleIds, closest_ids, extractor_config, split_tool_rel, suggestions, tool_id, tool_id_ref,
};
use crate::system::Settled;

use super::full::{files_of, space_index};
use super::trust::{needs_read, trusted};
use super::{CacheData, CachedLint, Entry, GRAPH, How, content_hash, is_global};

/// Interns dependency ids.
#[derive(Default)]
struct Ids {
    ids: Vec<String>,
    index: FxHashMap<String, u32>,
}

impl Ids {
    fn from(ids: Vec<String>) -> Ids {
        let index = ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        Ids { ids, index }
    }
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.push(id.to_owned());
        self.index.insert(id.to_owned(), i);
        i
    }
}

/// What the census and the re-check made of the cache.
pub(super) struct Partial {
    pub how: How,
    /// The cache after this run (its findings are the report's).
    pub data: CacheData,
    /// `data` differs from the file (stamps refreshed, files re-checked).
    pub write: bool,
    pub internal_errors: usize,
}

/// The census against the cache, then the re-check of what changed. `Err`: a full run is needed,
/// and why. Each step below may give up (a full run) and says why.
pub(super) fn partial(
    lint: &CachedLint<'_>,
    mut data: CacheData,
    census: &Census,
    run_start: i64,
) -> Result<Partial, String> {
    // 1. The files the census settled are the cache's own entries, each met once.
    let seen = settled_entries(&data, census)?;
    // 2. The other census entries against the cache's: which to read again, which are gone.
    let met = meet(&data, census, &seen);
    if met.to_read.is_empty() && met.removed.is_empty() {
        return Ok(Partial {
            how: How::Reused { reread: 0 },
            data,
            write: false,
            internal_errors: 0,
        });
    }
    // 3. No global file was removed; what may have changed is read again.
    removed_globals(&data, &met.removed)?;
    let mut reader = read_again(lint, census, &met.to_read)?;
    // 4. Each file read is compared by content: unchanged files only get their new stamps.
    let reread = compare_contents(&reader.host, lint.specs, &data, census, &met)?;
    if reread.changed.is_empty() && met.removed.is_empty() {
        refresh_stamps(
            &mut data,
            census,
            &met.cached_of,
            &reread.refreshed,
            run_start,
        );
        return Ok(Partial {
            how: How::Reused {
                reread: met.to_read.len(),
            },
            data,
            write: true,
            internal_errors: 0,
        });
    }
    // 5. The files to check again: the changed ones and those whose findings read a touched id.
    let removed: FxHashSet<u32> = met.removed.iter().copied().collect();
    let touched = touched_ids(reader.host.db(), &data, census, &met, &reread.changed);
    let recheck = files_to_recheck(reader.host.db(), &data, census, &reread, &touched, &removed);
    // 6. None of them, and no removed file, is part of an executor cycle.
    outside_cycles(lint, &data, &recheck, &met.removed)?;
    // 7. When ids come or go, the suggestions of a missing executor not checked again stand.
    let mut visible = Visible::after(
        lint,
        reader.host.db(),
        &data,
        census,
        &met,
        &reread,
        &removed,
    );
    if touched.added_or_removed {
        suggestions_stand(lint, &data, &mut visible, &removed, &recheck)?;
    }
    // 8. What their chains read is loaded, then 9. they are checked again.
    let targets = load_chains(lint, &mut reader, &recheck)?;
    let checked = check_again(lint, &mut reader, &recheck, targets, &mut visible)?;
    // 10. The new cache: the old one's entries and findings with the re-checked files' own.
    refresh_stamps(
        &mut data,
        census,
        &met.cached_of,
        &reread.refreshed,
        run_start,
    );
    let how = How::Partial {
        rechecked: recheck.len(),
        changed: reread.changed.len() + met.removed.len(),
        reread: met.to_read.len(),
    };
    let internal_errors = checked.files.iter().filter(|c| c.panicked).count();
    let data = merge(
        data, census, &reread, &removed, &recheck, checked, run_start,
    );
    Ok(Partial {
        how,
        data,
        write: true,
        internal_errors,
    })
}

/// Step 1 of [`partial`]: a settled file (its stamp is the one the cache trusted,
/// `KnownDir::settled`) is seen and unchanged. Its token is its entry's index, met once, and the
/// fingerprints that matched must be those entries' stamps' (their `Settled::mix` sums to the
/// census's digest), or the cache does not hang together (a full run). Which entries were seen.
fn settled_entries(data: &CacheData, census: &Census) -> Result<Vec<bool>, String> {
    let mismatch = || "the cache's settled files do not match its entries".to_owned();
    let mut seen = vec![false; data.entries.len()];
    let mut digest = 0u128;
    for &token in &census.settled {
        let i = token as usize;
        let Some(e) = data.entries.get(i) else {
            return Err(mismatch());
        };
        match &e.kind {
            Some(CensusKind::Plain(Some(s)))
                if !e.racy && !std::mem::replace(&mut seen[i], true) =>
            {
                digest = digest.wrapping_add(Settled::mix(token, s.fingerprint()));
            }
            _ => return Err(mismatch()),
        }
    }
    if digest != census.settled_digest {
        return Err(mismatch());
    }
    Ok(seen)
}

/// The census's entries against the cache's ([`meet`]).
struct Met {
    /// Census entries to read: new, or stamped differently, or cached with an untrusted stamp.
    to_read: Vec<usize>,
    /// The cached entry of each census entry (a census entry is never a settled or embedded one).
    cached_of: Vec<Option<u32>>,
    /// The cached on-disk entries, not settled, that the census did not meet: removed files.
    removed: Vec<u32>,
}

/// Step 2 of [`partial`]: each census entry is looked up among the cached on-disk entries the
/// census did not settle (`seen`).
fn meet(data: &CacheData, census: &Census, seen: &[bool]) -> Met {
    let by_key: FxHashMap<(u32, &str), u32> = data
        .entries
        .iter()
        .enumerate()
        .filter(|(i, e)| e.kind.is_some() && !seen[*i])
        .map(|(i, e)| ((e.space, &*e.rel), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let mut to_read: Vec<usize> = Vec::new();
    let mut met: FxHashSet<u32> = FxHashSet::default();
    let mut cached_of: Vec<Option<u32>> = Vec::with_capacity(census.entries.len());
    for (ci, e) in census.entries.iter().enumerate() {
        let found = by_key.get(&(e.space, e.rel.as_str())).copied();
        cached_of.push(found);
        match found {
            Some(i) => {
                met.insert(i);
                let cached = &data.entries[i as usize];
                if needs_read(cached.racy, cached.kind.as_ref(), &e.kind) {
                    to_read.push(ci);
                }
            }
            None => to_read.push(ci),
        }
    }
    let removed = by_key
        .values()
        .copied()
        .filter(|i| !met.contains(i))
        .collect();
    Met {
        to_read,
        cached_of,
        removed,
    }
}

/// Step 3 of [`partial`], first: a removed config, extractor or trust-store file is a full run.
fn removed_globals(data: &CacheData, removed: &[u32]) -> Result<(), String> {
    for &i in removed {
        let rel = &data.entries[i as usize].rel;
        if is_global(rel) {
            return Err(format!(".ai/{rel} was removed"));
        }
    }
    Ok(())
}

/// The single-item loader of a re-check and the host it loads into.
struct Reader<'s> {
    loader: ItemLoader<'s>,
    host: Host,
}

impl Reader<'_> {
    /// Load the items `ids` (and what the loader loads with them).
    fn items(&mut self, ids: &[String]) {
        let c = self.loader.probe_items(self.host.analysis(), ids);
        self.host.apply(c);
    }

    /// Load the space files `rels`.
    fn files(&mut self, rels: &[String]) {
        let c = self.loader.probe_space_files(rels);
        self.host.apply(c);
    }
}

/// Whether the extractors make a file with extension `ext` an item.
fn is_item_ext(db: &RootDb, ext: &str) -> bool {
    extractor_config(db).has_extension(ext)
}

/// Step 3 of [`partial`]: what may have changed read through the single-item loader. Its base
/// load holds the extractors, config and trust store: a global file read again must hash as
/// before. A file that is no longer a regular one is a full run.
fn read_again<'s>(
    lint: &CachedLint<'s>,
    census: &Census,
    to_read: &[usize],
) -> Result<Reader<'s>, String> {
    let (loader, base) = ItemLoader::new(lint.sys, lint.specs);
    let mut reader = Reader {
        loader,
        host: Host::new(),
    };
    let mut change = base.change;
    change.settings = Some(lint.settings.clone());
    reader.host.apply(change);
    let global: Vec<String> = to_read
        .iter()
        .map(|&ci| &census.entries[ci].rel)
        .filter(|rel| is_global(rel))
        .cloned()
        .collect();
    reader.files(&global);
    let mut probe_ids: Vec<String> = Vec::new();
    let mut probe_rels: Vec<String> = Vec::new();
    for &ci in to_read {
        let e = &census.entries[ci];
        if matches!(e.kind, CensusKind::NotRegular(_) | CensusKind::Error(_)) {
            return Err(format!(".ai/{} is not a regular file any more", e.rel));
        }
        match split_tool_rel(&e.rel) {
            _ if is_global(&e.rel) => {}
            Some((id, ext)) if is_item_ext(reader.host.db(), ext) => probe_ids.push(id.to_owned()),
            _ => probe_rels.push(e.rel.clone()),
        }
    }
    reader.items(&probe_ids);
    reader.files(&probe_rels);
    Ok(reader)
}

/// The files a re-check read again ([`compare_contents`]).
struct Reread {
    /// The census entries whose contents are not the cached ones (or that the cache had not).
    changed: Vec<usize>,
    /// Each file read: its census index and its content hash.
    refreshed: Vec<(usize, u128)>,
}

/// Step 4 of [`partial`]: each file read is hashed and compared with its cached entry. A global
/// file that changed (or vanished while it was read) is a full run.
fn compare_contents(
    host: &Host,
    specs: &[SpaceSpec],
    data: &CacheData,
    census: &Census,
    met: &Met,
) -> Result<Reread, String> {
    let files = files_of(host.db(), specs);
    let mut changed: Vec<usize> = Vec::new();
    let mut refreshed: Vec<(usize, u128)> = Vec::new();
    for &ci in &met.to_read {
        let e = &census.entries[ci];
        let Some(&f) = files.get(&(e.space, e.rel.clone())) else {
            return Err(format!(".ai/{} vanished while it was read", e.rel));
        };
        let hash = content_hash(f.contents(host.db()));
        refreshed.push((ci, hash));
        match met.cached_of[ci] {
            Some(i) if data.entries[i as usize].content == hash => {}
            _ if is_global(&e.rel) => return Err(format!(".ai/{} changed", e.rel)),
            _ => changed.push(ci),
        }
    }
    Ok(Reread { changed, refreshed })
}

/// The cached entries of the files read again take their new stamps and content hashes (steps 4
/// and 10 of [`partial`]).
fn refresh_stamps(
    data: &mut CacheData,
    census: &Census,
    cached_of: &[Option<u32>],
    refreshed: &[(usize, u128)],
    run_start: i64,
) {
    for &(ci, hash) in refreshed {
        let e = &census.entries[ci];
        if let Some(i) = cached_of[ci] {
            let entry = &mut data.entries[i as usize];
            entry.kind = Some(e.kind.clone());
            entry.content = hash;
            entry.racy = !trusted(&e.kind, run_start);
        }
    }
}

/// The ids a change touches ([`touched_ids`]).
struct Touched<'a> {
    /// The ids of the changed and removed tool files.
    ids: FxHashSet<&'a str>,
    /// A tool was added or removed: the visible ids differ.
    added_or_removed: bool,
}

/// Step 5 of [`partial`], first: the ids of the changed and removed files.
fn touched_ids<'a>(
    db: &RootDb,
    data: &'a CacheData,
    census: &'a Census,
    met: &Met,
    changed: &[usize],
) -> Touched<'a> {
    let mut ids: FxHashSet<&str> = FxHashSet::default();
    let mut added_or_removed = false;
    for &ci in changed {
        let e = &census.entries[ci];
        if let Some((id, ext)) = split_tool_rel(&e.rel) {
            ids.insert(id);
            if met.cached_of[ci].is_none() && is_item_ext(db, ext) {
                added_or_removed = true;
            }
        }
    }
    for &i in &met.removed {
        let e = &data.entries[i as usize];
        if let Some((id, _)) = split_tool_rel(&e.rel) {
            ids.insert(id);
        }
        added_or_removed |= e.tool;
    }
    Touched {
        ids,
        added_or_removed,
    }
}

/// Step 5 of [`partial`]: (space, rel) of every file to check again: the changed ones the full
/// lint checks, then the files that depend on a touched id.
fn files_to_recheck(
    db: &RootDb,
    data: &CacheData,
    census: &Census,
    reread: &Reread,
    touched: &Touched<'_>,
    removed: &FxHashSet<u32>,
) -> Vec<(u32, String)> {
    let touched_ix: FxHashSet<u32> = data
        .ids
        .iter()
        .enumerate()
        .filter(|(_, id)| touched.ids.contains(id.as_str()))
        .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    let mut recheck: Vec<(u32, String)> = reread
        .changed
        .iter()
        .map(|&ci| &census.entries[ci])
        .filter(|e| lintable(db, &e.rel))
        .map(|e| (e.space, e.rel.clone()))
        .collect();
    let mut in_recheck: FxHashSet<(u32, &str)> =
        recheck.iter().map(|(s, r)| (*s, r.as_str())).collect();
    let mut dependents: Vec<(u32, String)> = Vec::new();
    for (i, e) in data.entries.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        // A tool depends on its own id too (shadowing, ambiguity): it is not stored.
        let own = e.tool && split_tool_rel(&e.rel).is_some_and(|(id, _)| touched.ids.contains(id));
        if !removed.contains(&i)
            && (own || e.deps.iter().any(|d| touched_ix.contains(d)))
            && in_recheck.insert((e.space, &*e.rel))
        {
            dependents.push((e.space, e.rel.to_string()));
        }
    }
    drop(in_recheck);
    recheck.extend(dependents);
    recheck
}

/// Step 6 of [`partial`]: a cycle through a file that changed or is checked again may have
/// changed: the graph-wide findings are recomputed by a full run. (Cycles whose members all stay
/// untouched keep their edges, so their findings stand.)
fn outside_cycles(
    lint: &CachedLint<'_>,
    data: &CacheData,
    recheck: &[(u32, String)],
    removed: &[u32],
) -> Result<(), String> {
    let base = lint.opts.display_base.as_deref();
    let path_of = |space: u32, rel: &str| -> Option<PathBuf> {
        match &lint.specs.get(space as usize)?.source {
            SpaceSource::Dir(b) => Some(b.join(".ai").join(rel)),
            SpaceSource::Embedded => None,
        }
    };
    let mut shown: FxHashSet<String> = FxHashSet::default();
    for (s, r) in recheck {
        if let Some(p) = path_of(*s, r) {
            shown.insert(display_path(&p, base));
        }
    }
    for &i in removed {
        let e = &data.entries[i as usize];
        if let Some(p) = path_of(e.space, &e.rel) {
            shown.insert(display_path(&p, base));
        }
    }
    for (owner, f) in &data.findings {
        let involved = shown.contains(&f.path)
            || f.notes
                .iter()
                .any(|n| n.path.as_ref().is_some_and(|p| shown.contains(p)));
        if *owner == GRAPH && involved {
            return Err("a changed file is part of an executor cycle".to_owned());
        }
    }
    Ok(())
}

/// The ids "did you mean" searches for a missing executor after the change, per kind of space,
/// each built when first asked for.
struct Visible<'a> {
    /// Every tool after the change: its kind of space and its id.
    tools: Vec<(SpaceKind, &'a str)>,
    primitives: &'a [String],
    by_kind: FxHashMap<SpaceKind, VisibleIds>,
}

impl<'a> Visible<'a> {
    /// The tools after the change: the cached ones not removed, and the changed files that are
    /// new items.
    fn after(
        lint: &'a CachedLint<'_>,
        db: &RootDb,
        data: &'a CacheData,
        census: &'a Census,
        met: &Met,
        reread: &Reread,
        removed: &FxHashSet<u32>,
    ) -> Visible<'a> {
        let mut tools: Vec<(SpaceKind, &str)> = data
            .entries
            .iter()
            .enumerate()
            .filter(|(i, e)| e.tool && !removed.contains(&u32::try_from(*i).unwrap_or(u32::MAX)))
            .filter_map(|(_, e)| Some((kind_of(lint, e.space)?, split_tool_rel(&e.rel)?.0)))
            .collect();
        for &ci in &reread.changed {
            let e = &census.entries[ci];
            if let (Some(kind), Some((id, ext))) = (kind_of(lint, e.space), split_tool_rel(&e.rel))
                && met.cached_of[ci].is_none()
                && is_item_ext(db, ext)
            {
                tools.push((kind, id));
            }
        }
        Visible {
            tools,
            primitives: &lint.settings.primitives,
            by_kind: FxHashMap::default(),
        }
    }

    /// The ids visible from a space of `kind`.
    fn of(&mut self, kind: SpaceKind) -> &VisibleIds {
        self.by_kind
            .entry(kind)
            .or_insert_with(|| visible_ids(&self.tools, self.primitives, kind))
    }
}

/// The ids of `tools` visible from a space of `kind`, and the primitives.
fn visible_ids(tools: &[(SpaceKind, &str)], primitives: &[String], kind: SpaceKind) -> VisibleIds {
    let seen = kind.visible_kinds();
    VisibleIds::new(
        tools
            .iter()
            .filter(|(k, _)| seen.contains(k))
            .map(|(_, id)| *id)
            .chain(primitives.iter().map(String::as_str)),
    )
}

/// The kind of space `space` (an index into the specs).
fn kind_of(lint: &CachedLint<'_>, space: u32) -> Option<SpaceKind> {
    lint.specs.get(space as usize).map(|s| s.space.kind())
}

/// Step 7 of [`partial`]: "did you mean" for a missing executor searches every visible id: when
/// ids come or go, a finding that stays (its file is not checked again) must suggest what it
/// did, else a full run.
fn suggestions_stand(
    lint: &CachedLint<'_>,
    data: &CacheData,
    visible: &mut Visible<'_>,
    removed: &FxHashSet<u32>,
    recheck: &[(u32, String)],
) -> Result<(), String> {
    let in_recheck: FxHashSet<(u32, &str)> =
        recheck.iter().map(|(s, r)| (*s, r.as_str())).collect();
    let old_tools: Vec<(SpaceKind, &str)> = data
        .entries
        .iter()
        .filter(|e| e.tool)
        .filter_map(|e| Some((kind_of(lint, e.space)?, split_tool_rel(&e.rel)?.0)))
        .collect();
    let primitives = &lint.settings.primitives;
    let mut old_visible: FxHashMap<SpaceKind, VisibleIds> = FxHashMap::default();
    for (i, e) in data.entries.iter().enumerate() {
        let (Some(missing), Some(kind)) = (&e.missing, kind_of(lint, e.space)) else {
            continue;
        };
        if removed.contains(&u32::try_from(i).unwrap_or(u32::MAX))
            || in_recheck.contains(&(e.space, &*e.rel))
        {
            continue;
        }
        let old = old_visible
            .entry(kind)
            .or_insert_with(|| visible_ids(&old_tools, primitives, kind));
        let before = closest_ids(old, missing);
        if closest_ids(visible.of(kind), missing) != before {
            return Err(format!(
                "an added or removed tool changes the suggestions for the missing `{missing}`"
            ));
        }
    }
    Ok(())
}

/// Step 8 of [`partial`]: what the re-checked files' chains read loaded (the loader's argument:
/// `chain_needs`), round after round until nothing more is needed; the re-checked files as
/// loaded.
fn load_chains(
    lint: &CachedLint<'_>,
    reader: &mut Reader<'_>,
    recheck: &[(u32, String)],
) -> Result<Vec<SourceFile>, String> {
    let rel_ids: Vec<String> = recheck
        .iter()
        .filter_map(|(_, r)| split_tool_rel(r).map(|(id, _)| id.to_owned()))
        .collect();
    reader.items(&rel_ids);
    // A lockfile checked again because a file of its chain changed was not read yet.
    let lock_rels: Vec<String> = recheck
        .iter()
        .filter(|(_, r)| is_lockfile_rel(r))
        .map(|(_, r)| r.clone())
        .collect();
    reader.files(&lock_rels);
    loop {
        let db = reader.host.db();
        let files = files_of(db, lint.specs);
        let mut targets = Vec::with_capacity(recheck.len());
        for key in recheck {
            match files.get(key) {
                Some(&f) => targets.push(f),
                None => return Err(format!(".ai/{} could not be loaded again", key.1)),
            }
        }
        let needs = chains_need(db, &targets, reader.loader.probed_items());
        if needs.is_empty() {
            return Ok(targets);
        }
        reader.items(&needs);
    }
}

/// The ids the chains of `targets` read that are not loaded yet (`probed`: the loaded ones).
fn chains_need(db: &RootDb, targets: &[SourceFile], probed: &BTreeSet<String>) -> Vec<String> {
    let loaded = Loaded::Some(probed.clone());
    let mut needs: Vec<String> = Vec::new();
    for &f in targets {
        let wanted = if tool_id(db, f).is_some() {
            file_chain_needs(db, f, &loaded)
        } else if is_lockfile_rel(f.rel(db)) {
            // The ids whose files the lockfile's check resolves and hashes.
            lockfile_chain_ids(db, f)
                .ids
                .into_iter()
                .filter(|id| !loaded.contains(id))
                .collect()
        } else {
            continue;
        };
        for n in wanted {
            if !needs.contains(&n) {
                needs.push(n);
            }
        }
    }
    needs
}

/// The files a re-check checked ([`check_again`]), in the order of `recheck`.
struct Checked {
    /// The database they were checked in.
    db: RootDb,
    files: Vec<LintedFile>,
    /// The dependency ids and lists `files` point into.
    deps: DepIds,
}

/// Step 9 of [`partial`]: the re-checked files checked. A chain that runs into a cycle is a full
/// run. A re-checked file's suggestions come from the ids loaded here: they must be the ones of
/// every visible id. The ids every visible id suggests are loaded and the files checked again
/// once; if they still differ, a full run decides.
fn check_again(
    lint: &CachedLint<'_>,
    reader: &mut Reader<'_>,
    recheck: &[(u32, String)],
    mut targets: Vec<SourceFile>,
    visible: &mut Visible<'_>,
) -> Result<Checked, String> {
    let mut round = 0;
    let deps = DepIds::default();
    loop {
        let db = reader.host.snapshot();
        let integrity = integrity_enabled(&db);
        let files = par_chunks(&db, &targets, &|db, part| {
            lint_chunk(db, part, lint.opts, integrity, Some(&deps), Checks::OneShot)
        });
        if files.iter().any(LintedFile::cycle) {
            return Err("a re-checked file's chain runs into a cycle".to_owned());
        }
        let mut wanted: Vec<String> = Vec::new();
        for c in &files {
            let space = space_index(&db, lint.specs, c.file);
            let (Some(missing), Some(kind)) = (c.missing(), space.and_then(|s| kind_of(lint, s)))
            else {
                continue;
            };
            let want = closest_ids(visible.of(kind), missing);
            if suggestions(&db, missing, kind) != &want {
                wanted.extend(want.ids);
            }
        }
        if wanted.is_empty() {
            return Ok(Checked { db, files, deps });
        }
        if round > 0 {
            return Err("the suggestions for a missing executor need every id".to_owned());
        }
        round += 1;
        drop(db);
        reader.items(&wanted);
        let files = files_of(reader.host.db(), lint.specs);
        targets = match recheck.iter().map(|k| files.get(k).copied()).collect() {
            Some(t) => t,
            None => return Err("a re-checked file could not be loaded again".to_owned()),
        };
    }
}

/// Each file of the new cache by (space, rel): its entry and the findings its check produced.
type ByPath = BTreeMap<(u32, String), (Entry, Vec<Finding>)>;

/// Step 10 of [`partial`]: the new cache. The old entries by (space, rel), less the removed
/// ones, with the changed files the cache did not have added; the re-checked files' findings,
/// dependency ids and missing executors replace theirs; entries and findings renumbered in
/// (space, rel) order.
fn merge(
    data: CacheData,
    census: &Census,
    reread: &Reread,
    removed: &FxHashSet<u32>,
    recheck: &[(u32, String)],
    checked: Checked,
    run_start: i64,
) -> CacheData {
    let CacheData {
        key,
        notices,
        ids,
        entries,
        dirs: _,
        findings,
        used_by: _,
    } = data;
    let (mut map, graph) = by_path(entries, findings, removed);
    add_new_files(&mut map, census, reread, run_start);
    let mut ids = Ids::from(ids);
    take_rechecked(&mut map, recheck, checked, &mut ids);
    let (entries, findings) = renumbered(map, graph);
    CacheData {
        key,
        notices,
        ids: ids.ids,
        entries,
        // Set by the caller from this run's census.
        dirs: Vec::new(),
        findings,
        used_by: Vec::new(),
    }
}

/// The old cache's entries, less the removed ones, each with the findings it owns; and the
/// graph-wide findings.
fn by_path(
    entries: Vec<Entry>,
    findings: Vec<(u32, Finding)>,
    removed: &FxHashSet<u32>,
) -> (ByPath, Vec<Finding>) {
    let mut owned: Vec<Vec<Finding>> = vec![Vec::new(); entries.len()];
    let mut graph: Vec<Finding> = Vec::new();
    for (owner, f) in findings {
        match owned.get_mut(owner as usize) {
            Some(v) => v.push(f),
            None => graph.push(f),
        }
    }
    let mut map = ByPath::new();
    for (i, (e, fs)) in entries.into_iter().zip(owned).enumerate() {
        if removed.contains(&u32::try_from(i).unwrap_or(u32::MAX)) {
            continue;
        }
        map.insert((e.space, e.rel.to_string()), (e, fs));
    }
    (map, graph)
}

/// An entry for each changed file the cache did not have (its findings, dependencies and
/// whether it is a tool come from its check, [`take_rechecked`]).
fn add_new_files(map: &mut ByPath, census: &Census, reread: &Reread, run_start: i64) {
    let hash_of: FxHashMap<usize, u128> = reread.refreshed.iter().copied().collect();
    for &ci in &reread.changed {
        let e = &census.entries[ci];
        let key = (e.space, e.rel.clone());
        map.entry(key.clone()).or_insert_with(|| {
            (
                Entry {
                    space: key.0,
                    rel: Arc::from(key.1.as_str()),
                    kind: Some(e.kind.clone()),
                    content: hash_of.get(&ci).copied().unwrap_or_default(),
                    racy: !trusted(&e.kind, run_start),
                    tool: false,
                    deps: Vec::new(),
                    missing: None,
                },
                Vec::new(),
            )
        });
    }
}

/// Each re-checked file's findings, dependency ids (interned in `ids`) and missing executor in
/// place of its old ones.
fn take_rechecked(map: &mut ByPath, recheck: &[(u32, String)], checked: Checked, ids: &mut Ids) {
    let (dep_ids, dep_lists) = checked.deps.into_tables();
    for (key, lf) in recheck.iter().zip(checked.files) {
        if let Some((entry, fs)) = map.get_mut(key) {
            entry.tool = tool_id_ref(&checked.db, lf.file).is_some();
            let (list, missing) = match lf.deps {
                Some(d) => (dep_lists.get(d.list as usize), d.missing),
                None => (None, None),
            };
            entry.deps = list
                .into_iter()
                .flat_map(|l| l.iter())
                .filter_map(|&d| dep_ids.get(d as usize))
                .map(|d| ids.intern(d))
                .collect();
            entry.missing = missing.map(String::from);
            *fs = lf.findings;
        }
    }
}

/// The entries in (space, rel) order and every finding with its entry's new index (`GRAPH` for
/// the graph-wide ones), in report order.
fn renumbered(map: ByPath, graph: Vec<Finding>) -> (Vec<Entry>, Vec<(u32, Finding)>) {
    let mut entries = Vec::with_capacity(map.len());
    let mut findings: Vec<(u32, Finding)> = Vec::new();
    for (_, (e, fs)) in map {
        let i = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        findings.extend(fs.into_iter().map(|f| (i, f)));
        entries.push(e);
    }
    findings.extend(graph.into_iter().map(|f| (GRAPH, f)));
    findings.sort_by(|a, b| compare_findings(&a.1, &b.1));
    (entries, findings)
}
