//! The bundled example tree (README's first command) reports exactly the problems
//! `examples/README.md` lists: ten findings in eight files, every other file silent.
#![allow(
    clippy::disallowed_methods,
    reason = "the test loads the example tree from disk"
)]

use std::path::Path;

use ryechain::analysis::{Host, LintOptions, file_findings, graph_findings, lint, lint_files};
use ryechain::db::Settings;
use ryechain::diagnostic::sort_findings;
use ryechain::load::{SpaceSource, load};
use ryechain::system::os::OsSystem;
use ryechain::testing::three_spaces;

#[test]
fn example_tree_reports_exactly_the_planted_problems() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .canonicalize()
        .unwrap();
    let specs = three_spaces(
        root.join("project"),
        root.join("user"),
        SpaceSource::Embedded,
        "ryechain",
    );
    let outcome = load(&OsSystem, &specs);
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    let mut change = outcome.change;
    change.settings = Some(Settings::default());
    let mut host = Host::new();
    host.apply(change);
    let opts = LintOptions {
        display_base: Some(root),
    };
    let report = lint(&host.snapshot(), &opts, &|_| {});
    // The per-file entry point (editor, benchmarks) agrees with the whole-repo lint.
    let db = host.snapshot();
    let mut one_by_one: Vec<_> = lint_files(&db)
        .into_iter()
        .flat_map(|f| file_findings(&db, f, &opts))
        .chain(graph_findings(&db, &opts))
        .collect();
    sort_findings(&mut one_by_one);
    assert_eq!(one_by_one, report.findings);
    let mut got: Vec<(String, String)> = report
        .findings
        .iter()
        .map(|f| (f.path.clone(), f.rule.to_string()))
        .collect();
    got.sort();
    let want = [
        (
            "project/.ai/tools/acme/data/schema_lint.py",
            "unparseable-metadata",
        ),
        (
            "project/.ai/tools/acme/data/schema_lint.py",
            "unsigned-item",
        ),
        (
            "project/.ai/tools/acme/deploy/notify_slack.py",
            "invalid-version",
        ),
        (
            "project/.ai/tools/acme/deploy/notify_slack.py",
            "unsigned-item",
        ),
        (
            "project/.ai/tools/acme/ops/rotate_logs.py",
            "unknown-primitive",
        ),
        (
            "project/.ai/tools/acme/pipeline/ingest.yaml",
            "executor-cycle",
        ),
        (
            "project/.ai/tools/acme/reports/kpi_table.py",
            "content-hash-mismatch",
        ),
        (
            "project/.ai/tools/acme/reports/sales_summary.py",
            "unsatisfied-inputs",
        ),
        (
            "project/.ai/tools/acme/reports/weekly_digest.py",
            "missing-executor",
        ),
        (
            "user/.ai/tools/personal/notes/sync_notes.py",
            "missing-executor",
        ),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(report.summary.tools, 46);
}
