//! L6 `ryechain sign` (§10.3, §12.9): resolve items (or a `*`/`?` glob) in the project or user
//! space, validate each, hash it with the signature format in force, sign with the signing key
//! (generated and trusted on first use, §10.4 recommendation), insert the line and write the file
//! atomically with its permissions kept; then check that the written file verifies.
//!
//! Validation follows the extractor's `validation_schema` (read from the first extractor of the
//! kind, project > user > system). Departure from the reference: only what the executor depends
//! on blocks signing — a parse error, a value of the wrong type, a missing or non-semver
//! `version` (tools, directives), a directive without `name`, a directive without its XML block,
//! a knowledge entry without a metadata block. Other required fields and the `match_filename` /
//! `match_path` checks are reported as `warnings`, so trees written for the reference (whose
//! runtimes' `category` does not match their path) sign as they are.
#![allow(
    clippy::disallowed_methods,
    reason = "the sign edge reads the clock and rewrites item files"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use serde_json::{Value as Json, json};

use super::keys::{
    OWNER_LOCAL, SigningKeyPair, WritableSpace, generate_key, load_signing_key, user_base,
    write_trust_doc,
};
use super::{Context, print_notices};
use crate::analysis::Analysis;
use crate::db::{Settings, SourceFile};
use crate::edges::files::FileSystems;
use crate::edges::files::replace::{Durability, Replace, replace_all, settled_since};
use crate::integrity::hash::{content_hash, universal_newlines};
use crate::integrity::sigline::{SigLine, parse_signature};
use crate::integrity::timefmt::signature_timestamp;
use crate::integrity::{ItemKind, Signature, SignatureFormat, sign_text, verify_text};
use crate::model::{SpaceKind, item_id_problem};
use crate::parse::item_doc::{Fields, directive_fields, knowledge_fields};
use crate::resolve::split_tool_rel;
use crate::system::FileStamp;

/// The item type flag of `sign`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ItemTypeArg {
    Tool,
    Directive,
    Knowledge,
}

impl ItemTypeArg {
    fn kind(self) -> ItemKind {
        match self {
            ItemTypeArg::Tool => ItemKind::Tool,
            ItemTypeArg::Directive => ItemKind::Directive,
            ItemTypeArg::Knowledge => ItemKind::Knowledge,
        }
    }
}

#[derive(Args, Debug)]
pub struct SignArgs {
    /// The item id (`my/tool`, or `tool:my/tool`), or a glob with `*` / `?` to sign a batch.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::complete::tool_ids))]
    pub item: String,
    /// The project directory (containing `.ai/`).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The item type (default: tool, or the `type:` prefix of the id).
    #[arg(long = "type", value_enum)]
    pub item_type: Option<ItemTypeArg>,
    /// The space whose file is signed (system bundles are immutable).
    #[arg(long, value_enum, default_value = "project")]
    pub space: WritableSpace,
    /// `json`: the result as `rye_sign` answers it.
    #[arg(long, value_enum)]
    pub format: Option<super::OutputFormat>,
    /// The same as `--format json`.
    #[arg(long, hide = true)]
    pub json: bool,
    /// Sign a tool even when lint finds errors in it or its chain (a misspelt executor id, a
    /// cycle...); they are listed as warnings.
    #[arg(long)]
    pub force: bool,
}

/// Load what the chains of a batch's tools read outside the space being signed (a runtime in the
/// user space, say), so that the chain findings `sign` refuses on are a full load's: rounds of
/// `file_chain_needs` → probe, as the single-item load does. The ids of the signed space are
/// loaded already and never probed.
fn load_chain_needs(
    ctx: &Context<'_>,
    path: &Path,
    host: &mut crate::analysis::Host,
    wanted: SpaceKind,
) -> anyhow::Result<()> {
    use crate::analysis::lazy::Loaded;
    let (specs, _) = ctx.spaces(path)?;
    let (mut loader, _) = crate::load::ItemLoader::new(ctx.sys, &specs);
    let items = host.analysis().items(wanted, ItemKind::Tool);
    if items.is_empty() {
        return Ok(());
    }
    let tools: Vec<SourceFile> = items.iter().map(|&(_, f)| f).collect();
    let mut loaded: std::collections::BTreeSet<String> =
        items.into_iter().map(|(id, _)| id).collect();
    // Ends: each round probes ids not probed before, among the finitely many the files name.
    loop {
        let a = host.analysis();
        let needs = a.chains_needs(&tools, &Loaded::Some(loaded.clone()));
        if needs.is_empty() {
            return Ok(());
        }
        let change = loader.probe_items(a, &needs);
        loaded.extend(needs);
        host.apply(change);
    }
}

/// The reference's not-found text for a kind.
fn not_found(kind: ItemKind, id: &str) -> String {
    match kind {
        ItemKind::Tool => crate::message::tool_not_found(id),
        ItemKind::Directive => crate::message::directive_not_found(id),
        ItemKind::Knowledge => crate::message::knowledge_not_found(id),
    }
}

/// A batch pattern (`globset`, segments kept: `*` and `?` stay within a path segment, `**`
/// crosses them and `**/` also matches no directory). A pattern without `/` matches the item's
/// file name at any depth (the reference globbed `**/<pattern><ext>`), one with `/` the whole id.
pub struct IdPattern {
    matcher: globset::GlobMatcher,
    whole_id: bool,
}

impl IdPattern {
    pub fn new(pattern: &str) -> Result<IdPattern, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("`{pattern}` is not a valid pattern: {}", e.kind()))?;
        Ok(IdPattern {
            matcher: glob.compile_matcher(),
            whole_id: pattern.contains('/'),
        })
    }

    pub fn matches(&self, id: &str) -> bool {
        let subject = if self.whole_id {
            id
        } else {
            id.rsplit('/').next().unwrap_or(id)
        };
        self.matcher.is_match(subject)
    }
}

fn is_glob(s: &str) -> bool {
    s.contains('*') || s.contains('?')
}

/// One item's outcome.
enum Outcome {
    Signed {
        id: String,
        path: PathBuf,
        signature: Signature,
        warnings: Vec<String>,
    },
    Failed {
        id: String,
        path: Option<PathBuf>,
        error: String,
        issues: Vec<String>,
    },
}

impl Outcome {
    fn failed(id: &str, path: Option<PathBuf>, error: impl Into<String>) -> Outcome {
        Outcome::Failed {
            id: id.to_owned(),
            path,
            error: error.into(),
            issues: Vec::new(),
        }
    }
}

/// What a run needs once: the signing key, made and trusted lazily, and notices to print.
struct Signer<'c, 'a> {
    ctx: &'c Context<'a>,
    caller: Caller,
    key: Option<SigningKeyPair>,
    notices: Vec<String>,
}

impl Signer<'_, '_> {
    /// The signing key, generated and trusted on first use (§10.4 recommendation).
    fn key(&mut self, a: Analysis<'_>) -> anyhow::Result<&SigningKeyPair> {
        if self.key.is_none() {
            let pair = match load_signing_key(self.ctx)? {
                Some(pair) => pair,
                // A folder named on purpose (CI) without a key is a mistake, never a fresh key
                // silently made and trusted.
                None if self
                    .ctx
                    .sys
                    .env_var(super::keys::SIGNING_DIR_ENV)
                    .is_some_and(|s| !s.is_empty()) =>
                {
                    bail!(
                        "no signing key in {} (named by {}); make one there with `ryechain keys generate`, or point {} at the folder that holds private_key.pem",
                        super::keys::signing_dir(self.ctx)?.display(),
                        super::keys::SIGNING_DIR_ENV,
                        super::keys::SIGNING_DIR_ENV
                    );
                }
                None if self.caller == Caller::Agent => bail!(
                    "no signing key in {}: the person who signs makes one with `ryechain keys generate` (an agent's call never makes or trusts a key)",
                    super::keys::signing_dir(self.ctx)?.display()
                ),
                None if self.caller == Caller::Editor => bail!(
                    "no signing key in {}: make one with `ryechain keys generate`, then re-sign (the editor never makes or trusts a key)",
                    super::keys::signing_dir(self.ctx)?.display()
                ),
                None => {
                    let pair = generate_key(self.ctx, false)?;
                    self.notices.push(format!(
                        "no signing key was found; generated Ed25519 key {} in {} (`ryechain keys generate` makes one ahead of time)",
                        pair.fingerprint,
                        pair.dir.display()
                    ));
                    pair
                }
            };
            if a.trust_store().lookup(&pair.fingerprint).is_none() {
                if self.caller == Caller::Agent {
                    bail!(
                        "the signing key {} in {} is not trusted: the person who signs trusts it with `ryechain keys trust {}` (an agent's call never changes what is trusted)",
                        pair.fingerprint,
                        pair.dir.display(),
                        pair.dir.join(super::keys::PUBLIC_KEY_FILE).display()
                    );
                }
                if self.caller == Caller::Editor {
                    bail!(
                        "the signing key {} in {} is not trusted: trust it with `ryechain keys trust {}`, then re-sign (the editor never changes what is trusted)",
                        pair.fingerprint,
                        pair.dir.display(),
                        pair.dir.join(super::keys::PUBLIC_KEY_FILE).display()
                    );
                }
                let doc = write_trust_doc(&user_base(self.ctx)?, &pair.public_pem, OWNER_LOCAL)?;
                self.notices.push(format!(
                    "trusted the signing key {} in the user space: {}",
                    pair.fingerprint,
                    doc.display()
                ));
            }
            self.key = Some(pair);
        }
        self.key
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the signing key vanished"))
    }
}

/// Why an item cannot be signed (`error`, `issues`) — the reference's error texts.
struct Refusal {
    error: String,
    issues: Vec<String>,
}

impl From<crate::parse::item_doc::DocError> for Refusal {
    fn from(e: crate::parse::item_doc::DocError) -> Refusal {
        Refusal::new(e.error, vec![e.detail])
    }
}

impl Refusal {
    fn new(error: &str, issues: Vec<String>) -> Refusal {
        Refusal {
            error: error.to_owned(),
            issues,
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Fields whose absence blocks signing, per kind (see the module docs).
fn blocking_required(kind: ItemKind) -> &'static [&'static str] {
    match kind {
        ItemKind::Tool => &["version"],
        ItemKind::Directive => &["name", "version"],
        ItemKind::Knowledge => &[],
    }
}

fn type_ok(ty: &str, v: &Json) -> Result<(), String> {
    let ok = match ty {
        "string" => v.is_string(),
        "semver" => {
            return match v.as_str() {
                Some(s) if semver::Version::parse(s).is_ok() => Ok(()),
                Some(s) => Err(format!("`{s}` is not a semantic version (like 1.0.0)")),
                None => Err(format!(
                    "must be a version string like \"1.0.0\", found {v}"
                )),
            };
        }
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("must be of type {ty}, found {v}"))
    }
}

/// Check fields against the schema (or the built-in minimum). Returns (errors, warnings).
fn check_fields(
    schema: &serde_yaml::Mapping,
    kind: ItemKind,
    fields: &Fields,
    file_stem: &str,
    category_path: &str,
) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let get = |name: &str| -> Option<&Json> {
        fields
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_ref())
    };
    let blocking = blocking_required(kind);
    let mut seen: Vec<String> = Vec::new();
    for (name, rule) in schema {
        let Some(name) = name.as_str() else { continue };
        seen.push(name.to_owned());
        let required = rule
            .get("required")
            .and_then(|r| r.as_bool())
            .unwrap_or(false);
        let nullable = rule
            .get("nullable")
            .and_then(|r| r.as_bool())
            .unwrap_or(false);
        let ty = rule.get("type").and_then(|t| t.as_str()).unwrap_or("");
        match get(name) {
            None | Some(Json::Null) if !(nullable && get(name).is_some()) => {
                if required {
                    let msg = format!("`{name}` is required");
                    if blocking.contains(&name) {
                        errors.push(msg);
                    } else {
                        warnings.push(msg);
                    }
                }
            }
            None | Some(Json::Null) => {}
            Some(v) => {
                if let Err(e) = type_ok(ty, v) {
                    errors.push(format!("`{name}` {e}"));
                    continue;
                }
                let as_str = v.as_str().unwrap_or_default();
                if rule.get("match_filename").and_then(|b| b.as_bool()) == Some(true)
                    && as_str != file_stem
                {
                    warnings.push(format!(
                        "`{name}` is `{as_str}` but the file is named `{file_stem}`"
                    ));
                }
                if rule.get("match_path").and_then(|b| b.as_bool()) == Some(true)
                    && as_str != category_path
                {
                    warnings.push(format!(
                        "`{name}` is `{as_str}` but the file lives in `{category_path}`"
                    ));
                }
            }
        }
    }
    // Without a schema (or one that omits them), the blocking fields are still checked.
    for name in blocking {
        if seen.iter().any(|s| s == name) {
            continue;
        }
        match get(name) {
            None | Some(Json::Null) => errors.push(format!("`{name}` is required")),
            Some(v) if *name == "version" => {
                if let Err(e) = type_ok("semver", v) {
                    errors.push(format!("`{name}` {e}"));
                }
            }
            Some(_) => {}
        }
    }
    (errors, warnings)
}

/// A tool's fields (§2.7 extraction rules): name from the file name, the rest from its header.
fn tool_fields(
    a: Analysis<'_>,
    file: SourceFile,
    text: &str,
    stem: &str,
) -> Result<Fields, Refusal> {
    let (m, problems) = a.header(file);
    if !problems.is_empty() {
        let details = problems
            .iter()
            .map(|p| {
                format!(
                    "line {}: {}",
                    line_of(text, p.span.start as usize),
                    p.message
                )
            })
            .collect();
        return Err(Refusal::new("Failed to parse tool file", details));
    }
    let j = |v: Option<&crate::model::Spanned<crate::model::Value>>| v.map(|s| s.value.to_json());
    Ok(vec![
        ("name", Some(Json::String(stem.to_owned()))),
        ("version", j(m.version())),
        ("category", j(m.category())),
        ("tool_type", j(m.tool_type())),
        ("description", j(m.tool_description())),
        ("executor_id", j(m.executor_id())),
    ])
}

/// Validate one item: blocking problems, or the warnings to report.
fn validate(
    a: Analysis<'_>,
    schema: &serde_yaml::Mapping,
    kind: ItemKind,
    id: &str,
    file: SourceFile,
    text: &str,
) -> Result<Vec<String>, Refusal> {
    if kind == ItemKind::Tool && text.trim().is_empty() {
        return Err(Refusal::new("Tool file is empty", Vec::new()));
    }
    let (stem, dir) = match id.rsplit_once('/') {
        Some((dir, stem)) => (stem, dir),
        None => (id, ""),
    };
    let fields = match kind {
        ItemKind::Tool => {
            if !a.has_metadata_parser(file) {
                let ext = split_tool_rel(a.rel(file)).map_or("", |(_, e)| e);
                // No parser ⇒ no metadata (§2.6); such files (scripts, data) are signed as they are.
                return Ok(vec![format!(
                    "no metadata parser is configured for `{ext}`: the file is signed without checking its metadata"
                )]);
            }
            tool_fields(a, file, text, stem)?
        }
        // Read as the reference reads them (universal newlines, §10.2): a CRLF or CR-only
        // entry has the fields of its LF form.
        ItemKind::Directive => {
            directive_fields(&universal_newlines(text)).map_err(Refusal::from)?
        }
        ItemKind::Knowledge => {
            knowledge_fields(&universal_newlines(text)).map_err(Refusal::from)?
        }
    };
    let (errors, warnings) = check_fields(schema, kind, &fields, stem, dir);
    if errors.is_empty() {
        Ok(warnings)
    } else {
        Err(Refusal::new("Validation failed", errors))
    }
}

/// An item that passed validation: the text that was validated and hashed, and how it is signed.
struct Ready {
    text: crate::db::Text,
    fmt: SignatureFormat,
    warnings: Vec<String>,
}

/// What validation made of one item.
enum Checked {
    Ready(Ready),
    Refused(Outcome),
}

/// Validate one resolved item: what to sign, or the outcome that refuses it.
fn check_one(
    a: Analysis<'_>,
    schema: &serde_yaml::Mapping,
    kind: ItemKind,
    id: &str,
    file: SourceFile,
    force: bool,
) -> Checked {
    let path = || Some(a.path(file).to_path_buf());
    let Some(text) = a.text_handle(file) else {
        // What lint says of it (`symlink-escape`, `unreadable-file`).
        let why = a.unreadable_reason(file).unwrap_or_default();
        return Checked::Refused(Outcome::failed(id, path(), why));
    };
    match validate(a, schema, kind, id, file, &text.as_str()) {
        Ok(mut warnings) => {
            // Then the tool's chain: one lint holds broken is refused (a signature vouches for
            // a tool that can run), unless forced.
            let chain_errors = match kind {
                ItemKind::Tool => a.item_findings(file, &[]).0,
                _ => Vec::new(),
            };
            if !chain_errors.is_empty() && !force {
                return Checked::Refused(Outcome::Failed {
                    id: id.to_owned(),
                    path: path(),
                    error: "Chain validation failed (`--force` signs it anyway)".to_owned(),
                    issues: chain_errors,
                });
            }
            warnings.extend(
                chain_errors
                    .into_iter()
                    .map(|e| format!("signed with --force despite: {e}")),
            );
            Checked::Ready(Ready {
                text,
                fmt: a.signature_format(kind, file),
                warnings,
            })
        }
        Err(r) => Checked::Refused(Outcome::Failed {
            id: id.to_owned(),
            path: path(),
            error: r.error,
            issues: r.issues,
        }),
    }
}

/// Validate items in parallel (`Analysis::par_map`), results in the order of `items`.
fn check_all(
    a: Analysis<'_>,
    schema: &serde_yaml::Mapping,
    kind: ItemKind,
    items: &[(&str, SourceFile)],
    force: bool,
) -> Vec<Checked> {
    a.par_map(items, &|a, &(id, file)| {
        check_one(a, schema, kind, id, file, force)
    })
}

/// Sign a validated item's text in memory. `Err` is an internal error: the new text does not
/// check out (nothing may be written then).
///
/// Every item's new text is re-read as the verifier reads it — its signature line found where
/// the verifier looks, with exactly the fields just made, over the content hash recomputed from
/// the new text — which catches a line put in the wrong place or a hash over the wrong span.
/// The Ed25519 verification itself (40–70 µs an item: a 50k-item batch spent 3–4 s of CPU time
/// on it, as much as on everything else in user space) runs for the first item of the batch
/// (`full`): the key, the fingerprint and the signing code
/// are the same for every item, so one verification shows the key pair and the signatures fit.
fn sign_ready(
    kind: ItemKind,
    id: &str,
    path: &Path,
    ready: &Ready,
    key: &SigningKeyPair,
    trusted_pem: &str,
    full: bool,
) -> anyhow::Result<Result<(String, Signature), String>> {
    let timestamp = signature_timestamp(super::now().0);
    let (signed, signature) = match sign_text(
        kind,
        &ready.fmt,
        &ready.text.as_str(),
        &key.key,
        &key.fingerprint,
        timestamp,
    ) {
        Ok(done) => done,
        Err(e) => return Ok(Err(e.to_owned())),
    };
    let why = if full {
        // The trust store can only be asked for the key the line names, which is ours.
        let trusted = |fp: &str| (fp == key.fingerprint).then(|| trusted_pem.to_owned());
        let verdict = verify_text(kind, &ready.fmt, &signed, &trusted);
        verdict.error_text(&path.display().to_string())
    } else {
        let line = parse_signature(&signed, &ready.fmt);
        let hash = content_hash(kind, &signed, &ready.fmt.prefix);
        match (&line, hash) {
            (SigLine::Signed { signature: s, .. }, Ok(h))
                if *s == signature && h == signature.content_hash =>
            {
                None
            }
            _ => Some(format!("the line read back is {line:?}")),
        }
    };
    if let Some(why) = why {
        bail!(
            "internal error: the signed text of {id} does not verify ({why}); nothing was written"
        );
    }
    Ok(Ok((signed, signature)))
}

/// How many files a batch must write before it makes them durable by syncing their file
/// systems (`syncfs`) instead of each file.
const SYNC_FILE_SYSTEMS_FROM: usize = 64;

/// Each item's signed text and signature, or why it was not signed.
type Signed = Vec<Result<(String, Signature), String>>;

/// The replacements of the first `signed.len()` items of `ready` (`old`: their texts as
/// validated; `signed`: their new texts), in order.
fn replace_jobs<'t>(
    ready: &[(usize, Ready)],
    old: &'t [std::borrow::Cow<'_, str>],
    items: &'t [Target<'_>],
    signed: &'t Signed,
) -> Vec<Result<Replace<'t>, String>> {
    ready
        .iter()
        .zip(old)
        .zip(signed)
        .map(|(((i, _), old), s)| {
            let (new, _) = s.as_ref().map_err(Clone::clone)?;
            Ok(Replace {
                path: items[*i].real,
                old: old.as_bytes(),
                new: new.as_bytes(),
                stamp: items[*i].stamp,
            })
        })
        .collect()
}

/// Who asked for a `sign` run, which decides what it may do beyond signing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// A person at the command line: the process ends after the run (a batch's loaded tree is
    /// not freed piece by piece), and a first `sign` makes and trusts the signing key.
    Person,
    /// An agent over MCP: a long-lived process frees what it loaded, and a missing or untrusted
    /// key is an error — a key the person's trust store accepts is made and trusted by the
    /// person, never by an agent's call.
    Agent,
    /// The person at their editor ("Re-sign this item" in the language server): signs with
    /// their key, but a long-lived process frees what it loaded, and a missing or untrusted key
    /// is an error that says which command makes or trusts one (never done behind their back).
    Editor,
}

/// One item of a batch, by the file it is written through.
struct Target<'a> {
    id: &'a str,
    file: SourceFile,
    /// The path written through (`real_file`).
    real: &'a Path,
    /// Its device, when known (the file systems synced at once).
    dev: Option<u64>,
    /// Its stamp, when it shows the file unchanged since before it was loaded
    /// (`replace::settled_since`).
    stamp: Option<FileStamp>,
}

/// Sign a batch of resolved items (one per real file); outcomes in the order of `items`.
///
/// Phases, so that the user sees validation problems before key problems and nothing is written
/// when anything internal goes wrong: (1) validate every item in parallel; (2) get the signing key
/// — loaded, or generated and trusted — only if something is to be signed; (3) sign and self-check
/// every item in memory, in parallel (`sign_ready`); (4) replace the files (`replace_all`: each
/// new text written to a temporary file beside its target with the target's owner, mode and
/// extended attributes, and renamed over it; each target checked to hold what was validated
/// before and after its rename; for a batch of `SYNC_FILE_SYSTEMS_FROM` files or more, one
/// `syncfs` of each file system written to before the renames and one after, else a sync of each
/// temporary file and of each folder). Why a crash leaves every file either old or new, and a
/// write from another process is never lost silently: see `replace`. One `syncfs` replaced 50k
/// file syncs (16 in flight: 2.6 s of a 100k tree's 5.3 s): it also writes whatever else is dirty
/// on that file system, which a batch of this size waits for in any case.
fn sign_batch(
    signer: &mut Signer<'_, '_>,
    a: Analysis<'_>,
    schema: &serde_yaml::Mapping,
    kind: ItemKind,
    items: &[Target<'_>],
    force: bool,
) -> anyhow::Result<Vec<Outcome>> {
    let keyed: Vec<(&str, SourceFile)> = items.iter().map(|t| (t.id, t.file)).collect();
    let checked = check_all(a, schema, kind, &keyed, force);
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(items.len());
    let mut ready: Vec<(usize, Ready)> = Vec::new();
    for (i, c) in checked.into_iter().enumerate() {
        match c {
            Checked::Ready(r) => {
                outcomes.push(None);
                ready.push((i, r));
            }
            Checked::Refused(o) => outcomes.push(Some(o)),
        }
    }
    if ready.is_empty() {
        return Ok(outcomes.into_iter().flatten().collect());
    }
    let key = signer.key(a)?;
    let store = a.trust_store();
    let trusted_pem = store
        .lookup(&key.fingerprint)
        .map_or_else(|| key.public_pem.clone(), |(k, _)| k.pem.clone());
    let path_of = |i: usize| a.path(items[i].file).to_path_buf();
    let paths: Vec<PathBuf> = ready.iter().map(|&(i, _)| path_of(i)).collect();
    // (3) Sign in memory; an internal error stops the run before anything is written.
    let signed: Signed = ready
        .par_iter()
        .zip(&paths)
        .enumerate()
        .map(|(k, ((i, r), path))| {
            sign_ready(kind, items[*i].id, path, r, key, &trusted_pem, k == 0)
        })
        .collect::<anyhow::Result<Signed>>()?;
    // Synced by file system (opened before anything is written, so that their syncs report
    // every write error since). A few files are synced one by one: a file system's sync also
    // waits for whatever else is dirty there.
    let by_file_system =
        ready.len() >= SYNC_FILE_SYSTEMS_FROM && ready.iter().all(|(i, _)| items[*i].dev.is_some());
    let file_systems = by_file_system
        .then(|| {
            let files: Option<Vec<(u64, &Path)>> = ready
                .iter()
                .map(|(i, _)| Some((items[*i].dev?, items[*i].real)))
                .collect();
            FileSystems::open(files?)
        })
        .flatten();
    let old: Vec<std::borrow::Cow<'_, str>> = ready.iter().map(|(_, r)| r.text.as_str()).collect();
    let durability = match &file_systems {
        Some(fs) => Durability::FileSystems(fs),
        None => Durability::EachFile,
    };
    let (committed, synced) = replace_all(replace_jobs(&ready, &old, items, &signed), &durability);
    for e in synced.into_iter().filter_map(Result::err) {
        signer.notices.push(format!(
            "{e:#}; the files signed there are in place but may not survive a crash"
        ));
    }
    for ((((i, r), path), s), c) in ready.into_iter().zip(paths).zip(signed).zip(committed) {
        outcomes[i] = Some(match s.and_then(|(_, signature)| c.map(|()| signature)) {
            Ok(signature) => Outcome::Signed {
                id: items[i].id.to_owned(),
                path,
                signature,
                warnings: r.warnings,
            },
            Err(e) => Outcome::failed(items[i].id, Some(path), e),
        });
    }
    Ok(outcomes.into_iter().flatten().collect())
}

/// What makes two paths one file: device and inode where the platform has them, else the
/// canonical path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FileKey {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The path to write an item through (a symlink's target, so a symlink stays a symlink), its
/// identity, and (on unix) its stamp. Only symlinks are resolved: `canonicalize` reads every
/// component of every path, which was a visible share of a 100k-item batch; a path that is not a
/// symlink is looked up once (its `lstat` is its `stat`).
fn real_file(path: PathBuf) -> (PathBuf, FileKey, Option<FileStamp>) {
    let meta = std::fs::symlink_metadata(&path);
    let is_link = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
    let (real, meta) = if is_link {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let meta = std::fs::metadata(&real);
        (real, meta)
    } else {
        (path, meta)
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = meta {
            let stamp = crate::system::os::stamp_from(&m);
            return (real, FileKey::Inode(m.dev(), m.ino()), Some(stamp));
        }
    }
    #[cfg(not(unix))]
    drop(meta);
    let key = FileKey::Path(std::fs::canonicalize(&real).unwrap_or_else(|_| real.clone()));
    (real, key, None)
}

/// Split a canonical ref (`tool:my/item`) into its kind and id.
fn split_ref(item: &str) -> (Option<ItemKind>, &str) {
    match item.split_once(':') {
        Some((k, rest)) => match ItemKind::from_name(k) {
            Some(kind) => (Some(kind), rest),
            None => (None, item),
        },
        None => (None, item),
    }
}

/// Run `ryechain sign`.
/// What a `sign` run did, for the command line to print or an agent to read as JSON.
pub struct SignReport {
    kind: ItemKind,
    /// The space signed (`project`, `user`).
    location: &'static str,
    batch: bool,
    pattern: String,
    body: SignBody,
}

enum SignBody {
    /// Nothing matched: the reference's words, where it looked, and the nearest id there.
    NotFound {
        error: String,
        searched: String,
        suggestion: Option<String>,
    },
    Done {
        outcomes: Vec<Outcome>,
        failed: usize,
    },
}

impl SignReport {
    /// Whether every item was signed.
    pub fn success(&self) -> bool {
        matches!(self.body, SignBody::Done { failed: 0, .. })
    }

    /// The `rye_sign` response (§12.9): `signed` for one item, `completed` for a batch, `error`.
    pub fn to_json(&self) -> Json {
        match &self.body {
            SignBody::NotFound {
                error,
                searched,
                suggestion,
            } => {
                let mut v = json!({
                    "status": "error",
                    "error": error,
                    "item_id": self.pattern,
                    "searched_in": searched,
                    "hint": "Ensure the project path is the parent of the .ai/ directory containing this item.",
                });
                if let Some(s) = suggestion {
                    v["did_you_mean"] = json!(s);
                }
                v
            }
            SignBody::Done { outcomes, failed } if self.batch => batch_json(outcomes, *failed),
            SignBody::Done { outcomes, .. } => outcomes
                .first()
                .map_or(Json::Null, |o| single_json(o, self.kind, self.location)),
        }
    }
}

/// Validate and sign, printing the outcome (JSON with `--json`); exit 1 when an item failed.
pub fn sign(ctx: &Context<'_>, args: &SignArgs) -> anyhow::Result<u8> {
    // The process ends after this: the OS takes the loaded tree back at once.
    let report = sign_report(ctx, args, Caller::Person)?;
    if super::wants_json(args.json, args.format) {
        outln!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        match &report.body {
            SignBody::NotFound {
                error,
                searched,
                suggestion,
            } => {
                outln!("error: {error}\n  searched in {searched}");
                if let Some(s) = suggestion {
                    outln!("  help: did you mean `{s}`?");
                }
            }
            SignBody::Done { outcomes, failed } if report.batch => print_batch(outcomes, *failed)?,
            SignBody::Done { outcomes, .. } => {
                if let Some(o) = outcomes.first() {
                    print_single(o, report.kind, report.location)?;
                }
            }
        }
    }
    Ok(u8::from(!report.success()))
}

/// One `rye_sign` call of the MCP server, answered in its JSON (§12.9): the flow of the command,
/// with the same validation, key handling and lockfile upkeep, never `--force`d.
pub fn sign_call(ctx: &Context<'_>, call: &crate::edges::mcp::SignCall) -> anyhow::Result<Json> {
    let args = SignArgs {
        item: call.args.item_id.clone(),
        path: call.project.clone(),
        item_type: Some(match call.args.kind {
            ItemKind::Tool => ItemTypeArg::Tool,
            ItemKind::Directive => ItemTypeArg::Directive,
            ItemKind::Knowledge => ItemTypeArg::Knowledge,
        }),
        space: match call.args.space {
            SpaceKind::User => WritableSpace::User,
            _ => WritableSpace::Project,
        },
        format: None,
        json: true,
        force: false,
    };
    Ok(sign_report(ctx, &args, Caller::Agent)?.to_json())
}

/// One "Re-sign this item" of the language server, answered in `rye_sign`'s JSON: the flow of
/// the command for the person at their editor (`Caller::Editor`), never `--force`d.
pub fn editor_call(
    ctx: &Context<'_>,
    req: &crate::edges::lsp::server::SignRequest,
) -> anyhow::Result<Json> {
    let args = SignArgs {
        item: req.item_id.clone(),
        path: req.project.clone(),
        item_type: Some(match req.kind {
            ItemKind::Tool => ItemTypeArg::Tool,
            ItemKind::Directive => ItemTypeArg::Directive,
            ItemKind::Knowledge => ItemTypeArg::Knowledge,
        }),
        space: match req.space {
            SpaceKind::User => WritableSpace::User,
            _ => WritableSpace::Project,
        },
        format: None,
        json: true,
        force: false,
    };
    Ok(sign_report(ctx, &args, Caller::Editor)?.to_json())
}

/// Validate and sign what `args` names (§10.3, §12.9), printing only notices and warnings (to
/// stderr). For a person, the process ends soon, so a batch's loaded tree is not freed piece by
/// piece (freeing its texts and memos one by one took 0.24 s of signing a 100k tree's project).
pub fn sign_report(
    ctx: &Context<'_>,
    args: &SignArgs,
    caller: Caller,
) -> anyhow::Result<SignReport> {
    let (ref_kind, pattern) = split_ref(&args.item);
    let kind = match (ref_kind, args.item_type.map(ItemTypeArg::kind)) {
        (Some(a), Some(b)) if a != b => bail!(
            "`{}` names a {} but --type says {}",
            args.item,
            a.name(),
            b.name()
        ),
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) => ItemKind::Tool,
    };
    if let Some(reason) = item_id_problem(pattern) {
        bail!(crate::message::invalid_item_id(pattern, reason));
    }
    let wanted = match args.space {
        WritableSpace::Project => SpaceKind::Project,
        WritableSpace::User => SpaceKind::User,
    };
    let batch = is_glob(pattern);
    let matcher = if batch {
        Some(IdPattern::new(pattern).map_err(|e| anyhow::anyhow!(e))?)
    } else {
        None
    };
    // Before anything is read: a file whose stamp shows no change since a while before this is
    // checked by its stamp alone when it is replaced.
    let loading_from = crate::system::os::now_ns();
    // What signing reads: the items of one kind in one space, the extractors and the trust store
    // (one tool: its candidate files); not the other spaces' items.
    let (mut host, notices) = if batch || kind != ItemKind::Tool {
        let dir = kind.dir().trim_end_matches('/');
        ctx.space_host(&args.path, Settings::default(), wanted, dir)?
    } else {
        ctx.item_host(&args.path, Settings::default(), &[pattern.to_owned()])?
    };
    print_notices(&notices);
    if batch && kind == ItemKind::Tool {
        load_chain_needs(ctx, &args.path, &mut host, wanted)?;
    }
    let a = host.analysis();
    let root = a.space_root(wanted);
    let mut signer = Signer {
        ctx,
        caller,
        key: None,
        notices: Vec::new(),
    };
    let targets: Vec<(String, SourceFile)> = match root {
        None => Vec::new(),
        Some(_) if let Some(m) = &matcher => a
            .items(wanted, kind)
            .into_iter()
            .filter(|(id, _)| m.matches(id))
            .collect(),
        Some(_) => match kind {
            ItemKind::Tool => a
                .tool_in(wanted, pattern)
                .map(|f| vec![(pattern.to_owned(), f)])
                .unwrap_or_default(),
            _ => a
                .items(wanted, kind)
                .into_iter()
                .filter(|(id, _)| id == pattern)
                .take(1)
                .collect(),
        },
    };
    if targets.is_empty() {
        let error = if batch {
            format!("No {}s found matching pattern: {pattern}", kind.name())
        } else {
            not_found(kind, pattern)
        };
        let searched = root.as_ref().map_or_else(
            || format!("(the {} space is not loaded)", args.space.name()),
            |r| r.join(kind.dir()).display().to_string(),
        );
        // The nearest id of that kind in that space (read whole: only a failing run pays).
        let suggestion = if batch {
            None
        } else {
            ctx.host(&args.path, Settings::default())
                .ok()
                .and_then(|(full, _)| {
                    let ids: Vec<String> = full
                        .analysis()
                        .items(wanted, kind)
                        .into_iter()
                        .map(|(id, _)| id)
                        .collect();
                    crate::message::nearest(pattern, ids.iter().map(String::as_str))
                        .map(str::to_owned)
                })
        };
        return Ok(SignReport {
            kind,
            location: args.space.name(),
            batch,
            pattern: pattern.to_owned(),
            body: SignBody::NotFound {
                error,
                searched,
                suggestion,
            },
        });
    }
    // Read once per run: finding it scans every file of every space.
    let schema = a.validation_schema(kind).unwrap_or_default();
    // Two ids may name one file (a symlink beside its target): sign it once, report both.
    // A map, not a list: a search per item made a batch of n items cost O(n²).
    let reals: Vec<(PathBuf, FileKey, Option<FileStamp>)> = targets
        .iter()
        .map(|&(_, f)| a.path(f).to_path_buf())
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(real_file)
        .collect();
    let mut by_real: HashMap<&FileKey, usize> = HashMap::with_capacity(targets.len());
    let mut first_of: Vec<usize> = Vec::with_capacity(targets.len());
    let mut unique: Vec<Target<'_>> = Vec::with_capacity(targets.len());
    for ((id, file), (real, key, stamp)) in targets.iter().zip(&reals) {
        let at = *by_real.entry(key).or_insert_with(|| {
            let dev = match key {
                FileKey::Inode(dev, _) => Some(*dev),
                FileKey::Path(_) => None,
            };
            unique.push(Target {
                id: id.as_str(),
                file: *file,
                real: real.as_path(),
                dev,
                stamp: stamp.and_then(|s| settled_since(s, loading_from)),
            });
            unique.len() - 1
        });
        first_of.push(at);
    }
    let signed = sign_batch(&mut signer, a, &schema, kind, &unique, args.force)?;
    let outcomes: Vec<Outcome> = targets
        .iter()
        .zip(&first_of)
        .map(|((id, file), &at)| {
            let path = a.path(*file).to_path_buf();
            match &signed[at] {
                Outcome::Signed {
                    signature,
                    warnings,
                    ..
                } => Outcome::Signed {
                    id: id.clone(),
                    path,
                    signature: signature.clone(),
                    warnings: warnings.clone(),
                },
                Outcome::Failed { error, issues, .. } => Outcome::Failed {
                    id: id.clone(),
                    path: Some(path),
                    error: error.clone(),
                    issues: issues.clone(),
                },
            }
        })
        .collect();
    print_notices(&signer.notices);
    if kind == ItemKind::Tool {
        remove_stale_lockfiles(ctx, a, wanted, &outcomes);
    }
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Failed { .. }))
        .count();
    if batch && caller == Caller::Person {
        std::mem::forget(host);
    }
    Ok(SignReport {
        kind,
        location: args.space.name(),
        batch,
        pattern: pattern.to_owned(),
        body: SignBody::Done { outcomes, failed },
    })
}

/// Remove the lockfiles of the project and user spaces that pin an item this run re-signed
/// under its old text (§10.7: a lockfile only detects change, and the next `exec` would refuse
/// with "Lockfile integrity mismatch"), and say so: the next successful `exec` writes a fresh
/// one. A lockfile that cannot be read, or pins nothing signed here, is left alone.
fn remove_stale_lockfiles(
    ctx: &Context<'_>,
    a: Analysis<'_>,
    space: SpaceKind,
    outcomes: &[Outcome],
) {
    let signed: HashMap<&str, &str> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Signed { id, signature, .. } => {
                Some((id.as_str(), signature.content_hash.as_str()))
            }
            Outcome::Failed { .. } => None,
        })
        .collect();
    if signed.is_empty() {
        return;
    }
    let label = match space {
        SpaceKind::Project => "project",
        SpaceKind::User => "user",
        SpaceKind::System => return,
    };
    for (kind, root) in a.space_roots() {
        if !matches!(kind, SpaceKind::Project | SpaceKind::User)
            || root.starts_with(crate::model::EMBEDDED_PATH_PREFIX)
        {
            continue;
        }
        let dir = root.join(crate::integrity::lockfile::LOCKFILES_DIR);
        for entry in ctx.sys.walk(&dir) {
            let path = entry.path;
            if entry.is_symlink
                || entry.error.is_some()
                || !path
                    .to_string_lossy()
                    .ends_with(crate::integrity::lockfile::LOCKFILE_SUFFIX)
            {
                continue;
            }
            let crate::system::ReadResult::Bytes(bytes) = ctx.sys.read(&path, 1 << 20) else {
                continue;
            };
            let Ok(lock) =
                crate::integrity::lockfile::parse_lockfile(&String::from_utf8_lossy(&bytes))
            else {
                continue;
            };
            let root_pin = (
                lock.root.tool_id.as_str(),
                "project",
                lock.root.integrity.as_str(),
            );
            let entries = lock.resolved_chain.iter().filter_map(|e| {
                Some((
                    e.get("item_id")?.as_str()?,
                    e.get("space").and_then(Json::as_str).unwrap_or("project"),
                    e.get("integrity")?.as_str()?,
                ))
            });
            let stale =
                std::iter::once(root_pin)
                    .chain(entries)
                    .find(|(id, pinned_space, hash)| {
                        *pinned_space == label && signed.get(id).is_some_and(|new| new != hash)
                    });
            let Some((id, ..)) = stale else { continue };
            match std::fs::remove_file(&path) {
                Ok(()) => errln!(
                    "note: removed {}: it pinned the text of {id} before this signature (the next successful `ryechain exec` writes a new one; `ryechain lock {} --force` writes one now)",
                    path.display(),
                    lock.root.tool_id
                ),
                Err(e) => errln!(
                    "warning: {} pins the text of {id} before this signature and could not be removed ({e}); delete it, or rewrite it with `ryechain lock {} --force`",
                    path.display(),
                    lock.root.tool_id
                ),
            }
        }
    }
}

fn signature_json(s: &Signature) -> Json {
    json!({
        "timestamp": s.timestamp,
        "hash": s.content_hash,
        "ed25519_sig": s.signature,
        "pubkey_fp": s.key_fp,
    })
}

fn kind_title(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "Tool",
        ItemKind::Directive => "Directive",
        ItemKind::Knowledge => "Knowledge entry",
    }
}

/// One item's `rye_sign` answer.
fn single_json(o: &Outcome, kind: ItemKind, location: &str) -> Json {
    match o {
        Outcome::Signed {
            id,
            path,
            signature,
            warnings,
        } => json!({
            "status": "signed",
            "item_id": id,
            "path": path.display().to_string(),
            "location": location,
            "signature": signature_json(signature),
            "warnings": warnings,
            "message": format!("{} validated and signed.", kind_title(kind)),
        }),
        Outcome::Failed {
            id,
            path,
            error,
            issues,
        } => {
            let mut v = json!({"status": "error", "error": error, "item_id": id});
            if let Some(p) = path {
                v["path"] = json!(p.display().to_string());
            }
            if !issues.is_empty() {
                v["issues"] = json!(issues);
            }
            v
        }
    }
}

fn print_single(o: &Outcome, kind: ItemKind, location: &str) -> anyhow::Result<()> {
    match o {
        Outcome::Signed {
            id,
            path,
            signature,
            warnings,
        } => {
            outln!("signed {} {id} ({location})", kind.name());
            outln!("  {}", path.display());
            outln!(
                "  key {}  hash {}  at {}",
                signature.key_fp,
                signature.content_hash,
                signature.timestamp
            );
            for w in warnings {
                outln!("  warning: {w}");
            }
        }
        Outcome::Failed {
            id,
            path,
            error,
            issues,
        } => {
            outln!("error: {error}: {} {id}", kind.name());
            if let Some(p) = path {
                outln!("  {}", p.display());
            }
            for i in issues {
                outln!("  - {i}");
            }
        }
    }
    Ok(())
}

fn batch_summary(total: usize, failed: usize) -> String {
    let mut summary = format!("Signed {}/{total} items", total - failed);
    if failed > 0 {
        summary.push_str(&format!(", {failed} failed"));
    }
    summary
}

/// A batch's `rye_sign` answer: `completed`, the ids signed, the failures with their details.
fn batch_json(outcomes: &[Outcome], failed: usize) -> Json {
    let signed: Vec<&str> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Signed { id, .. } => Some(id.as_str()),
            Outcome::Failed { .. } => None,
        })
        .collect();
    let failures: Vec<Json> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Failed {
                id, error, issues, ..
            } => Some(json!({"item": id, "error": error, "details": issues})),
            Outcome::Signed { .. } => None,
        })
        .collect();
    json!({
        "status": "completed",
        "signed": signed,
        "failed": failures,
        "total": outcomes.len(),
        "summary": batch_summary(outcomes.len(), failed),
    })
}

fn print_batch(outcomes: &[Outcome], failed: usize) -> anyhow::Result<()> {
    // Each distinct warning once, after the list, with the items it applies to.
    let mut grouped: Vec<(&String, Vec<&String>)> = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Signed {
                id,
                path,
                signature,
                warnings,
            } => {
                outln!(
                    "signed  {id}  {}  (key {})",
                    path.display(),
                    signature.key_fp
                );
                for w in warnings {
                    match grouped.iter_mut().find(|(text, _)| *text == w) {
                        Some((_, ids)) => ids.push(id),
                        None => grouped.push((w, vec![id])),
                    }
                }
            }
            Outcome::Failed {
                id, error, issues, ..
            } => {
                outln!("FAILED  {id}: {error}");
                for i in issues {
                    outln!("    - {i}");
                }
            }
        }
    }
    for (w, ids) in &grouped {
        outln!("warning: {w} ({})", item_list(ids));
    }
    outln!("{}", batch_summary(outcomes.len(), failed));
    Ok(())
}

/// `1 item: a`, `3 items: a, b, c`, or the first few and `and N more`.
fn item_list(ids: &[&String]) -> String {
    const SHOWN: usize = 5;
    let n = ids.len();
    let mut list = ids
        .iter()
        .take(SHOWN)
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if n > SHOWN {
        list.push_str(&format!(" and {} more", n - SHOWN));
    }
    format!("{n} {}: {list}", if n == 1 { "item" } else { "items" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_matches(pattern: &str, id: &str) -> bool {
        IdPattern::new(pattern).unwrap().matches(id)
    }

    #[test]
    fn globs_match_segments() {
        assert!(id_matches("*", "a/b/c"));
        assert!(id_matches("c*", "a/b/cat"));
        assert!(!id_matches("c*", "cat/dog"));
        assert!(id_matches("a/*", "a/b"));
        assert!(!id_matches("a/*", "a/b/c"));
        assert!(id_matches("a/**", "a/b/c"));
        assert!(id_matches("a/**/c", "a/c"));
        assert!(id_matches("a/**/c", "a/b/x/c"));
        assert!(id_matches("t?ol", "x/tool"));
        assert!(!id_matches("t?ol", "x/tl"));
        assert!(!id_matches("a?b", "a/b"));
        assert!(IdPattern::new("a/[b").is_err());
    }
}
