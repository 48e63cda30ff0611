//! L6 `ryechain man`: the manual in roff, one page for the command and one per subcommand
//! (`ryechain-lint(1)`, …), each with the ENVIRONMENT it reads and its EXIT STATUS.

use std::path::Path;

use clap::CommandFactory;
use roff::{Roff, bold, roman};

/// The variables ryechain reads, and what for.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "USER_SPACE",
        "The user space: a directory holding `.ai/` (default: the home directory). Also --user-space.",
    ),
    (
        "RYE_SYSTEM_SPACE",
        "System bundles, colon-separated, each a directory holding `.ai/` (default: the bundle built into ryechain). Also --system-space.",
    ),
    (
        "RYE_SIGNING_KEY_DIR",
        "Where the signing key pair is (default: the user space's `.ai/config/keys/signing`). A folder that holds no key is an error, never a fresh key.",
    ),
    (
        "RYE_PYTHON, RYE_NODE",
        "The interpreters the shipped runtimes run, when set in the environment of `exec`.",
    ),
    (
        "RYECHAIN_CACHE_DIR, XDG_CACHE_HOME",
        "Where the lint cache is kept (default: `$XDG_CACHE_HOME/ryechain`, else `~/.cache/ryechain`).",
    ),
    (
        "RYECHAIN_MCP_TOKEN",
        "The bearer token of `mcp --http` (unless --token-file names a file holding it); never passed on to tools.",
    ),
    ("NO_COLOR", "Set (to anything): no colour in the output."),
    (
        "HOME",
        "The default user space, and the default cache folder's parent.",
    ),
];

/// One exit status per line: (status, meaning).
const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Success: no error findings, the tool or check succeeded.",
    ),
    (
        "1",
        "Findings with errors, a tool or a check that failed, or an item that is not found.",
    ),
    (
        "2",
        "A usage error (an unknown flag, bad --params JSON, an item id that can never name a file, no `.ai/` found) or an internal error.",
    ),
];

/// The page of `ryechain` (`sub: None`) or of one subcommand, in roff. `Err`: no such
/// subcommand.
pub fn page(sub: Option<&str>) -> Result<Vec<u8>, String> {
    let root = super::Cli::command();
    let cmd = match sub {
        None => root,
        Some(name) => root
            .find_subcommand(name)
            .cloned()
            .ok_or_else(|| format!("there is no subcommand `{name}`"))?
            .name(format!("ryechain-{name}"))
            .bin_name(format!("ryechain {name}"))
            .version(super::VERSION),
    };
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    let io = |e: std::io::Error| e.to_string();
    man.render_title(&mut out).map_err(io)?;
    man.render_name_section(&mut out).map_err(io)?;
    man.render_synopsis_section(&mut out).map_err(io)?;
    man.render_description_section(&mut out).map_err(io)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).map_err(io)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out).map_err(io)?;
    }
    if cmd.get_after_long_help().is_some() || cmd.get_after_help().is_some() {
        man.render_extra_section(&mut out).map_err(io)?;
    }
    let mut roff = Roff::default();
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, what) in ENVIRONMENT {
        roff.control("TP", []);
        roff.text([bold(*name)]);
        roff.text([roman(*what)]);
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (status, what) in EXIT_STATUS {
        roff.control("TP", []);
        roff.text([bold(*status)]);
        roff.text([roman(*what)]);
    }
    roff.to_writer(&mut out).map_err(io)?;
    man.render_version_section(&mut out).map_err(io)?;
    Ok(out)
}

/// Write `ryechain.1` and `ryechain-<sub>.1` for every subcommand into `dir`: the files written.
pub fn write_all(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut names: Vec<Option<String>> = vec![None];
    names.extend(
        super::Cli::command()
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| Some(s.get_name().to_owned())),
    );
    let mut written = Vec::new();
    for name in names {
        let page = page(name.as_deref()).map_err(anyhow::Error::msg)?;
        let file = dir.join(match &name {
            None => "ryechain.1".to_owned(),
            Some(n) => format!("ryechain-{n}.1"),
        });
        std::fs::write(&file, page)?;
        written.push(file);
    }
    Ok(written)
}
