//! The JSON renderer: a stable machine-readable object with every diagnostic and the run summary.

use serde::Serialize;

use crate::diagnostic::{Finding, Summary};

/// Render `{"diagnostics": [...], "summary": {...}}`, pretty-printed with a trailing newline.
///
/// Keys keep the documented order; absent `item_id`, `space` and `help` are `null`;
/// `suggestions` (ids offered instead of the one written, best first) is always an array.
/// Serialized straight from borrowed findings (no intermediate JSON tree): at 100k findings the
/// tree cost several times the text it printed.
pub fn render(findings: &[Finding], summary: &Summary) -> String {
    let document = Document {
        diagnostics: super::sorted(findings).into_iter().map(Diag::of).collect(),
        summary: SummaryOut {
            files: summary.files,
            tools: summary.tools,
            errors: summary.errors,
            warnings: summary.warnings,
            spaces: summary.read.names(),
            hidden: summary.hidden,
            hidden_spaces: summary.hidden_spaces.names(),
        },
    };
    let mut out = Vec::new();
    // Two-space indents, as the pretty printer of `serde_json::Value` writes them.
    let written = document.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"  "),
    ));
    // Serializing strings and numbers into a Vec cannot fail, and serde_json writes UTF-8.
    debug_assert!(written.is_ok());
    let mut out = String::from_utf8(out).unwrap_or_default();
    out.push('\n');
    out
}

/// The diagnostics of `findings` as a JSON array, in the given order (the objects `render`
/// writes; `lint --watch --format json` prints the new and the fixed ones of each batch).
pub fn findings_json(findings: &[&Finding]) -> serde_json::Value {
    let diags: Vec<Diag<'_>> = findings.iter().map(|f| Diag::of(f)).collect();
    serde_json::to_value(diags).unwrap_or_default()
}

/// The document's top level, fields in output order.
#[derive(Serialize)]
struct Document<'a> {
    diagnostics: Vec<Diag<'a>>,
    summary: SummaryOut,
}

#[derive(Serialize)]
struct SummaryOut {
    files: usize,
    tools: usize,
    errors: usize,
    warnings: usize,
    /// The spaces read.
    spaces: Vec<&'static str>,
    /// Findings of files in other spaces than those shown that no shown tool uses, not listed
    /// (`lint --space` lists them), and those spaces.
    hidden: usize,
    hidden_spaces: Vec<&'static str>,
}

/// One diagnostic, fields in output order.
#[derive(Serialize)]
struct Diag<'a> {
    rule: &'a str,
    severity: &'static str,
    path: &'a str,
    line: u32,
    column: u32,
    item_id: Option<&'a str>,
    space: Option<&'a str>,
    message: &'a str,
    help: Option<&'a str>,
    suggestions: &'a [String],
}

impl<'a> Diag<'a> {
    fn of(finding: &'a Finding) -> Diag<'a> {
        Diag {
            rule: &finding.rule,
            severity: finding.severity.as_str(),
            path: &finding.path,
            line: finding.line,
            column: finding.column,
            item_id: finding.item_id.as_deref(),
            space: finding.space.as_deref(),
            message: &finding.message,
            help: finding.help.as_deref(),
            suggestions: &finding.suggestions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use serde_json::Value;

    #[test]
    fn sample_document() {
        insta::assert_snapshot!(render(&fixtures::sample(), &fixtures::sample_summary()));
    }

    #[test]
    fn empty_document() {
        let out = render(
            &[],
            &Summary {
                files: 0,
                tools: 0,
                errors: 0,
                warnings: 0,
                ..Summary::default()
            },
        );
        insta::assert_snapshot!(out);
        assert!(out.ends_with("}\n"));
    }

    #[test]
    fn keys_keep_their_order_and_absent_fields_are_null() {
        let out = render(
            &[fixtures::warning_without_excerpt()],
            &fixtures::sample_summary(),
        );
        let value: Value = serde_json::from_str(&out).unwrap_or_default();
        let keys: Vec<&str> = value["diagnostics"][0]
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "rule",
                "severity",
                "path",
                "line",
                "column",
                "item_id",
                "space",
                "message",
                "help",
                "suggestions"
            ]
        );
        assert!(value["diagnostics"][0]["help"].is_null());
        assert!(value["diagnostics"][0]["item_id"].is_null());
        assert_eq!(
            value["diagnostics"][0]["suggestions"],
            serde_json::json!([])
        );
        let keys: Vec<&str> = value["summary"]
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "files",
                "tools",
                "errors",
                "warnings",
                "spaces",
                "hidden",
                "hidden_spaces"
            ]
        );
        assert!(out.starts_with("{\n  \"diagnostics\": [\n    {\n"), "{out}");
    }

    #[test]
    fn output_is_sorted_by_path_line_rule() {
        let out = render(&fixtures::sample(), &fixtures::sample_summary());
        let value: Value = serde_json::from_str(&out).unwrap_or_default();
        let order: Vec<(&str, u64)> = value["diagnostics"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| {
                        (
                            d["path"].as_str().unwrap_or(""),
                            d["line"].as_u64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(
            order,
            [
                (".ai/tools/fetch.py", 4),
                (".ai/tools/fetch.py", 7),
                (".ai/tools/my tools/list.py", 1),
                ("/home/ann/.ai/tools/café.py", 2),
            ]
        );
    }
}
