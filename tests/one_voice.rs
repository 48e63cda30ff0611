//! One voice (issue 31 item 3): every text a user reads about a chain break, a missing item or an
//! integrity failure comes from one place (`ryechain::message`, whose rule texts are the rule
//! files' templates). Each break is rendered here by every place that reports it — lint, the
//! chain view (`chain`, the dry run), the exec planner's refusal, the editor's hover, the CLI —
//! and the texts are compared.
#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the ryechain binary and writes a temporary project"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value as Json;

use ryechain::analysis::{Host, LintOptions};
use ryechain::exec::facts::Facts;
use ryechain::exec::plan::{ExecRequest, Step, plan};
use ryechain::message;
use ryechain::testing::{FIXTURE_ROOT, answer_as_empty_machine, exec_request, host};

const PY: &str = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n";

fn tree() -> String {
    let mut t = String::new();
    let py = |rel: &str, executor: &str| {
        format!("//- /project/.ai/tools/{rel}.py\n{PY}__executor_id__ = {executor}\n")
    };
    t.push_str(&py("t/missing", "\"no/such/runtime\""));
    t.push_str(&py("t/bad_id", "\"../escape\""));
    t.push_str(&py("t/wrong_type", "5"));
    t.push_str(&py("t/loop_a", "\"t/loop_b\""));
    t.push_str(&py("t/loop_b", "\"t/loop_a\""));
    // A chain of twelve: longer than the default maximum of ten.
    for i in 0..12 {
        let next = if i == 11 {
            "\"rye/core/primitives/subprocess\"".to_owned()
        } else {
            format!("\"d/d{}\"", i + 1)
        };
        t.push_str(&py(&format!("d/d{i}"), &next));
    }
    t.push_str(&format!(
        "//- /project/.ai/tools/t/script.py\n{PY}print(\"runs at import\")\n"
    ));
    t
}

fn request(item: &str) -> ExecRequest {
    let mut req = exec_request(item, serde_json::Map::new());
    req.use_lockfile = false;
    req
}

/// The planner's refusal of `item` (an empty machine answers its questions).
fn refusal(host: &Host, item: &str, dry_run: bool) -> String {
    let mut req = request(item);
    req.dry_run = dry_run;
    let mut facts = Facts::complete(BTreeMap::new());
    for _ in 0..32 {
        match plan(host.analysis(), &req, &facts) {
            Step::Need(needs) => answer_as_empty_machine(&needs, &mut facts),
            Step::Refused(r) => {
                let json = ryechain::render::exec::response(&r, None);
                return json["error"].as_str().unwrap_or("").to_owned();
            }
            Step::DryRun(v) => {
                let json: Json = ryechain::render::chain::dry_run(&v);
                return json["error"].as_str().unwrap_or("").to_owned();
            }
            Step::Run(p) => panic!("{item} was planned to run: {:?}", p.plan),
            Step::Http(p) => panic!("{item} was planned to send: {:?}", p.plan),
        }
    }
    panic!("planning {item} did not settle")
}

/// Lint's message of `rule` at the tool `item`.
fn lint_message(host: &Host, rule: &str, item: &str) -> String {
    let report = host.analysis().lint(&LintOptions::default(), &|_| {});
    report
        .findings
        .iter()
        .find(|f| f.rule.as_ref() == rule && f.item_id.as_deref() == Some(item))
        .unwrap_or_else(|| panic!("no {rule} finding at {item}: {:#?}", report.findings))
        .message
        .clone()
}

/// The hover's break text on the executor id of the tool `item`.
fn hover_error(host: &Host, item: &str, executor: &str) -> Option<String> {
    let a = host.analysis();
    let path = PathBuf::from(format!("{FIXTURE_ROOT}/project/.ai/tools/{item}.py"));
    let file = a.file_at(&path).expect("the tool is loaded");
    let text = a.text(file).expect("text");
    let offset = text.find(executor).expect("the executor id is in the text") + 1;
    a.hover(file, offset).and_then(|h| h.error)
}

#[test]
fn every_chain_break_reads_the_same_in_lint_chain_exec_and_the_hover() {
    let host = host(&tree());
    let a = host.analysis();
    // (rule, tool, the executor id as written, the text every place must give)
    let cases: Vec<(&str, &str, &str, String)> = vec![
        (
            "missing-executor",
            "t/missing",
            "no/such/runtime",
            message::executor_not_found("no/such/runtime"),
        ),
        (
            "invalid-item-id",
            "t/bad_id",
            "../escape",
            message::invalid_executor_id(
                "../escape",
                "t/bad_id",
                ryechain::model::item_id_problem("../escape").expect("hostile"),
            ),
        ),
        (
            "invalid-item-id",
            "t/wrong_type",
            "= 5",
            message::invalid_executor_id(
                "5",
                "t/wrong_type",
                &message::executor_id_wrong_type("int"),
            ),
        ),
        (
            "chain-too-deep",
            "d/d0",
            "d/d1",
            message::chain_too_deep(10, "d/d0"),
        ),
    ];
    for (rule, item, executor, expected) in &cases {
        let view = a.chain(item);
        let places = [
            ("lint", lint_message(&host, rule, item)),
            ("chain", view.error.clone().unwrap_or_default()),
            ("exec", refusal(&host, item, false)),
            ("exec --dry-run", refusal(&host, item, true)),
        ];
        for (place, text) in &places {
            assert_eq!(text, expected, "{place} on {item}");
        }
        // The hover on the tool that breaks the chain tells what running it would answer (an
        // executor id that is not a string is no id to hover; the first of a too-long chain
        // breaks nothing itself).
        if *rule != "chain-too-deep" && *item != "t/wrong_type" {
            assert_eq!(
                hover_error(&host, item, executor).as_ref(),
                Some(expected),
                "hover on {item}"
            );
        }
    }
    // A cycle: lint reports it once at the member whose path sorts first; the chain, exec and
    // the hover name the id that repeats.
    let expected = message::circular_dependency("t/loop_a");
    assert_eq!(lint_message(&host, "executor-cycle", "t/loop_a"), expected);
    assert_eq!(a.chain("t/loop_a").error.as_ref(), Some(&expected));
    assert_eq!(refusal(&host, "t/loop_a", false), expected);
    assert_eq!(
        hover_error(&host, "t/loop_a", "t/loop_b").as_ref(),
        Some(&expected)
    );
}

#[test]
fn an_unknown_primitive_and_a_missing_tool_read_the_same_everywhere() {
    let host = host(&tree());
    let a = host.analysis();
    let expected = message::unknown_primitive("t/script");
    assert_eq!(
        lint_message(&host, "unknown-primitive", "t/script"),
        expected
    );
    assert_eq!(refusal(&host, "t/script", false), expected);
    let view = a.chain("t/script");
    assert_eq!(view.run_error().as_ref(), Some(&expected));
    assert_eq!(
        view.unknown_primitive_finding.map(|(_, m, _)| m).as_ref(),
        Some(&expected)
    );

    let expected = message::tool_not_found("no/such");
    let view = a.chain("no/such");
    let (text, ok) = ryechain::render::chain::human(&view, &[]);
    assert!(!ok);
    assert_eq!(text.trim_end(), expected);
    assert_eq!(refusal(&host, "no/such", false), expected);
    assert_eq!(refusal(&host, "no/such", true), expected);
    assert_eq!(a.build_lockfile("no/such", "now").err(), Some(expected));
}

/// The rule texts the catalogue renders are the rule files' own: a template changed in a rule
/// file changes the text everywhere, and every rule the catalogue names exists.
#[test]
fn the_catalogue_renders_the_rule_files_templates() {
    let rules = ryechain::rules::rules();
    for id in [
        "missing-executor",
        "unknown-primitive",
        "chain-too-deep",
        "executor-cycle",
        "invalid-item-id",
        "unsigned-item",
        "content-hash-mismatch",
        "untrusted-key",
        "bad-signature",
    ] {
        let rule = rules
            .get(id)
            .unwrap_or_else(|| panic!("the catalogue names the rule {id}"));
        assert_eq!(message::rule_message(id), &*rule.message, "{id}");
    }
}

/// Every command that takes an item id says the same when no tool has it.
#[test]
fn every_command_says_tool_not_found_in_the_same_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".ai/tools")).expect("project");
    std::fs::create_dir_all(dir.path().join("user/.ai")).expect("user space");
    let expected = message::tool_not_found("no/such");
    let p = project.to_str().expect("utf-8 path");
    for args in [
        vec!["chain", "no/such", p],
        vec!["exec", "no/such", p, "--format", "json"],
        vec!["verify", "no/such", p],
        vec!["lock", "no/such", p],
        vec!["sign", "no/such", p],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ryechain"))
            .args(&args)
            .env("HOME", dir.path())
            .env("RYE_USER_SPACE", dir.path().join("user"))
            .env("NO_COLOR", "1")
            .output()
            .expect("run ryechain");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            all.contains(&expected),
            "`ryechain {}`: {all}",
            args.join(" ")
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "`ryechain {}`: {all}",
            args.join(" ")
        );
    }
}
