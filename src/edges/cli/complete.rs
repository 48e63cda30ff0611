//! L6 dynamic shell completion (`clap_complete`'s `COMPLETE=$SHELL ryechain`): item ids for
//! the commands that take one, read from the spaces of the project the shell is in (only the
//! folder the typed prefix names is walked), and rule ids and families for `rule`, `--select`
//! and `--ignore` (the last of a comma-separated list). The reference-era flat runtime ids are
//! offered only when nothing current matches.

use std::ffi::OsStr;
use std::path::Path;

use clap_complete::engine::CompletionCandidate;

use super::Context;
use crate::analysis::ide::is_flat_runtime_alias;
use crate::db::Settings;
use crate::integrity::ItemKind;
use crate::model::SpaceKind;
use crate::system::os::OsSystem;

/// The tool ids that start with what is typed, from every space of the project the shell is in
/// (its space as help), shadowed ids once.
pub fn tool_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    item_ids(current, ItemKind::Tool)
}

fn item_ids(current: &OsStr, kind: ItemKind) -> Vec<CompletionCandidate> {
    let Some(typed) = current.to_str() else {
        return Vec::new();
    };
    let ctx = Context {
        sys: &OsSystem,
        system_space: Vec::new(),
        user_space: None,
    };
    // The folder the prefix names (`acme/gr` → `tools/acme`): a big tree is not walked whole.
    let base = kind.dir().trim_end_matches('/');
    let dir = match typed.rsplit_once('/') {
        Some((folder, _)) if crate::model::item_id_problem(folder).is_none() => {
            format!("{base}/{folder}")
        }
        _ => base.to_owned(),
    };
    let mut seen = std::collections::BTreeMap::new();
    for space in [SpaceKind::Project, SpaceKind::User, SpaceKind::System] {
        let Ok((host, _)) = ctx.space_host(Path::new("."), Settings::default(), space, &dir) else {
            return Vec::new();
        };
        let a = host.analysis();
        for (id, file) in a.items(space, kind) {
            if id.starts_with(typed) {
                seen.entry(id).or_insert_with(|| a.space_label(file));
            }
        }
    }
    // The reference-era flat runtime aliases only when nothing current matches (the editor
    // lists them last, marked deprecated).
    let current = seen.keys().any(|id| !is_flat_runtime_alias(id));
    seen.into_iter()
        .filter(|(id, _)| !(current && is_flat_runtime_alias(id)))
        .map(|(id, space)| CompletionCandidate::new(id).help(Some(space.into())))
        .collect()
}

/// Rule ids, then families and `ALL`, that start with what is typed (`--select`, `--ignore`:
/// clap hands over the last of a comma-separated list, and puts the rest back).
pub fn rule_names(current: &OsStr) -> Vec<CompletionCandidate> {
    rules_starting(current, true)
}

/// Rule ids alone (`ryechain rule ID`).
pub fn rule_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    rules_starting(current, false)
}

fn rules_starting(current: &OsStr, families: bool) -> Vec<CompletionCandidate> {
    let Some(typed) = current.to_str() else {
        return Vec::new();
    };
    let set = crate::rules::rules();
    let mut names: Vec<(String, String)> = set
        .rules
        .iter()
        .map(|r| (r.id.to_string(), r.summary.to_string()))
        .collect();
    if families {
        names.extend(
            set.families()
                .into_iter()
                .map(|f| (f.to_owned(), "rule family".to_owned())),
        );
        names.push(("ALL".to_owned(), "every rule".to_owned()));
    }
    names
        .into_iter()
        .filter(|(name, _)| name.starts_with(typed))
        .map(|(name, help)| CompletionCandidate::new(name).help(Some(help.into())))
        .collect()
}
