//! Output renderers at the edge: turn located findings into terminal text, JSON or SARIF strings,
//! and the analysis' plain answers (chains, hovers) into text, JSON or markdown.
//!
//! Every renderer is a pure function from findings to a `String`; none of them prints or touches the
//! file system (the CLI does). Renderers never panic: out-of-range lines, columns and excerpt
//! highlights are clamped. Output order is the one `sort_findings` gives, applied to references.

pub mod chain;
pub mod exec;
pub mod hover;
pub mod human;
pub mod json;
pub mod sarif;
pub mod search;

pub use human::HumanOptions;

use crate::diagnostic::{Finding, Severity, compare_findings};

/// What SARIF needs to know about one rule (the `tool.driver.rules` entries).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleMeta {
    /// The kebab-case rule id, as in `Finding::rule`.
    pub id: String,
    /// The rule family (for example `chain` or `metadata`), exported as a SARIF tag.
    pub family: String,
    /// One sentence saying what the rule reports.
    pub summary: String,
    /// The rule's documentation in Markdown.
    pub docs: String,
    pub default_severity: Severity,
    /// Where the rule's page is read (SARIF `helpUri`).
    pub help_uri: Option<String>,
}

/// The tool that produced a SARIF log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub information_uri: String,
    /// Absolute path of the directory relative paths are resolved against (`%SRCROOT%`).
    pub src_root: Option<String>,
}

/// `findings` in sorted order (by reference, nothing copied), so that every renderer prints in
/// the same deterministic order.
fn sorted(findings: &[Finding]) -> Vec<&Finding> {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by(|a, b| compare_findings(a, b));
    sorted
}

/// Hand-made findings shared by the renderer tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::diagnostic::{Excerpt, Finding, FindingNote, Fix, Severity, Summary};

    fn finding(rule: &str, severity: Severity, path: &str, line: u32, column: u32) -> Finding {
        Finding {
            rule: rule.into(),
            severity,
            path: path.to_owned(),
            line,
            column,
            end_line: line,
            end_column: column,
            item_id: None,
            space: None,
            message: String::new(),
            help: None,
            notes: Vec::new(),
            excerpt: None,
            suggestions: Vec::new(),
            fix: None,
        }
    }

    /// An error with an excerpt, help and a note with a path.
    pub(crate) fn error_with_excerpt() -> Finding {
        let text = "executor_id: rye/runtimes/pyhton\n";
        let start = text.find("rye/").unwrap_or(0);
        Finding {
            end_column: 33,
            item_id: Some("tools/fetch".to_owned()),
            space: Some("project".into()),
            message: "executor `rye/runtimes/pyhton` does not resolve in any space".to_owned(),
            help: Some("check the id for a typo".into()),
            notes: vec![
                FindingNote {
                    message: "searched project, user and system:core".to_owned(),
                    path: None,
                    line: None,
                },
                FindingNote {
                    message: "the closest runtime is defined here".to_owned(),
                    path: Some(".ai/tools/rye/runtimes/python.yaml".to_owned()),
                    line: Some(1),
                },
            ],
            excerpt: Some(Excerpt {
                line_start: 4,
                text: text.to_owned(),
                highlight: start..text.len() - 1,
            }),
            suggestions: vec!["rye/runtimes/python".to_owned()],
            fix: Some(Box::new(Fix {
                line: 4,
                column: 14,
                end_line: 4,
                end_column: 33,
                replacement: "rye/runtimes/python".to_owned(),
                title: "Replace with `rye/runtimes/python`".to_owned(),
            })),
            ..finding(
                "unresolved-executor",
                Severity::Error,
                ".ai/tools/fetch.py",
                4,
                14,
            )
        }
    }

    /// A warning whose source could not be read.
    pub(crate) fn warning_without_excerpt() -> Finding {
        Finding {
            message: "tool declares no version".to_owned(),
            ..finding(
                "missing-version",
                Severity::Warning,
                ".ai/tools/my tools/list.py",
                1,
                1,
            )
        }
    }

    /// An info finding whose span covers three lines.
    pub(crate) fn multi_line_span() -> Finding {
        let text = "CONFIG_SCHEMA = {\n    \"type\": \"object\",\n}\n";
        Finding {
            end_line: 9,
            end_column: 2,
            message: "config schema is never read".to_owned(),
            excerpt: Some(Excerpt {
                line_start: 7,
                text: text.to_owned(),
                highlight: 16..text.len() - 1,
            }),
            ..finding(
                "unused-config-schema",
                Severity::Info,
                ".ai/tools/fetch.py",
                7,
                17,
            )
        }
    }

    /// An error on a line with multi-byte characters, at an absolute path.
    pub(crate) fn non_ascii_line() -> Finding {
        let text = "__description__ = \"Résumé → 日本語\"\n";
        let start = text.find('日').unwrap_or(0);
        Finding {
            end_column: 32,
            message: "description contains non-ASCII text".to_owned(),
            help: Some("keep descriptions ASCII so every terminal can show them".into()),
            excerpt: Some(Excerpt {
                line_start: 2,
                text: text.to_owned(),
                highlight: start..start + 9,
            }),
            ..finding(
                "non-ascii-description",
                Severity::Error,
                "/home/ann/.ai/tools/café.py",
                2,
                29,
            )
        }
    }

    /// The findings above in an order `sort_findings` must fix.
    pub(crate) fn sample() -> Vec<Finding> {
        vec![
            non_ascii_line(),
            multi_line_span(),
            error_with_excerpt(),
            warning_without_excerpt(),
        ]
    }

    pub(crate) fn sample_summary() -> Summary {
        Summary {
            files: 3,
            tools: 41,
            errors: 2,
            warnings: 1,
            ..Summary::default()
        }
    }
}
