//! L5 the state graph's `${…}` interpolation (the upstream's `interpolation.py`): dotted paths
//! into a context (`state.*`, `inputs.*`, `result.*`, a foreach's item, `_now`, `_timestamp`),
//! `a || b` fallbacks (the first path that is set wins), whole-string templates keeping the
//! value's type, and a warning naming the path when one resolves to nothing (never the text
//! `None`). Pure.

use serde_json::Value as Json;

/// A dotted path into `doc`: mapping keys, and list indices as numbers (`state.items.0.name`).
/// `None` when a step is missing; an empty path is `doc` itself. JSON `null` is a value here;
/// callers treat it as "not set" where the upstream's Python `None` would be.
pub fn resolve_path<'a>(doc: &'a Json, path: &str) -> Option<&'a Json> {
    if path.is_empty() {
        return Some(doc);
    }
    let mut here = doc;
    for part in path.split('.') {
        here = match here {
            Json::Object(m) => m.get(part)?,
            Json::Array(l) => l.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

/// What a path is, when it is set: a value that is not `null`.
fn set<'a>(doc: &'a Json, path: &str) -> Option<&'a Json> {
    resolve_path(doc, path).filter(|v| !v.is_null())
}

/// Why a path is not set, for the warning: the deepest part that exists and a close key there.
fn why_unset(doc: &Json, path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    let mut here = doc;
    for (i, part) in parts.iter().enumerate() {
        let next = match here {
            Json::Object(m) => m.get(*part),
            Json::Array(l) => part.parse::<usize>().ok().and_then(|n| l.get(n)),
            _ => None,
        };
        match next {
            Some(v) if i + 1 < parts.len() => here = v,
            Some(_) => return format!("`{path}` is null"),
            None => {
                let prefix = parts[..i].join(".");
                let hint = match here {
                    Json::Object(m) => crate::message::nearest(part, m.keys().map(String::as_str))
                        .map(|near| {
                            let full = if prefix.is_empty() {
                                near.to_owned()
                            } else {
                                format!("{prefix}.{near}")
                            };
                            format!(" (did you mean `{full}`?)")
                        })
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                return if prefix.is_empty() {
                    format!("`{part}` is not set{hint}")
                } else if matches!(here, Json::Object(_) | Json::Array(_)) {
                    format!("`{prefix}` has no `{part}`{hint}")
                } else {
                    format!("`{prefix}` is not a mapping or a list")
                };
            }
        }
    }
    format!("`{path}` is not set")
}

/// An expression: paths separated by `||`, the first that is set wins. `Err` names each path
/// that was tried and why it is not set.
pub fn resolve_expr<'a>(ctx: &'a Json, expr: &str) -> Result<&'a Json, String> {
    let mut why = Vec::new();
    for part in expr.split("||") {
        let path = part.trim();
        if let Some(v) = set(ctx, path) {
            return Ok(v);
        }
        why.push(why_unset(ctx, path));
    }
    Err(why.join(", "))
}

/// `${…}` spans of a text: (start, end, expression) for each, `}` ending the first.
fn expressions(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("${").map(|i| i + from) {
        let Some(close) = text[open + 2..].find('}').map(|i| i + open + 2) else {
            break;
        };
        out.push((open, close + 1, &text[open + 2..close]));
        from = close + 1;
    }
    out
}

/// A value as Python's `str()` writes it (what the upstream puts inside a longer string).
fn text_of(v: &Json) -> String {
    crate::exec::template::py_str(v)
}

/// Interpolate a template: strings (a whole `${x}` keeps x's value and type; `${x}` inside a
/// longer text becomes x's text), mappings and lists recursively, other values as they are. A
/// path that resolves to nothing becomes `null` (a whole template) or the empty text, and adds a
/// warning naming it to `warnings`.
pub fn interpolate(template: &Json, ctx: &Json, warnings: &mut Vec<String>) -> Json {
    match template {
        Json::String(s) => interpolate_str(s, ctx, warnings),
        Json::Array(l) => Json::Array(l.iter().map(|v| interpolate(v, ctx, warnings)).collect()),
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), interpolate(v, ctx, warnings)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn interpolate_str(s: &str, ctx: &Json, warnings: &mut Vec<String>) -> Json {
    let found = expressions(s);
    if let [(0, end, expr)] = found.as_slice()
        && *end == s.len()
    {
        return match resolve_expr(ctx, expr) {
            Ok(v) => v.clone(),
            Err(why) => {
                warnings.push(unset_warning(expr, &why));
                Json::Null
            }
        };
    }
    if found.is_empty() {
        return Json::String(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (start, end, expr) in found {
        out.push_str(&s[last..start]);
        match resolve_expr(ctx, expr) {
            Ok(v) => out.push_str(&text_of(v)),
            Err(why) => warnings.push(unset_warning(expr, &why)),
        }
        last = end;
    }
    out.push_str(&s[last..]);
    Json::String(out)
}

/// The warning for an expression that resolved to nothing.
pub fn unset_warning(expr: &str, why: &str) -> String {
    format!(
        "interpolation `${{{}}}` resolved to nothing: {why}",
        expr.trim()
    )
}

/// Drop `null` values from mappings, recursively (the upstream's `_strip_none`), so a tool's own
/// defaults apply to a parameter whose template resolved to nothing.
pub fn strip_nulls(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Json::Array(l) => Json::Array(l.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn ctx() -> Json {
        json!({
            "state": {"greeting": "hi", "count": 3, "items": [{"name": "a"}, {"name": "b"}],
                      "flag": true, "nothing": null, "obj": {"k": 1}},
            "inputs": {"dir": "."},
            "_now": "2026-01-01T00:00:00Z", "_timestamp": 1
        })
    }

    #[test]
    fn paths_keys_and_indices() {
        let c = ctx();
        assert_eq!(resolve_path(&c, "state.items.1.name"), Some(&json!("b")));
        assert_eq!(resolve_path(&c, "state.items.9"), None);
        assert_eq!(resolve_path(&c, "state.greeting.x"), None);
        assert_eq!(resolve_path(&c, ""), Some(&c));
    }

    #[test]
    fn whole_templates_keep_types_and_partial_ones_are_text() {
        let c = ctx();
        let mut w = Vec::new();
        assert_eq!(interpolate(&json!("${state.count}"), &c, &mut w), json!(3));
        assert_eq!(
            interpolate(&json!("${state.items}"), &c, &mut w),
            c["state"]["items"]
        );
        assert_eq!(
            interpolate(&json!("n=${state.count} ${state.flag}"), &c, &mut w),
            json!("n=3 True")
        );
        assert_eq!(
            interpolate(&json!("${state.obj}!"), &c, &mut w),
            json!("{'k': 1}!")
        );
        assert_eq!(
            interpolate(&json!({"a": ["${_now}"]}), &c, &mut w),
            json!({"a": ["2026-01-01T00:00:00Z"]})
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn fallbacks_take_the_first_set_path() {
        let c = ctx();
        let mut w = Vec::new();
        assert_eq!(
            interpolate(
                &json!("${inputs.missing || state.nothing || state.greeting}"),
                &c,
                &mut w
            ),
            json!("hi")
        );
        assert!(w.is_empty());
    }

    #[test]
    fn a_missing_path_warns_with_its_name_and_never_says_none() {
        let c = ctx();
        let mut w = Vec::new();
        assert_eq!(
            interpolate(&json!("${state.greting}"), &c, &mut w),
            Json::Null
        );
        assert_eq!(
            interpolate(&json!("say ${state.greting}"), &c, &mut w),
            json!("say ")
        );
        assert_eq!(w.len(), 2);
        assert!(
            w[0].contains("state.greting") && w[0].contains("did you mean `state.greeting`"),
            "{}",
            w[0]
        );
        assert!(!w.iter().any(|x| x.contains("None")));
    }

    proptest! {
        /// A whole `${path}` gives the value at the path, of whatever type; the same path inside
        /// a longer text gives its `str()`.
        #[test]
        fn whole_templates_preserve_any_value(v in arb_json(), prefix in "[a-z ]{1,4}") {
            let c = json!({"state": {"v": v.clone()}});
            let mut w = Vec::new();
            let whole = interpolate(&json!("${state.v}"), &c, &mut w);
            if v.is_null() {
                prop_assert_eq!(whole, Json::Null);
                prop_assert_eq!(w.len(), 1);
            } else {
                prop_assert_eq!(&whole, &v);
                let text = interpolate(&Json::String(format!("{prefix}${{state.v}}")), &c, &mut w);
                prop_assert_eq!(text, Json::String(format!("{prefix}{}", crate::exec::template::py_str(&v))));
                prop_assert!(w.is_empty());
            }
        }
    }

    fn arb_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            (-1e9f64..1e9).prop_map(Json::from),
            "[a-z${}. ]{0,8}".prop_map(Json::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }
}
