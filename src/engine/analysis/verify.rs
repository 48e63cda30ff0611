//! L5 the integrity entry point the execution path calls before it spawns anything (§10.5): verify
//! every element of a tool's chain plus extra files (verify_deps), and the policy that decides
//! whether the chain may run. Also the whole-workspace listing behind `ryechain verify`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::db::{Db, RootDb, SourceFile};
use crate::integrity::{
    ItemKind, Verdict, extension_of, formats_of, signature_status, trust_store, verify_text,
};
use crate::resolve::{chain, resolve_root, tool_id};
use crate::rules::checks::unreadable_message;

/// What the execution path will accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Run unsigned items (and malformed lines, which the reference reads as unsigned).
    pub allow_unsigned: bool,
}

impl Policy {
    /// `--allow-unsigned` on the command line, else `integrity.require_signatures` of
    /// `.ai/config/ryechain.yaml` (default: signatures required).
    pub fn resolve(db: &dyn Db, allow_unsigned_flag: bool) -> Policy {
        let required = crate::config::lint_config(db)
            .require_signatures
            .unwrap_or(true);
        Policy {
            allow_unsigned: allow_unsigned_flag || !required,
        }
    }

    /// What the person should know about the policy: each project config that tried to lower
    /// it (ignored), in the words of the `project-disables-signatures` rule.
    pub fn notices(db: &dyn Db) -> Vec<String> {
        let words = crate::rules::rule_set(db)
            .get("project-disables-signatures")
            .map(|r| (r.message.clone(), r.help.clone()));
        crate::config::lint_config(db)
            .lowering_ignored
            .iter()
            .map(|(file, _)| {
                let (message, help) = words.clone().unwrap_or_default();
                let help = help.map(|h| format!(" ({h})")).unwrap_or_default();
                format!("{}: {message}{help}", file.path(db).display())
            })
            .collect()
    }

    /// Whether a verdict passes under this policy.
    pub fn accepts(&self, v: &Verdict) -> bool {
        v.passed() || (self.allow_unsigned && v.is_unsigned())
    }
}

/// A file outside the database to verify with the workspace's trust store (a verify_deps file).
#[derive(Clone, Debug)]
pub struct ExtraFile {
    pub path: PathBuf,
    pub kind: ItemKind,
    pub text: Arc<str>,
}

/// One verified file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVerdict {
    pub path: PathBuf,
    /// The chain element's id (`None` for extra files).
    pub item_id: Option<String>,
    pub verdict: Verdict,
    /// Why the file could not be read, in lint's words (`symlink-escape`, `unreadable-file`):
    /// such a file always fails.
    pub unreadable: Option<String>,
    /// The error text when the verdict is not a pass: `error_at` the file's path.
    pub error: Option<String>,
}

impl FileVerdict {
    /// The error text with the file shown as `path`: `<path>: <lint's message>` for a file that
    /// could not be read, else the reference's text (§10.5).
    pub fn error_at(&self, path: &str) -> Option<String> {
        match &self.unreadable {
            Some(why) => Some(format!("{path}: {why}")),
            None => self.verdict.error_text(path),
        }
    }
}

/// Every verdict of a chain and its extra files, in chain order then extra order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainVerification {
    pub files: Vec<FileVerdict>,
}

impl ChainVerification {
    /// The first failure under `policy`, as the reference's error text, or `None` if the chain
    /// may run (any failing element or extra file refuses the whole chain).
    pub fn refusal(&self, policy: &Policy) -> Option<&str> {
        self.files
            .iter()
            .find(|f| !policy.accepts(&f.verdict))
            .and_then(|f| f.error.as_deref())
    }
}

pub fn file_verdict(db: &dyn Db, file: SourceFile, item_id: Option<String>) -> FileVerdict {
    let mut f = FileVerdict {
        path: file.path(db).as_ref().clone(),
        item_id,
        verdict: signature_status(db, file).clone(),
        unreadable: unreadable_message(db, file.contents(db)),
        error: None,
    };
    f.error = f.error_at(&f.path.display().to_string());
    f
}

/// Verify the chain of `item_id` (resolved from the project space, as `rye_execute` does) and the
/// extra files. Elements without a file (primitives resolved by key) have nothing to verify.
/// `None` when the tool does not resolve.
pub fn verify_chain(db: &RootDb, item_id: &str, extra: &[ExtraFile]) -> Option<ChainVerification> {
    let root = resolve_root(db, item_id).found.as_ref()?.file;
    let mut files: Vec<FileVerdict> = chain(db, root)
        .elements
        .iter()
        .filter_map(|e| e.file.map(|f| file_verdict(db, f, Some(e.item_id.clone()))))
        .collect();
    let store = trust_store(db);
    let trusted = |fp: &str| store.lookup(fp).map(|(k, _)| k.pem.clone());

    for x in extra {
        let name = x.path.to_string_lossy();
        let fmt = formats_of(db, x.kind).get(x.kind, extension_of(&name));
        let verdict = match verify_text(x.kind, &fmt, &x.text, &trusted) {
            Verdict::UntrustedKey { key_fp, span, .. } => Verdict::UntrustedKey {
                unapproved: store.approval_hint(db, &key_fp),
                key_fp,
                span,
            },
            v => v,
        };
        let error = verdict.error_text(&name);
        files.push(FileVerdict {
            path: x.path.clone(),
            item_id: None,
            verdict,
            unreadable: None,
            error,
        });
    }
    Some(ChainVerification { files })
}

/// Verdicts of every item file of every space (tools, directives, knowledge), by space then path.
/// An item file that could not be read (not UTF-8, refused by the OS, a FIFO, a symlink out of
/// every space) is listed too, as a failure: `verify` never passes over it in silence.
pub fn verify_all(db: &RootDb) -> Vec<FileVerdict> {
    let mut out = Vec::new();
    for root in db.workspace().roots(db) {
        let mut files: Vec<SourceFile> = root
            .files(db)
            .iter()
            .copied()
            .filter(|&f| crate::resolve::place_kind(db, f).is_item())
            .collect();
        files.sort_by(|a, b| a.rel(db).cmp(b.rel(db)));
        out.extend(files.into_iter().map(|f| {
            let id = tool_id(db, f).or_else(|| {
                let rel = f.rel(db);
                Some(rel.strip_suffix(".md").unwrap_or(rel).to_owned())
            });
            file_verdict(db, f, id)
        }));
    }
    out
}
