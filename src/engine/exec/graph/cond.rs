//! L5 the `when` conditions of a state graph's edges (the upstream's `condition_evaluator`):
//! `{path, op, value}` against a document (`{state, inputs, result}`), `any`, `all` and `not`,
//! with Python's comparison semantics (`1 == 1.0`, `True == 1`, strings and lists ordered, a
//! missing path matching only `ne`). A comparison Python would refuse (a string against a
//! number) is false, with a warning. Pure.

use std::cmp::Ordering;

use serde_json::Value as Json;

use super::interp::resolve_path;

/// Whether `doc` meets `condition` (an absent or empty condition always does). Problems (a
/// comparison of mismatched types, a bad pattern) make that test false and are added to
/// `warnings`.
pub fn matches(doc: &Json, condition: &Json, warnings: &mut Vec<String>) -> bool {
    let Some(c) = condition.as_object() else {
        return condition.is_null();
    };
    if c.is_empty() {
        return true;
    }
    if let Some(list) = c.get("any") {
        return list
            .as_array()
            .is_some_and(|l| l.iter().any(|x| matches(doc, x, warnings)));
    }
    if let Some(list) = c.get("all") {
        return list
            .as_array()
            .is_some_and(|l| l.iter().all(|x| matches(doc, x, warnings)));
    }
    if let Some(inner) = c.get("not") {
        return !matches(doc, inner, warnings);
    }
    let path = c.get("path").and_then(Json::as_str).unwrap_or_default();
    let op = c.get("op").and_then(Json::as_str).unwrap_or("eq");
    let expected = c.get("value").unwrap_or(&Json::Null);
    let actual = resolve_path(doc, path).filter(|v| !v.is_null());
    match apply(actual, op, expected) {
        Ok(b) => b,
        Err(why) => {
            warnings.push(format!(
                "condition `{path} {op} {}` is false: {why}",
                crate::pyrepr::py_repr(expected)
            ));
            false
        }
    }
}

/// A number as Python sees it in a comparison (`bool` is an `int`).
fn numeric(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Python's `==` on JSON values.
pub fn py_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Json::Bool(_), Json::Number(_)) | (Json::Number(_), Json::Bool(_)) => {
            numeric(a) == numeric(b)
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| py_eq(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "None",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_f64() => "float",
        Json::Number(_) => "int",
        Json::String(_) => "str",
        Json::Array(_) => "list",
        Json::Object(_) => "dict",
    }
}

/// Python's ordering of two values (`<`), or why it refuses.
fn py_cmp(a: &Json, b: &Json) -> Result<Ordering, String> {
    if let (Some(x), Some(y)) = (numeric(a), numeric(b)) {
        return x
            .partial_cmp(&y)
            .ok_or_else(|| "the numbers do not compare".to_owned());
    }
    match (a, b) {
        (Json::String(x), Json::String(y)) => Ok(x.chars().cmp(y.chars())),
        (Json::Array(x), Json::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q) {
                    return py_cmp(p, q);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => Err(format!(
            "a {} cannot be ordered against a {}",
            kind(a),
            kind(b)
        )),
    }
}

/// One operator (`actual` is `None` when the path is not set).
fn apply(actual: Option<&Json>, op: &str, expected: &Json) -> Result<bool, String> {
    let ordered = |want: &dyn Fn(Ordering) -> bool| -> Result<bool, String> {
        match actual {
            None => Ok(false),
            Some(a) => py_cmp(a, expected).map(want),
        }
    };
    match op {
        "eq" => Ok(actual.map_or(expected.is_null(), |a| py_eq(a, expected))),
        "ne" => Ok(!actual.map_or(expected.is_null(), |a| py_eq(a, expected))),
        "gt" => ordered(&|o| o == Ordering::Greater),
        "gte" => ordered(&|o| o != Ordering::Less),
        "lt" => ordered(&|o| o == Ordering::Less),
        "lte" => ordered(&|o| o != Ordering::Greater),
        "in" => Ok(match expected {
            Json::Array(l) => {
                let a = actual.unwrap_or(&Json::Null);
                l.iter().any(|x| py_eq(a, x))
            }
            _ => false,
        }),
        "contains" => match (actual, expected) {
            (None, _) => Ok(false),
            (Some(a), Json::String(needle)) => {
                Ok(crate::exec::template::py_str(a).contains(needle.as_str()))
            }
            (Some(_), other) => Err(format!(
                "`contains` looks for a text, not a {}",
                kind(other)
            )),
        },
        "regex" => match (actual, expected) {
            (None, _) => Ok(false),
            (Some(a), Json::String(pattern)) => regex::Regex::new(pattern)
                .map(|re| re.is_match(&crate::exec::template::py_str(a)))
                .map_err(|e| format!("the pattern does not compile: {e}")),
            (Some(_), other) => Err(format!("a pattern is a text, not a {}", kind(other))),
        },
        "exists" => Ok(actual.is_some()),
        other => Err(format!("`{other}` is no operator")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn when(path: &str, op: &str, value: Json) -> Json {
        json!({"path": path, "op": op, "value": value})
    }

    fn doc() -> Json {
        json!({"state": {"n": 3, "f": 2.5, "s": "hello world", "l": [1, 2], "t": true, "z": null},
               "result": {"exit_code": 0}, "inputs": {"dir": "."}})
    }

    #[test]
    fn every_operator() {
        let d = doc();
        let mut w = Vec::new();
        let yes = [
            when("state.n", "eq", json!(3.0)),
            when("state.t", "eq", json!(1)),
            when("state.n", "ne", json!("3")),
            when("state.missing", "ne", json!(1)),
            when("state.missing", "eq", Json::Null),
            when("state.n", "gt", json!(2)),
            when("state.f", "gte", json!(2.5)),
            when("state.n", "lt", json!(3.5)),
            when("state.s", "lte", json!("hello x")),
            when("state.n", "in", json!([1, 3])),
            when("state.s", "contains", json!("lo w")),
            when("state.l", "contains", json!("2]")),
            when("state.s", "regex", json!("^hel+o")),
            when("result.exit_code", "exists", Json::Null),
            when("inputs.dir", "eq", json!(".")),
            when("state.l", "lt", json!([1, 3])),
        ];
        for c in &yes {
            assert!(matches(&d, c, &mut w), "{c}");
        }
        let no = [
            when("state.missing", "gt", json!(0)),
            when("state.missing", "exists", Json::Null),
            when("state.z", "exists", Json::Null),
            when("state.n", "in", json!("3")),
            when("state.missing", "contains", json!("x")),
            when("state.n", "nope", json!(1)),
        ];
        for c in &no {
            assert!(!matches(&d, c, &mut w), "{c}");
        }
        assert!(w.iter().any(|x| x.contains("no operator")));
    }

    #[test]
    fn combinators_and_refused_comparisons() {
        let d = doc();
        let mut w = Vec::new();
        assert!(matches(
            &d,
            &json!({"any": [when("state.n", "eq", json!(9)), when("state.n", "eq", json!(3))]}),
            &mut w
        ));
        assert!(!matches(
            &d,
            &json!({"all": [when("state.n", "eq", json!(9)), when("state.n", "eq", json!(3))]}),
            &mut w
        ));
        assert!(matches(
            &d,
            &json!({"not": when("state.n", "eq", json!(9))}),
            &mut w
        ));
        assert!(matches(&d, &json!({}), &mut w));
        assert!(w.is_empty());
        assert!(!matches(&d, &when("state.s", "gt", json!(1)), &mut w));
        assert!(w[0].contains("cannot be ordered"), "{w:?}");
    }

    proptest! {
        /// Numbers compare as Python compares them, whether written as ints or floats.
        #[test]
        fn numeric_ops_agree_with_f64(a in -1000i64..1000, b in -1000i64..1000, float in any::<bool>()) {
            let d = json!({"x": a});
            let e = if float { json!(b as f64) } else { json!(b) };
            let mut w = Vec::new();
            let (fa, fb) = (a as f64, b as f64);
            for (op, want) in [("eq", fa == fb), ("ne", fa != fb), ("gt", fa > fb), ("gte", fa >= fb), ("lt", fa < fb), ("lte", fa <= fb)] {
                prop_assert_eq!(matches(&d, &when("x", op, e.clone()), &mut w), want, "{} {} {}", a, op, e);
            }
            prop_assert!(w.is_empty());
        }
    }
}
