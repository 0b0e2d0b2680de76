//! `wuzi-test-brain`: a deliberately weak Gomocup brain for testing the
//! match runner.
//!
//! It plays legal random moves near the stones already on the board,
//! completing its own five when it can (so games end). With `--mode` it
//! misbehaves on purpose on its `--at`-th move of a game (default the
//! first):
//!
//! * `random`: never misbehaves;
//! * `timeout`: sleeps well past the time limit, then answers;
//! * `illegal`: answers an occupied cell (off the board on an empty one);
//! * `crash`: exits without answering;
//! * `silent`: stops answering anything (`--at 0`: not even START);
//! * `slow-end`: plays normally but ignores END and end of input;
//! * `garbage`: answers a line that is not a move;
//! * `flood`: writes MESSAGE lines without end instead of a move;
//! * `suggest-flood`: writes `SUGGEST` lines without end, reading nothing.
//!
//! `--block` makes it a little stronger: it also blocks the opponent's five.
//! `--silent-restart` does not answer RESTART at all.
//! `--no-restart` answers `UNKNOWN` to RESTART (the manager must start a new
//! process for every game).
//!
//! It speaks START, RECTSTART, RESTART, BEGIN, TURN, BOARD ... DONE, INFO,
//! TAKEBACK, PLAY, END and ABOUT through the shared Gomocup vocabulary
//! (`wuzi_formats::gomocup`), and keeps its position on a `wuzi_game::game::Board`.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use wuzi_formats::gomocup::{BlockKind, BrainLine, Clock, Command, CommandParser, Coord, Stone};
use wuzi_game::game::{Board, BoardSize, Color, Point, Rule};
use wuzi_game::rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Random,
    Timeout,
    Illegal,
    Crash,
    Silent,
    SlowEnd,
    Garbage,
    Flood,
    SuggestFlood,
}

struct Options {
    mode: Mode,
    at: u32,
    seed: u64,
    block: bool,
    no_restart: bool,
    silent_restart: bool,
    /// Answers ABOUT with UNKNOWN, as brains without it do.
    no_about: bool,
    /// Milliseconds spent "loading" before the first line is read.
    load_ms: u64,
}

fn usage() -> String {
    "usage: wuzi-test-brain \
     [--mode random|timeout|illegal|crash|silent|slow-end|garbage|flood|suggest-flood] \
     [--at N] [--seed S] [--block] [--no-restart] [--silent-restart] [--no-about] [--load-ms MS]"
        .to_string()
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        mode: Mode::Random,
        at: 1,
        block: false,
        no_restart: false,
        silent_restart: false,
        no_about: false,
        load_ms: 0,
        seed: wuzi_game::rng::unrepeatable_seed(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(usage);
        match key.as_str() {
            "--mode" => {
                options.mode = match value()?.as_str() {
                    "random" => Mode::Random,
                    "timeout" => Mode::Timeout,
                    "illegal" => Mode::Illegal,
                    "crash" => Mode::Crash,
                    "silent" => Mode::Silent,
                    "slow-end" => Mode::SlowEnd,
                    "garbage" => Mode::Garbage,
                    "flood" => Mode::Flood,
                    "suggest-flood" => Mode::SuggestFlood,
                    other => return Err(format!("unknown mode {other:?}; {}", usage())),
                }
            }
            "--at" => options.at = value()?.parse().map_err(|_| usage())?,
            "--seed" => options.seed = value()?.parse().map_err(|_| usage())?,
            "--block" => options.block = true,
            "--no-restart" => options.no_restart = true,
            "--silent-restart" => options.silent_restart = true,
            "--no-about" => options.no_about = true,
            "--load-ms" => options.load_ms = value()?.parse().map_err(|_| usage())?,
            "--help" | "-h" => return Err(usage()),
            // Managers may pass arguments of their own (Yixin-Board does).
            _ => {}
        }
    }
    Ok(options)
}

/// Uniform-ish in `0..n` by remainder (the test brain's own mapping, kept
/// so that its games stay as they were).
fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

struct Brain {
    options: Options,
    rng: Rng,
    size: BoardSize,
    rule: Rule,
    /// Stones in play order with their colours (the board is rebuilt from
    /// them when the rule changes).
    board: Board,
    clock: Clock,
    /// Moves answered in this game.
    answered: u32,
    silent: bool,
    out: io::Stdout,
}

impl Brain {
    fn reply(&mut self, line: BrainLine) {
        if self.silent {
            return;
        }
        let mut out = self.out.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn reset(&mut self) {
        self.board = Board::new(self.size, self.rule);
        self.answered = 0;
    }

    fn set_rule(&mut self, rule: Rule) {
        if rule == self.rule {
            return;
        }
        self.rule = rule;
        let stones: Vec<(Point, Color)> = self.board.history().to_vec();
        let to_move = self.board.side_to_move();
        self.board = Board::new(self.size, rule);
        for (p, c) in stones {
            let _ = self.board.place(p, c);
        }
        self.board.set_side_to_move(to_move);
    }

    fn point(&self, c: Coord) -> Option<Point> {
        c.point_on(self.size)
    }

    /// A move for the side to move: its own five if it has one, else a
    /// random legal cell within two steps of a stone (the centre first).
    fn choose(&mut self) -> Option<Point> {
        let me = self.board.side_to_move();
        let fives: Vec<Point> = self.board.winning_moves(me).collect();
        for p in fives {
            if self.board.is_winning_move(p, me) && self.legal(p, me) {
                // Announced as Rapfi does (a win in one ply), so that the
                // blunder suite's reference judge can be tested with it.
                self.reply(BrainLine::Message("Depth 1 | Eval +M1 | Time 0ms".into()));
                return Some(p);
            }
        }
        if self.options.block {
            let theirs: Vec<Point> = self.board.winning_moves(me.opponent()).collect();
            for p in theirs {
                if self.board.is_winning_move(p, me.opponent()) && self.legal(p, me) {
                    return Some(p);
                }
            }
        }
        if self.board.stone_count() == 0 {
            return Some(self.size.center());
        }
        let mut near = [false; 1024];
        let (w, h) = (self.size.width() as i32, self.size.height() as i32);
        for &(p, _) in self.board.history() {
            for dy in -2..=2 {
                for dx in -2..=2 {
                    let (x, y) = (p.x() as i32 + dx, p.y() as i32 + dy);
                    if x >= 0 && y >= 0 && x < w && y < h {
                        near[(y * 32 + x) as usize] = true;
                    }
                }
            }
        }
        let mut candidates: Vec<Point> = self
            .board
            .empty_cells()
            .filter(|p| near[p.index()])
            .collect();
        if candidates.is_empty() {
            candidates = self.board.empty_cells().collect();
        }
        while !candidates.is_empty() {
            let i = below(&mut self.rng, candidates.len());
            let p = candidates.swap_remove(i);
            if self.legal(p, me) {
                return Some(p);
            }
        }
        self.board.empty_cells().next()
    }

    fn legal(&mut self, p: Point, color: Color) -> bool {
        self.board
            .check_move(p.x() as i64, p.y() as i64, color)
            .is_ok()
    }

    /// Answers a move request, misbehaving if this is the `--at`-th move.
    fn answer(&mut self) {
        self.answered += 1;
        if self.answered == self.options.at {
            match self.options.mode {
                Mode::Timeout => {
                    // Three times the limit (the game's, if less) and more.
                    let limit = match (self.clock.turn_limit(false), self.clock.game_left()) {
                        (Some(turn), Some(left)) => turn.min(left),
                        (turn, left) => turn.or(left).unwrap_or(Duration::from_secs(5)),
                    };
                    thread::sleep(limit.saturating_mul(3) + Duration::from_millis(1500));
                }
                Mode::Illegal => {
                    let reply = match self.board.last_move() {
                        Some(p) => Coord::from(p),
                        None => Coord {
                            x: i64::from(self.size.width()),
                            y: 0,
                        },
                    };
                    self.reply(BrainLine::Move(reply));
                    return;
                }
                Mode::Crash => quit(3),
                Mode::Silent => {
                    self.silent = true;
                    return;
                }
                Mode::Garbage => {
                    self.reply(BrainLine::Other("I resign".into()));
                    return;
                }
                Mode::Flood => flood(BrainLine::Message("thinking hard".into())),
                Mode::SuggestFlood => flood(BrainLine::Suggest(self.size.center().into())),
                Mode::Random | Mode::SlowEnd => {}
            }
        }
        match self.choose() {
            Some(p) => {
                let me = self.board.side_to_move();
                let _ = self.board.place(p, me);
                self.reply(BrainLine::Move(p.into()));
            }
            None => self.reply(BrainLine::Error("no empty cell".into())),
        }
    }

    /// Puts the opponent's stone `text` on the board.
    fn opponent_move(&mut self, c: Coord) -> bool {
        match self.point(c) {
            Some(p) if self.board.is_empty(p) => {
                let color = self.board.side_to_move();
                self.board.place(p, color).is_ok()
            }
            _ => {
                self.reply(BrainLine::Error(format!("bad coordinates {c}")));
                false
            }
        }
    }

    fn end(&mut self) -> ! {
        if self.options.mode == Mode::SlowEnd {
            // Ignores END and end of input; the manager has to kill it.
            thread::sleep(Duration::from_secs(30));
        }
        quit(0)
    }
}

/// Writes `line` until the output is closed, then exits.
fn flood(line: BrainLine) -> ! {
    let text = format!("{line}\n").repeat(256);
    let mut out = io::stdout().lock();
    while out.write_all(text.as_bytes()).is_ok() {}
    std::process::exit(0)
}

/// Exits at once, stdout flushed (the core crate links no libtorch, so
/// nothing slow runs at exit).
fn quit(code: i32) -> ! {
    let _ = io::stdout().flush();
    std::process::exit(code)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    std::thread::sleep(std::time::Duration::from_millis(options.load_ms));
    let size = BoardSize::square(15).expect("15x15 is a supported board size");
    let mut brain = Brain {
        rng: Rng::new(options.seed),
        silent: options.mode == Mode::Silent && options.at == 0,
        options,
        size,
        rule: Rule::Freestyle,
        board: Board::new(size, Rule::Freestyle),
        clock: Clock::default(),
        answered: 0,
        out: io::stdout(),
    };
    let mut parser = CommandParser::new();
    for raw in io::stdin().lock().lines() {
        let Ok(raw) = raw else { break };
        for command in parser.feed(&raw) {
            brain.handle(command);
        }
    }
    brain.end()
}

impl Brain {
    fn handle(&mut self, command: Command) {
        match command {
            Command::Start { width, height } => {
                let size = u32::try_from(width)
                    .ok()
                    .zip(u32::try_from(height).ok())
                    .and_then(|(w, h)| BoardSize::new(w, h).ok());
                match size {
                    Some(s) => {
                        self.size = s;
                        self.reset();
                        self.reply(BrainLine::Ok);
                    }
                    None => self.reply(BrainLine::Error("unsupported board size".into())),
                }
            }
            Command::Restart if self.options.silent_restart => {}
            Command::Restart if self.options.no_restart => {
                self.reply(BrainLine::Unknown("RESTART".into()))
            }
            Command::Restart => {
                self.reset();
                self.reply(BrainLine::Ok);
            }
            Command::Info { key, value } => match key.as_str() {
                _ if Clock::is_clock_key(&key) => {
                    // A bad value leaves the clock as it was.
                    let _ = self.clock.set(&key, &value);
                }
                "rule" => {
                    if let Ok(Ok(rule)) = value.parse::<u64>().map(Rule::from_gomocup) {
                        self.set_rule(rule);
                    }
                }
                _ => {}
            },
            Command::Begin => {
                self.reset_if_needed();
                self.answer();
            }
            Command::Turn(c) => {
                if self.opponent_move(c) {
                    self.answer();
                }
            }
            Command::Block {
                kind: BlockKind::Board,
                stones,
            } => self.set_position(&stones),
            Command::Takeback(c) => match self.point(c) {
                Some(p) if self.board.last_move() == Some(p) => {
                    self.board.undo();
                    self.reply(BrainLine::Ok);
                }
                _ => self.reply(BrainLine::Error("bad coordinates".into())),
            },
            Command::Play(c) => match self.point(c) {
                Some(p) if self.board.is_empty(p) => {
                    let color = self.board.side_to_move();
                    let _ = self.board.place(p, color);
                    self.reply(BrainLine::Move(p.into()));
                }
                _ => self.reply(BrainLine::Error("bad coordinates".into())),
            },
            Command::About if self.options.no_about => {
                self.reply(BrainLine::Unknown("ABOUT".into()))
            }
            Command::About => self.reply(BrainLine::Other(
                "name=\"wuzi-test-brain\", version=\"0.1\", author=\"Wuzi\", country=\"CZ\"".into(),
            )),
            Command::End => self.end(),
            Command::Malformed(reason) => self.reply(BrainLine::Error(reason.to_string())),
            other => self.reply(BrainLine::Unknown(other.to_string())),
        }
    }

    /// BOARD: the stones with their fields (1 = the side to move), then a move.
    fn set_position(&mut self, stones: &[Stone]) {
        let stones: Vec<(Point, u8)> = stones
            .iter()
            .filter_map(|s| Some((self.point(s.at)?, s.field?)))
            .collect();
        let mine = stones.iter().filter(|s| s.1 == 1).count();
        let theirs = stones.len() - mine;
        // Equal counts: the side to move is black.
        let me = if mine == theirs {
            Color::Black
        } else {
            Color::White
        };
        let answered = self.answered;
        self.reset();
        self.answered = answered;
        for (p, f) in stones {
            let c = if f == 1 { me } else { me.opponent() };
            let _ = self.board.place(p, c);
        }
        self.board.set_side_to_move(me);
        self.answer();
    }

    /// BEGIN is only valid on an empty board; start afresh if it is not.
    fn reset_if_needed(&mut self) {
        if self.board.stone_count() > 0 {
            let answered = self.answered;
            self.reset();
            self.answered = answered;
        }
    }
}
