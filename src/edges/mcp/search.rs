//! L6 one `rye_search` call (§12.7): its arguments read from the client's JSON (the reference's
//! names, and the seed-era `scope` and `space` that stand for `item_type` and `source`), each
//! problem answered as a sentence the agent can act on; the search answered from the project's
//! warm state (`warm`) and rendered by `render::search`.

use serde_json::{Map, Value as Json};

use super::args::{flag, missing, mistyped, required_str};
use super::tools::SEARCH_ARGUMENTS;
use crate::facts::search::{DEFAULT_LIMIT, SearchRequest, SortBy, Source, parse_scope};
use crate::integrity::ItemKind;

/// The Levenshtein distance of `fuzzy: {"enabled": true}` without one (the reference's example).
pub const DEFAULT_FUZZY_DISTANCE: usize = 2;
/// The word distance of `proximity: {"enabled": true}` without one (§12.7).
pub const DEFAULT_PROXIMITY_DISTANCE: usize = 5;

/// One search call's arguments, types checked and defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchArgs {
    pub request: SearchRequest,
    /// `None` when the call names none (the server's default project may stand in).
    pub project_path: Option<String>,
    /// The seed-era names, answered back beside `item_type` and `source` when the call used
    /// them: the scope as given, the spaces searched.
    pub scope: Option<String>,
    pub space: Option<String>,
}

/// An optional string argument (absent or null: `None`).
fn opt_str(args: &Map<String, Json>, name: &str) -> Result<Option<String>, String> {
    match args.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(mistyped(name, "a string", other)),
    }
}

/// An optional non-negative whole number (absent or null: `default`).
fn count(args: &Map<String, Json>, name: &str, default: usize) -> Result<usize, String> {
    match args.get(name) {
        None | Some(Json::Null) => Ok(default),
        Some(v) => as_count(v).ok_or_else(|| mistyped(name, "a whole number of 0 or more", v)),
    }
}

fn as_count(v: &Json) -> Option<usize> {
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u32::MAX as f64)
            .map(|f| f as u64)
    })?;
    usize::try_from(n).ok()
}

/// A space selection by name.
fn source(name: &str, value: &str) -> Result<Source, String> {
    Source::from_name(value).ok_or_else(|| {
        format!(
            "Argument `{name}` must be one of {}, not `{value}`",
            Source::NAMES.join(", ")
        )
    })
}

/// `{"enabled": bool, "max_distance": n}` (absent, null or not enabled: `None`).
fn switch(
    args: &Map<String, Json>,
    name: &str,
    default_distance: usize,
) -> Result<Option<usize>, String> {
    let obj = match args.get(name) {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Object(obj)) => obj,
        Some(other) => {
            return Err(mistyped(
                name,
                "an object such as {\"enabled\": true, \"max_distance\": 2}",
                other,
            ));
        }
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "enabled" | "max_distance"))
    {
        return Err(format!(
            "Unknown key `{k}` in `{name}`; its keys are enabled, max_distance"
        ));
    }
    let enabled =
        flag(obj, "enabled").map_err(|e| e.replace("`enabled`", &format!("`{name}.enabled`")))?;
    let distance = match obj.get("max_distance") {
        None | Some(Json::Null) => default_distance,
        Some(v) => as_count(v).ok_or_else(|| {
            mistyped(
                &format!("{name}.max_distance"),
                "a whole number of 0 or more",
                v,
            )
        })?,
    };
    Ok(enabled.then_some(distance))
}

/// Read the arguments of a search call. Unknown names are refused, with the nearest known name.
pub fn read(arguments: Option<&Map<String, Json>>) -> Result<SearchArgs, String> {
    let empty = Map::new();
    let args = arguments.unwrap_or(&empty);
    if let Some(name) = args
        .keys()
        .find(|k| !SEARCH_ARGUMENTS.contains(&k.as_str()))
    {
        let meant = crate::message::nearest(name, SEARCH_ARGUMENTS.iter().copied())
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "Unknown argument `{name}`{meant}; the arguments are {}",
            SEARCH_ARGUMENTS.join(", ")
        ));
    }
    let query = required_str(args, "query")?;
    let item_type = opt_str(args, "item_type")?;
    let scope = opt_str(args, "scope")?;
    let (item_kind, id_glob) = match (&item_type, &scope) {
        (None, None) => {
            return Err(format!(
                "{}; or give the seed-era `scope`, such as `tool` or `tool.rye.core.*`",
                missing("item_type")
            ));
        }
        (Some(t), None) => (
            ItemKind::from_name(t).ok_or_else(|| format!("Unknown item type: {t}"))?,
            None,
        ),
        (given, Some(s)) => {
            let (k, glob) = parse_scope(s)?;
            if let Some(t) = given
                && t != k.name()
            {
                return Err(format!(
                    "Arguments `item_type` ({t}) and `scope` ({s}) name different item types; give one of them"
                ));
            }
            (k, glob)
        }
    };
    let space = opt_str(args, "space")?;
    // A seed-era call (`scope` or `space`) searches every space unless it says otherwise.
    let seed_era = scope.is_some() || space.is_some();
    let chosen = match (opt_str(args, "source")?, &space) {
        (None, None) if seed_era => Source::All,
        (None, None) => Source::Project,
        (Some(s), None) => source("source", &s)?,
        (None, Some(s)) => source("space", s)?,
        (Some(a), Some(b)) => {
            let (x, y) = (source("source", &a)?, source("space", b)?);
            if x != y {
                return Err(format!(
                    "Arguments `source` ({a}) and `space` ({b}) name different spaces; give one of them"
                ));
            }
            x
        }
    };
    let sort_by = match opt_str(args, "sort_by")? {
        None => SortBy::Score,
        Some(s) => SortBy::from_name(&s).ok_or_else(|| {
            format!(
                "Argument `sort_by` must be one of {}, not `{s}`",
                SortBy::NAMES.join(", ")
            )
        })?,
    };
    let fields = match args.get("fields") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Json::String(q) => Ok((k.clone(), q.clone())),
                other => Err(mistyped(&format!("fields.{k}"), "a query string", other)),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(mistyped("fields", "an object of field queries", other)),
    };
    let filters = match args.get("filters") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(other) => return Err(mistyped("filters", "an object of field values", other)),
    };
    let request = SearchRequest {
        kind: item_kind,
        query,
        source: chosen,
        id_glob,
        limit: count(args, "limit", DEFAULT_LIMIT)?,
        offset: count(args, "offset", 0)?,
        sort_by,
        fields,
        filters,
        fuzzy: switch(args, "fuzzy", DEFAULT_FUZZY_DISTANCE)?.unwrap_or(0),
        proximity: switch(args, "proximity", DEFAULT_PROXIMITY_DISTANCE)?,
    };
    let project_path = match args.get("project_path") {
        None => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(other) => return Err(mistyped("project_path", "a string", other)),
    };
    Ok(SearchArgs {
        project_path,
        scope,
        space: seed_era.then(|| request.source.name().to_owned()),
        request,
    })
}

/// The query of a call's arguments, if it names one (error answers carry it, as the
/// reference's do).
pub fn query_of(arguments: Option<&Map<String, Json>>) -> Option<String> {
    arguments?.get("query")?.as_str().map(str::to_owned)
}
