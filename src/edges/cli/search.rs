//! L6 `ryechain search QUERY [PATH]`: the search `rye_search` answers (§12.7), for people: the
//! spaces loaded, the query run through `Analysis::search`, a compact ranked list (score, id,
//! space, description) or `rye_search`'s JSON. Exit 0 with results, 1 with none, 2 for a query
//! that does not parse (shown with a caret under the column that breaks it).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Context, OutputFormat};
use crate::db::Settings;
use crate::facts::search::{DEFAULT_LIMIT, SearchError, SearchRequest, SortBy, Source};
use crate::integrity::ItemKind;

/// The kind of item to search.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    /// Tools (`.ai/tools/`).
    Tool,
    /// Directives (`.ai/directives/`).
    Directive,
    /// Knowledge entries (`.ai/knowledge/`).
    Knowledge,
}

/// Which spaces to search.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    Project,
    User,
    System,
    All,
}

/// The order of the results.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    Score,
    Date,
    Name,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Words that must all match (case-insensitive, anywhere in the name, title, description,
    /// category or preview); `AND`, `OR`, `NOT` in capitals, (groups), "exact phrases",
    /// wild*cards; `*` lists every item.
    query: String,
    /// The project directory (containing `.ai/`).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The kind of item to search.
    #[arg(long = "type", value_enum, default_value = "tool")]
    kind: TypeArg,
    /// Which spaces to search (`rye_search` defaults to the project; people usually want to see
    /// what they can run from it, so the command looks everywhere).
    #[arg(long, value_enum, default_value = "all")]
    source: SourceArg,
    /// How many results to show.
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    limit: usize,
    /// How many results to skip (paging).
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// The order of the results.
    #[arg(long, value_enum, default_value = "score")]
    sort: SortArg,
    /// Let each term be this many edits (Levenshtein) off a word (0: exact).
    #[arg(long, default_value_t = 0, value_name = "N")]
    fuzzy: usize,
    /// A ranked list for people, or `rye_search`'s JSON.
    #[arg(long, value_enum, default_value = "human")]
    format: OutputFormat,
}

pub fn search(ctx: &Context<'_>, args: &SearchArgs) -> anyhow::Result<u8> {
    let source = match args.source {
        SourceArg::Project => Source::Project,
        SourceArg::User => Source::User,
        SourceArg::System => Source::System,
        SourceArg::All => Source::All,
    };
    let sort_by = match args.sort {
        SortArg::Score => SortBy::Score,
        SortArg::Date => SortBy::Date,
        SortArg::Name => SortBy::Name,
    };
    let kind = match args.kind {
        TypeArg::Tool => ItemKind::Tool,
        TypeArg::Directive => ItemKind::Directive,
        TypeArg::Knowledge => ItemKind::Knowledge,
    };
    let req = SearchRequest {
        source,
        limit: args.limit,
        offset: args.offset,
        sort_by,
        fuzzy: args.fuzzy,
        ..SearchRequest::new(kind, &args.query)
    };
    let project = ctx.project_root(&args.path)?;
    let (host, notices) = ctx.host(&project, Settings::default())?;
    super::print_notices(&notices);
    let a = host.analysis();
    let answer = match a.search(&req) {
        Ok(answer) => answer,
        Err(e) => {
            let message = e.to_string();
            match args.format {
                OutputFormat::Json => {
                    let out = crate::render::search::error(Some(&req.query), &message);
                    outln!("{}", serde_json::to_string_pretty(&out)?);
                }
                OutputFormat::Human => {
                    let (shown, column) = match &e {
                        SearchError::Query { field: None, error } => {
                            (req.query.as_str(), Some(error.column))
                        }
                        _ => ("", None),
                    };
                    errln!(
                        "error: {}",
                        crate::render::search::query_error(&message, shown, column)
                    );
                }
            }
            return Ok(2);
        }
    };
    let echo = crate::render::search::Echo {
        query: &req.query,
        item_type: req.kind.name(),
        source: req.source.name(),
        limit: req.limit,
        offset: req.offset,
        scope: None,
        space: None,
    };
    match args.format {
        OutputFormat::Json => {
            let verdicts: Vec<_> = answer
                .hits
                .iter()
                .map(|h| a.verify_file(h.file, &h.id))
                .collect();
            let show = |p: &std::path::Path| p.display().to_string();
            let out = crate::render::search::response(&answer, &verdicts, &echo, &show);
            outln!("{}", serde_json::to_string_pretty(&out)?);
        }
        OutputFormat::Human => {
            crate::cli::write_stdout(&crate::render::search::human(&answer, &echo))?;
        }
    }
    Ok(u8::from(answer.hits.is_empty()))
}
