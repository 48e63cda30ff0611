//! L6 the command-line edge: argument parsing (clap), space setup from flags and environment,
//! running the analysis, printing, progress and exit codes (0 clean, 1 findings, 2 usage/internal).

#![allow(clippy::disallowed_methods, reason = "the CLI edge reads NO_COLOR")]

mod commands;
mod exec;
mod keys;
mod lock;
mod sign;
mod verify;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::Host;
use crate::db::{Change, Settings};
use crate::load::{SpaceSource, SpaceSpec, load, load_items};
use crate::model::Space;
use crate::system::System;
use crate::system::os::OsSystem;

#[derive(Parser, Debug)]
#[command(
    name = "ryechain",
    version,
    about = "Resolve, validate and lint Rye OS executor chains"
)]
pub struct Cli {
    /// A system bundle: a directory containing `.ai/` (repeatable, in precedence order; `ID=DIR` names
    /// the bundle). Replaces the embedded bundle. Also `RYE_SYSTEM_SPACE` (colon-separated).
    #[arg(long = "system-space", global = true, value_name = "DIR")]
    system_space: Vec<String>,
    /// The user space base directory (`.ai` is appended). Also `USER_SPACE`; default: the home directory.
    #[arg(long = "user-space", global = true, value_name = "DIR")]
    user_space: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    Human,
    Json,
    Sarif,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate every tool of every space.
    Lint {
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, value_enum, default_value = "human")]
        format: LintFormat,
        /// Only these rules or families (comma-separated; `ALL` for all).
        #[arg(long, value_delimiter = ',')]
        select: Option<Vec<String>>,
        /// Skip these rules or families (comma-separated).
        #[arg(long, value_delimiter = ',')]
        ignore: Vec<String>,
        /// Maximum chain length (default 10, or `chain.max_depth` in `.ai/config/ryechain.yaml`).
        #[arg(long)]
        max_depth: Option<usize>,
        /// Never show a progress bar.
        #[arg(long)]
        no_progress: bool,
    },
    /// Show the chain of one tool: files, spaces, shadowed candidates, validation.
    Chain {
        /// The tool's item id (`rye/bash/bash`).
        item: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Print the dry-run response of `rye_execute` (seed 003) as JSON.
        #[arg(long)]
        json: bool,
        #[arg(long)]
        max_depth: Option<usize>,
    },
    /// List the rules.
    Rules,
    /// Show one rule's documentation.
    Rule { id: String },
    /// Write the lockfile of a tool whose chain is valid to `<PATH>/.ai/lockfiles/<id>@<version>.lock.json`.
    Lock {
        /// The tool's item id (`rye/bash/bash`).
        item: String,
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Overwrite an existing lockfile.
        #[arg(long)]
        force: bool,
    },
    /// Print the executor graph of every tool.
    Graph {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, value_enum, default_value = "dot")]
        format: GraphFormat,
    },
    /// Manage the signing key pair and trusted keys.
    Keys {
        #[command(subcommand)]
        cmd: keys::KeysCommand,
    },
    /// Validate and sign items (a glob with `*`/`?` signs a batch).
    Sign(sign::SignArgs),
    /// Run a tool through its chain and print the response (JSON on a pipe).
    Exec(exec::ExecArgs),
    /// Verify item signatures (all items by default, or the chains of the named tools).
    Verify {
        /// Tool item ids whose chains to verify (none = every item of every space), optionally
        /// followed by the project directory: a last argument that is a directory containing
        /// `.ai/` is the PATH.
        args: Vec<String>,
        /// The project directory (instead of a trailing PATH argument).
        #[arg(long)]
        path: Option<PathBuf>,
        /// Print the verdicts as JSON.
        #[arg(long)]
        json: bool,
        /// Accept unsigned items (as `integrity.require_signatures: false` does).
        #[arg(long)]
        allow_unsigned: bool,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if let Err(errors) = crate::rules::registry() {
        for e in errors {
            eprintln!("error: built-in rule refused: {e}");
        }
        return ExitCode::from(2);
    }
    match run(cli, &OsSystem) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli, sys: &dyn System) -> anyhow::Result<u8> {
    let ctx = Context {
        sys,
        system_space: cli.system_space,
        user_space: cli.user_space,
    };
    match cli.command {
        Command::Lint {
            path,
            format,
            select,
            ignore,
            max_depth,
            no_progress,
        } => {
            let settings = Settings {
                select,
                ignore,
                max_depth,
                ..Settings::default()
            };
            commands::lint(&ctx, &path, format, settings, no_progress)
        }
        Command::Chain {
            item,
            path,
            json,
            max_depth,
        } => {
            let settings = Settings {
                max_depth,
                ..Settings::default()
            };
            commands::chain(&ctx, &item, &path, json, settings)
        }
        Command::Rules => commands::rules_list(),
        Command::Rule { id } => commands::rule_doc(&id),
        Command::Graph { path, format } => commands::graph(&ctx, &path, format),
        Command::Keys { cmd } => keys::keys(&ctx, cmd),
        Command::Sign(args) => sign::sign(&ctx, &args),
        Command::Verify {
            mut args,
            path,
            json,
            allow_unsigned,
        } => {
            let path = match path {
                Some(p) => p,
                None if args
                    .last()
                    .is_some_and(|a| ctx.sys.is_dir(&Path::new(a).join(".ai"))) =>
                {
                    PathBuf::from(args.pop().unwrap_or_default())
                }
                None => PathBuf::from("."),
            };
            verify::verify(&ctx, &args, &path, json, allow_unsigned)
        }
        Command::Lock { item, path, force } => lock::lock(&ctx, &item, &path, force),
        Command::Exec(args) => exec::exec(&ctx, &args),
    }
}

pub(crate) struct Context<'a> {
    pub sys: &'a dyn System,
    pub system_space: Vec<String>,
    pub user_space: Option<PathBuf>,
}

/// `~` and `~/x` expansion with `HOME`.
fn expand_tilde(sys: &dyn System, p: &str) -> PathBuf {
    match (p.strip_prefix('~'), sys.env_var("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{home}{rest}"))
        }
        _ => PathBuf::from(p),
    }
}

fn absolute(sys: &dyn System, p: &Path) -> anyhow::Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    let cwd = sys.current_dir()?;
    let joined = cwd.join(p);
    // Lexically drop `.` components so displayed paths stay tidy.
    Ok(joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect())
}

impl Context<'_> {
    /// The user space base directory (`.ai` is appended): `--user-space`, `USER_SPACE`, then
    /// `HOME`; `None` when none is set.
    pub fn user_base(&self) -> anyhow::Result<Option<PathBuf>> {
        let sys = self.sys;
        if let Some(p) = &self.user_space {
            return absolute(sys, p).map(Some);
        }
        if let Some(s) = sys.env_var("USER_SPACE").filter(|s| !s.is_empty()) {
            return absolute(sys, &expand_tilde(sys, &s)).map(Some);
        }
        Ok(sys
            .env_var("HOME")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from))
    }

    /// The spaces in search order: project, user, bundles.
    pub fn spaces(&self, project: &Path) -> anyhow::Result<(Vec<SpaceSpec>, Vec<String>)> {
        let sys = self.sys;
        let mut notices = Vec::new();
        let project = absolute(sys, project)?;
        if !sys.is_dir(&project) {
            anyhow::bail!("project path {} is not a directory", project.display());
        }
        let mut specs = vec![SpaceSpec {
            space: Space::Project,
            source: SpaceSource::Dir(project.clone()),
        }];
        if let Some(user) = self.user_base()? {
            let same = sys
                .canonicalize(&user)
                .ok()
                .zip(sys.canonicalize(&project).ok())
                .is_some_and(|(a, b)| a == b);
            if same {
                notices.push(format!(
                    "the user space is the project directory ({}); it is loaded once, as the project",
                    project.display()
                ));
            } else if sys.is_dir(&user.join(".ai")) || self.user_space.is_some() {
                specs.push(SpaceSpec {
                    space: Space::User,
                    source: SpaceSource::Dir(user),
                });
            }
        }
        let mut bundles: Vec<String> = self.system_space.clone();
        if bundles.is_empty()
            && let Some(env) = sys.env_var("RYE_SYSTEM_SPACE")
        {
            bundles = env
                .split(':')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
        }
        if bundles.is_empty() {
            specs.push(SpaceSpec {
                space: Space::System {
                    order: 0,
                    bundle: Arc::from("ryechain"),
                },
                source: SpaceSource::Embedded,
            });
        }
        for (i, b) in bundles.iter().enumerate() {
            let (id, dir) = match b.split_once('=') {
                Some((id, dir)) if !id.is_empty() && !id.contains('/') => {
                    (Some(id.to_owned()), dir)
                }
                _ => (None, b.as_str()),
            };
            let dir = absolute(sys, &expand_tilde(sys, dir))?;
            if !sys.is_dir(&dir.join(".ai")) {
                anyhow::bail!("system space {} has no `.ai/` directory", dir.display());
            }
            let id = id.unwrap_or_else(|| {
                dir.file_name().map_or_else(
                    || format!("bundle{i}"),
                    |n| n.to_string_lossy().into_owned(),
                )
            });
            let order = u16::try_from(i).unwrap_or(u16::MAX);
            specs.push(SpaceSpec {
                space: Space::System {
                    order,
                    bundle: Arc::from(id),
                },
                source: SpaceSource::Dir(dir),
            });
        }
        Ok((specs, notices))
    }

    /// Load the spaces into a fresh host.
    pub fn host(&self, project: &Path, settings: Settings) -> anyhow::Result<(Host, Vec<String>)> {
        let (specs, mut notices) = self.spaces(project)?;
        let outcome = load(self.sys, &specs);
        notices.extend(outcome.notices);
        let mut host = Host::new();
        let mut change = outcome.change;
        change.settings = Some(settings);
        host.apply(change);
        Ok((host, notices))
    }

    /// The spaces of `host`, loaded lazily for the chains of `items` only: the base load
    /// (extractors, config, trust store) and the candidate files of each chain element.
    pub fn item_host(
        &self,
        project: &Path,
        settings: Settings,
        items: &[String],
    ) -> anyhow::Result<(Host, Vec<String>)> {
        let (specs, mut notices) = self.spaces(project)?;
        let (host, _loader, load_notices) = load_items(self.sys, &specs, items, settings);
        notices.extend(load_notices);
        Ok((host, notices))
    }
}

/// The wall clock as (seconds since the Unix epoch, microseconds), for signature timestamps and
/// lockfile `generated_at`.
pub(crate) fn now() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (
        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        d.subsec_micros(),
    )
}

/// Write to stdout; a reader that went away (a closed pipe) is not an error, as for `grep`.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::anyhow!("cannot write to standard output: {e}"))
        }
        _ => Ok(()),
    }
}

pub(crate) fn print_notices(notices: &[String]) {
    for n in notices {
        eprintln!("warning: {n}");
    }
}

pub(crate) fn use_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Apply a change to an existing host (used by `--watch` and tests).
pub fn apply(host: &mut Host, change: Change) {
    host.apply(change);
}
