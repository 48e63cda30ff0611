//! L5 the editor features behind `Analysis` (no I/O, no protocol, no markdown): the executor id
//! under the cursor, hover (the resolved chain, shadowed candidates, integrity), go-to-definition,
//! completion of executor ids, document symbols and certain quick fixes, each as plain data.

use std::path::PathBuf;

use super::{checked_diagnostics, fix_span};
use crate::db::{Db, RootDb, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::integrity::{Verdict, signature_status};
use crate::model::{ExecutorRef, Span, Value};
use crate::resolve::{ChainEnd, chain, metadata, resolve, tool_id, tool_id_ref, visible_ids};

/// The executor id written at byte `offset` of `file`, with the span of the id's characters
/// (inside the quotes), from the parsed header.
pub(crate) fn executor_at(db: &RootDb, file: SourceFile, offset: usize) -> Option<(String, Span)> {
    tool_id(db, file)?;
    let meta = metadata(db, file);
    let ExecutorRef::Id(id, span) = meta.executor() else {
        return None;
    };
    let span = span.shifted(crate::resolve::header_base(db, file));
    let text = file.contents(db).text()?;
    let inner = unquoted(&text, span);
    (inner.start as usize <= offset && offset <= inner.end as usize).then(|| (id.to_owned(), inner))
}

/// The span without the quotes of a quoted literal.
fn unquoted(text: &str, span: Span) -> Span {
    let s = text.get(span.range()).unwrap_or_default();
    let quoted = s.len() >= 2
        && matches!(s.as_bytes()[0], b'"' | b'\'' | b'`')
        && s.as_bytes()[s.len() - 1] == s.as_bytes()[0];
    if quoted {
        Span::new(span.start as usize + 1, span.end as usize - 1)
    } else {
        span
    }
}

/// How an element's chain breaks, as the hover shows it (`None` in [`Hover::end`]: it ends at a
/// primitive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainBreak {
    /// It ends at an element that is not a primitive.
    Terminal,
    /// The executor id resolves in no space this element may see.
    Missing {
        executor_id: String,
    },
    InvalidId {
        executor_id: String,
        reason: String,
    },
    /// The executor id is not a string.
    WrongType {
        type_name: String,
    },
    /// The executor id is already in the chain.
    Cycle {
        executor_id: String,
    },
    /// Longer than the maximum number of elements.
    TooDeep {
        max: usize,
    },
}

/// One element of the chain a hover shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoverElement {
    pub item_id: String,
    /// The space's label (`project`, `user`, `system`, `system:<bundle>`).
    pub space: String,
    pub primitive: bool,
    /// `None`: a primitive resolved by key, with no file.
    pub path: Option<PathBuf>,
    /// The file's integrity verdict.
    pub integrity: Option<Verdict>,
    /// The candidates it shadows: (file, space label).
    pub shadowed: Vec<(PathBuf, String)>,
}

/// What a hover on an executor id shows: the chain from the hovered file on, and how it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The executor id under the cursor, and the span of its characters.
    pub id: String,
    pub span: Span,
    pub elements: Vec<HoverElement>,
    pub end: Option<ChainBreak>,
    /// What running the chain would answer (`Executor not found: …`, `Unknown primitive: …`):
    /// the words of lint, `chain` and `exec` (`crate::message`).
    pub error: Option<String>,
}

/// The chain behind the executor id at `offset` of `file`: each element's space and file, the
/// candidates it shadows, its integrity verdict, and how the chain ends.
pub(crate) fn hover(db: &RootDb, file: SourceFile, offset: usize) -> Option<Hover> {
    let (id, span) = executor_at(db, file, offset)?;
    let ch = chain(db, file);
    let elements = ch
        .elements
        .iter()
        .map(|e| HoverElement {
            item_id: e.item_id.clone(),
            space: e.space.label(),
            primitive: e.primitive,
            path: e.file.map(|f| f.path(db).as_ref().clone()),
            integrity: e.file.map(|f| signature_status(db, f).clone()),
            shadowed: e
                .shadowed
                .iter()
                .map(|c| (c.file.path(db).as_ref().clone(), c.space.label()))
                .collect(),
        })
        .collect();
    let end = match &ch.end {
        ChainEnd::Primitive => None,
        ChainEnd::Terminal => Some(ChainBreak::Terminal),
        ChainEnd::Missing { executor_id, .. } => Some(ChainBreak::Missing {
            executor_id: executor_id.to_string(),
        }),
        ChainEnd::InvalidId {
            executor_id,
            reason,
            ..
        } => Some(ChainBreak::InvalidId {
            executor_id: executor_id.to_string(),
            reason: reason.to_string(),
        }),
        ChainEnd::WrongType { type_name, .. } => Some(ChainBreak::WrongType {
            type_name: type_name.to_string(),
        }),
        ChainEnd::Cycle { executor_id, .. } => Some(ChainBreak::Cycle {
            executor_id: executor_id.to_string(),
        }),
        ChainEnd::TooDeep { max, .. } => Some(ChainBreak::TooDeep { max: *max }),
    };
    let root = ch.elements.first().map_or("", |e| e.item_id.as_str());
    Some(Hover {
        id,
        span,
        elements,
        end,
        error: ch.run_error(root),
    })
}

/// The file the executor id under the cursor resolves to (from this file's space).
pub(crate) fn definition(db: &RootDb, file: SourceFile, offset: usize) -> Option<SourceFile> {
    let (id, _) = executor_at(db, file, offset)?;
    let from = file.link_origin(db).unwrap_or(file.space(db).kind());
    resolve(db, &id, from).found.as_ref().map(|c| c.file)
}

/// Where an executor id value starts on the line holding `offset`, read from the text alone (the
/// header may not parse while the user types): after `executor_id` or `__executor_id__`, a `:` or
/// `=`, blanks and an optional quote. Returns the value's start and the end of the id characters
/// after the cursor.
pub fn executor_value_on_line(text: &str, offset: usize) -> Option<(usize, usize)> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let key_at = line.find("executor_id")?;
    let mut i = key_at + "executor_id".len();
    let bytes = line.as_bytes();
    while i < bytes.len() && matches!(bytes[i], b'_' | b'"' | b'\'') {
        i += 1;
    }
    while i < bytes.len() && bytes[i] == b' ' {
        i += 1;
    }
    if i >= bytes.len() || !matches!(bytes[i], b':' | b'=') {
        return None;
    }
    i += 1;
    while i < bytes.len() && bytes[i] == b' ' {
        i += 1;
    }
    if i < bytes.len() && matches!(bytes[i], b'"' | b'\'' | b'`') {
        i += 1;
    }
    let start = line_start + i;
    if offset < start {
        return None;
    }
    let is_id = |c: char| c.is_alphanumeric() || matches!(c, '/' | '_' | '-' | '.');
    if !text[start..offset].chars().all(is_id) {
        return None;
    }
    let end = offset
        + text[offset..line_end]
            .find(|c: char| !is_id(c))
            .unwrap_or(line_end - offset);
    Some((start, end))
}

/// One completion candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdCompletion {
    pub id: String,
    /// A runtime (offered first) or a primitive (offered after the runtimes).
    pub runtime: bool,
    pub primitive: bool,
    /// A reference-era flat runtime id (`rye/core/runtimes/python_script_runtime`), kept as an
    /// alias of its folder form (§15.2): offered, marked deprecated, after the current ids.
    pub deprecated: bool,
    /// Space label and file, for the detail line.
    pub detail: String,
}

/// At most this many ids are offered per request (the list is marked incomplete beyond it).
pub const MAX_COMPLETIONS: usize = 200;

/// Executor ids visible from `file`'s space starting with `prefix`, runtimes and primitives
/// first, then by id; and whether more matched than were returned.
pub(crate) fn complete_ids(
    db: &RootDb,
    file: SourceFile,
    prefix: &str,
) -> (Vec<IdCompletion>, bool) {
    let from = file.link_origin(db).unwrap_or(file.space(db).kind());
    let own = tool_id(db, file);
    let mut matches: Vec<&str> = visible_ids(db, from)
        .iter()
        .filter(|id| id.starts_with(prefix) && Some(*id) != own.as_deref())
        .collect();
    matches.sort_unstable();
    // (An id visible in two spaces comes once from each.)
    matches.dedup();
    let primitives = &db.workspace().settings(db).primitives;
    let mut out: Vec<IdCompletion> = matches
        .iter()
        .map(|&id| {
            let res = resolve(db, id, from);
            let primitive = primitives.iter().any(|p| p == id);
            let runtime = primitive
                || res.found.as_ref().is_some_and(|c| {
                    crate::resolve::file_kind(db, c.file) == crate::resolve::FileKind::Runtime
                        || id.starts_with("rye/core/runtimes/")
                });
            let detail = match &res.found {
                Some(c) => format!("{} · {}", c.space.label(), c.file.rel(db)),
                None => "primitive".to_owned(),
            };
            IdCompletion {
                id: id.to_owned(),
                runtime,
                primitive,
                deprecated: is_flat_runtime_alias(id),
                detail,
            }
        })
        .collect();
    // Runtimes, then primitives, then the rest; in each, current ids before deprecated aliases.
    let rank = |c: &IdCompletion| match (c.runtime && !c.primitive, c.primitive) {
        (true, _) => 0,
        (_, true) => 1,
        _ => 2,
    };
    out.sort_by(|a, b| (rank(a), a.deprecated, &a.id).cmp(&(rank(b), b.deprecated, &b.id)));
    let more = out.len() > MAX_COMPLETIONS;
    out.truncate(MAX_COMPLETIONS);
    (out, more)
}

/// A reference-era flat runtime id: `rye/core/runtimes/<name>_runtime`, no folder below.
pub fn is_flat_runtime_alias(id: &str) -> bool {
    id.strip_prefix("rye/core/runtimes/")
        .is_some_and(|rest| !rest.contains('/') && rest.ends_with("_runtime"))
}

/// A header key of a tool file and the span of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderSymbol {
    pub name: &'static str,
    /// A one-line rendering of a scalar value.
    pub detail: Option<String>,
    pub span: Span,
}

/// The metadata keys a tool file sets, in file order.
pub(crate) fn header_symbols(db: &RootDb, file: SourceFile) -> Vec<HeaderSymbol> {
    if tool_id_ref(db, file).is_none() {
        return Vec::new();
    }
    let m = metadata(db, file);
    let base = crate::resolve::header_base(db, file);
    let fields = [
        ("version", m.version()),
        ("tool_type", m.tool_type()),
        ("executor_id", m.executor_id()),
        ("category", m.category()),
        ("description", m.tool_description()),
        ("config_schema", m.config_schema()),
        ("env_config", m.env_config()),
        ("config", m.config()),
        ("anchor", m.anchor()),
        ("verify_deps", m.verify_deps()),
        ("config_resolve", m.config_resolve()),
        ("inputs", m.inputs()),
        ("outputs", m.outputs()),
        ("child_constraints", m.child_constraints()),
    ];
    let mut out: Vec<HeaderSymbol> = fields
        .into_iter()
        .filter_map(|(name, v)| {
            let v = v.as_ref()?;
            let detail = match &v.value {
                Value::Str(s) => Some(s.to_string()),
                Value::Null => Some("None".to_owned()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Int(i) => Some(i.to_string()),
                _ => None,
            };
            Some(HeaderSymbol {
                name,
                detail,
                span: v.span.shifted(base),
            })
        })
        .collect();
    out.sort_by_key(|s| (s.span.start, s.name));
    out
}

/// A certain fix: replace `span` with `replacement`, for the diagnostic `diagnostic`; `title`
/// says what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickFix {
    pub span: Span,
    pub replacement: String,
    pub title: String,
    pub diagnostic: Diagnostic,
}

/// The certain fixes of `file` (its findings in force, suppressed ones left out): a certain
/// suggestion, a finding's own edit (the header line a script forgot, an unused suppression
/// removed), and a stale lockfile refreshed, stamped `generated_at` (see [`lockfile_refresh`]).
/// What `lint --fix` applies and the editor offers.
pub(crate) fn fixes(db: &RootDb, file: SourceFile, generated_at: &str) -> Vec<QuickFix> {
    let Some(text) = file.contents(db).text() else {
        return Vec::new();
    };
    checked_diagnostics(db, file)
        .into_iter()
        .filter_map(|d| {
            if let Some((span, replacement)) = fix_span(&text, &d) {
                let replacement = replacement.into_owned();
                let title = match &d.edit {
                    Some(e) => e.title.clone(),
                    None => format!(
                        "Replace `{}` with `{replacement}`",
                        text.get(span.range()).unwrap_or_default()
                    ),
                };
                return Some(QuickFix {
                    span,
                    replacement,
                    title,
                    diagnostic: d,
                });
            }
            if d.rule.as_ref() == STALE_LOCKFILE {
                let fresh = lockfile_refresh(db, file, generated_at)?;
                return Some(QuickFix {
                    span: Span::new(0, text.len()),
                    title: format!(
                        "Refresh the lockfile for the chain as it is now (`ryechain lock {} --force`)",
                        fresh.root.tool_id
                    ),
                    replacement: fresh.to_text(),
                    diagnostic: d,
                });
            }
            None
        })
        .collect()
}

/// The rule whose lockfiles [`lockfile_refresh`] rewrites.
const STALE_LOCKFILE: &str = "stale-lockfile";

/// The lockfile `lockfile` would be if written afresh for its tool's chain as it is now, when
/// that is certain: it is the lockfile execution reads for the tool (named for its current
/// version), the chain builds, passes validation and has no lint error (as `lock` requires),
/// and every element passes the execution policy's integrity check, so the hashes recorded are
/// of files the person's signatures vouch for. Otherwise (a tool gone, renamed or re-versioned,
/// an element unsigned or edited since it was signed) the stale lockfile is for the person to
/// delete or re-create.
pub(crate) fn lockfile_refresh(
    db: &RootDb,
    lockfile: SourceFile,
    generated_at: &str,
) -> Option<crate::integrity::lockfile::Lockfile> {
    use crate::integrity::lockfile::{
        build_lockfile, find_lockfile, lockfile as read, lockfile_rel,
    };
    let old = read(db, lockfile).as_ref().ok()?;
    let id = old.root.tool_id.as_str();
    let rel = lockfile_rel(id, &old.root.version).ok()?;
    let root = crate::resolve::resolve_root(db, id).found.as_ref()?.file;
    let version = crate::integrity::lockfile::tool_version(db, root)?;
    if version != old.root.version
        || lockfile.rel(db).as_ref() != rel.as_str()
        || find_lockfile(db, id, &version) != Some(lockfile)
    {
        return None;
    }
    let view = super::chain_view::chain_of(db, id);
    if view.error.is_some() || !view.validation.valid {
        return None;
    }
    let policy = super::verify::Policy::resolve(db, false);
    if super::verify::verify_chain(db, id, &[])?
        .refusal(&policy)
        .is_some()
    {
        return None;
    }
    let chain = chain(db, root);
    let errors = chain
        .elements
        .iter()
        .filter_map(|e| e.file)
        .any(|f| !super::item_findings(db, f, &[]).0.is_empty());
    if errors {
        return None;
    }
    build_lockfile(db, id, generated_at).ok()
}

/// The certain fixes of `file` whose edit or finding touches `range` (byte offsets).
pub(crate) fn quick_fixes(
    db: &RootDb,
    file: SourceFile,
    range: std::ops::Range<usize>,
    generated_at: &str,
) -> Vec<QuickFix> {
    fixes(db, file, generated_at)
        .into_iter()
        .filter(|fix| {
            // Offered where the edit is or where the finding is (an inserted line lies after it).
            let near = |s: Span| s.start as usize <= range.end && range.start <= s.end as usize;
            near(fix.span) || fix.diagnostic.span.is_some_and(near)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executor_value_from_the_line_alone() {
        let t = "x = 1\n__executor_id__ = \"rye/py\nbody";
        let at = t.find("rye/py").unwrap();
        assert_eq!(executor_value_on_line(t, at + 3), Some((at, at + 6)));
        assert_eq!(executor_value_on_line(t, at - 2), None);
        let y = "executor_id: rye/core/x  # c\n";
        let at = y.find("rye").unwrap();
        assert_eq!(executor_value_on_line(y, at), Some((at, at + 10)));
        assert_eq!(executor_value_on_line("tool_type: x", 8), None);
        assert_eq!(executor_value_on_line("executor_id: a b", 16), None);
    }
}
