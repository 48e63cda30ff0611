//! L6 the arguments of one `rye_load` (§12.8) or `rye_sign` (§12.9) call read from the client's
//! JSON: names, types and spaces checked by hand, each problem answered as a sentence the agent
//! can act on (the sentences are `args`'s, shared with execute and search).

use serde_json::{Map, Value as Json};

use super::args::{missing, mistyped, required_str};
use super::tools::{LOAD_ARGUMENTS, SIGN_ARGUMENTS};
use crate::integrity::ItemKind;
use crate::model::SpaceKind;

/// One load call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadArgs {
    pub kind: ItemKind,
    pub item_id: String,
    pub project_path: Option<String>,
    /// `None`: the first space that holds it, project → user → system (the seed-era cascade).
    pub source: Option<SpaceKind>,
    /// Copy the item into this space (project or user).
    pub destination: Option<SpaceKind>,
}

/// One sign call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignArgs {
    pub kind: ItemKind,
    /// An id, or a glob with `*` / `?` that signs a batch.
    pub item_id: String,
    pub project_path: Option<String>,
    /// The space whose files are signed: project or user.
    pub space: SpaceKind,
}

/// Refuse an argument no schema lists, naming the nearest known one.
fn known_only(args: &Map<String, Json>, known: &[&str]) -> Result<(), String> {
    let Some(name) = args.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let meant = crate::message::nearest(name, known.iter().copied())
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    Err(format!(
        "Unknown argument `{name}`{meant}; the arguments are {}",
        known.join(", ")
    ))
}

fn item_kind(args: &Map<String, Json>) -> Result<ItemKind, String> {
    let t = required_str(args, "item_type")?;
    ItemKind::from_name(&t).ok_or_else(|| format!("Unknown item type: {t}"))
}

fn project_path(args: &Map<String, Json>) -> Result<Option<String>, String> {
    match args.get("project_path") {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(mistyped("project_path", "a string", other)),
    }
}

/// An optional space argument among `allowed` (absent or null: `None`).
fn space(
    args: &Map<String, Json>,
    name: &str,
    allowed: &[SpaceKind],
) -> Result<Option<SpaceKind>, String> {
    let value = match args.get(name) {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::String(s)) => s,
        Some(other) => return Err(mistyped(name, "a string", other)),
    };
    let names: Vec<&str> = allowed.iter().map(|s| s.name()).collect();
    allowed
        .iter()
        .copied()
        .find(|s| s.name() == value)
        .map(Some)
        .ok_or_else(|| {
            let why = if value == "system" {
                " (system bundles are immutable)"
            } else {
                ""
            };
            format!(
                "Argument `{name}` must be one of {}, not `{value}`{why}",
                names.join(", ")
            )
        })
}

const WRITABLE: [SpaceKind; 2] = [SpaceKind::Project, SpaceKind::User];

/// Read the arguments of a load call.
pub fn read_load(arguments: Option<&Map<String, Json>>) -> Result<LoadArgs, String> {
    let empty = Map::new();
    let args = arguments.unwrap_or(&empty);
    known_only(args, &LOAD_ARGUMENTS)?;
    Ok(LoadArgs {
        kind: item_kind(args)?,
        item_id: required_str(args, "item_id")?,
        project_path: project_path(args)?,
        source: space(
            args,
            "source",
            &[SpaceKind::Project, SpaceKind::User, SpaceKind::System],
        )?,
        destination: space(args, "destination", &WRITABLE)?,
    })
}

/// Read the arguments of a sign call (`source` defaults to the project, as the reference's).
pub fn read_sign(arguments: Option<&Map<String, Json>>) -> Result<SignArgs, String> {
    let empty = Map::new();
    let args = arguments.unwrap_or(&empty);
    known_only(args, &SIGN_ARGUMENTS)?;
    let item_id = required_str(args, "item_id")?;
    if item_id.is_empty() {
        return Err(missing("item_id"));
    }
    Ok(SignArgs {
        kind: item_kind(args)?,
        item_id,
        project_path: project_path(args)?,
        space: space(args, "source", &WRITABLE)?.unwrap_or(SpaceKind::Project),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Json) -> Map<String, Json> {
        match v {
            Json::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn load_arguments_cascade_by_default_and_name_what_is_wrong() {
        let a = read_load(Some(&obj(json!({
            "item_type": "knowledge", "item_id": "notes/x", "project_path": "/p"
        }))))
        .unwrap();
        assert_eq!(a.kind, ItemKind::Knowledge);
        assert_eq!((a.source, a.destination), (None, None));
        let a = read_load(Some(&obj(json!({
            "item_type": "tool", "item_id": "x", "source": "system", "destination": "user"
        }))))
        .unwrap();
        assert_eq!(a.source, Some(SpaceKind::System));
        assert_eq!(a.destination, Some(SpaceKind::User));
        let e = read_load(Some(&obj(json!({
            "item_type": "tool", "item_id": "x", "destination": "system"
        }))))
        .unwrap_err();
        assert!(
            e.contains("must be one of project, user, not `system` (system bundles are immutable)"),
            "{e}"
        );
        let e = read_load(Some(&obj(
            json!({"item_type": "tool", "item_id": "x", "sorce": "user"}),
        )))
        .unwrap_err();
        assert!(
            e.contains("Unknown argument `sorce` (did you mean `source`?)"),
            "{e}"
        );
        let e = read_load(Some(&obj(json!({"item_type": "script", "item_id": "x"})))).unwrap_err();
        assert_eq!(e, "Unknown item type: script");
        let e = read_load(Some(&obj(json!({"item_type": "tool", "item_id": 3})))).unwrap_err();
        assert_eq!(e, "Argument `item_id` must be a string, not a number");
    }

    #[test]
    fn sign_arguments_default_to_the_project_and_refuse_the_system_space() {
        let a = read_sign(Some(&obj(
            json!({"item_type": "tool", "item_id": "acme/*"}),
        )))
        .unwrap();
        assert_eq!(a.space, SpaceKind::Project);
        assert_eq!(a.item_id, "acme/*");
        let a = read_sign(Some(&obj(
            json!({"item_type": "directive", "item_id": "d", "source": "user"}),
        )))
        .unwrap();
        assert_eq!((a.kind, a.space), (ItemKind::Directive, SpaceKind::User));
        let e = read_sign(Some(&obj(
            json!({"item_type": "tool", "item_id": "x", "source": "system"}),
        )))
        .unwrap_err();
        assert!(e.contains("(system bundles are immutable)"), "{e}");
        let e = read_sign(Some(&obj(json!({"item_type": "tool"})))).unwrap_err();
        assert!(e.starts_with("Missing required argument `item_id`"), "{e}");
        let e = read_sign(Some(&obj(json!({"item_type": "tool", "item_id": ""})))).unwrap_err();
        assert!(e.starts_with("Missing required argument `item_id`"), "{e}");
    }
}
