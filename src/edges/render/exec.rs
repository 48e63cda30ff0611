//! L6 an `exec` response rendered: seed 003's JSON (§12.3) from the planner's `Response`, and the
//! human rendering of a JSON response (the JSON stays the default on a pipe): status line, error,
//! chain, warnings, data and trace, for people reading a terminal.

use serde_json::{Map, Value as Json, json};

use crate::exec::document::{DIRECTIVE_DIRECTIONS, DocAnswer, KNOWLEDGE_DIRECTIONS};
use crate::exec::load::LoadAnswer;
use crate::exec::response::{End, Response, TraceEvent};
use crate::parse::directive::{Action, Input, Output};

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
            if let Some(hint) = &r.hint {
                out.insert("hint".into(), json!(hint));
            }
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

/// The dry run's answer (§12.4: `render::chain::dry_run`) with the whole call's `duration_ms` in
/// `metadata`.
pub fn dry_run_response(
    view: &crate::analysis::chain_view::ChainView,
    duration_ms: Option<u64>,
) -> Json {
    let mut json = crate::render::chain::dry_run(view);
    if let (Some(obj), Some(ms)) = (json.as_object_mut(), duration_ms) {
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| Json::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert("duration_ms".into(), Json::from(ms));
        }
    }
    json
}

/// The dry run of an HTTP chain: the dry run's answer with the request that would be sent
/// (`request`: method, url, headers with auth's secrets redacted, the JSON body, timeout, retry,
/// mode; §9.3).
pub fn http_dry_run_response(
    view: &crate::analysis::chain_view::ChainView,
    plan: &crate::exec::http::HttpPlan,
    duration_ms: Option<u64>,
) -> Json {
    let mut json = dry_run_response(view, duration_ms);
    if let Some(obj) = json.as_object_mut() {
        obj.insert("request".into(), http_request(plan));
    }
    json
}

/// An HTTP request as a dry run shows it.
pub fn http_request(plan: &crate::exec::http::HttpPlan) -> Json {
    let headers: Map<String, Json> = plan
        .shown_headers()
        .into_iter()
        .map(|(k, v)| (k, Json::String(v)))
        .collect();
    let body = plan.body.as_deref().map_or(Json::Null, |b| {
        serde_json::from_str(b).unwrap_or(Json::Null)
    });
    let timeout = plan.timeout.as_secs_f64();
    json!({
        "method": plan.method,
        "url": plan.url,
        "headers": headers,
        "body": body,
        "timeout": timeout,
        "retry": {"max_attempts": plan.max_attempts, "backoff": plan.backoff_name()},
        "mode": match plan.mode {
            crate::exec::http::Mode::Sync => "sync",
            crate::exec::http::Mode::Stream => "stream",
        },
        "output_cap": plan.output_cap,
    })
}

/// The answer to `rye_load` (§12.8): `{status, content, metadata: {name, path, extension,
/// version?}, path, source}`, with `copied_to` and `destination_path` after a copy; an error
/// names the item type and id.
pub fn load_response(a: &LoadAnswer, copied: Option<&std::path::Path>) -> Json {
    match a {
        LoadAnswer::Error {
            item_id,
            kind,
            error,
            error_type,
        } => {
            let mut out = Map::new();
            out.insert("status".into(), json!("error"));
            out.insert("error".into(), json!(error));
            out.insert("item_type".into(), json!(kind.name()));
            out.insert("item_id".into(), json!(item_id));
            if let Some(t) = error_type {
                out.insert("error_type".into(), json!(t));
            }
            Json::Object(out)
        }
        LoadAnswer::Loaded(l) => {
            let mut metadata = Map::new();
            metadata.insert("name".into(), json!(l.name));
            metadata.insert("path".into(), json!(l.path.display().to_string()));
            metadata.insert("extension".into(), json!(l.extension));
            if let Some(v) = &l.version {
                metadata.insert("version".into(), json!(v));
            }
            let mut out = Map::new();
            out.insert("status".into(), json!("success"));
            out.insert("content".into(), json!(l.content));
            out.insert("metadata".into(), Json::Object(metadata));
            out.insert("path".into(), json!(l.path.display().to_string()));
            out.insert("source".into(), json!(l.source));
            if let (Some((dest, _)), Some(path)) = (&l.copy_to, copied) {
                out.insert("copied_to".into(), json!(dest.name()));
                out.insert("destination_path".into(), json!(path.display().to_string()));
            }
            Json::Object(out)
        }
    }
}

/// The answer to executing a directive or a knowledge entry (§12.5, §12.6, seed 003):
/// `duration_ms` goes into `metadata`, except on an integrity refusal (the reference raises
/// there, and its exception results carry none, §12.2).
pub fn document_response(a: &DocAnswer, duration_ms: Option<u64>) -> Json {
    let mut out = Map::new();
    let mut stamped = true;
    match a {
        DocAnswer::Error {
            item_id,
            error,
            error_type,
            declared_inputs,
        } => {
            out.insert("status".into(), json!("error"));
            out.insert("error".into(), json!(error));
            out.insert("item_id".into(), json!(item_id));
            if let Some(t) = error_type {
                out.insert("error_type".into(), json!(t));
                stamped = false;
            }
            if let Some(inputs) = declared_inputs {
                out.insert(
                    "declared_inputs".into(),
                    Json::Array(inputs.iter().map(input_json).collect()),
                );
            }
        }
        DocAnswer::DirectiveValidated { item_id } => {
            out.insert("status".into(), json!("validation_passed"));
            out.insert(
                "message".into(),
                json!("Directive validation passed (dry run)"),
            );
            out.insert("item_id".into(), json!(item_id));
        }
        DocAnswer::Directive {
            item_id,
            body,
            outputs,
            actions,
        } => {
            out.insert("status".into(), json!("success"));
            out.insert("type".into(), json!("directive"));
            out.insert("item_id".into(), json!(item_id));
            out.insert("your_directions".into(), json!(DIRECTIVE_DIRECTIONS));
            out.insert("body".into(), json!(body));
            out.insert(
                "outputs".into(),
                Json::Array(outputs.iter().map(output_json).collect()),
            );
            out.insert(
                "actions".into(),
                Json::Array(actions.iter().map(action_json).collect()),
            );
        }
        DocAnswer::Knowledge { item_id, data } => {
            out.insert("status".into(), json!("success"));
            out.insert("type".into(), json!("knowledge"));
            out.insert("item_id".into(), json!(item_id));
            out.insert("data".into(), Json::Object(data.clone()));
            out.insert("your_directions".into(), json!(KNOWLEDGE_DIRECTIONS));
        }
    }
    if let (true, Some(ms)) = (stamped, duration_ms) {
        out.insert("metadata".into(), json!({"duration_ms": ms}));
    }
    Json::Object(out)
}

fn input_json(i: &Input) -> Json {
    let mut o = Map::new();
    o.insert("name".into(), json!(i.name));
    o.insert("type".into(), json!(i.kind));
    o.insert("required".into(), json!(i.required));
    if let Some(d) = &i.default {
        o.insert("default".into(), json!(d));
    }
    if let Some(d) = &i.description {
        o.insert("description".into(), json!(d));
    }
    Json::Object(o)
}

fn output_json(o: &Output) -> Json {
    let mut m = Map::new();
    m.insert("name".into(), json!(o.name));
    m.insert("type".into(), json!(o.kind));
    m.insert("required".into(), json!(o.required));
    if let Some(d) = &o.description {
        m.insert("description".into(), json!(d));
    }
    Json::Object(m)
}

fn action_json(a: &Action) -> Json {
    let pairs = |v: &[(String, String)]| {
        Json::Object(v.iter().map(|(k, s)| (k.clone(), json!(s))).collect())
    };
    json!({"kind": a.kind, "attributes": pairs(&a.attributes), "params": pairs(&a.params)})
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
    if let Some(hint) = response["hint"].as_str() {
        out.push_str(&format!("help: {hint}\n"));
    }
    if let Some(chain) = response["chain"].as_array().filter(|c| !c.is_empty()) {
        let ids: Vec<&str> = chain.iter().filter_map(Json::as_str).collect();
        out.push_str(&format!("chain: {}\n", ids.join(" → ")));
    }
    for w in response["warnings"].as_array().into_iter().flatten() {
        out.push_str(&format!("warning: {}\n", w.as_str().unwrap_or_default()));
    }
    if let Some(directions) = response["your_directions"].as_str() {
        out.push_str(&format!("{directions}\n"));
    }
    if let Some(body) = response["body"].as_str() {
        out.push_str(&format!("body:\n{body}\n"));
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
            hint: None,
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
