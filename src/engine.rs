//! The engine API that every protocol drives: the game, the settings, and
//! a search running in the background so that STOP and END are obeyed at
//! once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::RwLock;

use crate::game::{Board, BoardSize, Color, MoveError, Point, Rule};
use crate::nn::EvalService;
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::{SearchConfig, SearchLimits, SearchResult, Searcher, TimeBudget, TimeControl};

/// What a background search is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchKind {
    /// Find our move, within the time control.
    Think,
    /// Think on the opponent's time (or on request), for at most the given
    /// time; no move comes of it.
    Ponder(Option<Duration>),
    /// Analysis: search until stopped.
    Analyse,
}

/// A finished search.
#[derive(Clone, Debug)]
pub struct Finished {
    pub kind: SearchKind,
    pub result: SearchResult,
    /// The position searched.
    pub board: Board,
}

struct Running {
    kind: SearchKind,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<SearchResult>,
    board: Board,
}

/// Statistics of one searched position (`INFO evaluate`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeReport {
    pub visits: u32,
    /// Win, draw, loss for the side to move there.
    pub wdl: [f32; 3],
    pub proven: Proven,
    /// Its moves, most visited first.
    pub moves: Vec<MoveStats>,
    pub pv: Vec<Point>,
    pub side_to_move: Color,
}

/// The engine: one game, one searcher.
pub struct Engine {
    board: Board,
    searcher: Arc<RwLock<Searcher>>,
    /// The clock (INFO timeout_turn, time_left, ...).
    pub time: TimeControl,
    /// Playout and depth limits per move (INFO max_node, max_depth).
    pub limits: SearchLimits,
    running: Option<Running>,
}

impl Engine {
    pub fn new(
        service: Arc<EvalService>,
        config: SearchConfig,
        size: BoardSize,
        rule: Rule,
    ) -> Engine {
        Engine {
            board: Board::new(size, rule),
            searcher: Arc::new(RwLock::new(Searcher::new(service, config))),
            time: TimeControl::default(),
            limits: SearchLimits::default(),
            running: None,
        }
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    /// A new game (the cache is kept: positions may recur across games).
    pub fn new_game(&mut self, size: BoardSize, rule: Rule) {
        self.stop();
        self.board = Board::new(size, rule);
    }

    /// Plays a move for the side to move, refusing what the rules refuse
    /// (forbidden moves included); the position is unchanged on error.
    pub fn play(&mut self, p: Point) -> Result<(), MoveError> {
        self.stop();
        let color = self.board.side_to_move();
        self.board
            .check_move(i64::from(p.x()), i64::from(p.y()), color)?;
        self.board.play(p)
    }

    /// Places a stone of `color` without the forbidden-move check (set-up
    /// commands describe positions as they are); the position is unchanged
    /// on error.
    pub fn place(&mut self, p: Point, color: Color) -> Result<(), MoveError> {
        self.stop();
        self.board.place(p, color)
    }

    /// Takes back the last move if it is `p`; otherwise says which move is
    /// last.
    pub fn take_back(&mut self, p: Point) -> Result<(), String> {
        self.stop();
        let last = self
            .board
            .last_move()
            .ok_or_else(|| "no move to take back".to_string())?;
        if p != last {
            return Err(format!("{p} is not the last move; the last move is {last}"));
        }
        self.board.undo();
        Ok(())
    }

    /// Replaces the position (after a set-up), keeping the cache.
    pub fn set_board(&mut self, board: Board) {
        self.stop();
        self.board = board;
    }

    /// Changes the search settings (stops a running search first).
    pub fn configure(&mut self, change: impl FnOnce(&mut SearchConfig)) {
        self.stop();
        change(self.searcher.write().config_mut());
    }

    /// The bytes the search tree holds now.
    pub fn tree_bytes(&self) -> usize {
        self.searcher.read().cache().memory_bytes()
    }

    pub fn config(&self) -> SearchConfig {
        self.searcher.read().config().clone()
    }

    /// Evaluates with another service (a network for another rule).
    pub fn set_service(&mut self, service: Arc<EvalService>) {
        self.stop();
        self.searcher.write().set_service(service);
    }

    /// The network's evaluation of `board` (no search).
    pub fn evaluate(&self, board: &mut Board) -> Option<crate::nn::Evaluation> {
        let service = Arc::clone(self.searcher.read().service());
        service.evaluate(board).ok()
    }

    /// Searches `board` (not the game's position) for about `time`, in this
    /// thread: the balancing commands judge candidate positions this way.
    /// The caller makes sure no background search runs (`&mut self`).
    pub fn search_position(&mut self, board: &Board, time: Duration) -> SearchResult {
        self.stop();
        let limits = SearchLimits {
            time: Some(TimeBudget {
                target: time,
                deadline: time,
            }),
            ..SearchLimits::default()
        };
        self.searcher
            .read()
            .search(board, &limits, &std::sync::atomic::AtomicBool::new(false))
    }

    /// Empties the cache (CLEARHASH).
    pub fn clear_cache(&mut self) {
        self.stop();
        self.searcher.read().cache().clear();
    }

    /// The budget of the next move under the clock.
    pub fn budget(&self) -> Option<TimeBudget> {
        let empty = self.board.size().cell_count() - self.board.stone_count();
        self.time.budget(empty)
    }

    /// Starts a search of the current position in the background (stopping
    /// any running one).
    pub fn start(&mut self, kind: SearchKind) {
        self.start_since(kind, Instant::now());
    }

    /// As [`Engine::start`], for a request received at `since`: the time
    /// already gone (e.g. to settings sent before the request) comes off
    /// the budget of a timed search.
    pub fn start_since(&mut self, kind: SearchKind, since: Instant) {
        self.stop();
        let mut limits = self.limits;
        let gone = since.elapsed();
        limits.time = match kind {
            SearchKind::Think => self.budget().map(|b| TimeBudget {
                target: b.target.saturating_sub(gone).max(Duration::from_millis(1)),
                deadline: b
                    .deadline
                    .saturating_sub(gone)
                    .max(Duration::from_millis(1)),
            }),
            SearchKind::Ponder(Some(t)) => Some(TimeBudget {
                target: t,
                deadline: t,
            }),
            SearchKind::Ponder(None) | SearchKind::Analyse => None,
        };
        if !matches!(kind, SearchKind::Think) {
            limits.max_playouts = None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let board = self.board.clone();
        let searcher = Arc::clone(&self.searcher);
        let (thread_stop, thread_board) = (Arc::clone(&stop), board.clone());
        let handle = std::thread::spawn(move || {
            searcher.read().search(&thread_board, &limits, &thread_stop)
        });
        self.running = Some(Running {
            kind,
            stop,
            handle,
            board,
        });
    }

    pub fn is_searching(&self) -> bool {
        self.running
            .as_ref()
            .is_some_and(|r| !r.handle.is_finished())
    }

    pub fn search_kind(&self) -> Option<SearchKind> {
        self.running.as_ref().map(|r| r.kind)
    }

    /// The finished search, if the background search has ended by itself.
    pub fn poll(&mut self) -> Option<Finished> {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.handle.is_finished())
        {
            return self.join();
        }
        None
    }

    /// Stops the background search, if any, and returns what it found.
    pub fn stop(&mut self) -> Option<Finished> {
        let running = self.running.as_ref()?;
        running.stop.store(true, Ordering::SeqCst);
        self.join()
    }

    /// Waits for the background search to end by itself.
    pub fn wait(&mut self) -> Option<Finished> {
        self.join()
    }

    fn join(&mut self) -> Option<Finished> {
        let running = self.running.take()?;
        let result = running.handle.join().ok()?;
        Some(Finished {
            kind: running.kind,
            result,
            board: running.board,
        })
    }

    /// Searches the current position within the clock and returns the result.
    pub fn think(&mut self) -> Option<SearchResult> {
        self.start(SearchKind::Think);
        self.wait().map(|f| f.result)
    }

    /// Statistics of the position after `path` from the current one, with
    /// up to `top` moves, if it has been searched.
    pub fn report(&self, path: &[Point], top: usize) -> Option<NodeReport> {
        let searcher = self.searcher.read();
        let (board, node) = searcher.node_after(&self.board, path)?;
        let data = node.data.lock();
        let mut moves = MoveStats::of_edges(&data.edges);
        moves.truncate(top);
        let (visits, wdl, proven) = (data.visits, data.wdl(), data.proven);
        drop(data);
        Some(NodeReport {
            visits,
            wdl,
            proven,
            moves,
            pv: searcher.principal_variation(&board, &node, 32),
            side_to_move: board.side_to_move(),
        })
    }

    /// Every point forbidden to black in the current position.
    pub fn forbidden_points(&mut self) -> Vec<Point> {
        self.board.forbidden_points()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}
