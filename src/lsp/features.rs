//! The language features computed on a database snapshot (no I/O, no protocol state): the
//! executor id under the cursor, hover (the resolved chain, shadowed candidates, integrity),
//! go-to-definition, completion of executor ids, document symbols and certain quick fixes.

use std::path::{Path, PathBuf};

use crate::analysis::{checked_diagnostics, fix_span};
use crate::db::{Db, RootDb, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::integrity::{Verdict, signature_status};
use crate::model::{ExecutorRef, Span, Value};
use crate::resolve::{ChainEnd, chain, metadata, resolve, tool_id, tool_id_ref, visible_ids};

/// The executor id written at byte `offset` of `file`, with the span of the id's characters
/// (inside the quotes), from the parsed header.
pub fn executor_at(db: &RootDb, file: SourceFile, offset: usize) -> Option<(String, Span)> {
    tool_id(db, file)?;
    let meta = metadata(db, file);
    let ExecutorRef::Id(id, span) = meta.executor() else {
        return None;
    };
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

/// A file the editor can open for `path`: itself, or the materialised copy of an embedded file
/// (`materialised(bundle, rel)` maps `<embedded:bundle>/…` to a path on disk).
pub fn openable(
    path: &Path,
    materialised: &dyn Fn(&str, &str) -> Option<PathBuf>,
) -> Option<PathBuf> {
    let s = path.to_str()?;
    match s.strip_prefix(crate::model::EMBEDDED_PATH_PREFIX) {
        Some(rest) => {
            let (bundle, rel) = rest.split_once(">/")?;
            materialised(bundle, rel)
        }
        None => Some(path.to_path_buf()),
    }
}

fn verdict_words(v: &Verdict) -> String {
    match v {
        Verdict::Verified { key_fp, .. } => format!("signed, verified (key `{key_fp}`)"),
        Verdict::Embedded { .. } => "part of ryechain's embedded bundle (trusted)".to_owned(),
        Verdict::Unsigned { legacy: true, .. } => "unsigned (a legacy placeholder line)".to_owned(),
        Verdict::Unsigned { .. } => "unsigned".to_owned(),
        Verdict::Malformed { reason, .. } => format!("malformed signature line: {reason}"),
        Verdict::HashMismatch { .. } => {
            "content changed since it was signed (hash mismatch)".to_owned()
        }
        Verdict::UntrustedKey {
            key_fp,
            unapproved: Some(_),
            ..
        } => format!(
            "signed by `{key_fp}`, a key the project ships that you have not approved (`ryechain keys trust --project`)"
        ),
        Verdict::UntrustedKey { key_fp, .. } => format!("signed by an untrusted key `{key_fp}`"),
        Verdict::BadSignature { key_fp, .. } => format!("bad signature (key `{key_fp}`)"),
        Verdict::Unhashable { reason } => format!("cannot be verified: {reason}"),
    }
}

/// Markdown for the executor id under the cursor: the chain from this file on, each element's
/// space and file, the candidates it shadows, its integrity verdict, and how the chain ends.
pub fn hover(
    db: &RootDb,
    file: SourceFile,
    offset: usize,
    show: &dyn Fn(&Path) -> String,
) -> Option<(String, Span)> {
    let (id, span) = executor_at(db, file, offset)?;
    let ch = chain(db, file);
    let mut md = format!("**`{id}`**\n\n");
    if ch.elements.len() <= 1 {
        md.push_str("does not resolve from this file's space\n");
    } else {
        md.push_str("Chain from this tool:\n\n");
    }
    for (i, e) in ch.elements.iter().enumerate() {
        let place = match e.file {
            Some(f) => format!("`{}`", show(f.path(db))),
            None => "no file".to_owned(),
        };
        let kind = if e.primitive { " · primitive" } else { "" };
        md.push_str(&format!(
            "{}. `{}` — {}{kind} — {place}\n",
            i + 1,
            e.item_id,
            e.space.label()
        ));
        if let Some(f) = e.file {
            md.push_str(&format!(
                "   - integrity: {}\n",
                verdict_words(signature_status(db, f))
            ));
        }
        for c in &e.shadowed {
            md.push_str(&format!(
                "   - shadows `{}` ({})\n",
                show(c.file.path(db)),
                c.space.label()
            ));
        }
    }
    let end = match &ch.end {
        ChainEnd::Primitive => None,
        ChainEnd::Terminal => Some("ends at an element that is not a primitive".to_owned()),
        ChainEnd::Missing { executor_id, .. } => Some(format!(
            "`{executor_id}` resolves in no space this element may see"
        )),
        ChainEnd::InvalidId {
            executor_id,
            reason,
            ..
        } => Some(format!("`{executor_id}` is not a valid id: {reason}")),
        ChainEnd::WrongType { type_name, .. } => {
            Some(format!("an executor id must be a string, not {type_name}"))
        }
        ChainEnd::Cycle { executor_id, .. } => {
            Some(format!("cycle: `{executor_id}` is already in the chain"))
        }
        ChainEnd::TooDeep { max, .. } => Some(format!("longer than the maximum of {max} elements")),
    };
    if let Some(end) = end {
        md.push_str(&format!("\n**The chain breaks:** {end}\n"));
    }
    Some((md, span))
}

/// The file the executor id under the cursor resolves to (from this file's space).
pub fn definition(db: &RootDb, file: SourceFile, offset: usize) -> Option<SourceFile> {
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
pub fn complete_ids(db: &RootDb, file: SourceFile, prefix: &str) -> (Vec<IdCompletion>, bool) {
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
                    metadata(db, c.file).tool_type_str() == Some("runtime")
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
fn is_flat_runtime_alias(id: &str) -> bool {
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
pub fn header_symbols(db: &RootDb, file: SourceFile) -> Vec<HeaderSymbol> {
    if tool_id_ref(db, file).is_none() {
        return Vec::new();
    }
    let m = metadata(db, file);
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
                span: v.span,
            })
        })
        .collect();
    out.sort_by_key(|s| (s.span.start, s.name));
    out
}

/// A certain fix: replace `span` with `replacement`, for the diagnostic `diagnostic`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickFix {
    pub span: Span,
    pub replacement: String,
    pub diagnostic: Diagnostic,
}

/// The certain fixes of `file` whose edit or finding touches `range` (byte offsets).
pub fn quick_fixes(db: &RootDb, file: SourceFile, range: std::ops::Range<usize>) -> Vec<QuickFix> {
    let Some(text) = file.contents(db).text() else {
        return Vec::new();
    };
    checked_diagnostics(db, file)
        .into_iter()
        .filter_map(|d| {
            let (span, replacement) = fix_span(&text, &d)?;
            let replacement = replacement.into_owned();
            // Offered where the edit is or where the finding is (an inserted line lies after it).
            let near = |s: Span| s.start as usize <= range.end && range.start <= s.end as usize;
            let touches = near(span) || d.span.is_some_and(near);
            touches.then_some(QuickFix {
                span,
                replacement,
                diagnostic: d,
            })
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
