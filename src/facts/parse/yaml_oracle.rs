//! The test oracle of the YAML loader: the same stream read through `serde_yaml` into a plain
//! node tree, compared with what `yaml_load` gives (the differential tests and the fuzz target),
//! and the check that every span the loader gives holds the text of its value.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

use super::yaml_load::{Converter, Loaded, load};
use super::yaml_node::{LoadError, Rest, key_string, unread_top_level_key};
use crate::model::{Spanned, Value};

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

impl<'de> Deserialize<'de> for YNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YNodeVisitor { top: false })
    }
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
            let value =
                if self.top && matches!(&key, YNode::Str(name) if unread_top_level_key(name)) {
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

/// The first document's root (`Null` for an empty text) and what follows it, through
/// `serde_yaml` (every YAML feature; the reference the loader is checked against).
pub(super) fn load_with_serde(text: &str) -> Result<(YNode, Rest), LoadError> {
    let mut documents = serde_yaml::Deserializer::from_str(text);
    let first = match documents
        .next()
        .map(|d| TopNode::deserialize(d).map(|t| t.0))
    {
        None => YNode::Null,
        Some(Err(e)) => return Err(e.into()),
        Some(Ok(node)) => node,
    };
    // Later documents: the serde_yaml iterator repeats an error forever, so stop at the first.
    for next in documents {
        return Ok(match YNode::deserialize(next) {
            Ok(YNode::Null) => continue,
            Ok(_) => (first, Rest::MoreContent),
            Err(e) => (first, Rest::Error(e.into())),
        });
    }
    Ok((first, Rest::Nothing))
}

/// A node in one canonical text: what both sides are compared by (through `Debug` of floats,
/// so a NaN equals a NaN; entries skipped unread and non-scalar keys left out).
fn canon_ynode(n: &YNode) -> String {
    match n {
        YNode::Null | YNode::Skipped => "~".to_owned(),
        YNode::Bool(b) => format!("{b}"),
        YNode::Int(i) => format!("i{i}"),
        YNode::Float(f) => format!("f{f:?}"),
        YNode::Str(s) => format!("{s:?}"),
        YNode::Seq(items) => format!(
            "[{}]",
            items.iter().map(canon_ynode).collect::<Vec<_>>().join(", ")
        ),
        YNode::Map(entries) => {
            let shown: Vec<String> = entries
                .iter()
                .filter(|(_, v)| !matches!(v, YNode::Skipped))
                .filter_map(|(k, v)| Some(format!("{:?}: {}", ynode_key(k)?, canon_ynode(v))))
                .collect();
            format!("{{{}}}", shown.join(", "))
        }
    }
}

fn ynode_key(k: &YNode) -> Option<String> {
    // The loader's own rule, on the scalar the oracle read.
    key_string(&match k {
        YNode::Str(s) => Value::Str(s.as_str().into()),
        YNode::Null => Value::Null,
        YNode::Bool(b) => Value::Bool(*b),
        YNode::Int(i) => Value::Int(*i),
        YNode::Float(f) => Value::Float(crate::model::F64(*f)),
        YNode::Seq(_) | YNode::Map(_) | YNode::Skipped => return None,
    })
}

pub(super) fn canon_value(v: &Value) -> String {
    match v {
        Value::Null => "~".to_owned(),
        Value::Bool(b) => format!("{b}"),
        Value::Int(i) => format!("i{i}"),
        Value::Float(f) => format!("f{:?}", f.0),
        Value::Str(s) => format!("{:?}", s.as_str()),
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| canon_value(&i.value))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{:?}: {}", k.value.as_str(), canon_value(&v.value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The loader's answer for `text` in the oracle's terms: merge keys not applied (serde_yaml's
/// node keeps them as entries). `None` when the loader stopped at the nesting limit, where the
/// nesting guard gives the verdict.
fn ours(text: &str) -> Option<Result<(String, Rest), LoadError>> {
    match load(text) {
        Loaded::Failed { deep: true, .. } => None,
        Loaded::Failed { error, .. } => Some(Err(error)),
        Loaded::Stream { first, rest, .. } => {
            let mut convert = Converter::new(text, 0, first.events);
            convert.merge = false;
            Some(convert.root(first.root.as_ref()).map(|root| {
                let root = root.map_or("~".to_owned(), |r| canon_value(&r.value));
                (root, rest)
            }))
        }
    }
}

/// Whether the loader and `serde_yaml` agree on `text`: values, what follows the first
/// document, errors and their positions. `None` when the nesting guard decides the text.
pub fn loaders_agree(text: &str) -> Option<Result<(), String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let ours = ours(text)?;
    let theirs = load_with_serde(text).map(|(root, rest)| (canon_ynode(&root), rest));
    // The one known difference (`yaml_load`'s description): an alias inside the node its anchor
    // names is an unknown anchor to the loader, and serde_yaml follows it round until a limit.
    // Both refuse the document.
    if let (Err(o), Err(t)) = (&ours, &theirs)
        && o.message.starts_with("unknown anchor")
        && (t.message.starts_with("recursion limit exceeded")
            || t.message.starts_with("repetition limit exceeded"))
    {
        return Some(Ok(()));
    }
    let ours = format!("{ours:?}");
    let theirs = format!("{theirs:?}");
    Some(if ours == theirs {
        Ok(())
    } else {
        Err(format!("loader: {ours}\nserde_yaml: {theirs}"))
    })
}

/// Whether every span of the header's entries holds its value's text: the text under a key
/// reads (alone, through `serde_yaml`) as the key, the text under a value as the value. Values
/// reached through aliases or merges, and nodes written with an anchor or tag first, are
/// passed over. The number of spans checked, or what differed.
pub fn spans_hold_their_text(text: &str) -> Result<usize, String> {
    let Ok((entries, _)) = super::yaml::entries(text) else {
        return Ok(0);
    };
    let mut checked = 0;
    for (key, value) in &entries {
        check_span(
            text,
            &Spanned::new(Value::Str(key.value.clone()), key.span),
            true,
            &mut checked,
        )?;
        check_span(text, value, false, &mut checked)?;
    }
    Ok(checked)
}

fn check_span(
    text: &str,
    v: &Spanned<Value>,
    key: bool,
    checked: &mut usize,
) -> Result<(), String> {
    let (s, e) = (v.span.start as usize, v.span.end as usize);
    let Some(under) = text.get(s..e) else {
        return Err(format!("span {s}..{e} is not in the text"));
    };
    // Passed over: a node written with an alias, anchor or tag first, and a collection with a
    // merge key (its entries are not its text).
    if under.starts_with(['*', '&', '!']) || under.contains("<<") {
        return Ok(());
    }
    let line_start = text[..s].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let column = text[line_start..s].chars().count();
    // A block collection is read at its own indentation, and a block scalar with the line
    // break its span stops before.
    let alone = format!("{}{under}\n", " ".repeat(column));
    let read: serde_yaml::Value = match serde_yaml::from_str(&alone) {
        Ok(read) => read,
        // serde_yaml's own mapping refuses duplicate keys, which a header may have.
        Err(err) if err.to_string().contains("duplicate entry") => return Ok(()),
        // An alias inside names an anchor outside the span.
        Err(err) if err.to_string().contains("unknown anchor") => return Ok(()),
        Err(err) => {
            return Err(format!(
                "{under:?} (span {s}..{e}) does not read alone: {err}"
            ));
        }
    };
    let read = if key {
        format!("{:?}", serde_key(&read))
    } else {
        canon_serde(&read)
    };
    let expected = if key {
        format!("{:?}", v.value.as_str().unwrap_or_default())
    } else {
        canon_value(&v.value)
    };
    if read != expected {
        return Err(format!(
            "{under:?} (span {s}..{e}) reads as {read}, not {expected}"
        ));
    }
    *checked += 1;
    if let Value::List(items) = &v.value {
        for item in items.iter() {
            check_span(text, item, false, checked)?;
        }
    }
    if let Value::Map(entries) = &v.value {
        for (k, item) in entries.iter() {
            check_span(
                text,
                &Spanned::new(Value::Str(k.value.clone()), k.span),
                true,
                checked,
            )?;
            check_span(text, item, false, checked)?;
        }
    }
    Ok(())
}

fn serde_key(v: &serde_yaml::Value) -> String {
    match v {
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Null => "null".to_owned(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => super::python::py_float_repr(f),
            _ => n.to_string(),
        },
        serde_yaml::Value::Tagged(t) => serde_key(&t.value),
        _ => String::new(),
    }
}

fn canon_serde(v: &serde_yaml::Value) -> String {
    use serde_yaml::Value as S;
    match v {
        S::Null => "~".to_owned(),
        S::Bool(b) => format!("{b}"),
        S::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => format!("i{i}"),
            (None, Some(f)) => format!("f{f:?}"),
            _ => n.to_string(),
        },
        S::String(s) => format!("{s:?}"),
        S::Sequence(items) => format!(
            "[{}]",
            items.iter().map(canon_serde).collect::<Vec<_>>().join(", ")
        ),
        S::Mapping(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{:?}: {}", serde_key(k), canon_serde(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        S::Tagged(t) => canon_serde(&t.value),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Whether the loader answered `text` the way serde_yaml does (`false`: the nesting guard
    /// decides it).
    fn same(text: &str) -> Result<bool, TestCaseError> {
        match loaders_agree(text) {
            None => Ok(false),
            Some(Ok(())) => Ok(true),
            Some(Err(diff)) => Err(TestCaseError::fail(format!("text: {text:?}\n{diff}"))),
        }
    }

    #[test]
    fn agrees_with_serde_yaml_on_every_scalar_form_and_error() {
        let cases = [
            "",
            "---\n",
            "# only a comment\n",
            "a: 1\nb: -2\nc: +3\nd: 0x1F\ne: -0o17\nf: 0b101\ng: 012\nh: -012\ni: 1_000\n",
            "a: 1.5\nb: 1e3\nc: .inf\nd: -.Inf\ne: .NaN\nf: +.inf\ng: 1e400\nh: 18446744073709551616\n",
            "a: 9223372036854775808\nb: -9223372036854775809\nc: 340282366920938463463374607431768211456\n",
            "a: inf\nb: NaN\nc: Infinity\nd: e3\ne: _1\nf: é1\ng: -inf\nh: +nan\ni: .5\nj: -.5e2\nk: 1.\n",
            "a: ~\nb: null\nc: Null\nd:\ne: true\nf: False\ng: yes\nh: 'true'\ni: \"1\"\n",
            "version: 1.0.0\nconfig:\n  command: [node, '{tool_path}']\n  env: {A: 1, B: \"x\\ty\"}\n",
            "description: |\n  literal\n  text\nother: >\n  folded\n  text\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n---\n---\n...\n",
            "a: 1\n--- [\n",
            "a: 1\nb\n",
            "a: [1, 2\n",
            "a: 'unterminated\n",
            "\tkey: 1\n",
            "a: 1\n a: 2\n",
            "? [complex, key]\n: value\n",
            "- 1\n- two\n- [3]\n",
            "just a scalar\n",
            "a: b: c\n",
            "key: value # comment\nlist:\n- a\n- b\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: \"\\u00e9\\x41\"\nb: 'it''s'\n",
            "unread: {deep: [1, 2, {x: y}]}\nversion: 2\n",
            "<<: {version: 1}\nversion: 2\n",
        ];
        // Anchors, aliases, tags and merge keys too: nothing goes anywhere else now.
        let more = [
            "a: &x 1\nb: *x\n",
            "a: !tag 1\n",
            "a: !!int 1\nb: !!str 2\nc: !!float 3\nd: !!null ~\ne: !!bool true\n",
            "a: !!int abc\n",
            "config: {b: !!bool yes}\n",
            "a: &m {b: 1}\nconfig:\n  <<: *m\n  c: [*m, *m]\n",
            "config: *nowhere\n",
            "unread: &u [1, 2]\nconfig: {x: *u}\n",
            "- !t [1]\n- ! 12\n- !!binary aGk=\n",
            "a: 1\n--- !!int x\n",
        ];
        for text in cases.iter().chain(more.iter()) {
            assert!(same(text).unwrap(), "the nesting guard took {text:?}");
        }
    }

    /// Fragments of YAML, glued at random: most texts are invalid somewhere, so errors (message
    /// and position) are compared as often as values.
    fn fragments() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a",
            "key",
            "version",
            "config",
            "b c",
            "-",
            "- ",
            ": ",
            ":",
            "? ",
            "[",
            "]",
            "{",
            "}",
            ", ",
            "'q'",
            "\"d\\n\"",
            "\"u\\u00e9\"",
            "'",
            "\"",
            "1",
            "-1",
            "0x1F",
            "012",
            "1e3",
            ".inf",
            ".nan",
            "~",
            "null",
            "True",
            "+1",
            "1_000",
            "0b101",
            "# c",
            "|",
            ">",
            "\n",
            "\n  ",
            "\n    ",
            "\n- ",
            "---",
            "...",
            "\t",
            "&a ",
            "*a",
            "!t ",
            "%YAML 1.1",
            "é",
            "<<: ",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    /// The generator reaches the loader's values and its errors.
    #[test]
    fn fragments_exercise_values_and_errors() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut values, mut errors) = (0, 0);
        for _ in 0..2000 {
            let text = fragments().new_tree(&mut runner).unwrap().current();
            match load(&text) {
                Loaded::Stream { .. } => values += 1,
                Loaded::Failed { .. } => errors += 1,
            }
        }
        assert!(
            values > 200 && errors > 200,
            "{values} values, {errors} errors"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn agrees_with_serde_yaml(text in fragments()) {
            same(&text)?;
        }
    }
}
