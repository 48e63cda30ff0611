//! L5 the view behind `ryechain chain ITEM`: the resolved chain with files, spaces and shadowed
//! candidates, the reference's build errors, §4 validation (rendered by `render::chain`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::db::{Db, RootDb, SourceFile};
use crate::integrity::content_hash;
use crate::model::{Metadata, SpaceKind};
use crate::resolve::{ChainEnd, chain, metadata, resolve_root};
use crate::rules::validate::{Link, ValidationResult, validate_chain};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementView {
    pub item_id: String,
    pub path: Option<PathBuf>,
    pub space: String,
    /// Where the file really lives, when a symlink points into another space.
    pub origin: Option<SpaceKind>,
    pub primitive: bool,
    pub tool_type: Option<String>,
    pub executor_id: Option<String>,
    /// The file's content hash (§10.2), as lockfiles and the reference's chain record it
    /// (`None`: no file, or one that cannot be hashed).
    pub integrity: Option<String>,
    pub shadowed: Vec<(PathBuf, String)>,
    /// The element's header, as the planner reads it (config, env, anchor, …).
    pub metadata: Option<Arc<Metadata>>,
    /// The `.ai` folder of the element's space (`None` without a file).
    pub space_root: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainView {
    pub item_id: String,
    /// `false`: `Tool not found: <id>`.
    pub found: bool,
    pub elements: Vec<ElementView>,
    /// A chain-building error with the reference's text (§3.2), if any.
    pub error: Option<String>,
    /// The chain ends at an element that is not a primitive (execution would fail, §3.4).
    pub unknown_primitive: Option<String>,
    /// That element is a tool meant to run (a lint error, `unknown-primitive`): the finding's
    /// rule, message and help, as lint gives them.
    pub unknown_primitive_finding: Option<(String, String, Option<String>)>,
    pub validation: ValidationResult,
}

/// Resolve `item_id` from the project space and describe its chain.
pub fn chain_of(db: &RootDb, item_id: &str) -> ChainView {
    let mut view = ChainView {
        item_id: item_id.to_owned(),
        found: false,
        elements: Vec::new(),
        error: None,
        unknown_primitive: None,
        unknown_primitive_finding: None,
        validation: ValidationResult {
            valid: true,
            ..Default::default()
        },
    };
    let res = resolve_root(db, item_id);
    let Some(root) = &res.found else { return view };
    view.found = true;
    let ch = chain(db, root.file);
    let metas: Vec<_> = ch
        .elements
        .iter()
        .map(|e| e.file.map(|f| metadata(db, f).clone()))
        .collect();
    for (i, e) in ch.elements.iter().enumerate() {
        let meta = metas[i].as_deref();
        let shadowed = if i == 0 { &res.shadowed } else { &e.shadowed };
        view.elements.push(ElementView {
            item_id: e.item_id.clone(),
            path: e.file.map(|f| f.path(db).as_ref().clone()),
            space: e.space.label(),
            origin: (e.origin != e.space.kind()).then_some(e.origin),
            primitive: e.primitive,
            tool_type: meta
                .and_then(|m| m.tool_type_str())
                .map(str::to_owned)
                .or(e.primitive.then(|| "primitive".to_owned())),
            executor_id: meta
                .and_then(|m| m.executor_id())
                .and_then(|v| v.value.as_str())
                .map(str::to_owned),
            integrity: e
                .file
                .and_then(|f| content_hash(db, f).as_ref().ok().map(|h| h.to_string())),
            shadowed: shadowed
                .iter()
                .map(|c| (c.file.path(db).as_ref().clone(), c.space.label()))
                .collect(),
            metadata: metas[i].clone(),
            space_root: e.file.and_then(|f| space_root(db, f)),
        });
    }
    view.error = ch.build_error(item_id);
    if matches!(ch.end, ChainEnd::Terminal) {
        view.unknown_primitive = ch.elements.last().map(|e| e.item_id.clone());
        // In lint's words, when lint holds it an error (a tool meant to run, not a library).
        let rules = crate::rules::rule_set(db);
        // (Unless a suppression comment or `lint.per-file-ignores` takes it out of the lint.)
        view.unknown_primitive_finding = ch.elements.last().and_then(|e| e.file).and_then(|f| {
            let found: Vec<crate::diagnostic::Diagnostic> =
                crate::rules::checks::chain_diagnostics(db, f)
                    .iter()
                    .filter(|d| {
                        rules.get(&d.rule).is_some_and(|r| {
                            matches!(r.check, crate::rules::Check::TerminalNotPrimitive { .. })
                                && super::effective_severity(db, r)
                                    == Some(crate::diagnostic::Severity::Error)
                        })
                    })
                    .cloned()
                    .collect();
            super::suppress::suppress(db, f, found, false)
                .into_iter()
                .next()
                .map(|d| {
                    (
                        d.rule.to_string(),
                        d.message.clone(),
                        d.help.as_deref().map(str::to_owned),
                    )
                })
        });
    }
    if view.error.is_none() {
        let links: Vec<Link<'_>> = ch
            .elements
            .iter()
            .zip(&metas)
            .map(|(e, m)| Link {
                item_id: &e.item_id,
                space: e.origin,
                metadata: m.as_deref(),
            })
            .collect();
        view.validation = validate_chain(crate::rules::rule_set(db), &links);
    }
    view
}

/// The `.ai` folder of the space `f` was loaded from.
fn space_root(db: &dyn Db, f: SourceFile) -> Option<PathBuf> {
    db.workspace()
        .roots(db)
        .iter()
        .find(|r| r.space(db) == f.space(db))
        .map(|r| r.root(db).as_ref().clone())
}

impl ChainView {
    /// Why the chain cannot run, in the reference's words: a build error, or (§3.4) an end at an
    /// element that is not a primitive.
    pub fn run_error(&self) -> Option<String> {
        self.error.clone().or_else(|| {
            self.unknown_primitive
                .as_deref()
                .map(crate::message::unknown_primitive)
        })
    }

    /// `true` when the chain builds and validates.
    pub fn passed(&self) -> bool {
        self.found && self.error.is_none() && self.validation.valid
    }
}
