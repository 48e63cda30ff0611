//! The SARIF 2.1.0 renderer: one run with the rule catalogue and one result per finding, in the
//! shape GitHub code scanning accepts.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{RuleMeta, ToolInfo};
use crate::diagnostic::{Finding, Severity};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The base id relative artifact URIs are resolved against.
const SRCROOT: &str = "%SRCROOT%";
/// Key of our own entry in `partialFingerprints`.
const FINGERPRINT_KEY: &str = "ryechain/v1";

/// Render a SARIF log, pretty-printed with a trailing newline.
///
/// Relative finding paths become URIs relative to `%SRCROOT%`; absolute paths become `file://`
/// URIs. Results whose rule is not in `rules` carry a `ruleId` but no `ruleIndex`.
pub fn render(findings: &[Finding], rules: &[RuleMeta], tool: &ToolInfo) -> String {
    let mut rule_index: HashMap<&str, usize> = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        rule_index.entry(rule.id.as_str()).or_insert(i);
    }
    let mut fingerprints = Fingerprints::default();
    let results: Vec<Value> = super::sorted(findings)
        .iter()
        .map(|finding| {
            result(
                finding,
                rule_index.get(&*finding.rule).copied(),
                &mut fingerprints,
            )
        })
        .collect();

    let mut run = Map::new();
    run.insert(
        "tool".to_owned(),
        json!({
            "driver": {
                "name": tool.name,
                "version": tool.version,
                "informationUri": tool.information_uri,
                "rules": rules.iter().map(rule_descriptor).collect::<Vec<_>>(),
            }
        }),
    );
    if let Some(root) = tool.src_root.as_deref().and_then(directory_uri) {
        run.insert(
            "originalUriBaseIds".to_owned(),
            json!({ SRCROOT: { "uri": root } }),
        );
    }
    // Finding columns count Unicode scalar values, not the UTF-16 units SARIF assumes by default.
    run.insert("columnKind".to_owned(), json!("unicodeCodePoints"));
    run.insert("results".to_owned(), Value::Array(results));

    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [Value::Object(run)],
    });
    format!("{log:#}\n")
}

fn rule_descriptor(rule: &RuleMeta) -> Value {
    let docs = if rule.docs.trim().is_empty() {
        rule.summary.as_str()
    } else {
        rule.docs.as_str()
    };
    let tags: Vec<&str> = [rule.family.as_str()]
        .into_iter()
        .filter(|f| !f.is_empty())
        .collect();
    let mut descriptor = json!({
        "id": rule.id,
        "name": pascal_case(&rule.id),
        "shortDescription": { "text": rule.summary },
        "fullDescription": { "text": docs },
        "help": { "text": docs, "markdown": docs },
        "defaultConfiguration": { "level": level(rule.default_severity) },
        "properties": { "tags": tags },
    });
    if let Some(uri) = &rule.help_uri {
        descriptor["helpUri"] = json!(uri);
    }
    descriptor
}

fn result(finding: &Finding, rule_index: Option<usize>, fingerprints: &mut Fingerprints) -> Value {
    let mut result = Map::new();
    result.insert("ruleId".to_owned(), json!(finding.rule));
    if let Some(index) = rule_index {
        result.insert("ruleIndex".to_owned(), json!(index));
    }
    result.insert("level".to_owned(), json!(level(finding.severity)));
    let mut text = match &finding.help {
        Some(help) => format!("{}\nhelp: {help}", finding.message),
        None => finding.message.clone(),
    };
    if let Some(question) = super::human::did_you_mean(&finding.suggestions) {
        text.push_str("\nhelp: ");
        text.push_str(&question);
    }
    result.insert("message".to_owned(), json!({ "text": text }));

    let start_line = finding.line.max(1);
    let start_column = finding.column.max(1);
    let end_line = finding.end_line.max(start_line);
    let end_column = if end_line == start_line {
        finding.end_column.max(start_column)
    } else {
        finding.end_column.max(1)
    };
    result.insert(
        "locations".to_owned(),
        json!([{
            "physicalLocation": {
                "artifactLocation": artifact_location(&finding.path),
                "region": {
                    "startLine": start_line,
                    "startColumn": start_column,
                    "endLine": end_line,
                    "endColumn": end_column,
                },
            }
        }]),
    );

    // A certain fix (a suggestion, or the finding's own edit) becomes a SARIF fix.
    if let Some(fix) = &finding.fix {
        result.insert(
            "fixes".to_owned(),
            json!([{
                "description": {
                    "text": fix.title,
                },
                "artifactChanges": [{
                    "artifactLocation": artifact_location(&finding.path),
                    "replacements": [{
                        "deletedRegion": {
                            "startLine": fix.line.max(1),
                            "startColumn": fix.column.max(1),
                            "endLine": fix.end_line.max(1),
                            "endColumn": fix.end_column.max(1),
                        },
                        "insertedContent": { "text": fix.replacement },
                    }],
                }],
            }]),
        );
    }

    let related: Vec<Value> = finding
        .notes
        .iter()
        .filter_map(|note| {
            let path = note.path.as_deref()?;
            let mut location = Map::new();
            location.insert("artifactLocation".to_owned(), artifact_location(path));
            if let Some(line) = note.line {
                location.insert("region".to_owned(), json!({ "startLine": line.max(1) }));
            }
            Some((location, note.message.as_str()))
        })
        .enumerate()
        .map(|(id, (location, message))| {
            json!({ "id": id, "physicalLocation": location, "message": { "text": message } })
        })
        .collect();
    if !related.is_empty() {
        result.insert("relatedLocations".to_owned(), Value::Array(related));
    }

    result.insert(
        "partialFingerprints".to_owned(),
        json!({ FINGERPRINT_KEY: fingerprints.next(finding) }),
    );

    let mut properties = Map::new();
    if let Some(item_id) = &finding.item_id {
        properties.insert("itemId".to_owned(), json!(item_id));
    }
    if let Some(space) = &finding.space {
        properties.insert("space".to_owned(), json!(space));
    }
    if !finding.suggestions.is_empty() {
        properties.insert("suggestions".to_owned(), json!(finding.suggestions));
    }
    if !properties.is_empty() {
        result.insert("properties".to_owned(), Value::Object(properties));
    }
    Value::Object(result)
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// `upward-space-dependency` → `UpwardSpaceDependency`.
fn pascal_case(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for word in id.split(|c: char| !c.is_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// Stable per-result fingerprints that survive edits moving a finding to another line.
///
/// The hash covers rule, path, item id (or the line when there is none) and message; findings
/// that would share a hash get an occurrence suffix, as GitHub's own line hashes do.
#[derive(Default)]
struct Fingerprints {
    seen: HashMap<String, usize>,
}

impl Fingerprints {
    fn next(&mut self, finding: &Finding) -> String {
        let anchor = match &finding.item_id {
            Some(item_id) => format!("item:{item_id}"),
            None => format!("line:{}", finding.line),
        };
        let mut hasher = Sha256::new();
        for part in [
            &finding.rule,
            finding.path.as_str(),
            anchor.as_str(),
            finding.message.as_str(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0u8]);
        }
        let mut hash = String::with_capacity(64);
        for byte in hasher.finalize().iter().take(16) {
            let _ = write!(hash, "{byte:02x}");
        }
        let count = self.seen.entry(hash.clone()).or_insert(0);
        *count += 1;
        format!("{hash}:{count}")
    }
}

/// The `artifactLocation` of a display path: `%SRCROOT%`-relative, or a `file://` URI when absolute.
fn artifact_location(path: &str) -> Value {
    match file_uri(path) {
        Some(uri) => json!({ "uri": uri }),
        None => json!({ "uri": relative_uri(path), "uriBaseId": SRCROOT }),
    }
}

/// A relative path as a percent-encoded relative URI reference with forward slashes.
fn relative_uri(path: &str) -> String {
    let mut path = path.replace('\\', "/");
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.to_owned();
    }
    percent_encode(&path)
}

/// `file://` URI of an absolute Unix (`/x`), Windows drive (`C:\x`) or UNC (`\\host\share`) path;
/// `None` for relative paths.
fn file_uri(path: &str) -> Option<String> {
    let slashed = path.replace('\\', "/");
    if let Some(unc) = slashed.strip_prefix("//") {
        return Some(format!("file://{}", percent_encode(unc)));
    }
    if slashed.starts_with('/') {
        return Some(format!("file://{}", percent_encode(&slashed)));
    }
    let bytes = slashed.as_bytes();
    let is_drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if is_drive {
        return Some(format!(
            "file:///{}:{}",
            &slashed[..1],
            percent_encode(&slashed[2..])
        ));
    }
    None
}

/// The `file://` URI of an absolute directory, ending in `/` as `originalUriBaseIds` requires.
fn directory_uri(path: &str) -> Option<String> {
    let mut uri = file_uri(path)?;
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

/// Percent-encode everything except RFC 3986 unreserved characters and `/`.
fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;

    fn rules() -> Vec<RuleMeta> {
        let rule = |id: &str, family: &str, default_severity| RuleMeta {
            id: id.to_owned(),
            family: family.to_owned(),
            summary: format!("Checks for {id}."),
            docs: format!(
                "## What it does\nChecks for {id}.\n\n## Why is this bad?\nIt breaks the chain."
            ),
            default_severity,
            help_uri: Some(format!("https://example.org/rules/{family}/{id}.yaml")),
        };
        vec![
            rule("unresolved-executor", "chain", Severity::Error),
            rule("missing-version", "metadata", Severity::Warning),
            rule("unused-config-schema", "metadata", Severity::Info),
        ]
    }

    fn tool(src_root: Option<&str>) -> ToolInfo {
        ToolInfo {
            name: "ryechain".to_owned(),
            version: "0.1.0".to_owned(),
            information_uri: "https://example.com/ryechain".to_owned(),
            src_root: src_root.map(str::to_owned),
        }
    }

    fn parse(out: &str) -> Value {
        serde_json::from_str(out).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{out}"))
    }

    #[test]
    fn sample_log() {
        insta::assert_snapshot!(render(
            &fixtures::sample(),
            &rules(),
            &tool(Some("/home/ann/project"))
        ));
    }

    #[test]
    fn empty_log() {
        insta::assert_snapshot!(render(&[], &[], &tool(None)));
    }

    #[test]
    fn structure_matches_what_code_scanning_requires() {
        let log = parse(&render(
            &fixtures::sample(),
            &rules(),
            &tool(Some("/home/ann/project")),
        ));
        assert_eq!(log["$schema"], SCHEMA);
        assert_eq!(log["version"], "2.1.0");
        let runs = log["runs"].as_array().cloned().unwrap_or_default();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];

        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], "ryechain");
        assert_eq!(driver["version"], "0.1.0");
        assert_eq!(driver["informationUri"], "https://example.com/ryechain");
        let rule = &driver["rules"][0];
        assert_eq!(rule["id"], "unresolved-executor");
        assert_eq!(rule["name"], "UnresolvedExecutor");
        assert!(rule["shortDescription"]["text"].is_string());
        assert!(rule["fullDescription"]["text"].is_string());
        assert!(rule["help"]["text"].is_string());
        assert!(rule["help"]["markdown"].is_string());
        assert_eq!(rule["defaultConfiguration"]["level"], "error");
        assert_eq!(rule["properties"]["tags"], json!(["chain"]));
        assert_eq!(
            rule["helpUri"],
            "https://example.org/rules/chain/unresolved-executor.yaml"
        );
        assert_eq!(driver["rules"][2]["defaultConfiguration"]["level"], "note");

        assert_eq!(
            run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
            "file:///home/ann/project/"
        );

        let results = run["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(results.len(), 4);
        let by_rule = |id: &str| {
            results
                .iter()
                .find(|r| r["ruleId"] == id)
                .cloned()
                .unwrap_or_default()
        };

        let error = by_rule("unresolved-executor");
        assert_eq!(error["ruleIndex"], 0);
        assert_eq!(error["level"], "error");
        assert_eq!(
            error["message"]["text"],
            "executor `rye/runtimes/pyhton` does not resolve in any space\nhelp: check the id for a typo\nhelp: did you mean `rye/runtimes/python`?"
        );
        assert_eq!(
            error["fixes"][0]["artifactChanges"][0]["replacements"][0],
            json!({
                "deletedRegion": { "startLine": 4, "startColumn": 14, "endLine": 4, "endColumn": 33 },
                "insertedContent": { "text": "rye/runtimes/python" }
            })
        );
        assert_eq!(
            error["fixes"][0]["artifactChanges"][0]["artifactLocation"],
            json!({ "uri": ".ai/tools/fetch.py", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(
            error["properties"]["suggestions"],
            json!(["rye/runtimes/python"])
        );
        let location = &error["locations"][0]["physicalLocation"];
        assert_eq!(
            location["artifactLocation"],
            json!({ "uri": ".ai/tools/fetch.py", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(
            location["region"],
            json!({ "startLine": 4, "startColumn": 14, "endLine": 4, "endColumn": 33 })
        );
        assert!(error["partialFingerprints"][FINGERPRINT_KEY].is_string());
        assert_eq!(
            error["relatedLocations"][0]["physicalLocation"]["region"]["startLine"],
            1
        );

        let warning = by_rule("missing-version");
        assert!(
            warning.get("fixes").is_none(),
            "no certain suggestion, no fix"
        );
        assert_eq!(warning["level"], "warning");
        assert_eq!(warning["ruleIndex"], 1);
        assert_eq!(warning["message"]["text"], "tool declares no version");
        let uri = &warning["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(uri["uri"], ".ai/tools/my%20tools/list.py");
        assert_eq!(uri["uriBaseId"], "%SRCROOT%");

        assert_eq!(by_rule("unused-config-schema")["level"], "note");

        let absolute = by_rule("non-ascii-description");
        assert_eq!(absolute["level"], "error");
        assert!(
            absolute.get("ruleIndex").is_none(),
            "unknown rules get no ruleIndex"
        );
        let artifact = &absolute["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(artifact["uri"], "file:///home/ann/.ai/tools/caf%C3%A9.py");
        assert!(artifact.get("uriBaseId").is_none());
    }

    #[test]
    fn no_src_root_means_no_original_uri_base_ids() {
        let log = parse(&render(&fixtures::sample(), &rules(), &tool(None)));
        assert!(log["runs"][0].get("originalUriBaseIds").is_none());
        let log = parse(&render(
            &fixtures::sample(),
            &rules(),
            &tool(Some("relative/root")),
        ));
        assert!(log["runs"][0].get("originalUriBaseIds").is_none());
    }

    #[test]
    fn regions_are_clamped_to_valid_values() {
        let mut finding = fixtures::warning_without_excerpt();
        (
            finding.line,
            finding.column,
            finding.end_line,
            finding.end_column,
        ) = (0, 0, 0, 0);
        let log = parse(&render(&[finding], &rules(), &tool(None)));
        let region = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            region,
            &json!({ "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1 })
        );
    }

    #[test]
    fn duplicate_findings_get_distinct_fingerprints() {
        let finding = fixtures::warning_without_excerpt();
        let log = parse(&render(&[finding.clone(), finding], &rules(), &tool(None)));
        let print =
            |i: usize| log["runs"][0]["results"][i]["partialFingerprints"][FINGERPRINT_KEY].clone();
        assert_ne!(print(0), print(1));
    }

    #[test]
    fn uris() {
        assert_eq!(relative_uri("./a b/c#d?.py"), "a%20b/c%23d%3F.py");
        assert_eq!(relative_uri(r"dir\sub\x:y.py"), "dir/sub/x%3Ay.py");
        assert_eq!(file_uri("/srv/a b"), Some("file:///srv/a%20b".to_owned()));
        assert_eq!(
            file_uri(r"C:\work\x y.py"),
            Some("file:///C:/work/x%20y.py".to_owned())
        );
        assert_eq!(
            file_uri(r"\\host\share\x.py"),
            Some("file://host/share/x.py".to_owned())
        );
        assert_eq!(file_uri("rel/x.py"), None);
        assert_eq!(
            directory_uri("/srv/root/"),
            Some("file:///srv/root/".to_owned())
        );
        assert_eq!(
            pascal_case("upward-space-dependency"),
            "UpwardSpaceDependency"
        );
        assert_eq!(pascal_case("e2e_thing--x"), "E2eThingX");
    }
}
