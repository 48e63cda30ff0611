//! L6 ending everything a tool started (the runner's `EXIT_GRACE` decision): the tool's cgroup
//! (Linux cgroup v2, `cgroup.kill`), its process group (always), and the orphans re-parented to a
//! process that adopted them (`adopt_orphans`, Linux `PR_SET_CHILD_SUBREAPER`), which are killed
//! and reaped one by one — never a child some other code of this process waits on.
#![allow(
    clippy::disallowed_methods,
    reason = "the runner's edge reads /proc and writes the cgroup file system"
)]

use std::io;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{self, Pid, Signal, WaitId, WaitIdOptions, WaitOptions};

/// A process id as rustix takes it; `None` for 0 or one past `i32` (no process).
fn pid_of(pid: u32) -> Option<Pid> {
    i32::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .and_then(Pid::from_raw)
}

/// A status from `waitpid` as std gives it.
fn exit_status(status: process::WaitStatus) -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(status.as_raw())
}

/// SIGKILL our own unreaped child `pid` (so its pid cannot have been reused) and reap it if it
/// is gone already.
fn kill_and_reap(pid: i32) {
    if let Some(pid) = Pid::from_raw(pid.max(0)) {
        let _ = process::kill_process(pid, Signal::KILL);
        let _ = process::waitpid(Some(pid), WaitOptions::NOHANG);
    }
}

/// Set once this process is the subreaper of its descendants.
static ADOPTING: AtomicBool = AtomicBool::new(false);

/// The children `run` spawned and has not reaped yet. The sweep leaves exactly these alone; a
/// spawn registers its child while holding the lock, so a sweep never sees one unregistered.
static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn spawned() -> MutexGuard<'static, Vec<u32>> {
    SPAWNED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Set, under the `SPAWNED` lock, once `end_all_tools` ran: no tool starts after it.
static ENDED: AtomicBool = AtomicBool::new(false);

/// End this process's tools for good, as a server does when it shuts down: every tool running
/// now is killed with its process group (its run then ends as a killed tool's does, its cgroup
/// and orphans swept as usual), and a tool that would start from now on is refused. Under the
/// lock a spawn registers with, so no tool slips between the kill and the refusal.
pub fn end_all_tools() {
    let live = spawned();
    ENDED.store(true, Ordering::SeqCst);
    for &pid in live.iter() {
        // The group the unreaped child leads (its id stays reserved until it is reaped).
        if let Some(pgid) = pid_of(pid) {
            let _ = process::kill_process_group(pgid, Signal::KILL);
        }
    }
}

/// Make this process the reaper of what its tools leave behind (Linux): a process whose parent
/// dies is re-parented to us instead of init, so after each run the sweep finds the `setsid`
/// daemons and double-forked children of the tool, kills and reaps them. Returns whether it
/// took effect (`false` on other systems, where only the process group is killed).
///
/// The flag belongs to the whole process, and the sweep kills and reaps every child of this
/// process that `runner` did not spawn. So call it only in a process whose every child is
/// spawned through `runner` — the `ryechain exec` binary, which runs one tool and exits, and the
/// MCP server's workers (`worker`), each running one plan at a time; the language server and
/// `--watch` never run tools — and never run two tools at once in it: a sweep happens only when
/// no other run is in flight, but it cannot tell one run's orphans from another's. Other code's
/// `Child::wait` would otherwise find its child already reaped. (The MCP server adopts too but
/// runs no tool itself: its children are its workers, started by `spawn_registered`, and what a
/// dead worker leaves is ended by `sweep_strays`.)
pub fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        // prctl(PR_SET_CHILD_SUBREAPER) with a non-zero value: any makes us the subreaper.
        let ok = process::set_child_subreaper(Some(process::getpid())).is_ok();
        if ok {
            ADOPTING.store(true, Ordering::SeqCst);
        }
        ok
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// A started tool: its pid, the parent's ends of its pipes, and how to reap it.
pub(super) struct Spawned {
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    /// Readable once the child has exited (Linux 5.3; `None` where the kernel has none).
    pub pidfd: Option<std::os::fd::OwnedFd>,
    /// std's handle when std spawned it; `None` when it was cloned into its cgroup here.
    child: Option<Child>,
}

impl Spawned {
    /// Reap the child if it has exited; `None` while it runs.
    pub(super) fn try_wait(&mut self) -> Option<io::Result<ExitStatus>> {
        if let Some(child) = &mut self.child {
            return child.try_wait().transpose();
        }
        let pid = pid_of(self.pid)?;
        match process::waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(None) => None,
            Ok(Some((_, status))) => Some(Ok(exit_status(status))),
            Err(e) => Some(Err(e.into())),
        }
    }

    /// Reap the child (blocking) and give its status.
    pub(super) fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(child) = &mut self.child {
            return child.wait();
        }
        let pid = pid_of(self.pid).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        loop {
            match process::waitpid(Some(pid), WaitOptions::empty()) {
                Ok(Some((_, status))) => return Ok(exit_status(status)),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
                // Only `WNOHANG` finds no child changed; never a blocking wait.
                Ok(None) => return Err(io::Error::other("waitpid returned no child")),
            }
        }
    }
}

/// What to start: the program `exe` run with `argv` (its first element the name it is called
/// by), exactly `env`, in `cwd` when given, stdin piped or null, stdout and stderr piped, leading
/// a new process group.
pub(super) struct Launch<'a> {
    pub exe: &'a std::path::Path,
    pub argv: Vec<&'a str>,
    pub env: Vec<(&'a str, &'a str)>,
    pub cwd: Option<&'a std::path::Path>,
    pub stdin: bool,
}

impl Launch<'_> {
    /// The same launch as std's `Command` (for spawning without a cgroup, or where `clone3`
    /// cannot put the child into one).
    fn command(&self) -> Command {
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;
        let mut cmd = Command::new(self.exe);
        if let Some((arg0, args)) = self.argv.split_first() {
            cmd.arg0(arg0).args(args);
        }
        cmd.env_clear()
            .envs(self.env.iter().copied())
            .stdin(if self.stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(cwd) = self.cwd {
            cmd.current_dir(cwd);
        }
        cmd
    }
}

/// Start the tool, in `cgroup` when given, and register its pid (under the lock, so no sweep
/// sees it unregistered). Into a cgroup it is cloned directly (`clone3` with
/// `CLONE_INTO_CGROUP`, Linux 5.7): moving a process into a cgroup takes the kernel's global
/// cgroup lock for writing and waits for an RCU grace period (6–17 ms on the development VM, a
/// run's whole budget), while a child born in it needs neither. Where that clone is refused, the
/// child moves itself in between fork and exec, as before.
pub(super) fn spawn(launch: &Launch<'_>, cgroup: Option<&Cgroup>) -> io::Result<Spawned> {
    let mut live = spawned();
    if ENDED.load(Ordering::SeqCst) {
        return Err(io::Error::other("ryechain is shutting down"));
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if let Some(cg) = cgroup {
        match clone_into::spawn(launch, &cg.dir_fd) {
            Some(Ok(s)) => {
                live.push(s.pid);
                return Ok(s);
            }
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    let mut cmd = launch.command();
    if let Some(cg) = cgroup {
        cg.join_before_exec(&mut cmd);
    }
    let mut child = cmd.spawn()?;
    live.push(child.id());
    #[cfg(target_os = "linux")]
    let pidfd = rustix::process::Pid::from_raw(child.id().cast_signed()).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    #[cfg(not(target_os = "linux"))]
    let pidfd = None;
    Ok(Spawned {
        pid: child.id(),
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        pidfd,
        child: Some(child),
    })
}

/// `clone3(CLONE_INTO_CGROUP)` then `execve`, by hand: std's `Command` cannot clone into a
/// cgroup, and no maintained crate spawns that way. The clone shares our memory and suspends us
/// until the child has called `execve` (`CLONE_VM | CLONE_VFORK`, as glibc's `posix_spawn`
/// does): a fork would copy the page tables of this process and make every page it writes
/// afterwards fault once more, a third of what `exec` adds to a run. So the child runs on a stack
/// of its own, reached through a few lines of assembly (x86_64; elsewhere std spawns, see
/// `spawn`), touches only that stack and what was made for it before the clone, with every signal
/// blocked until its handlers are back to their defaults, and calls only async-signal-safe
/// functions.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod clone_into {
    use std::ffi::{CString, OsStr};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::process::{ChildStderr, ChildStdin, ChildStdout};

    use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};

    use super::{Launch, Spawned};

    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    const CLONE_PIDFD: u64 = 0x1000;

    /// The child's stack: it calls a handful of libc functions before `execve`.
    const STACK_BYTES: usize = 64 * 1024;

    /// The kernel's `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
    #[repr(C)]
    #[derive(Default)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }

    fn cstring(s: &OsStr) -> io::Result<CString> {
        CString::new(s.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
    }

    /// `None`: the kernel will not clone into a cgroup here (no `clone3`, not permitted, an
    /// older kernel); the caller spawns the usual way. `Some(Err)`: the program could not be
    /// started (its `execve` error, as std reports it).
    pub(super) fn spawn(launch: &Launch<'_>, cgroup: &OwnedFd) -> Option<io::Result<Spawned>> {
        match prepare(launch) {
            Ok(prepared) => prepared.clone_into(cgroup),
            Err(e) => Some(Err(e)),
        }
    }

    struct Prepared {
        exe: CString,
        argv: Vec<CString>,
        env: Vec<CString>,
        cwd: Option<CString>,
        stdin: Option<(OwnedFd, OwnedFd)>,
        null: Option<OwnedFd>,
        stdout: (OwnedFd, OwnedFd),
        stderr: (OwnedFd, OwnedFd),
    }

    fn prepare(launch: &Launch<'_>) -> io::Result<Prepared> {
        let argv = launch
            .argv
            .iter()
            .map(|a| cstring(OsStr::new(a)))
            .collect::<io::Result<Vec<_>>>()?;
        let env = launch
            .env
            .iter()
            .map(|(k, v)| cstring(OsStr::new(&format!("{k}={v}"))))
            .collect::<io::Result<Vec<_>>>()?;
        let null = if launch.stdin {
            None
        } else {
            Some(OwnedFd::from(
                std::fs::OpenOptions::new().read(true).open("/dev/null")?,
            ))
        };
        Ok(Prepared {
            exe: cstring(launch.exe.as_os_str())?,
            argv,
            env,
            cwd: launch.cwd.map(|c| cstring(c.as_os_str())).transpose()?,
            stdin: if launch.stdin { Some(pipe()?) } else { None },
            null,
            stdout: pipe()?,
            stderr: pipe()?,
        })
    }

    /// What the child reads (made before the clone) and the one thing it writes: the errno of
    /// the step that failed, read by the parent once the clone returns.
    #[repr(C)]
    struct ChildData {
        exe: *const libc::c_char,
        argv: *const *const libc::c_char,
        envp: *const *const libc::c_char,
        cwd: *const libc::c_char,
        stdin: RawFd,
        stdout: RawFd,
        stderr: RawFd,
        /// The parent's signal mask, restored in the child once its handlers are the defaults.
        mask: SigSet,
        errno: libc::c_int,
    }

    /// The child, on its own stack, sharing the parent's memory while the parent waits: set up
    /// the descriptors, the process group and the directory, put every caught signal back to its
    /// default (a handler of the parent must not run here) and `SIGPIPE` too (Rust ignores it;
    /// std restores it), unblock what the parent had unblocked, and `execve`; on failure record
    /// errno and `_exit`.
    extern "C" fn child(data: *mut libc::c_void) -> ! {
        let data = data.cast::<ChildData>();
        // SAFETY: `data` points at the parent's live `ChildData`; the parent is suspended until
        // this process calls `execve` or `_exit` (`CLONE_VFORK`). Only async-signal-safe calls.
        unsafe {
            let d = &*data;
            let ok = libc::dup2(d.stdin, 0) >= 0
                && libc::dup2(d.stdout, 1) >= 0
                && libc::dup2(d.stderr, 2) >= 0
                && libc::setpgid(0, 0) == 0
                && (d.cwd.is_null() || libc::chdir(d.cwd) == 0);
            if ok {
                for sig in 1..=libc::SIGRTMAX() {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
                        && (old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
                        && old.sa_sigaction != libc::SIG_DFL
                    {
                        libc::signal(sig, libc::SIG_DFL);
                    }
                }
                libc::sigprocmask(libc::SIG_SETMASK, d.mask.as_ref(), std::ptr::null_mut());
                libc::execve(d.exe, d.argv, d.envp);
            }
            (*data).errno = *libc::__errno_location();
            libc::_exit(127)
        }
    }

    /// `clone3(args)`; in the child, `child(data)` on the stack the arguments name (it never
    /// returns). The parent gets the child's pid or `-errno`, as from `syscall(2)`.
    ///
    /// # Safety
    /// `args` must ask for a stack of its own (`stack`, `stack_size`), 16-byte aligned at its
    /// top, that outlives the child's use of it; `child` must never return.
    unsafe fn clone3(
        args: &CloneArgs,
        child: extern "C" fn(*mut libc::c_void) -> !,
        data: *mut libc::c_void,
    ) -> i64 {
        let ret: i64;
        // SAFETY: the parent returns from the syscall as from any other. The child starts with
        // the parent's registers on the new stack: it calls `child(data)` (kept in callee-saved
        // registers across the syscall), with the frame pointer cleared, and never comes back.
        unsafe {
            std::arch::asm!(
                "syscall",
                "test rax, rax",
                "jnz 2f",
                "xor ebp, ebp",
                "mov rdi, r12",
                "call r13",
                "ud2",
                "2:",
                inlateout("rax") libc::SYS_clone3 => ret,
                in("rdi") std::ptr::from_ref(args),
                in("rsi") std::mem::size_of::<CloneArgs>(),
                in("r12") data,
                in("r13") child,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    impl Prepared {
        fn clone_into(self, cgroup: &OwnedFd) -> Option<io::Result<Spawned>> {
            let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut envp: Vec<*const libc::c_char> = self.env.iter().map(|e| e.as_ptr()).collect();
            envp.push(std::ptr::null());
            let stdin = match (&self.stdin, &self.null) {
                (Some((read, _)), _) => read.as_raw_fd(),
                (None, Some(null)) => null.as_raw_fd(),
                (None, None) => return Some(Err(io::Error::other("no stdin for the tool"))),
            };
            // u128 elements: the top of the stack is 16-byte aligned, as the ABI wants at a call.
            let mut stack = vec![0u128; STACK_BYTES / 16];
            let mut data = ChildData {
                exe: self.exe.as_ptr(),
                argv: argv.as_ptr(),
                envp: envp.as_ptr(),
                cwd: self.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                stdin,
                stdout: self.stdout.1.as_raw_fd(),
                stderr: self.stderr.1.as_raw_fd(),
                mask: SigSet::empty(), // filled below
                errno: 0,
            };
            let mut pidfd: RawFd = -1;
            let args = CloneArgs {
                flags: libc::CLONE_VM as u64
                    | libc::CLONE_VFORK as u64
                    | CLONE_INTO_CGROUP
                    | CLONE_PIDFD,
                pidfd: (&raw mut pidfd) as u64,
                exit_signal: libc::SIGCHLD as u64,
                stack: stack.as_mut_ptr() as u64,
                stack_size: STACK_BYTES as u64,
                cgroup: cgroup.as_raw_fd() as u64,
                ..CloneArgs::default()
            };
            // No signal is handled in the child before its handlers are reset: all are blocked
            // from before the clone until the child sets its own mask (the parent's old one).
            let _ = pthread_sigmask(
                SigmaskHow::SIG_SETMASK,
                Some(&SigSet::all()),
                Some(&mut data.mask),
            );
            // SAFETY: the stack is ours until the child has exec'd or exited, which the clone
            // waits for (`CLONE_VFORK`); `child` never returns; `data` outlives the call.
            let pid = unsafe { clone3(&args, child, (&raw mut data).cast()) };
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&data.mask), None);
            drop(stack);
            if pid < 0 {
                // Refused (ENOSYS, EPERM, EINVAL, E2BIG, EBUSY…): spawn the usual way instead.
                return None;
            }
            let pid = pid as i32;
            // SAFETY: the kernel opened it for us (close-on-exec) and nothing else owns it.
            let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
            if data.errno != 0 {
                // Reap our own child, which failed before its program started.
                if let Some(pid) = rustix::process::Pid::from_raw(pid.max(0)) {
                    let _ =
                        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
                }
                return Some(Err(io::Error::from_raw_os_error(data.errno)));
            }
            // The child's ends close here; ours stay.
            let Prepared {
                stdin,
                stdout,
                stderr,
                ..
            } = self;
            Some(Ok(Spawned {
                pid: pid as u32,
                stdin: stdin.map(|(_, write)| ChildStdin::from(write)),
                stdout: Some(ChildStdout::from(stdout.0)),
                stderr: Some(ChildStderr::from(stderr.0)),
                pidfd,
                child: None,
            }))
        }
    }
}

/// Start `cmd` (a process this one waits on itself: the MCP server's workers) and register it
/// under the lock, as `spawn` does a tool, so no sweep ends or reaps it; `forget` it once reaped.
pub(super) fn spawn_registered(cmd: &mut Command) -> io::Result<Child> {
    let mut live = spawned();
    let child = cmd.spawn()?;
    live.push(child.id());
    Ok(child)
}

/// In a process that adopts orphans and starts every process of its own through
/// `spawn_registered` (the MCP server, whose children are its workers), kill and reap every
/// other child, in steps until none is left or `deadline`: each is what a worker left when it
/// died (a worker killed by a signal, whose tool's processes came to us). The processes such a
/// stray leaves come to us in turn and go in the next step.
pub(super) fn sweep_strays(deadline: Instant) {
    if !ADOPTING.load(Ordering::SeqCst) {
        return;
    }
    let mut pause = Duration::from_micros(50);
    loop {
        let found = {
            let live = spawned();
            let mut found = false;
            for child in children() {
                if live.iter().any(|&p| i32::try_from(p) == Ok(child)) {
                    continue;
                }
                found = true;
                kill_and_reap(child);
            }
            found
        };
        if !found || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Block until our child `pid` has exited, leaving it unreaped (so its pid is not reused while
/// what it left is ended); whether it exited with status 0. `None` when `waitid` fails.
pub(super) fn exited_cleanly(pid: u32) -> Option<bool> {
    let pid = pid_of(pid)?;
    loop {
        match process::waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Ok(Some(info)) => return Some(info.exit_status() == Some(0)),
            Err(Errno::INTR) => {}
            // No status without `WNOHANG`: not a child of ours to wait on.
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Whether our child `pid` has exited (left unreaped); `true` too when `waitid` fails (it is no
/// child of ours to use).
pub(super) fn has_exited(pid: u32) -> bool {
    // `Ok(None)`: `WNOHANG` found it still running.
    pid_of(pid).is_none_or(|pid| {
        !matches!(
            process::waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG,
            ),
            Ok(None)
        )
    })
}

/// End and remove the cgroups the process `pid` (a worker of ours, exited but not yet reaped,
/// so no other process has its pid) made beside ours and left behind (`ryechain-exec-<pid>-<n>`):
/// killed, waited for in short steps until empty or `deadline`, removed.
pub(super) fn reclaim_cgroups_of(pid: u32, deadline: Instant) {
    #[cfg(target_os = "linux")]
    {
        let Some(parent) = own_cgroup_dir() else {
            return;
        };
        let prefix = format!("ryechain-exec-{pid}-");
        let Ok(entries) = std::fs::read_dir(&parent) else {
            return;
        };
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().starts_with(&prefix) {
                continue;
            }
            let dir = entry.path();
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
            let mut pause = Duration::from_micros(50);
            while populated(&dir) && Instant::now() < deadline {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            let _ = std::fs::remove_dir(&dir);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (pid, deadline);
}

/// Whether a live process is still in the cgroup at `dir` (`populated 1` in `cgroup.events`).
fn populated(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events"))
        .is_ok_and(|events| events.lines().any(|l| l.trim() == "populated 1"))
}

/// The child was reaped: the sweep may meet its pid again as someone else.
pub(super) fn forget(pid: u32) {
    spawned().retain(|&p| p != pid);
}

/// Block until the child `pid` has exited, leaving it unreaped (`waitid` with `WNOWAIT`), so its
/// pid — and the id of the process group it leads — stays reserved until it is reaped. `false`
/// when `waitid` fails (the caller then reaps at once).
pub(super) fn wait_exited(pid: u32) -> bool {
    let Some(pid) = pid_of(pid) else {
        return false;
    };
    loop {
        match process::waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Ok(_) => return true,
            Err(Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

/// Wait, in short steps until `deadline`, for everything the run started to be gone, once its
/// cgroup and group were killed and its leader `pid` reaped: the cgroup empty, and — where this
/// process adopts orphans — the group empty and no child of ours left that `run` did not spawn.
/// Each such child is killed and reaped; the processes it leaves come to us in turn and go in the
/// next step. Without adoption the group's dead are init's to reap, so only the cgroup is
/// waited for. The sweep is skipped while another run is in flight (its orphans are not ours).
pub(super) fn sweep(pid: i32, pgid: i32, cgroup: Option<&Cgroup>, deadline: Instant) {
    let adopting = ADOPTING.load(Ordering::SeqCst);
    let mut pause = Duration::from_micros(50);
    loop {
        let mut left = cgroup.is_some_and(Cgroup::populated);
        if adopting && let Some(adopted) = kill_adopted(pid) {
            left |= adopted || group_exists(pgid);
        }
        if !left || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Whether a process of the group `pgid` still exists (alive or a zombie).
fn group_exists(pgid: i32) -> bool {
    Pid::from_raw(pgid.max(0)).is_some_and(|g| process::test_kill_process_group(g).is_ok())
}

/// SIGKILL and try to reap every child of ours that `run` did not spawn; whether there was one.
/// `None` (nothing done) while another run's child is alive: its orphans may be among ours, and
/// the group's dead may wait among them for that run's sweep.
fn kill_adopted(pid: i32) -> Option<bool> {
    let live = spawned();
    if live
        .iter()
        .any(|&p| i32::try_from(p).is_ok_and(|p| p != pid))
    {
        return None;
    }
    let mut found = false;
    for child in children() {
        if live.iter().any(|&p| i32::try_from(p) == Ok(child)) {
            continue;
        }
        found = true;
        kill_and_reap(child);
    }
    Some(found)
}

/// The pids of this process's children (of any of its threads), from `/proc`.
fn children() -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        // One `children` file per thread (CONFIG_PROC_CHILDREN); without it, scan every process.
        let main = format!("/proc/self/task/{}/children", std::process::id());
        if !std::path::Path::new(&main).is_file() {
            return children_by_scan();
        }
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return children_by_scan();
        };
        let mut out = Vec::new();
        for task in tasks.flatten() {
            // A thread that has just ended has no file any more (and no children).
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                out.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
        out
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Every process whose parent is this process, by reading `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn children_by_scan() -> Vec<i32> {
    let me = std::process::id().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .is_some_and(|ppid| ppid == me)
            })
        })
        .collect()
}

/// A cgroup v2 made for one run, beside nothing: a child of ryechain's own cgroup, named
/// `ryechain-exec-<pid>-<n>`. The tool joins it before exec; `kill` ends every process in it
/// (`cgroup.kill`, Linux 5.14), forks in flight included; dropping it removes the directory.
pub(super) struct Cgroup {
    dir: PathBuf,
    /// The cgroup's directory, opened (close-on-exec): what `clone3` is given to start the child
    /// in it.
    dir_fd: std::os::fd::OwnedFd,
    /// `cgroup.procs` of the new cgroup, opened here (close-on-exec) and written by the child
    /// where it cannot be cloned into the cgroup.
    procs: std::fs::File,
}

/// Numbers the cgroups of one process.
static NEXT_CGROUP: AtomicU64 = AtomicU64::new(0);

/// Whether runs here get a cgroup of their own (`Containment::cgroup`): one can be made and removed.
#[cfg(any(test, feature = "testing"))]
pub fn cgroups_work() -> bool {
    Cgroup::create().is_some()
}

impl Cgroup {
    /// A new cgroup under ours, or `None` where none can be made: no cgroup v2 mount, our cgroup
    /// not writable (not delegated to us), no `cgroup.kill` (Linux before 5.14), other systems.
    pub(super) fn create() -> Option<Cgroup> {
        #[cfg(target_os = "linux")]
        {
            let parent = own_cgroup_dir()?;
            let name = format!(
                "ryechain-exec-{}-{}",
                std::process::id(),
                NEXT_CGROUP.fetch_add(1, Ordering::Relaxed)
            );
            let dir = parent.join(name);
            std::fs::create_dir(&dir).ok()?;
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"));
            let dir_fd = std::fs::File::open(&dir).map(std::os::fd::OwnedFd::from);
            match (procs, dir_fd) {
                (Ok(procs), Ok(dir_fd)) if dir.join("cgroup.kill").is_file() => {
                    Some(Cgroup { dir, dir_fd, procs })
                }
                _ => {
                    let _ = std::fs::remove_dir(&dir);
                    None
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// Have the child move itself into this cgroup between fork and exec, so nothing it starts
    /// is ever outside. If the move is refused, the child runs on outside (the group and the
    /// orphan sweep still apply).
    pub(super) fn join_before_exec(&self, cmd: &mut Command) {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = self.procs.as_raw_fd();
        // SAFETY: the hook runs in the forked child before exec and only calls write(2), which
        // is async-signal-safe, on a descriptor that stays open until the parent drops `self`
        // (after the spawn). "0" names the writing process.
        unsafe {
            cmd.pre_exec(move || {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                Ok(())
            });
        }
    }

    /// SIGKILL every process in the cgroup.
    pub(super) fn kill(&self) {
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
    }

    /// Whether a live process is still in the cgroup (`populated 1` in `cgroup.events`).
    fn populated(&self) -> bool {
        populated(&self.dir)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Fails while a process is left (one stuck in the kernel past the sweep's deadline).
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The directory of this process's cgroup v2.
#[cfg(target_os = "linux")]
fn own_cgroup_dir() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cgroup_dir(&cgroups, &mounts)
}

/// The directory of a cgroup v2: its path in a `/proc/<pid>/cgroup` text (the `0::` line) under
/// the cgroup2 mount of a `mountinfo` text (whose root may be a part of the path, in a cgroup
/// namespace or a bind mount). `None` without a cgroup2 mount that holds it.
#[cfg(target_os = "linux")]
fn cgroup_dir(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    mountinfo.lines().find_map(|line| {
        let (fields, fs) = line.split_once(" - ")?;
        if fs.split_whitespace().next() != Some("cgroup2") {
            return None;
        }
        let mut fields = fields.split_whitespace().skip(3);
        let (root, mount) = (unescape(fields.next()?), unescape(fields.next()?));
        let rel = if root == "/" {
            path
        } else {
            let rest = path.strip_prefix(root.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then_some(rest)?
        };
        Some(PathBuf::from(mount).join(rel.trim_start_matches('/')))
    })
}

/// A mountinfo field with its octal escapes (`\040` for a space) decoded.
#[cfg(target_os = "linux")]
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(b)) => {
                out.push(b);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    const HYBRID: &str = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn the_cgroup_v2_dir_is_found_under_its_mount() {
        let own = "4:memory:/x\n0::/user.slice/app.scope\n";
        assert_eq!(
            cgroup_dir(own, HYBRID),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/app.scope"))
        );
        assert_eq!(
            cgroup_dir("0::/\n", HYBRID),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        // A mount whose root is a part of the path (a bind mount of a delegated subtree).
        let bound = "50 1 0:40 /user.slice /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup_dir("0::/user.slice/app.scope\n", bound),
            Some(PathBuf::from("/mnt/my cg/app.scope"))
        );
        assert_eq!(cgroup_dir("0::/user.slicex/a\n", bound), None);
        // cgroup v1 only, or no v2 line: none.
        assert_eq!(cgroup_dir("4:memory:/x\n", HYBRID), None);
        assert_eq!(
            cgroup_dir(
                "0::/\n",
                "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw\n"
            ),
            None
        );
    }

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape(r"/sys/fs/cgroup"), "/sys/fs/cgroup");
        assert_eq!(unescape(r"/mnt/a\040b\134c"), r"/mnt/a b\c");
        assert_eq!(
            unescape(r"/x\04"),
            r"/x\04",
            "a cut escape stays as written"
        );
    }
}
