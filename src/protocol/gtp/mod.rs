//! The GTP front end (`pbrain-wuzi gtp`): GTP version 2 with the gomoku
//! conventions of KataGomo, as a thin adapter over the session core.
//!
//! Required commands, `undo`, `showboard`, the time commands, `reg_genmove`,
//! stone set-up (`set_free_handicap`, `set_position`), the rule
//! (`kata-set-rule basicrule RULE` or `wuzi-rule RULE`), and analysis in
//! the formats Lizzie and LizzieYzy read (`lz-analyze`, `kata-analyze`).
//! Every failure is `? text` with the state as it was.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::{Finished, NodeReport};
use crate::game::{Board, BoardSize, CellSet, Color, MoveError, Point, Rule};
use crate::gtp::{color_name, parse_color, GtpCommand, GtpMove, GtpResponse, Vertex};
use crate::nn::provider::NetworkProvider;
use crate::protocol::session::{Driver, Flow, FrontEnd, Session, Urgency};
use crate::protocol::summary::log_search;
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::TimeControl;

mod analysis;
mod clock;

use clock::{GtpClock, TimeSettings};

const NAME: &str = "Wuzi";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every command this front end knows, as `list_commands` gives them.
const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "rectangular_boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "reg_genmove",
    "undo",
    "showboard",
    "time_settings",
    "time_left",
    "set_free_handicap",
    "set_position",
    "kata-set-rule",
    "wuzi-rule",
    "lz-analyze",
    "kata-analyze",
];

/// Time per move before any `time_settings`.
const DEFAULT_MOVE_TIME: Duration = Duration::from_secs(5);

/// Which analysis format a GUI asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnalysisFormat {
    /// Leela Zero's `lz-analyze`: winrate and prior in 1/10000.
    Leela,
    /// KataGo's `kata-analyze`: values between 0 and 1.
    KataGo,
}

/// What a search is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    /// `genmove` (plays the move) or `reg_genmove` (does not, and leaves
    /// the side to move as it was, `side_before`).
    GenMove {
        id: Option<u64>,
        play: bool,
        side_before: Color,
        /// The colour asked for, and when the request arrived: a played
        /// move's time comes off that colour's clock.
        color: Color,
        asked: Instant,
    },
    /// `lz-analyze` / `kata-analyze` until the next command.
    Analyse {
        format: AnalysisFormat,
        max_moves: usize,
    },
}

/// The GTP engine state besides the session.
pub struct Gtp {
    networks: NetworkProvider,
    lag: Duration,
    clock: GtpClock,
    /// Stones set up (handicap, set_position) at the start of the history:
    /// they cannot be undone.
    setup_stones: usize,
    /// Passes accepted into the game (play's and genmove's on a finished
    /// board, genmove's when no move is left), oldest first: GUIs record
    /// them as moves, so `undo` takes one back when it is the last move.
    passes: Vec<Pass>,
    /// The side to move before each stone played (not set up), oldest
    /// first: `undo` gives the turn back to it, as it does for a pass (a
    /// stone played out of turn took the turn from the other colour).
    sides_before: Vec<Color>,
}

/// A pass in the game's history.
#[derive(Clone, Copy, Debug)]
struct Pass {
    /// Stones on the board when it came: it is the last move while the
    /// board still has as many (a rule switched afterwards may let stones
    /// follow it).
    stones: usize,
    /// The side to move before it (genmove's colour may have changed it).
    side_before: Color,
}

/// Passes kept for `undo`: far more than any game has, so that a stream
/// of them cannot grow the history without bound; beyond it the oldest is
/// forgotten.
const MAX_PASSES: usize = 1024;

type GtpSession = Session<Job>;

fn respond(s: &mut GtpSession, response: GtpResponse) {
    let text = response.to_string();
    // The response ends with its empty line; `send` adds the last newline.
    s.send(text.strip_suffix('\n').unwrap_or(&text));
}

fn success(s: &mut GtpSession, id: Option<u64>, text: impl Into<String>) {
    respond(s, GtpResponse::success(id, text));
}

fn failure(s: &mut GtpSession, id: Option<u64>, text: impl Into<String>) {
    respond(s, GtpResponse::failure(id, text));
}

impl Gtp {
    /// The GTP engine: every rule's network loaded, freestyle 15x15 to
    /// start, writing to `out`.
    pub fn engine(config: Config, out: Box<dyn std::io::Write + Send>) -> Driver<Gtp> {
        let mut networks = NetworkProvider::new(&config.network);
        for note in networks.load_all() {
            tracing::warn!("{note}");
        }
        let (engine, _) =
            super::engine_for(&config, &mut networks, BoardSize::FIFTEEN, Rule::Freestyle);
        let session = Session::new(engine, out);
        let lag = Duration::from_millis(config.time.protocol_lag_ms);
        Driver::new(
            Gtp {
                networks,
                lag,
                clock: GtpClock::new(),
                setup_stones: 0,
                passes: Vec::new(),
                sides_before: Vec::new(),
            },
            session,
        )
    }

    fn new_game(&mut self, s: &mut GtpSession, size: BoardSize) {
        let rule = s.engine.rule();
        // Its note was logged when the networks loaded; a refused network
        // fails each command that needs it.
        let _ = super::new_game(&mut s.engine, &mut self.networks, size, rule);
        self.setup_stones = 0;
        self.passes.clear();
        self.sides_before.clear();
        self.clock.new_game();
    }

    /// The position with `color` to move (GTP lets either colour move).
    fn with_side_to_move(s: &mut GtpSession, color: Color) {
        if s.engine.board().side_to_move() != color {
            let mut board = s.engine.board().clone();
            board.set_side_to_move(color);
            s.engine.set_board(board);
        }
    }

    fn set_rule(&mut self, s: &mut GtpSession, id: Option<u64>, name: Option<&String>) {
        let Some(rule) = name.and_then(|n| n.parse::<Rule>().ok()) else {
            return failure(
                s,
                id,
                "syntax error: expected freestyle, standard, renju or caro",
            );
        };
        if rule == s.engine.rule() {
            return success(s, id, "");
        }
        // Refused before anything changes: a rule without a network, or
        // stones that already hold a five under the new rule (the game
        // would be over, and a five found only after the switch is not
        // the last move's).
        let under_new = s.engine.board().under_rule(rule);
        if under_new.outcome().is_none() && under_new.completed_five().is_some() {
            return failure(
                s,
                id,
                format!("the stones on the board hold a five under {rule}: clear_board first"),
            );
        }
        let size = s.engine.board().size();
        let (service, note) = match self.networks.service_for(rule, size) {
            Ok(found) => found,
            Err(why) => return failure(s, id, format!("unsupported rule: {why}")),
        };
        if let Some(note) = note {
            tracing::warn!("{note}");
        }
        s.engine.set_rule(rule, service);
        success(s, id, "");
    }

    /// `boardsize` and `rectangular_boardsize`: `usage` is the command's
    /// syntax, for its error.
    fn boardsize(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String], usage: &str) {
        let sides: Option<Vec<u32>> = args.iter().map(|a| a.parse().ok()).collect();
        let size = match sides.as_deref() {
            Some([n]) => BoardSize::new(*n, *n),
            Some([w, h]) => BoardSize::new(*w, *h),
            _ => return failure(s, id, format!("syntax error: {usage}")),
        };
        let Ok(size) = size else {
            return failure(s, id, "unacceptable size");
        };
        // Refused, with the game as it was, only when no rule can be played
        // (as Gomocup's START): a controller may set the rule after the
        // size, so a rule without its network on this size is refused at
        // the first command that needs it (genmove, analysis).
        if let Some(why) = self.networks.refusal_of_every_rule() {
            return failure(s, id, format!("unacceptable size: {why}"));
        }
        self.new_game(s, size);
        success(s, id, "")
    }

    fn play(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String]) {
        let [color, vertex] = args else {
            return failure(s, id, "syntax error: play COLOR VERTEX");
        };
        let Some(color) = parse_color(color) else {
            return failure(s, id, format!("syntax error: invalid color {color:?}"));
        };
        let mv = match vertex.parse::<GtpMove>() {
            Ok(mv) => mv,
            Err(e) => return failure(s, id, format!("syntax error: {e}")),
        };
        let size = s.engine.board().size();
        let point = match mv {
            GtpMove::At(v) => match v.point_on(size) {
                Some(p) => p,
                None => return failure(s, id, "illegal move: off the board"),
            },
            // genmove answers pass on a finished board, and a referee
            // relays it to the other engine: accepted there, as nothing.
            GtpMove::Pass if s.engine.board().outcome().is_some() => {
                self.record_pass(s.engine.board(), s.engine.board().side_to_move());
                return success(s, id, "");
            }
            GtpMove::Pass => return failure(s, id, "illegal move: gomoku has no pass"),
            GtpMove::Resign => return failure(s, id, "syntax error: resign is no vertex"),
        };
        if s.engine.board().outcome().is_some() {
            return failure(s, id, "illegal move: the game is over");
        }
        // The rules judge the move for its colour (a renju forbidden point
        // is illegal for black); the position is unchanged on failure.
        let mut board = s.engine.board().clone();
        board.set_side_to_move(color);
        let shown = Vertex::of(point, size);
        let checked = board
            .check_move(i64::from(point.x()), i64::from(point.y()), color)
            .and_then(|p| board.play(p));
        match checked {
            Ok(()) => {
                self.sides_before.push(s.engine.board().side_to_move());
                s.engine.set_board(board);
                success(s, id, "");
            }
            Err(MoveError::Occupied(_)) => {
                failure(s, id, format!("illegal move: {shown} is occupied"))
            }
            Err(MoveError::Forbidden(_)) => failure(
                s,
                id,
                format!("illegal move: {shown} is forbidden for black under renju"),
            ),
            Err(e) => failure(s, id, format!("illegal move: {e}")),
        }
    }

    fn genmove(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String], play: bool) {
        let Some(color) = args
            .first()
            .and_then(|c| parse_color(c))
            .filter(|_| args.len() == 1)
        else {
            return failure(s, id, "syntax error: genmove COLOR");
        };
        if let Some(why) = self
            .networks
            .refusal(s.engine.rule(), s.engine.board().size())
        {
            return failure(s, id, why);
        }
        let side_before = s.engine.board().side_to_move();
        if s.engine.board().outcome().is_some() {
            // Nothing to play on a finished board.
            if play {
                self.record_pass(s.engine.board(), side_before);
                Self::with_side_to_move(s, color);
            }
            return success(s, id, GtpMove::Pass.to_string());
        }
        Self::with_side_to_move(s, color);
        s.engine.time = self.clock.time_control(color, self.lag);
        // An analysis's avoid/allow blocks are its own.
        s.engine.limits.excluded = CellSet::new();
        s.think(Job::GenMove {
            id,
            play,
            side_before,
            color,
            asked: s.received(),
        });
    }

    /// Keeps a pass made on `board` for `undo`.
    fn record_pass(&mut self, board: &Board, side_before: Color) {
        if self.passes.len() >= MAX_PASSES {
            self.passes.remove(0);
        }
        self.passes.push(Pass {
            stones: board.stone_count(),
            side_before,
        });
    }

    fn undo(&mut self, s: &mut GtpSession, id: Option<u64>) {
        let stones = s.engine.board().stone_count();
        if let Some(pass) = self.passes.last().copied().filter(|p| p.stones == stones) {
            self.passes.pop();
            Self::with_side_to_move(s, pass.side_before);
            return success(s, id, "");
        }
        let board = s.engine.board();
        match board.last_move() {
            Some(last) if board.stone_count() > self.setup_stones => {
                match s.engine.take_back(last) {
                    Ok(()) => {
                        if let Some(side) = self.sides_before.pop() {
                            Self::with_side_to_move(s, side);
                        }
                        success(s, id, "")
                    }
                    Err(e) => failure(s, id, format!("cannot undo: {e}")),
                }
            }
            _ => failure(s, id, "cannot undo"),
        }
    }

    /// Stones of one colour on an empty board (`set_free_handicap`), or of
    /// both (`set_position COLOR VERTEX ...`, which clears the board first).
    fn set_up(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String], handicap: bool) {
        let size = s.engine.board().size();
        let rule = s.engine.rule();
        if handicap && s.engine.board().stone_count() > 0 {
            return failure(s, id, "board not empty");
        }
        // GTP v2, 6.3.2: at least two vertices, and fewer than the board's.
        let most = size.cell_count() - 1;
        if handicap && !(2..=most).contains(&args.len()) {
            return failure(
                s,
                id,
                format!("bad vertex list: set_free_handicap takes 2 to {most} vertices"),
            );
        }
        let mut stones: Vec<(Color, &String)> = Vec::new();
        if handicap {
            stones.extend(args.iter().map(|v| (Color::Black, v)));
        } else {
            if !args.len().is_multiple_of(2) {
                return failure(s, id, "syntax error: set_position COLOR VERTEX ...");
            }
            for pair in args.chunks(2) {
                let Some(color) = parse_color(&pair[0]) else {
                    return failure(s, id, format!("syntax error: invalid color {:?}", pair[0]));
                };
                stones.push((color, &pair[1]));
            }
        }
        let mut board = Board::new(size, rule);
        for (color, text) in &stones {
            let point = match text.parse::<Vertex>().map(|v| v.point_on(size)) {
                Ok(Some(p)) => p,
                _ => return failure(s, id, format!("bad vertex list: {text}")),
            };
            if board.place(point, *color).is_err() {
                return failure(s, id, format!("bad vertex list: {text} is repeated"));
            }
        }
        if let Some(winner) = board.completed_five() {
            return failure(
                s,
                id,
                format!("illegal position: {winner} has five in a row"),
            );
        }
        // After a handicap white moves; after a set-up, the side with
        // fewer stones (black when even).
        let blacks = stones.iter().filter(|(c, _)| *c == Color::Black).count();
        let to_move = if handicap || blacks > stones.len() - blacks {
            Color::White
        } else {
            Color::Black
        };
        board.set_side_to_move(to_move);
        self.setup_stones = board.stone_count();
        self.passes.clear();
        self.sides_before.clear();
        s.engine.set_board(board);
        success(s, id, "");
    }

    fn time_settings(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String]) {
        let numbers: Option<Vec<u64>> = args.iter().map(|a| a.parse().ok()).collect();
        let Some([main, byo_yomi, stones]) = numbers.as_deref() else {
            return failure(s, id, "syntax error: time_settings MAIN BYO_YOMI STONES");
        };
        self.clock.set(TimeSettings {
            main: Duration::from_secs(*main),
            byo_yomi: Duration::from_secs(*byo_yomi),
            stones: u32::try_from(*stones).unwrap_or(u32::MAX),
        });
        success(s, id, "");
    }

    fn time_left(&mut self, s: &mut GtpSession, id: Option<u64>, args: &[String]) {
        let parsed = match args {
            [color, time, stones] => parse_color(color)
                .zip(
                    // Not `from_secs_f64`: it panics on inf, nan and
                    // anything past u64 seconds.
                    time.parse::<f64>()
                        .ok()
                        .and_then(|t| Duration::try_from_secs_f64(t).ok()),
                )
                .zip(stones.parse::<u32>().ok()),
            _ => None,
        };
        let Some(((color, time), stones)) = parsed else {
            return failure(s, id, "syntax error: time_left COLOR TIME STONES");
        };
        self.clock.set_left(color, time, stones);
        success(s, id, "");
    }

    fn showboard(s: &GtpSession) -> String {
        let board = s.engine.board();
        let size = board.size();
        let column = |x: u8| {
            Vertex::of(
                Point::new(x, size.height() - 1).unwrap_or(size.center()),
                size,
            )
            .to_string()
            .trim_end_matches(char::is_numeric)
            .to_string()
        };
        // Past 25 columns the labels have two letters: a wider cell keeps
        // them apart.
        let cell = if size.width() > 25 { 3 } else { 2 };
        let mut text = String::from("\n   ");
        for x in 0..size.width() {
            let _ = write!(text, "{:>cell$}", column(x));
        }
        for y in 0..size.height() {
            let row = size.height() - y;
            let _ = write!(text, "\n{row:>2} ");
            for x in 0..size.width() {
                let Some(p) = Point::new(x, y) else { continue };
                let mark = match board.stone(p) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                };
                let _ = write!(text, "{mark:>cell$}");
            }
        }
        let _ = write!(
            text,
            "\n{} to move, rule {}",
            color_name(board.side_to_move()),
            board.rule()
        );
        text
    }
}

/// One line of GTP input: a command, or an empty (or comment-only) line,
/// which gets no response but ends an analysis under way, as any input
/// line does for KataGo (a GUI may stop `lz-analyze` with a bare newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GtpLine {
    Command(GtpCommand),
    Empty,
}

impl GtpLine {
    pub fn parse(line: &str) -> GtpLine {
        GtpCommand::parse(line).map_or(GtpLine::Empty, GtpLine::Command)
    }
}

impl FrontEnd for Gtp {
    type Command = GtpLine;
    type Job = Job;

    /// GTP answers in order: `genmove` holds the commands after it. An
    /// analysis ends at the next line (see `keeps_background`).
    fn urgency(&self, _line: &GtpLine) -> Urgency {
        Urgency::InTurn
    }

    fn keeps_background(&self, _line: &GtpLine) -> bool {
        false
    }

    fn refuse(&mut self, s: &mut GtpSession, line: GtpLine, why: &str) {
        if let GtpLine::Command(command) = line {
            failure(s, command.id, why);
        }
    }

    fn execute(&mut self, s: &mut GtpSession, line: GtpLine) -> Flow {
        let GtpLine::Command(command) = line else {
            return Flow::Continue;
        };
        let id = command.id;
        let args = &command.args;
        // The reader marks a line it cut at its length limit, as it marks
        // bytes that are not UTF-8, with U+FFFD: such a command is refused
        // whole, also one that reads no arguments (`undo` would run).
        let marked = |word: &String| word.contains(char::REPLACEMENT_CHARACTER);
        if marked(&command.name) || args.iter().any(marked) {
            failure(
                s,
                id,
                "syntax error: a line over the length limit or not UTF-8",
            );
            return Flow::Continue;
        }
        match command.name.as_str() {
            "protocol_version" => success(s, id, "2"),
            "name" => success(s, id, NAME),
            "version" => success(s, id, VERSION),
            "known_command" => {
                let known = args.first().is_some_and(|a| COMMANDS.contains(&a.as_str()));
                success(s, id, if known { "true" } else { "false" });
            }
            "list_commands" => success(s, id, COMMANDS.join("\n")),
            "quit" => {
                success(s, id, "");
                return Flow::Quit;
            }
            "boardsize" => self.boardsize(s, id, args, "boardsize N or boardsize WIDTH HEIGHT"),
            // KataGo's name for a board of two sides, which Sabaki and
            // LizzieYzy send when they differ.
            "rectangular_boardsize" => {
                let usage = "rectangular_boardsize WIDTH HEIGHT";
                if args.len() == 2 {
                    self.boardsize(s, id, args, usage)
                } else {
                    failure(s, id, format!("syntax error: {usage}"))
                }
            }
            "clear_board" => {
                let size = s.engine.board().size();
                self.new_game(s, size);
                success(s, id, "");
            }
            "komi" => match args.first().map(|k| k.parse::<f64>()) {
                // Accepted and ignored: gomoku has no komi.
                Some(Ok(_)) if args.len() == 1 => success(s, id, ""),
                _ => failure(s, id, "syntax error: komi NUMBER"),
            },
            "play" => self.play(s, id, args),
            "genmove" => self.genmove(s, id, args, true),
            "reg_genmove" => self.genmove(s, id, args, false),
            "undo" => self.undo(s, id),
            "showboard" => {
                let board = Self::showboard(s);
                success(s, id, board);
            }
            "time_settings" => self.time_settings(s, id, args),
            "time_left" => self.time_left(s, id, args),
            "set_free_handicap" => self.set_up(s, id, args, true),
            "set_position" => self.set_up(s, id, args, false),
            "kata-set-rule" => match args.as_slice() {
                [key, value] if key.eq_ignore_ascii_case("basicrule") => {
                    self.set_rule(s, id, Some(value))
                }
                _ => failure(s, id, "syntax error: kata-set-rule basicrule RULE"),
            },
            "wuzi-rule" => {
                if args.len() == 1 {
                    self.set_rule(s, id, args.first())
                } else {
                    failure(s, id, "syntax error: wuzi-rule RULE")
                }
            }
            "lz-analyze" => self.analyse(s, id, args, AnalysisFormat::Leela),
            "kata-analyze" => self.analyse(s, id, args, AnalysisFormat::KataGo),
            "" => failure(s, id, "syntax error: no command"),
            _ => failure(s, id, "unknown command"),
        }
        Flow::Continue
    }

    fn finished(&mut self, s: &mut GtpSession, job: Job, finished: Finished) {
        let result = finished.result;
        log_search(&result);
        match job {
            Job::GenMove {
                id,
                play,
                side_before,
                color,
                asked,
            } => {
                if play {
                    self.clock.spend(color, asked.elapsed());
                }
                let size = s.engine.board().size();
                let answer = if matches!(result.proven, Proven::Loss(_)) {
                    GtpMove::Resign
                } else {
                    match s.engine.move_to_play(&result) {
                        Some(mv) => {
                            if play {
                                let color = s.engine.board().side_to_move();
                                if let Err(e) = s.engine.place(mv, color) {
                                    return failure(s, id, format!("internal: our move {mv}: {e}"));
                                }
                                self.sides_before.push(side_before);
                            }
                            GtpMove::At(Vertex::of(mv, size))
                        }
                        None => {
                            if play {
                                self.record_pass(s.engine.board(), side_before);
                            }
                            GtpMove::Pass
                        }
                    }
                };
                if !play || answer == GtpMove::Resign {
                    // reg_genmove has no effect on the game, nor does a
                    // resignation: it plays nothing.
                    Self::with_side_to_move(s, side_before);
                }
                success(s, id, answer.to_string());
            }
            Job::Analyse { format, max_moves } => {
                if let Some(line) = Self::analysis_line(s, format, max_moves) {
                    s.send(&line);
                }
                // The empty line that closes the analysis response.
                s.send("");
            }
        }
    }

    fn report(&mut self, s: &mut GtpSession, job: &Job) {
        if let Job::Analyse { format, max_moves } = *job {
            if let Some(line) = Self::analysis_line(s, format, max_moves) {
                s.send(&line);
            }
        }
    }
}
