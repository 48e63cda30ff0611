//! L6 the subprocess primitive's edge (§9.1): spawns an `ExecutionPlan` without a shell, with
//! exactly the plan's environment, in its own process group (and cgroup, where one can be made);
//! feeds stdin from a thread; reads stdout and stderr concurrently with a cap; and when the tool
//! has exited or timed out, ends everything it started (`contain`).
#![allow(
    clippy::disallowed_methods,
    reason = "the exec runner is the one edge that spawns tool processes and stats their paths"
)]

pub mod contain;

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{ExecutionPlan, ExitKind, ProcessOutcome};
pub use contain::adopt_orphans;

/// The search path used when the plan's environment has no `PATH` (§9.1.10: Python's
/// `os.defpath`-like fallback, so a complete environment without `PATH` still runs `echo`).
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// How long the output pipes may stay open after the child has exited (or was killed).
///
/// Decision: nothing a tool starts outlives its run. When the tool's process has exited, we read
/// its pipes until both are closed or for at most this long (a background process that inherited
/// stdout would otherwise hold them open, and the reference waited until the timeout), then end
/// everything it started, as on a timeout: the cgroup the tool was put in (`cgroup.kill`, Linux
/// cgroup v2 where ryechain may create one), its whole process group (always; the leader is kept
/// unreaped until then, so the group id cannot have been reused), and — in a process that
/// adopted orphans (`adopt_orphans`: the `ryechain exec` binary, Linux) — every process that was
/// re-parented to us because its parent died (`setsid` daemons, double forks), killed and reaped
/// until none is left. The reference let a started service run on; a tool that wants one must
/// hand it to a service manager. Output written after the grace is dropped.
pub const EXIT_GRACE: Duration = Duration::from_millis(100);

/// How long to wait for the child's exit status after SIGKILL before giving up (a process in
/// uninterruptible sleep); the waiter thread still reaps it later.
const KILL_GRACE: Duration = Duration::from_secs(5);

const CHUNK: usize = 64 * 1024;

/// Where the program is.
enum Located {
    Path(PathBuf),
    NotFound,
    /// Found only files without an execute bit (execvp's EACCES).
    NotExecutable(PathBuf),
}

/// A program without `/` is looked up in the plan's `PATH` (never ours); with a `/` it is used as
/// it is (relative to the child's working directory). Empty `PATH` entries are skipped (not read
/// as "the current directory"); relative entries are taken relative to the plan's cwd.
fn locate(plan: &ExecutionPlan) -> Located {
    let program = plan.program.as_str();
    if program.is_empty() {
        return Located::NotFound;
    }
    if program.contains('/') {
        return Located::Path(PathBuf::from(program));
    }
    let search = plan.env.get("PATH").map_or(DEFAULT_PATH, String::as_str);
    let mut denied = None;
    for dir in search.split(':').filter(|d| !d.is_empty()) {
        let mut candidate = PathBuf::from(dir).join(program);
        if let (true, Some(cwd)) = (candidate.is_relative(), &plan.cwd) {
            candidate = cwd.join(candidate);
        }
        match std::fs::metadata(&candidate) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => {
                return Located::Path(candidate);
            }
            Ok(m) if m.is_file() => {
                denied.get_or_insert(candidate);
            }
            _ => {}
        }
    }
    denied.map_or(Located::NotFound, Located::NotExecutable)
}

/// Bytes kept (up to the cap) and bytes seen.
struct Capture {
    kept: Vec<u8>,
    total: u64,
    cap: usize,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            kept: Vec::new(),
            total: 0,
            cap,
        }
    }
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
    }
}

fn failed(exit: ExitKind, start: Instant) -> ProcessOutcome {
    ProcessOutcome {
        exit,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_total: 0,
        stderr_total: 0,
        duration: start.elapsed(),
    }
}

/// SIGKILL to every process of the group led by `pgid`.
fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names the group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Milliseconds until `until` for poll(2), rounded up so a wake-up is never early; -1 = forever.
fn poll_ms(until: Option<Instant>, now: Instant) -> i32 {
    match until {
        None => -1,
        Some(t) => {
            let ms = t
                .saturating_duration_since(now)
                .as_nanos()
                .div_ceil(1_000_000);
            i32::try_from(ms).unwrap_or(i32::MAX)
        }
    }
}

/// Read once from a ready stream; `false` when it is finished (EOF or an error).
fn read_some(stream: &mut impl Read, capture: &mut Capture, buf: &mut [u8]) -> bool {
    loop {
        match stream.read(buf) {
            Ok(0) => return false,
            Ok(n) => {
                capture.push(&buf[..n]);
                return true;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

enum Phase {
    Running,
    /// We sent SIGKILL at this instant and wait for the exit status.
    Killed(Instant),
    /// The child has exited (it is reaped at the end); its pipes may stay open until this instant.
    Exited(Instant),
}

/// What the runner uses, beyond the process group and the adopted orphans, to end what a tool
/// started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Containment {
    /// Run the tool in a cgroup of its own and kill the cgroup at the end (Linux cgroup v2, where
    /// ryechain's own cgroup lets it create a child; silently skipped elsewhere).
    pub cgroup: bool,
}

impl Default for Containment {
    fn default() -> Self {
        Containment { cgroup: true }
    }
}

/// The containment `run` uses (`ryechain exec --no-cgroup` turns the cgroup off).
static USE_CGROUP: AtomicBool = AtomicBool::new(true);

/// Whether `run` puts tools in a cgroup of their own (default: yes, where one can be made).
pub fn use_cgroups(on: bool) {
    USE_CGROUP.store(on, Ordering::Relaxed);
}

/// Run the plan with the process's containment (`use_cgroups`); see `run_in`.
pub fn run(plan: &ExecutionPlan) -> ProcessOutcome {
    let containment = Containment {
        cgroup: USE_CGROUP.load(Ordering::Relaxed),
    };
    run_in(plan, containment)
}

/// Run the plan to completion (§9.1). Never panics and never blocks past the plan's timeout plus
/// the short graces above; every way it can end is an `ExitKind`.
///
/// - argv is exec'd directly (no shell); the environment is exactly `plan.env`;
/// - stdin is `plan.stdin` written from a thread then closed, or null — never ours (§15.25);
/// - the child leads a new process group (and, with `containment.cgroup`, a new cgroup); on
///   timeout everything it started is killed and the output captured so far is returned with
///   `TimedOut`; after a normal exit, whatever it left running is killed too (`EXIT_GRACE`);
/// - stdout and stderr are read concurrently (one poll(2) loop on this thread, while a second
///   thread waits for the child), each keeping at most `plan.output_cap` bytes but reading
///   everything, so a flooding tool neither blocks nor grows memory. No polling ticks while the
///   tool runs; only the final clean-up waits in short steps for killed processes to go.
pub fn run_in(plan: &ExecutionPlan, containment: Containment) -> ProcessOutcome {
    let start = Instant::now();
    if let Some(cwd) = &plan.cwd
        && !std::fs::metadata(cwd).is_ok_and(|m| m.is_dir())
    {
        return failed(ExitKind::BadCwd, start);
    }
    let exe = match locate(plan) {
        Located::Path(p) => p,
        Located::NotFound => return failed(ExitKind::NotFound, start),
        Located::NotExecutable(p) => {
            return failed(
                ExitKind::SpawnFailed(format!("Permission denied: {}", p.display())),
                start,
            );
        }
    };
    // Closed by the waiter thread once the child is reaped: poll sees EOF on the read end. Both
    // ends are close-on-exec, so no child inherits them.
    let (notify_rx, notify_tx) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return failed(ExitKind::SpawnFailed(e.to_string()), start),
    };

    let launch = contain::Launch {
        exe: &exe,
        argv: std::iter::once(plan.program.as_str())
            .chain(plan.args.iter().map(String::as_str))
            .collect(),
        env: plan
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        cwd: plan.cwd.as_deref(),
        stdin: plan.stdin.is_some(),
    };
    let cgroup = if containment.cgroup {
        contain::Cgroup::create()
    } else {
        None
    };
    let mut child = match contain::spawn(&launch, cgroup.as_ref()) {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::NotFound => return failed(ExitKind::NotFound, start),
        Err(e) => return failed(ExitKind::SpawnFailed(e.to_string()), start),
    };
    let child_id = child.pid;
    let pid = i32::try_from(child_id).unwrap_or(0);
    let pgid = pid;

    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), plan.stdin.clone()) {
        // A child that never reads cannot block us: the writer is never joined. EPIPE (the child
        // exited or closed stdin) is ignored; dropping the pipe closes the child's stdin.
        let _ = std::thread::Builder::new()
            .name("ryechain-stdin".to_owned())
            .spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();

    let (status_tx, status_rx) = mpsc::channel();
    let (reap_tx, reap_rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("ryechain-wait".to_owned())
        .spawn(move || wait_and_notify(child, notify_tx, &reap_rx, &status_tx));
    if let Err(e) = waiter {
        // The child went with the closure; without a waiter we cannot reap it, so at least make
        // sure nothing of it keeps running (and leave it to a later sweep to reap).
        if let Some(cg) = &cgroup {
            cg.kill();
        }
        kill_group(pgid);
        contain::forget(child_id);
        return failed(
            ExitKind::SpawnFailed(format!("cannot start a thread: {e}")),
            start,
        );
    }

    let mut out = Capture::new(plan.output_cap);
    let mut err = Capture::new(plan.output_cap);
    let mut buf = vec![0u8; CHUNK];
    let deadline = start.checked_add(plan.timeout);
    let mut phase = Phase::Running;
    let mut timed_out = false;
    let mut poll_error = None;
    let mut exited_at = None;
    let mut notify = Some(notify_rx);

    loop {
        if matches!(phase, Phase::Exited(_)) && stdout.is_none() && stderr.is_none() {
            break;
        }
        let until = match phase {
            Phase::Running => deadline,
            Phase::Killed(at) => Some(at + KILL_GRACE),
            Phase::Exited(until) => Some(until),
        };
        let mut fds = Vec::with_capacity(3);
        let mut slots = Vec::with_capacity(3);
        for (slot, fd) in [
            (0, stdout.as_ref().map(AsRawFd::as_raw_fd)),
            (1, stderr.as_ref().map(AsRawFd::as_raw_fd)),
            (2, notify.as_ref().map(AsRawFd::as_raw_fd)),
        ] {
            if let Some(fd) = fd {
                fds.push(libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
                slots.push(slot);
            }
        }
        let now = Instant::now();
        let n = if fds.is_empty() {
            // Both pipes closed and the status is in: nothing to poll (handled below).
            0
        } else {
            // SAFETY: `fds` is a live, correctly sized array of pollfd for the whole call.
            unsafe {
                libc::poll(
                    fds.as_mut_ptr(),
                    fds.len() as libc::nfds_t,
                    poll_ms(until, now),
                )
            }
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            poll_error = Some(e);
            break;
        }
        if n == 0 {
            if until.is_some_and(|t| Instant::now() < t) {
                continue; // woke early; recompute
            }
            match phase {
                Phase::Running => {
                    if let Some(cg) = &cgroup {
                        cg.kill();
                    }
                    kill_group(pgid);
                    timed_out = true;
                    phase = Phase::Killed(Instant::now());
                    continue;
                }
                // No status after SIGKILL, or the grace for open pipes is over.
                Phase::Killed(_) | Phase::Exited(_) => break,
            }
        }
        for (pfd, slot) in fds.iter().zip(&slots) {
            if pfd.revents == 0 {
                continue;
            }
            match slot {
                0 => {
                    if let Some(s) = stdout.as_mut()
                        && !read_some(s, &mut out, &mut buf)
                    {
                        stdout = None;
                    }
                }
                1 => {
                    if let Some(s) = stderr.as_mut()
                        && !read_some(s, &mut err, &mut buf)
                    {
                        stderr = None;
                    }
                }
                _ => {
                    // The child has exited (it is not reaped yet, so its group id is still ours).
                    notify = None;
                    let at = Instant::now();
                    exited_at = Some(at);
                    phase = Phase::Exited(at + EXIT_GRACE);
                }
            }
        }
    }
    // End everything the tool started (EXIT_GRACE): its cgroup, its group while the leader is
    // still unreaped, then — after the leader is reaped — what was re-parented to us.
    drop((stdout, stderr)); // closes our ends of pipes a leftover process still holds
    if let Some(cg) = &cgroup {
        cg.kill();
    }
    kill_group(pgid);
    let _ = reap_tx.send(());
    let status = if notify.is_some() {
        // It never exited (stuck after SIGKILL past KILL_GRACE): take a status only if it is in.
        status_rx.try_recv().ok()
    } else {
        status_rx.recv_timeout(KILL_GRACE).ok()
    };
    contain::sweep(pid, pgid, cgroup.as_ref(), Instant::now() + KILL_GRACE);
    drop(cgroup); // removes the (now empty) cgroup
    let exit = match status {
        _ if poll_error.is_some() => ExitKind::SpawnFailed(format!(
            "poll failed: {}",
            poll_error.map(|e| e.to_string()).unwrap_or_default()
        )),
        None if timed_out => ExitKind::TimedOut, // killed, status not in within KILL_GRACE
        None => ExitKind::SpawnFailed("lost the exit status of the child".to_owned()),
        Some(Err(e)) => ExitKind::SpawnFailed(e.to_string()),
        Some(Ok(st)) => match (st.code(), st.signal()) {
            (Some(code), _) => ExitKind::Code(code),
            (None, Some(libc::SIGKILL)) if timed_out => ExitKind::TimedOut,
            (None, Some(sig)) => ExitKind::Signal(sig),
            (None, None) => ExitKind::SpawnFailed(format!("unknown exit status {st}")),
        },
    };
    ProcessOutcome {
        exit,
        stdout: out.kept,
        stderr: err.kept,
        stdout_total: out.total,
        stderr_total: err.total,
        duration: exited_at.unwrap_or_else(Instant::now) - start,
    }
}

/// The waiter thread. It waits until the child has exited without reaping it (`waitid` with
/// `WNOWAIT`), closes the notify pipe, and reaps the child only when the runner says so (after it
/// has killed the child's group, whose id the unreaped child still holds), then hands over the
/// status. Where `waitid` fails it reaps at once, as before.
fn wait_and_notify(
    mut child: contain::Spawned,
    notify: std::io::PipeWriter,
    reap: &mpsc::Receiver<()>,
    tx: &mpsc::Sender<std::io::Result<ExitStatus>>,
) {
    let pid = child.pid;
    let status = if contain::wait_exited(pid) {
        drop(notify);
        let _ = reap.recv(); // an error: the runner is gone; reap all the same
        child.wait()
    } else {
        let status = child.wait();
        drop(notify);
        status
    };
    contain::forget(pid);
    let _ = tx.send(status);
}
