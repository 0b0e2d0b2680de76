//! One game between two engine processes, refereed on a [`Board`].

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use clap::ValueEnum;

use crate::arena::config::EngineSpec;
use crate::arena::engine::{EngineProcess, GameLog, Reply};
use crate::arena::ArenaError;
use wuzi_formats::gomocup::{BlockKind, BrainLine, Command, Coord, Stone, UNLIMITED_MS};
use wuzi_formats::record::MoveRecord;
use wuzi_game::game::{Board, Color, MoveError, Outcome, Point};

use crate::arena::brain::{handshake, launch, retire, retire_slots, GameSettings, Slot};
use crate::arena::result::{EndReason, GameSummary};

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

    /// The time this move may take, before the tolerance. Below zero once
    /// the match clock is overdrawn, so that the tolerance covers the
    /// overdraft of the whole game, not a fresh one every move.
    fn limit(&self) -> i64 {
        if self.total > 0 {
            self.turn.min(self.left)
        } else {
            self.turn
        }
    }

    fn spend(&mut self, used: i64) {
        if self.total > 0 {
            self.left = self.left.saturating_sub(used).saturating_add(self.inc);
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
/// the first `SUGGEST x,y` is answered with `PLAY x,y` (as Piskvork),
/// anything else that is not `x,y` is unparsable, or skipped too with
/// `skip_unparsable`. A line read before the request was `sent` (queued
/// behind what `drain` emptied) is stale, never the answer.
fn read_move(
    proc: &mut EngineProcess,
    sent: Instant,
    deadline: Instant,
    skip_unparsable: bool,
    log: &mut GameLog,
) -> MoveReply {
    let mut last_error = None;
    let mut suggested = false;
    loop {
        match proc.next_line(deadline, log) {
            Reply::Line(at, _) if at < sent => {}
            Reply::Line(at, text) => match BrainLine::parse(&text) {
                BrainLine::Move(c) => return MoveReply::Move(c.x, c.y, at),
                BrainLine::Message(_) | BrainLine::Debug(_) => {}
                BrainLine::Error(_) | BrainLine::Unknown(_) => last_error = Some(text),
                // Another SUGGEST is not answered: an engine repeating it
                // without reading would fill its input pipe, and the write
                // would block the runner past any deadline.
                BrainLine::Suggest(_) if suggested => last_error = Some(text),
                BrainLine::Suggest(c) => {
                    suggested = true;
                    let play = format!("{}\n", Command::Play(c));
                    if proc.send(&play, log).is_err() {
                        return MoveReply::Closed;
                    }
                }
                BrainLine::Other(_) => match piskvork_move(&text) {
                    Some((x, y)) => return MoveReply::Move(x, y, at),
                    None if skip_unparsable => {}
                    None => return MoveReply::Unparsable(text),
                },
                BrainLine::Ok if skip_unparsable => {}
                BrainLine::Ok => return MoveReply::Unparsable(text),
            },
            Reply::Timeout => return MoveReply::Timeout(last_error),
            Reply::Closed => return MoveReply::Closed,
        }
    }
}

/// The move Piskvork reads from a line it takes as one (`sscanf` with
/// `"%d,%d"`): a number, a comma, a number after blanks, anything after
/// it; `7,7 extra` is the move 7,7 there, not a fault.
fn piskvork_move(text: &str) -> Option<(i64, i64)> {
    fn number(s: &str) -> Option<(i64, &str)> {
        let s = s.trim_start();
        let sign = usize::from(s.starts_with(['+', '-']));
        let end = s[sign..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(s.len(), |i| sign + i);
        if end == sign {
            return None;
        }
        Some((s[..end].parse().ok()?, &s[end..]))
    }
    let (x, rest) = number(text)?;
    let (y, _) = number(rest.strip_prefix(',')?)?;
    Some((x, y))
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

/// What became of a scheduled game.
pub(crate) enum Played {
    Game(GameSummary),
    /// Neither engine started it (why each failed): no result.
    Unstarted(String),
}

/// Plays one game; `Err` only for errors that stop the match (an engine
/// that cannot be started at all).
pub(crate) fn play_game(
    settings: &GameSettings,
    slots: &mut [Slot<'_>; 2],
    job: &Job,
    log: &mut GameLog,
) -> Result<Played, ArenaError> {
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
        started: [false; 2],
    };
    let mut disposal = [Disposal::Keep; 2];

    // Both engines are launched first (they load in parallel), then the
    // handshakes run in colour order, black first.
    let launches = [
        launch(settings, &mut slots[engine_of(Color::Black)], log)?,
        launch(settings, &mut slots[engine_of(Color::White)], log)?,
    ];
    // Both are started even when black fails: whether each engine starts
    // is what tells a broken engine from its opponent's failures, and a
    // launched process left unstarted would lose its answer to ABOUT.
    let mut start_failures = Vec::with_capacity(2);
    for (color, launched) in Color::BOTH.into_iter().zip(launches) {
        let e = engine_of(color);
        match handshake(settings, &mut slots[e], launched, log)? {
            Ok(()) => summary.started[e] = true,
            Err(detail) => start_failures.push((color, detail)),
        }
    }
    // A game neither engine could start has no loser: scoring it against
    // black would hand white's engine a win it did not play for. It counts
    // as a start failure of each (the runner stops a match after a few in a
    // row), but one busy moment that made both miss START's deadline does
    // not end a long match.
    if start_failures.len() == 2 {
        let each: Vec<String> = start_failures
            .iter()
            .map(|(color, detail)| {
                format!("{} ({color}): {detail}", slots[engine_of(*color)].label)
            })
            .collect();
        return Ok(Played::Unstarted(format!(
            "neither engine started: {}",
            each.join("; ")
        )));
    }

    if let Some((color, detail)) = start_failures.pop() {
        summary.outcome = Outcome::Win(color.opponent());
        summary.reason = EndReason::StartFailure { detail };
    } else {
        let mut clocks = [Clock::new(slots[0].spec), Clock::new(slots[1].spec)];
        let mut informed = [false; 2];
        let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        let tolerance = [
            micros(settings.tolerance_of(slots[0].spec)),
            micros(settings.tolerance_of(slots[1].spec)),
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
            let allowed = clock.limit().saturating_add(tolerance[e]);
            let deadline = sent + Duration::from_micros(allowed.max(0) as u64);
            let reply = read_move(proc, sent, deadline, settings.skip_unparsable, log);
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
    // The match keeps every game: room for a full board each would be
    // most of its memory.
    moves.shrink_to_fit();
    summary.moves = moves;
    Ok(Played::Game(summary))
}

#[cfg(test)]
mod tests {
    use super::{piskvork_move, Clock};

    #[test]
    fn moves_are_read_as_piskvork_reads_them() {
        for (line, want) in [
            ("7,7 extra", Some((7, 7))),
            (" 7, 8;", Some((7, 8))),
            ("-1,+3 MESSAGE", Some((-1, 3))),
            ("7 ,7", None),
            ("7;7", None),
            ("x7,7", None),
            ("7,", None),
            ("99999999999999999999,1", None),
        ] {
            assert_eq!(piskvork_move(line), want, "{line:?}");
        }
    }

    #[test]
    fn the_tolerance_covers_the_overdraft_of_the_game() {
        let second = 1_000_000;
        let tolerance = second / 2;
        let mut clock = Clock {
            turn: 5 * second,
            total: second,
            inc: 0,
            left: second,
        };
        assert_eq!(clock.limit() + tolerance, 3 * second / 2);
        clock.spend(7 * second / 5);
        // 0.4 s over: 0.1 s of tolerance left for the next move, not 0.5 s.
        assert_eq!(clock.limit() + tolerance, second / 10);
        assert_eq!(clock.time_left_ms(), 0);
        // Without a match clock the turn alone counts.
        let free = Clock {
            turn: 5 * second,
            total: 0,
            inc: 0,
            left: 0,
        };
        assert_eq!(free.limit(), 5 * second);
    }
}
