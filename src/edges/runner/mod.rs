//! L6 the subprocess primitive's edge (§9.1): spawns an `ExecutionPlan` without a shell, with
//! exactly the plan's environment, in its own process group (and cgroup, where one can be made);
//! writes stdin and reads stdout and stderr in one poll loop, with a cap; and when the tool
//! has exited, timed out or was cancelled (`run_until`), ends everything it started (`contain`).
//! `worker` runs plans in a worker process, for a server that runs many calls at once.
#![allow(
    clippy::disallowed_methods,
    reason = "the exec runner is the one edge that spawns tool processes and stats their paths"
)]

pub mod contain;
pub mod execute;
pub mod gather;
pub mod http;
pub mod worker;

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::exec::{ExecutionPlan, ExitKind, ProcessOutcome};
pub use contain::{adopt_orphans, end_all_tools};

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
/// adopted orphans (`adopt_orphans`: the `ryechain exec` binary and the MCP server's workers,
/// Linux) — every process that was re-parented to us because its parent died (`setsid` daemons,
/// double forks), killed and reaped until none is left. The reference let a started service run on; a tool that wants one must
/// hand it to a service manager. Output written after the grace is dropped.
pub const EXIT_GRACE: Duration = Duration::from_millis(100);

/// How long to wait for the child's exit status after SIGKILL before giving up (a process in
/// uninterruptible sleep).
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

/// SIGKILL to every process of the group led by `pgid` (also the MCP runtimes' stdio server,
/// `cli::mcp_call`).
pub(crate) fn kill_group(pgid: i32) {
    if pgid > 0
        && let Some(pgid) = rustix::process::Pid::from_raw(pgid)
    {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// The time until `until` for poll(2), in whole milliseconds rounded up so a wake-up is never
/// early; `None` = forever.
fn poll_timeout(until: Option<Instant>, now: Instant) -> Option<rustix::event::Timespec> {
    let ms = until?
        .saturating_duration_since(now)
        .as_nanos()
        .div_ceil(1_000_000);
    let ms = i64::try_from(ms).unwrap_or(i64::from(i32::MAX));
    Some(rustix::event::Timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    })
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
/// - stdin is `plan.stdin` written as the child takes it, then closed, or null — never ours
///   (§15.25);
/// - the child leads a new process group (and, with `containment.cgroup`, a new cgroup); on
///   timeout everything it started is killed and the output captured so far is returned with
///   `TimedOut`; after a normal exit, whatever it left running is killed too (`EXIT_GRACE`);
/// - stdin is written and stdout and stderr are read in one poll(2) loop on this thread, which
///   also learns of the child's exit (`Watch`: its pidfd, or a thread where there is none),
///   each keeping at most `plan.output_cap` bytes but reading
///   everything, so a flooding tool neither blocks nor grows memory. No polling ticks while the
///   tool runs; only the final clean-up waits in short steps for killed processes to go.
pub fn run_in(plan: &ExecutionPlan, containment: Containment) -> ProcessOutcome {
    run_until(plan, containment, None)
}

/// `run_in`, ended early by the caller: once `cancel` is readable (data, or the other end
/// closed), everything the tool started is killed as on a timeout and the run ends with
/// `ExitKind::Cancelled` (the output captured so far kept). A worker process (`worker`) passes
/// its stdin, which its server closes to cancel the call.
pub fn run_until(
    plan: &ExecutionPlan,
    containment: Containment,
    cancel: Option<std::os::fd::BorrowedFd<'_>>,
) -> ProcessOutcome {
    let start = Instant::now();
    if cancel.is_some_and(readable) {
        return failed(ExitKind::Cancelled, start);
    }
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

    // Written from the poll loop, never blocking it: a child that never reads cannot hold us.
    let mut stdin = match (child.stdin.take(), plan.stdin.as_deref()) {
        (Some(pipe), Some(bytes)) if !bytes.is_empty() => {
            set_nonblocking(&pipe).then_some((pipe, bytes))
        }
        _ => None, // dropping the pipe closes the child's stdin
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let watch = match Watch::start(child) {
        Ok(w) => w,
        Err(e) => {
            // Without a way to learn of its exit we cannot reap it: at least make sure nothing
            // of it keeps running (and leave it to a later sweep to reap).
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
    };

    let mut out = Capture::new(plan.output_cap);
    let mut err = Capture::new(plan.output_cap);
    let mut buf = vec![0u8; CHUNK];
    let deadline = start.checked_add(plan.timeout);
    let mut phase = Phase::Running;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut poll_error = None;
    let mut exited_at = None;

    loop {
        if matches!(phase, Phase::Exited(_)) && stdout.is_none() && stderr.is_none() {
            break;
        }
        let until = match phase {
            Phase::Running => deadline,
            Phase::Killed(at) => Some(at + KILL_GRACE),
            Phase::Exited(until) => Some(until),
        };
        let mut fds = Vec::with_capacity(5);
        let mut slots = Vec::with_capacity(5);
        let watch_cancel = cancel.filter(|_| matches!(phase, Phase::Running));
        for (slot, fd, events) in [
            (0, stdout.as_ref().map(AsFd::as_fd), PollFlags::IN),
            (1, stderr.as_ref().map(AsFd::as_fd), PollFlags::IN),
            (2, exited_at.is_none().then(|| watch.fd()), PollFlags::IN),
            (3, stdin.as_ref().map(|(p, _)| p.as_fd()), PollFlags::OUT),
            (4, watch_cancel, PollFlags::IN),
        ] {
            if let Some(fd) = fd {
                fds.push(PollFd::from_borrowed_fd(fd, events));
                slots.push(slot);
            }
        }
        let now = Instant::now();
        let n = if fds.is_empty() {
            // Both pipes closed and the status is in: nothing to poll (handled below).
            0
        } else {
            match rustix::event::poll(&mut fds, poll_timeout(until, now).as_ref()) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    poll_error = Some(std::io::Error::from(e));
                    break;
                }
            }
        };
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
        let mut ready = [false; 5];
        for (pfd, &slot) in fds.iter().zip(&slots) {
            if let Some(r) = ready.get_mut(slot) {
                *r = !pfd.revents().is_empty();
            }
        }
        drop(fds); // the pipes' borrows end here: the slots below read and write them
        for slot in (0..ready.len()).filter(|&s| ready.get(s) == Some(&true)) {
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
                2 => {
                    // The child has exited (it is not reaped yet, so its group id is still ours).
                    // What it did not read of its stdin it never will.
                    stdin = None;
                    let at = Instant::now();
                    exited_at = Some(at);
                    phase = Phase::Exited(at + EXIT_GRACE);
                }
                4 => {
                    // Cancelled while the tool runs: end it as a timeout would.
                    if matches!(phase, Phase::Running) {
                        if let Some(cg) = &cgroup {
                            cg.kill();
                        }
                        kill_group(pgid);
                        cancelled = true;
                        phase = Phase::Killed(Instant::now());
                    }
                }
                _ => {
                    if let Some((pipe, rest)) = stdin.as_mut()
                        && !write_some(pipe, rest)
                    {
                        stdin = None;
                    }
                }
            }
        }
    }
    // End everything the tool started (EXIT_GRACE): its cgroup, its group while the leader is
    // still unreaped, then — after the leader is reaped — what was re-parented to us.
    drop((stdin, stdout, stderr)); // closes our ends of pipes a leftover process still holds
    if let Some(cg) = &cgroup {
        cg.kill();
    }
    kill_group(pgid);
    let status = watch.reap(exited_at.is_some());
    contain::sweep(pid, pgid, cgroup.as_ref(), Instant::now() + KILL_GRACE);
    drop(cgroup); // removes the (now empty) cgroup
    let exit = match status {
        _ if poll_error.is_some() => ExitKind::SpawnFailed(format!(
            "poll failed: {}",
            poll_error.map(|e| e.to_string()).unwrap_or_default()
        )),
        _ if cancelled => ExitKind::Cancelled,
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

/// Whether `fd` is readable now (data, end of file or an error: a cancel either way).
fn readable(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut pfd = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    rustix::event::poll(&mut pfd, Some(&now)).is_ok_and(|n| n > 0)
}

/// Make our end of the stdin pipe non-blocking (the poll loop writes it); `false` if refused.
fn set_nonblocking(pipe: &std::process::ChildStdin) -> bool {
    rustix::fs::fcntl_getfl(pipe).is_ok_and(|flags| {
        rustix::fs::fcntl_setfl(pipe, flags | rustix::fs::OFlags::NONBLOCK).is_ok()
    })
}

/// Write what the pipe takes now of `rest`; `false` when done (all written, or the child closed
/// its end: EPIPE, as SIGPIPE is ignored).
fn write_some(pipe: &mut std::process::ChildStdin, rest: &mut &[u8]) -> bool {
    loop {
        match pipe.write(rest) {
            Ok(n) => {
                *rest = &rest[n..];
                if rest.is_empty() {
                    return false;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}

/// How the runner learns that the child has exited without reaping it, so the id of the group
/// it leads stays reserved until the runner has killed that group: the child's pidfd where the
/// kernel gives one (readable once it has exited), or else a thread that waits with `WNOWAIT`
/// and closes a pipe.
enum Watch {
    Pidfd {
        fd: std::os::fd::OwnedFd,
        child: contain::Spawned,
    },
    Thread {
        notify: std::io::PipeReader,
        reap: mpsc::Sender<()>,
        status: mpsc::Receiver<std::io::Result<ExitStatus>>,
    },
}

impl Watch {
    fn start(mut child: contain::Spawned) -> std::io::Result<Watch> {
        if let Some(fd) = child.pidfd.take() {
            return Ok(Watch::Pidfd { fd, child });
        }
        // Closed by the waiter thread once the child has exited: poll sees EOF on the read end.
        // Both ends are close-on-exec, so no child inherits them.
        let (notify, notify_tx) = std::io::pipe()?;
        let (status_tx, status) = mpsc::channel();
        let (reap, reap_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("ryechain-wait".to_owned())
            .spawn(move || wait_and_notify(child, notify_tx, &reap_rx, &status_tx))?;
        Ok(Watch::Thread {
            notify,
            reap,
            status,
        })
    }

    /// The descriptor that becomes readable when the child has exited.
    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Watch::Pidfd { fd, .. } => fd.as_fd(),
            Watch::Thread { notify, .. } => notify.as_fd(),
        }
    }

    /// Reap the child and give its status: at once when it has `exited`; otherwise (stuck after
    /// SIGKILL past `KILL_GRACE`) only if the status is in by now.
    fn reap(self, exited: bool) -> Option<std::io::Result<ExitStatus>> {
        match self {
            Watch::Pidfd { mut child, .. } => {
                let status = if exited {
                    Some(child.wait())
                } else {
                    child.try_wait()
                };
                if status.is_some() {
                    contain::forget(child.pid);
                }
                status
            }
            Watch::Thread { reap, status, .. } => {
                let _ = reap.send(());
                if exited {
                    status.recv_timeout(KILL_GRACE).ok()
                } else {
                    status.try_recv().ok()
                }
            }
        }
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
