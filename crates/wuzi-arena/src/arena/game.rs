//! One game between two engine processes, refereed on a [`Board`].

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use clap::ValueEnum;

use crate::arena::config::EngineSpec;
use crate::arena::engine::{EngineProcess, GameLog, Reply};
use crate::arena::stats::Wld;
use crate::arena::ArenaError;
use wuzi_formats::gomocup::{BlockKind, BrainLine, Command, Coord, Stone, UNLIMITED_MS};
use wuzi_formats::record::MoveRecord;
use wuzi_game::game::{Board, BoardSize, Color, MoveError, Outcome, Point, Rule};

/// How the position is sent before a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PositionMode {
    /// As the Piskvork manager: the first request of a game is `BEGIN` (no
    /// stone), `TURN x,y` (one stone) or `BOARD` (more); then `TURN`.
    Piskvork,
    /// As c-gomoku-cli: the first request is `BEGIN` or `BOARD` (even for
    /// one stone); then `TURN`.
    Cgc,
    /// `BOARD` before every move (c-gomoku-cli's `-sendbyboard`).
    Board,
}

/// Why a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The winner's last stone made a winning line under the rule.
    Five,
    /// No empty cell left: a draw.
    BoardFull,
    /// Drawn by the runner after this many stones (`--draw-after`).
    DrawAdjudicated { plies: usize },
    /// A renju-forbidden black move (double three, double four, overline):
    /// black loses; the stone is in the record.
    Forbidden { point: Point },
    /// The answer was an occupied cell.
    Occupied { x: i64, y: i64 },
    /// The answer was off the board.
    OffBoard { x: i64, y: i64 },
    /// The answer was not `x,y` (nor MESSAGE, DEBUG, UNKNOWN, ERROR, SUGGEST).
    Unparsable { line: String },
    /// No move within the turn or match time plus the tolerance (also a
    /// hung engine); the process is killed.
    TimeForfeit {
        elapsed_ms: u64,
        allowed_ms: u64,
        /// The last `ERROR`/`UNKNOWN` line the engine sent while thinking.
        last_error: Option<String>,
    },
    /// The process exited or closed its pipes.
    Crash { detail: String },
    /// It could not be started: no `OK` to START/RECTSTART in time, an
    /// `ERROR`, or an exit.
    StartFailure { detail: String },
}

impl EndReason {
    /// A short label for tables: `five`, `time forfeit`, ...
    pub fn label(&self) -> &'static str {
        match self {
            EndReason::Five => "five",
            EndReason::BoardFull => "board full",
            EndReason::DrawAdjudicated { .. } => "draw adjudication",
            EndReason::Forbidden { .. } => "forbidden move",
            EndReason::Occupied { .. } => "occupied cell",
            EndReason::OffBoard { .. } => "off board",
            EndReason::Unparsable { .. } => "unparsable answer",
            EndReason::TimeForfeit { .. } => "time forfeit",
            EndReason::Crash { .. } => "crash",
            EndReason::StartFailure { .. } => "start failure",
        }
    }

    /// Whether the loser lost by an error of its own (not on the board).
    pub fn is_fault(&self) -> bool {
        !matches!(
            self,
            EndReason::Five
                | EndReason::BoardFull
                | EndReason::DrawAdjudicated { .. }
                | EndReason::Forbidden { .. }
        )
    }

    /// SGF `RE` suffix: `T` time, `F` forfeit, empty otherwise.
    fn sgf_suffix(&self) -> &'static str {
        match self {
            EndReason::TimeForfeit { .. } => "T",
            r if r.is_fault() => "F",
            EndReason::Forbidden { .. } => "F",
            _ => "",
        }
    }

    fn detail(&self) -> String {
        match self {
            EndReason::Five => "five in a row".to_string(),
            EndReason::BoardFull => "board full".to_string(),
            EndReason::DrawAdjudicated { plies } => format!("adjudicated after {plies} stones"),
            EndReason::Forbidden { point } => format!("forbidden move {point}"),
            EndReason::Occupied { x, y } => format!("occupied cell {x},{y}"),
            EndReason::OffBoard { x, y } => format!("move {x},{y} off the board"),
            EndReason::Unparsable { line } => format!("unparsable answer {line:?}"),
            EndReason::TimeForfeit {
                elapsed_ms,
                allowed_ms,
                last_error,
            } => {
                let mut s = format!(
                    "time forfeit: no move after {elapsed_ms} ms (allowed {allowed_ms} ms)"
                );
                if let Some(e) = last_error {
                    let _ = write!(s, ", last said {e:?}");
                }
                s
            }
            EndReason::Crash { detail } => format!("crash: {detail}"),
            EndReason::StartFailure { detail } => format!("start failure: {detail}"),
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameSummary {
    /// 0-based index in the schedule (files are numbered from 1).
    pub index: usize,
    /// Opening pair: games `2k` and `2k + 1` share an opening.
    pub pair: usize,
    /// Where the opening came from: `file.txt:12` or `random #3`.
    pub opening: String,
    pub opening_stones: usize,
    /// Which engine (0 or 1) played black.
    pub black: usize,
    pub outcome: Outcome,
    pub reason: EndReason,
    /// Every stone, the opening's first.
    pub moves: Vec<MoveRecord>,
    /// Moves the engines answered.
    pub engine_moves: u32,
    /// Wall time of the move loop (first request to the referee's verdict).
    pub wall: Duration,
    /// Sum of the engines' response times (request written to answer read).
    pub engine_time: Duration,
    /// Engines whose process had to be killed after END (per engine index).
    pub killed_after_end: [u32; 2],
}

impl GameSummary {
    /// The engine (0 or 1) that played `color`.
    pub fn engine_of(&self, color: Color) -> usize {
        match color {
            Color::Black => self.black,
            Color::White => 1 - self.black,
        }
    }

    pub fn winner(&self) -> Option<usize> {
        match self.outcome {
            Outcome::Win(c) => Some(self.engine_of(c)),
            Outcome::Draw => None,
        }
    }

    pub fn loser(&self) -> Option<usize> {
        self.winner().map(|w| 1 - w)
    }

    /// The result from engine `engine`'s point of view, as one game.
    pub fn result_for(&self, engine: usize) -> Wld {
        match self.winner() {
            Some(w) if w == engine => Wld::new(1, 0, 0),
            Some(_) => Wld::new(0, 1, 0),
            None => Wld::new(0, 0, 1),
        }
    }

    /// `1-0`, `0-1` or `1/2-1/2` from black's point of view.
    pub fn score_text(&self) -> &'static str {
        match self.outcome {
            Outcome::Win(Color::Black) => "1-0",
            Outcome::Win(Color::White) => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }

    /// SGF `RE`: `B+`, `W+T`, `B+F`, `0`.
    pub fn sgf_result(&self) -> String {
        match self.outcome {
            Outcome::Win(Color::Black) => format!("B+{}", self.reason.sgf_suffix()),
            Outcome::Win(Color::White) => format!("W+{}", self.reason.sgf_suffix()),
            Outcome::Draw => "0".to_string(),
        }
    }

    /// `black (A) wins: five in a row`, `white (B) loses: crash: ...`.
    pub fn describe(&self, names: &[String; 2]) -> String {
        let side = |c: Color| format!("{c} ({})", names[self.engine_of(c)]);
        match self.outcome {
            Outcome::Draw => format!("draw: {}", self.reason.detail()),
            Outcome::Win(c)
                if self.reason.is_fault() || matches!(self.reason, EndReason::Forbidden { .. }) =>
            {
                format!("{} loses: {}", side(c.opponent()), self.reason.detail())
            }
            Outcome::Win(c) => format!("{} wins: {}", side(c), self.reason.detail()),
        }
    }
}

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
}

impl GameSettings {
    fn tolerance_of(&self, spec: &EngineSpec) -> Duration {
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
fn expect_ok(
    proc: &mut EngineProcess,
    deadline: Instant,
    strict: bool,
    log: &mut GameLog,
) -> Result<(), OkFailure> {
    loop {
        match proc.next_line(deadline, log) {
            Reply::Line(_, text) => match BrainLine::parse(&text) {
                BrainLine::Ok => return Ok(()),
                BrainLine::Message(_) | BrainLine::Debug(_) => {}
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
    /// A new process was started (ABOUT already sent if `about`); START
    /// must be answered by `deadline`.
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
                    about: false,
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
                Err(_) => {
                    log.note(&slot.label, "no OK to RESTART: new process");
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
    if about {
        // A late answer is skipped by the lenient START read below.
        let about_deadline = deadline.min(Instant::now() + Duration::from_secs(2));
        while let Reply::Line(_, text) = proc.next_line(about_deadline, log) {
            match BrainLine::parse(&text) {
                BrainLine::Message(_) | BrainLine::Debug(_) => continue,
                BrainLine::Unknown(_) | BrainLine::Error(_) => break,
                _ => {
                    slot.about.get_or_insert(text);
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
    let answer = match proc.send(&start, log) {
        Ok(_) => expect_ok(&mut proc, deadline, false, log),
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
    let deadline = Instant::now() + grace;
    let mut killed = [false; N];
    for (i, p) in procs.iter_mut().enumerate() {
        if !p.wait_exit(deadline, log) {
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

/// An engine's clock (microseconds).
struct Clock {
    turn: i64,
    total: i64,
    inc: i64,
    left: i64,
}

impl Clock {
    fn new(spec: &EngineSpec) -> Clock {
        let ms = |v: u64| (v.min(i64::MAX as u64 / 1000) as i64) * 1000;
        Clock {
            turn: ms(spec.turn_ms),
            total: ms(spec.match_ms),
            inc: ms(spec.inc_ms),
            left: ms(spec.match_ms),
        }
    }

    /// `INFO time_left` in ms.
    fn time_left_ms(&self) -> i64 {
        if self.total > 0 {
            self.left.max(0) / 1000
        } else {
            UNLIMITED_MS
        }
    }

    /// The time this move may take, before the tolerance.
    fn limit(&self) -> i64 {
        if self.total > 0 {
            self.turn.min(self.left).max(0)
        } else {
            self.turn
        }
    }

    fn spend(&mut self, used: i64) {
        if self.total > 0 {
            self.left = self.left - used + self.inc;
        }
    }
}

/// BOARD with the stones of `to_move` as the brain's own (field 1).
pub(crate) fn board_command(board: &Board, to_move: Color) -> Command {
    let stones = board
        .history()
        .iter()
        .map(|&(p, c)| Stone {
            at: Coord::from(p),
            field: Some(if c == to_move { 1 } else { 2 }),
        })
        .collect();
    Command::Block {
        kind: BlockKind::Board,
        stones,
    }
}

/// The answer to a move request.
enum MoveReply {
    Move(i64, i64, Instant),
    Unparsable(String),
    Timeout(Option<String>),
    Closed,
}

/// Reads a move: MESSAGE/DEBUG/UNKNOWN/ERROR lines are logged and skipped,
/// `SUGGEST x,y` is answered with `PLAY x,y` (as Piskvork), anything else
/// that is not `x,y` is unparsable, or skipped too with `skip_unparsable`.
fn read_move(
    proc: &mut EngineProcess,
    deadline: Instant,
    skip_unparsable: bool,
    log: &mut GameLog,
) -> MoveReply {
    let mut last_error = None;
    loop {
        match proc.next_line(deadline, log) {
            Reply::Line(at, text) => match BrainLine::parse(&text) {
                BrainLine::Move(c) => return MoveReply::Move(c.x, c.y, at),
                BrainLine::Message(_) | BrainLine::Debug(_) => {}
                BrainLine::Error(_) | BrainLine::Unknown(_) => last_error = Some(text),
                BrainLine::Suggest(c) => {
                    let play = format!("{}\n", Command::Play(c));
                    if proc.send(&play, log).is_err() {
                        return MoveReply::Closed;
                    }
                }
                BrainLine::Ok | BrainLine::Other(_) if skip_unparsable => {}
                BrainLine::Ok | BrainLine::Other(_) => return MoveReply::Unparsable(text),
            },
            Reply::Timeout => return MoveReply::Timeout(last_error),
            Reply::Closed => return MoveReply::Closed,
        }
    }
}

/// What to do with an engine's process after the game.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Disposal {
    Keep,
    Retire,
    Kill,
}

/// One scheduled game.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub index: usize,
    pub pair: usize,
    pub opening_name: String,
    pub opening: Vec<Point>,
    /// Engine (0 or 1) playing black.
    pub black: usize,
}

/// Plays one game; `Err` only for errors that stop the match (an engine
/// that cannot be started at all).
pub(crate) fn play_game(
    settings: &GameSettings,
    slots: &mut [Slot<'_>; 2],
    job: &Job,
    log: &mut GameLog,
) -> Result<GameSummary, ArenaError> {
    let engine_of = |c: Color| match c {
        Color::Black => job.black,
        Color::White => 1 - job.black,
    };
    let mut board = Board::new(settings.size, settings.rule);
    let mut moves = Vec::with_capacity(settings.size.cell_count());
    for &p in &job.opening {
        let color = board.side_to_move();
        board
            .place(p, color)
            .map_err(|e| ArenaError::Config(format!("opening {}: {e}", job.opening_name)))?;
        moves.push(MoveRecord {
            point: p,
            color,
            ms: 0,
            opening: true,
        });
    }
    let kills_before = [slots[0].end_kills, slots[1].end_kills];
    let mut summary = GameSummary {
        index: job.index,
        pair: job.pair,
        opening: job.opening_name.clone(),
        opening_stones: job.opening.len(),
        black: job.black,
        outcome: Outcome::Draw,
        reason: EndReason::BoardFull,
        moves: Vec::new(),
        engine_moves: 0,
        wall: Duration::ZERO,
        engine_time: Duration::ZERO,
        killed_after_end: [0; 2],
    };
    let mut disposal = [Disposal::Keep; 2];

    // Both engines are launched first (they load in parallel), then the
    // handshakes run in colour order, black first.
    let launches = [
        launch(settings, &mut slots[engine_of(Color::Black)], log)?,
        launch(settings, &mut slots[engine_of(Color::White)], log)?,
    ];
    let mut start_failure = None;
    for (color, launched) in Color::BOTH.into_iter().zip(launches) {
        let e = engine_of(color);
        if start_failure.is_some() {
            // The game is already lost by the other engine; a process
            // launched but not started gets its START next game.
            continue;
        }
        if let Err(detail) = handshake(settings, &mut slots[e], launched, log)? {
            start_failure = Some((color, detail));
        }
    }

    if let Some((color, detail)) = start_failure {
        summary.outcome = Outcome::Win(color.opponent());
        summary.reason = EndReason::StartFailure { detail };
    } else {
        let mut clocks = [Clock::new(slots[0].spec), Clock::new(slots[1].spec)];
        let mut informed = [false; 2];
        let tolerance = [
            settings.tolerance_of(slots[0].spec).as_micros() as i64,
            settings.tolerance_of(slots[1].spec).as_micros() as i64,
        ];
        let loop_start = Instant::now();
        let mut request = String::with_capacity(64);
        let (outcome, reason) = loop {
            if board.is_full() {
                break (Outcome::Draw, EndReason::BoardFull);
            }
            let color = board.side_to_move();
            let e = engine_of(color);
            let clock = &mut clocks[e];
            request.clear();
            let _ = writeln!(request, "INFO time_left {}", clock.time_left_ms());
            let last = board.last_move();
            let command = match (informed[e], last, settings.position) {
                (_, None, _) => Command::Begin,
                (false, Some(p), PositionMode::Piskvork) if board.stone_count() == 1 => {
                    Command::Turn(p.into())
                }
                (false, _, _) | (true, _, PositionMode::Board) => board_command(&board, color),
                (true, Some(p), _) => Command::Turn(p.into()),
            };
            let _ = writeln!(request, "{command}");
            informed[e] = true;
            let proc = slots[e]
                .proc
                .as_mut()
                .expect("a successful handshake leaves the process in the slot");
            proc.drain(log);
            let Ok((sent, written)) = proc.send_timed(&request, log) else {
                let detail = proc
                    .exit_text()
                    .map(|s| format!("could not write the request; exited ({s})"))
                    .unwrap_or_else(|| "could not write the request".to_string());
                disposal[e] = Disposal::Kill;
                break (Outcome::Win(color.opponent()), EndReason::Crash { detail });
            };
            let allowed = clock.limit() + tolerance[e];
            let deadline = sent + Duration::from_micros(allowed.max(0) as u64);
            let reply = read_move(proc, deadline, settings.skip_unparsable, log);
            if !matches!(reply, MoveReply::Move(..)) {
                // Waiting for an engine that failed is the engine's time.
                summary.engine_time += Instant::now().saturating_duration_since(written);
            }
            let (x, y, at) = match reply {
                MoveReply::Move(x, y, at) => (x, y, at),
                MoveReply::Timeout(last_error) => {
                    disposal[e] = Disposal::Kill;
                    let elapsed_ms = sent.elapsed().as_millis() as u64;
                    log.note(&slots[e].label, "no move in time");
                    break (
                        Outcome::Win(color.opponent()),
                        EndReason::TimeForfeit {
                            elapsed_ms,
                            allowed_ms: (allowed.max(0) / 1000) as u64,
                            last_error,
                        },
                    );
                }
                MoveReply::Closed => {
                    disposal[e] = Disposal::Kill;
                    // Give the exit up to 200 ms to be reaped for the message
                    // (output closes before the process becomes waitable).
                    let until = Instant::now() + Duration::from_millis(200);
                    let mut status = proc.exit_text();
                    while status.is_none() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(2));
                        status = proc.exit_text();
                    }
                    let detail = match status {
                        Some(s) => format!("exited while thinking ({s})"),
                        None => "closed its output while thinking".to_string(),
                    };
                    break (Outcome::Win(color.opponent()), EndReason::Crash { detail });
                }
                MoveReply::Unparsable(line) => {
                    disposal[e] = Disposal::Retire;
                    break (
                        Outcome::Win(color.opponent()),
                        EndReason::Unparsable { line },
                    );
                }
            };
            // The clock runs from just before the write; the engine's share
            // of the wall time from the write's return, unless the answer
            // was read before this thread got back from the write.
            let used = at.saturating_duration_since(sent);
            summary.engine_time += if at > written { at - written } else { used };
            summary.engine_moves += 1;
            let used_us = used.as_micros() as i64;
            if used_us > allowed {
                disposal[e] = Disposal::Kill;
                break (
                    Outcome::Win(color.opponent()),
                    EndReason::TimeForfeit {
                        elapsed_ms: (used_us / 1000) as u64,
                        allowed_ms: (allowed.max(0) / 1000) as u64,
                        last_error: None,
                    },
                );
            }
            clock.spend(used_us);
            let ms = used.as_millis() as u64;
            match board.check_move(x, y, color) {
                Ok(p) => {
                    board
                        .place(p, color)
                        .expect("check_move found the cell on the board and empty");
                    moves.push(MoveRecord {
                        point: p,
                        color,
                        ms,
                        opening: false,
                    });
                    if let Some(outcome) = board.outcome() {
                        let reason = match outcome {
                            Outcome::Win(_) => EndReason::Five,
                            Outcome::Draw => EndReason::BoardFull,
                        };
                        break (outcome, reason);
                    }
                    if settings.draw_after > 0 && board.stone_count() >= settings.draw_after {
                        break (
                            Outcome::Draw,
                            EndReason::DrawAdjudicated {
                                plies: board.stone_count(),
                            },
                        );
                    }
                }
                Err(MoveError::Forbidden(p)) => {
                    board
                        .place(p, color)
                        .expect("check_move reports Forbidden only for an empty cell");
                    moves.push(MoveRecord {
                        point: p,
                        color,
                        ms,
                        opening: false,
                    });
                    break (
                        Outcome::Win(color.opponent()),
                        EndReason::Forbidden { point: p },
                    );
                }
                Err(MoveError::Occupied(_)) => {
                    disposal[e] = Disposal::Retire;
                    break (Outcome::Win(color.opponent()), EndReason::Occupied { x, y });
                }
                Err(MoveError::OffBoard { .. }) => {
                    disposal[e] = Disposal::Retire;
                    break (Outcome::Win(color.opponent()), EndReason::OffBoard { x, y });
                }
            }
        };
        summary.wall = loop_start.elapsed();
        summary.outcome = outcome;
        summary.reason = reason;
    }

    // Drain what the engines said after their last answer into this log.
    for slot in slots.iter_mut() {
        if let Some(p) = slot.proc.as_mut() {
            p.drain(log);
        }
    }
    if settings.new_process {
        for d in disposal.iter_mut() {
            if *d == Disposal::Keep {
                *d = Disposal::Retire;
            }
        }
    }
    for (e, d) in disposal.iter().enumerate() {
        if *d == Disposal::Kill {
            if let Some(mut p) = slots[e].proc.take() {
                p.kill(log);
            }
        }
    }
    let mut to_retire: Vec<usize> = (0..2)
        .filter(|&e| disposal[e] == Disposal::Retire && slots[e].proc.is_some())
        .collect();
    match to_retire.len() {
        2 => retire_slots(slots, settings.end_grace, log),
        1 => {
            let e = to_retire.pop().expect("to_retire has one entry");
            let p = slots[e]
                .proc
                .take()
                .expect("to_retire holds only slots with a process");
            slots[e].end_kills += retire(&mut [p], settings.end_grace, log)[0] as u32;
        }
        _ => {}
    }
    summary.killed_after_end = [
        slots[0].end_kills - kills_before[0],
        slots[1].end_kills - kills_before[1],
    ];
    summary.moves = moves;
    Ok(summary)
}
