//! L6 the command-line edge: argument parsing (clap), space setup from flags and environment,
//! running the analysis, printing, progress and exit codes (0 clean, 1 findings, 2 usage/internal).

#![allow(clippy::disallowed_methods, reason = "the CLI edge reads NO_COLOR")]
// Every print goes through `write_stdout` / `write_stderr` (the `outln!` and `errln!` macros), so
// a full disk or a closed stream is an error or silence, never a `println!` panic.
#![warn(clippy::print_stdout, clippy::print_stderr)]

/// `println!` to stdout through [`write_stdout`]: a write error returns from the enclosing
/// function with an error (exit 2, one line on stderr); a closed pipe is silence.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}

/// `eprintln!` through [`write_stderr`], which never panics (there is nowhere left to report a
/// failing stderr).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::write_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod clean;
mod commands;
mod complete;
mod config;
mod exec;
mod fix;
mod graph_run;
mod keys;
mod load;
mod lock;
mod lsp;
mod manual;
mod mcp_call;
mod scaffold;
mod search;
mod sign;
mod verify;
mod watch;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use clap_complete::ArgValueCompleter;

use crate::analysis::Host;
use crate::db::Settings;
use crate::load::{SpaceSource, SpaceSpec, load, load_items};
use crate::model::{Space, SpaceKind};
use crate::system::System;
use crate::system::os::OsSystem;

/// `0.1.0 (1a2b3c4d5 2026-11-27)` from a git checkout, as cargo prints its own version; the bare
/// version otherwise.
const VERSION: &str = match env!("RYECHAIN_COMMIT").is_empty() {
    true => env!("CARGO_PKG_VERSION"),
    false => concat!(
        env!("CARGO_PKG_VERSION"),
        " (",
        env!("RYECHAIN_COMMIT"),
        ")"
    ),
};

#[derive(Parser, Debug)]
#[command(
    name = "ryechain",
    version = VERSION,
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
    /// When to colour the output (`auto`: on a terminal, unless `NO_COLOR` is set; `FORCE_COLOR`
    /// colours a pipe too).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// Each finding with its source excerpt, help and notes (rustc's style).
    #[value(alias = "full")]
    Human,
    /// One line per finding: `path:line:col: rule message`.
    Concise,
    Json,
    Sarif,
}

/// The format of a command's answer: for people, or JSON for programs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Human,
    Json,
}

/// When to colour the output.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (or `FORCE_COLOR` asks for it anyway).
    #[default]
    Auto,
    Always,
    Never,
}

/// The `--color` of this run.
static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// `json`: the hidden `--json` of before, or `--format json`.
fn wants_json(json: bool, format: Option<OutputFormat>) -> bool {
    json || format == Some(OutputFormat::Json)
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Json,
}

/// Which rules run, for `lint` and `lsp`.
#[derive(clap::Args, Debug)]
struct RuleArgs {
    /// Only these rules or families (comma-separated; `ALL` for all).
    #[arg(long, value_delimiter = ',', add = ArgValueCompleter::new(complete::rule_names))]
    select: Option<Vec<String>>,
    /// Skip these rules or families (comma-separated).
    #[arg(long, value_delimiter = ',', add = ArgValueCompleter::new(complete::rule_names))]
    ignore: Vec<String>,
    /// Maximum chain length (default 10, or `chain.max_depth` in `.ai/config/ryechain.yaml`).
    #[arg(long)]
    max_depth: Option<usize>,
}

impl RuleArgs {
    fn settings(self) -> Settings {
        Settings {
            select: self.select,
            ignore: self.ignore,
            max_depth: self.max_depth,
            ..Settings::default()
        }
    }
}

/// A space `lint --space` reports whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SpaceArg {
    Project,
    User,
    System,
    All,
}

/// The spaces `--space` names (none named: the project's).
fn space_set(args: &[SpaceArg]) -> Option<crate::model::SpaceSet> {
    use crate::model::{SpaceKind, SpaceSet};
    if args.is_empty() {
        return None;
    }
    Some(args.iter().fold(SpaceSet::NONE, |set, a| match a {
        SpaceArg::Project => set.with(SpaceKind::Project),
        SpaceArg::User => set.with(SpaceKind::User),
        SpaceArg::System => set.with(SpaceKind::System),
        SpaceArg::All => SpaceSet::ALL,
    }))
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate the project's files and every file of another space its tools use.
    Lint {
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// How to print the findings (also `--output-format`, ruff's name).
        #[arg(long, alias = "output-format", value_enum, default_value = "human")]
        format: LintFormat,
        #[command(flatten)]
        rules: RuleArgs,
        /// Never show a progress bar.
        #[arg(long)]
        no_progress: bool,
        /// Print how many findings each rule reported (a table, or JSON with `--format json`)
        /// instead of the findings.
        #[arg(long)]
        statistics: bool,
        /// Write the report to this file instead of standard output.
        #[arg(long, short = 'o', value_name = "PATH")]
        output_file: Option<PathBuf>,
        /// Exit 0 even when errors are found (internal errors still exit 2).
        #[arg(long)]
        exit_zero: bool,
        /// Print only the findings: no summary line, no warnings about the setup.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// List the files that would be checked, then exit without checking them.
        #[arg(long)]
        show_files: bool,
        /// After the report, watch the spaces and print the findings each change adds or fixes
        /// (human, or one JSON object per change with `--format json`) until Ctrl-C.
        #[arg(long, conflicts_with_all = ["statistics", "output_file", "show_files"])]
        watch: bool,
        /// Neither read nor write the lint cache (a full run; see "Lint cache" in the README).
        #[arg(long)]
        no_cache: bool,
        /// Apply the certain fixes to the project's files (a typo with one close id, the header
        /// line a script forgot, an unused suppression, a stale lockfile whose chain is signed),
        /// then report what remains. A fixed signed file must be signed again (`ryechain sign`).
        #[arg(long, conflicts_with_all = ["watch", "show_files"])]
        fix: bool,
        /// Print the fixes `--fix` would make as unified diffs, change nothing; exit 1 when there
        /// are some.
        #[arg(long, conflicts_with_all = ["fix", "watch", "show_files", "statistics"])]
        diff: bool,
        /// Report every file of these spaces (comma-separated or repeated: project, user,
        /// system, all). By default the project's files are reported, with the files of other
        /// spaces its tools use; every space is read either way.
        #[arg(long, value_enum, value_delimiter = ',', value_name = "SPACE")]
        space: Vec<SpaceArg>,
    },
    /// Show the chain of one tool: files, spaces, shadowed candidates, validation.
    Chain {
        /// The tool's item id (`rye/bash/bash`).
        #[arg(add = ArgValueCompleter::new(complete::tool_ids))]
        item: String,
        #[arg(default_value = ".")]
        path: PathBuf,
        /// `json`: the dry-run response of `rye_execute` (seed 003).
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// The same as `--format json`.
        #[arg(long, hide = true)]
        json: bool,
        #[arg(long)]
        max_depth: Option<usize>,
    },
    /// List the rules.
    Rules,
    /// Show one rule's documentation.
    Rule {
        #[arg(add = ArgValueCompleter::new(complete::rule_ids))]
        id: String,
    },
    /// Write the lockfile of a tool whose chain is valid to `<PATH>/.ai/lockfiles/<id>@<version>.lock.json`.
    Lock {
        /// The tool's item id (`rye/bash/bash`).
        #[arg(add = ArgValueCompleter::new(complete::tool_ids))]
        item: String,
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Overwrite an existing lockfile.
        #[arg(long)]
        force: bool,
    },
    /// Make a project here: `.ai/` with `tools/` and a config.
    Init {
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Make a new item from a template (`ryechain new tool acme/greet --runtime bash`).
    New {
        #[command(subcommand)]
        what: scaffold::NewCommand,
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
    /// The state-graph runtime's process (internal: its runtime YAML runs it, a person never
    /// does): walks a graph tool and prints its answer as JSON.
    #[command(name = "graph-run", hide = true)]
    GraphRun(graph_run::GraphRunArgs),
    /// Find tools, directives or knowledge by keyword (the `rye_search` query language): a
    /// ranked list of ids, or JSON.
    Search(search::SearchArgs),
    /// Print an item's content, verified; `--to` copies it into the project or user space.
    Load(load::LoadArgs),
    /// Verify item signatures (all items by default, or the chains of the named tools).
    Verify {
        /// Tool item ids whose chains to verify (none = every item of every space), optionally
        /// followed by the project directory: a last argument that is a directory containing
        /// `.ai/` is the PATH.
        #[arg(add = ArgValueCompleter::new(complete::tool_ids))]
        args: Vec<String>,
        /// The project directory (instead of a trailing PATH argument).
        #[arg(long)]
        path: Option<PathBuf>,
        /// `json`: the verdicts as JSON.
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// The same as `--format json`.
        #[arg(long, hide = true)]
        json: bool,
        /// Accept unsigned items (as `integrity.require_signatures: false` does).
        #[arg(long)]
        allow_unsigned: bool,
    },
    /// Run the language server on stdin/stdout (diagnostics as you type, hover, go-to-definition,
    /// completion of executor ids, the fixes of `lint --fix` as quick fixes, and "Re-sign this
    /// item"). The project space is the editor's workspace folder.
    Lsp {
        #[command(flatten)]
        rules: RuleArgs,
    },
    /// Serve MCP on stdin/stdout for agents (with --http, over streamable HTTP behind a bearer
    /// token): the `rye_execute` tool (seed 003) runs tools through
    /// their chains and answers directives and knowledge; `rye_search` finds items. Each call
    /// names its project.
    Mcp(crate::edges::mcp::McpArgs),
    /// Show the settings in force for a project (its `.ai/config/ryechain.yaml` merged over the
    /// user's and the system's), each with the file and line that set it; exit 1 when a config
    /// file has problems.
    Config {
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// `json`: the settings, files and problems as JSON.
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// Print the JSON Schema of `.ai/config/ryechain.yaml` instead (for editors).
        #[arg(long)]
        schema: bool,
    },
    /// Remove the project's lint cache (`--all`: every lint cache in the cache folder).
    Clean {
        /// The project directory (containing `.ai/`).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Every lint cache ryechain wrote, for every project.
        #[arg(long)]
        all: bool,
    },
    /// Print a shell completion script (for example `ryechain completions bash > /etc/bash_completion.d/ryechain`).
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
    /// Print a manual page in roff (`ryechain man lint | man -l -`), or write them all.
    Man {
        /// The subcommand whose page to print (default: `ryechain`'s own).
        command: Option<String>,
        /// Write `ryechain.1` and `ryechain-<command>.1` for every command into this folder.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        out_dir: Option<PathBuf>,
    },
}

/// The command a user coming from another tool means by `word` (`run` → `exec`, `check` →
/// `lint`), when it is not one of ryechain's own.
pub fn command_for(word: &str) -> Option<&'static str> {
    Some(match word {
        "run" | "execute" | "call" => "exec",
        "check" | "validate" => "lint",
        "resolve" | "show" => "chain",
        "create" | "scaffold" | "generate" => "new",
        "trust" => "keys trust",
        "rules-list" | "list-rules" => "rules",
        _ => return None,
    })
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    // A worker of the MCP server (`runner::worker`): no command line to read, no rules to compile.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == crate::runner::worker::WORKER_ARG)
    {
        return ExitCode::from(crate::runner::worker::serve());
    }
    // The MCP runtimes' client (`mcp_call`): internal, so no help, completion or man page names it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == mcp_call::ARG)
    {
        let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
        return ExitCode::from(mcp_call::main(&argv));
    }
    // `COMPLETE=bash ryechain` prints the shell's hook; the hook calls back here to complete
    // (item ids, rule ids), then the process exits.
    clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command).complete();
    crate::memory::purge_freed_pages_sooner();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // Words other tools use for these commands (clap suggests only near spellings).
            match std::env::args().nth(1).as_deref().and_then(command_for) {
                Some(ours) if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
                    let word = std::env::args().nth(1).unwrap_or_default();
                    errln!(
                        "error: unrecognized subcommand '{word}'\n\n  tip: the command for that is `ryechain {ours}`\n\nUsage: ryechain [OPTIONS] <COMMAND>\n\nFor more information, try '--help'."
                    );
                }
                _ => {
                    let _ = e.print();
                }
            }
            return ExitCode::from(2);
        }
        // `--help` and `--version` print to stdout, which may be full or closed too.
        Err(e) => {
            return match e.print() {
                Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                    errln!("error: {:#}", stdout_error(&io));
                    ExitCode::from(2)
                }
                _ => ExitCode::SUCCESS,
            };
        }
    };
    let _ = COLOR.set(cli.color);
    if let Err(errors) = crate::rules::registry() {
        for e in errors {
            errln!("error: built-in rule refused: {e}");
        }
        return ExitCode::from(2);
    }
    match run(cli, &OsSystem) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            errln!("error: {e:#}");
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
            rules,
            no_progress,
            statistics,
            output_file,
            exit_zero,
            quiet,
            show_files,
            watch,
            no_cache,
            fix,
            diff,
            space,
        } => {
            let settings = rules.settings();
            let opts = commands::LintArgs {
                fix,
                diff,
                spaces: space_set(&space),
                format,
                no_progress,
                statistics,
                output_file,
                exit_zero,
                quiet,
                show_files,
                watch,
                no_cache,
            };
            commands::lint(&ctx, &path, &opts, settings)
        }
        Command::Chain {
            item,
            path,
            format,
            json,
            max_depth,
        } => {
            let settings = Settings {
                max_depth,
                ..Settings::default()
            };
            commands::chain(&ctx, &item, &path, wants_json(json, format), settings)
        }
        Command::Rules => commands::rules_list(),
        Command::Rule { id } => commands::rule_doc(&id),
        Command::Graph { path, format } => commands::graph(&ctx, &path, format),
        Command::Keys { cmd } => keys::keys(&ctx, cmd),
        Command::Sign(args) => sign::sign(&ctx, &args),
        Command::Verify {
            mut args,
            path,
            format,
            json,
            allow_unsigned,
        } => {
            let json = wants_json(json, format);
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
        Command::Init { path } => scaffold::init(&ctx, &path),
        Command::New { what } => scaffold::new(&ctx, what),
        Command::Exec(args) => exec::exec(&ctx, &args),
        Command::GraphRun(args) => graph_run::graph_run(&ctx, &args),
        Command::Search(args) => search::search(&ctx, &args),
        Command::Load(args) => load::load(&ctx, &args),
        Command::Lsp { rules } => lsp::lsp(&ctx, rules.settings()),
        Command::Mcp(args) => {
            // The calls run on tokio's blocking pool, which needs the space flags by value and a
            // system that lives as long as the process: the OS, which `main` always runs on.
            let owned = Arc::new(Context {
                sys: &OsSystem,
                system_space: ctx.system_space.clone(),
                user_space: ctx.user_space.clone(),
            });
            let for_sign = Arc::clone(&owned);
            let spaces: crate::edges::mcp::Spaces =
                Arc::new(move |project: &Path| owned.spaces(project));
            let sign: crate::edges::mcp::SignItems =
                Arc::new(move |call| sign::sign_call(&for_sign, call));
            crate::edges::mcp::serve(&args, &OsSystem, spaces, sign)
        }
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "ryechain", &mut out);
            write_stdout(&String::from_utf8_lossy(&out))?;
            Ok(0)
        }
        Command::Clean { path, all } => clean::clean(&ctx, &path, all),
        Command::Config {
            path,
            format,
            schema,
        } => config::config(&ctx, &path, format, schema),
        Command::Man { command, out_dir } => {
            if let Some(dir) = out_dir {
                for file in manual::write_all(&dir)? {
                    errln!("wrote {}", file.display());
                }
                return Ok(0);
            }
            match manual::page(command.as_deref()) {
                Ok(page) => {
                    write_stdout(&String::from_utf8_lossy(&page))?;
                    Ok(0)
                }
                Err(e) => {
                    errln!("error: {e}; `ryechain --help` lists them");
                    Ok(2)
                }
            }
        }
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

    /// The project directory, found as cargo finds `Cargo.toml`: the nearest of `path` and its
    /// parents that holds `.ai/` (the user space's own folder is not a project). Absolute and
    /// real: approvals of the keys it ships are bound to it, whichever way it was named (`..`, a
    /// symlink), and paths are shown relative to it. No `.ai/` anywhere up is an error (exit 2).
    pub fn project_root(&self, path: &Path) -> anyhow::Result<PathBuf> {
        let sys = self.sys;
        let start = absolute(sys, path)?;
        if !sys.is_dir(&start) {
            anyhow::bail!("project path {} is not a directory", start.display());
        }
        let start = sys.canonicalize(&start).unwrap_or(start);
        let user = self.user_base()?.map(|u| sys.canonicalize(&u).unwrap_or(u));
        start
            .ancestors()
            .filter(|dir| Some(*dir) != user.as_deref() || *dir == start.as_path())
            .find(|dir| sys.is_dir(&dir.join(".ai")))
            .map(Path::to_path_buf)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "could not find `.ai/` in {} or any parent directory",
                    start.display()
                )
            })
    }

    /// The spaces in search order: project, user, bundles.
    pub fn spaces(&self, project: &Path) -> anyhow::Result<(Vec<SpaceSpec>, Vec<String>)> {
        let sys = self.sys;
        let mut notices = Vec::new();
        let project = self.project_root(project)?;
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
            // A bundle's own repository checked as the project: its files are read once, as the
            // project's (the reference resolves them from the project first), never also as a
            // second space whose every file would be a "symlink" into the other.
            if sys.canonicalize(&dir).ok().as_deref() == Some(project.as_path()) {
                notices.push(format!(
                    "the system space {} is the project directory; it is loaded once, as the project",
                    dir.display()
                ));
                continue;
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

    /// Where lint caches live: `RYECHAIN_CACHE_DIR`, else `$XDG_CACHE_HOME/ryechain/lint`, else
    /// `~/.cache/ryechain/lint`; `None` when none of these is an absolute path (no cache).
    pub fn lint_cache_dir(&self) -> Option<PathBuf> {
        let abs = |v: Option<String>| v.filter(|s| s.starts_with('/')).map(PathBuf::from);
        if let Some(dir) = abs(self.sys.env_var("RYECHAIN_CACHE_DIR")) {
            return Some(dir);
        }
        if let Some(x) = abs(self.sys.env_var("XDG_CACHE_HOME")) {
            return Some(x.join("ryechain").join("lint"));
        }
        abs(self.sys.env_var("HOME")).map(|h| h.join(".cache").join("ryechain").join("lint"))
    }

    /// The stamp of the running executable: a rebuilt ryechain does not reuse another build's
    /// lint cache.
    pub fn build_stamp(&self) -> Option<crate::system::FileStamp> {
        std::env::current_exe()
            .ok()
            .and_then(|exe| self.sys.stamp(&exe))
    }

    /// Load the spaces into a fresh host.
    pub fn host(&self, project: &Path, settings: Settings) -> anyhow::Result<(Host, Vec<String>)> {
        self.host_with_links(project, settings)
            .map(|(host, notices, _)| (host, notices))
    }

    /// What to add under "… not found: ID": the folders searched, and the nearest id of the
    /// kind the spaces hold ("did you mean"). The spaces are read whole for it: only a command
    /// that is failing pays for it.
    pub fn not_found_help(
        &self,
        project: &Path,
        kind: crate::integrity::ItemKind,
        id: &str,
    ) -> String {
        let Ok((host, _)) = self.host(project, Settings::default()) else {
            return String::new();
        };
        let a = host.analysis();
        let searched: Vec<String> = a
            .searched(kind)
            .iter()
            .map(|(label, dir)| format!("{label} ({})", dir.display()))
            .collect();
        let mut out = format!("  searched in: {}", searched.join(", "));
        if let Some(near) = a.nearest_item(kind, id) {
            out.push_str(&format!("\n  help: did you mean `{near}`?"));
        }
        out
    }

    /// `host`, with the symlinks the load met (`LoadOutcome::links`: what a watch of the
    /// spaces reads again when their targets change).
    pub fn host_with_links(
        &self,
        project: &Path,
        settings: Settings,
    ) -> anyhow::Result<(Host, Vec<String>, Vec<PathBuf>)> {
        self.host_loaded(project, settings, &|specs| load(self.sys, specs))
    }

    /// The spaces with, of the on-disk space of kind `kind`, the files under `dir` (relative to
    /// `.ai/`) and of every space the base load (`load::load_space_dir`): what signing that
    /// space's items reads.
    pub fn space_host(
        &self,
        project: &Path,
        settings: Settings,
        kind: SpaceKind,
        dir: &str,
    ) -> anyhow::Result<(Host, Vec<String>)> {
        self.host_loaded(project, settings, &|specs| {
            crate::load::load_space_dir(self.sys, specs, kind, dir)
        })
        .map(|(host, notices, _)| (host, notices))
    }

    /// A fresh host with `settings` and what `load` loads of the spaces.
    fn host_loaded(
        &self,
        project: &Path,
        settings: Settings,
        load: &dyn Fn(&[SpaceSpec]) -> crate::load::LoadOutcome,
    ) -> anyhow::Result<(Host, Vec<String>, Vec<PathBuf>)> {
        let (specs, mut notices) = self.spaces(project)?;
        let outcome = load(&specs);
        notices.extend(outcome.notices);
        let mut host = Host::new();
        let mut change = outcome.change;
        change.settings = Some(settings);
        host.apply(change);
        Ok((host, notices, outcome.links))
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
pub(crate) use crate::runner::execute::now;

/// Set once stdout's reader has gone away (a closed pipe): later writes are skipped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Write to stdout. A reader that went away (a closed pipe) is not an error, as for `grep`: the
/// rest of the output is dropped silently and the command still finishes (a batch `sign` is not
/// left half done) and exits with its own code. Any other failure (a full disk) is an error the
/// caller returns, which `main` prints as one line and exits 2.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::sync::atomic::Ordering;
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(stdout_error(&e)),
    }
}

fn stdout_error(e: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("cannot write to standard output: {e}")
}

/// Write to stderr, ignoring failures: a stderr that cannot be written has no one to tell.
pub(crate) fn write_stderr(text: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Write the report to `path` (`--output-file`), replacing the file.
pub(crate) fn write_output_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text)
        .map_err(|e| anyhow::anyhow!("cannot write the report to {}: {e}", path.display()))
}

/// Print setup warnings to stderr, each distinct text once.
pub(crate) fn print_notices(notices: &[String]) {
    let mut seen = rustc_hash::FxHashSet::default();
    for n in notices {
        if seen.insert(n.as_str()) {
            errln!("warning: {n}");
        }
    }
}

/// Whether to colour what goes to stdout: `--color`, else `FORCE_COLOR` (set and not `0`), else
/// `NO_COLOR` (set and not empty), else whether stdout is a terminal.
pub(crate) fn use_color() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    match COLOR.get().copied().unwrap_or_default() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto
            if set("FORCE_COLOR") && std::env::var_os("FORCE_COLOR").is_some_and(|v| v != "0") =>
        {
            true
        }
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto => std::io::stdout().is_terminal(),
    }
}
