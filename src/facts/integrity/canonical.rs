//! Canonical-JSON integrity hashes (§10.6, the reference's `compute_tool_integrity` family):
//! SHA-256 of `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
//! Not used on the executor path; kept byte-compatible for registries and tests (§14.51).

use serde_json::{Map, Value};

use super::hash::sha256_hex;

/// Keys sorted at every level (Python `sort_keys=True`).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Python's canonical dump: compact separators, sorted keys, `ensure_ascii=True`.
pub fn canonical_json(v: &Value) -> String {
    ascii_escape(&serde_json::to_string(&sorted(v)).unwrap_or_default())
}

/// What Python's `ensure_ascii=True` does to serialised JSON: every character outside
/// `' '..='~'` becomes `\uXXXX` (UTF-16 surrogate pairs beyond the BMP). serde_json already
/// escaped the control characters the same way, so only non-ASCII and DEL remain; both can only
/// occur inside strings, so escaping them in the whole text is exact.
pub fn ascii_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() && c != '\x7f' {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// SHA-256 (hex) of the canonical JSON of `v`.
pub fn canonical_hash(v: &Value) -> String {
    sha256_hex(canonical_json(v).as_bytes())
}

/// `{tool_id, version, manifest[, files]}`; `files` (objects with a `path`) sorted by path.
pub fn tool_integrity(
    tool_id: &str,
    version: &str,
    manifest: &Value,
    files: Option<&[Value]>,
) -> String {
    let mut obj = Map::new();
    obj.insert("tool_id".into(), Value::from(tool_id));
    obj.insert("version".into(), Value::from(version));
    obj.insert("manifest".into(), manifest.clone());
    if let Some(files) = files {
        let mut files = files.to_vec();
        files.sort_by(|a, b| {
            let p = |v: &Value| {
                v.get("path")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            p(a).cmp(&p(b))
        });
        obj.insert("files".into(), Value::Array(files));
    }
    canonical_hash(&Value::Object(obj))
}

/// `{directive_name, version, xml_content[, metadata]}`.
pub fn directive_integrity(
    name: &str,
    version: &str,
    xml_content: &str,
    metadata: Option<&Value>,
) -> String {
    let mut obj = Map::new();
    obj.insert("directive_name".into(), Value::from(name));
    obj.insert("version".into(), Value::from(version));
    obj.insert("xml_content".into(), Value::from(xml_content));
    if let Some(m) = metadata {
        obj.insert("metadata".into(), m.clone());
    }
    canonical_hash(&Value::Object(obj))
}

/// `{id, version, content[, metadata]}`.
pub fn knowledge_integrity(
    id: &str,
    version: &str,
    content: &str,
    metadata: Option<&Value>,
) -> String {
    let mut obj = Map::new();
    obj.insert("id".into(), Value::from(id));
    obj.insert("version".into(), Value::from(version));
    obj.insert("content".into(), Value::from(content));
    if let Some(m) = metadata {
        obj.insert("metadata".into(), m.clone());
    }
    canonical_hash(&Value::Object(obj))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_dump_matches_python() {
        // json.dumps({"b": [1, None, "é"], "a": {"y": True, "x": 1.5}}, sort_keys=True,
        //            separators=(",", ":"), ensure_ascii=True)
        let v = json!({"b": [1, null, "é"], "a": {"y": true, "x": 1.5}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"x":1.5,"y":true},"b":[1,null,"\u00e9"]}"#
        );
        assert_eq!(canonical_json(&json!("😀")), r#""\ud83d\ude00""#);
        // json.dumps("a\nb\"\x1f\x7f") == '"a\\nb\\"\\u001f\\u007f"'
        assert_eq!(
            canonical_json(&json!("a\nb\"\u{1f}\u{7f}")),
            r#""a\nb\"\u001f\u007f""#
        );
    }

    /// §14.51: deterministic, 64 hex, differs by id/version/manifest, key order irrelevant
    /// (nested too), files optional, None/list values accepted; same for directive/knowledge.
    #[test]
    fn s51_canonical_hashing() {
        let m1 = json!({"a": 1, "nested": {"x": [1, 2], "y": null}});
        let m2 = json!({"nested": {"y": null, "x": [1, 2]}, "a": 1});
        let h = tool_integrity("t/x", "1.0.0", &m1, None);
        assert_eq!(h.len(), 64);
        assert!(h.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(h, tool_integrity("t/x", "1.0.0", &m1, None));
        assert_eq!(h, tool_integrity("t/x", "1.0.0", &m2, None));
        assert_ne!(h, tool_integrity("t/y", "1.0.0", &m1, None));
        assert_ne!(h, tool_integrity("t/x", "1.0.1", &m1, None));
        assert_ne!(h, tool_integrity("t/x", "1.0.0", &json!({"a": 2}), None));
        let files = [
            json!({"path": "b.py", "sha256": "2"}),
            json!({"path": "a.py", "sha256": "1"}),
        ];
        let rev = [files[1].clone(), files[0].clone()];
        let with = tool_integrity("t/x", "1.0.0", &m1, Some(&files));
        assert_ne!(with, h);
        assert_eq!(with, tool_integrity("t/x", "1.0.0", &m1, Some(&rev)));
        let d = directive_integrity("d", "1.0.0", "<directive/>", None);
        assert_eq!(d, directive_integrity("d", "1.0.0", "<directive/>", None));
        assert_ne!(
            d,
            directive_integrity("d", "1.0.0", "<directive/>", Some(&m1))
        );
        assert_eq!(
            directive_integrity("d", "1", "x", Some(&m1)),
            directive_integrity("d", "1", "x", Some(&m2))
        );
        let k = knowledge_integrity("k", "1.0.0", "body", Some(&json!(["a", null])));
        assert_eq!(k.len(), 64);
        assert_ne!(k, knowledge_integrity("k", "1.0.0", "body", None));
    }
}
