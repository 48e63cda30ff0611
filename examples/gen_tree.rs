//! Writes a synthetic tool tree (`ryechain_synth`) to disk: `gen_tree OUT --tools N --seed S`.
//!
//! Lays out `OUT/{project,user,system}/.ai/tools/...`, creates the planted symlinks and writes
//! `OUT/manifest.json`. Lint the result with
//! `ryechain lint OUT/project --user-space OUT/user --system-space OUT/system`.
//! With `--sign`, every item is signed with a throwaway key (`ryechain_synth::sign`), trusted in
//! the user space, and the key pair is written to `OUT/keys/` — outside every space, so no loader
//! reads it (`RYE_SIGNING_KEY_DIR=OUT/keys ryechain sign …` re-signs with it).
#![allow(
    clippy::disallowed_methods,
    reason = "an edge binary: writing the generated tree is its whole job"
)]

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use ryechain_synth::{GenOptions, GeneratedTree, TreeKey, generate, sign};

const USAGE: &str = "\
usage: gen_tree OUT [--tools N] [--seed S] [--sign] [--force]

Writes a deterministic synthetic Rye tool tree under OUT:
  OUT/project/.ai/tools/...   OUT/user/.ai/tools/...   OUT/system/.ai/tools/...
  OUT/manifest.json           the planted findings a linter must report
  OUT/keys/                   with --sign: the throwaway key pair (private_key.pem, public_key.pem)

options:
  --tools N   number of tool files to generate (default 1000)
  --seed S    seed of the generator; the same seed gives byte-identical trees (default 0)
  --sign      sign every item with a throwaway Ed25519 key derived from the seed, trusted in
              OUT/user/.ai/config/keys/trusted/; lint with the default rules then reports
              exactly the planted findings (unsigned trees add one unsigned-item per item)
  --force     replace OUT/{project,user,system,keys} and OUT/manifest.json if they exist
  -h, --help  print this help";

struct Args {
    out: PathBuf,
    opts: GenOptions,
    sign: bool,
    force: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>> {
    let mut out = None;
    let mut opts = GenOptions::default();
    let mut force = false;
    let mut sign = false;
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String> {
            inline
                .clone()
                .or_else(|| args.next())
                .with_context(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--tools" => {
                let v = value("--tools")?;
                opts.tools = v
                    .parse()
                    .with_context(|| format!("--tools: `{v}` is not a number"))?;
            }
            "--seed" => {
                let v = value("--seed")?;
                opts.seed = v
                    .parse()
                    .with_context(|| format!("--seed: `{v}` is not a number"))?;
            }
            "--force" => force = true,
            "--sign" => sign = true,
            f if f.starts_with('-') => bail!("unknown option `{f}`"),
            _ if out.is_none() => out = Some(PathBuf::from(arg)),
            _ => bail!("unexpected argument `{arg}`: OUT is given once"),
        }
    }
    let out = out.context("missing OUT, the directory to write the tree to")?;
    Ok(Some(Args {
        out,
        opts,
        sign,
        force,
    }))
}

/// Refuse to mix a new tree with an old one: stale files would change what the linter sees.
fn prepare(out: &Path, force: bool) -> Result<()> {
    let parts = ["project", "user", "system", KEYS_DIR].map(|p| out.join(p));
    let manifest = out.join("manifest.json");
    let existing: Vec<&PathBuf> = parts
        .iter()
        .chain(std::iter::once(&manifest))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    if existing.is_empty() {
        return Ok(());
    }
    if !force {
        bail!(
            "{} already holds a generated tree; pass --force to replace it or choose another directory",
            out.display()
        );
    }
    for p in existing {
        if p.is_dir() {
            std::fs::remove_dir_all(p).with_context(|| format!("removing {}", p.display()))?;
        } else {
            std::fs::remove_file(p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &str, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &str, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "symlinks are only generated on Unix",
    ))
}

fn write(out: &Path, tree: &GeneratedTree) -> Result<u64> {
    let dirs: BTreeSet<&str> = tree
        .files
        .iter()
        .map(|f| f.path.as_str())
        .chain(tree.symlinks.iter().map(|s| s.path.as_str()))
        .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d))
        .collect();
    for d in &dirs {
        let dir = out.join(d);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    tree.files.par_iter().try_for_each(|f| {
        let path = out.join(&f.path);
        std::fs::write(&path, &f.contents).with_context(|| format!("writing {}", path.display()))
    })?;
    for s in &tree.symlinks {
        let link = out.join(&s.path);
        symlink(&s.target, &link)
            .with_context(|| format!("linking {} -> {}", link.display(), s.target))?;
    }
    let manifest =
        serde_json::to_string_pretty(&tree.manifest).context("serialising the manifest")? + "\n";
    let path = out.join("manifest.json");
    std::fs::write(&path, &manifest).with_context(|| format!("writing {}", path.display()))?;
    let bytes = tree
        .files
        .iter()
        .map(|f| f.contents.len() as u64)
        .sum::<u64>()
        + manifest.len() as u64;
    Ok(bytes)
}

/// Where `--sign` writes the key pair, under OUT (file names as `ryechain keys generate` writes).
const KEYS_DIR: &str = "keys";

/// Write the throwaway key pair to `OUT/keys/` (the private key readable by its owner only).
fn write_key(out: &Path, key: &TreeKey) -> Result<PathBuf> {
    let dir = out.join(KEYS_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let private = dir.join("private_key.pem");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(&private)
        .and_then(|mut f| f.write_all(key.private_pem.as_bytes()))
        .with_context(|| format!("writing {}", private.display()))?;
    let public = dir.join("public_key.pem");
    std::fs::write(&public, &key.public_pem)
        .with_context(|| format!("writing {}", public.display()))?;
    Ok(dir)
}

fn run(args: Args) -> Result<()> {
    let start = Instant::now();
    prepare(&args.out, args.force)?;
    let mut tree = generate(&args.opts);
    let key = if args.sign {
        Some(sign(&mut tree).context("making the throwaway signing key")?)
    } else {
        None
    };
    let generated = start.elapsed();
    let bytes = write(&args.out, &tree)?;
    if let Some(key) = &key {
        let dir = write_key(&args.out, key)?;
        println!(
            "gen_tree: signed every item with throwaway key {} (trusted in the user space; key pair in {})",
            key.fingerprint,
            dir.display()
        );
    }
    let m = &tree.manifest;
    println!(
        "gen_tree: {} tools ({} clean, {} planted findings), {} files, {} symlinks, {:.1} MB in {} (seed {}, generated in {:.2}s, total {:.2}s)",
        m.tools,
        m.clean_tools,
        m.planted.len(),
        m.files,
        tree.symlinks.len(),
        bytes as f64 / 1e6,
        args.out.display(),
        m.seed,
        generated.as_secs_f64(),
        start.elapsed().as_secs_f64(),
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(None) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Some(args)) => match run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gen_tree: error: {e:#}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("gen_tree: error: {e:#}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
