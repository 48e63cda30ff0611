//! L6 running a call's processes in a worker: a `ryechain` process of its own (the binary started
//! again with `WORKER_ARG`), for a process that runs many calls at once (the MCP server). The
//! worker adopts the orphans of what it runs (`adopt_orphans`) and runs one plan at a time, as
//! `ryechain exec` does, so each run's sweep meets only that run's orphans however many calls run
//! beside it; it ends its run (`run_until`) as soon as its stdin closes — the call was cancelled,
//! or the server went away, however it died. Plans go in and outcomes come back as frames of a
//! small binary format (lengths and bytes; outputs are bytes of any size), one at a time.
#![allow(
    clippy::disallowed_methods,
    reason = "the worker edge spawns ryechain itself and speaks to it over pipes"
)]

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Containment, KILL_GRACE, contain};
use crate::exec::{ExecutionPlan, ExitKind, ProcessOutcome};

/// The first argument that makes `ryechain` a worker (`cli::main` looks for it before anything
/// else; it is no command a person types).
pub const WORKER_ARG: &str = "__ryechain-run-worker";

/// The format's version, the first byte of every frame.
const VERSION: u8 = 1;

/// No frame is longer (a plan's stdin is the call's parameters; an outcome's output is capped).
const MAX_FRAME: u64 = 1 << 32;

/// The worker's main: answer plans read from stdin until it closes, each run to its end (or to
/// the close of stdin, which cancels it), its outcome written to stdout. Exit status 0 at the end
/// of the input, 2 on a frame it cannot read or an outcome it cannot write (said on stderr).
pub fn serve() -> u8 {
    super::adopt_orphans();
    shrug_off_signals();
    let (mut input, mut output) = match (
        dup(std::io::stdin().as_fd()),
        dup(std::io::stdout().as_fd()),
    ) {
        (Ok(i), Ok(o)) => (i, o),
        (Err(e), _) | (_, Err(e)) => return fail(&format!("cannot take stdin and stdout: {e}")),
    };
    loop {
        let frame = match read_frame(&mut input) {
            Ok(Some(frame)) => frame,
            Ok(None) => return 0,
            Err(e) => return fail(&e),
        };
        let (plan, containment) = match decode_plan(&frame) {
            Ok(plan) => plan,
            Err(e) => return fail(&format!("a plan that does not read: {e}")),
        };
        let outcome = super::run_until(&plan, containment, Some(input.as_fd()));
        let frame = encode_outcome(&outcome);
        if let Err(e) = output.write_all(&frame).and_then(|()| output.flush()) {
            // The server is gone: nothing to answer to.
            return fail(&format!("cannot answer: {e}"));
        }
    }
}

fn fail(what: &str) -> u8 {
    let _ = writeln!(std::io::stderr().lock(), "ryechain worker: {what}");
    2
}

fn dup(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<std::fs::File> {
    fd.try_clone_to_owned().map(std::fs::File::from)
}

/// A worker outlives a signal meant for its server's terminal or service (`SIGINT`, `SIGTERM`,
/// `SIGHUP`): it ends its run when the server's end of its stdin closes, whatever ended the
/// server, and a worker killed first would leave its tool's processes to init. Caught rather than
/// ignored, so the tools it starts get the default dispositions back at `execve`.
/// The handler only sets a flag that nothing reads.
fn shrug_off_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static SHRUGGED: AtomicBool = AtomicBool::new(false);
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // Refused only for a signal that cannot be caught, which these are not.
        let _ = signal_hook::flag::register(sig, &SHRUGGED);
    }
}

/// The program a worker is: this process's own executable (on Linux `/proc/self/exe`, which
/// stays this very binary even if the file was replaced since the server started).
pub fn program() -> PathBuf {
    if cfg!(target_os = "linux") {
        return PathBuf::from("/proc/self/exe");
    }
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("ryechain"))
}

/// One call's cancellation, shared between the call (which may cancel it from another thread,
/// or by being dropped) and the worker that runs its plans.
#[derive(Default)]
pub struct Control {
    cancelled: AtomicBool,
    /// The server's end of the worker's stdin, while a worker runs: closing it cancels the run.
    stdin: Mutex<Option<ChildStdin>>,
}

impl Control {
    pub fn new() -> Arc<Control> {
        Arc::default()
    }

    /// Cancel the call: its running plan ends (everything it started killed) and no other starts.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        drop(self.lock().take());
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ChildStdin>> {
        self.stdin.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the workers of a server's calls, keeping one started ahead of need: a worker takes a
/// few milliseconds to start (an `exec` of this binary), and a call that runs a tool should not
/// wait for it. The spare is idle until a call takes it; then another is started on a thread of
/// its own. None is started before the first call that runs something.
pub struct Launcher {
    program: PathBuf,
    spare: Mutex<Option<Started>>,
    /// Set by `close`: no spare is kept any more.
    closed: AtomicBool,
}

/// A worker started, with the server's ends of its pipes. Dropped, it is told to end (its stdin
/// closed, unless the call's `Control` holds it), waited for, and reaped; one that did not end
/// cleanly (killed by a signal, say) may have left its tool running: before it is reaped (its pid
/// still its own), the cgroups it made are killed and removed, and what came to this process is
/// swept.
struct Started {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
}

impl Drop for Started {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let pid = self.child.id();
        if contain::exited_cleanly(pid) != Some(true) {
            let deadline = Instant::now() + KILL_GRACE;
            contain::reclaim_cgroups_of(pid, deadline);
            contain::sweep_strays(deadline);
        }
        let _ = self.child.wait();
        contain::forget(pid);
    }
}

impl Launcher {
    pub fn new(program: PathBuf) -> Arc<Launcher> {
        Arc::new(Launcher {
            program,
            spare: Mutex::new(None),
            closed: AtomicBool::new(false),
        })
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Started>> {
        self.spare.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A worker for a call: the spare when it is alive, else one started now; then a new spare.
    fn take(self: &Arc<Self>) -> Result<Started, String> {
        let spare = self.slot().take();
        let started = match spare {
            Some(s) if !contain::has_exited(s.child.id()) => s,
            // None yet, or one that died while idle (killed): reaped by its drop.
            _ => self.start()?,
        };
        if !self.closed.load(Ordering::SeqCst) {
            let me = Arc::clone(self);
            // Without a thread there is no spare, and the next call starts its own worker.
            let _ = std::thread::Builder::new()
                .name("ryechain-spare-worker".to_owned())
                .spawn(move || me.refill());
        }
        Ok(started)
    }

    fn refill(&self) {
        if self.slot().is_some() {
            return;
        }
        let Ok(started) = self.start() else {
            return; // the next call says why
        };
        let mut slot = self.slot();
        if slot.is_none() && !self.closed.load(Ordering::SeqCst) {
            *slot = Some(started);
        }
        // Else `started` is dropped: told to end and reaped (after the lock is let go).
    }

    fn start(&self) -> Result<Started, String> {
        let mut cmd = Command::new(&self.program);
        // Named as the server is in `ps`, not `/proc/self/exe`.
        cmd.arg0(
            std::env::args_os()
                .next()
                .unwrap_or_else(|| "ryechain".into()),
        )
        .arg(WORKER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        let mut child = contain::spawn_registered(&mut cmd)
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
        let Some(stdout) = stdout else {
            // Never: stdout is piped. Not left running all the same.
            let _ = child.kill();
            let _ = child.wait();
            contain::forget(child.id());
            return Err("no pipe from the worker".to_owned());
        };
        Ok(Started {
            child,
            stdin,
            stdout,
        })
    }

    /// End the spare and keep no other (the server is stopping).
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let spare = self.slot().take();
        drop(spare);
    }
}

/// A call's worker, taken from the launcher at its first plan and kept for the next (a run's
/// commands, then the tool); dropping it closes its stdin and waits for it to go.
pub struct Worker {
    launcher: Arc<Launcher>,
    control: Arc<Control>,
    live: Option<Started>,
}

impl Worker {
    pub fn new(launcher: Arc<Launcher>, control: Arc<Control>) -> Worker {
        Worker {
            launcher,
            control,
            live: None,
        }
    }

    /// Run the plan in the worker, with the containment `runner::run` would use. A cancelled call
    /// answers `ExitKind::Cancelled` (without starting anything once cancelled); a worker that
    /// cannot be started or that ends without an answer, `ExitKind::SpawnFailed`.
    pub fn run(&mut self, plan: &ExecutionPlan) -> ProcessOutcome {
        let start = Instant::now();
        let containment = Containment {
            cgroup: super::USE_CGROUP.load(Ordering::Relaxed),
        };
        let frame = encode_plan(plan, containment);
        match self.exchange(&frame) {
            Ok(outcome) => outcome,
            Err(None) => failed(ExitKind::Cancelled, start),
            Err(Some(e)) => {
                self.end();
                failed(
                    ExitKind::SpawnFailed(format!("the run's worker process failed: {e}")),
                    start,
                )
            }
        }
    }

    /// Send one plan and read its outcome. `Err(None)`: the call is cancelled, nothing was sent.
    fn exchange(&mut self, frame: &[u8]) -> Result<ProcessOutcome, Option<String>> {
        {
            let mut stdin = self.control.lock();
            if self.control.is_cancelled() {
                return Err(None);
            }
            if self.live.is_none() {
                let mut started = self.launcher.take().map_err(Some)?;
                *stdin = started.stdin.take();
                self.live = Some(started);
            }
            let pipe = stdin.as_mut().ok_or(None)?;
            pipe.write_all(frame)
                .and_then(|()| pipe.flush())
                .map_err(|e| Some(format!("cannot send the plan: {e}")))?;
        }
        let started = self.live.as_mut().ok_or(None)?;
        let answer = read_frame(&mut started.stdout).map_err(Some)?;
        let answer = answer.ok_or_else(|| Some("it ended without an answer".to_owned()))?;
        decode_outcome(&answer).map_err(|e| Some(format!("an answer that does not read: {e}")))
    }

    /// Close the worker's stdin and reap it (`Started`'s drop).
    fn end(&mut self) {
        drop(self.control.lock().take());
        drop(self.live.take());
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.end();
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

// ---------------------------------------------------------------------------------------------
// Frames: a little-endian u64 length, then the payload: the version byte and the fields in order
// (integers little-endian, byte strings as a u64 length and the bytes).

/// Read one frame's payload; `None` at the end of the input before a frame starts.
fn read_frame(input: &mut impl Read) -> Result<Option<Vec<u8>>, String> {
    let mut len = [0u8; 8];
    let mut got = 0;
    while got < len.len() {
        match input.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err("the input ended inside a frame".to_owned()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(format!("a frame of {len} bytes"));
    }
    let mut payload = Vec::new();
    input
        .take(len)
        .read_to_end(&mut payload)
        .map_err(|e| e.to_string())?;
    if payload.len() as u64 != len {
        return Err("the input ended inside a frame".to_owned());
    }
    Ok(Some(payload))
}

struct Put(Vec<u8>);

impl Put {
    fn new() -> Put {
        // The length, filled in by `frame`.
        Put(vec![0; 8])
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn duration(&mut self, d: Duration) {
        self.u64(d.as_secs());
        self.u64(u64::from(d.subsec_nanos()));
    }
    fn frame(mut self) -> Vec<u8> {
        let len = (self.0.len() - 8) as u64;
        self.0[..8].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

struct Get<'a>(&'a [u8]);

impl<'a> Get<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("cut short".to_owned());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| "cut short")?))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = usize::try_from(self.u64()?).map_err(|_| "a length past memory")?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "text that is not UTF-8".to_owned())
    }
    fn duration(&mut self) -> Result<Duration, String> {
        let secs = self.u64()?;
        let nanos = u32::try_from(self.u64()?).map_err(|_| "nanoseconds past a second")?;
        Ok(Duration::new(secs, nanos.min(999_999_999)))
    }
    fn count(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        // Each entry takes at least 8 bytes: a count past that is a broken frame.
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.0.len() / 8)
            .ok_or_else(|| format!("a count of {n}"))
    }
    fn version(&mut self) -> Result<(), String> {
        match self.u8()? {
            VERSION => Ok(()),
            v => Err(format!("version {v}, not {VERSION}")),
        }
    }
    fn end(&self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes past the end", self.0.len()))
        }
    }
}

fn encode_plan(plan: &ExecutionPlan, containment: Containment) -> Vec<u8> {
    let mut p = Put::new();
    p.u8(VERSION);
    p.u8(u8::from(containment.cgroup));
    p.bytes(plan.program.as_bytes());
    p.u64(plan.args.len() as u64);
    for a in &plan.args {
        p.bytes(a.as_bytes());
    }
    p.u64(plan.env.len() as u64);
    for (k, v) in &plan.env {
        p.bytes(k.as_bytes());
        p.bytes(v.as_bytes());
    }
    match &plan.cwd {
        Some(cwd) => {
            p.u8(1);
            p.bytes(cwd.as_os_str().as_bytes());
        }
        None => p.u8(0),
    }
    match &plan.stdin {
        Some(bytes) => {
            p.u8(1);
            p.bytes(bytes);
        }
        None => p.u8(0),
    }
    p.duration(plan.timeout);
    p.u64(plan.output_cap as u64);
    p.frame()
}

fn decode_plan(payload: &[u8]) -> Result<(ExecutionPlan, Containment), String> {
    let mut g = Get(payload);
    g.version()?;
    let containment = Containment {
        cgroup: g.u8()? != 0,
    };
    let program = g.string()?;
    let args = (0..g.count()?)
        .map(|_| g.string())
        .collect::<Result<Vec<_>, _>>()?;
    let mut env = std::collections::BTreeMap::new();
    for _ in 0..g.count()? {
        let k = g.string()?;
        env.insert(k, g.string()?);
    }
    let cwd = match g.u8()? {
        0 => None,
        _ => Some(PathBuf::from(std::ffi::OsStr::from_bytes(g.bytes()?))),
    };
    let stdin = match g.u8()? {
        0 => None,
        _ => Some(g.bytes()?.to_vec()),
    };
    let timeout = g.duration()?;
    let output_cap = usize::try_from(g.u64()?).unwrap_or(usize::MAX);
    g.end()?;
    let plan = ExecutionPlan {
        program,
        args,
        env,
        cwd,
        stdin,
        timeout,
        output_cap,
    };
    Ok((plan, containment))
}

fn encode_outcome(o: &ProcessOutcome) -> Vec<u8> {
    let mut p = Put::new();
    p.u8(VERSION);
    let (tag, value, text): (u8, i32, &str) = match &o.exit {
        ExitKind::Code(c) => (0, *c, ""),
        ExitKind::Signal(s) => (1, *s, ""),
        ExitKind::TimedOut => (2, 0, ""),
        ExitKind::NotFound => (3, 0, ""),
        ExitKind::BadCwd => (4, 0, ""),
        ExitKind::SpawnFailed(msg) => (5, 0, msg),
        ExitKind::Cancelled => (6, 0, ""),
    };
    p.u8(tag);
    p.u64(u64::from(value.cast_unsigned()));
    p.bytes(text.as_bytes());
    p.bytes(&o.stdout);
    p.bytes(&o.stderr);
    p.u64(o.stdout_total);
    p.u64(o.stderr_total);
    p.duration(o.duration);
    p.frame()
}

fn decode_outcome(payload: &[u8]) -> Result<ProcessOutcome, String> {
    let mut g = Get(payload);
    g.version()?;
    let tag = g.u8()?;
    let value = u32::try_from(g.u64()?)
        .map_err(|_| "an exit value past 32 bits")?
        .cast_signed();
    let text = g.string()?;
    let exit = match tag {
        0 => ExitKind::Code(value),
        1 => ExitKind::Signal(value),
        2 => ExitKind::TimedOut,
        3 => ExitKind::NotFound,
        4 => ExitKind::BadCwd,
        5 => ExitKind::SpawnFailed(text),
        6 => ExitKind::Cancelled,
        t => return Err(format!("an exit of kind {t}")),
    };
    let stdout = g.bytes()?.to_vec();
    let stderr = g.bytes()?.to_vec();
    let outcome = ProcessOutcome {
        exit,
        stdout,
        stderr,
        stdout_total: g.u64()?,
        stderr_total: g.u64()?,
        duration: g.duration()?,
    };
    g.end()?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ExecutionPlan {
        ExecutionPlan {
            program: "/bin/echo".into(),
            args: vec!["a b".into(), String::new(), "ü".into()],
            env: [
                ("PATH".into(), "/bin".into()),
                ("EMPTY".into(), String::new()),
            ]
            .into(),
            cwd: Some(PathBuf::from("/tmp/x y")),
            stdin: Some(b"{\"n\": 1}\n\0".to_vec()),
            timeout: Duration::new(300, 5),
            output_cap: 8 << 20,
        }
    }

    #[test]
    fn plans_and_outcomes_read_back_as_written() {
        for cgroup in [false, true] {
            let frame = encode_plan(&plan(), Containment { cgroup });
            let payload = read_frame(&mut &frame[..]).unwrap().unwrap();
            let (back, c) = decode_plan(&payload).unwrap();
            assert_eq!(back, plan());
            assert_eq!(c.cgroup, cgroup);
        }
        let bare = ExecutionPlan {
            cwd: None,
            stdin: None,
            args: Vec::new(),
            ..plan()
        };
        let frame = encode_plan(&bare, Containment::default());
        assert_eq!(decode_plan(&frame[8..]).unwrap().0, bare);
        for exit in [
            ExitKind::Code(0),
            ExitKind::Code(-3),
            ExitKind::Signal(9),
            ExitKind::TimedOut,
            ExitKind::NotFound,
            ExitKind::BadCwd,
            ExitKind::SpawnFailed("Permission denied: /x".into()),
            ExitKind::Cancelled,
        ] {
            let o = ProcessOutcome {
                exit,
                stdout: vec![0, 255, b'\n'],
                stderr: b"err".to_vec(),
                stdout_total: 1 << 40,
                stderr_total: 3,
                duration: Duration::from_micros(1234),
            };
            let frame = encode_outcome(&o);
            assert_eq!(decode_outcome(&frame[8..]).unwrap(), o);
        }
    }

    #[test]
    fn broken_frames_are_errors_not_panics() {
        assert_eq!(read_frame(&mut &[][..]), Ok(None));
        assert!(read_frame(&mut &[1, 0][..]).is_err());
        assert!(read_frame(&mut &[9, 0, 0, 0, 0, 0, 0, 0, 1][..]).is_err());
        assert!(read_frame(&mut &u64::MAX.to_le_bytes()[..]).is_err());
        let frame = encode_plan(&plan(), Containment::default());
        let payload = &frame[8..];
        for cut in 0..payload.len() {
            assert!(decode_plan(&payload[..cut]).is_err(), "cut at {cut}");
        }
        let mut other = payload.to_vec();
        other[0] = 2;
        assert!(decode_plan(&other).unwrap_err().contains("version 2"));
        let mut longer = payload.to_vec();
        longer.push(0);
        assert!(decode_plan(&longer).is_err());
        // A count claiming more entries than the frame could hold.
        let mut p = Put::new();
        p.u8(VERSION);
        p.u8(0);
        p.bytes(b"x");
        p.u64(u64::MAX);
        let frame = p.frame();
        assert!(decode_plan(&frame[8..]).unwrap_err().contains("count"));
        let o = encode_outcome(&failed(ExitKind::TimedOut, Instant::now()));
        for cut in 0..o.len() - 8 {
            assert!(decode_outcome(&o[8..8 + cut]).is_err(), "cut at {cut}");
        }
    }
}
