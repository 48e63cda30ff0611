//! L5 lazy single-item loading, the pure half: which tool ids the chain of one item depends on
//! and that are not loaded yet (`chain_needs`). The edge (`load::ItemLoader`) probes them and
//! asks again until nothing is missing.

use std::collections::BTreeSet;

use crate::db::{Db, SourceFile};
use crate::model::item_id_problem;
use crate::resolve::{Chain, ChainEnd, chain, resolve_root, tool_id, walk_chain};

/// Which tool ids / space files the database holds completely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// Every file of every space is loaded (lint, the editor, a test workspace).
    All,
    /// Only these have been probed.
    Some(BTreeSet<String>),
}

impl Loaded {
    pub fn contains(&self, key: &str) -> bool {
        match self {
            Loaded::All => true,
            Loaded::Some(set) => set.contains(key),
        }
    }
    pub fn insert(&mut self, key: &str) {
        if let Loaded::Some(set) = self {
            set.insert(key.to_owned());
        }
    }
}

/// The ids whose candidate files the chain of `item_id` (§3) reads and that `loaded` does not
/// hold yet, in chain order: the root id alone until it is loaded; then every element id of its
/// chain, and the id at which the chain stops when that id was looked up (`Missing`, `Cycle`).
/// Primitive ids are included: a primitive may have a file in a bundle. Empty when the chain
/// of a full load is known.
///
/// Why the chain is then the one of a full load (the database holds the extractors and config
/// files of every space, as a full load does, plus the candidate files of every loaded id):
/// - `resolve_item(id)` reads only `space_index(root).first(id, extractor_config)` of every
///   space, i.e. the files `tools/<id><ext>` for `ext` in the extension list. The extension list
///   and parsers come from the extractor files only, the chain limit from the config files and
///   the settings: all in the base load. So an id whose candidates were probed in every space
///   resolves exactly as in a full load (other loaded files cannot match `id`).
/// - `chain` is a function of its root file, the metadata of each element's file (loaded: the
///   element was resolved), and `resolve_item` of the ids it looks up: the element ids after the
///   root (primitive ids through `primitive_file`), plus the id of a `Missing` or `Cycle` end.
///   `TooDeep`, `InvalidId` and `WrongType` ends stop before any lookup. By induction on the
///   elements, when every looked-up id is loaded, each step equals the full load's step.
/// - The root is `resolve_root(item_id)`, equal once `item_id` is loaded.
///
/// Hostile ids (`item_id_problem`) are never asked for: no file can carry them.
pub fn chain_needs(db: &dyn Db, item_id: &str, loaded: &Loaded) -> Vec<String> {
    if item_id_problem(item_id).is_some() {
        return Vec::new();
    }
    if !loaded.contains(item_id) {
        return vec![item_id.to_owned()];
    }
    let Some(root) = &resolve_root(db, item_id).found else {
        return Vec::new();
    };
    file_chain_needs(db, root.file, loaded)
}

/// `chain_needs` for the chain that starts at `file` (an editor buffer, whatever its space): the
/// ids its chain reads that `loaded` does not hold yet, the file's own id first (its candidates
/// in the other spaces shadow it or are shadowed by it).
pub fn file_chain_needs(db: &dyn Db, file: SourceFile, loaded: &Loaded) -> Vec<String> {
    let own = tool_id(db, file);
    if own.is_none() && crate::place::is_lockfile_rel(file.rel(db)) {
        return lockfile_needs(db, file, loaded);
    }
    let ch = chain(db, file);
    let stop = match &ch.end {
        ChainEnd::Missing { executor_id, .. } | ChainEnd::Cycle { executor_id, .. } => {
            Some(executor_id.as_str())
        }
        ChainEnd::Primitive
        | ChainEnd::Terminal
        | ChainEnd::InvalidId { .. }
        | ChainEnd::WrongType { .. }
        | ChainEnd::TooDeep { .. } => None,
    };
    let suggested = suggested_runtimes(db, file, ch);
    let actions = graph_actions(db, file);
    let mut needs: Vec<String> = Vec::new();
    let ids = own
        .as_deref()
        .into_iter()
        .chain(ch.elements.iter().map(|e| e.item_id.as_str()))
        .chain(stop)
        .chain(suggested)
        .chain(actions.iter().map(String::as_str));
    for id in ids {
        if !loaded.contains(id) && item_id_problem(id).is_none() && !needs.iter().any(|n| n == id) {
            needs.push(id.to_owned());
        }
    }
    needs
}

/// The tools a state graph's actions name (`graph-unresolved-action` resolves them): read by its
/// findings as the chain's ids are, so a lazy load probes them and a kept lint re-checks the
/// graph when one comes or goes. Empty for any other file.
fn graph_actions(db: &dyn Db, file: SourceFile) -> Vec<String> {
    crate::rules::graph_checks::graph_action_ids(crate::resolve::metadata(db, file))
}

/// `file_chain_needs` for a lockfile (an editor buffer of `lockfiles/…`): the ids its
/// `stale-lockfile` check reads (`lockfile_chain_ids`), then, once its root tool is loaded, what
/// that tool's chain reads. Without this an opened lockfile's findings and quick fixes waited for
/// the workspace's full load.
fn lockfile_needs(db: &dyn Db, file: SourceFile, loaded: &Loaded) -> Vec<String> {
    let ids = lockfile_chain_ids(db, file).ids;
    let needs: Vec<String> = ids
        .iter()
        .filter(|id| !loaded.contains(id))
        .cloned()
        .collect();
    if !needs.is_empty() {
        return needs;
    }
    match ids
        .first()
        .and_then(|root| resolve_root(db, root).found.as_ref())
    {
        Some(root) => file_chain_needs(db, root.file, loaded),
        None => Vec::new(),
    }
}

/// A chain that ends at `file` without a primitive: the runtimes the `unknown-primitive` help
/// (which lint and `chain` show) may name, the first of each rule's list that resolves
/// (`rules::checks::runtime_candidates`). Empty for any other chain.
fn suggested_runtimes<'db>(db: &'db dyn Db, file: SourceFile, ch: &Chain) -> Vec<&'db str> {
    if !matches!(ch.end, ChainEnd::Terminal) {
        return Vec::new();
    }
    crate::rules::rule_set(db)
        .with_check(|c| matches!(c, crate::rules::Check::TerminalNotPrimitive { .. }))
        .flat_map(|r| crate::rules::checks::runtime_candidates(db, file, &r.check))
        .map(String::as_str)
        .collect()
}

/// What the checks of one tool read beyond the file itself (`file_chain_ids`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainIds {
    /// Every element id of its chain after the root and the id at which it stops (`Missing`,
    /// `Cycle`, `TooDeep`), each once. The file's own id (read for shadowing and ambiguity) is
    /// not listed: it is the file's path minus `tools/` and the extension. (A `TooDeep` chain
    /// does not look its last id up, but the executor graph, which has no length limit, follows
    /// that edge: listed, a change to that id re-checks the tool, whose `cycle` then says the
    /// graph-wide findings must be computed again.)
    pub ids: Vec<String>,
    /// The chain runs into a cycle, or stops at the length limit before it could tell (the
    /// executor graph may find one past it).
    pub cycle: bool,
    /// The id the chain stops at because it resolves nowhere (its "did you mean" reads every
    /// visible id).
    pub missing: Option<String>,
}

/// The ids the checks of tool `file` read beyond the file itself and its own id. A change to a file that
/// carries none of these ids leaves the file's chain, and so its findings, as they were (the
/// argument of `chain_needs`) — except the suggestions for a missing executor, which read the
/// set of every visible id (`ChainIds::missing`). The lint cache relies on this to re-check only
/// what a change can reach. The chain is walked, not memoized (a lint asks this of every tool).
pub fn file_chain_ids(db: &dyn Db, file: SourceFile) -> ChainIds {
    chain_ids_of(db, file, &walk_chain(db, file))
}

/// The ids the checks of lockfile `file` read (`stale-lockfile`): its root tool's and every
/// chain entry's, whose files it resolves and hashes (§10.7). A change to a file of none of
/// these ids leaves its findings as they were. A lockfile that does not load reads no id.
pub fn lockfile_chain_ids(db: &dyn Db, file: SourceFile) -> ChainIds {
    let mut ids: Vec<String> = Vec::new();
    if let Ok(lock) = crate::integrity::lockfile::lockfile(db, file) {
        let entries = lock
            .resolved_chain
            .iter()
            .filter_map(|e| e.get("item_id").and_then(serde_json::Value::as_str));
        for id in std::iter::once(lock.root.tool_id.as_str()).chain(entries) {
            if item_id_problem(id).is_none() && !ids.iter().any(|n| n == id) {
                ids.push(id.to_owned());
            }
        }
    }
    ChainIds {
        ids,
        cycle: false,
        missing: None,
    }
}

/// [`file_chain_ids`] from the tool's chain `ch` (`walk_chain`), already walked.
pub fn chain_ids_of(db: &dyn Db, file: SourceFile, ch: &Chain) -> ChainIds {
    let own = tool_id(db, file);
    let cycle = matches!(ch.end, ChainEnd::Cycle { .. } | ChainEnd::TooDeep { .. });
    let (stop, missing) = match &ch.end {
        ChainEnd::Missing { executor_id, .. } => {
            (Some(executor_id.as_str()), Some(executor_id.clone()))
        }
        ChainEnd::Cycle { executor_id, .. } | ChainEnd::TooDeep { executor_id, .. } => {
            (Some(executor_id.as_str()), None)
        }
        _ => (None, None),
    };
    let mut ids: Vec<String> = Vec::new();
    let suggested = suggested_runtimes(db, file, ch);
    let actions = graph_actions(db, file);
    let all = ch
        .elements
        .iter()
        .map(|e| e.item_id.as_str())
        .chain(stop)
        .chain(suggested)
        .chain(actions.iter().map(String::as_str));
    for id in all {
        if Some(id) != own.as_deref() && !ids.iter().any(|n| n == id) {
            ids.push(id.to_owned());
        }
    }
    ChainIds {
        ids,
        cycle,
        missing,
    }
}
