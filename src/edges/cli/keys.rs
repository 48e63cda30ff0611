//! L6 `ryechain keys` and the key files on disk: the signing key pair (seed-era
//! `<user>/.ai/config/keys/signing/` or `RYE_SIGNING_KEY_DIR`; the reference's `<user>/.ai/keys/`
//! is still read), trust documents written into a space (`.ai/config/keys/trusted/<fp>.toml`,
//! §10.4, DESIGN.md "Keys"), atomic writes, and the `generate`, `list`, `trust`, `fingerprint`
//! subcommands.
#![allow(
    clippy::disallowed_methods,
    reason = "the keys edge writes key files and trust documents"
)]

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{Subcommand, ValueEnum};
use ed25519_dalek::SigningKey;

use super::{Context, absolute, expand_tilde, print_notices};
use crate::db::Settings;
use crate::edges::files::{set_mode, write_atomically};
use crate::integrity::keys::{
    KeyError, fingerprint, key_pair_from_seed, public_key_from_pem, public_pem,
    signing_key_from_pem,
};
use crate::integrity::trust::{Approval, trust_doc_toml};
use crate::model::SpaceKind;
use crate::system::ReadResult;

/// File names of the key pair inside the signing directory (§10.4).
pub const PRIVATE_KEY_FILE: &str = "private_key.pem";
pub const PUBLIC_KEY_FILE: &str = "public_key.pem";
/// The signing directory under the user space base (seed era).
pub const SIGNING_DIR: &str = ".ai/config/keys/signing";
/// The reference's key directory under the user space base, read when the seed-era one is empty.
pub const LEGACY_KEY_DIR: &str = ".ai/keys";
/// Where ryechain writes trust documents, under a space base (seed era).
pub const TRUSTED_DIR: &str = ".ai/config/keys/trusted";
/// The reference's trust store under the user space base (raw PEM named by fingerprint), which
/// ryechain also writes so that a key trusted here is trusted by the reference too.
pub const REFERENCE_TRUSTED_DIR: &str = ".ai/trusted_keys";
/// Where the person's approvals of project keys are kept, under the user space base.
pub const APPROVED_DIR: &str = ".ai/config/keys/approved";
/// Environment variable naming the signing directory instead of the user space's.
pub const SIGNING_DIR_ENV: &str = "RYE_SIGNING_KEY_DIR";
/// Owner written into the trust document of one's own key (§10.4).
pub const OWNER_LOCAL: &str = "local";

/// PEM files larger than this are not keys.
const MAX_PEM_BYTES: u64 = 64 * 1024;

#[derive(Subcommand, Debug)]
pub enum KeysCommand {
    /// Make a new Ed25519 signing key pair (`private_key.pem`, `public_key.pem`) in
    /// `<USER_SPACE>/.ai/config/keys/signing/` (or `RYE_SIGNING_KEY_DIR`) and trust it in the
    /// user space.
    Generate {
        /// Replace an existing key pair (its trust document stays, so old signatures still verify).
        #[arg(long)]
        force: bool,
    },
    /// List the trusted keys of every space, refused trust documents and the signing key.
    List {
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// `json`: the keys as JSON.
        #[arg(long, value_enum)]
        format: Option<super::OutputFormat>,
        /// The same as `--format json`.
        #[arg(long, hide = true)]
        json: bool,
    },
    /// Trust a public key: write `<space>/.ai/config/keys/trusted/<fingerprint>.toml` (and, in
    /// the user space, the reference's `.ai/trusted_keys/<fingerprint>.pem`). With `--project`,
    /// approve the keys a project ships instead.
    Trust {
        /// An Ed25519 public key in SPKI PEM form.
        #[arg(required_unless_present = "project")]
        pem_file: Option<PathBuf>,
        /// The project directory (used with `--space project`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Which space trusts the key (a key written into the project is trusted by each
        /// person only after they approve it with `--project`).
        #[arg(long, value_enum, default_value = "user")]
        space: WritableSpace,
        /// Who the key belongs to (the document's `owner`).
        #[arg(long)]
        owner: Option<String>,
        /// Show the keys the project at PATH ships (fingerprint, owner, file) and approve them
        /// for that project: recorded in your user space, bound to each key and the project's
        /// path. A new or changed key needs approval again.
        #[arg(
            long,
            value_name = "PATH",
            num_args = 0..=1,
            default_missing_value = ".",
            conflicts_with_all = ["pem_file", "owner"]
        )]
        project: Option<PathBuf>,
    },
    /// Print a public key's fingerprint (default: the signing key's).
    Fingerprint {
        /// A public key (SPKI PEM) or private key (PKCS#8 PEM) file.
        pem_file: Option<PathBuf>,
    },
}

/// A space ryechain may write into (system bundles are immutable).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum WritableSpace {
    Project,
    User,
}

impl WritableSpace {
    pub fn name(self) -> &'static str {
        match self {
            WritableSpace::Project => "project",
            WritableSpace::User => "user",
        }
    }
}

/// The signing key pair as loaded from (or written to) disk.
pub struct SigningKeyPair {
    pub key: SigningKey,
    /// The public key PEM exactly as stored: the fingerprint is computed from these bytes.
    pub public_pem: String,
    pub fingerprint: String,
    pub dir: PathBuf,
}

/// The user space base directory (`.ai` is appended): `--user-space`, `USER_SPACE`, then `HOME`
/// (the same order as the loader's).
pub fn user_base(ctx: &Context<'_>) -> anyhow::Result<PathBuf> {
    ctx.user_base()?.ok_or_else(|| {
        anyhow::anyhow!(
            "cannot tell where the user space is: set USER_SPACE (or HOME), or pass --user-space"
        )
    })
}

/// The base directory of a writable space.
pub fn space_base(
    ctx: &Context<'_>,
    space: WritableSpace,
    project: &Path,
) -> anyhow::Result<PathBuf> {
    match space {
        WritableSpace::Project => absolute(ctx.sys, project),
        WritableSpace::User => user_base(ctx),
    }
}

/// Where the signing key pair lives: `RYE_SIGNING_KEY_DIR`, else the user space's seed-era dir.
pub fn signing_dir(ctx: &Context<'_>) -> anyhow::Result<PathBuf> {
    match ctx.sys.env_var(SIGNING_DIR_ENV).filter(|s| !s.is_empty()) {
        Some(dir) => absolute(ctx.sys, &expand_tilde(ctx.sys, &dir)),
        None => Ok(user_base(ctx)?.join(SIGNING_DIR)),
    }
}

/// Read a small text file through the `System`, with errors that name it.
pub fn read_pem_file(ctx: &Context<'_>, path: &Path) -> anyhow::Result<String> {
    if ctx.sys.is_dir(path) {
        bail!("{} is a directory, not a PEM file", path.display());
    }
    match ctx.sys.read(path, MAX_PEM_BYTES) {
        ReadResult::Bytes(bytes) => String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not a PEM file (not UTF-8 text)", path.display())),
        ReadResult::TooLarge(size) => bail!(
            "{} is not a PEM file ({size} bytes; keys are under {MAX_PEM_BYTES})",
            path.display()
        ),
        ReadResult::Error(e) => bail!("cannot read {}: {e}", path.display()),
    }
}

/// Load the key pair of one directory, if it has a private key.
fn load_pair_in(ctx: &Context<'_>, dir: &Path) -> anyhow::Result<Option<SigningKeyPair>> {
    let private = dir.join(PRIVATE_KEY_FILE);
    let public = dir.join(PUBLIC_KEY_FILE);
    if !ctx.sys.is_file(&private) {
        if ctx.sys.is_file(&public) {
            bail!(
                "{} has {PUBLIC_KEY_FILE} but no {PRIVATE_KEY_FILE}; run `ryechain keys generate --force` to make a new pair",
                dir.display()
            );
        }
        return Ok(None);
    }
    let key = signing_key_from_pem(&read_pem_file(ctx, &private)?)
        .map_err(|e| anyhow::anyhow!("{}: {e}", private.display()))?;
    let public_pem = if ctx.sys.is_file(&public) {
        let pem = read_pem_file(ctx, &public)?;
        let stored =
            public_key_from_pem(&pem).map_err(|e| anyhow::anyhow!("{}: {e}", public.display()))?;
        if stored != key.verifying_key() {
            bail!(
                "{} is not the public half of {}; run `ryechain keys generate --force` to make a new pair",
                public.display(),
                private.display()
            );
        }
        pem
    } else {
        public_pem(&key.verifying_key())?
    };
    Ok(Some(SigningKeyPair {
        fingerprint: fingerprint(public_pem.as_bytes()),
        key,
        public_pem,
        dir: dir.to_path_buf(),
    }))
}

/// The signing key pair: the seed-era directory (or `RYE_SIGNING_KEY_DIR`), then the reference's
/// `<user>/.ai/keys/` when no directory is forced by the environment. `None`: no key yet.
pub fn load_signing_key(ctx: &Context<'_>) -> anyhow::Result<Option<SigningKeyPair>> {
    if let Some(pair) = load_pair_in(ctx, &signing_dir(ctx)?)? {
        return Ok(Some(pair));
    }
    if ctx
        .sys
        .env_var(SIGNING_DIR_ENV)
        .is_some_and(|s| !s.is_empty())
    {
        return Ok(None);
    }
    load_pair_in(ctx, &user_base(ctx)?.join(LEGACY_KEY_DIR))
}

/// Make a new key pair in the signing directory (refusing to replace one unless `force`).
pub fn generate_key(ctx: &Context<'_>, force: bool) -> anyhow::Result<SigningKeyPair> {
    let dir = signing_dir(ctx)?;
    let private = dir.join(PRIVATE_KEY_FILE);
    let public = dir.join(PUBLIC_KEY_FILE);
    if !force && (private.symlink_metadata().is_ok() || public.symlink_metadata().is_ok()) {
        let which = load_pair_in(ctx, &dir)
            .ok()
            .flatten()
            .map(|p| format!(" (fingerprint {})", p.fingerprint))
            .unwrap_or_default();
        bail!(
            "a signing key already exists in {}{which}; pass --force to replace it",
            dir.display()
        );
    }
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed)
        .map_err(|e| anyhow::anyhow!("the system's random source failed: {e}"))?;
    let pair = key_pair_from_seed(&seed);
    seed.fill(0);
    let pair = pair?;
    if !dir.is_dir() {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        set_mode(&dir, 0o700)?;
    }
    write_atomically(&private, pair.private_pem.as_bytes(), 0o600)?;
    write_atomically(&public, pair.public_pem.as_bytes(), 0o644)?;
    let key = signing_key_from_pem(&pair.private_pem)?;
    Ok(SigningKeyPair {
        fingerprint: fingerprint(pair.public_pem.as_bytes()),
        key,
        public_pem: pair.public_pem,
        dir,
    })
}

/// The fingerprint a trust document for this PEM is named by (the PEM trimmed, one `\n`).
pub fn trusted_fingerprint(public_pem: &str) -> String {
    fingerprint(format!("{}\n", public_pem.trim()).as_bytes())
}

/// Write `<base>/.ai/config/keys/trusted/<fp>.toml` for a public key; returns its path.
pub fn write_trust_doc(base: &Path, public_pem: &str, owner: &str) -> anyhow::Result<PathBuf> {
    let dir = base.join(TRUSTED_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{}.toml", trusted_fingerprint(public_pem)));
    write_atomically(&path, trust_doc_toml(public_pem, owner).as_bytes(), 0o644)?;
    Ok(path)
}

/// Write the reference's `<user>/.ai/trusted_keys/<fp>.pem` for a public key (the PEM trimmed,
/// one `\n`: its fingerprint is then the one ryechain's document is named by); returns its path.
pub fn write_reference_trust(user: &Path, public_pem: &str) -> anyhow::Result<PathBuf> {
    let dir = user.join(REFERENCE_TRUSTED_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{}.pem", trusted_fingerprint(public_pem)));
    let pem = format!("{}\n", public_pem.trim());
    write_atomically(&path, pem.as_bytes(), 0o644)?;
    Ok(path)
}

/// Run one `keys` subcommand.
pub fn keys(ctx: &Context<'_>, cmd: KeysCommand) -> anyhow::Result<u8> {
    match cmd {
        KeysCommand::Generate { force } => generate(ctx, force),
        KeysCommand::List { path, format, json } => {
            list(ctx, &path, super::wants_json(json, format))
        }
        KeysCommand::Trust {
            project: Some(project),
            ..
        } => approve_project_keys(ctx, &project),
        KeysCommand::Trust {
            pem_file,
            path,
            space,
            owner,
            project: None,
        } => {
            let Some(pem_file) = pem_file else {
                bail!(
                    "name a public key file to trust, or pass --project to approve a project's keys"
                );
            };
            trust(ctx, &pem_file, &path, space, owner.as_deref())
        }
        KeysCommand::Fingerprint { pem_file } => print_fingerprint(ctx, pem_file.as_deref()),
    }
}

fn generate(ctx: &Context<'_>, force: bool) -> anyhow::Result<u8> {
    let pair = generate_key(ctx, force)?;
    let user = user_base(ctx)?;
    let doc = write_trust_doc(&user, &pair.public_pem, OWNER_LOCAL)?;
    let reference = write_reference_trust(&user, &pair.public_pem)?;
    outln!("generated Ed25519 signing key {}", pair.fingerprint);
    outln!(
        "  private key  {} (mode 0600)",
        pair.dir.join(PRIVATE_KEY_FILE).display()
    );
    outln!(
        "  public key   {}",
        pair.dir.join(PUBLIC_KEY_FILE).display()
    );
    outln!("  trusted by   {}", doc.display());
    outln!(
        "               {} (the reference's layout)",
        reference.display()
    );
    Ok(0)
}

fn list(ctx: &Context<'_>, path: &Path, json: bool) -> anyhow::Result<u8> {
    let (host, notices) = ctx.host(path, Settings::default())?;
    print_notices(&notices);
    let a = host.analysis();
    let store = a.trust_store();
    let signing = load_signing_key(ctx)?;
    let trusted: Vec<serde_json::Value> = store
        .keys
        .iter()
        .map(|(k, f)| {
            serde_json::json!({
                "fingerprint": k.fingerprint,
                "owner": k.owner,
                "space": a.space_label(*f),
                "file": a.path(*f).display().to_string(),
            })
        })
        .collect();
    let refused: Vec<serde_json::Value> = store
        .problems
        .iter()
        .map(|(f, reason)| {
            serde_json::json!({
                "file": a.path(*f).display().to_string(),
                "space": a.space_label(*f),
                "reason": reason,
            })
        })
        .collect();
    let unapproved: Vec<serde_json::Value> = store
        .unapproved
        .iter()
        .map(|(k, f)| {
            serde_json::json!({
                "fingerprint": k.fingerprint,
                "owner": k.owner,
                "file": a.path(*f).display().to_string(),
            })
        })
        .collect();
    let signing_json = signing.as_ref().map(|p| {
        serde_json::json!({
            "fingerprint": p.fingerprint,
            "dir": p.dir.display().to_string(),
            "trusted": store.lookup(&p.fingerprint).is_some(),
        })
    });
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "trusted": trusted,
                "unapproved": unapproved,
                "refused": refused,
                "signing_key": signing_json,
            }))?
        );
        return Ok(0);
    }
    if store.keys.is_empty() {
        outln!("no trusted keys");
    } else {
        outln!("trusted keys (lookup order):");
        for (k, f) in &store.keys {
            outln!(
                "  {}  owner {:<14} {:<16} {}",
                k.fingerprint,
                k.owner.as_deref().filter(|o| !o.is_empty()).unwrap_or("-"),
                a.space_label(*f),
                a.path(*f).display()
            );
        }
    }
    if !store.unapproved.is_empty() {
        outln!(
            "keys the project ships, not trusted until you approve them (`ryechain keys trust --project`):"
        );
        for (k, f) in &store.unapproved {
            outln!(
                "  {}  owner {:<14} {}",
                k.fingerprint,
                k.owner.as_deref().filter(|o| !o.is_empty()).unwrap_or("-"),
                a.path(*f).display()
            );
        }
    }
    if !store.problems.is_empty() {
        outln!("refused trust documents:");
        for (f, reason) in &store.problems {
            outln!(
                "  {} ({}): {reason}",
                a.path(*f).display(),
                a.space_label(*f)
            );
        }
    }
    match &signing {
        Some(p) => outln!(
            "signing key: {} in {}{}",
            p.fingerprint,
            p.dir.display(),
            if store.lookup(&p.fingerprint).is_some() {
                ""
            } else {
                " (not trusted by any space: signatures made with it will not verify)"
            }
        ),
        None => outln!(
            "signing key: none (in {}); `ryechain keys generate` makes one",
            signing_dir(ctx)?.display()
        ),
    }
    Ok(0)
}

/// Why a file is not an Ed25519 public key, in words that name the file.
fn public_pem_error(file: &Path, pem: &str, err: &KeyError) -> anyhow::Error {
    let file = file.display();
    if !pem.contains("-----BEGIN PUBLIC KEY-----") {
        anyhow::anyhow!("{file} is not a PEM public key: no `-----BEGIN PUBLIC KEY-----` line")
    } else if !pem.contains("-----END PUBLIC KEY-----") {
        anyhow::anyhow!(
            "{file} is truncated: the PEM public key has no `-----END PUBLIC KEY-----` line"
        )
    } else if err.to_string().contains("algorithm") {
        anyhow::anyhow!(
            "{file} holds a public key of another algorithm; ryechain signs and verifies with Ed25519 keys only"
        )
    } else {
        anyhow::anyhow!("{file}: {err}")
    }
}

/// Read and check a public key file for `keys trust`.
fn read_public_pem(ctx: &Context<'_>, file: &Path) -> anyhow::Result<String> {
    let pem = read_pem_file(ctx, file)?;
    if pem.contains("PRIVATE KEY-----") {
        bail!(
            "{} holds a private key; trust its public half (the `{PUBLIC_KEY_FILE}` beside it) instead",
            file.display()
        );
    }
    public_key_from_pem(&pem).map_err(|e| public_pem_error(file, &pem, &e))?;
    Ok(pem)
}

fn trust(
    ctx: &Context<'_>,
    file: &Path,
    project: &Path,
    space: WritableSpace,
    owner: Option<&str>,
) -> anyhow::Result<u8> {
    let file = absolute(ctx.sys, file)?;
    let pem = read_public_pem(ctx, &file)?;
    let base = space_base(ctx, space, project)?;
    if space == WritableSpace::Project && !ctx.sys.is_dir(&base) {
        bail!("project path {} is not a directory", base.display());
    }
    let doc = write_trust_doc(&base, &pem, owner.unwrap_or(""))?;
    let fp = trusted_fingerprint(&pem);
    outln!("trusted key {fp} in the {} space", space.name());
    outln!("  {}", doc.display());
    if space == WritableSpace::User {
        outln!("  {}", write_reference_trust(&base, &pem)?.display());
    } else {
        outln!(
            "  each person who clones the project trusts it after approving it once with `ryechain keys trust --project`"
        );
    }
    let raw = fingerprint(pem.as_bytes());
    if raw != fp {
        errln!(
            "warning: {} fingerprints as {raw} byte for byte (line endings or surrounding whitespace differ from a canonical PEM); signatures made with this exact file name {raw} and will not find this trust document",
            file.display()
        );
    }
    Ok(0)
}

/// `keys trust --project PATH`: show every key the project ships that waits for approval and
/// record the person's approval of each in the user space (`integrity::trust::Approval`).
fn approve_project_keys(ctx: &Context<'_>, project: &Path) -> anyhow::Result<u8> {
    // The project found upwards (an error when there is none), as the trust store names it.
    let project_dir = ctx.project_root(project)?;
    let (host, notices) = ctx.host(&project_dir, Settings::default())?;
    print_notices(&notices);
    let a = host.analysis();
    let store = a.trust_store();
    let approved: Vec<_> = store
        .keys
        .iter()
        .filter(|(_, f)| a.space_kind(*f) == SpaceKind::Project)
        .collect();
    if store.unapproved.is_empty() {
        if approved.is_empty() {
            outln!("{} ships no keys", project_dir.display());
        } else {
            outln!(
                "every key {} ships is already approved ({})",
                project_dir.display(),
                approved.len()
            );
        }
        return Ok(0);
    }
    let user = user_base(ctx)?;
    let dir = user.join(APPROVED_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (secs, _) = super::now();
    let when = crate::integrity::timefmt::signature_timestamp(secs);
    outln!(
        "approving {} key(s) shipped by {} for this project:",
        store.unapproved.len(),
        project_dir.display()
    );
    for (key, file) in &store.unapproved {
        let approval = Approval::of(key, &project_dir.display().to_string());
        let doc = approval.to_toml(
            key.owner.as_deref(),
            &format!(".ai/{}", a.rel(*file)),
            &when,
        );
        let path = dir.join(approval.file_name());
        write_atomically(&path, doc.as_bytes(), 0o644)?;
        outln!(
            "  {}  owner {:<14} {}",
            key.fingerprint,
            key.owner
                .as_deref()
                .filter(|o| !o.is_empty())
                .unwrap_or("-"),
            a.path(*file).display()
        );
    }
    outln!("recorded in {}", dir.display());
    Ok(0)
}

fn print_fingerprint(ctx: &Context<'_>, file: Option<&Path>) -> anyhow::Result<u8> {
    let Some(file) = file else {
        let Some(pair) = load_signing_key(ctx)? else {
            bail!(
                "no signing key in {}; `ryechain keys generate` makes one",
                signing_dir(ctx)?.display()
            );
        };
        outln!("{}", pair.fingerprint);
        return Ok(0);
    };
    let file = absolute(ctx.sys, file)?;
    let pem = read_pem_file(ctx, &file)?;
    if pem.contains("PRIVATE KEY-----") {
        let key =
            signing_key_from_pem(&pem).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        outln!(
            "{}",
            fingerprint(public_pem(&key.verifying_key())?.as_bytes())
        );
        return Ok(0);
    }
    public_key_from_pem(&pem).map_err(|e| public_pem_error(&file, &pem, &e))?;
    outln!("{}", fingerprint(pem.as_bytes()));
    Ok(0)
}
