//! L5 `rye_load` (§12.8) as a pure function of (database, request, facts): find an item in the
//! space asked for (or the first that holds it), verify its signature, and answer its content and
//! metadata; for a copy, say where it goes — the same category path under the destination space
//! (the reference kept only the file name, §15) — for the edge to write.

use crate::analysis::Analysis;
use crate::analysis::verify::Policy;
use crate::exec::facts::{Ask, Facts};
use crate::integrity::ItemKind;
use crate::message;
use crate::model::{SpaceKind, item_id_problem};

/// One `rye_load`.
#[derive(Clone, Debug)]
pub struct LoadRequest {
    pub kind: ItemKind,
    pub item_id: String,
    /// The space to load from (`None`: the first space that holds it, project → user → system).
    pub source: Option<SpaceKind>,
    /// Copy the item into this space (project or user).
    pub destination: Option<SpaceKind>,
    pub policy: Policy,
}

/// What the call answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadAnswer {
    Error {
        item_id: String,
        kind: ItemKind,
        error: String,
        /// `integrity` when the signature refused it.
        error_type: Option<&'static str>,
    },
    Loaded(Box<Loaded>),
}

/// An item found and verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub item_id: String,
    pub kind: ItemKind,
    pub content: String,
    /// The file's name without its extension.
    pub name: String,
    pub path: std::path::PathBuf,
    /// With its dot (`.py`), or empty.
    pub extension: String,
    pub version: Option<String>,
    /// The space's label (`project`, `user`, `system`, `system:<name>`).
    pub source: String,
    /// Where to copy it: (destination space, path relative to its `.ai/`).
    pub copy_to: Option<(SpaceKind, String)>,
}

/// What the planner says next.
#[derive(Clone, Debug)]
pub enum LoadStep {
    Need(Vec<crate::exec::facts::Need>),
    Answer(LoadAnswer),
}

/// Plan one load. Pure: the same database, request and facts give the same step.
pub fn plan_load(a: Analysis<'_>, req: &LoadRequest, facts: &Facts) -> LoadStep {
    let id = req.item_id.as_str();
    let error = |error: String, error_type| {
        LoadStep::Answer(LoadAnswer::Error {
            item_id: id.to_owned(),
            kind: req.kind,
            error,
            error_type,
        })
    };
    if let Some(reason) = item_id_problem(id) {
        return error(message::invalid_item_id(id, reason), None);
    }
    if matches!(req.destination, Some(SpaceKind::System)) {
        return error(
            "A system space is never written: load into `project` or `user`".to_owned(),
            None,
        );
    }
    let ask = Ask::new(facts);
    let loaded = match req.kind {
        ItemKind::Tool => ask.item_loaded(id),
        kind => ask.space_file_loaded(&format!("{}{id}.md", kind.dir())),
    };
    if !loaded {
        return LoadStep::Need(ask.needs());
    }
    let spaces: &[SpaceKind] = match &req.source {
        Some(s) => std::slice::from_ref(s),
        None => &[SpaceKind::Project, SpaceKind::User, SpaceKind::System],
    };
    let file = spaces.iter().find_map(|&space| match req.kind {
        ItemKind::Tool => a.tool_in(space, id),
        kind => a.document_in(Some(space), kind, id),
    });
    let Some(file) = file else {
        return error(message::item_not_found(id), None);
    };
    let verdict = a.verify_file(file, id);
    if !req.policy.accepts(&verdict.verdict) {
        let why = verdict.error.unwrap_or_else(|| message::item_not_found(id));
        return error(why, Some("integrity"));
    }
    let content = match a.contents(file) {
        Ok(text) => text.into_owned(),
        Err(why) => {
            return error(
                format!("{} cannot be read: {why}", a.path(file).display()),
                None,
            );
        }
    };
    let rel = a.rel(file);
    let file_name = rel.rsplit('/').next().unwrap_or(rel);
    let extension = crate::integrity::extension_of(rel).to_owned();
    let name = file_name
        .strip_suffix(extension.as_str())
        .unwrap_or(file_name)
        .to_owned();
    let from = a.space_kind(file);
    let copy_to = match req.destination {
        Some(dest) if dest == from => {
            return error(
                format!(
                    "{id} is already in the {} space: nothing to copy",
                    a.space_label(file)
                ),
                None,
            );
        }
        // The item keeps its category path: `<type dir>/<id><extension>`.
        Some(dest) => Some((dest, rel.to_owned())),
        None => None,
    };
    LoadStep::Answer(LoadAnswer::Loaded(Box::new(Loaded {
        item_id: id.to_owned(),
        kind: req.kind,
        content,
        name,
        path: a.path(file).to_path_buf(),
        extension,
        version: a.version_of(req.kind, file),
        source: a.space_label(file),
        copy_to,
    })))
}
