//! L5 the subprocess primitive's result mapping (§9.2): a finished `ProcessOutcome` (and the plan
//! that produced it) becomes the tool result `{success, data, error}` the response carries, with
//! the reference's quirks fixed (§15.26) and timeouts, signals and capped output said plainly.

use serde_json::{Map, Value};

use super::{ExecutionPlan, ExitKind, ProcessOutcome};
use crate::pyrepr::py_truthy;

/// What a tool run produced, as the response reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The process succeeded (exit 0) and, when it printed a JSON object, that object's `success`
    /// is not falsy.
    pub success: bool,
    /// The tool's JSON answer when its whole stdout parsed as JSON (any JSON value), else
    /// `{stdout, stderr, return_code}` (plus `truncated` when output was capped).
    pub data: Value,
    /// Why it failed (`None` on success).
    pub error: Option<String>,
    /// Things the caller should know that are not failures (capped output), in stream order.
    pub warnings: Vec<String>,
}

/// The return code of the reference's `SubprocessResult` (§9.1.6–8): the exit code, the negated
/// signal number (Python's convention), 127 for a missing program, -1 for everything else.
pub fn return_code(exit: &ExitKind) -> i32 {
    match exit {
        ExitKind::Code(c) => *c,
        ExitKind::Signal(s) => -s,
        ExitKind::NotFound => 127,
        ExitKind::TimedOut | ExitKind::BadCwd | ExitKind::SpawnFailed(_) | ExitKind::Cancelled => {
            -1
        }
    }
}

/// A signal's conventional name (`SIGKILL`), when it has one.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return None,
    })
}

/// `300`, or `0.5` for a fractional timeout.
fn seconds(d: std::time::Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        d.as_secs_f64().to_string()
    }
}

/// A JSON field as error text: strings as they are, other non-empty values as JSON.
fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other if py_truthy(other) => Some(other.to_string()),
        _ => None,
    }
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim_end();
    (!t.trim_start().is_empty()).then(|| t.to_owned())
}

/// Map a finished process to the tool result (§9.2), fixing the reference:
/// - the whole stdout (trimmed) is parsed as JSON, and **any** JSON value is kept as `data`:
///   a non-object no longer crashes the mapping (§15.26), and `{}`/`[]`/`0`/`""` are kept as the
///   tool's answer rather than counted as "not parsed" (the tool did answer);
/// - a JSON object whose `success` is falsy makes the result a failure with its `error` (or its
///   `stderr`) as the error text;
/// - a failed process keeps its stdout (or JSON) in `data`, with stderr (or a clear text when
///   stderr is empty) as the error;
/// - a timeout keeps what was captured before the kill (the reference dropped it, §9.1.6);
/// - capped output is never parsed as JSON (a prefix may parse as something else) and is reported
///   in `warnings` and, for raw data, in `data.truncated` (`{"stdout": <bytes written>}`).
pub fn tool_result(plan: &ExecutionPlan, out: &ProcessOutcome) -> ToolResult {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout_cut = out.stdout_total > out.stdout.len() as u64;
    let stderr_cut = out.stderr_total > out.stderr.len() as u64;
    let rc = return_code(&out.exit);

    let mut warnings = Vec::new();
    let mut truncated = Map::new();
    for (name, cut, kept, total) in [
        ("stdout", stdout_cut, out.stdout.len(), out.stdout_total),
        ("stderr", stderr_cut, out.stderr.len(), out.stderr_total),
    ] {
        if cut {
            warnings.push(format!(
                "{name} truncated: kept the first {kept} of {total} bytes"
            ));
            truncated.insert(name.to_owned(), Value::from(total));
        }
    }

    let trimmed = stdout.trim();
    let parsed = if stdout_cut || trimmed.is_empty() {
        None
    } else {
        serde_json::from_str::<Value>(trimmed).ok()
    };

    let process_ok = out.exit == ExitKind::Code(0);
    // The process's own account first (stderr, the reference's order), then the tool's JSON
    // `error`, then a text naming the exit code.
    let mut code_text = None;
    let process_error = match &out.exit {
        ExitKind::Code(0) => None,
        ExitKind::Code(c) => {
            code_text = Some(format!("Process exited with code {c}"));
            non_empty(&stderr)
        }
        ExitKind::Signal(s) => Some(match signal_name(*s) {
            Some(name) => format!("Process killed by signal {s} ({name})"),
            None => format!("Process killed by signal {s}"),
        }),
        ExitKind::TimedOut => Some(format!(
            "Command timed out after {} seconds",
            seconds(plan.timeout)
        )),
        ExitKind::NotFound => Some(format!("Command not found: {}", plan.program)),
        ExitKind::BadCwd => Some(format!(
            "Working directory does not exist: {}",
            plan.cwd
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )),
        ExitKind::SpawnFailed(msg) => Some(format!("Failed to start {}: {msg}", plan.program)),
        ExitKind::Cancelled => Some(
            "Cancelled by the caller; the tool and everything it started were killed".to_owned(),
        ),
    };

    let (tool_failed, tool_error) = match &parsed {
        Some(Value::Object(obj)) => match obj.get("success") {
            Some(s) if !py_truthy(s) => (
                true,
                text_of(obj.get("error"))
                    .or_else(|| text_of(obj.get("stderr")))
                    .or_else(|| non_empty(&stderr)),
            ),
            _ => (false, None),
        },
        _ => (false, None),
    };

    let success = process_ok && !tool_failed;
    let error = if success {
        None
    } else {
        Some(
            process_error
                .or(tool_error)
                .or(code_text)
                .unwrap_or_else(|| "Tool reported failure without an error message".to_owned()),
        )
    };

    let data = match parsed {
        Some(v) => v,
        None => {
            let mut raw = Map::new();
            raw.insert("stdout".to_owned(), Value::from(stdout.into_owned()));
            raw.insert("stderr".to_owned(), Value::from(stderr.into_owned()));
            raw.insert("return_code".to_owned(), Value::from(rc));
            if !truncated.is_empty() {
                raw.insert("truncated".to_owned(), Value::Object(truncated));
            }
            Value::Object(raw)
        }
    };

    ToolResult {
        success,
        data,
        error,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::time::Duration;

    fn plan() -> ExecutionPlan {
        ExecutionPlan {
            program: "mytool".to_owned(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: Some(PathBuf::from("/no/such/dir")),
            stdin: None,
            timeout: Duration::from_secs(300),
            output_cap: 1024,
        }
    }

    fn outcome(exit: ExitKind, stdout: &str, stderr: &str) -> ProcessOutcome {
        ProcessOutcome {
            exit,
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
            stdout_total: stdout.len() as u64,
            stderr_total: stderr.len() as u64,
            duration: Duration::from_millis(3),
        }
    }

    fn map(exit: ExitKind, stdout: &str, stderr: &str) -> ToolResult {
        tool_result(&plan(), &outcome(exit, stdout, stderr))
    }

    #[test]
    fn s9_2_plain_text_success_is_raw_data() {
        let r = map(ExitKind::Code(0), "hello\n", "");
        assert!(r.success);
        assert_eq!(r.error, None);
        assert_eq!(
            r.data,
            json!({"stdout": "hello\n", "stderr": "", "return_code": 0})
        );
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn s9_2_json_object_is_data() {
        let r = map(ExitKind::Code(0), "  {\"a\": 1, \"b\": [true]}\n", "noise");
        assert!(r.success);
        assert_eq!(r.data, json!({"a": 1, "b": [true]}));
    }

    #[test]
    fn s9_2_json_object_success_false_fails_with_its_error() {
        let r = map(
            ExitKind::Code(0),
            r#"{"success": false, "error": "bad input"}"#,
            "",
        );
        assert!(!r.success);
        assert_eq!(r.error.as_deref(), Some("bad input"));
        assert_eq!(r.data, json!({"success": false, "error": "bad input"}));
    }

    #[test]
    fn s9_2_json_failure_without_error_uses_its_stderr_then_the_process_stderr() {
        let r = map(
            ExitKind::Code(0),
            r#"{"success": 0, "stderr": "from json"}"#,
            "",
        );
        assert_eq!(r.error.as_deref(), Some("from json"));
        let r = map(ExitKind::Code(0), r#"{"success": null}"#, "from process\n");
        assert!(!r.success);
        assert_eq!(r.error.as_deref(), Some("from process"));
        let r = map(ExitKind::Code(0), r#"{"success": ""}"#, "");
        assert_eq!(
            r.error.as_deref(),
            Some("Tool reported failure without an error message")
        );
    }

    #[test]
    fn s9_2_truthy_success_values_pass() {
        for s in [
            r#"{"success": "false"}"#,
            r#"{"success": 1}"#,
            r#"{"x": 1}"#,
        ] {
            assert!(map(ExitKind::Code(0), s, "").success, "{s}");
        }
    }

    #[test]
    fn s15_26_non_object_json_is_data_not_a_crash() {
        for (text, value) in [
            ("[1, 2]", json!([1, 2])),
            ("42", json!(42)),
            ("\"hi\"", json!("hi")),
            ("true", json!(true)),
        ] {
            let r = map(ExitKind::Code(0), text, "");
            assert!(r.success, "{text}");
            assert_eq!(r.data, value);
            assert_eq!(r.error, None);
        }
        let r = map(ExitKind::Code(2), "[1]", "boom");
        assert!(!r.success);
        assert_eq!(r.data, json!([1]));
        assert_eq!(r.error.as_deref(), Some("boom"));
    }

    /// Decision: the reference treats falsy JSON as "not parsed"; we keep the tool's answer.
    #[test]
    fn s9_2_empty_json_values_are_kept() {
        for (text, value) in [
            ("{}", json!({})),
            ("[]", json!([])),
            ("0", json!(0)),
            ("\"\"", json!("")),
            ("null", Value::Null),
        ] {
            let r = map(ExitKind::Code(0), text, "");
            assert!(r.success, "{text}");
            assert_eq!(r.data, value, "{text}");
        }
    }

    #[test]
    fn s9_2_nonzero_exit_uses_stderr_and_keeps_stdout() {
        let r = map(ExitKind::Code(42), "partial\n", "it broke\n");
        assert!(!r.success);
        assert_eq!(r.error.as_deref(), Some("it broke"));
        assert_eq!(
            r.data,
            json!({"stdout": "partial\n", "stderr": "it broke\n", "return_code": 42})
        );
    }

    #[test]
    fn s9_2_nonzero_exit_without_stderr_says_the_code() {
        let r = map(ExitKind::Code(3), "", "  \n");
        assert_eq!(r.error.as_deref(), Some("Process exited with code 3"));
        assert_eq!(r.data["return_code"], json!(3));
    }

    #[test]
    fn s9_2_nonzero_exit_with_json_error_and_no_stderr_uses_the_json_error() {
        let r = map(
            ExitKind::Code(1),
            r#"{"success": false, "error": "nope"}"#,
            "",
        );
        assert!(!r.success);
        assert_eq!(r.error.as_deref(), Some("nope"));
        // stderr still comes first (the reference's order).
        let r = map(
            ExitKind::Code(1),
            r#"{"success": false, "error": "nope"}"#,
            "trace",
        );
        assert_eq!(r.error.as_deref(), Some("trace"));
    }

    #[test]
    fn s9_1_6_timeout_keeps_partial_output() {
        let r = map(ExitKind::TimedOut, "started\n", "");
        assert!(!r.success);
        assert_eq!(
            r.error.as_deref(),
            Some("Command timed out after 300 seconds")
        );
        assert_eq!(r.data["stdout"], json!("started\n"));
        assert_eq!(r.data["return_code"], json!(-1));
        let mut p = plan();
        p.timeout = Duration::from_millis(1500);
        let r = tool_result(&p, &outcome(ExitKind::TimedOut, "", ""));
        assert_eq!(
            r.error.as_deref(),
            Some("Command timed out after 1.5 seconds")
        );
    }

    #[test]
    fn a_cancelled_run_is_a_failure_that_keeps_partial_output() {
        let r = map(ExitKind::Cancelled, "started\n", "");
        assert!(!r.success);
        assert_eq!(
            r.error.as_deref(),
            Some("Cancelled by the caller; the tool and everything it started were killed")
        );
        assert_eq!(r.data["stdout"], json!("started\n"));
        assert_eq!(r.data["return_code"], json!(-1));
    }

    #[test]
    fn s9_1_7_not_found_bad_cwd_spawn_failed() {
        let r = map(ExitKind::NotFound, "", "");
        assert_eq!(r.error.as_deref(), Some("Command not found: mytool"));
        assert_eq!(r.data["return_code"], json!(127));
        let r = map(ExitKind::BadCwd, "", "");
        assert_eq!(
            r.error.as_deref(),
            Some("Working directory does not exist: /no/such/dir")
        );
        let r = map(
            ExitKind::SpawnFailed("Permission denied (os error 13)".to_owned()),
            "",
            "",
        );
        assert_eq!(
            r.error.as_deref(),
            Some("Failed to start mytool: Permission denied (os error 13)")
        );
        assert!(!r.success);
    }

    #[test]
    fn s9_1_8_signals_are_named() {
        let r = map(ExitKind::Signal(9), "", "");
        assert_eq!(
            r.error.as_deref(),
            Some("Process killed by signal 9 (SIGKILL)")
        );
        assert_eq!(r.data["return_code"], json!(-9));
        let r = map(ExitKind::Signal(15), "", "");
        assert_eq!(
            r.error.as_deref(),
            Some("Process killed by signal 15 (SIGTERM)")
        );
        let r = map(ExitKind::Signal(77), "", "");
        assert_eq!(r.error.as_deref(), Some("Process killed by signal 77"));
    }

    #[test]
    fn capped_output_is_reported_and_not_parsed() {
        let mut o = outcome(ExitKind::Code(0), "123", "err");
        o.stdout_total = 5_000_000;
        o.stderr_total = 9;
        let r = tool_result(&plan(), &o);
        assert!(r.success);
        assert_eq!(r.data["stdout"], json!("123"));
        assert_eq!(
            r.data["truncated"],
            json!({"stdout": 5_000_000, "stderr": 9})
        );
        assert_eq!(
            r.warnings,
            vec![
                "stdout truncated: kept the first 3 of 5000000 bytes".to_owned(),
                "stderr truncated: kept the first 3 of 9 bytes".to_owned(),
            ]
        );
    }

    #[test]
    fn non_utf8_stdout_is_decoded_lossily() {
        let mut o = outcome(ExitKind::Code(0), "", "");
        o.stdout = vec![0xff, b'o', b'k'];
        o.stdout_total = 3;
        let r = tool_result(&plan(), &o);
        assert_eq!(r.data["stdout"], json!("\u{fffd}ok"));
    }

    #[test]
    fn huge_json_answer_maps() {
        let big = "x".repeat(5 * 1024 * 1024);
        let text = format!(r#"{{"success": true, "blob": "{big}"}}"#);
        let r = map(ExitKind::Code(0), &text, "");
        assert!(r.success);
        assert_eq!(r.data["blob"].as_str().map(str::len), Some(big.len()));
    }

    #[test]
    fn invalid_json_is_raw() {
        let r = map(ExitKind::Code(0), "{\"a\": 1} trailing", "");
        assert_eq!(r.data["stdout"], json!("{\"a\": 1} trailing"));
    }
}
