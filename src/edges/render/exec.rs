//! L6 an `exec` response rendered: seed 003's JSON (§12.3) from the planner's `Response`, and the
//! human rendering of a JSON response (the JSON stays the default on a pipe): status line, error,
//! chain, warnings, data and trace, for people reading a terminal.

use serde_json::{Map, Value as Json, json};

use crate::exec::response::{End, Response, TraceEvent};

/// Seed 003's response: `{status, type, error, item_id, chain, trace}` for a refusal;
/// `{status, type, item_id, error?, data, chain, warnings?, metadata, trace?}` after a run.
/// `duration_ms` (the edge times the whole call) goes into `metadata`.
pub fn response(r: &Response, duration_ms: Option<u64>) -> Json {
    let mut out = Map::new();
    let status = if r.success() { "success" } else { "error" };
    out.insert("status".into(), json!(status));
    out.insert("type".into(), json!("tool"));
    let mut metadata = Map::new();
    match &r.end {
        End::Refused { error } => {
            out.insert("error".into(), json!(error));
            out.insert("item_id".into(), json!(r.item_id));
            out.insert("chain".into(), json!(r.chain));
        }
        End::Ran {
            error,
            data,
            lockfile_used,
            lockfile_created,
            ..
        } => {
            out.insert("item_id".into(), json!(r.item_id));
            if let Some(error) = error {
                out.insert("error".into(), json!(error));
            }
            out.insert("data".into(), data.clone());
            out.insert("chain".into(), json!(r.chain));
            if !r.warnings.is_empty() {
                out.insert("warnings".into(), json!(r.warnings));
            }
            metadata.insert("lockfile_used".into(), json!(lockfile_used));
            metadata.insert("lockfile_created".into(), json!(lockfile_created));
        }
    }
    let trace = r
        .trace
        .as_ref()
        .map(|events| Json::Array(events.iter().map(trace_event).collect()));
    // A refusal's trace comes before the metadata the edge adds; a run's after.
    if matches!(r.end, End::Refused { .. })
        && let Some(trace) = &trace
    {
        out.insert("trace".into(), trace.clone());
    }
    if let Some(ms) = duration_ms {
        metadata.insert("duration_ms".into(), json!(ms));
    }
    if !metadata.is_empty() {
        out.insert("metadata".into(), Json::Object(metadata));
    }
    if matches!(r.end, End::Ran { .. })
        && let Some(trace) = trace
    {
        out.insert("trace".into(), trace);
    }
    Json::Object(out)
}

/// One trace event (§11.2) as the reference writes it.
fn trace_event(e: &TraceEvent) -> Json {
    match e {
        TraceEvent::Resolve {
            item_id,
            path,
            space,
            shadowed,
        } => json!({
            "step": "resolve",
            "item_id": item_id,
            "path": path.as_ref().map(|p| p.display().to_string()),
            "space": space,
            "shadowed": shadowed
                .iter()
                .map(|(p, s)| json!({"path": p.display().to_string(), "space": s}))
                .collect::<Vec<_>>(),
        }),
        TraceEvent::VerifyIntegrity {
            item_id,
            path,
            verified,
            accepted,
            key_fp,
        } => json!({
            "step": "verify_integrity",
            "item_id": item_id,
            "path": path.display().to_string(),
            "verified": verified,
            "accepted": accepted,
            "key_fp": key_fp,
        }),
        TraceEvent::ResolveEnv {
            contributed_by,
            keys,
        } => json!({"step": "resolve_env", "contributed_by": contributed_by, "keys": keys}),
    }
}

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
    use std::path::PathBuf;

    use super::*;

    /// §12.3: seed 003's two shapes, keys in the reference's order, `duration_ms` last in
    /// `metadata` and the trace where the reference puts it.
    #[test]
    fn responses_keep_the_references_shape() {
        let trace = [
            TraceEvent::Resolve {
                item_id: "t/a".into(),
                path: Some(PathBuf::from("/p/.ai/tools/t/a.py")),
                space: "project".into(),
                shadowed: vec![(PathBuf::from("/u/.ai/tools/t/a.py"), "user".into())],
            },
            TraceEvent::VerifyIntegrity {
                item_id: None,
                path: PathBuf::from("/p/lib.py"),
                verified: false,
                accepted: true,
                key_fp: None,
            },
            TraceEvent::ResolveEnv {
                contributed_by: "rt".into(),
                keys: vec!["PATH".into()],
            },
        ];
        let refused = Response::refused("t/a", "no", vec!["t/a".into()], Some(trace[..1].to_vec()));
        assert_eq!(
            response(&refused, Some(7)).to_string(),
            r#"{"status":"error","type":"tool","error":"no","item_id":"t/a","chain":["t/a"],"trace":[{"step":"resolve","item_id":"t/a","path":"/p/.ai/tools/t/a.py","space":"project","shadowed":[{"path":"/u/.ai/tools/t/a.py","space":"user"}]}],"metadata":{"duration_ms":7}}"#
        );
        let ran = Response {
            item_id: "t/a".into(),
            chain: vec!["t/a".into(), "p".into()],
            end: End::Ran {
                success: true,
                error: None,
                data: json!({"x": 1}),
                lockfile_used: false,
                lockfile_created: true,
            },
            warnings: vec!["w".into()],
            trace: Some(trace[1..].to_vec()),
        };
        assert_eq!(
            response(&ran, Some(3)).to_string(),
            r#"{"status":"success","type":"tool","item_id":"t/a","data":{"x":1},"chain":["t/a","p"],"warnings":["w"],"metadata":{"lockfile_used":false,"lockfile_created":true,"duration_ms":3},"trace":[{"step":"verify_integrity","item_id":null,"path":"/p/lib.py","verified":false,"accepted":true,"key_fp":null},{"step":"resolve_env","contributed_by":"rt","keys":["PATH"]}]}"#
        );
        let failed = Response {
            end: End::Ran {
                success: false,
                error: Some("exit 1".into()),
                data: Json::Null,
                lockfile_used: true,
                lockfile_created: false,
            },
            warnings: Vec::new(),
            trace: None,
            ..ran
        };
        assert_eq!(
            response(&failed, None).to_string(),
            r#"{"status":"error","type":"tool","item_id":"t/a","error":"exit 1","data":null,"chain":["t/a","p"],"metadata":{"lockfile_used":true,"lockfile_created":false}}"#
        );
    }

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
