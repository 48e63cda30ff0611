//! L5 a state graph run's state as a knowledge item (the upstream's format): the text written to
//! `.ai/knowledge/graphs/<graph_id>/<run_id>.md` after every step — a fenced YAML frontmatter
//! (`entry_type: graph_state`, status, current node, step count, times) and the state as JSON —
//! and a persisted run read back from that entry's metadata and body. The names a path is made
//! of are checked here (`run_id_problem`); the edge signs and writes. Pure.

use serde_json::{Map, Value as Json};

use super::walk::{Run, Status};

/// The knowledge id of a run's state (`graphs/<graph_id>/<run_id>`).
pub fn knowledge_id(graph_id: &str, run_id: &str) -> String {
    format!("graphs/{graph_id}/{run_id}")
}

/// The path of a run's state below the space's `.ai/`.
pub fn state_rel(graph_id: &str, run_id: &str) -> String {
    format!("knowledge/{}.md", knowledge_id(graph_id, run_id))
}

/// Why a text cannot be a run id (one path segment of letters, digits, `-`, `_` and `.`, not
/// starting with `.`, at most 128 characters), or `None`.
pub fn run_id_problem(run_id: &str) -> Option<&'static str> {
    if run_id.is_empty() {
        return Some("it is empty");
    }
    if run_id.len() > 128 {
        return Some("it is longer than 128 characters");
    }
    if run_id.starts_with('.') {
        return Some("it starts with `.`");
    }
    if !run_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Some("it may hold only letters, digits, `-`, `_` and `.`");
    }
    None
}

/// A run id for a new run of `graph_id`: the id with `/` as `-`, the time in milliseconds and a
/// random suffix (two runs in one millisecond do not share a file).
pub fn new_run_id(graph_id: &str, millis: i64, random: u32) -> String {
    let stem: String = graph_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let stem = stem.trim_start_matches(['-', '.']);
    let stem: String = stem.chars().take(80).collect();
    format!("{stem}-{millis}-{random:06x}")
}

fn quoted(s: &str) -> String {
    Json::String(s.to_owned()).to_string()
}

/// The entry's text, without a signature line.
pub fn render(run: &Run, updated_at: &str) -> String {
    let state = serde_json::to_string_pretty(&Json::Object(run.state.clone()))
        .unwrap_or_else(|_| "{}".to_owned());
    let id = knowledge_id(&run.graph_id, &run.run_id);
    format!(
        "```yaml\nid: {}\ntitle: {}\nentry_type: graph_state\ncategory: {}\nversion: \"1.0.0\"\ngraph_id: {}\ngraph_run_id: {}\nstatus: {}\ncurrent_node: {}\nstep_count: {}\nstarted_at: {}\nupdated_at: {}\ntags: [graph_state]\n```\n\n{state}\n",
        quoted(&id),
        quoted(&format!("State: {} ({})", run.graph_id, run.run_id)),
        quoted(&format!("graphs/{}", run.graph_id)),
        quoted(&run.graph_id),
        quoted(&run.run_id),
        run.status.as_str(),
        quoted(run.current.as_deref().unwrap_or_default()),
        run.steps,
        quoted(&run.started_at),
        quoted(updated_at),
    )
}

/// A persisted run from its entry's metadata and body (as the knowledge parser read them).
pub fn parse(metadata: &Map<String, Json>, body: &str) -> Result<Run, String> {
    let text = |k: &str| metadata.get(k).and_then(Json::as_str).map(str::to_owned);
    if metadata.get("entry_type").and_then(Json::as_str) != Some("graph_state") {
        return Err("it is not a graph state (`entry_type: graph_state`)".to_owned());
    }
    let graph_id = text("graph_id").ok_or("it names no `graph_id`")?;
    let run_id = text("graph_run_id").ok_or("it names no `graph_run_id`")?;
    let status = text("status")
        .as_deref()
        .and_then(Status::parse)
        .ok_or("its `status` is none of running, completed, error")?;
    let steps = metadata
        .get("step_count")
        .and_then(Json::as_u64)
        .ok_or("its `step_count` is no whole number")?;
    let current = text("current_node").filter(|s| !s.is_empty());
    let state = match serde_json::from_str::<Json>(body.trim()) {
        Ok(Json::Object(m)) => m,
        Ok(_) => return Err("its body is not a JSON object".to_owned()),
        Err(e) => return Err(format!("its body is not JSON: {e}")),
    };
    Ok(Run {
        graph_id,
        run_id,
        status,
        current,
        steps,
        state,
        started_at: text("started_at").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn run_ids_are_one_safe_segment() {
        assert_eq!(run_id_problem("demo-flow-1-abc"), None);
        for bad in ["", "../x", "a/b", ".hidden", "a b", &"x".repeat(129)] {
            assert!(run_id_problem(bad).is_some(), "{bad}");
        }
        let id = new_run_id("demo/greet flow", 1_700_000_000_000, 0xab);
        assert_eq!(id, "demo-greet-flow-1700000000000-0000ab");
        assert_eq!(run_id_problem(&id), None);
    }

    #[test]
    fn render_reads_back_as_yaml_and_json() {
        let run = Run {
            graph_id: "demo/flow".to_owned(),
            run_id: "demo-flow-1-000001".to_owned(),
            status: Status::Running,
            current: Some("we\"ird: node".to_owned()),
            steps: 2,
            state: json!({"inputs": {"a": 1}, "x": [1, "two"]})
                .as_object()
                .cloned()
                .unwrap(),
            started_at: "2026-01-01T00:00:00Z".to_owned(),
        };
        let text = render(&run, "2026-01-01T00:00:01Z");
        let fm = text.strip_prefix("```yaml\n").unwrap();
        let (fm, body) = fm.split_once("```\n").unwrap();
        let meta: Json = serde_yaml::from_str(fm).unwrap();
        let back = parse(meta.as_object().unwrap(), body).unwrap();
        assert_eq!(back, run);
    }
}
