//! The life of a brain's process across games: starting it, the START
//! handshake and the INFO block, and retiring it (END, then a kill after
//! the grace period).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::arena::config::EngineSpec;
use crate::arena::engine::{EngineProcess, GameLog, Reply};
use crate::arena::ArenaError;
use wuzi_formats::gomocup::{BrainLine, Command};
use wuzi_game::game::{BoardSize, Rule};

use crate::arena::game::PositionMode;

/// The game settings the referee needs.
#[derive(Clone, Debug)]
pub(crate) struct GameSettings {
    pub size: BoardSize,
    pub rule: Rule,
    pub tolerance: Duration,
    pub init_timeout: Duration,
    pub end_grace: Duration,
    pub draw_after: usize,
    pub position: PositionMode,
    /// New processes for every game (END after each game) instead of RESTART.
    pub new_process: bool,
    pub about: bool,
    /// Skip answer lines that are neither a move nor a known prefix, as
    /// c-gomoku-cli does, instead of scoring them as a loss (Piskvork).
    pub skip_unparsable: bool,
}

/// One engine of a worker: its spec and its current process.
pub(crate) struct Slot<'a> {
    pub spec: &'a EngineSpec,
    pub label: String,
    pub proc: Option<EngineProcess>,
    /// Answered RESTART with OK last time (or not tried yet).
    pub restart_ok: bool,
    pub about: Option<String>,
    pub end_kills: u32,
    /// The process answered OK to START (RESTART applies to it).
    pub started: bool,
    /// ABOUT was sent to the process and its answer not read yet: a
    /// process launched for a game lost before its handshake keeps it
    /// for the next game's.
    pub about_sent: bool,
}

impl GameSettings {
    pub(crate) fn tolerance_of(&self, spec: &EngineSpec) -> Duration {
        spec.tolerance_ms
            .map(Duration::from_millis)
            .unwrap_or(self.tolerance)
    }

    fn init_timeout_of(&self, spec: &EngineSpec) -> Duration {
        spec.init_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.init_timeout)
    }
}

impl<'a> Slot<'a> {
    pub(crate) fn new(spec: &'a EngineSpec, label: String) -> Slot<'a> {
        Slot {
            spec,
            label,
            proc: None,
            restart_ok: true,
            about: None,
            end_kills: 0,
            started: false,
            about_sent: false,
        }
    }
}

/// Why an engine failed to answer OK.
enum OkFailure {
    Refused(String),
    Timeout,
    Closed,
}

/// Reads until `OK`. MESSAGE/DEBUG lines are skipped; ERROR/UNKNOWN refuse;
/// other lines refuse when `strict`, else are skipped (c-gomoku-cli reads
/// START's answer that way, which also skips a late ABOUT answer).
/// `about_pending`: ABOUT is still unanswered, so the first ERROR/UNKNOWN
/// is its late answer (a brain without ABOUT, slow to load), not START's.
fn expect_ok(
    proc: &mut EngineProcess,
    deadline: Instant,
    strict: bool,
    mut about_pending: bool,
    log: &mut GameLog,
) -> Result<(), OkFailure> {
    loop {
        match proc.next_line(deadline, log) {
            Reply::Line(_, text) => match BrainLine::parse(&text) {
                BrainLine::Ok => return Ok(()),
                BrainLine::Message(_) | BrainLine::Debug(_) => {}
                BrainLine::Error(_) | BrainLine::Unknown(_) if about_pending => {
                    about_pending = false;
                }
                BrainLine::Error(_) | BrainLine::Unknown(_) => {
                    return Err(OkFailure::Refused(text))
                }
                _ if strict => return Err(OkFailure::Refused(text)),
                _ => {}
            },
            Reply::Timeout => return Err(OkFailure::Timeout),
            Reply::Closed => return Err(OkFailure::Closed),
        }
    }
}

/// The INFO lines sent after every START/RESTART `OK`.
pub(crate) fn info_block(spec: &EngineSpec, rule: Rule) -> String {
    let mut s = String::with_capacity(256);
    let _ = writeln!(s, "INFO timeout_turn {}", spec.turn_ms);
    let _ = writeln!(s, "INFO timeout_match {}", spec.match_ms);
    if spec.inc_ms > 0 {
        let _ = writeln!(s, "INFO time_increment {}", spec.inc_ms);
    }
    let _ = writeln!(s, "INFO max_memory {}", spec.max_memory);
    if let Some(n) = spec.max_node {
        let _ = writeln!(s, "INFO max_node {n}");
    }
    if let Some(n) = spec.max_depth {
        let _ = writeln!(s, "INFO max_depth {n}");
    }
    if let Some(n) = spec.thread_num {
        let _ = writeln!(s, "INFO thread_num {n}");
    }
    let _ = writeln!(s, "INFO game_type 1");
    let _ = writeln!(s, "INFO rule {}", rule.gomocup_value());
    for (k, v) in &spec.options {
        let _ = writeln!(s, "INFO {k} {v}");
    }
    s
}

/// How a slot's process is being made ready for a game.
pub(crate) enum Launch {
    /// The old process gets RESTART.
    Restart,
    /// A new process was started (ABOUT already sent if `about`, and its
    /// answer read until `deadline` at most: the start-up time from the
    /// launch).
    Fresh { deadline: Instant, about: bool },
}

/// Starts a new process for `slot`, sending ABOUT (once per process, as
/// c-gomoku-cli) when asked; its answer is read in [`handshake`].
fn spawn_fresh(
    settings: &GameSettings,
    slot: &mut Slot<'_>,
    log: &mut GameLog,
) -> Result<Launch, ArenaError> {
    let mut proc =
        EngineProcess::spawn(slot.spec, &slot.label).map_err(|source| ArenaError::Spawn {
            engine: slot.spec.name.clone(),
            program: slot.spec.program.display().to_string(),
            source,
        })?;
    log.note(&slot.label, &format!("started process {}", proc.pid()));
    let deadline = Instant::now() + settings.init_timeout_of(slot.spec);
    let about = settings.about && proc.send("ABOUT\n", log).is_ok();
    slot.proc = Some(proc);
    slot.started = false;
    slot.about_sent = about;
    Ok(Launch::Fresh { deadline, about })
}

/// First phase of getting an engine ready: keeps a process that will be
/// sent RESTART, or retires the old one and starts a new one. Both engines
/// are launched before either handshake, so they load in parallel.
pub(crate) fn launch(
    settings: &GameSettings,
    slot: &mut Slot<'_>,
    log: &mut GameLog,
) -> Result<Launch, ArenaError> {
    if let Some(mut proc) = slot.proc.take() {
        if !proc.has_exited() {
            if !slot.started {
                // Launched for an earlier game that ended before its START.
                slot.proc = Some(proc);
                return Ok(Launch::Fresh {
                    deadline: Instant::now() + settings.init_timeout_of(slot.spec),
                    about: slot.about_sent,
                });
            }
            if !settings.new_process && slot.restart_ok {
                slot.proc = Some(proc);
                return Ok(Launch::Restart);
            }
        }
        if proc.has_exited() {
            proc.kill(log);
        } else {
            slot.end_kills += retire(&mut [proc], settings.end_grace, log)[0] as u32;
        }
    }
    spawn_fresh(settings, slot, log)
}

/// Second phase: RESTART (falling back to a new process when it is not
/// answered OK), or ABOUT's answer and START/RECTSTART on a new process;
/// then the INFO block. `Ok(Err(detail))` is a start failure: the engine
/// loses the game.
pub(crate) fn handshake(
    settings: &GameSettings,
    slot: &mut Slot<'_>,
    launch: Launch,
    log: &mut GameLog,
) -> Result<Result<(), String>, ArenaError> {
    let info = info_block(slot.spec, settings.rule);
    let launch = match launch {
        Launch::Restart => {
            let mut proc = slot
                .proc
                .take()
                .expect("launch() leaves the process in the slot for a restart");
            proc.drain(log);
            let answer = match proc.send("RESTART\n", log) {
                Ok(_) => expect_ok(
                    &mut proc,
                    Instant::now() + settings.init_timeout_of(slot.spec),
                    true,
                    false,
                    log,
                ),
                Err(_) => Err(OkFailure::Closed),
            };
            match answer {
                Ok(()) => {
                    if proc.send(&info, log).is_ok() {
                        slot.proc = Some(proc);
                        return Ok(Ok(()));
                    }
                    proc.kill(log);
                }
                Err(OkFailure::Refused(text)) => {
                    log.note(
                        &slot.label,
                        &format!("RESTART answered {text:?}: a new process every game"),
                    );
                    slot.restart_ok = false;
                    slot.end_kills += retire(&mut [proc], settings.end_grace, log)[0] as u32;
                }
                Err(OkFailure::Timeout) => {
                    // Not asked again: a brain that ignores RESTART would
                    // cost the init timeout every game.
                    log.note(&slot.label, "no OK to RESTART: a new process every game");
                    slot.restart_ok = false;
                    proc.kill(log);
                }
                Err(OkFailure::Closed) => {
                    log.note(&slot.label, "exited at RESTART: new process");
                    proc.kill(log);
                }
            }
            spawn_fresh(settings, slot, log)?
        }
        fresh => fresh,
    };
    let Launch::Fresh { deadline, about } = launch else {
        unreachable!("a restart became a fresh launch above")
    };
    let mut proc = slot
        .proc
        .take()
        .expect("launch() and spawn_fresh() leave the process in the slot");
    // A late answer is skipped by the lenient START read below.
    let mut about_pending = about;
    slot.about_sent = false;
    if about {
        let about_deadline = deadline.min(Instant::now() + Duration::from_secs(2));
        while let Reply::Line(_, text) = proc.next_line(about_deadline, log) {
            match BrainLine::parse(&text) {
                BrainLine::Message(_) | BrainLine::Debug(_) => continue,
                BrainLine::Unknown(_) | BrainLine::Error(_) => {
                    about_pending = false;
                    break;
                }
                _ => {
                    slot.about.get_or_insert(text);
                    about_pending = false;
                    break;
                }
            }
        }
    }
    let (w, h) = (settings.size.width(), settings.size.height());
    let start = format!(
        "{}\n",
        Command::Start {
            width: i64::from(w),
            height: i64::from(h),
        }
    );
    // The time to answer START runs from this request, not from the
    // launch: the handshakes run one after the other, and an engine that
    // loads on START gets the whole time even after the other engine's
    // START took most of it.
    let deadline = Instant::now() + settings.init_timeout_of(slot.spec);
    let answer = match proc.send(&start, log) {
        Ok(_) => expect_ok(&mut proc, deadline, false, about_pending, log),
        Err(_) => Err(OkFailure::Closed),
    };
    let failure = match answer {
        Ok(()) => match proc.send(&info, log) {
            Ok(_) => {
                slot.proc = Some(proc);
                slot.started = true;
                return Ok(Ok(()));
            }
            Err(e) => format!("could not write the INFO lines: {e}"),
        },
        Err(OkFailure::Refused(text)) => format!("answered {text:?} to {}", start.trim()),
        Err(OkFailure::Timeout) => format!(
            "no OK to {} within {} ms",
            start.trim(),
            settings.init_timeout_of(slot.spec).as_millis()
        ),
        Err(OkFailure::Closed) => {
            let status = proc
                .exit_text()
                .unwrap_or_else(|| "output closed".to_string());
            format!("exited before answering {} ({status})", start.trim())
        }
    };
    log.note(&slot.label, &failure);
    proc.kill(log);
    Ok(Err(failure))
}

/// Sends END to every process, closes their input, waits up to `grace`
/// for all of them together, and kills those still running. Returns, per
/// process, whether it had to be killed.
pub(crate) fn retire<const N: usize>(
    procs: &mut [EngineProcess; N],
    grace: Duration,
    log: &mut GameLog,
) -> [bool; N] {
    for p in procs.iter_mut() {
        if !p.has_exited() {
            p.send_end(log);
        }
    }
    // Each process is read while any is awaited: one still writing as it
    // ends would otherwise wait on its full pipe while the other is awaited.
    let deadline = Instant::now() + grace;
    let mut exited = [false; N];
    loop {
        for (p, done) in procs.iter_mut().zip(exited.iter_mut()) {
            *done = *done || p.poll_exit(log);
        }
        if exited.iter().all(|&done| done) || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut killed = [false; N];
    for (i, p) in procs.iter_mut().enumerate() {
        if !exited[i] {
            log.note(
                &p.label.clone(),
                &format!("still running {} ms after END", grace.as_millis()),
            );
            p.kill(log);
            killed[i] = true;
        }
    }
    killed
}

/// Retires the processes of the given slots together (END, one shared
/// grace period, kill), counting kills.
pub(crate) fn retire_slots(slots: &mut [Slot<'_>; 2], grace: Duration, log: &mut GameLog) {
    match (slots[0].proc.take(), slots[1].proc.take()) {
        (Some(a), Some(b)) => {
            let mut procs = [a, b];
            let killed = retire(&mut procs, grace, log);
            for (slot, k) in slots.iter_mut().zip(killed) {
                slot.end_kills += k as u32;
            }
        }
        (Some(a), None) => slots[0].end_kills += retire(&mut [a], grace, log)[0] as u32,
        (None, Some(b)) => slots[1].end_kills += retire(&mut [b], grace, log)[0] as u32,
        (None, None) => {}
    }
}
