//! Carries out commands against the engine and writes the answers.

use std::collections::VecDeque;
use std::io::Write;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::{Engine, Finished, NodeReport, SearchKind};
use crate::game::{Board, BoardSize, CellSet, Color, MoveError, Point, Rule};
use crate::gomocup::{BlockKind, BrainLine, Command, Coord, Stone, UNLIMITED_MS};
use crate::nn::provider::NetworkProvider;
use crate::protocol::balance::balancing_moves;
use crate::protocol::log::LogFile;
use crate::search::expand::fallback_move;
use crate::search::node::Proven;
use crate::search::result::{MoveStats, Notation};
use crate::search::{memory, SearchResult};
use crate::tactics::is_legal_for;

const NAME: &str = "Wuzi";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// How often analysis output is written during a search.
const REPORT_EVERY: Duration = Duration::from_millis(250);
/// Summary lines for Yixin-Board's log panel during a search.
const SUMMARY_EVERY: Duration = Duration::from_secs(1);
/// INFO blocks carry whole lines for this many top moves (one move each
/// for the rest, as a defence search lists them all).
const LINES_SHOWN: usize = 10;

/// What the live output of the current search has shown.
struct LiveReport {
    started: Instant,
    last_summary: Instant,
    best: Option<Point>,
    depth: u32,
}

impl LiveReport {
    fn new() -> LiveReport {
        LiveReport {
            started: Instant::now(),
            last_summary: Instant::now(),
            best: None,
            depth: 1,
        }
    }
}

/// What a running search is for: what to do with its result.
#[derive(Clone, Debug, PartialEq)]
enum Task {
    /// Our move: answer it (or SUGGEST it in analysis mode).
    Move,
    /// Yixin-Board multi-PV search: report the top moves, then the best.
    NBest(u32),
    /// SWAP2BOARD / SWAPBOARD / yxswap2 decisions, taken on the result.
    Swap {
        stones: usize,
        swap2: bool,
        yixin: bool,
    },
    /// Pondering: no output.
    Ponder,
}

/// The protocol state and the engine.
pub struct Controller {
    out: Box<dyn Write + Send>,
    config: Config,
    engine: Engine,
    networks: NetworkProvider,
    rule: Rule,
    /// Yixin-Board detected (`yxshowinfo`): `INFO rule 2` is renju, a turn
    /// limit of 0 or less means no limit.
    yixin: bool,
    analysis_mode: bool,
    auto_ponder: bool,
    show_detail: u8,
    timeout_turn: i64,
    timeout_match: i64,
    time_left: i64,
    increment: i64,
    lag: i64,
    blocked: CellSet,
    task: Option<Task>,
    /// Commands that arrived during a search, run after it.
    deferred: VecDeque<Command>,
    last_report: Instant,
    /// This search's live output to Yixin-Board: when it started, the last
    /// summary line, the best move last shown, the depth last shown (the
    /// GUI clears old tags only when the depth rises, so it never falls).
    live: LiveReport,
    log: LogFile,
    logging: bool,
    /// When the line being handled was read: a search's clock starts there.
    received: Instant,
}

impl Controller {
    pub fn new(config: Config, out: Box<dyn Write + Send>) -> Controller {
        let mut networks = NetworkProvider::new(&config);
        // Every rule's network now, so that INFO rule costs no turn time.
        let mut notes: Vec<String> = Rule::ALL
            .iter()
            .filter_map(|&r| networks.service_for(r).1)
            .collect();
        notes.dedup();
        let rule = Rule::Freestyle;
        let (service, _) = networks.service_for(rule);
        let search = config.search_config();
        let size = BoardSize::FIFTEEN;
        let engine = Engine::new(service, search, size, rule);
        let log = LogFile::default();
        let logging = config.log.enabled;
        if logging {
            log.install();
        }
        let mut controller = Controller {
            out,
            auto_ponder: config.time.auto_pondering,
            lag: config.time.protocol_lag_ms as i64,
            config,
            engine,
            networks,
            rule,
            yixin: false,
            analysis_mode: false,
            show_detail: 0,
            timeout_turn: 5000,
            // Unknown until the manager says: a time_left alone is then obeyed.
            timeout_match: i64::MAX,
            time_left: UNLIMITED_MS,
            increment: 0,
            blocked: CellSet::new(),
            task: None,
            deferred: VecDeque::new(),
            last_report: Instant::now(),
            live: LiveReport::new(),
            log,
            logging,
            received: Instant::now(),
        };
        controller.pending_notes(None);
        for note in notes {
            controller.message(&format!("ERROR {note}"));
        }
        controller.apply_clock();
        controller
    }

    // ---- output ----------------------------------------------------------

    /// Writes one whole line and flushes it.
    fn send(&mut self, line: &str) {
        tracing::info!("> {line}");
        // A failed write means the manager is gone; the next read ends us.
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    /// The cell at protocol coordinates on the current board.
    fn point(&self, c: Coord) -> Result<Point, MoveError> {
        self.engine.board().point(c.x, c.y)
    }

    fn reply(&mut self, line: BrainLine) {
        self.send(&line.to_string());
    }

    fn error(&mut self, what: &str) {
        self.reply(BrainLine::Error(what.to_string()));
    }

    fn message(&mut self, what: &str) {
        self.reply(BrainLine::Message(what.to_string()));
    }

    /// The moment the current input line was read.
    pub fn set_received(&mut self, at: Instant) {
        self.received = at;
    }

    pub fn log_input(&self, line: &str) {
        tracing::info!("< {}", line.trim_end());
    }

    /// Messages to show once they exist (network fallback, device).
    fn pending_notes(&mut self, note: Option<String>) {
        if let Some(device) = self.networks.device_note.take() {
            self.message(&device);
        }
        if let Some(note) = note {
            self.message(&format!("ERROR {note}"));
        }
    }

    // ---- the loop's two entry points -------------------------------------

    /// Whether a search that must answer (not a ponder) is running.
    fn busy(&self) -> bool {
        self.task.as_ref().is_some_and(|t| *t != Task::Ponder) && self.engine.is_searching()
    }

    /// Handles one command; false means END.
    ///
    /// Commands run in the order they arrive. A search that must answer
    /// holds back the commands after it until it has answered, except END
    /// and STOP (obeyed at once), INFO evaluate, and the clock settings
    /// (Piskvork's "move now" is `INFO timeout_turn 0` during the search).
    pub fn handle(&mut self, command: Command) -> bool {
        match &command {
            Command::End => return false,
            Command::Stop => {
                self.stop_search();
                return true;
            }
            Command::Info { key, value } if self.busy() => {
                if key == "evaluate" {
                    return self.execute(command);
                }
                if is_clock_key(key) {
                    let move_now = key == "timeout_turn" && !self.yixin && value.trim() == "0";
                    let result = self.execute(command);
                    if move_now {
                        self.stop_search();
                    }
                    return result;
                }
            }
            _ => {}
        }
        if self.busy() || !self.deferred.is_empty() {
            self.deferred.push_back(command);
            return true;
        }
        self.dispatch(command)
    }

    /// Runs a command now; anything but a setting ends a ponder first.
    fn dispatch(&mut self, command: Command) -> bool {
        let is_setting = matches!(&command, Command::Info { .. });
        if self.task == Some(Task::Ponder) && !is_setting {
            self.engine.stop();
            self.task = None;
        }
        self.execute(command)
    }

    /// Called often: finishes searches, writes analysis output, and runs
    /// the commands held back during a search.
    pub fn tick(&mut self) {
        if let Some(finished) = self.engine.poll() {
            self.finish(finished);
        } else if self.engine.is_searching() && self.last_report.elapsed() >= REPORT_EVERY {
            self.last_report = Instant::now();
            self.realtime_report();
        }
        while !self.busy() {
            let Some(command) = self.deferred.pop_front() else {
                break;
            };
            if !self.dispatch(command) {
                // END was held back behind a search that has now ended.
                self.deferred.clear();
                self.deferred.push_back(Command::End);
                return;
            }
        }
    }

    /// Runs until every command received so far is answered: the search
    /// that must answer finishes (within its time limit), the commands held
    /// behind it run. A ponder is not waited for.
    pub fn drain(&mut self) {
        loop {
            self.tick();
            if self.wants_exit() || (!self.busy() && self.deferred.is_empty()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Stops everything before exiting.
    pub fn shutdown(&mut self) {
        self.engine.stop();
        self.task = None;
        let _ = self.out.flush();
    }

    /// Whether END is waiting behind a finished search.
    pub fn wants_exit(&self) -> bool {
        self.deferred.front() == Some(&Command::End) && !self.engine.is_searching()
    }

    // ---- commands --------------------------------------------------------

    fn execute(&mut self, command: Command) -> bool {
        match command {
            Command::End => return false,
            Command::Start { width, height } => self.start(width, height),
            Command::Restart => {
                let size = self.engine.board().size();
                self.engine.new_game(size, self.rule);
                self.blocked = CellSet::new();
                self.reply(BrainLine::Ok);
            }
            Command::Begin => {
                if self.engine.board().stone_count() > 0 {
                    self.error("BEGIN on a board with stones: send START or RESTART first");
                } else {
                    self.think(Task::Move);
                }
            }
            Command::Turn(c) => {
                let color = self.engine.board().side_to_move();
                match self.point(c).and_then(|p| self.engine.place(p, color)) {
                    Ok(()) => self.think(Task::Move),
                    Err(e) => self.error(&format!("TURN {c}: {e}")),
                }
            }
            Command::Play(c) => {
                let color = self.engine.board().side_to_move();
                match self.point(c) {
                    Ok(p) => match self.engine.place(p, color) {
                        Ok(()) => self.reply(BrainLine::Move(p.into())),
                        Err(e) => self.error(&format!("PLAY {c}: {e}")),
                    },
                    Err(e) => self.error(&format!("PLAY {c}: {e}")),
                }
            }
            Command::Takeback(c) => match self
                .point(c)
                .map_err(|e| e.to_string())
                .and_then(|p| self.engine.take_back(p))
            {
                Ok(_) => self.reply(BrainLine::Ok),
                Err(e) => self.error(&format!("TAKEBACK {c}: {e}")),
            },
            Command::Block { kind, stones } => self.block(kind, stones),
            Command::Info { key, value } => self.info(&key, &value),
            Command::About => self.send(&format!(
                "name=\"{NAME}\", version=\"{VERSION}\", author=\"The Wuzi developers\", country=\"International\", \
                 www=\"https://github.com/wuzi-engine/wuzi\", email=\"wuzi@users.noreply.github.com\""
            )),
            Command::Ponder(ms) => {
                let limit = ms.map(|ms| Duration::from_millis(ms.max(0) as u64));
                self.engine.start(SearchKind::Ponder(limit));
                self.task = Some(Task::Ponder);
            }
            Command::Stop => self.stop_search(),
            Command::ClearHash => self.engine.clear_cache(),
            Command::ProtocolVersion => self.send("1,0"),
            Command::YxShowInfo => {
                self.yixin = true;
                self.message("INFO MAX_THREAD_NUM 64");
                self.message("INFO MAX_HASH_SIZE 24");
                self.message(&format!("{NAME} {VERSION}"));
                self.apply_clock();
            }
            Command::YxShowForbid => {
                let line = self.forbid_line(true);
                self.send(&line);
            }
            Command::YxNbest(n) => self.think(Task::NBest(n)),
            Command::YxSearchDefend => self.think(Task::NBest(64)),
            Command::YxBalance { moves, .. } => {
                let board = self.engine.board().clone();
                let found = self.balance(&board, moves as usize);
                if found.is_empty() {
                    self.error("no move can balance this position");
                } else {
                    let line = found.iter().map(Point::to_string).collect::<Vec<_>>().join(" ");
                    self.send(&line);
                    self.keep_proposed(board, &found);
                }
            }
            Command::YxBlockReset => self.blocked = CellSet::new(),
            Command::YxSwap2Step(step) => self.yixin_swap2(step),
            Command::Ignored(_) => {}
            Command::Unknown(line) => {
                // Yixin-Board sends many commands engines need not know; once
                // it is detected they are ignored silently (as Rapfi does).
                if !self.yixin {
                    self.reply(BrainLine::Unknown(line));
                }
            }
            Command::Malformed(why) => self.error(&why),
        }
        true
    }

    fn start(&mut self, width: i64, height: i64) {
        let size = u32::try_from(width)
            .ok()
            .zip(u32::try_from(height).ok())
            .and_then(|(w, h)| BoardSize::new(w, h).ok());
        let Some(size) = size else {
            self.error(&format!(
                "unsupported board size {width}x{height}: each side must be 5..=32"
            ));
            return;
        };
        self.engine.new_game(size, self.rule);
        self.blocked = CellSet::new();
        if self.logging {
            match self.log.start_new(&self.config.log.dir) {
                Ok(path) => tracing::info!("log started: {}", path.display()),
                Err(e) => {
                    self.logging = false;
                    self.message(&format!(
                        "cannot write logs to {}: {e}",
                        self.config.log.dir.display()
                    ));
                }
            }
        }
        self.reply(BrainLine::Ok);
    }

    fn block(&mut self, kind: BlockKind, stones: Vec<Stone>) {
        match kind {
            BlockKind::Board | BlockKind::YxBoard => match self.position_of(&stones) {
                Ok(board) => {
                    self.engine.set_board(board);
                    if kind == BlockKind::Board {
                        self.think(Task::Move);
                    }
                }
                Err(e) => self.error(&e),
            },
            BlockKind::ShowForbid => match self.position_of(&stones) {
                Ok(mut board) => {
                    let line = self.forbid_line_of(&mut board, false);
                    self.engine.set_board(board);
                    self.send(&line);
                }
                Err(e) => self.error(&e),
            },
            BlockKind::Swap2Board | BlockKind::SwapBoard => {
                self.swap_board(kind == BlockKind::Swap2Board, &stones)
            }
            BlockKind::Balance(n) => match self.position_of(&stones) {
                Ok(board) => {
                    let found = self.balance(&board, n as usize);
                    self.engine.set_board(board);
                    if found.len() < n as usize {
                        self.error(&format!(
                            "only {} balancing move(s) exist here",
                            found.len()
                        ));
                    } else {
                        let line = found
                            .iter()
                            .map(Point::to_string)
                            .collect::<Vec<_>>()
                            .join(" ");
                        self.send(&line);
                    }
                }
                Err(e) => self.error(&e),
            },
            BlockKind::YxBlock | BlockKind::YxBlockUndo => {
                let size = self.engine.board().size();
                for s in stones {
                    if let Some(p) = i32::try_from(s.at.x)
                        .ok()
                        .zip(i32::try_from(s.at.y).ok())
                        .and_then(|(x, y)| size.point(x, y))
                    {
                        if kind == BlockKind::YxBlock {
                            self.blocked.insert(p);
                        } else {
                            self.blocked.remove(p);
                        }
                    }
                }
            }
            BlockKind::Ignored(_) => {}
        }
    }

    /// The position a block describes: stones in order, field 1 for the side
    /// to move and 2 for the other (missing fields alternate from black), in
    /// any numbers; the first stone is black (as Rapfi reads it).
    /// The current board is left alone; errors say what is wrong.
    fn position_of(&self, stones: &[Stone]) -> Result<Board, String> {
        let size = self.engine.board().size();
        let mut board = Board::new(size, self.rule);
        if let Some(stone) = stones
            .iter()
            .find(|s| s.field.is_some_and(|f| f != 1 && f != 2))
        {
            return Err(match stone.field {
                Some(3) => format!(
                    "BOARD: stone {} has field 3 (a continuous-game blocked stone), which is not supported",
                    stone.at
                ),
                Some(f) => format!("BOARD: stone {} has field {f}; expected 1 or 2", stone.at),
                None => String::new(),
            });
        }
        let fielded = stones.iter().any(|s| s.field.is_some());
        // The first stone is black (the stones come in playing order), which
        // gives the side to move its colour. The fields need not alternate:
        // puzzles, renju problems and a GUI's edit mode send any position,
        // and it is then the side to move's turn whatever the counts.
        let to_move = if !fielded {
            if stones.len() % 2 == 0 {
                Color::Black
            } else {
                Color::White
            }
        } else {
            match stones.first().and_then(|s| s.field) {
                Some(2) => Color::White,
                _ => Color::Black,
            }
        };
        for (i, stone) in stones.iter().enumerate() {
            let color = match stone.field {
                Some(1) => to_move,
                Some(_) => to_move.opponent(),
                None if i % 2 == 0 => Color::Black,
                None => Color::White,
            };
            let p = board
                .point(stone.at.x, stone.at.y)
                .map_err(|e| format!("BOARD: {e}"))?;
            board.place(p, color).map_err(|e| format!("BOARD: {e}"))?;
        }
        board.set_side_to_move(to_move);
        Ok(board)
    }

    // ---- INFO -------------------------------------------------------------

    fn info(&mut self, key: &str, value: &str) {
        let number = || value.trim().parse::<i64>();
        let bad = |this: &mut Controller, what: &str| {
            this.message(&format!("ERROR INFO {key} {value}: {what}"));
        };
        match key {
            "timeout_turn" | "timeout_match" | "time_left" | "time_increment" | "protocol_lag" => {
                let Ok(v) = number() else { return bad(self, "expected an integer (milliseconds)") };
                match key {
                    "timeout_turn" => self.timeout_turn = v,
                    "timeout_match" => self.timeout_match = v,
                    "time_left" => self.time_left = v,
                    "time_increment" => self.increment = v.max(0),
                    _ => self.lag = v.max(0),
                }
                self.apply_clock();
            }
            "max_memory" => match number() {
                Ok(bytes) => {
                    let limit = if bytes <= 0 { usize::MAX } else { bytes as usize };
                    self.engine.configure(|c| c.max_memory = limit);
                    self.check_memory_limit(limit);
                }
                Err(_) => bad(self, "expected a number of bytes"),
            },
            "hash_size" => match number() {
                // Yixin-Board: KiB.
                Ok(kib) if kib > 0 => self.engine.configure(|c| c.max_memory = (kib as usize).saturating_mul(1024)),
                Ok(_) => {}
                Err(_) => bad(self, "expected a size in KiB"),
            },
            "rule" => match number() {
                Ok(2) if self.yixin => self.set_rule(Rule::Renju),
                Ok(v) => match u64::try_from(v).ok().and_then(|v| Rule::from_gomocup(v).ok()) {
                    Some(rule) => self.set_rule(rule),
                    None => bad(self, "unsupported rule: expected 0 (freestyle), 1 (standard), 4 (renju) or 8 (caro)"),
                },
                Err(_) => bad(self, "expected a rule number"),
            },
            "max_depth" => match number() {
                Ok(v) => self.engine.limits.max_depth = (v > 0).then(|| v.min(u32::MAX as i64) as u32),
                Err(_) => bad(self, "expected an integer"),
            },
            "max_node" => match number() {
                Ok(v) => self.engine.limits.max_playouts = (v > 0).then_some(v as u64),
                Err(_) => bad(self, "expected an integer"),
            },
            "thread_num" => match number() {
                Ok(v) if v >= 1 => self.engine.configure(|c| c.threads = v.min(256) as usize),
                _ => bad(self, "expected a number of threads, at least 1"),
            },
            "style" => match number() {
                Ok(v @ 0..=4) => self.engine.configure(|c| c.style = v as u8),
                _ => bad(self, "expected 0..4"),
            },
            "analysis_mode" => match number() {
                Ok(v @ 0..=1) => self.analysis_mode = v == 1,
                _ => bad(self, "expected 0 or 1"),
            },
            "auto_pondering" | "pondering" => match number() {
                Ok(v @ 0..=1) => self.auto_ponder = v == 1,
                _ => bad(self, "expected 0 or 1"),
            },
            "show_detail" => match number() {
                Ok(v) if v >= 0 => self.show_detail = (v & 3) as u8,
                _ => bad(self, "expected a bit mask 0..3"),
            },
            "caution_factor" => match number() {
                Ok(v @ 0..=5) => self.engine.configure(|c| c.candidate_distance = 1 + v.min(3) as u8),
                _ => bad(self, "expected 0..5"),
            },
            "evaluate" => self.evaluate(value),
            // Known keys with nothing to change here.
            "game_type" | "folder" | "vcthread" | "checkmate" | "nbestsym" | "start_depth" | "usedatabase"
            | "database_readonly" | "thread_split_depth" => {}
            _ => {}
        }
    }

    fn apply_clock(&mut self) {
        let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
        let turn = if self.timeout_turn < 0 || (self.yixin && self.timeout_turn == 0) {
            None
        } else {
            Some(ms(self.timeout_turn))
        };
        let left =
            (self.timeout_match != 0 && self.time_left < UNLIMITED_MS).then(|| ms(self.time_left));
        self.engine.time.turn = turn;
        self.engine.time.left = left;
        self.engine.time.increment = ms(self.increment);
        self.engine.time.lag = ms(self.lag);
    }

    fn set_rule(&mut self, rule: Rule) {
        if rule == self.rule {
            return;
        }
        self.rule = rule;
        // The same stones under the new rule.
        let old = self.engine.board().clone();
        let mut board = Board::new(old.size(), rule);
        for &(p, c) in old.history() {
            let _ = board.place(p, c);
        }
        board.set_side_to_move(old.side_to_move());
        self.engine.set_board(board);
        let (service, note) = self.networks.service_for(rule);
        self.engine.set_service(service);
        self.pending_notes(note);
    }

    /// Says so when `limit` (bytes, the whole process's) is below what the
    /// engine holds without a tree plus the margin and the smallest tree.
    fn check_memory_limit(&mut self, limit: usize) {
        const MB: f64 = (1 << 20) as f64;
        let Some(used) = memory::process_private_bytes() else {
            return;
        };
        let baseline = used.saturating_sub(self.engine.tree_bytes());
        let floor = memory::minimum_limit(baseline);
        if limit < floor {
            self.message(&format!(
                "max_memory {:.0} MB is below the {:.0} MB this engine needs ({:.0} MB for its \
                 code and network): searching with the smallest tree ({:.0} MB)",
                limit as f64 / MB,
                floor as f64 / MB,
                baseline as f64 / MB,
                memory::MIN_TREE as f64 / MB
            ));
        }
    }

    /// INFO evaluate [x,y ...]: the statistics of that node, as a MESSAGE
    /// (saying so when the path is not a position of the tree).
    fn evaluate(&mut self, value: &str) {
        let mut path = Vec::new();
        for token in value.split_whitespace() {
            let point = token.parse::<Coord>().ok().and_then(|c| self.point(c).ok());
            match point {
                Some(p) => path.push(p),
                None => {
                    self.message(&format!("evaluate {}: not a move on this board", token));
                    return;
                }
            }
        }
        match self.engine.report(&path, 5) {
            Some(report) => {
                let ev = report.proven.ev_text(report.wdl[0] + 0.5 * report.wdl[1]);
                let mut line = format!(
                    "MESSAGE evaluate {} n {} ev {ev} winrate {:.1} drawrate {:.1} pv",
                    if value.trim().is_empty() {
                        "root"
                    } else {
                        value.trim()
                    },
                    report.visits,
                    100.0 * report.wdl[0],
                    100.0 * report.wdl[1]
                );
                line.push_str(&Notation::Gomocup.line(report.side_to_move, &report.pv));
                let moves: Vec<String> = report.moves.iter().map(move_summary).collect();
                if !moves.is_empty() {
                    line.push_str(" top ");
                    line.push_str(&moves.join(" "));
                }
                self.send(&line);
            }
            None => self.message(&format!(
                "evaluate {}: not searched",
                if value.trim().is_empty() {
                    "root"
                } else {
                    value.trim()
                }
            )),
        }
    }

    // ---- searches ---------------------------------------------------------

    fn think(&mut self, task: Task) {
        if self.engine.board().outcome().is_some() {
            self.error("the game is over on this board");
            return;
        }
        self.engine.limits.excluded = self.blocked;
        // The manager's clock started when the request arrived; what came
        // before the search (settings, a network switch) took part of it.
        self.engine.start_since(SearchKind::Think, self.received);
        self.task = Some(task);
        self.last_report = Instant::now();
        self.live = LiveReport::new();
    }

    fn stop_search(&mut self) {
        match self.engine.stop() {
            // A stopped ponder says nothing; a stopped think answers now.
            Some(finished) => self.finish(finished),
            None => self.task = None,
        }
    }

    /// How moves are written in text: Yixin-Board's own labels once the GUI
    /// is detected (it sends row,col, so they are transposed), the extended
    /// Gomocup PV notation otherwise.
    fn notation(&self) -> Notation {
        if self.yixin {
            Notation::Labels {
                size: self.engine.board().size(),
                transposed: true,
            }
        } else {
            Notation::Gomocup
        }
    }

    fn finish(&mut self, finished: Finished) {
        let Some(task) = self.task.take() else { return };
        let result = finished.result;
        tracing::info!("search: {}", result.summary());
        match task {
            Task::Ponder => {}
            Task::Move => {
                self.final_reports(&result, 1);
                self.message(&result.summary_in(self.notation()));
                self.answer_move(&result);
            }
            Task::NBest(n) => {
                self.final_reports(&result, n as usize);
                self.message(&result.summary_in(self.notation()));
                self.answer_move(&result);
            }
            Task::Swap {
                stones,
                swap2,
                yixin,
            } => self.swap_decision(&result, stones, swap2, yixin),
        }
    }

    /// Our move: played on our board and answered, or suggested.
    fn answer_move(&mut self, result: &SearchResult) {
        let color = self.engine.board().side_to_move();
        let mut board = self.engine.board().clone();
        let mv = match result.best_move {
            Some(mv) if is_legal_for(&mut board, mv, color) => mv,
            // A search must always name a legal move; should one ever not,
            // a manager would score the silence as a loss, so the move
            // comes from the game's own board instead.
            chosen => match fallback_move(&mut board) {
                Some(mv) => {
                    tracing::warn!("search answered {chosen:?}; playing the fallback {mv}");
                    mv
                }
                None => {
                    self.error("no legal move: every empty cell is forbidden or the board is full");
                    return;
                }
            },
        };
        if self.analysis_mode {
            self.reply(BrainLine::Suggest(mv.into()));
            return;
        }
        if let Err(e) = self.engine.place(mv, color) {
            self.error(&format!("internal: our move {mv}: {e}"));
            return;
        }
        self.reply(BrainLine::Move(mv.into()));
        if self.auto_ponder && self.engine.board().outcome().is_none() {
            self.engine.start(SearchKind::Ponder(None));
            self.task = Some(Task::Ponder);
        }
    }

    /// Yixin-Board analysis output during a search: the best move and the
    /// lost moves marked (show_detail bit 0), the top moves' INFO blocks
    /// with their whole lines (bit 1), and a summary line for the log panel
    /// every second.
    fn realtime_report(&mut self) {
        if !self.yixin || self.show_detail == 0 || self.task == Some(Task::Ponder) {
            return;
        }
        let n = match self.task {
            Some(Task::NBest(n)) => n as usize,
            _ => 1,
        };
        let Some(report) = self.engine.report(&[], n.max(1)) else {
            return;
        };
        let elapsed = self.live.started.elapsed();
        if self.show_detail & 1 != 0 {
            if let Some(best) = report.moves.first() {
                if self.live.best != Some(best.mv) {
                    // A new best: the GUI's searched marks start over.
                    self.message("REALTIME REFRESH");
                    self.live.best = Some(best.mv);
                }
                self.message(&format!("REALTIME BEST {}", best.mv));
            }
            for m in report
                .moves
                .iter()
                .filter(|m| matches!(m.proven, Proven::Loss(_)))
            {
                self.message(&format!("REALTIME LOSE {}", m.mv));
            }
        }
        if self.show_detail & 2 != 0 {
            let searched: Vec<MoveStats> = report
                .moves
                .iter()
                .filter(|m| m.visits > 0 || m.proven != Proven::Unknown)
                .cloned()
                .collect();
            self.pv_blocks(&searched, report.visits, elapsed.as_millis() as u64);
        }
        if self.live.last_summary.elapsed() >= SUMMARY_EVERY {
            self.live.last_summary = Instant::now();
            let line = self.live_summary(&report, elapsed);
            self.message(&format!("{line}"));
        }
    }

    /// A summary line from the tree mid-search (the root's visits as `n`).
    fn live_summary(&self, report: &NodeReport, elapsed: Duration) -> String {
        let notation = self.notation();
        let ev = report.proven.ev_text(report.wdl[0] + 0.5 * report.wdl[1]);
        let mut line = format!(
            "depth 1-{} ev {ev} winrate {:.1} drawrate {:.1} n {} tm {} pv",
            report.pv.len().max(1),
            100.0 * report.wdl[0],
            100.0 * report.wdl[1],
            report.visits,
            elapsed.as_millis()
        );
        line.push_str(&notation.line(report.side_to_move, &report.pv));
        line
    }

    fn final_reports(&mut self, result: &SearchResult, n: usize) {
        if !self.yixin || self.show_detail & 2 == 0 {
            return;
        }
        // Only searched moves: an unvisited one has no value to show (the
        // GUI would paint it 0%), and proven ones carry theirs.
        let moves: Vec<MoveStats> = result
            .moves
            .iter()
            .filter(|m| m.visits > 0 || m.proven != Proven::Unknown)
            .take(n.max(1))
            .cloned()
            .collect();
        // The tree is reused across moves, so a move's visits may exceed this
        // search's playouts: the total is the root's visits, never less.
        let total = result
            .moves
            .iter()
            .map(|m| m.visits)
            .sum::<u32>()
            .max(result.counters.playouts as u32);
        self.pv_blocks(&moves, total, result.elapsed.as_millis() as u64);
    }

    /// Yixin-Board's per-PV INFO blocks: each move with its whole line (the
    /// search's best continuation after it) and the depth, which never
    /// falls within a search (the GUI clears the tags of moves last seen at
    /// a lower depth).
    fn pv_blocks(&mut self, moves: &[MoveStats], total: u32, ms: u64) {
        let count = moves.len();
        let lines: Vec<Vec<Point>> = moves
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut line = vec![m.mv];
                if i < LINES_SHOWN {
                    if let Some(after) = self.engine.report(&[m.mv], 0) {
                        line.extend(after.pv);
                    }
                }
                line
            })
            .collect();
        let longest = lines.iter().map(Vec::len).max().unwrap_or(1) as u32;
        self.live.depth = self.live.depth.max(longest);
        let depth = self.live.depth;
        let speed = if ms > 0 { total as u64 * 1000 / ms } else { 0 };
        for (i, (m, line)) in moves.iter().zip(&lines).enumerate() {
            let eval = match m.proven {
                Proven::Win(d) => format!("+M{d}"),
                Proven::Loss(d) => format!("-M{d}"),
                _ => format!("{}", ((m.wdl[0] - m.wdl[2]) * 1000.0).round() as i64),
            };
            let winrate = match m.proven {
                Proven::Win(_) => 1.0,
                Proven::Loss(_) => 0.0,
                _ => m.wdl[0] + 0.5 * m.wdl[1],
            };
            let bestline: Vec<String> = line.iter().map(Point::to_string).collect();
            let block = [
                format!("INFO PV {i}"),
                format!("INFO NUMPV {count}"),
                format!("INFO DEPTH {depth}"),
                format!("INFO SELDEPTH {}", line.len()),
                format!("INFO NODES {}", m.visits),
                format!("INFO TOTALNODES {total}"),
                format!("INFO TOTALTIME {ms}"),
                format!("INFO SPEED {speed}"),
                format!("INFO EVAL {eval}"),
                format!("INFO WINRATE {winrate:.4}"),
                format!("INFO BESTLINE {}", bestline.join(" ")),
                "INFO PV DONE".to_string(),
            ];
            for text in block {
                self.send(&text);
            }
        }
    }

    // ---- forbidden points ---------------------------------------------------

    fn forbid_line(&mut self, yixin: bool) -> String {
        let mut board = self.engine.board().clone();
        self.forbid_line_of(&mut board, yixin)
    }

    /// `FORBID x,y x,y` (extended Gomocup) or `FORBID RRCC....` (Yixin).
    fn forbid_line_of(&self, board: &mut Board, yixin: bool) -> String {
        let points =
            if board.rule() == Rule::Renju && (!yixin || board.side_to_move() == Color::Black) {
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
            let list: Vec<String> = points.iter().map(Point::to_string).collect();
            format!("FORBID {}", list.join(" ")).trim_end().to_string()
        }
    }

    // ---- swap rules ---------------------------------------------------------

    fn swap_board(&mut self, swap2: bool, stones: &[Stone]) {
        let name = if swap2 { "SWAP2BOARD" } else { "SWAPBOARD" };
        let valid_counts: &[usize] = if swap2 { &[0, 3, 5] } else { &[0, 3] };
        if !valid_counts.contains(&stones.len()) {
            self.error(&format!(
                "{name} expects {valid_counts:?} stones, got {}",
                stones.len()
            ));
            return;
        }
        // Swap blocks list stones in playing order, usually without fields.
        let plain: Vec<Stone> = stones
            .iter()
            .map(|s| Stone {
                at: s.at,
                field: None,
            })
            .collect();
        let board = match self.position_of(&plain) {
            Ok(b) => b,
            Err(e) => return self.error(&e.replace("BOARD", name)),
        };
        self.engine.set_board(board.clone());
        if stones.is_empty() {
            let moves = self.opening_stones();
            if moves.len() == 3 {
                let line = moves
                    .iter()
                    .map(Point::to_string)
                    .collect::<Vec<_>>()
                    .join(" ");
                self.send(&line);
            } else {
                self.error("cannot choose opening stones on this board");
            }
            return;
        }
        self.think(Task::Swap {
            stones: stones.len(),
            swap2,
            yixin: false,
        });
    }

    /// Time for choosing balancing moves: the move's time budget, at most
    /// 2 s (Rapfi spends about that), at least 0.1 s.
    fn balance_time(&self) -> Duration {
        self.engine
            .budget()
            .map_or(Duration::from_secs(2), |b| b.target)
            .clamp(Duration::from_millis(100), Duration::from_secs(2))
    }

    /// `count` balancing moves from `board` (see [`balancing_moves`]).
    fn balance(&mut self, board: &Board, count: usize) -> Vec<Point> {
        let time = self.balance_time();
        balancing_moves(&mut self.engine, board, count, time)
    }

    /// Three opening stones that leave the position even.
    fn opening_stones(&mut self) -> Vec<Point> {
        let board = Board::new(self.engine.board().size(), self.rule);
        self.balance(&board, 3)
    }

    /// After searching the position the opponent handed us (we would play
    /// white): swap when white's prospects are poor, otherwise stay white,
    /// or (swap2, 3 stones) hand the choice back with two balancing stones.
    fn swap_decision(&mut self, result: &SearchResult, stones: usize, swap2: bool, yixin: bool) {
        let value = match result.proven {
            Proven::Win(_) => 1.0,
            Proven::Loss(_) => 0.0,
            _ => result.expectation,
        };
        let take_black = value < if swap2 && stones == 3 { 0.42 } else { 0.5 };
        let balance = swap2 && stones == 3 && !take_black && value < 0.58;
        if yixin {
            let step = if stones == 3 { "SWAP1" } else { "SWAP2" };
            if take_black {
                self.message(&format!("SWAP2 {step} YES"));
            } else if balance {
                let moves = self.balance(&self.engine.board().clone(), 2);
                if let [m4, m5] = moves[..] {
                    self.message(&format!("SWAP2 MOVE4 {} {}", m4.x(), m4.y()));
                    self.message(&format!("SWAP2 MOVE5 {} {}", m5.x(), m5.y()));
                    self.keep_proposed(self.engine.board().clone(), &moves);
                } else {
                    self.message(&format!("SWAP2 {step} NO"));
                }
            } else {
                self.message(&format!("SWAP2 {step} NO"));
            }
            return;
        }
        if take_black {
            self.send("SWAP");
        } else if balance {
            let moves = self.balance(&self.engine.board().clone(), 2);
            match moves[..] {
                [m4, m5] => self.send(&format!("{m4} {m5}")),
                _ => self.answer_swap_move(result),
            }
        } else {
            self.answer_swap_move(result);
        }
    }

    fn answer_swap_move(&mut self, result: &SearchResult) {
        match result.best_move {
            Some(mv) => self.reply(BrainLine::Move(mv.into())),
            None => self.error("no legal move"),
        }
    }

    /// Stones the engine proposes to Yixin-Board (balancing moves, swap2
    /// stones) go on its own board too: the GUI places them and then asks
    /// about the position (yxshowforbid, a search) without sending it again.
    fn keep_proposed(&mut self, mut board: Board, moves: &[Point]) {
        for &m in moves {
            if board.play(m).is_err() {
                return;
            }
        }
        self.engine.set_board(board);
    }

    fn yixin_swap2(&mut self, step: u8) {
        match step {
            1 => {
                let moves = self.opening_stones();
                for (i, m) in moves.iter().enumerate() {
                    self.message(&format!("SWAP2 MOVE{} {} {}", i + 1, m.x(), m.y()));
                }
                let empty = Board::new(self.engine.board().size(), self.rule);
                self.keep_proposed(empty, &moves);
            }
            _ => {
                let stones = self.engine.board().stone_count();
                self.think(Task::Swap {
                    stones,
                    swap2: true,
                    yixin: true,
                });
            }
        }
    }
}

/// INFO keys of the clock, applied even during a search.
fn is_clock_key(key: &str) -> bool {
    matches!(
        key,
        "timeout_turn" | "timeout_match" | "time_left" | "time_increment" | "protocol_lag"
    )
}

fn move_summary(m: &MoveStats) -> String {
    let value = m.proven.ev_text(m.wdl[0] + 0.5 * m.wdl[1]);
    format!("{}:{}:{value}", m.mv, m.visits)
}
