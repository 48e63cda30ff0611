//! L6 `ryechain load ITEM [PATH]` (§12.8, the CLI side of `rye_load`): an item's content, found
//! in the space asked for (or the first that holds it) and verified; `--to` copies it into the
//! project or user space under the same category path.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::Context;
use super::exec::ExecType;
use crate::db::Settings;
use crate::exec::load::{LoadAnswer, LoadRequest};
use crate::model::SpaceKind;
use crate::runner::execute::Session;

/// A space to load from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum FromSpace {
    Project,
    User,
    System,
}

/// A space to copy into.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ToSpace {
    Project,
    User,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadFormat {
    /// The item's content (and where it was copied, on stderr).
    Human,
    /// `rye_load`'s JSON answer.
    Json,
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// The item id (`acme/greet`; a directive's or entry's id without `.md`).
    #[arg(add = clap_complete::ArgValueCompleter::new(super::complete::tool_ids))]
    item: String,
    /// The project directory (containing `.ai/`).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// What the item is.
    #[arg(long = "type", value_enum, default_value = "tool")]
    item_type: ExecType,
    /// The space to load from (default: the first that holds it: project, user, system).
    #[arg(long, value_enum)]
    from: Option<FromSpace>,
    /// Copy the item into this space, under the same category path (never over a file that is
    /// there).
    #[arg(long, value_enum)]
    to: Option<ToSpace>,
    /// Load an unsigned item (as `integrity.require_signatures: false` does).
    #[arg(long)]
    allow_unsigned: bool,
    /// Output format (default: human on a terminal, JSON otherwise).
    #[arg(long, value_enum)]
    format: Option<LoadFormat>,
}

pub fn load(ctx: &Context<'_>, args: &LoadArgs) -> anyhow::Result<u8> {
    if let Some(reason) = crate::model::item_id_problem(&args.item) {
        anyhow::bail!(crate::message::invalid_item_id(&args.item, reason));
    }
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        LoadFormat::Human
    } else {
        LoadFormat::Json
    });
    let (specs, notices) = ctx.spaces(&args.path)?;
    super::print_notices(&notices);
    let mut session = Session::open(ctx.sys, &specs, Settings::default());
    super::print_notices(&std::mem::take(&mut session.notices));
    let req = LoadRequest {
        kind: args.item_type.kind(),
        item_id: args.item.clone(),
        source: args.from.map(|s| match s {
            FromSpace::Project => SpaceKind::Project,
            FromSpace::User => SpaceKind::User,
            FromSpace::System => SpaceKind::System,
        }),
        destination: args.to.map(|s| match s {
            ToSpace::Project => SpaceKind::Project,
            ToSpace::User => SpaceKind::User,
        }),
        policy: session.policy(args.allow_unsigned),
    };
    let (answer, copied) = session.load(&req).map_err(|e| anyhow::anyhow!(e))?;
    match format {
        LoadFormat::Json => {
            let json = crate::render::exec::load_response(&answer, copied.as_deref());
            super::write_stdout(&format!("{}\n", serde_json::to_string_pretty(&json)?))?;
        }
        LoadFormat::Human => match &answer {
            LoadAnswer::Loaded(l) => {
                super::write_stdout(&l.content)?;
                if let Some(path) = &copied {
                    errln!("copied {} ({}) to {}", l.item_id, l.source, path.display());
                }
            }
            LoadAnswer::Error { error, .. } => errln!("error: {error}"),
        },
    }
    Ok(u8::from(matches!(answer, LoadAnswer::Error { .. })))
}
