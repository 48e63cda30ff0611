//! L5 templating of the execution config (§8): `${VAR}` expansion (§5.5, §8.3 pass 1), `{name}`
//! substitution (§8.3 pass 2), the config merge of §8.2 with the collision rule (§8.5) and the
//! `params_json` text (§8.2.6). Pure: the environment and the context come in as values.
//!
//! DESIGN.md "Templating": caller parameter values are data, never templates (§15.24). Every name
//! a template can see has an origin: *config* text from the chain's files (templated, and
//! templated again when another config value refers to it) or *data* (caller parameters,
//! `params_json`, the resolved env, context paths), inserted verbatim. Output is never re-scanned:
//! both passes scan only the config text; what they insert is final.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use crate::integrity::canonical::ascii_escape;
use crate::pyrepr::{py_number, py_repr};

/// How many config values a reference may pass through (`{a}` → `a: "{b}"` → `b: "{c}"` →
/// `c: …` is three levels). The reference iterated pass 2 three times over the whole result
/// (§8.3); here a config value referred to from depth `MAX_INDIRECTION` stays verbatim.
pub const MAX_INDIRECTION: usize = 3;

/// Caller parameters that never enter the config (§8.2.2, §8.5, §15.24): the keys the primitives
/// read to decide what is spawned or requested. The reference excluded only `command` and `args`;
/// ryechain is strict (DESIGN.md "Templating": the caller never changes what is spawned), so
/// `cwd`, `timeout`, `input_data` and the HTTP primitive's request keys are excluded too, and
/// `env` never survives (§8.2.3). The tool still receives them in `params_json`, except the
/// reference's `NOT_IN_PARAMS_JSON`.
pub const RESERVED_CALLER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "timeout",
    "input_data",
    "url",
    "method",
    "headers",
    "body",
    "auth",
    "retry",
];

/// Caller parameters left out of `params_json`: the reference's list (§8.2.6 [R]) less `command`
/// and `args`, which the seeds' collision rule (§8.5, a MUST; DESIGN.md) hands to the tool in
/// `params_json` since they never replace the runtime's program. `__*` keys (the passthrough of
/// §8.2.9, not caller data) are left out too. Every other caller key reaches the tool as the
/// caller wrote it — `anchor_path`, `tool_dir`, `project_path` and the other context names
/// included ([L] dropped those): they are data for the tool, while the context the chain itself
/// runs with is always ryechain's own (`build_config` sets it last).
pub const NOT_IN_PARAMS_JSON: &[&str] = &["cwd", "env", "timeout"];

fn excluded_from_params_json(key: &str) -> bool {
    key.starts_with("__") || NOT_IN_PARAMS_JSON.contains(&key)
}

/// Characters that make an embedded `${VAR}` value shell-quoted (§8.3 pass 1).
const SHELL_SPECIAL: &[char] = &[
    '$', '`', ';', '|', '&', '<', '>', '(', ')', '{', '}', '[', ']', '\\',
];

/// `${VAR}` / `${VAR:-default}` against `env`, without quoting: static env values (§5.5).
///
/// Names follow the [L] pattern `[A-Z_][A-Z0-9_]*`, so `${state.x}` and `${lower}` stay as
/// written. `${VAR}` is the value or `""`. `${VAR:-default}` follows the shell: the default is
/// used when `VAR` is unset **or empty** (§15.35 fixes the reference, which kept an empty value).
pub fn expand_env(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in env_pieces(text) {
        match piece {
            EnvPiece::Lit(s) => out.push_str(s),
            EnvPiece::Var { name, default } => out.push_str(&env_value(env, name, default)),
        }
    }
    out
}

/// `{name}` placeholders (`\w+` names) from `vars`, unknown ones left verbatim, inserted text
/// never re-scanned. For anchor templates (§6.4.5 `cwd`, §6.5 `env_paths`) and interpreter
/// `search_roots` (§5.4).
pub fn fill_names(text: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !is_word_char(c))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let value = vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        match value {
            Some(v) if !name.is_empty() && after[name_len..].starts_with('}') => {
                out.push_str(v);
                rest = &after[name_len + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Python's `str(value)`: strings as they are, `True`/`False`/`None`, numbers as Python prints
/// them, lists and dicts as their repr (§8.3 pass 2, §5.5 non-string static values).
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `json.dumps(params)` with Python's defaults (`", "`, `": "`, `ensure_ascii`, insertion order)
/// over the caller parameters minus `NOT_IN_PARAMS_JSON` and `__*` keys (§8.2.6).
pub fn params_json(params: &Map<String, Value>) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for (k, v) in params {
        if excluded_from_params_json(k) {
            continue;
        }
        if !first {
            out.push_str(", ");
        }
        first = false;
        write_py_json_str(&mut out, k);
        out.push_str(": ");
        write_py_json(&mut out, v);
    }
    out.push('}');
    out
}

/// The execution config of §8.2, templated.
///
/// - `element_configs`: each chain element's `config` mapping, **tool first** (chain order);
///   merged shallowly primitive → runtime → tool (§8.2.1). Non-mappings are ignored.
/// - `params`: the caller parameters (plus what the planner adds as caller data, e.g.
///   `resolved_config`, §7.3). `__*` keys pass through untouched (§8.2.9); keys of
///   `RESERVED_CALLER_KEYS` never enter the config; other keys only **fill** names the chain's
///   config does not set — a caller value never replaces a chain value (strict reading of
///   §15.24: a tool config key such as `server_config_path` decides what an MCP runtime launches).
/// - `context`: `(name, value)` pairs set last, overriding config and caller alike:
///   `project_path`, `user_space`, `system_space`, `tool_path` (§8.2.4–5), the anchor context
///   (`tool_dir`, `tool_parent`, `anchor_path`, `runtime_lib`, §6.4) and the anchor `cwd` (§6.4.5).
/// - `env`: the resolved environment; it becomes `config.env` (§8.2.3) and feeds pass 1.
///
/// Caller parameters, `params_json`, `env` and the context are data: inserted verbatim, never
/// templated. Config values are templated (§8.3); `body` cleanup follows §8.2.8.
pub fn build_config(
    element_configs: &[&Value],
    params: &Map<String, Value>,
    context: &[(&str, &str)],
    env: &BTreeMap<String, String>,
) -> Map<String, Value> {
    let mut config = Map::new();
    let mut data: HashSet<String> = HashSet::new();
    for element in element_configs.iter().rev() {
        if let Value::Object(m) = element {
            for (k, v) in m {
                config.insert(k.clone(), v.clone());
            }
        }
    }
    let mut passthrough = Vec::new();
    for (k, v) in params {
        if k.starts_with("__") {
            passthrough.push((k.clone(), v.clone()));
        } else if !RESERVED_CALLER_KEYS.contains(&k.as_str()) && !config.contains_key(k) {
            config.insert(k.clone(), v.clone());
            data.insert(k.clone());
        }
    }
    let env_map: Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    config.insert("env".into(), Value::Object(env_map));
    data.insert("env".into());
    for (k, v) in context {
        config.insert((*k).to_owned(), Value::String((*v).to_owned()));
        data.insert((*k).to_owned());
    }
    config.insert("params_json".into(), Value::String(params_json(params)));
    data.insert("params_json".into());

    // §8.2.8: a `body` entry that is exactly one placeholder naming nothing is an optional field
    // the caller did not supply; it is dropped (judged on the config text, so a data value that
    // happens to look like `{x}` is never dropped).
    let known: HashSet<String> = config.keys().cloned().collect();
    if !data.contains("body")
        && let Some(Value::Object(body)) = config.get_mut("body")
    {
        body.retain(|_, v| match v {
            Value::String(s) => single_placeholder(s).is_none_or(|name| known.contains(name)),
            _ => true,
        });
    }

    let mut out = template_config(&config, &|k| data.contains(k), env);
    for (k, v) in passthrough {
        out.insert(k, v);
    }
    out
}

/// Templates every value of `config` whose key is not data (`is_data`), §8.3: pass 1 `${VAR}`
/// against `env`, then pass 2 `{name}` against `config` itself. Keys are never templated; data
/// values are returned verbatim.
///
/// Pass 1: a string that is exactly one `${VAR}` gets the raw value (an argv element such as
/// `command: "${RYE_PYTHON}"` must not receive quotes, §15.23); a value embedded in a larger
/// string is `shlex.quote`d when it contains one of `` $ ` ; | & < > ( ) { } [ ] \ ``.
/// Pass 2: a string that is exactly `{name}` (after trimming) becomes the named value with its
/// type; otherwise each `{…}` naming a known value becomes its Python `str()`; unknown names stay.
pub fn template_config(
    config: &Map<String, Value>,
    is_data: &dyn Fn(&str) -> bool,
    env: &BTreeMap<String, String>,
) -> Map<String, Value> {
    let mut t = Templater {
        config,
        is_data,
        env,
        memo: HashMap::new(),
    };
    config
        .iter()
        .map(|(k, v)| {
            let out = if is_data(k) { v.clone() } else { t.value(v, 0) };
            (k.clone(), out)
        })
        .collect()
}

struct Templater<'a> {
    config: &'a Map<String, Value>,
    is_data: &'a dyn Fn(&str) -> bool,
    env: &'a BTreeMap<String, String>,
    /// (name, depth) → the config value templated at that depth.
    memo: HashMap<(String, usize), Value>,
}

/// One piece of a string after pass 1: config text (scanned by pass 2) or an inserted env
/// value (final).
enum Seg<'s> {
    Text(&'s str),
    Inserted(String),
}

impl Templater<'_> {
    fn value(&mut self, v: &Value, depth: usize) -> Value {
        match v {
            Value::String(s) => self.string(s, depth),
            Value::Array(items) => {
                Value::Array(items.iter().map(|i| self.value(i, depth)).collect())
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), self.value(v, depth)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The value `name` stands for when referred to from `depth`, or `None` when it is unknown
    /// or too deep.
    fn lookup(&mut self, name: &str, depth: usize) -> Option<Value> {
        let raw = self.config.get(name)?;
        if (self.is_data)(name) {
            return Some(raw.clone());
        }
        let depth = depth + 1;
        if depth > MAX_INDIRECTION {
            return None;
        }
        let key = (name.to_owned(), depth);
        if let Some(v) = self.memo.get(&key) {
            return Some(v.clone());
        }
        let v = self.value(raw, depth);
        self.memo.insert(key, v.clone());
        Some(v)
    }

    fn string(&mut self, s: &str, depth: usize) -> Value {
        let segs = self.pass1(s);
        if let [Seg::Text(text)] = segs.as_slice()
            && let Some(name) = single_placeholder(text)
        {
            return self
                .lookup(name, depth)
                .unwrap_or_else(|| Value::String(s.to_owned()));
        }
        let mut out = String::with_capacity(s.len());
        for seg in &segs {
            match seg {
                Seg::Inserted(v) => out.push_str(v),
                Seg::Text(text) => self.pass2_mixed(text, depth, &mut out),
            }
        }
        Value::String(out)
    }

    fn pass1<'s>(&self, s: &'s str) -> Vec<Seg<'s>> {
        let pieces = env_pieces(s);
        let whole = matches!(pieces.as_slice(), [EnvPiece::Var { .. }]);
        pieces
            .into_iter()
            .map(|p| match p {
                EnvPiece::Lit(t) => Seg::Text(t),
                EnvPiece::Var { name, default } => {
                    let v = env_value(self.env, name, default);
                    if whole || !v.contains(SHELL_SPECIAL) {
                        Seg::Inserted(v)
                    } else {
                        Seg::Inserted(shlex_quote(&v))
                    }
                }
            })
            .collect()
    }

    /// Each `{inner}` (the reference's `\{([^}]+)\}`) naming a known value becomes its `str()`.
    fn pass2_mixed(&mut self, text: &str, depth: usize, out: &mut String) {
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if close > 0 => {
                    let inner = &after[..close];
                    match self.lookup(inner, depth) {
                        Some(v) => out.push_str(&py_str(&v)),
                        None => out.push_str(&rest[open..open + close + 2]),
                    }
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }
}

/// The name of a string that is exactly `{name}` after trimming (`\w+` name).
fn single_placeholder(s: &str) -> Option<&str> {
    let name = s.trim().strip_prefix('{')?.strip_suffix('}')?;
    (!name.is_empty() && name.chars().all(is_word_char)).then_some(name)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A piece of a text split at `${VAR}` references (`env_pieces`).
pub enum EnvPiece<'s> {
    Lit(&'s str),
    Var {
        name: &'s str,
        default: Option<&'s str>,
    },
}

/// Splits `text` at `${NAME}` / `${NAME:-default}` ([L] pattern
/// `\$\{([A-Z_][A-Z0-9_]*(?::-[^}]*)?)\}`).
pub fn env_pieces(text: &str) -> Vec<EnvPiece<'_>> {
    let mut pieces = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    while let Some(off) = text[i..].find("${") {
        let start = i + off;
        match parse_env_ref(&text[start + 2..]) {
            Some((name, default, len)) => {
                if lit_start < start {
                    pieces.push(EnvPiece::Lit(&text[lit_start..start]));
                }
                pieces.push(EnvPiece::Var { name, default });
                i = start + 2 + len;
                lit_start = i;
            }
            None => i = start + 1,
        }
    }
    if lit_start < text.len() {
        pieces.push(EnvPiece::Lit(&text[lit_start..]));
    }
    pieces
}

/// After `${`: the name, the default and the bytes consumed up to and including `}`.
fn parse_env_ref(s: &str) -> Option<(&str, Option<&str>, usize)> {
    let bytes = s.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_uppercase() || first == b'_') {
        return None;
    }
    let name_len = bytes
        .iter()
        .position(|b| !(b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_'))?;
    let name = &s[..name_len];
    let tail = &s[name_len..];
    if tail.starts_with('}') {
        return Some((name, None, name_len + 1));
    }
    let default_text = tail.strip_prefix(":-")?;
    let close = default_text.find('}')?;
    Some((name, Some(&default_text[..close]), name_len + 2 + close + 1))
}

/// Shell semantics (§15.35): the default replaces an unset or empty variable.
pub fn env_value(env: &BTreeMap<String, String>, name: &str, default: Option<&str>) -> String {
    match (env.get(name), default) {
        (Some(v), Some(d)) if v.is_empty() => d.to_owned(),
        (Some(v), _) => v.clone(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => String::new(),
    }
}

/// Python's `shlex.quote` for a non-empty text with unsafe characters.
pub(crate) fn shlex_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

fn write_py_json_str(out: &mut String, s: &str) {
    out.push_str(&ascii_escape(
        &serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()),
    ));
}

/// Python's `json.dumps(value)` with its defaults (the HTTP primitive's request body, §9.3).
pub fn py_json_dumps(v: &Value) -> String {
    let mut out = String::new();
    write_py_json(&mut out, v);
    out
}

/// Python's `json.dumps` default formatting of one value.
fn write_py_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&py_number(n)),
        Value::String(s) => write_py_json_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_json(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_json_str(out, k);
                out.push_str(": ");
                write_py_json(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pyrepr::py_float;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn all_config(config: Value, e: &BTreeMap<String, String>) -> Map<String, Value> {
        template_config(&obj(config), &|_| false, e)
    }

    #[test]
    fn s14_07_env_vars_in_config() {
        let out = all_config(
            json!({"command": "echo ${MESSAGE}", "arg": "${USER}"}),
            &env(&[("MESSAGE", "Hello"), ("USER", "alice")]),
        );
        assert_eq!(out["command"], "echo Hello");
        assert_eq!(out["arg"], "alice");
    }

    #[test]
    fn s14_08_default_for_missing_var() {
        let out = all_config(json!({"value": "${MISSING:-default_value}"}), &env(&[]));
        assert_eq!(out["value"], "default_value");
    }

    #[test]
    fn s14_09_pass_two_reads_pass_one_output() {
        let out = all_config(
            json!({"user": "${USER}", "greeting": "Hello {user}"}),
            &env(&[("USER", "alice")]),
        );
        assert_eq!(out["user"], "alice");
        assert_eq!(out["greeting"], "Hello alice");
    }

    #[test]
    fn s15_35_set_but_empty_takes_the_default_like_the_shell() {
        let e = env(&[("EMPTY", ""), ("SET", "v")]);
        assert_eq!(expand_env("${EMPTY:-d}", &e), "d");
        assert_eq!(expand_env("${SET:-d}", &e), "v");
        assert_eq!(expand_env("${UNSET:-d}", &e), "d");
        assert_eq!(expand_env("[${EMPTY}][${UNSET}]", &e), "[][]");
    }

    #[test]
    fn s5_5_only_upper_case_names_expand() {
        let e = env(&[("A", "1")]);
        assert_eq!(
            expand_env("${state.x} ${lower} ${A} $A ${A", &e),
            "${state.x} ${lower} 1 $A ${A"
        );
        assert_eq!(expand_env("${A:-x:-y}", &env(&[])), "x:-y");
    }

    #[test]
    fn s15_23_whole_var_is_raw_embedded_var_is_quoted() {
        let e = env(&[("PY", "/opt/my (x)/python"), ("Q", "it's;"), ("E", "")]);
        let out = all_config(
            json!({
                "command": "${PY}",
                "args": ["${PY}", "run ${PY}", "-c echo ${Q}", "x${E}y", "plain ${Q:-}"],
            }),
            &e,
        );
        assert_eq!(out["command"], "/opt/my (x)/python");
        assert_eq!(
            out["args"],
            json!([
                "/opt/my (x)/python",
                "run '/opt/my (x)/python'",
                "-c echo 'it'\"'\"'s;'",
                "xy",
                "plain 'it'\"'\"'s;'"
            ])
        );
    }

    #[test]
    fn s8_3_single_placeholder_keeps_type_mixed_uses_python_str() {
        let out = all_config(
            json!({
                "n": 3, "f": 1e16, "small": 0.00001, "b": true, "z": null,
                "l": ["a", 1, 2.5], "d": {"k": "v", "t": false},
                "typed": " {l} ", "text": "{n}|{f}|{small}|{b}|{z}|{l}|{d}",
                "unknown": "{nope} and {n", "whole_unknown": "{nope}",
            }),
            &env(&[]),
        );
        assert_eq!(out["typed"], json!(["a", 1, 2.5]));
        assert_eq!(
            out["text"],
            "3|1e+16|1e-05|True|None|['a', 1, 2.5]|{'k': 'v', 't': False}"
        );
        assert_eq!(out["unknown"], "{nope} and {n");
        assert_eq!(out["whole_unknown"], "{nope}");
    }

    #[test]
    fn s8_3_config_values_resolve_through_three_levels() {
        let out = all_config(
            json!({
                "a": "{b}", "b": "<{c}>", "c": "{d}", "d": "{e}", "e": "x",
                "self": "{self}", "server_config_path": "{project_path}/.ai/x.yaml",
                "project_path": "/p", "args": ["--server-config", "{server_config_path}"],
            }),
            &env(&[]),
        );
        // a → b → c → d is three levels; d's own `{e}` is past the limit and stays.
        assert_eq!(out["a"], "<{e}>");
        assert_eq!(out["c"], "x");
        assert_eq!(out["self"], "{self}");
        assert_eq!(out["args"], json!(["--server-config", "/p/.ai/x.yaml"]));
    }

    fn context() -> Vec<(&'static str, &'static str)> {
        vec![
            ("project_path", "/p"),
            ("user_space", "/home/u"),
            ("system_space", "/sys"),
            ("tool_path", "/p/.ai/tools/t.py"),
        ]
    }

    fn runtime() -> Value {
        json!({
            "command": "${RYE_PYTHON}",
            "args": ["{tool_path}", "--project-path", "{project_path}", "{greeting}", "{note}"],
            "input_data": "{params_json}",
            "timeout": 300,
            "cwd": "{project_path}",
        })
    }

    #[test]
    fn s8_5_collision_rule_caller_command_and_args_never_replace_the_runtimes() {
        let params = obj(json!({"command": "ls", "args": ["-l"], "greeting": "hi"}));
        let e = env(&[("RYE_PYTHON", "/venv/bin/python")]);
        let rt = runtime();
        let out = build_config(&[&json!({}), &rt, &json!({})], &params, &context(), &e);
        assert_eq!(out["command"], "/venv/bin/python");
        assert_eq!(
            out["args"],
            json!(["/p/.ai/tools/t.py", "--project-path", "/p", "hi", "{note}"])
        );
        // §8.5: the caller's command/args reach the tool in params_json, and only there.
        assert_eq!(
            out["input_data"],
            r#"{"command": "ls", "args": ["-l"], "greeting": "hi"}"#
        );
    }

    #[test]
    fn s15_24_caller_cwd_timeout_input_data_env_never_override() {
        let params = obj(json!({
            "cwd": "/etc", "timeout": 1, "input_data": "x", "env": {"PATH": "/evil"},
            "url": "http://evil", "body": {"a": 1},
        }));
        let e = env(&[("PATH", "/bin")]);
        let rt = runtime();
        let out = build_config(&[&rt], &params, &context(), &e);
        assert_eq!(out["cwd"], "/p");
        assert_eq!(out["timeout"], 300);
        assert_eq!(out["env"], json!({"PATH": "/bin"}));
        assert!(!out.contains_key("url") && !out.contains_key("body"));
        // The tool still gets the other caller values on stdin (§8.2.6 [R] leaves out `cwd`,
        // `timeout` and `env`).
        assert_eq!(
            out["input_data"],
            r#"{"input_data": "x", "url": "http://evil", "body": {"a": 1}}"#
        );
    }

    #[test]
    fn s15_24_caller_values_fill_but_never_replace_chain_config() {
        let tool = json!({"server_config_path": "{project_path}/.ai/s.yaml", "tool_name": "t"});
        let rt = json!({"args": ["{server_config_path}", "{tool_name}", "{extra}"]});
        let params = obj(json!({
            "server_config_path": "/tmp/evil.yaml", "tool_name": "other", "extra": "e",
        }));
        let out = build_config(&[&tool, &rt], &params, &context(), &env(&[]));
        assert_eq!(out["args"], json!(["/p/.ai/s.yaml", "t", "e"]));
    }

    #[test]
    fn s15_24_caller_values_are_data_never_templates() {
        let params = obj(json!({
            "home": "${HOME}", "path": "{tool_path}", "cmd": "$(id)", "list": ["${HOME}", "{project_path}"],
        }));
        let rt = json!({
            "args": ["{home}", "{path}", "{cmd}", "x={home}/{path}", "{list}"],
            "input_data": "{params_json}",
        });
        let e = env(&[("HOME", "/root")]);
        let out = build_config(&[&rt], &params, &context(), &e);
        assert_eq!(
            out["args"],
            json!([
                "${HOME}",
                "{tool_path}",
                "$(id)",
                "x=${HOME}/{tool_path}",
                ["${HOME}", "{project_path}"]
            ])
        );
        assert_eq!(out["home"], "${HOME}");
        assert_eq!(
            out["input_data"],
            r#"{"home": "${HOME}", "path": "{tool_path}", "cmd": "$(id)", "list": ["${HOME}", "{project_path}"]}"#
        );
    }

    #[test]
    fn s15_24_env_values_inserted_by_pass_one_are_not_rescanned() {
        let e = env(&[("X", "{tool_path}"), ("Y", "${HOME}"), ("HOME", "/root")]);
        let out = all_config(
            json!({"a": "${X}", "b": "pre ${X}", "c": "${Y}", "tool_path": "/t"}),
            &e,
        );
        assert_eq!(out["a"], "{tool_path}");
        assert_eq!(out["b"], "pre '{tool_path}'");
        assert_eq!(out["c"], "${HOME}");
    }

    #[test]
    fn s8_2_merge_order_context_passthrough_and_body_cleanup() {
        let prim = json!({"timeout": 10, "method": "GET"});
        let rt =
            json!({"timeout": 60, "body": {"model": "{model}", "tools": "{tools}", "n": "{n}"}});
        let tool = json!({"timeout": 120, "model": "m1", "project_path": "/wrong"});
        let sink = json!({"kind": "sink"});
        let params = obj(json!({"__sinks": sink, "n": 2, "tool_path": "/evil"}));
        let out = build_config(&[&tool, &rt, &prim], &params, &context(), &env(&[]));
        assert_eq!(out["timeout"], 120);
        assert_eq!(out["method"], "GET");
        assert_eq!(out["project_path"], "/p");
        assert_eq!(out["tool_path"], "/p/.ai/tools/t.py");
        assert_eq!(out["body"], json!({"model": "m1", "n": 2}));
        assert_eq!(out["__sinks"], sink);
        // The caller's `tool_path` is data in params_json; the config has the real one (above).
        assert_eq!(out["params_json"], r#"{"n": 2, "tool_path": "/evil"}"#);
        // Python dict order: a caller key keeps its slot when the context overwrites its value.
        let keys: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "timeout",
                "method",
                "body",
                "model",
                "project_path",
                "n",
                "tool_path",
                "env",
                "user_space",
                "system_space",
                "params_json",
                "__sinks"
            ]
        );
    }

    #[test]
    fn s8_2_6_params_json_is_python_json_dumps() {
        let params = obj(json!({
            "b": "é😀\u{7f}\n\"\\/", "a": [1, 2.0, 1e16, -0.5, null, true], "o": {}, "l": [],
            "env": {"X": "1"}, "tool_dir": "/t", "anchor_path": "/a", "runtime_lib": "/r",
            "project_path": "/p", "user_space": "/u", "system_space": "/s", "tool_parent": "/",
            "tool_path": "/x", "__sinks": 1, "_ok": 0, "command": "c", "args": [], "cwd": "/",
            "timeout": 1,
        }));
        // `cwd`, `env`, `timeout` (and the `__*` passthrough) are left out; `command` and `args`
        // stay (§8.5); the context names are caller data like any other key.
        assert_eq!(
            params_json(&params),
            r#"{"b": "\u00e9\ud83d\ude00\u007f\n\"\\/", "a": [1, 2.0, 1e+16, -0.5, null, true], "o": {}, "l": [], "tool_dir": "/t", "anchor_path": "/a", "runtime_lib": "/r", "project_path": "/p", "user_space": "/u", "system_space": "/s", "tool_parent": "/", "tool_path": "/x", "_ok": 0, "command": "c", "args": []}"#
        );
        assert_eq!(params_json(&Map::new()), "{}");
    }

    #[test]
    fn python_float_repr() {
        for (f, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1234.5, "1234.5"),
            (0.0001, "0.0001"),
            (0.015, "0.015"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (-2.5e100, "-2.5e+100"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(py_float(f), s, "{f}");
        }
    }

    #[test]
    fn s6_5_fill_names_leaves_unknown_and_never_rescans() {
        let vars = [("anchor_path", "/a/{tool_dir}"), ("tool_dir", "/t")];
        assert_eq!(
            fill_names("{anchor_path}/node_modules:{nope}:{}:{tool_dir", &vars),
            "/a/{tool_dir}/node_modules:{nope}:{}:{tool_dir"
        );
    }
}
