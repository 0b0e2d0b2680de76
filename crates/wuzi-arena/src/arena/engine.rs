//! One engine process: its pipes, a reader thread per output stream that
//! timestamps every line, reads with deadlines, and the per-game log.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::arena::config::EngineSpec;
use wuzi_formats::gomocup::LineSplitter;

/// Longest line kept from an engine; the rest of a longer line is dropped.
const MAX_LINE: usize = 16 * 1024;
/// Lines read from an engine and not yet handled. An engine that writes
/// faster than the runner reads (one printing while it is the other's
/// turn) then waits on its full pipe, as under any manager, instead of
/// the runner holding everything it wrote.
const QUEUED_LINES: usize = 1024;
/// Most text a game's log holds; what an engine writes beyond it is counted,
/// not kept.
const MAX_LOG: usize = 16 * 1024 * 1024;

/// What a reader thread reports.
enum Event {
    /// A line from stdout, `\r`/`\n` removed, never empty.
    Out(Instant, String),
    /// A line from stderr (logged only).
    Err(Instant, String),
    /// stdout reached end of file (the process exited or closed it).
    Closed(Instant),
}

/// The answer to a read.
#[derive(Debug)]
pub(crate) enum Reply {
    Line(Instant, String),
    Closed,
    Timeout,
}

/// A game's log of every line sent to and received from the engines, with
/// times since the game started. Disabled logs cost nothing.
pub(crate) struct GameLog {
    start: Instant,
    text: Option<String>,
    /// Lines left out once the log was full.
    dropped: u64,
}

impl GameLog {
    pub(crate) fn new(enabled: bool) -> GameLog {
        GameLog {
            start: Instant::now(),
            text: enabled.then(|| String::with_capacity(16 * 1024)),
            dropped: 0,
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.text.is_some()
    }

    /// `[seconds] who dir text`; `dir` is `>` (sent), `<` (received), `!`
    /// (stderr) or `#` (runner note).
    pub(crate) fn line(&mut self, at: Instant, who: &str, dir: &str, text: &str) {
        if let Some(log) = self.text.as_mut() {
            // The runner's own notes (`#`) are kept past the cap: they say
            // what became of the engine that filled it.
            if dir != "#" && log.len() + text.len() > MAX_LOG {
                self.dropped += 1;
                return;
            }
            let t = at.saturating_duration_since(self.start).as_secs_f64();
            let _ = writeln!(log, "[{t:11.6}] {who} {dir} {text}");
        }
    }

    pub(crate) fn note(&mut self, who: &str, text: &str) {
        if self.text.is_some() {
            self.line(Instant::now(), who, "#", text);
        }
    }

    pub(crate) fn take(&mut self) -> Option<String> {
        let mut text = self.text.take()?;
        if self.dropped > 0 {
            let _ = writeln!(
                text,
                "[log full at {} MiB: {} more lines left out]",
                MAX_LOG >> 20,
                self.dropped
            );
        }
        Some(text)
    }
}

/// A running engine process.
pub(crate) struct EngineProcess {
    pub(crate) label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Event>,
    /// stdout is at end of file.
    closed: bool,
    exited: bool,
    /// The engine and what it starts (Windows; Unix has its process group).
    #[cfg(windows)]
    job: Option<super::job::Job>,
}

fn reader<R: Read>(mut source: R, tx: Sender<Event>, stderr: bool) {
    let mut splitter = LineSplitter::new(MAX_LINE);
    let mut buf = [0u8; 8192];
    let event = |at: Instant, text: String| {
        if stderr {
            Event::Err(at, text)
        } else {
            Event::Out(at, text)
        }
    };
    let mut open = true;
    while open {
        let n = match source.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let at = Instant::now();
        splitter.feed(&buf[..n], |text| {
            if !text.is_empty() {
                open = open && tx.send(event(at, text)).is_ok();
            }
        });
    }
    if !open {
        return;
    }
    let at = Instant::now();
    if let Some(text) = splitter.finish() {
        let _ = tx.send(event(at, text));
    }
    if !stderr {
        let _ = tx.send(Event::Closed(at));
    }
}

impl EngineProcess {
    /// Starts the engine with piped stdin, stdout and stderr.
    pub(crate) fn spawn(spec: &EngineSpec, label: &str) -> io::Result<EngineProcess> {
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &spec.dir {
            command.current_dir(dir);
        }
        // A process group of its own: a Ctrl-C at the terminal reaches the
        // runner alone, which lets the games in progress finish
        // (`interrupt`) instead of the engines dying in them.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        // Its own group also keeps the engine alive when the runner is
        // killed outright (SIGKILL, the OOM killer, a supervisor's second
        // signal): without this it would go on searching with no one to
        // read it. The signal comes when the thread that started it ends,
        // which for a game's engine is its worker, after it has retired
        // its engines. It reaches the started process only: an engine run
        // by a wrapper script without `exec` is left to end at its end of
        // input.
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: getpid has no preconditions.
            let runner = unsafe { libc::getpid() };
            // SAFETY: the closure runs in the child between fork and exec
            // and calls only async-signal-safe functions (getppid, prctl,
            // _exit).
            unsafe {
                command.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // The runner died before the prctl took effect.
                    if libc::getppid() != runner {
                        libc::_exit(1);
                    }
                    Ok(())
                });
            }
        }
        #[cfg(windows)]
        {
            use std::os::windows::process::CommandExt;
            // A group of its own keeps Ctrl-C from the engine; no console
            // keeps Ctrl-Break and the console's closing from it too (it
            // talks through its pipes only).
            const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            command.creation_flags(
                CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | super::job::CREATE_SUSPENDED,
            );
        }
        let mut child = command.spawn()?;
        #[cfg(windows)]
        let job = super::job::Job::for_child(&child);
        #[cfg(windows)]
        if let Err(e) = super::job::resume(&child) {
            // Never started: nothing but the process itself to end.
            live::kill_and_reap(&mut child);
            return Err(io::Error::new(
                e.kind(),
                format!("cannot start the engine's process: {e}"),
            ));
        }
        live::started(child.id());
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = crossbeam_channel::bounded(QUEUED_LINES);
        let tx_err = tx.clone();
        let readers = thread::Builder::new()
            .name(format!("{label}-out"))
            .spawn(move || reader(stdout, tx, false))
            .and_then(|_| {
                thread::Builder::new()
                    .name(format!("{label}-err"))
                    .spawn(move || reader(stderr, tx_err, true))
            });
        if let Err(e) = readers {
            // No one would read the engine: it ends here, with what it
            // started (on Windows its job, dropped on return, ends those).
            live::kill_and_reap(&mut child);
            return Err(e);
        }
        Ok(EngineProcess {
            label: label.to_string(),
            stdin: child.stdin.take(),
            child,
            rx,
            closed: false,
            exited: false,
            #[cfg(windows)]
            job,
        })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `text` (one or more `\n`-terminated lines) in one write and
    /// logs each line; returns the time just before the write.
    pub(crate) fn send(&mut self, text: &str, log: &mut GameLog) -> io::Result<Instant> {
        self.send_timed(text, log).map(|(before, _)| before)
    }

    /// As [`EngineProcess::send`], returning the times just before and
    /// just after the write (the engine may answer, and its answer be read,
    /// before the write call returns to this thread).
    pub(crate) fn send_timed(
        &mut self,
        text: &str,
        log: &mut GameLog,
    ) -> io::Result<(Instant, Instant)> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin closed"))?;
        let at = Instant::now();
        let result = stdin.write_all(text.as_bytes()).and_then(|_| stdin.flush());
        let after = Instant::now();
        if log.enabled() {
            for line in text.lines() {
                log.line(at, &self.label, ">", line);
            }
        }
        if let Err(e) = &result {
            log.note(&self.label, &format!("write failed: {e}"));
        }
        result.map(|_| (at, after))
    }

    /// The next stdout line written before `deadline` (stderr lines are
    /// logged and skipped). Received lines are logged. A line written after
    /// the deadline is a timeout even when it was queued before the read:
    /// an engine that never stops writing cannot hold the runner past it.
    pub(crate) fn next_line(&mut self, deadline: Instant, log: &mut GameLog) -> Reply {
        if self.closed {
            return Reply::Closed;
        }
        let mut late_errors = 0;
        loop {
            match self.rx.recv_deadline(deadline) {
                Ok(Event::Out(at, text)) => {
                    log.line(at, &self.label, "<", &text);
                    if at > deadline {
                        return Reply::Timeout;
                    }
                    return Reply::Line(at, text);
                }
                Ok(Event::Err(at, text)) => {
                    log.line(at, &self.label, "!", &text);
                    // A move written in time may still be queued behind
                    // stderr lines written later (two readers): it is at
                    // most a queue's length behind them.
                    if at > deadline {
                        late_errors += 1;
                        if late_errors > QUEUED_LINES {
                            return Reply::Timeout;
                        }
                    }
                }
                Ok(Event::Closed(at)) => {
                    self.closed = true;
                    log.line(at, &self.label, "#", "end of output");
                    return Reply::Closed;
                }
                Err(RecvTimeoutError::Timeout) => return Reply::Timeout,
                Err(RecvTimeoutError::Disconnected) => {
                    self.closed = true;
                    return Reply::Closed;
                }
            }
        }
    }

    /// Logs and discards whatever the engine wrote since the last read
    /// (stale lines are never taken as answers): what is queued now, not
    /// what an engine still writing adds meanwhile.
    pub(crate) fn drain(&mut self, log: &mut GameLog) {
        for _ in 0..self.rx.len() {
            let Ok(event) = self.rx.try_recv() else {
                break;
            };
            match event {
                Event::Out(at, text) => log.line(
                    at,
                    &self.label,
                    "<",
                    &format!("{text}    (unrequested, ignored)"),
                ),
                Event::Err(at, text) => log.line(at, &self.label, "!", &text),
                Event::Closed(at) => {
                    self.closed = true;
                    log.line(at, &self.label, "#", "end of output");
                }
            }
        }
    }

    /// Whether the process has exited (reaps it if so).
    pub(crate) fn has_exited(&mut self) -> bool {
        if !self.exited {
            let child = &mut self.child;
            if let Ok(Some(_)) = live::reap(child.id(), || child.try_wait()) {
                self.exited = true;
            }
        }
        self.exited
    }

    /// The exit status text if the process has exited.
    pub(crate) fn exit_text(&mut self) -> Option<String> {
        let child = &mut self.child;
        match live::reap(child.id(), || child.try_wait()) {
            Ok(Some(status)) => {
                self.exited = true;
                Some(status.to_string())
            }
            _ => None,
        }
    }

    /// Sends `END` and closes stdin, as the Piskvork manager does.
    pub(crate) fn send_end(&mut self, log: &mut GameLog) {
        if self.stdin.is_some() {
            let _ = self.send("END\n", log);
        }
        self.stdin = None;
    }

    /// Whether the process has exited, reading (and logging) what it
    /// wrote meanwhile: the queue is bounded, and an engine still writing
    /// as it ends must not be held on a full pipe.
    pub(crate) fn poll_exit(&mut self, log: &mut GameLog) -> bool {
        self.drain(log);
        self.has_exited()
    }

    /// Waits for the process to exit until `deadline`, logging its last
    /// lines; true if it exited.
    pub(crate) fn wait_exit(&mut self, deadline: Instant, log: &mut GameLog) -> bool {
        loop {
            if self.poll_exit(log) {
                self.drain(log);
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                self.drain(log);
                return false;
            }
            thread::sleep((deadline - now).min(Duration::from_millis(2)));
        }
    }

    /// Kills the process and those it started (SIGKILL) and reaps it.
    pub(crate) fn kill(&mut self, log: &mut GameLog) {
        self.stdin = None;
        // Even where the engine itself has exited: a launcher may have left
        // the real engine running.
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
        }
        if !self.has_exited() {
            live::kill_and_reap(&mut self.child);
            self.exited = true;
            log.note(&self.label, &format!("killed process {}", self.child.id()));
        }
        self.drain(log);
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        self.stdin = None;
        if !self.exited {
            let child = &mut self.child;
            let pid = child.id();
            // On Windows the job, dropped after this, ends what the engine
            // started (it is closed with the kill-on-close limit).
            if let Ok(None) = live::reap(pid, || child.try_wait()) {
                live::kill_and_reap(child);
            }
        }
    }
}

/// The engine processes alive, so that an interrupt's second press can
/// kill them before the runner quits (each is in a process group of its
/// own and would not get the terminal's signal). A process leaves the
/// list in the same critical section that reaps it, so its id is never
/// signalled after the system may have given it to another process.
pub(crate) mod live {
    use parking_lot::Mutex;
    use std::process::ExitStatus;

    static ALIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

    pub(crate) fn started(pid: u32) {
        ALIVE.lock().push(pid);
    }

    /// Runs `wait` (a `try_wait` or `wait` of the child `pid`) and, when it
    /// reaped the process, takes it off the list, under one lock. An engine
    /// that has exited has its process group killed first: what it started
    /// and left running (a helper, the real engine of a launcher) would go
    /// on using the CPU in the games after, and once the engine is reaped
    /// its group can no longer be signalled safely.
    pub(crate) fn reap(
        pid: u32,
        wait: impl FnOnce() -> std::io::Result<Option<ExitStatus>>,
    ) -> std::io::Result<Option<ExitStatus>> {
        let mut alive = ALIVE.lock();
        if exited_unreaped(pid) {
            kill_group(pid);
        }
        let result = wait();
        if let Ok(Some(_)) = result {
            alive.retain(|&p| p != pid);
        }
        result
    }

    /// Kills the engine `child` and what it started, and reaps it. Polled,
    /// not a blocking `wait` under the lock: a killed process can take a
    /// while to die (a GPU context torn down, a disk wait), and every other
    /// game's reaping and the second Ctrl-C's `kill_all` take the lock.
    pub(crate) fn kill_and_reap(child: &mut std::process::Child) {
        let pid = child.id();
        kill_group(pid);
        let _ = child.kill();
        while let Ok(None) = reap(pid, || child.try_wait()) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Kills every engine still alive and what it started (Unix; on
    /// Windows each engine's job ends it when the runner exits).
    pub(crate) fn kill_all() {
        let alive = ALIVE.lock();
        for &pid in alive.iter() {
            kill_group(pid);
        }
    }

    /// Whether the child `pid` has exited and is not yet reaped (Unix: the
    /// status is looked at, not taken); elsewhere false.
    fn exited_unreaped(pid: u32) -> bool {
        #[cfg(unix)]
        // SAFETY: waitid(2) with WNOWAIT on our own child writes only into
        // `info`, which is zeroed so that si_pid reads 0 when the child has
        // not exited (WNOHANG).
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            libc::waitid(libc::P_PID, libc::id_t::from(pid), &mut info, flags) == 0
                && info.si_pid() != 0
        }
        #[cfg(not(unix))]
        {
            let _ = pid;
            false
        }
    }

    /// Kills (SIGKILL) the process group that the engine `pid` leads: the
    /// processes it started, a wrapper script's engine among them, which
    /// would otherwise go on using the CPU and hold its output open. Unix
    /// only (Windows: the engine's job object); elsewhere a no-op.
    pub(crate) fn kill_group(pid: u32) {
        #[cfg(unix)]
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill(2) on the group of a child not yet reaped (its
            // id, and so its group's, cannot have been reused): every
            // caller kills before it reaps.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        #[cfg(not(unix))]
        let _ = pid;
    }
}
