//! L4 integrity checks (§10): the per-file query behind `unsigned-item`, `content-hash-mismatch`,
//! `untrusted-key`, `bad-signature`, `malformed-signature`, `invalid-trusted-key`, `unapproved-project-key` and `stale-lockfile`. It reads only
//! integrity queries of the file itself and the trust store, never a chain query.

use super::{Check, Site, of_kind};
use crate::db::{Db, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::integrity::{ItemKind, Verdict, trust_store, verdict_of};
use crate::model::SpaceKind;
use crate::resolve::tool_id_ref;

/// Integrity findings of one file: its verdict if it is an item, its refusal if it is a
/// trust-store document.
#[salsa::tracked(returns(ref))]
pub fn integrity_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    super::checks::kept(compute_integrity_diagnostics(db, file))
}

/// What [`integrity_diagnostics`] memoizes, computed without keeping it: a one-shot lint reads
/// each file's findings once (`analysis::Checks::OneShot`).
pub fn compute_integrity_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    compute_integrity_diagnostics_given(db, file, None)
}

/// `compute_integrity_diagnostics` with the file's verdict when it is already known (`verdict_of`
/// otherwise): a lint settles a chunk's verdicts first, its signatures verified in one batch.
pub fn compute_integrity_diagnostics_given(
    db: &dyn Db,
    file: SourceFile,
    verdict: Option<Verdict>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let rel = file.rel(db);
    let item = format!(".ai/{rel}");
    let id = tool_id_ref(db, file);
    let site = |span| Site {
        path: file.path(db),
        span,
        item_id: id,
        space: Some(file.space(db)),
    };
    for (_, reason) in trust_store(db).problems.iter().filter(|(f, _)| *f == file) {
        for rule in of_kind(db, |c| matches!(c, Check::InvalidTrustedKey { .. })) {
            out.push(rule.emit(
                site(None),
                &[("item", item.clone()), ("reason", reason.clone())],
                None,
                Vec::new(),
            ));
        }
    }
    for (key, _) in trust_store(db)
        .unapproved
        .iter()
        .filter(|(_, f)| *f == file)
    {
        for rule in of_kind(db, |c| matches!(c, Check::UnapprovedProjectKey { .. })) {
            let project = crate::integrity::project_dir_of(db, file)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| ".".to_owned());
            out.push(
                rule.emit(
                    site(None),
                    &[
                        ("item", item.clone()),
                        ("key_fp", key.fingerprint.clone()),
                        (
                            "owner",
                            key.owner
                                .clone()
                                .filter(|o| !o.is_empty())
                                .unwrap_or_else(|| "not given".to_owned()),
                        ),
                        ("project", project),
                    ],
                    None,
                    Vec::new(),
                ),
            );
        }
    }
    if let Some((span, problem)) = crate::integrity::lockfile::stale_lockfile(db, file) {
        for rule in of_kind(db, |c| matches!(c, Check::StaleLockfile { .. })) {
            out.push(rule.emit(
                site(span),
                &[("item", item.clone()), ("problem", problem.clone())],
                None,
                Vec::new(),
            ));
        }
    }
    let Some(kind) = ItemKind::of_rel(rel) else {
        return out;
    };
    // Unreadable files are reported by `unreadable-file`; nothing to verify.
    if file.contents(db).text().is_none() {
        return out;
    }
    let emit = |pred: &dyn Fn(&Check) -> bool, span, vars: &[(&str, String)], variant| {
        of_kind(db, pred)
            .map(|rule| rule.emit(site(span), vars, variant, Vec::new()))
            .collect::<Vec<_>>()
    };
    let verdict = verdict.unwrap_or_else(|| verdict_of(db, file));
    // An installed bundle is not the person's to sign: its items get no "re-sign" advice.
    let system = (file.space(db).kind() == SpaceKind::System).then_some("system");
    let d = match &verdict {
        Verdict::Verified { .. } | Verdict::Embedded { .. } => Vec::new(),
        Verdict::Unsigned { legacy, span } => emit(
            &|c| matches!(c, Check::UnsignedItem { .. }),
            *span,
            &[("item", item), ("kind", kind.name().to_owned())],
            system.or(legacy.then_some("legacy")),
        ),
        Verdict::Malformed { reason, span } => emit(
            &|c| matches!(c, Check::MalformedSignature { .. }),
            Some(*span),
            &[("item", item), ("reason", reason.clone())],
            system,
        ),
        Verdict::HashMismatch {
            expected,
            got,
            span,
        } => emit(
            &|c| matches!(c, Check::HashMismatch { .. }),
            Some(*span),
            &[
                ("item", item),
                ("expected", expected.chars().take(16).collect()),
                ("got", got.chars().take(16).collect()),
            ],
            system,
        ),
        Verdict::UntrustedKey {
            key_fp,
            span,
            unapproved,
        } => emit(
            &|c| matches!(c, Check::UntrustedKey { .. }),
            Some(*span),
            &[
                ("item", item),
                ("key_fp", key_fp.clone()),
                (
                    "shipped_in",
                    unapproved
                        .as_ref()
                        .map(|u| u.document.display().to_string())
                        .unwrap_or_default(),
                ),
            ],
            unapproved.is_some().then_some("unapproved"),
        ),
        Verdict::BadSignature { key_fp, span } => emit(
            &|c| matches!(c, Check::BadSignature { .. }),
            Some(*span),
            &[("item", item), ("key_fp", key_fp.clone())],
            system,
        ),
        // A directive without XML cannot be hashed: the reference's plain error, reported as a
        // metadata problem of the file.
        Verdict::Unhashable { reason } => emit(
            &|c| matches!(c, Check::ParseProblem { .. }),
            None,
            &[("item_id", rel.to_string()), ("problem", reason.clone())],
            None,
        ),
    };
    out.extend(d);
    out
}
