//! L6 the human rendering of an `exec` response (the JSON stays the default on a pipe): status
//! line, error, chain, warnings, data and trace, for people reading a terminal.

use serde_json::Value as Json;

/// Render a seed-003 response for a terminal.
pub fn human(response: &Json) -> String {
    let mut out = String::new();
    let status = response["status"].as_str().unwrap_or("unknown");
    let mark = match status {
        "success" | "validation_passed" => "ok",
        _ => "error",
    };
    let item = response["item_id"].as_str().unwrap_or("");
    let ms = response["metadata"]["duration_ms"]
        .as_u64()
        .map(|ms| format!(" ({ms} ms)"))
        .unwrap_or_default();
    out.push_str(&format!("{mark}: {status} {item}{ms}\n"));
    if let Some(err) = response["error"].as_str() {
        out.push_str(&format!("error: {err}\n"));
    }
    if let Some(msg) = response["message"].as_str() {
        out.push_str(&format!("{msg}\n"));
    }
    if let Some(chain) = response["chain"].as_array().filter(|c| !c.is_empty()) {
        let ids: Vec<&str> = chain.iter().filter_map(Json::as_str).collect();
        out.push_str(&format!("chain: {}\n", ids.join(" → ")));
    }
    for w in response["warnings"].as_array().into_iter().flatten() {
        out.push_str(&format!("warning: {}\n", w.as_str().unwrap_or_default()));
    }
    if let Some(data) = response.get("data").filter(|d| !d.is_null()) {
        let text = serde_json::to_string_pretty(data).unwrap_or_default();
        out.push_str(&format!("data:\n{text}\n"));
    }
    for e in response["trace"].as_array().into_iter().flatten() {
        let step = e["step"].as_str().unwrap_or("?");
        let rest: Vec<String> = e
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.as_str() != "step")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out.push_str(&format!("trace {step}: {}\n", rest.join(" ")));
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_success_and_error() {
        let ok = serde_json::json!({"status": "success", "item_id": "a/b", "chain": ["a/b", "p"],
            "data": {"x": 1}, "metadata": {"duration_ms": 5}});
        let text = human(&ok);
        assert!(text.starts_with("ok: success a/b (5 ms)"), "{text}");
        assert!(text.contains("chain: a/b → p"));
        assert!(text.contains("\"x\": 1"));
        let err = serde_json::json!({"status": "error", "item_id": "a/b", "error": "Tool not found: a/b"});
        let text = human(&err);
        assert!(text.contains("error: Tool not found: a/b"), "{text}");
    }
}
