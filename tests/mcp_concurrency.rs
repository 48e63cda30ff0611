//! `ryechain mcp` stays responsive (issue 32 item 6, §12): calls run side by side (a tool that
//! never exits delays neither a short call nor a search), `notifications/cancelled` ends the
//! call's processes (its group, and what left the group), progress is reported for a run past a
//! second when the request carries a progress token (and not otherwise), closing stdin mid-call
//! ends every call's processes and the server, and an item edited, added or removed on disk
//! between two calls is seen by the second (execute and search). Driven with raw JSON-RPC lines
//! against signed temporary projects, and with the official MCP Python SDK (PyPI `mcp`, in the
//! virtualenv `.ci/run` makes at `target/mcp-venv`): its progress callback and its cancellation
//! of an abandoned call.
//!
//! Without the SDK that test skips and says why, unless `RYECHAIN_REQUIRE_MCP_CLIENTS=1` (set by
//! `.ci/run`) or `CI=true`, which turn a missing client into a failure.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests spawn the server and its client, write a temporary project and read /proc"
)]

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::project::{BIN, TempProject, mcp_sdk};
use common::{Sleeps, all_gone};
use serde_json::{Value as Json, json};

/// How long any one answer of the server may take here (a debug build on a busy machine).
const PATIENCE: Duration = Duration::from_secs(60);

/// The environment variable every process of one server inherits (the server, its workers, the
/// tools, what they start: a tool's environment starts from the server's), so a test can look
/// for anything of that server still alive.
const TAG: &str = "RYECHAIN_MCP_TEST_TAG";

/// The ways a run's processes are contained: a cgroup of its own where one can be made (with the
/// process group and the worker's adoption of orphans), and the group and adoption alone.
const CONTAINMENTS: [&[&str]; 2] = [&[], &["--no-cgroup"]];

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this machine can run the tests: bash, setsid and sleep for the tools, `/proc` to
/// check by pid that processes are gone.
fn runnable() -> bool {
    let ok = have("bash") && have("setsid") && have("sleep") && Path::new("/proc/self").exists();
    if !ok {
        eprintln!("skipped: needs bash, setsid, sleep and /proc");
    }
    ok
}

/// The header of a bash tool of the `acme` category.
fn bash_tool(description: &str, body: &str) -> String {
    format!(
        "__version__=\"1.0.0\"\n__tool_type__=\"bash\"\n__executor_id__=\"rye/core/runtimes/bash/bash\"\n__category__=\"acme\"\n__tool_description__=\"{description}\"\n\nparams=$(cat)\n{body}\n"
    )
}

/// A tool that never exits. It starts a `sleep` in its process group and one in a session of its
/// own (`setsid`: out of the group, re-parented when the tool dies), writes
/// `<its pid> <the group's sleep> <the escaped sleep>` to `<project>/pids/<its pid>` (written
/// whole, then renamed), and waits for them.
const FOREVER: &str = r#"sleep 100000 &
group=$!
setsid sleep 100000 >/dev/null 2>&1 &
escaped=$!
mkdir -p "$1/pids"
echo "$$ $group $escaped" > "$1/pids/.$$"
mv "$1/pids/.$$" "$1/pids/$$"
wait"#;

/// A temporary project with signed bash tools, and a home directory whose user space trusts the
/// signing key (as `ryechain keys generate` leaves it).
struct Project(TempProject);

impl std::ops::Deref for Project {
    type Target = TempProject;
    fn deref(&self) -> &TempProject {
        &self.0
    }
}

impl Project {
    fn new() -> Project {
        let p = Project(TempProject::keyed());
        p.tool("greet", "Greet the caller", "echo '{\"hello\": \"world\"}'");
        p.tool("forever", "Never exit", FOREVER);
        // Past two progress ticks, well short of the patience.
        p.tool(
            "slow",
            "Take a while",
            "sleep 2.5\necho '{\"slept\": true}'",
        );
        p
    }

    /// Write and sign the tool `acme/<name>`.
    fn tool(&self, name: &str, description: &str, body: &str) {
        self.write(
            &format!(".ai/tools/acme/{name}.sh"),
            &bash_tool(description, body),
        );
        self.cli(&["sign", &format!("acme/{name}")]);
    }

    fn path(&self) -> &str {
        self.dir.to_str().unwrap()
    }

    /// The pids every started `forever` wrote, once `n` of them have: each tool's own, its
    /// group's sleep and its escaped sleep. Killed at the end of the test if still there.
    fn forever_pids(&self, n: usize) -> Sleeps {
        let dir = self.dir.join("pids");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
                .collect();
            if files.len() >= n {
                let mut pids = Vec::new();
                for f in files {
                    let text = std::fs::read_to_string(f).unwrap();
                    pids.extend(text.split_whitespace().map(|p| p.parse::<u32>().unwrap()));
                }
                assert_eq!(pids.len(), 3 * n, "{pids:?}");
                return Sleeps(pids);
            }
            assert!(Instant::now() < deadline, "the forever tool did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether the process is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    !common::gone(pid)
}

/// The processes (other than zombies) whose environment holds `TAG=tag`.
fn tagged(tag: &str) -> Vec<u32> {
    let needle = format!("{TAG}={tag}");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
                && alive(pid)
        })
        .collect()
}

/// A running `ryechain mcp` spoken to line by line, its messages sorted as they come: answers by
/// id, notifications in order.
struct Wire {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    answers: HashMap<i64, Json>,
    notifications: Vec<Json>,
    tag: String,
}

impl Wire {
    fn start(p: &Project, args: &[&str]) -> Wire {
        let tag = format!("{}-{}", std::process::id(), rand_suffix());
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(args)
            .env("HOME", &p.home)
            .env(TAG, &tag)
            .env_remove("USER_SPACE")
            .env_remove("RYE_SYSTEM_SPACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ryechain mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut wire = Wire {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
            answers: HashMap::new(),
            notifications: Vec::new(),
            tag,
        };
        wire.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}
            }
        }));
        let init = wire.answer(0);
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        wire.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        wire
    }

    fn send(&mut self, message: &Json) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send `tools/call` of `name` with `arguments` (and `_meta` when given) as request `id`.
    fn call(&mut self, id: i64, name: &str, arguments: Json, meta: Option<Json>) {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    /// Read one message from stdout (which must be one JSON-RPC message) and file it; `false`
    /// once stdout has closed.
    fn pump(&mut self, wait: Duration) -> bool {
        let line = match self.lines.recv_timeout(wait) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => return true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        };
        let message: Json = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only protocol messages: {line:?} ({e})"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        match message["id"].as_i64() {
            Some(id) if message.get("method").is_none() => {
                assert!(
                    self.answers.insert(id, message.clone()).is_none(),
                    "two answers to {id}: {message}"
                );
            }
            _ => self.notifications.push(message),
        }
        true
    }

    /// The answer to request `id`, waiting for it.
    fn answer(&mut self, id: i64) -> Json {
        let deadline = Instant::now() + PATIENCE;
        while !self.answers.contains_key(&id) {
            assert!(Instant::now() < deadline, "no answer to request {id}");
            assert!(
                self.pump(Duration::from_millis(100)),
                "stdout closed before answering {id}"
            );
        }
        self.answers[&id].clone()
    }

    /// The tool response (the JSON in the result's text) of request `id`.
    fn response(&mut self, id: i64) -> Json {
        let answer = self.answer(id);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a tool result: {answer}"));
        serde_json::from_str(text).unwrap()
    }

    /// The progress notifications for `token` received so far.
    fn progress(&self, token: &str) -> Vec<Json> {
        self.notifications
            .iter()
            .filter(|n| {
                n["method"] == "notifications/progress" && n["params"]["progressToken"] == token
            })
            .map(|n| n["params"].clone())
            .collect()
    }

    /// Close stdin and wait for the server to exit: its exit code and its stderr. Answers and
    /// notifications written before it exited are filed.
    fn close(&mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        while self.pump(Duration::from_millis(50)) {
            assert!(
                Instant::now() < deadline,
                "the server did not exit after stdin closed"
            );
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status.code(), stderr)
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // A failed test leaves no server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(Instant::now().elapsed().as_nanos() as u64);
    h.finish()
}

fn execute(id: &str, project: &str) -> Json {
    json!({"item_type": "tool", "item_id": id, "project_path": project})
}

fn search(query: &str, project: &str) -> Json {
    json!({"item_type": "tool", "query": query, "project_path": project})
}

fn found_ids(response: &Json) -> Vec<String> {
    response["results"]
        .as_array()
        .unwrap_or_else(|| panic!("search results: {response}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The children of `pid` (of any of its threads).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` is one of the server's workers (its command line names the worker).
/// Whether `pid` has ended: a zombie (its exit status not yet collected) or gone. A process that
/// is still exiting is neither (its command line may already read empty).
fn dead(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with(['Z', 'X']))
    })
}

fn is_worker(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        c.split(|&b| b == 0)
            .any(|arg| arg == b"__ryechain-run-worker")
    })
}

/// Wait until every tagged process is gone but the server itself and the one worker it keeps
/// started for the next call (idle: it has no child); the ones left.
fn only_the_server_left(wire: &Wire) -> Vec<u32> {
    let server = wire.child.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut spares = 0;
        let left: Vec<u32> = tagged(&wire.tag)
            .into_iter()
            .filter(|&p| p != server)
            .filter(|&p| {
                let spare = spares == 0 && is_worker(p) && children(p).is_empty();
                spares += usize::from(spare);
                !spare
            })
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 32 item 6: a long tool call never blocks other requests. While a tool that never exits
/// runs, a second tool call and a search are answered; then `notifications/cancelled` kills the
/// long call's process group — the tool and the sleep it started — and the sleep that left the
/// group (`setsid`), by pid, and no answer to the cancelled request is sent. The server goes on
/// serving, and leaves no worker or tool process behind.
#[test]
fn a_long_call_delays_neither_a_short_call_nor_a_search_and_cancelling_it_kills_its_processes() {
    if !runnable() {
        return;
    }
    for flags in CONTAINMENTS {
        let p = Project::new();
        let mut wire = Wire::start(&p, flags);
        wire.call(1, "rye_execute", execute("acme/forever", p.path()), None);
        let pids = p.forever_pids(1);
        assert!(pids.0.iter().all(|&pid| alive(pid)), "{:?}", pids.0);

        wire.call(2, "rye_execute", execute("acme/greet", p.path()), None);
        let greet = wire.response(2);
        assert_eq!(greet["status"], "success", "{greet}");
        assert_eq!(greet["data"], json!({"hello": "world"}), "{greet}");
        wire.call(3, "rye_search", search("forever OR greet", p.path()), None);
        let found = wire.response(3);
        let mut ids = found_ids(&found);
        ids.sort();
        assert_eq!(ids, ["acme/forever", "acme/greet"], "{found}");
        // A dry run beside it, in the server's own process.
        wire.call(
            4,
            "rye_execute",
            json!({"item_type": "tool", "item_id": "acme/slow", "project_path": p.path(), "dry_run": true}),
            None,
        );
        assert_eq!(wire.response(4)["status"], "validation_passed");
        assert!(!wire.answers.contains_key(&1), "the forever tool answered");
        assert!(pids.0.iter().all(|&pid| alive(pid)), "{:?}", pids.0);

        wire.send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "the test is done with it"}
        }));
        assert!(
            all_gone(&pids.0),
            "the cancelled call's processes {:?} are still there",
            pids.0
        );
        // Still serving; the cancelled request is never answered.
        wire.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
        assert_eq!(wire.answer(5)["result"]["tools"][0]["name"], "rye_execute");
        wire.call(6, "rye_execute", execute("acme/greet", p.path()), None);
        assert_eq!(wire.response(6)["status"], "success");
        let left = only_the_server_left(&wire);
        assert!(left.is_empty(), "processes of the server left: {left:?}");
        let (code, stderr) = wire.close();
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            !wire.answers.contains_key(&1),
            "the cancelled call was answered"
        );
        assert!(stderr.is_empty(), "{stderr}");
    }
}

/// Issue 32 item 6: two calls of a tool that never exits run at once, and cancelling one leaves
/// the other running (each call's processes are its own); cancelling the second ends it too.
#[test]
fn concurrent_calls_are_cancelled_one_by_one() {
    if !runnable() {
        return;
    }
    for flags in CONTAINMENTS {
        let p = Project::new();
        let mut wire = Wire::start(&p, flags);
        wire.call(1, "rye_execute", execute("acme/forever", p.path()), None);
        let first = p.forever_pids(1);
        wire.call(2, "rye_execute", execute("acme/forever", p.path()), None);
        let both = p.forever_pids(2);
        let second: Vec<u32> = both
            .0
            .iter()
            .copied()
            .filter(|pid| !first.0.contains(pid))
            .collect();
        assert_eq!(second.len(), 3, "{:?} {:?}", first.0, both.0);
        wire.send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}
        }));
        assert!(all_gone(&first.0), "{:?} still there", first.0);
        assert!(
            second.iter().all(|&pid| alive(pid)),
            "the other call's processes {second:?} went too"
        );
        wire.send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}
        }));
        assert!(all_gone(&second), "{second:?} still there");
        let left = only_the_server_left(&wire);
        assert!(left.is_empty(), "processes of the server left: {left:?}");
        let (code, stderr) = wire.close();
        assert_eq!(code, Some(0), "{stderr}");
        assert!(wire.answers.keys().all(|&id| id == 0), "{:?}", wire.answers);
    }
}

/// Issue 32 item 6: a run longer than a second reports `notifications/progress` when the request's
/// `_meta` carries a progress token — the token echoed, the seconds so far rising, a message
/// naming the call — and reports none without one.
#[test]
fn progress_is_reported_for_a_long_run_only_when_a_token_was_sent() {
    if !runnable() {
        return;
    }
    let p = Project::new();
    let mut wire = Wire::start(&p, &[]);
    wire.call(
        1,
        "rye_execute",
        execute("acme/slow", p.path()),
        Some(json!({"progressToken": "slow-1"})),
    );
    let slow = wire.response(1);
    assert_eq!(slow["status"], "success", "{slow}");
    let reports = wire.progress("slow-1");
    assert!(!reports.is_empty(), "no progress for a 2.5 s run");
    let progress: Vec<f64> = reports
        .iter()
        .map(|r| r["progress"].as_f64().unwrap())
        .collect();
    assert!(progress[0] >= 1.0, "{reports:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{reports:?}");
    for r in &reports {
        assert_eq!(r.get("total"), None, "{r}");
        let message = r["message"].as_str().unwrap();
        assert!(
            message.starts_with("rye_execute acme/slow: running for "),
            "{message}"
        );
    }
    let before = wire.notifications.len();
    wire.call(2, "rye_execute", execute("acme/slow", p.path()), None);
    assert_eq!(wire.response(2)["status"], "success");
    // An integer token works as well; a quick call reports nothing.
    wire.call(
        3,
        "rye_execute",
        execute("acme/greet", p.path()),
        Some(json!({"progressToken": 7})),
    );
    assert_eq!(wire.response(3)["status"], "success");
    let (code, stderr) = wire.close();
    assert_eq!(code, Some(0), "{stderr}");
    let after: Vec<&Json> = wire.notifications[before..].iter().collect();
    assert!(after.is_empty(), "notifications without a token: {after:?}");
}

/// Issue 32, bad input: a client that closes stdin (or goes away) while tools that never exit
/// run. The server ends every call's processes and exits cleanly (status 0); nothing it started
/// is left.
#[test]
fn closing_stdin_mid_call_ends_every_calls_processes_and_the_server() {
    if !runnable() {
        return;
    }
    for flags in CONTAINMENTS {
        let p = Project::new();
        let mut wire = Wire::start(&p, flags);
        wire.call(1, "rye_execute", execute("acme/forever", p.path()), None);
        wire.call(2, "rye_execute", execute("acme/forever", p.path()), None);
        let pids = p.forever_pids(2);
        assert!(pids.0.iter().all(|&pid| alive(pid)), "{:?}", pids.0);
        let (code, stderr) = wire.close();
        assert_eq!(code, Some(0), "{stderr}");
        assert!(all_gone(&pids.0), "{:?} outlived the server", pids.0);
        let left = tagged(&wire.tag);
        assert!(
            left.is_empty(),
            "processes of the server outlived it: {left:?}"
        );
        assert!(stderr.is_empty(), "{stderr}");
    }
}

/// The workers of the server that are running something (they have a child).
fn busy_workers(wire: &Wire) -> Vec<u32> {
    tagged(&wire.tag)
        .into_iter()
        .filter(|&pid| is_worker(pid) && !children(pid).is_empty())
        .collect()
}

/// Issue 32, bad input: the worker that runs a call's processes is killed (SIGKILL, so it ends
/// nothing itself). The server ends what it left — its cgroup, and the tool's processes that came
/// to the server — answers the call with an error, and serves on; a spare worker killed while
/// idle costs the next call nothing.
#[test]
fn a_worker_killed_mid_run_leaves_nothing_behind() {
    if !runnable() {
        return;
    }
    for flags in CONTAINMENTS {
        let p = Project::new();
        let mut wire = Wire::start(&p, flags);
        wire.call(1, "rye_execute", execute("acme/forever", p.path()), None);
        let pids = p.forever_pids(1);
        let workers = busy_workers(&wire);
        assert_eq!(workers.len(), 1, "{flags:?}: {workers:?}");
        let killed = Command::new("kill")
            .args(["-9", &workers[0].to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let answer = wire.response(1);
        assert_eq!(answer["status"], "error", "{flags:?}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(
            error.contains("the run's worker process failed: it ended without an answer"),
            "{flags:?}: {error}"
        );
        assert!(
            all_gone(&pids.0),
            "{flags:?}: {:?} outlived their worker",
            pids.0
        );
        wire.call(2, "rye_execute", execute("acme/greet", p.path()), None);
        assert_eq!(wire.response(2)["status"], "success", "{flags:?}");
        // The worker kept started for the next call, killed while idle: the next call starts
        // another.
        let deadline = Instant::now() + PATIENCE;
        let spare = loop {
            let idle: Vec<u32> = tagged(&wire.tag)
                .into_iter()
                .filter(|&pid| is_worker(pid) && children(pid).is_empty())
                .collect();
            if let [spare] = idle[..] {
                break spare;
            }
            assert!(
                Instant::now() < deadline,
                "{flags:?}: no spare worker: {idle:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let killed = Command::new("kill")
            .args(["-9", &spare.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        // `kill` returns once the signal is sent, not once the worker is dead; a call made in
        // between may still take the dying worker (the server cannot tell it from a live one).
        let deadline = Instant::now() + PATIENCE;
        while !dead(spare) {
            assert!(
                Instant::now() < deadline,
                "{flags:?}: {spare} outlived SIGKILL"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        wire.call(3, "rye_execute", execute("acme/greet", p.path()), None);
        assert_eq!(wire.response(3)["status"], "success", "{flags:?}");
        let left = only_the_server_left(&wire);
        assert!(
            left.is_empty(),
            "{flags:?}: processes of the server left: {left:?}"
        );
        let (code, stderr) = wire.close();
        assert_eq!(code, Some(0), "{flags:?}: {stderr}");
    }
}

/// Issue 32 item 6: the server's view of the `.ai` trees follows edits on disk between calls: a
/// tool edited (and signed again), added or removed, and a knowledge entry edited, are seen by
/// the next `rye_execute` and `rye_search`.
#[test]
fn edits_on_disk_between_calls_are_seen_by_the_next_call() {
    if !runnable() {
        return;
    }
    let p = Project::new();
    let knowledge = p.dir.join(".ai/knowledge/acme/notes.md");
    std::fs::create_dir_all(knowledge.parent().unwrap()).unwrap();
    std::fs::write(
        &knowledge,
        "---\ntitle: Notes\nid: notes\n---\n\nShip on Fridays.\n",
    )
    .unwrap();
    p.cli(&["sign", "acme/notes", "--type", "knowledge"]);
    let mut wire = Wire::start(&p, &[]);
    let mut id = 0;
    let mut ask = |wire: &mut Wire, tool: &str, arguments: Json| {
        id += 1;
        wire.call(id, tool, arguments, None);
        wire.response(id)
    };
    let path = p.path().to_owned();
    let greet = ask(&mut wire, "rye_execute", execute("acme/greet", &path));
    assert_eq!(greet["data"], json!({"hello": "world"}), "{greet}");
    assert_eq!(
        found_ids(&ask(&mut wire, "rye_search", search("welcome", &path))),
        Vec::<String>::new()
    );

    // Edited: a new answer and a new description.
    p.tool(
        "greet",
        "Welcome the caller",
        "echo '{\"hello\": \"again\"}'",
    );
    let greet = ask(&mut wire, "rye_execute", execute("acme/greet", &path));
    assert_eq!(greet["data"], json!({"hello": "again"}), "{greet}");
    assert_eq!(
        found_ids(&ask(&mut wire, "rye_search", search("welcome", &path))),
        ["acme/greet"]
    );

    // Added.
    p.tool("fresh", "A fresh arrival", "echo '{\"fresh\": 1}'");
    let fresh = ask(&mut wire, "rye_execute", execute("acme/fresh", &path));
    assert_eq!(fresh["data"], json!({"fresh": 1}), "{fresh}");
    assert_eq!(
        found_ids(&ask(&mut wire, "rye_search", search("arrival", &path))),
        ["acme/fresh"]
    );

    // Removed.
    std::fs::remove_file(p.dir.join(".ai/tools/acme/fresh.sh")).unwrap();
    let gone = ask(&mut wire, "rye_execute", execute("acme/fresh", &path));
    assert_eq!(gone["status"], "error", "{gone}");
    assert!(
        gone["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool not found"),
        "{gone}"
    );
    assert_eq!(
        found_ids(&ask(&mut wire, "rye_search", search("arrival", &path))),
        Vec::<String>::new()
    );

    // A knowledge entry edited and signed again.
    let notes = json!({"item_type": "knowledge", "item_id": "acme/notes", "project_path": &path});
    let before = ask(&mut wire, "rye_execute", notes.clone());
    assert!(
        before["data"]["body"].as_str().unwrap().contains("Fridays"),
        "{before}"
    );
    std::fs::write(
        &knowledge,
        "---\ntitle: Notes\nid: notes\n---\n\nShip on Mondays.\n",
    )
    .unwrap();
    p.cli(&["sign", "acme/notes", "--type", "knowledge"]);
    let after = ask(&mut wire, "rye_execute", notes);
    assert!(
        after["data"]["body"].as_str().unwrap().contains("Mondays"),
        "{after}"
    );
    let knowledge_search =
        json!({"item_type": "knowledge", "query": "mondays", "project_path": &path});
    assert_eq!(
        found_ids(&ask(&mut wire, "rye_search", knowledge_search)),
        ["acme/notes"]
    );

    let (code, stderr) = wire.close();
    assert_eq!(code, Some(0), "{stderr}");
}

/// The official MCP Python SDK as the client: a progress callback receives the reports of a
/// 2.5 s run; a call of a tool that never exits, abandoned by the caller (an anyio cancel scope,
/// which the SDK turns into `notifications/cancelled`), ends its processes, and a short call and
/// a search are answered while it runs (`tests/mcp_clients/mcp_concurrency.py`).
#[test]
fn the_official_python_sdk_sees_progress_and_cancels_a_call() {
    if !runnable() {
        return;
    }
    let Some(python) = mcp_sdk("mcp.client.stdio") else {
        return;
    };
    let p = Project::new();
    let tag = format!("{}-{}", std::process::id(), rand_suffix());
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/mcp_concurrency.py"))
        .env("RYECHAIN_BIN", BIN)
        .env("RYECHAIN_PROJECT", &p.dir)
        .env("RYECHAIN_HOME", &p.home)
        .env("RYECHAIN_TAG", format!("{TAG}={tag}"))
        .env("HOME", &p.home)
        .stdin(Stdio::null())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Whatever the client saw, nothing of its server is left.
    let pids = p.forever_pids(1);
    assert!(all_gone(&pids.0), "{:?} outlived the call", pids.0);
    let left = tagged(&tag);
    assert!(left.is_empty(), "processes of the server left: {left:?}");
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{stderr}"
    );
    let checks = stdout.lines().filter(|l| l.starts_with("ok: ")).count();
    assert_eq!(checks, 4, "{stdout}\n{stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
}
