//! L6 a search's answer as text: `rye_search`'s JSON (§12.7: the results, how many matched, the
//! request answered back, `search_type: "keyword"`), each result with its signature verdict; and
//! the compact ranked list `ryechain search` prints (score, id, space, description).

use std::path::Path;

use serde_json::{Map, Value as Json, json};

use crate::analysis::verify::FileVerdict;
use crate::facts::search::{SearchAnswer, SearchHit};
use crate::integrity::Verdict;

/// What the answer says back about the request.
#[derive(Clone, Copy, Debug)]
pub struct Echo<'a> {
    pub query: &'a str,
    pub item_type: &'a str,
    pub source: &'a str,
    pub limit: usize,
    pub offset: usize,
    /// The seed-era names, when the call used them.
    pub scope: Option<&'a str>,
    pub space: Option<&'a str>,
}

/// A verdict's status word.
fn status(v: &FileVerdict) -> &'static str {
    if v.unreadable.is_some() {
        return "unreadable";
    }
    match &v.verdict {
        Verdict::Verified { .. } => "verified",
        Verdict::Embedded { .. } => "embedded",
        Verdict::Unsigned { .. } => "unsigned",
        Verdict::Malformed { .. } => "malformed",
        Verdict::HashMismatch { .. } => "tampered",
        Verdict::UntrustedKey { .. } => "untrusted",
        Verdict::BadSignature { .. } => "bad_signature",
        Verdict::Unhashable { .. } => "unverifiable",
    }
}

/// The signature verdict of a result: whether it verified, its status, the key and hash when it
/// did, the reference's error text (§10.5) when it did not.
pub fn integrity(v: &FileVerdict, shown: &str) -> Json {
    let hash = match &v.verdict {
        Verdict::Verified { hash, .. } | Verdict::Embedded { hash } => Some(hash.as_str()),
        _ => None,
    };
    json!({
        "verified": v.unreadable.is_none() && v.verdict.passed(),
        "status": status(v),
        "key_fp": v.verdict.key_fp(),
        "hash": hash,
        "error": v.error_at(shown),
    })
}

/// One result as `rye_search` answers it.
pub fn hit(h: &SearchHit, verdict: &FileVerdict, show: &dyn Fn(&Path) -> String) -> Json {
    let path = show(&h.path);
    let f = &h.fields;
    json!({
        "id": h.id,
        "name": f.name,
        "title": f.title,
        "description": f.description,
        "category": f.category,
        "preview": f.preview,
        "source": h.space.name(),
        "path": path,
        "score": h.score,
        "type": h.kind.name(),
        "metadata": Json::Object(f.metadata.clone()),
        "signed": verdict.unreadable.is_none() && verdict.verdict.passed(),
        "integrity": integrity(verdict, &path),
    })
}

/// The answer of `rye_search` (`verdicts` beside `answer.hits`, in order).
pub fn response(
    answer: &SearchAnswer,
    verdicts: &[FileVerdict],
    echo: &Echo<'_>,
    show: &dyn Fn(&Path) -> String,
) -> Json {
    let results: Vec<Json> = answer
        .hits
        .iter()
        .zip(verdicts)
        .map(|(h, v)| hit(h, v, show))
        .collect();
    let mut out = Map::new();
    out.insert("results".into(), Json::Array(results));
    out.insert("total".into(), json!(answer.total));
    out.insert("query".into(), json!(echo.query));
    out.insert("item_type".into(), json!(echo.item_type));
    out.insert("source".into(), json!(echo.source));
    out.insert("limit".into(), json!(echo.limit));
    out.insert("offset".into(), json!(echo.offset));
    out.insert("search_type".into(), json!("keyword"));
    if let Some(scope) = echo.scope {
        out.insert("scope".into(), json!(scope));
    }
    if let Some(space) = echo.space {
        out.insert("space".into(), json!(space));
    }
    Json::Object(out)
}

/// A search refused (a query that does not parse, a bad argument): the error, and the query
/// when there is one.
pub fn error(query: Option<&str>, error: &str) -> Json {
    let mut out = Map::new();
    out.insert("status".into(), json!("error"));
    out.insert("error".into(), json!(error));
    if let Some(q) = query {
        out.insert("query".into(), json!(q));
    }
    Json::Object(out)
}

/// The ranked list for a person: one line per result (score, id, space, description), then how
/// many of how many were shown.
pub fn human(answer: &SearchAnswer, echo: &Echo<'_>) -> String {
    let width = answer.hits.iter().map(|h| h.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for h in &answer.hits {
        let description = h.fields.description.lines().next().unwrap_or("");
        let line = format!(
            "{:.4}  {:<width$}  {:<7}  {description}",
            h.score,
            h.id,
            h.space.name()
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let kind = match answer.total {
        1 => echo.item_type.to_owned(),
        _ if echo.item_type == "knowledge" => "knowledge entries".to_owned(),
        _ => format!("{}s", echo.item_type),
    };
    let spaces = match echo.source {
        "all" => "every space".to_owned(),
        s => format!("the {s} space"),
    };
    if answer.total == 0 {
        out.push_str(&format!("no {kind} match in {spaces}\n"));
    } else if answer.hits.is_empty() {
        out.push_str(&format!(
            "{} {kind} match in {spaces}, none shown (offset {}, limit {})\n",
            answer.total, echo.offset, echo.limit
        ));
    } else {
        out.push_str(&format!(
            "{}–{} of {} {kind} in {spaces}\n",
            echo.offset + 1,
            echo.offset + answer.hits.len(),
            answer.total
        ));
    }
    out
}

/// A query that does not parse, for a person: the message, then the query with a caret under
/// the column that breaks it.
pub fn query_error(message: &str, query: &str, column: Option<usize>) -> String {
    match column {
        Some(c) => format!(
            "{message}\n  {query}\n  {}^",
            " ".repeat(c.saturating_sub(1))
        ),
        None => message.to_owned(),
    }
}
