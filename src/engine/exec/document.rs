//! L5 executing a directive (§12.5) or a knowledge entry (§12.6) in the calling agent's own
//! thread, as a pure function of (database, request, facts): find the item, verify its signature
//! before reading it, parse it, and answer — a directive with its inputs checked and filled in,
//! an entry with its metadata and body. Nothing runs; the answer is data (`DocAnswer`), which
//! `render::exec` writes as seed 003's JSON.

use serde_json::{Map, Value as Json};

use crate::analysis::Analysis;
use crate::analysis::verify::Policy;
use crate::exec::facts::{Ask, Facts, Need};
use crate::integrity::ItemKind;
use crate::message;
use crate::model::item_id_problem;
use crate::parse::directive::{Action, Directive, Input, Output};

/// What an agent reads when it executes a directive in its own thread (seed 003's
/// `your_directions`).
pub const DIRECTIVE_DIRECTIONS: &str = "Follow this directive now, in your own context: carry out the steps of its body in order, use the actions it names, and produce the outputs it lists.";
/// What an agent reads with a knowledge entry (§12.6).
pub const KNOWLEDGE_DIRECTIONS: &str = "Use this knowledge to inform your decisions.";

/// One `rye_execute` of a directive or a knowledge entry.
#[derive(Clone, Debug)]
pub struct DocRequest {
    /// `Directive` or `Knowledge`.
    pub kind: ItemKind,
    pub item_id: String,
    pub params: Map<String, Json>,
    pub dry_run: bool,
    pub policy: Policy,
}

/// The answer.
#[derive(Clone, Debug, PartialEq)]
pub enum DocAnswer {
    /// Refused: not found, not verified (`integrity`), not readable, inputs missing.
    Error {
        item_id: String,
        error: String,
        /// `integrity` when the signature refused it.
        error_type: Option<&'static str>,
        /// The directive's inputs, when required ones were missing.
        declared_inputs: Option<Vec<Input>>,
    },
    /// A directive's dry run: parsed and its inputs checked.
    DirectiveValidated { item_id: String },
    /// A directive to follow in the caller's thread.
    Directive {
        item_id: String,
        /// The directive's text (without its signature line), inputs filled in.
        body: String,
        outputs: Vec<Output>,
        /// Its actions, inputs filled in: the calls the agent makes.
        actions: Vec<Action>,
    },
    /// A knowledge entry: its metadata's keys, `body` and `raw`.
    Knowledge {
        item_id: String,
        data: Map<String, Json>,
    },
}

impl DocAnswer {
    pub fn success(&self) -> bool {
        !matches!(self, DocAnswer::Error { .. })
    }

    fn error(item_id: &str, error: String) -> DocAnswer {
        DocAnswer::Error {
            item_id: item_id.to_owned(),
            error,
            error_type: None,
            declared_inputs: None,
        }
    }
}

/// What the planner says next.
#[derive(Clone, Debug)]
pub enum DocStep {
    /// Load these and ask again.
    Need(Vec<Need>),
    Answer(DocAnswer),
}

/// Plan one call. Pure: the same database, request and facts give the same step.
pub fn plan_document(a: Analysis<'_>, req: &DocRequest, facts: &Facts) -> DocStep {
    let id = req.item_id.as_str();
    if let Some(reason) = item_id_problem(id) {
        return DocStep::Answer(DocAnswer::error(id, message::invalid_item_id(id, reason)));
    }
    let ask = Ask::new(facts);
    let rel = format!("{}{id}.md", req.kind.dir());
    if !ask.space_file_loaded(&rel) {
        return DocStep::Need(ask.needs());
    }
    let not_found = || match req.kind {
        ItemKind::Knowledge => message::knowledge_not_found(id),
        _ => message::directive_not_found(id),
    };
    let Some(file) = a.document(req.kind, id) else {
        return DocStep::Answer(DocAnswer::error(id, not_found()));
    };
    // §10.5: verified before it is read (a dry run, as a tool's, checks no signature).
    if !req.dry_run {
        let verdict = a.verify_file(file, id);
        if !req.policy.accepts(&verdict.verdict) {
            return DocStep::Answer(DocAnswer::Error {
                item_id: id.to_owned(),
                error: verdict.error.unwrap_or_else(not_found),
                error_type: Some("integrity"),
                declared_inputs: None,
            });
        }
    }
    DocStep::Answer(match req.kind {
        ItemKind::Knowledge => match a.knowledge(file) {
            Some(Ok(k)) => {
                let mut data = k.metadata.clone();
                // The reference names an entry by `id`, the seeds by `name`: the caller's id stands
                // in when it names itself neither way.
                if !data.contains_key("id") && !data.contains_key("name") {
                    data.insert("id".into(), Json::from(id));
                }
                data.insert("body".into(), Json::from(k.body.as_str()));
                data.insert("raw".into(), Json::from(k.raw.as_str()));
                DocAnswer::Knowledge {
                    item_id: id.to_owned(),
                    data,
                }
            }
            Some(Err(e)) => DocAnswer::error(id, e.message.clone()),
            None => DocAnswer::error(id, unreadable(a, file)),
        },
        _ => match a.directive(file) {
            Some(Ok(d)) => directive_answer(d, a.text(file).as_deref(), req),
            Some(Err(e)) => DocAnswer::error(id, e.message.clone()),
            None => DocAnswer::error(id, unreadable(a, file)),
        },
    })
}

fn unreadable(a: Analysis<'_>, file: crate::db::SourceFile) -> String {
    let why = a.contents(file).err().unwrap_or_default();
    format!("{} cannot be read: {why}", a.path(file).display())
}

/// The inputs of a call (§12.5): `parameters.inputs` when it is an object, else the parameters.
fn inputs_of(params: &Map<String, Json>) -> Map<String, Json> {
    match params.get("inputs") {
        Some(Json::Object(inputs)) => inputs.clone(),
        _ => params.clone(),
    }
}

fn directive_answer(d: &Directive, text: Option<&str>, req: &DocRequest) -> DocAnswer {
    let id = req.item_id.as_str();
    let mut inputs = inputs_of(&req.params);
    // Declared defaults first, then the required check (§12.5's order).
    for input in &d.inputs {
        if let Some(default) = &input.default
            && !inputs.contains_key(&input.name)
        {
            inputs.insert(input.name.clone(), Json::from(default.as_str()));
        }
    }
    let missing: Vec<&str> = d
        .inputs
        .iter()
        .filter(|i| i.required && inputs.get(&i.name).is_none_or(Json::is_null))
        .map(|i| i.name.as_str())
        .collect();
    if !missing.is_empty() {
        return DocAnswer::Error {
            item_id: id.to_owned(),
            error: message::missing_inputs(&missing),
            error_type: None,
            declared_inputs: Some(d.inputs.clone()),
        };
    }
    if req.dry_run {
        return DocAnswer::DirectiveValidated {
            item_id: id.to_owned(),
        };
    }
    let text = text.unwrap_or_default();
    let text = match text.strip_prefix("<!--") {
        Some(_) => text.split_once('\n').map_or("", |(_, rest)| rest),
        None => text,
    };
    DocAnswer::Directive {
        item_id: id.to_owned(),
        body: interpolate(text, &inputs),
        outputs: d.outputs.clone(),
        actions: interpolate_directive(d, &inputs).actions,
    }
}

/// A value as Python's `str()` writes it: a string as it is, anything else as its repr.
fn py_str(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => crate::pyrepr::py_repr(other),
    }
}

/// Fill `{input:key}` placeholders in (§12.5, §14 #18): a present key gives its value; a missing
/// one gives `""` for `{input:key?}`, the default for `{input:key:default}` and
/// `{input:key|default}`, and stays as written for `{input:key}`.
pub fn interpolate(text: &str, inputs: &Map<String, Json>) -> String {
    const OPEN: &str = "{input:";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let key_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let key = &after[..key_len];
        let tail = &after[key_len..];
        let (fallback, used) = if tail.starts_with("?}") {
            (Some(""), 2)
        } else if let Some(body) = tail.strip_prefix([':', '|'])
            && let Some(end) = body.find('}')
        {
            (Some(&body[..end]), end + 2)
        } else if tail.starts_with('}') {
            (None, 1)
        } else {
            // Not a placeholder: keep the text and go on after `{input:`.
            out.push_str(OPEN);
            rest = after;
            continue;
        };
        if key.is_empty() {
            out.push_str(&rest[i..i + OPEN.len() + key_len + used]);
        } else {
            match (inputs.get(key).filter(|v| !v.is_null()), fallback) {
                (Some(v), _) => out.push_str(&py_str(v)),
                (None, Some(default)) => out.push_str(default),
                (None, None) => out.push_str(&rest[i..i + OPEN.len() + key_len + used]),
            }
        }
        rest = &tail[used..];
    }
    out.push_str(rest);
    out
}

/// A directive with its inputs filled in everywhere §12.5 names: the body around the block,
/// the XML, the verbatim bodies, and every action's attributes and params (§14 #19).
pub fn interpolate_directive(d: &Directive, inputs: &Map<String, Json>) -> Directive {
    let fill = |s: &String| interpolate(s, inputs);
    let pairs = |v: &Vec<(String, String)>| v.iter().map(|(k, s)| (k.clone(), fill(s))).collect();
    Directive {
        preamble: fill(&d.preamble),
        after: fill(&d.after),
        content: fill(&d.content),
        templates: pairs(&d.templates),
        actions: d
            .actions
            .iter()
            .map(|a| Action {
                kind: a.kind.clone(),
                attributes: pairs(&a.attributes),
                params: pairs(&a.params),
            })
            .collect(),
        ..d.clone()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn inputs(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    /// §14 #18.
    #[test]
    fn s14_18_input_references() {
        let name = inputs(json!({"name": "alice"}));
        assert_eq!(interpolate("{input:name}", &name), "alice");
        assert_eq!(interpolate("{input:name}", &Map::new()), "{input:name}");
        assert_eq!(interpolate("{input:name?}", &Map::new()), "");
        assert_eq!(interpolate("{input:name?}", &name), "alice");
        assert_eq!(interpolate("{input:mode:verbose}", &Map::new()), "verbose");
        assert_eq!(
            interpolate("{input:mode:verbose}", &inputs(json!({"mode": "quiet"}))),
            "quiet"
        );
        assert_eq!(interpolate("{input:mode|verbose}", &Map::new()), "verbose");
        let sentence = "Write {input:topic} to {input:path} ({input:mode:overview}){input:suffix?}";
        assert_eq!(
            interpolate(
                sentence,
                &inputs(json!({"topic": "rust", "path": "/tmp/out"}))
            ),
            "Write rust to /tmp/out (overview)"
        );
        assert_eq!(interpolate("no placeholders", &name), "no placeholders");
        // Python's str() of other values; broken placeholders stay as written.
        assert_eq!(
            interpolate(
                "{input:n} {input:b} {input:x",
                &inputs(json!({"n": 3, "b": true}))
            ),
            "3 True {input:x"
        );
        assert_eq!(interpolate("{input:}", &name), "{input:}");
    }

    /// §14 #19: body, action params and attributes.
    #[test]
    fn s14_19_interpolating_a_parsed_directive() {
        let d = Directive {
            preamble: "Research {input:topic}".into(),
            actions: vec![
                Action {
                    kind: "execute".into(),
                    attributes: Vec::new(),
                    params: vec![
                        ("path".into(), "{input:out}".into()),
                        ("content".into(), "{input:data?}".into()),
                    ],
                },
                Action {
                    kind: "search".into(),
                    attributes: vec![("query".into(), "{input:q}".into())],
                    params: Vec::new(),
                },
            ],
            ..Directive::default()
        };
        let filled = interpolate_directive(
            &d,
            &inputs(json!({"topic": "rust", "out": "/tmp/x", "q": "patterns"})),
        );
        assert_eq!(filled.preamble, "Research rust");
        assert_eq!(filled.actions[0].params[0].1, "/tmp/x");
        assert_eq!(filled.actions[0].params[1].1, "");
        assert_eq!(filled.actions[1].attributes[0].1, "patterns");
        let bare = Directive {
            preamble: "Body".into(),
            ..Directive::default()
        };
        assert_eq!(interpolate_directive(&bare, &Map::new()).preamble, "Body");
    }

    #[test]
    fn inputs_come_from_parameters_inputs_when_it_is_an_object() {
        assert_eq!(
            inputs_of(&inputs(json!({"inputs": {"a": 1}, "b": 2}))),
            inputs(json!({"a": 1}))
        );
        assert_eq!(
            inputs_of(&inputs(json!({"inputs": "x", "b": 2}))),
            inputs(json!({"inputs": "x", "b": 2}))
        );
    }
}
