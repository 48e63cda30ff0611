//! L0 one voice: the words a user reads about a chain break, a missing item or an integrity
//! failure, written once. A text that a lint rule reports is its rule file's `message` template
//! (the embedded `rules/**.yaml`, read at build time: `RULE_MESSAGES`); the few texts no rule
//! reports (`Tool not found`, an invalid item id the user typed, a failed validation) are the
//! constants below. Resolution, execution, `chain`, `verify`, `sign`, `lock`, the hover and the
//! agents' answers render them from here; `tests/one_voice.rs` compares every place.

/// The reference's not-found text for a tool (§3.2, §12.3).
pub const TOOL_NOT_FOUND: &str = "Tool not found: {item_id}";
/// The reference's not-found texts for a directive and a knowledge entry (§12.5, §12.6).
pub const DIRECTIVE_NOT_FOUND: &str = "Directive not found: {item_id}";
pub const KNOWLEDGE_NOT_FOUND: &str = "Knowledge entry not found: {item_id}";
/// The reference's not-found text of `load` (§12.8).
pub const ITEM_NOT_FOUND: &str = "Item not found: {item_id}";
/// A directive called without inputs it requires (§12.5).
pub const MISSING_INPUTS: &str = "Missing required inputs: {names}";
/// An item id the caller gave that can never name a file.
pub const INVALID_ITEM_ID: &str = "Invalid item id `{item_id}`: {reason}";
/// A chain refused by §4 validation (the reference's text).
pub const CHAIN_VALIDATION_FAILED: &str = "Chain validation failed: {issues}";
/// A signing key the project ships that the person has not approved.
pub const UNAPPROVED_KEY: &str = "Untrusted key {key_fp} for {item}. The project ships this key in {document}, but a key a project ships is trusted only after you approve it: review it with `ryechain keys trust --project {project}`.";

/// The message template of the embedded rule `id`. The ids this file names are checked to exist
/// by `tests/one_voice.rs`; an unknown id gives the id itself, never a panic.
pub fn rule_message(id: &str) -> &'static str {
    crate::embedded::data::RULE_MESSAGES
        .iter()
        .find(|(rule, _)| *rule == id)
        .map_or("{rule}", |(_, message)| message)
}

/// Fill a template: `{name}` is the value of `name` (left as it is when none is given), `{{` and
/// `}}` are braces.
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if tail.starts_with('{')
            && let Some(end) = tail.find('}')
        {
            let name = &tail[1..end];
            match vars.iter().find(|(k, _)| *k == name) {
                Some((_, v)) => out.push_str(v),
                None => out.push_str(&tail[..=end]),
            }
            rest = &tail[end + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The candidate nearest to `name` (a misspelling), when one is near enough to be what was
/// meant: at most a third of the name's length away in edits (at least 2).
pub fn nearest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let bound = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, _)| *d <= bound)
        .min()
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` for the candidate nearest to `name`, or nothing.
pub fn did_you_mean<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    nearest(name, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

fn rule(id: &str, vars: &[(&str, &str)]) -> String {
    render(rule_message(id), vars)
}

pub fn tool_not_found(item_id: &str) -> String {
    render(TOOL_NOT_FOUND, &[("item_id", item_id)])
}

pub fn directive_not_found(item_id: &str) -> String {
    render(DIRECTIVE_NOT_FOUND, &[("item_id", item_id)])
}

pub fn knowledge_not_found(item_id: &str) -> String {
    render(KNOWLEDGE_NOT_FOUND, &[("item_id", item_id)])
}

pub fn item_not_found(item_id: &str) -> String {
    render(ITEM_NOT_FOUND, &[("item_id", item_id)])
}

pub fn missing_inputs(names: &[&str]) -> String {
    render(MISSING_INPUTS, &[("names", &names.join(", "))])
}

pub fn invalid_item_id(item_id: &str, reason: &str) -> String {
    render(INVALID_ITEM_ID, &[("item_id", item_id), ("reason", reason)])
}

/// `issues`: the validator's issue texts (each a rule's message).
pub fn chain_validation_failed(issues: &[String]) -> String {
    render(CHAIN_VALIDATION_FAILED, &[("issues", &issues.join("; "))])
}

/// `missing-executor`.
pub fn executor_not_found(executor_id: &str) -> String {
    rule("missing-executor", &[("executor_id", executor_id)])
}

/// `unknown-primitive`: the chain of a tool meant to run ends at `item_id`.
pub fn unknown_primitive(item_id: &str) -> String {
    rule("unknown-primitive", &[("item_id", item_id)])
}

/// `chain-too-deep`: the chain of `item_id` is longer than `max_depth` elements.
pub fn chain_too_deep(max_depth: usize, item_id: &str) -> String {
    rule(
        "chain-too-deep",
        &[("max_depth", &max_depth.to_string()), ("item_id", item_id)],
    )
}

/// `executor-cycle`: `first` is already in the chain.
pub fn circular_dependency(first: &str) -> String {
    rule("executor-cycle", &[("first", first)])
}

/// `invalid-item-id`: `item_id` names `executor_id`, which can never name a file.
pub fn invalid_executor_id(executor_id: &str, item_id: &str, reason: &str) -> String {
    rule(
        "invalid-item-id",
        &[
            ("executor_id", executor_id),
            ("item_id", item_id),
            ("reason", reason),
        ],
    )
}

/// Why an executor id that is not a string is refused (the `reason` of `invalid-item-id`).
pub fn executor_id_wrong_type(type_name: &str) -> String {
    format!("an executor id must be a string or None, not {type_name}")
}

/// `unsigned-item`.
pub fn unsigned_item(item: &str) -> String {
    rule("unsigned-item", &[("item", item)])
}

/// `content-hash-mismatch`: `expected` and `got` already shortened.
pub fn integrity_failed(item: &str, expected: &str, got: &str) -> String {
    rule(
        "content-hash-mismatch",
        &[("item", item), ("expected", expected), ("got", got)],
    )
}

/// `untrusted-key`.
pub fn untrusted_key(key_fp: &str, item: &str) -> String {
    rule("untrusted-key", &[("key_fp", key_fp), ("item", item)])
}

/// A key the project ships, not approved (the longer form of `untrusted-key`).
pub fn unapproved_key(key_fp: &str, item: &str, document: &str, project: &str) -> String {
    render(
        UNAPPROVED_KEY,
        &[
            ("key_fp", key_fp),
            ("item", item),
            ("document", document),
            ("project", project),
        ],
    )
}

/// `bad-signature`.
pub fn bad_signature(item: &str) -> String {
    rule("bad-signature", &[("item", item)])
}

/// A JSON value's type as a message names it (`a string`, `a list`, `a mapping`...).
pub fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value as Json;
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_placeholders_and_keeps_braces() {
        assert_eq!(render("a {x} {{y}} {z}", &[("x", "1")]), "a 1 {y} {z}");
        assert_eq!(executor_not_found("a/b"), "Executor not found: a/b");
        assert_eq!(tool_not_found("a/b"), "Tool not found: a/b");
    }
}
