//! What the YAML loader (`yaml_load`) and its test oracle share: the top-level keys that feed
//! metadata fields, load errors, what follows the first document, and the key rules.

use super::FieldNames;
use super::python::py_float_repr;
use crate::model::Value;

/// Top-level YAML keys feeding each metadata field. The lower-case names of §2.4 come first;
/// the Python spellings are accepted too, as the reference normalisation (§2.3) applies the
/// same table to YAML data; `description` is the YAML spelling of `tool_description`.
pub(crate) const YAML_FIELDS: FieldNames = FieldNames {
    version: &["version", "__version__"],
    tool_type: &["tool_type", "__tool_type__"],
    executor_id: &["executor_id", "__executor_id__"],
    category: &["category", "__category__"],
    tool_description: &["tool_description", "__tool_description__", "description"],
    config_schema: &["config_schema", "CONFIG_SCHEMA"],
    env_config: &["env_config", "ENV_CONFIG"],
    config: &["config", "CONFIG"],
    anchor: &["anchor"],
    verify_deps: &["verify_deps"],
    config_resolve: &["config_resolve", "CONFIG_RESOLVE"],
    inputs: &["inputs", "INPUTS"],
    outputs: &["outputs", "OUTPUTS"],
    child_constraints: &["child_constraints", "CHILD_CONSTRAINTS"],
};

/// A load failure: serde_yaml's message and the byte index into the loaded text it points at.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LoadError {
    pub message: String,
    pub index: Option<usize>,
}

impl From<serde_yaml::Error> for LoadError {
    fn from(e: serde_yaml::Error) -> Self {
        LoadError {
            message: e.to_string(),
            index: e.location().map(|l| l.index()),
        }
    }
}

/// What follows the first document (only the first is read).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Rest {
    /// Nothing, or only empty documents.
    Nothing,
    /// Another document with content.
    MoreContent,
    /// A later document failed to load.
    Error(LoadError),
}

/// Whether a key of the document's root feeds no field and is no `<<` merge: its value is
/// skipped unread.
pub(super) fn unread_top_level_key(name: &str) -> bool {
    name != "<<" && !YAML_FIELDS.contains(name)
}

/// The string a scalar mapping key is stored under; `None` for a sequence or mapping key.
pub(super) fn key_string(key: &Value) -> Option<String> {
    match key {
        Value::Str(s) => Some(s.to_string()),
        Value::Null => Some("null".to_owned()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(py_float_repr(f.0)),
        Value::List(_) | Value::Map(_) => None,
    }
}
