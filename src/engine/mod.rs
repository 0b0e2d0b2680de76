//! The engine API that every protocol drives: the game, the settings, and
//! a search running in the background so that STOP and END are obeyed at
//! once. Engine policy (which move to play after a search, balancing, swap
//! decisions, the position under a new rule) lives here, below the
//! protocols.

pub mod opening;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use parking_lot::RwLock;

use crate::game::{Board, BoardSize, CellSet, Color, MoveError, Point, Rule};
use crate::nn::EvalService;
use crate::search::expand::fallback_move_except;
use crate::search::node::Proven;
use crate::search::result::MoveStats;
use crate::search::{SearchConfig, SearchLimits, SearchResult, Searcher, TimeBudget, TimeControl};
use crate::tactics::is_legal_for;

pub use opening::SwapChoice;

/// The least time the pass over the cache before a game's first search
/// may take (see `make_room_for_a_new_game`).
const NEW_GAME_PRUNE_FLOOR: Duration = Duration::from_millis(50);
/// The same pass's allowance without a clock, or off it (a ponder, an
/// analysis).
const NEW_GAME_PRUNE_CAP: Duration = Duration::from_secs(1);

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
    /// Set by the search thread once its result is ready, just before it
    /// sends the wake-up and returns: a poll woken by that message must
    /// find the search over although the thread has not quite exited.
    done: Arc<AtomicBool>,
    handle: JoinHandle<SearchResult>,
    board: Board,
    /// The search has a time or playout limit: it ends without a stop.
    limited: bool,
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

/// Our last move's search: what the next one compares its value with.
#[derive(Clone, Debug)]
struct OwnSearch {
    /// The moves of the position searched, and who was to move there,
    /// under which rule on which board (a value under another rule is no
    /// yardstick).
    history: Vec<(Point, Color)>,
    side_to_move: Color,
    rule: Rule,
    size: BoardSize,
    /// Our expectation at the end of it.
    expectation: f32,
}

impl OwnSearch {
    /// Its expectation, if `board` follows it by one move of each side
    /// (our move, the opponent's answer): the value our next move is
    /// judged against.
    fn expectation_before(&self, board: &Board) -> Option<f32> {
        let now = board.history();
        (now.len() == self.history.len() + 2
            && now.starts_with(&self.history)
            && board.side_to_move() == self.side_to_move
            && board.rule() == self.rule
            && board.size() == self.size)
            .then_some(self.expectation)
    }
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
    last_own: Option<OwnSearch>,
    /// A game started since the last search: see `make_room_for_a_new_game`.
    new_game_room: bool,
    /// Told when a background search ends by itself, so that a protocol
    /// loop waiting for input answers at once instead of at its next poll.
    search_ended: Option<Sender<()>>,
}

impl Engine {
    pub fn new(
        service: Arc<EvalService>,
        config: SearchConfig,
        size: BoardSize,
        rule: Rule,
    ) -> Engine {
        let engine = Engine {
            board: Board::new(size, rule),
            searcher: Arc::new(RwLock::new(Searcher::new(service, config))),
            time: TimeControl::default(),
            limits: SearchLimits::default(),
            running: None,
            last_own: None,
            new_game_room: false,
            search_ended: None,
        };
        engine.fit_evaluators();
        engine
    }

    /// Gives the search as many evaluators as it has threads, where the
    /// configuration says `auto` (see [`EvaluatorThreads`]); one that
    /// cannot start is reported, and those running go on.
    ///
    /// [`EvaluatorThreads`]: crate::nn::EvaluatorThreads
    fn fit_evaluators(&self) {
        if let Err(e) = self.searcher.read().fit_evaluators() {
            tracing::warn!("could not start another evaluator thread: {e}");
        }
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn rule(&self) -> Rule {
        self.board.rule()
    }

    /// Switches to `rule` with its network's `service`: the same stones,
    /// in the same order, under the new rule.
    pub fn set_rule(&mut self, rule: Rule, service: Arc<EvalService>) {
        self.stop();
        self.board = self.board.under_rule(rule);
        self.set_service(service);
    }

    /// The move to play after `result`: its best move when that is legal
    /// here. A search must always name a legal move; should one ever not,
    /// a manager would score the silence as a loss, so the move then comes
    /// from the game's own board. `None` only when no move is legal (every
    /// empty cell forbidden, or the board full).
    pub fn move_to_play(&self, result: &SearchResult) -> Option<Point> {
        let mut board = self.board.clone();
        let color = board.side_to_move();
        let excluded = &self.limits.excluded;
        match result.best_move {
            Some(mv) if !excluded.contains(mv) && is_legal_for(&mut board, mv, color) => Some(mv),
            chosen => {
                // Not a move the GUI blocked or the server refused, while
                // another is legal.
                let mv = fallback_move_except(&mut board, excluded)?;
                tracing::warn!("search answered {chosen:?}; playing the fallback {mv}");
                Some(mv)
            }
        }
    }

    /// The answer of a protocol without a pass (Gomocup, the file
    /// protocol) when no move is legal but cells are empty: every one is
    /// forbidden to black. The search values such a position as lost, and
    /// playing a forbidden cell lets the referee score that loss at once
    /// instead of waiting out the clock for an answer that cannot come.
    pub fn move_or_forbidden(&self, result: &SearchResult) -> Option<Point> {
        self.move_to_play(result).or_else(|| {
            let mv = self.board.empty_cells().next()?;
            tracing::warn!("every empty cell is forbidden to black; playing {mv}");
            Some(mv)
        })
    }

    /// Time for choosing balancing moves: the move's time budget, at most
    /// 2 s (Rapfi spends about that), at least 0.1 s where the turn leaves
    /// that much, and no more than is left of a turn that began at `since`
    /// (when the request came, or a search came first).
    fn balance_time(&self, since: Instant) -> Duration {
        const MAX: Duration = Duration::from_secs(2);
        let Some(budget) = self.budget() else {
            return MAX;
        };
        let left = budget.deadline.saturating_sub(since.elapsed());
        budget
            .target
            .min(left)
            .clamp(Duration::from_millis(100).min(left), MAX)
    }

    /// `count` moves from `board` (colours alternating from its side to
    /// move), each leaving the position as even as the engine can tell
    /// within the balancing time of a turn that began at `since`, or `bias`
    /// (an expectation, -0.5..=0.5) better than even for the side not to
    /// move in `board`; fewer only if no legal move is left.
    pub fn balancing_moves(
        &mut self,
        board: &Board,
        count: usize,
        bias: f32,
        since: Instant,
    ) -> Vec<Point> {
        let time = self.balance_time(since);
        opening::balancing_moves(self, board, count, time, bias)
    }

    /// Three opening stones on an empty board of the game's size and rule
    /// that leave the position even, within the turn of a request received
    /// at `since`.
    pub fn opening_stones(&mut self, since: Instant) -> Vec<Point> {
        let board = Board::new(self.board.size(), self.board.rule());
        self.balancing_moves(&board, 3, 0.0, since)
    }

    /// A new game (the cache is kept: positions may recur across games;
    /// its first search makes room, see [`Engine::start_sharing`]).
    pub fn new_game(&mut self, size: BoardSize, rule: Rule) {
        self.stop();
        self.board = Board::new(size, rule);
        self.new_game_room = true;
    }

    /// Before a game's first search: the search keeps only the root's
    /// descendants once the cache holds half its budget, but the last games
    /// descend from this one's first positions (the same opening with the
    /// colours swapped, or an empty board), so that could keep them all and
    /// the search would stop for memory at once, playing on old numbers.
    /// If the descendants still hold half the budget and few of them were
    /// reached through this root's own search (a GUI that restarts before
    /// every position keeps its tree), the least visited go until half the
    /// budget is free: the old games' unvisited positions first, while the
    /// most searched lines stay (Yixin-Board restarts for an undo too, and
    /// the position before it, never searched itself, used to lose the
    /// whole tree of the one after it).
    fn make_room_for_a_new_game(&mut self, timed_since: Option<Instant>) {
        if !std::mem::take(&mut self.new_game_room) {
            return;
        }
        // On the first move's clock: at most an eighth of its target, as
        // the search's own pass, but not less than what a tournament's
        // tree (350 MB) takes, so that the pruning below can be decided; a
        // pass cut short prunes no further (the search's passes go on).
        // Never more than half the time left to the move's deadline (a
        // move-now or a clock down to its lag leaves milliseconds).
        // For a search off the clock (a ponder, an analysis), or without a
        // clock, at most a second: the pass runs on the protocol's thread,
        // which reads no stop meanwhile.
        let allowance = self.budget().map_or(NEW_GAME_PRUNE_CAP, |budget| {
            let allowance = (budget.target / 8).max(NEW_GAME_PRUNE_FLOOR);
            match timed_since {
                Some(since) => allowance.min(budget.deadline.saturating_sub(since.elapsed()) / 2),
                None => allowance.min(NEW_GAME_PRUNE_CAP),
            }
        });
        let started = Instant::now();
        let searcher = self.searcher.read();
        let cache = searcher.cache();
        if cache.memory_bytes() <= searcher.tree_budget() / 2 {
            return;
        }
        let cut_short = std::cell::Cell::new(false);
        let over = || {
            let over = started.elapsed() > allowance;
            cut_short.set(over);
            over
        };
        cache.keep_descendants_of(&self.board, over);
        let root_visits = cache
            .get(&self.board)
            .map_or(0, |root| root.data.lock().visits as usize);
        if cut_short.get() || root_visits >= cache.node_count() / 4 {
            return;
        }
        let half = searcher.tree_budget() / 2;
        let mut fewest = 2;
        while cache.memory_bytes() > half && fewest < u32::MAX / 2 && !cut_short.get() {
            cache.keep_visited_descendants_of(&self.board, fewest, over);
            fewest *= 2;
        }
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

    /// Changes the search settings (stops a running search first). A
    /// change to the values already set changes nothing, and leaves a
    /// ponder running: managers repeat their settings before moves.
    pub fn configure(&mut self, change: impl FnOnce(&mut SearchConfig)) {
        let old = self.config();
        let mut config = old.clone();
        change(&mut config);
        if config == old {
            return;
        }
        self.stop();
        // Nodes keep the moves and priors they were expanded with: a new
        // move radius or policy temperature needs them expanded again.
        let expanded_differently = config.candidate_distance != old.candidate_distance
            || config.policy_temperature != old.policy_temperature;
        *self.searcher.write().config_mut() = config;
        if expanded_differently {
            self.searcher.read().cache().clear();
        }
        self.fit_evaluators();
    }

    /// The search tree's share of the process's memory measured now
    /// ([`Searcher::tree_share_of_measure`]).
    pub fn tree_share_of_measure(&self, used: usize) -> usize {
        self.searcher.read().tree_share_of_measure(used)
    }

    /// The bytes the solvers' tables may hold beside the tree
    /// ([`Searcher::solver_reserve`]).
    pub fn solver_reserve(&self) -> usize {
        self.searcher.read().solver_reserve()
    }

    pub fn config(&self) -> SearchConfig {
        self.searcher.read().config().clone()
    }

    /// Evaluates with another service (a network for another rule).
    pub fn set_service(&mut self, service: Arc<EvalService>) {
        self.stop();
        self.searcher.write().set_service(service);
        self.fit_evaluators();
    }

    /// Evaluates with `service` from now on, unless it is the one in use:
    /// another network's evaluations would not be the tree's, but the same
    /// network keeps the tree and its cache.
    pub fn use_service(&mut self, service: Arc<EvalService>) {
        if !Arc::ptr_eq(self.searcher.read().service(), &service) {
            self.set_service(service);
        }
    }

    /// What evaluates positions: backend, network size, precision and
    /// instruction set (`None`: no network, tactics only).
    pub fn evaluator_description(&self) -> Option<String> {
        self.searcher
            .read()
            .service()
            .description()
            .map(str::to_string)
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
            time: Some(TimeBudget::fixed(time)),
            ..SearchLimits::default()
        };
        // On the protocol's thread: a failed search must still answer (a
        // background search's failure is answered so in `join`).
        let searched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.searcher
                .read()
                .search(board, &limits, &std::sync::atomic::AtomicBool::new(false))
        }));
        searched.unwrap_or_else(|_| {
            tracing::error!("a balancing search failed; answering with the fallback move");
            self.searcher.read().cache().clear();
            SearchResult::unsearched(board, &CellSet::new())
        })
    }

    /// Empties the cache (CLEARHASH).
    pub fn clear_cache(&mut self) {
        self.stop();
        self.searcher.read().cache().clear();
    }

    /// The budget of the next move under the clock.
    pub fn budget(&self) -> Option<TimeBudget> {
        let empty = self.board.size().cell_count() - self.board.stone_count();
        self.time
            .budget(empty, self.searcher.read().config().match_moves)
    }

    /// Starts a search of the current position in the background (stopping
    /// any running one).
    pub fn start(&mut self, kind: SearchKind) {
        self.start_since(kind, Instant::now());
    }

    /// As [`Engine::start`], for a request received at `since`: the time
    /// manager counts a timed search's budget from there, so that the time
    /// already gone (e.g. to settings sent after the request) comes off it.
    pub fn start_since(&mut self, kind: SearchKind, since: Instant) {
        self.start_sharing(kind, since, 1.0);
    }

    /// As [`Engine::start_since`], a timed search taking only `share` of
    /// the move's budget: the answer needs more work in the same turn.
    pub fn start_sharing(&mut self, kind: SearchKind, since: Instant, share: f64) {
        self.stop();
        self.make_room_for_a_new_game((kind == SearchKind::Think).then_some(since));
        let mut limits = self.limits;
        (limits.time, limits.since) = match kind {
            SearchKind::Think => (self.budget().map(|b| b.share(share)), Some(since)),
            SearchKind::Ponder(Some(t)) => (Some(TimeBudget::fixed(t)), None),
            SearchKind::Ponder(None) | SearchKind::Analyse => (None, None),
        };
        limits.pondering = matches!(kind, SearchKind::Ponder(_));
        limits.analysing = kind == SearchKind::Analyse;
        if limits.pondering {
            // Moves blocked for our turn say nothing of the opponent's,
            // which a ponder searches.
            limits.excluded = CellSet::new();
        }
        // A GUI's block list outlives the stones played on it (Yixin-Board
        // keeps it until yxblockreset): only its empty cells restrict the
        // search.
        for p in self.limits.excluded.iter() {
            if !self.board.is_empty(p) {
                limits.excluded.remove(p);
            }
        }
        if matches!(kind, SearchKind::Think) {
            limits.previous_expectation = self
                .last_own
                .as_ref()
                .and_then(|own| own.expectation_before(&self.board));
        } else {
            limits.max_playouts = None;
        }
        let limited = limits.time.is_some() || limits.max_playouts.is_some();
        let stop = Arc::new(AtomicBool::new(false));
        let board = self.board.clone();
        let searcher = Arc::clone(&self.searcher);
        let (thread_stop, thread_board) = (Arc::clone(&stop), board.clone());
        let ended = self.search_ended.clone();
        let done = Arc::new(AtomicBool::new(false));
        let thread_done = Arc::clone(&done);
        let handle = std::thread::spawn(move || {
            let result = searcher.read().search(&thread_board, &limits, &thread_stop);
            thread_done.store(true, Ordering::Release);
            if let Some(ended) = ended {
                // Best effort: full means a wake-up is already due (perhaps
                // a stopped search's), and the waiting loop polls anyway.
                let _ = ended.try_send(());
            }
            result
        });
        self.running = Some(Running {
            kind,
            stop,
            done,
            handle,
            board,
            limited,
        });
    }

    /// Whether the running search, if any, ends by itself (it has a time or
    /// a playout limit); one without waits for a stop.
    pub fn search_ends_by_itself(&self) -> bool {
        self.running.as_ref().is_none_or(|r| r.limited)
    }

    /// Sends `()` on `to` whenever a background search ends (a bounded
    /// channel: a wake-up already pending is enough).
    pub fn notify_search_end(&mut self, to: Sender<()>) {
        self.search_ended = Some(to);
    }

    pub fn is_searching(&self) -> bool {
        self.running
            .as_ref()
            .is_some_and(|r| !r.handle.is_finished())
    }

    pub fn search_kind(&self) -> Option<SearchKind> {
        self.running.as_ref().map(|r| r.kind)
    }

    /// The finished search, if the background search has ended by itself
    /// (its thread may still be exiting: the join waits for that).
    pub fn poll(&mut self) -> Option<Finished> {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.done.load(Ordering::Acquire) || r.handle.is_finished())
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
        let result = match running.handle.join() {
            Ok(result) => result,
            // A bug, not an input: the move must still come, or the manager
            // scores the silence as a loss.
            Err(panic) => {
                let why = crate::panics::message(&*panic).unwrap_or_default();
                tracing::error!("the search failed ({why}); answering with the fallback move");
                // Nodes it left mid-expansion or under virtual visits
                // would mislead the next search.
                self.searcher.read().cache().clear();
                SearchResult::unsearched(&running.board, &self.limits.excluded)
            }
        };
        if running.kind == SearchKind::Think {
            self.last_own = Some(OwnSearch {
                history: running.board.history().to_vec(),
                side_to_move: running.board.side_to_move(),
                rule: running.board.rule(),
                size: running.board.size(),
                expectation: result.expectation,
            });
        }
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
        // The moves the search of this position may not play (yxblock)
        // are neither listed nor the line's first.
        let excluded = if path.is_empty() {
            searcher.root_exclusions(&board)
        } else {
            CellSet::new()
        };
        let data = node.data.lock();
        let mut moves = MoveStats::of_edges(&data.edges);
        moves.retain(|m| !excluded.contains(m.mv));
        // A position the solver proved before it was ever expanded has no
        // edges: its winning move is the one to show.
        if let (Proven::Win(_), Some(&first)) = (
            data.proven,
            data.proof.as_ref().and_then(|proof| proof.first()),
        ) {
            if !excluded.contains(first) && moves.iter().all(|m| m.mv != first) {
                moves.insert(
                    0,
                    MoveStats {
                        mv: first,
                        visits: 0,
                        prior: 0.0,
                        wdl: [1.0, 0.0, 0.0],
                        proven: data.proven,
                    },
                );
            }
        }
        moves.truncate(top);
        let (visits, wdl, proven) = (data.visits, data.wdl(), data.proven);
        drop(data);
        Some(NodeReport {
            visits,
            wdl,
            proven,
            moves,
            pv: searcher.principal_variation_except(&board, &node, 32, &excluded),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardSize;
    use crate::nn::{Model, NetConfig, ServiceConfig};

    fn engine(max_memory: usize) -> Engine {
        let model = Model::random_native(
            NetConfig {
                blocks: 1,
                channels: 8,
            },
            1,
        );
        let service = EvalService::start_model(model, ServiceConfig::default())
            .expect("a service for a random network");
        let config = SearchConfig {
            threads: 1,
            max_memory,
            ..SearchConfig::default()
        };
        let size = BoardSize::square(15).expect("15x15 is a board size");
        Engine::new(Arc::new(service), config, size, Rule::Freestyle)
    }

    /// Searches the engine's position, 3,000 playouts at a time without a
    /// clock, until its tree holds more than half the smallest budget.
    fn search_past_half_the_smallest_tree(e: &mut Engine) {
        e.time.turn = None;
        e.limits.max_playouts = Some(3_000);
        let mut rounds = 0;
        while e.searcher.read().cache().memory_bytes() <= crate::search::memory::MIN_TREE / 2 + 1 {
            e.think().expect("a search result");
            rounds += 1;
            assert!(rounds < 100, "the searches add no nodes");
        }
    }

    #[test]
    fn a_new_games_first_search_clears_a_cache_its_root_cannot_prune() {
        let size = BoardSize::square(15).expect("15x15 is a board size");
        for (max_memory, cleared) in [(1, true), (usize::MAX, false)] {
            let mut e = engine(max_memory);
            // Positions of earlier games, past half the smallest budget.
            let cache_bytes = |e: &Engine| e.searcher.read().cache().memory_bytes();
            let mut i: usize = 0;
            let mut first = None;
            while cache_bytes(&e) <= crate::search::memory::MIN_TREE / 2 + 1 {
                // Three stones, the cells the digits of i in base 225.
                let mut board = Board::new(size, Rule::Freestyle);
                for digit in [i % 225, i / 225 % 225, i / 50_625 % 225] {
                    let cell = Point::new((digit % 15) as u8, (digit / 15) as u8);
                    if let Some(p) = cell.filter(|&p| board.is_empty(p)) {
                        board.play(p).expect("an empty cell");
                    }
                }
                e.searcher.read().cache().get_or_insert(&board);
                first.get_or_insert(board);
                i += 1;
                assert!(i < 2_000_000, "nodes take no memory");
            }
            let old = first.expect("a position");
            // Not at the new game itself (nothing is known of the next
            // position yet), at its first search from the empty board.
            e.new_game(size, Rule::Freestyle);
            assert!(e.searcher.read().cache().get(&old).is_some());
            // A long turn gives the pass over the cache a long allowance (an
            // eighth of it: a pass cut short clears nothing, and
            // NEW_GAME_PRUNE_FLOOR could pass on a busy machine); the empty
            // board's one candidate ends the search at once all the same.
            e.time.turn = Some(Duration::from_secs(2));
            e.think().expect("a search result");
            let kept = e.searcher.read().cache().get(&old).is_some();
            assert_eq!(kept, !cleared, "max_memory {max_memory}");
            // Later searches of the game prune as before.
            e.time.turn = Some(Duration::from_millis(30));
            e.play(Point::new(7, 7).expect("on the board"))
                .expect("legal");
            e.think().expect("a search result");
        }
        // A root searched for the nodes the cache holds (a GUI restarting
        // before each position of an analysis) keeps its tree. Not the empty
        // board: its one candidate stops each search after two visits, so
        // the nodes a search adds there would depend on the machine's speed.
        let centre = Point::new(7, 7).expect("on the board");
        let mut e = engine(1);
        e.play(centre).expect("legal");
        search_past_half_the_smallest_tree(&mut e);
        let root_visits = |e: &Engine| {
            let searcher = e.searcher.read();
            let root = searcher.cache().get(&e.board);
            root.map_or(0, |node| node.data.lock().visits)
        };
        let searched = root_visits(&e);
        e.new_game(size, Rule::Freestyle);
        e.play(centre).expect("legal");
        e.limits.max_playouts = Some(10);
        e.think().expect("a search result");
        // Kept, not cleared (the search itself may drop its least visited
        // positions to make room: its tree nearly fills the budget).
        assert!(
            root_visits(&e) >= searched,
            "{} < {searched}",
            root_visits(&e)
        );
    }

    /// Yixin-Board restarts the game for an undo: the new game's root is
    /// an earlier position of the last one, never searched itself. The tree
    /// of the position searched after it stays (it was all cleared).
    #[test]
    fn a_restart_at_an_earlier_position_keeps_the_tree_after_it() {
        let size = BoardSize::square(15).expect("15x15 is a board size");
        let p = |x, y| Point::new(x, y).expect("on the board");
        let earlier = [p(7, 7), p(8, 8)];
        let mut e = engine(1);
        for mv in earlier.iter().chain(&[p(7, 8), p(6, 6)]) {
            e.play(*mv).expect("legal");
        }
        search_past_half_the_smallest_tree(&mut e);
        let later = e.board.clone();
        let visits = |e: &Engine| {
            let searcher = e.searcher.read();
            let node = searcher.cache().get(&later);
            node.map_or(0, |node| node.data.lock().visits)
        };
        let searched = visits(&e);
        e.new_game(size, Rule::Freestyle);
        for mv in earlier {
            e.play(mv).expect("legal");
        }
        e.limits.max_playouts = Some(10);
        e.think().expect("a search result");
        assert!(visits(&e) >= searched, "{} < {searched}", visits(&e));
        assert!(e.searcher.read().cache().memory_bytes() <= e.searcher.read().tree_budget());
    }

    #[test]
    fn the_previous_value_counts_only_two_moves_later_in_the_same_game() {
        let size = BoardSize::square(15).expect("15x15 is a board size");
        let mut board = Board::new(size, Rule::Freestyle);
        let p = |x, y| Point::new(x, y).expect("on the board");
        board.play(p(7, 7)).expect("legal");
        let own = OwnSearch {
            history: board.history().to_vec(),
            side_to_move: board.side_to_move(),
            rule: Rule::Freestyle,
            size,
            expectation: 0.6,
        };
        // The same position, or one move on: not our next move.
        assert_eq!(own.expectation_before(&board), None);
        board.play(p(8, 8)).expect("legal");
        assert_eq!(own.expectation_before(&board), None);
        // Our move and the answer: compared.
        board.play(p(9, 9)).expect("legal");
        assert_eq!(own.expectation_before(&board), Some(0.6));
        // The same moves under another rule (INFO rule mid-game): its
        // values are of another game.
        assert_eq!(own.expectation_before(&board.under_rule(Rule::Renju)), None);
        // The same moves with the other side to move (a set-up): the
        // values are not of the same side.
        let mut turned = board.clone();
        turned.set_side_to_move(board.side_to_move().opponent());
        assert_eq!(own.expectation_before(&turned), None);
        // Two moves more: another turn.
        board.play(p(6, 6)).expect("legal");
        board.play(p(5, 5)).expect("legal");
        assert_eq!(own.expectation_before(&board), None);
        // The same length after another game's moves: not compared.
        let mut other = Board::new(size, Rule::Freestyle);
        for mv in [p(0, 0), p(1, 1), p(2, 2)] {
            other.play(mv).expect("legal");
        }
        assert_eq!(own.expectation_before(&other), None);
    }
}
