//! The Gomocup front end: the Gomocup protocol, its extensions and the
//! Yixin-Board dialect, as a thin adapter over the session core. It turns
//! commands into engine calls and results into lines; the decisions (which
//! move, which balancing stones, whether to swap) are the engine's.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::{Engine, Finished, SwapChoice};
use crate::game::{Board, BoardSize, CellSet, Color, MoveError, Point, Rule};
use crate::gomocup::{position, BlockKind, BrainLine, Clock, Command, CommandError, Coord, Stone};
use crate::nn::provider::NetworkProvider;
use crate::notation::Notation;
use crate::protocol::log::LogFile;
use crate::protocol::session::{Driver, Flow, FrontEnd, Session, Urgency};
use crate::protocol::summary::{log_search, summary_line};
use crate::search::{SearchResult, StopReason, TimeControl};

mod info;
mod swap;

use swap::keep_proposed;

const NAME: &str = "Wuzi";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Which program is on the other side: the commands are the same family,
/// a few mean different things.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Piskvork, GomocupJudge, c-gomoku-cli and other Gomocup managers.
    Gomocup,
    /// Yixin-Board, detected by `yxshowinfo`: `INFO rule 2` is renju, a
    /// turn limit of 0 means no limit, moves in text use the GUI's labels,
    /// and the many commands engines need not know are ignored silently
    /// (as Rapfi does).
    YixinBoard,
}

impl Dialect {
    /// The rule of `INFO rule N`.
    fn rule(self, number: i64) -> Option<Rule> {
        match (self, number) {
            (Dialect::YixinBoard, 2) => Some(Rule::Renju),
            _ => Rule::from_gomocup(u64::try_from(number).ok()?).ok(),
        }
    }

    /// Whether `INFO timeout_turn 0` means "no limit" (Yixin-Board) rather
    /// than "move now" (Piskvork, during a search).
    fn turn_zero_is_unlimited(self) -> bool {
        self == Dialect::YixinBoard
    }

    /// How moves are written in text: Yixin-Board's own labels (it sends
    /// row,col, so they are transposed), the extended Gomocup PV notation
    /// otherwise.
    pub(super) fn notation(self, size: BoardSize) -> Notation {
        match self {
            Dialect::YixinBoard => Notation::Labels {
                size,
                transposed: true,
            },
            Dialect::Gomocup => Notation::Gomocup,
        }
    }
}

/// What a search that must answer is for.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    /// Our move: answer it (or SUGGEST it in analysis mode).
    Move,
    /// Yixin-Board multi-PV search: report the top moves, then the best.
    NBest(u32),
    /// SWAP2BOARD / SWAPBOARD: the decision, taken on the result.
    Swap { stones: usize, swap2: bool },
    /// Yixin-Board's swap2 steps after the opening stones.
    YixinSwap2 { stones: usize },
}

impl Job {
    /// The share of the turn its search takes: half where more work on
    /// the same clock may follow it. After three swap2 stones the answer
    /// may be two balancing stones, chosen by more searches; after
    /// Yixin-Board's swap2 stones, a "no" is followed by the GUI's search
    /// for the next move, whose clock it does not restart.
    fn turn_share(&self) -> f64 {
        match self {
            Job::Swap {
                stones: 3,
                swap2: true,
            }
            | Job::YixinSwap2 { .. } => 0.5,
            _ => 1.0,
        }
    }
}

/// What the live output of the current search has shown.
pub(super) struct LiveReport {
    pub(super) started: Instant,
    pub(super) last_summary: Instant,
    pub(super) best: Option<Point>,
    pub(super) depth: u32,
    /// Each root move's visits at the last report, to tell which moves the
    /// search is working on now.
    pub(super) visits: std::collections::HashMap<Point, u32>,
    /// Moves marked `REALTIME POS` (being searched) and not yet `DONE`.
    pub(super) searching: Vec<Point>,
}

impl LiveReport {
    fn new() -> LiveReport {
        LiveReport {
            started: Instant::now(),
            last_summary: Instant::now(),
            best: None,
            depth: 1,
            visits: std::collections::HashMap::new(),
            searching: Vec::new(),
        }
    }
}

/// The Gomocup protocol state.
pub struct Gomocup {
    config: Config,
    networks: NetworkProvider,
    pub(super) dialect: Dialect,
    analysis_mode: bool,
    pub(super) show_detail: u8,
    clock: Clock,
    /// Root moves Yixin-Board asked not to consider (`yxblock`).
    blocked: CellSet,
    /// This search's live output to Yixin-Board: when it started, the last
    /// summary line, the best move last shown, the depth last shown (the
    /// GUI clears old tags only when the depth rises, so it never falls).
    pub(super) live: LiveReport,
    /// When the request of the search under way arrived: a swap decision
    /// that balances after it must answer within the same turn.
    pub(super) turn_began: Instant,
    /// Why the last `INFO rule` was refused: until a rule the engine plays
    /// arrives, requests for a move are refused too, rather than played
    /// under the previous game's rule.
    refused_rule: Option<String>,
    /// When the manager last sent `INFO time_left` (never: `None`).
    time_left_at: Option<Instant>,
    /// When the last request answered arrived: a time_left after it is
    /// of the next turn or game (Yixin-Board sends one, then `start`,
    /// while the engine thinks), one before it was spent on that turn.
    answered_at: Option<Instant>,
    /// `INFO evaluate` answers since the manager's last request.
    pub(super) unread_evaluations: u32,
    /// A move was answered and the ponder after it waits until the turn
    /// is charged to the clock: starting it (a tree prune) is not ours.
    ponder_due: bool,
    log: LogFile,
    logging: bool,
}

/// The session of a Gomocup front end.
pub type GomocupSession = Session<Job>;

pub(super) fn reply(s: &mut GomocupSession, line: BrainLine) {
    s.send(&line.to_string());
}

pub(super) fn error(s: &mut GomocupSession, what: &str) {
    reply(s, BrainLine::Error(what.to_string()));
}

pub(super) fn message(s: &mut GomocupSession, what: &str) {
    reply(s, BrainLine::Message(what.to_string()));
}

/// The cell at protocol coordinates on the game's board.
pub(super) fn point(s: &GomocupSession, c: Coord) -> Result<Point, MoveError> {
    s.engine.board().point(c.x, c.y)
}

/// Moves as the protocol lists them: `x,y x,y`.
fn move_list(moves: &[Point]) -> String {
    moves
        .iter()
        .map(Point::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

impl Gomocup {
    /// The brain: the engine with every rule's network loaded, under the
    /// Gomocup front end, writing to `out`.
    pub fn brain(config: Config, out: Box<dyn std::io::Write + Send>) -> Driver<Gomocup> {
        // Piskvork reads stderr as the brain's output (it duplicates the
        // stdout pipe), and Yixin-Board never reads it (a full pipe would
        // block the brain): the default hook's "thread ... panicked at"
        // would be read as the answer to the request, where the brain
        // survives the panic (a network that fails to load, a failed
        // batch, a failed search answered with the fallback move). The log
        // has it instead. Set before the networks load: a load that
        // panics is caught and refused, and must say nothing on stderr.
        std::panic::set_hook(Box::new(|info| tracing::error!("{info}")));
        let mut networks = NetworkProvider::new(&config.network);
        // Every network now, so that INFO rule and a START of another
        // size cost no turn time.
        let notes = networks.load_all();
        let (engine, _) =
            super::engine_for(&config, &mut networks, BoardSize::FIFTEEN, Rule::Freestyle);
        let mut session = Session::new(engine, out);
        session.auto_ponder = config.time.auto_pondering;
        let log = LogFile::default();
        let logging = config.log.enabled;
        if logging {
            log.install();
        }
        let clock = Clock {
            lag: config.time.protocol_lag_ms as i64,
            ..Clock::default()
        };
        let mut front = Gomocup {
            config,
            networks,
            dialect: Dialect::Gomocup,
            analysis_mode: false,
            show_detail: 0,
            clock,
            blocked: CellSet::new(),
            live: LiveReport::new(),
            turn_began: Instant::now(),
            refused_rule: None,
            time_left_at: None,
            answered_at: None,
            unread_evaluations: 0,
            ponder_due: false,
            log,
            logging,
        };
        front.pending_notes(&mut session, None);
        for note in notes {
            message(&mut session, &format!("ERROR {note}"));
        }
        // A limit from the configuration file is said at once, as a
        // manager's INFO max_memory is when it comes.
        let configured = session.engine.config().max_memory;
        if configured != usize::MAX {
            info::check_memory_limit(&mut session, "[engine] max_memory_mb", configured);
        }
        front.apply_clock(&mut session.engine);
        Driver::new(front, session)
    }

    /// Messages to show once they exist (network fallback, device).
    fn pending_notes(&mut self, s: &mut GomocupSession, note: Option<String>) {
        if let Some(device) = self.networks.device_note.take() {
            message(s, &device);
        }
        if let Some(note) = note {
            message(s, &format!("ERROR {note}"));
        }
    }

    fn start(&mut self, s: &mut GomocupSession, width: i64, height: i64) {
        let size = u32::try_from(width)
            .ok()
            .zip(u32::try_from(height).ok())
            .and_then(|(w, h)| BoardSize::new(w, h).ok());
        let Some(size) = size else {
            error(
                s,
                // "20" in the text: Piskvork's source then switches a GUI
                // game to 20x20 instead of dropping the brain.
                &format!(
                    "unsupported board size {width}x{height}: each side must be 5..=32 (15 and 20 are usual)"
                ),
            );
            return;
        };
        // The game's rule comes after START (INFO rule): refused here only
        // when no rule can be played at all; a rule without its network is
        // refused at the first request that needs it.
        if let Some(why) = self.networks.refusal_of_every_rule() {
            error(s, &why);
            return;
        }
        let rule = s.engine.rule();
        // Yixin-Board sends START before every BOARD and resets the blocked
        // moves itself (yxblockreset); they mean nothing on another size.
        let resized = size != s.engine.board().size();
        if resized {
            self.blocked = CellSet::new();
        }
        self.new_game_clock(s);
        // Its note was said when the networks loaded, and a refused
        // network is answered at each request that needs it.
        let _ = super::new_game(&mut s.engine, &mut self.networks, size, rule);
        // A file per game, but Yixin-Board's START comes before every
        // position (a game made dozens): there, one per board size.
        let same_session = self.dialect == Dialect::YixinBoard && self.log.is_open() && !resized;
        if self.logging && !same_session {
            match self.log.start_new(&self.config.log.dir) {
                Ok(path) => {
                    tracing::info!("log started: {}", path.display());
                    tracing::info!(
                        "evaluator: {}",
                        s.engine
                            .evaluator_description()
                            .as_deref()
                            .unwrap_or("none (tactics only)")
                    );
                }
                Err(e) => {
                    self.logging = false;
                    message(
                        s,
                        &format!(
                            "cannot write logs to {}: {e}",
                            self.config.log.dir.display()
                        ),
                    );
                }
            }
        }
        reply(s, BrainLine::Ok);
    }

    /// The clock of a new game (START or RESTART): kept when a time_left
    /// came since the last answer, since Yixin-Board sends it before the
    /// START that precedes each BOARD, and the protocol allows INFO before
    /// START or RESTART. Otherwise (Piskvork and the others send it after,
    /// or never) the new game's clock is full until the manager says
    /// otherwise; a manager that sent it in one game and not before the
    /// next one's first move would have that game planned on the last
    /// one's rest.
    fn new_game_clock(&mut self, s: &mut GomocupSession) {
        let time_left_since_answer = match (self.time_left_at, self.answered_at) {
            (Some(told), Some(answered)) => told > answered,
            (told, _) => told.is_some(),
        };
        if !time_left_since_answer {
            self.clock.new_game();
            self.apply_clock(&mut s.engine);
        }
    }

    /// An answered turn's time (from `began`, its request's arrival) off
    /// the match clock, for the next move's plan: a manager's next
    /// time_left replaces it, and one sent meanwhile is charged only from
    /// its arrival. For the turns answered without a background search
    /// (opening stones, balancing moves) as for the searched ones.
    pub(super) fn charge_turn(&mut self, s: &mut GomocupSession, began: Instant) {
        let since = self.time_left_at.map_or(began, |at| at.max(began));
        self.clock.spend(since.elapsed());
        self.apply_clock(&mut s.engine);
        self.answered_at = Some(began);
    }

    /// The position a block describes, on the game's board size and rule;
    /// errors start with the command's name.
    fn position_of(s: &GomocupSession, name: &str, stones: &[Stone]) -> Result<Board, String> {
        let board = s.engine.board();
        position(board.size(), board.rule(), stones).map_err(|e| format!("{name}: {e}"))
    }

    fn block(&mut self, s: &mut GomocupSession, kind: BlockKind, stones: Vec<Stone>) {
        match kind {
            BlockKind::Board if self.refuses(s) => {}
            BlockKind::Board | BlockKind::YxBoard => match Self::position_of(s, "BOARD", &stones) {
                Ok(board) => {
                    s.engine.set_board(board);
                    if kind == BlockKind::Board {
                        self.think(s, Job::Move);
                    }
                }
                Err(e) if kind == BlockKind::Board => self.refuse_request(s, &e),
                Err(e) => error(s, &e),
            },
            BlockKind::ShowForbid => match Self::position_of(s, "SHOWFORBID", &stones) {
                Ok(mut board) => {
                    let line = forbid_line(&mut board, false);
                    s.engine.set_board(board);
                    s.send(&line);
                }
                Err(e) => error(s, &e),
            },
            BlockKind::Swap2Board | BlockKind::SwapBoard => {
                self.swap_board(s, kind == BlockKind::Swap2Board, &stones)
            }
            BlockKind::Balance(_) if self.refuses(s) => {}
            BlockKind::Balance(n) => match Self::position_of(s, "BALANCE", &stones) {
                Ok(board) => {
                    let found = s
                        .engine
                        .balancing_moves(&board, n as usize, 0.0, s.received());
                    if found.len() < n as usize {
                        // Refused: the game's position stays as it was.
                        error(
                            s,
                            &format!("only {} balancing move(s) exist here", found.len()),
                        );
                    } else {
                        s.engine.set_board(board);
                        s.send(&move_list(&found));
                        self.charge_turn(s, s.received());
                    }
                }
                Err(e) => error(s, &e),
            },
            BlockKind::YxBlock | BlockKind::YxBlockUndo => {
                let size = s.engine.board().size();
                for p in stones.iter().filter_map(|s| s.at.point_on(size)) {
                    if kind == BlockKind::YxBlock {
                        self.blocked.insert(p);
                    } else {
                        self.blocked.remove(p);
                    }
                }
            }
            BlockKind::Ignored(word) => unsupported_opening(s, &word),
        }
    }

    // ---- INFO -------------------------------------------------------------

    fn set_rule(&mut self, s: &mut GomocupSession, rule: Rule) {
        self.refused_rule = None;
        let note = super::switch_rule(&mut s.engine, &mut self.networks, rule);
        self.pending_notes(s, note);
    }

    // ---- searches ---------------------------------------------------------

    /// Answers ERROR, and says so, when the game's rule cannot be played
    /// (its network is missing and no fallback is configured): every
    /// request that needs the network asks this first.
    fn refuses(&self, s: &mut GomocupSession) -> bool {
        if let Some(why) = &self.refused_rule {
            self.refuse_request(s, why);
            return true;
        }
        match self
            .networks
            .refusal(s.engine.rule(), s.engine.board().size())
        {
            Some(why) => {
                self.refuse_request(s, &why);
                true
            }
            None => false,
        }
    }

    /// A request that cannot be answered: ERROR with why, and under
    /// Yixin-Board the move line `-1,-1` too. It reads ERROR as a note and
    /// goes on thinking (its next undo or new game then discards our next
    /// real move as the abandoned search's); a move off the board ends its
    /// thinking and the game, which is what is left to it.
    fn refuse_request(&self, s: &mut GomocupSession, why: &str) {
        error(s, why);
        if self.dialect == Dialect::YixinBoard {
            s.send("-1,-1");
        }
    }

    fn think(&mut self, s: &mut GomocupSession, job: Job) {
        if self.refuses(s) {
            return;
        }
        if s.engine.board().is_over() {
            self.refuse_request(s, GAME_OVER);
            return;
        }
        s.engine.limits.excluded = self.blocked;
        self.turn_began = s.received();
        let share = job.turn_share();
        s.think_sharing(job, share);
        self.live = LiveReport::new();
    }

    /// Our move: played on our board and answered, or suggested.
    fn answer_move(&mut self, s: &mut GomocupSession, result: &SearchResult) {
        let Some(mv) = s.engine.move_or_forbidden(result) else {
            error(
                s,
                "no legal move: every empty cell is forbidden or the board is full",
            );
            return;
        };
        if self.analysis_mode {
            reply(s, BrainLine::Suggest(mv.into()));
            return;
        }
        self.ponder_due = play_and_answer(s, mv);
    }

    // ---- swap rules ---------------------------------------------------------
}

/// Plays our move `mv` on our board and answers it; whether it did.
pub(super) fn play_and_answer(s: &mut GomocupSession, mv: Point) -> bool {
    let color = s.engine.board().side_to_move();
    if let Err(e) = s.engine.place(mv, color) {
        error(s, &format!("internal: our move {mv}: {e}"));
        return false;
    }
    reply(s, BrainLine::Move(mv.into()));
    true
}

/// Commands that neither change the position nor search leave a ponder
/// running: Yixin-Board sends yxshowforbid (and database queries, which
/// are ignored) right after each of our moves, which would otherwise end
/// every ponder as it starts.
fn leaves_ponder_running(command: &Command) -> bool {
    // Pondering turned off ends the ponder that runs (a new rule ends it
    // as it is applied: GUIs repeat the rule with every setting).
    if let Command::Info { key, value } = command {
        let off = value.trim().parse::<i64>() == Ok(0);
        return !(matches!(key.as_str(), "pondering" | "auto_pondering") && off);
    }
    matches!(
        command,
        Command::Info { .. }
            // Yixin-Board's "block autoreset" sends it after each of our
            // moves; our next search takes the blocks as they are then.
            | Command::YxBlockReset
            | Command::YxShowForbid
            | Command::About
            | Command::ProtocolVersion
            | Command::Ignored(_)
            | Command::Unknown(_)
            | Command::Block {
                kind: BlockKind::Ignored(_),
                ..
            }
    )
}

/// A BOARD's five need not end with its last stone, which is all that
/// `Board::outcome` looks at: requests check `Board::is_over`.
const GAME_OVER: &str = "the game is over on this board";

/// `FORBID x,y x,y` (extended Gomocup) or `FORBID RRCC....` (Yixin).
fn forbid_line(board: &mut Board, yixin: bool) -> String {
    let points = if board.rule() == Rule::Renju && (!yixin || board.side_to_move() == Color::Black)
    {
        board.forbidden_points()
    } else {
        Vec::new()
    };
    if yixin {
        let digits: String = points
            .iter()
            .map(|p| format!("{:02}{:02}", p.x(), p.y()))
            .collect();
        format!("FORBID {digits}.")
    } else {
        format!("FORBID {}", move_list(&points))
            .trim_end()
            .to_string()
    }
}

impl FrontEnd for Gomocup {
    type Command = Command;
    type Job = Job;

    /// END and STOP are obeyed at once; during a search that must answer,
    /// INFO evaluate and the clock settings run beside it (Piskvork's "move
    /// now" is `INFO timeout_turn 0` during the search).
    fn urgency(&self, command: &Command) -> Urgency {
        match command {
            Command::End => Urgency::Quit,
            Command::Stop => Urgency::Stop,
            // Yixin-Board's new game sends no yxstop while the engine
            // thinks: it counts one move line to discard and sends `start`,
            // which would otherwise wait for the whole abandoned search.
            // So does its new game with the engine as swap2's opener: no
            // `start`, only `yxswap2step1`, which waited for the abandoned
            // search (a minute, at its unlimited levels half an hour).
            Command::Start { .. } | Command::Restart | Command::YxSwap2Step(1)
                if self.dialect == Dialect::YixinBoard =>
            {
                Urgency::StopThenInTurn
            }
            Command::Info { key, .. } if key == "evaluate" => Urgency::Now,
            // Commands that leave the running search as it is (blocks are
            // read at the next search) run beside it: Yixin-Board's block
            // path sends hundreds of blocks, which queued behind a search
            // would fill the queue, stop the input (its yxstop unread) and
            // with both pipes full leave the GUI and the engine waiting on
            // each other.
            // An UNKNOWN written now would come before the move a Gomocup
            // manager waits for, and be read as its answer: held there.
            // Yixin-Board only logs it.
            Command::Unknown(_) if self.dialect == Dialect::YixinBoard => Urgency::Now,
            Command::Ignored(_)
            | Command::YxBlockReset
            | Command::Block {
                kind: BlockKind::Ignored(_) | BlockKind::YxBlock | BlockKind::YxBlockUndo,
                ..
            } => Urgency::Now,
            Command::Info { key, value } if Clock::is_clock_key(key) => {
                let move_now = key == "timeout_turn"
                    && !self.dialect.turn_zero_is_unlimited()
                    // Read as the clock reads it: `00` and `+0` are 0 too.
                    && value.trim().parse::<i64>() == Ok(0);
                if move_now {
                    Urgency::NowThenStop
                } else {
                    Urgency::Now
                }
            }
            _ => Urgency::InTurn,
        }
    }

    fn keeps_background(&self, command: &Command) -> bool {
        leaves_ponder_running(command)
    }

    fn refuse(&mut self, s: &mut GomocupSession, _command: Command, why: &str) {
        error(s, why);
    }

    fn execute(&mut self, s: &mut GomocupSession, command: Command) -> Flow {
        if !matches!(command, Command::Info { .. }) {
            self.unread_evaluations = 0;
        }
        match command {
            Command::End => return Flow::Quit,
            Command::Start { width, height } => self.start(s, width, height),
            Command::Restart => {
                let (size, rule) = (s.engine.board().size(), s.engine.rule());
                s.engine.new_game(size, rule);
                // A replay in the same process (Piskvork's tie replays).
                self.new_game_clock(s);
                reply(s, BrainLine::Ok);
            }
            Command::Begin => {
                if s.engine.board().stone_count() > 0 {
                    error(s, "BEGIN on a board with stones: send START or RESTART first");
                } else {
                    self.think(s, Job::Move);
                }
            }
            // A move after the end, or in a rule that cannot be played, is
            // refused before it is placed, so the board stays as it was.
            Command::Turn(c) if s.engine.board().is_over() => {
                self.refuse_request(s, &format!("TURN {c}: {GAME_OVER}"))
            }
            Command::Turn(_) if self.refuses(s) => {}
            // The opponent's move, and ours as the manager has it played,
            // are checked as any move: in renju black may not take a
            // forbidden point (the manager judges such a move a loss, and
            // sends none).
            Command::Turn(c) => match point(s, c).and_then(|p| s.engine.play(p)) {
                Ok(()) => self.think(s, Job::Move),
                Err(e) => error(s, &format!("TURN {c}: {e}")),
            },
            Command::Play(c) => {
                match point(s, c).and_then(|p| s.engine.play(p).map(|()| p)) {
                    Ok(p) => reply(s, BrainLine::Move(p.into())),
                    Err(e) => error(s, &format!("PLAY {c}: {e}")),
                }
            }
            Command::Takeback(c) => match point(s, c)
                .map_err(|e| e.to_string())
                .and_then(|p| s.engine.take_back(p))
            {
                Ok(_) => reply(s, BrainLine::Ok),
                Err(e) => error(s, &format!("TAKEBACK {c}: {e}")),
            },
            Command::Block { kind, stones } => self.block(s, kind, stones),
            Command::Info { key, value } => self.info(s, &key, &value),
            // No www or email: the project has neither yet, and ABOUT
            // should not point players at addresses that lead nowhere.
            Command::About => s.send(&format!(
                "name=\"{NAME}\", version=\"{VERSION}\", author=\"The Wuzi developers\", country=\"International\""
            )),
            Command::Ponder(ms) => {
                s.ponder(ms.map(|ms| Duration::from_millis(ms.max(0) as u64)));
            }
            // Without a search (with one, the driver stops it).
            Command::Stop => {}
            Command::ClearHash => s.engine.clear_cache(),
            Command::ProtocolVersion => s.send("1,0"),
            Command::YxShowInfo => {
                self.dialect = Dialect::YixinBoard;
                message(s, "INFO MAX_THREAD_NUM 64");
                message(s, "INFO MAX_HASH_SIZE 24");
                message(s, &format!("{NAME} {VERSION}"));
                self.apply_clock(&mut s.engine);
            }
            Command::YxShowForbid => {
                let mut board = s.engine.board().clone();
                let line = forbid_line(&mut board, true);
                s.send(&line);
            }
            Command::YxNbest(n) => self.think(s, Job::NBest(n)),
            Command::YxSearchDefend => self.think(s, Job::NBest(64)),
            Command::YxBalance { .. } if self.refuses(s) => {}
            Command::YxBalance { moves, bias } => {
                let board = s.engine.board().clone();
                // The bias is in the units of the `ev` we report (the
                // expectation in %), for the side not to move when the
                // command came: one number favours the same player after
                // one move or two (Rapfi negates it for two to that end).
                let bias = (bias.clamp(-50, 50) as f32) / 100.0;
                let found =
                    s.engine
                        .balancing_moves(&board, moves as usize, bias, s.received());
                if found.len() < moves as usize {
                    // As BALANCE: fewer moves than asked is no answer.
                    error(
                        s,
                        &format!("only {} balancing move(s) exist here", found.len()),
                    );
                } else {
                    s.send(&move_list(&found));
                    keep_proposed(s, board, &found);
                    self.charge_turn(s, s.received());
                }
            }
            Command::YxBlockReset => self.blocked = CellSet::new(),
            Command::YxSwap2Step(step) => self.yixin_swap2(s, step),
            Command::Ignored(line) => {
                if let Some(word) = line.split_whitespace().next() {
                    unsupported_opening(s, word);
                }
            }
            // Yixin-Board logs UNKNOWN lines and goes on (its protocol
            // notes): answered in both dialects, so nothing is lost silently.
            Command::Unknown(line) => reply(s, BrainLine::Unknown(line)),
            // Managers never read an answer to INFO: a note, not an ERROR
            // that would be taken as the answer to the next request.
            Command::Malformed(why @ CommandError::InfoKey) => {
                message(s, &format!("ERROR {why}"))
            }
            Command::Malformed(why) => error(s, &why.to_string()),
        }
        Flow::Continue
    }

    fn finished(&mut self, s: &mut GomocupSession, job: Job, finished: Finished) {
        let result = finished.result;
        log_search(&result);
        let notation = self.dialect.notation(s.engine.board().size());
        match job {
            Job::Move | Job::NBest(_) => {
                let shown = if let Job::NBest(n) = job {
                    n as usize
                } else {
                    1
                };
                // Yixin-Board draws INFO blocks on whatever board it shows:
                // a search stopped for a new position (an undo, a new game)
                // would label that board with the old one's values. The
                // live blocks showed them already.
                if !(self.dialect == Dialect::YixinBoard && result.reason == StopReason::Stopped) {
                    self.final_reports(s, &result, shown);
                }
                message(s, &summary_line(&result, notation));
                self.answer_move(s, &result);
            }
            Job::Swap { stones, swap2 } => {
                if !self.swap_decision(s, &result, stones, swap2) {
                    // Searching on: the turn is charged when it answers.
                    return;
                }
            }
            Job::YixinSwap2 { stones } => {
                Self::yixin_swap_decision(s, &result, stones, self.turn_began)
            }
        }
        self.charge_turn(s, self.turn_began);
        if std::mem::take(&mut self.ponder_due) {
            s.ponder_after_move();
        }
    }

    fn report(&mut self, s: &mut GomocupSession, job: &Job) {
        self.realtime_report(s, job);
    }
}

/// Yixin-Board's Soosorv opening steps are not played: the GUI waits for
/// an answer that does not come, so its log says why.
fn unsupported_opening(s: &mut GomocupSession, word: &str) {
    if word.to_ascii_uppercase().starts_with("YXSOOSORVSTEP") {
        message(
            s,
            "Soosorv openings are not supported by Wuzi (swap2 is: yxswap2step1..3)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gomocup::CommandParser;

    fn command(lines: &[&str]) -> Command {
        let mut parser = CommandParser::new();
        let mut commands: Vec<Command> = lines.iter().flat_map(|l| parser.feed(l)).collect();
        assert_eq!(commands.len(), 1, "{lines:?}");
        commands.remove(0)
    }

    /// Half the turn where more searches on the same clock may follow:
    /// balancing after three swap2 stones, and every Yixin-Board swap2
    /// decision (a "no" is followed by the GUI's search for the next move).
    #[test]
    fn decisions_followed_by_more_work_take_half_the_turn() {
        let half = [
            Job::Swap {
                stones: 3,
                swap2: true,
            },
            Job::YixinSwap2 { stones: 3 },
            Job::YixinSwap2 { stones: 5 },
        ];
        for job in half {
            assert_eq!(job.turn_share(), 0.5, "{job:?}");
        }
        let whole = [
            Job::Move,
            Job::NBest(3),
            Job::Swap {
                stones: 5,
                swap2: true,
            },
            Job::Swap {
                stones: 3,
                swap2: false,
            },
        ];
        for job in whole {
            assert_eq!(job.turn_share(), 1.0, "{job:?}");
        }
    }

    /// A ponder survives what Yixin-Board sends after each of our moves
    /// and other commands that neither move nor search; anything that
    /// changes the position or asks for a search ends it.
    #[test]
    fn only_commands_that_change_nothing_leave_a_ponder_running() {
        for kept in [
            &["INFO time_left 1000"][..],
            &["INFO pondering 1"],
            &["yxshowforbid"],
            &["ABOUT"],
            &["PROTOCOLVERSION"],
            &["yxquerydatabaseall", "7,7", "DONE"],
            &["yxsetpath"],
            &["something odd"],
        ] {
            assert!(leaves_ponder_running(&command(kept)), "{kept:?}");
        }
        for ends in [
            &["TURN 7,7"][..],
            &["INFO pondering 0"],
            &["INFO auto_pondering 00"],
            &["BEGIN"],
            &["BOARD", "7,7,1", "DONE"],
            &["TAKEBACK 7,7"],
            &["START 15"],
            &["RESTART"],
            &["yxnbest 3"],
            &["SWAP2BOARD", "DONE"],
            &["STOP"],
        ] {
            assert!(!leaves_ponder_running(&command(ends)), "{ends:?}");
        }
    }
}
