//! The YAML node both loaders build (`yaml_fast` from libyaml's events, `serde_yaml` through
//! `Deserialize`), its load errors, and the names and key rules they share; `yaml` attaches
//! spans and reads the header from it.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

use super::FieldNames;
use super::python::py_float_repr;

/// How many lines at a mapping's indentation are tried for one key before giving up on its span.
pub(super) const MAX_KEY_CANDIDATES: usize = 64;

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

/// A YAML node as loaded, before spans are attached. Mapping entries keep duplicates.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum YNode {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
    /// The value of a top-level key that feeds no field, skipped unread ([`TopNode`]).
    Skipped,
}

impl YNode {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            YNode::Null => "null",
            YNode::Bool(_) => "bool",
            YNode::Int(_) => "int",
            YNode::Float(_) => "float",
            YNode::Str(_) => "string",
            YNode::Seq(_) => "sequence",
            YNode::Map(_) => "mapping",
            YNode::Skipped => "skipped value",
        }
    }
}

impl<'de> Deserialize<'de> for YNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YNodeVisitor { top: false })
    }
}

/// Whether a key of the document's root feeds no field and is no `<<` merge: its value is
/// skipped unread, by both loaders.
pub(super) fn unread_top_level_key(key: &YNode) -> bool {
    matches!(key, YNode::Str(name) if name != "<<" && !YAML_FIELDS.contains(name))
}

/// A document's root: as [`YNode`], except that the values of top-level keys that feed no
/// field (and are not `<<` merges) are skipped without being built ([`YNode::Skipped`]), so a data
/// file of many keys costs only libyaml's scan.
pub(super) struct TopNode(pub(super) YNode);

impl<'de> Deserialize<'de> for TopNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(YNodeVisitor { top: true })
            .map(TopNode)
    }
}

struct YNodeVisitor {
    top: bool,
}

impl<'de> Visitor<'de> for YNodeVisitor {
    type Value = YNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YNode, E> {
        Ok(YNode::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YNode, E> {
        Ok(YNode::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YNode, E> {
        Ok(i64::try_from(v).map_or(YNode::Float(v as f64), YNode::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<YNode, E> {
        Ok(i64::try_from(v).map_or(YNode::Float(v as f64), YNode::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<YNode, E> {
        Ok(i64::try_from(v).map_or(YNode::Float(v as f64), YNode::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YNode, E> {
        Ok(YNode::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YNode, E> {
        Ok(YNode::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YNode, E> {
        Ok(YNode::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<YNode, E> {
        Ok(YNode::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<YNode, E> {
        Ok(YNode::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<YNode, E> {
        Ok(YNode::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YNode, D::Error> {
        YNode::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<YNode, D::Error> {
        YNode::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<YNode>()? {
            items.push(item);
        }
        Ok(YNode::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YNode, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<YNode>()? {
            let value = if self.top && unread_top_level_key(&key) {
                map.next_value::<de::IgnoredAny>()?;
                YNode::Skipped
            } else {
                map.next_value::<YNode>()?
            };
            entries.push((key, value));
        }
        Ok(YNode::Map(entries))
    }
    /// serde_yaml hands a tagged node (`!tag value`) over as an enum; keep the value.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<YNode, A::Error> {
        let (_tag, contents) = data.variant::<String>()?;
        contents.newtype_variant::<YNode>()
    }
}

/// Whether a value's text holds nothing but node properties (`&anchor`, `!tag`) or a block
/// scalar header (`|`, `>-`, ...): the value itself is then a block below.
pub(super) fn only_node_properties(body: &str) -> bool {
    body.split_whitespace().all(|t| {
        t.starts_with('&')
            || t.starts_with('!')
            || ((t.starts_with('|') || t.starts_with('>'))
                && t[1..]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '+' || c == '-'))
    })
}

/// The string a scalar mapping key is stored under; `None` for a sequence or mapping key.
pub(super) fn key_string(key: &YNode) -> Option<String> {
    match key {
        YNode::Str(s) => Some(s.clone()),
        YNode::Null => Some("null".to_owned()),
        YNode::Bool(b) => Some(b.to_string()),
        YNode::Int(i) => Some(i.to_string()),
        YNode::Float(f) => Some(py_float_repr(*f)),
        YNode::Seq(_) | YNode::Map(_) | YNode::Skipped => None,
    }
}
