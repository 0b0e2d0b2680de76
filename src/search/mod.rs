//! The search: multi-threaded MCTS over the node cache, with leaves
//! evaluated in batches by the network and decided by the solver where it can.
//!
//! Each search thread gathers a batch of leaves (virtual visits steer the
//! descents apart), analyses them tactically (a won or lost leaf needs no
//! network), submits the rest to the evaluation service, then expands and
//! backs up. With several threads, selection and the solver run on the CPU
//! while the network works on another thread's batch.

pub mod cache;
mod config;
pub mod expand;
pub mod memory;
pub mod node;
mod noise;
mod playout;
pub mod result;
pub mod select;
mod stoppers;
pub mod time;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::game::{Board, CellSet, Point};
use crossbeam_channel::Receiver;
use parking_lot::Mutex;

use crate::nn::{EvalService, Evaluation};
use crate::search::cache::NodeCache;
use crate::search::expand::{analyse, analyse_root_except, LeafAnalysis, LeafSettings};
use crate::search::node::{Edge, Node, NodeState, PositionKey, Proven};
use crate::search::select::{choice_race, choose_edge, select_edge, tempered_prior, PuctParams};
use crate::search::stoppers::{ProcessMemory, SearchProgress, StopCondition, Stoppers};
use crate::tactics::{forced_win, forced_win_counted, win_plies};

pub use config::{
    SearchBatch, SearchConfig, MAX_ROOT_SOLVER_NODES, MAX_SETTING_COUNT, MAX_THREADS,
};
pub use noise::RootNoise;
pub use result::{MoveStats, SearchResult, StopReason};
pub use time::{FallingValue, RootProgress, SafetyNetTime, TimeBudget, TimeControl, TimeManager};

/// What ends one search (besides a stop request).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchLimits {
    /// Playouts (network evaluations and solved leaves) in this search.
    pub max_playouts: Option<u64>,
    /// Depth of the tree below the root.
    pub max_depth: Option<u32>,
    /// Time; `None` for no limit (pondering, analysis).
    pub time: Option<TimeBudget>,
    /// When the request arrived (`None`: when the search starts): the
    /// budget counts from there.
    pub since: Option<Instant>,
    /// Root moves not to consider (Yixin-Board's `yxblock`).
    pub excluded: CellSet,
    /// Our expectation after our previous move in this game, if we
    /// searched it: a fall from it earns the move more time.
    pub previous_expectation: Option<f32>,
    /// A ponder: the root's threat-space solver does not run before the
    /// tree search.
    pub pondering: bool,
    /// An analysis, shown while it runs until it is stopped: a single root
    /// move (a forced block) does not end it, as it ends a search for a
    /// move to play.
    pub analysing: bool,
    /// Dirichlet noise on the root's priors (self-play's full searches).
    pub root_noise: Option<RootNoise>,
}

/// The search engine: a node cache that lives across moves, the
/// evaluation service, and the settings.
pub struct Searcher {
    cache: NodeCache,
    service: Arc<EvalService>,
    config: SearchConfig,
    /// The last search's root: what reports of its position read.
    last_root: parking_lot::Mutex<Option<LastRoot>>,
    /// A tree budget set by the caller instead of one measured from the
    /// process (see [`Searcher::fix_tree_budget`]).
    fixed_tree_budget: Option<usize>,
}

/// The root of the last search, as reports of its position need it.
struct LastRoot {
    key: PositionKey,
    /// The moves it excluded.
    excluded: CellSet,
    /// Its node where it was one of its own outside the cache (see
    /// [`Searcher::root_for`]).
    own_node: Option<Arc<Node>>,
}

/// Counters shared by the threads of one search.
#[derive(Default)]
struct Progress {
    /// New leaves (evaluated by the network or decided by the rules and
    /// the solver) in this search: the `n` of the summary.
    playouts: AtomicU64,
    /// Playouts done or under way, so that a playout limit is exact.
    reserved: AtomicU64,
    evaluations: AtomicU64,
    /// Batches of leaves sent to the network.
    batches: AtomicU64,
    max_depth: AtomicU32,
    /// Set when the threads must stop.
    halt: Arc<AtomicBool>,
    /// The leaves of this tree-search run still queued for the network are
    /// dropped by the evaluation service once this is set (with `halt`). A
    /// flag of each run's own: the next run lowers `halt` again, and would
    /// otherwise revive the abandoned leaves of the last, to be evaluated
    /// for no one ahead of its own.
    cancel: Mutex<Arc<AtomicBool>>,
    /// Rounds in a row in which no thread found anything to do.
    idle_rounds: AtomicU32,
    /// Leaves being evaluated (a round without work is idle only if none).
    in_flight: AtomicU32,
    /// Descents that ended on a known node, or on a node being evaluated.
    revisits: AtomicU64,
    collisions: AtomicU64,
    /// Solver nodes spent on the new leaves (the tree's largest own cost).
    solver_nodes: AtomicU64,
    /// Wakes the threads waiting for another thread's leaves to be backed up.
    backups: Backups,
}

impl Progress {
    /// Stops the threads, waking those that wait for backups.
    fn halt_now(&self) {
        self.halt.store(true, Ordering::SeqCst);
        self.cancel.lock().store(true, Ordering::SeqCst);
        self.backups.announce();
    }

    /// Readies the flags for another tree-search run: the threads may go,
    /// and the last run's leaves, if any are still queued, stay dropped.
    fn resume(&self) {
        let last = std::mem::replace(&mut *self.cancel.lock(), Arc::new(AtomicBool::new(false)));
        last.store(true, Ordering::SeqCst);
        self.halt.store(false, Ordering::SeqCst);
    }
}

/// A thread with nothing to do until other threads' leaves come back from
/// the network waits here for the next backup, woken by it, rather than
/// polling with short sleeps, which on Windows last far longer than asked
/// (a timer tick on a busy CPU).
#[derive(Default)]
struct Backups {
    count: AtomicU64,
    lock: parking_lot::Mutex<()>,
    signal: parking_lot::Condvar,
}

impl Backups {
    /// The backups so far: what `wait_past` waits to see change.
    fn seen(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Counts a backup (or a halt) and wakes every waiting thread.
    fn announce(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        // Taken between the count and the wake-up, so that a thread that
        // read the old count under the lock is already waiting.
        let _guard = self.lock.lock();
        self.signal.notify_all();
    }

    /// Waits until a backup after `seen`, or `timeout`: the bound for what
    /// is not announced (a halt by a panicking thread), which on Windows
    /// may last longer than asked.
    fn wait_past(&self, seen: u64, timeout: Duration) {
        let mut guard = self.lock.lock();
        if self.count.load(Ordering::SeqCst) == seen {
            self.signal.wait_for(&mut guard, timeout);
        }
    }
}

/// Where a descent ended.
// The board is large beside the other variants, but it moves once, into
// the batch; boxing it would add an allocation to every descent.
#[allow(clippy::large_enum_variant)]
enum Descent {
    /// A fresh node to analyse and evaluate (its board comes along).
    Evaluate {
        path: Vec<(Arc<Node>, usize)>,
        leaf: Arc<Node>,
        board: Board,
    },
    /// A node whose value is known (proven, or the depth limit reached).
    Known {
        path: Vec<(Arc<Node>, usize)>,
        wdl: [f32; 3],
        proven: Proven,
    },
    /// Another descent is evaluating the node: nothing to do here.
    Collision { path: Vec<(Arc<Node>, usize)> },
}

/// What every search thread of one search shares.
#[derive(Clone, Copy)]
struct SearchRun<'a> {
    board: &'a Board,
    root: &'a Arc<Node>,
    /// The root is a node of the search's own, expanded with the moves not
    /// excluded (see [`Searcher::root_for`]).
    restricted_root: bool,
    limits: &'a SearchLimits,
    clock: &'a TimeManager,
    progress: &'a Progress,
    /// See [`memory::process_ceiling`].
    process_ceiling: Option<usize>,
}

/// A leaf waiting for the network.
struct Pending {
    path: Vec<(Arc<Node>, usize)>,
    leaf: Arc<Node>,
    moves: Vec<Point>,
    complete: bool,
    width: usize,
}

impl Searcher {
    pub fn new(service: Arc<EvalService>, config: SearchConfig) -> Searcher {
        Searcher {
            cache: NodeCache::new(),
            service,
            config,
            last_root: parking_lot::Mutex::new(None),
            fixed_tree_budget: None,
        }
    }

    /// Holds the tree to `bytes` whatever the process measures: for an
    /// embedder that accounts its memory itself, and for a test whose
    /// process other threads share (their allocations would move a
    /// budget measured from the process between two reads).
    pub fn fix_tree_budget(&mut self, bytes: usize) {
        self.fixed_tree_budget = Some(bytes.max(memory::MIN_TREE));
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    pub fn config_mut(&mut self) -> &mut SearchConfig {
        &mut self.config
    }

    pub fn cache(&self) -> &NodeCache {
        &self.cache
    }

    /// The evaluation service.
    pub fn service(&self) -> &Arc<EvalService> {
        &self.service
    }

    /// Fits the service's evaluators to this search's threads, where the
    /// service follows the search (`network.evaluator_threads = "auto"`).
    /// An evaluator that cannot start is an error, but those already
    /// running still answer.
    pub fn fit_evaluators(&self) -> std::io::Result<()> {
        self.service.fit_to_search(self.config.threads.max(1))
    }

    /// Evaluates with another service (another network) from now on; what
    /// the cache learned from the old one is dropped.
    pub fn set_service(&mut self, service: Arc<EvalService>) {
        self.service = service;
        self.cache.clear();
        // The new network's memory arrives with the freed tree: if the
        // allocator gave the tree's pages back meanwhile, counting them as
        // the tree's would take the network for them (the budget too
        // large). Measured afresh instead, the freed pages as the rest.
        self.cache.forget_released();
        *self.last_root.lock() = None;
    }

    /// Searches `board` until a limit or `stop`. Safe to call again on the
    /// next position: what is known of it is reused.
    pub fn search(&self, board: &Board, limits: &SearchLimits, stop: &AtomicBool) -> SearchResult {
        let start = Instant::now();
        // Reports of this position read this search's root from now on,
        // the prune below included.
        let (root, restricted_root) = self.root_for(board, &limits.excluded);
        *self.last_root.lock() = Some(LastRoot {
            key: root.key().clone(),
            excluded: limits.excluded,
            own_node: restricted_root.then(|| Arc::clone(&root)),
        });
        let tree_budget = self.tree_budget();
        if self.cache.memory_bytes() > tree_budget / 2 {
            // At most an eighth of the move's target, or until stopped: a
            // cache of gigabytes takes a second to walk, and the next
            // search goes on where this one left off.
            let allowance = limits.time.map(|budget| budget.target / 8);
            let since = limits.since.unwrap_or(start);
            let give_up = || {
                stop.load(Ordering::Relaxed)
                    || allowance.is_some_and(|allowed| since.elapsed() > allowed)
            };
            self.cache.keep_descendants_of(board, give_up);
            // What can follow this position may nearly fill the budget
            // alone (a long game near the memory limit, a limit lowered):
            // the search would stop at once and play on old numbers. The
            // least visited positions go, fewer visits first, until half
            // the budget is free.
            let mut fewest = 2;
            let nearly_full = self.cache.memory_bytes() > tree_budget / 4 * 3;
            while nearly_full
                && self.cache.memory_bytes() > tree_budget / 2
                && fewest < u32::MAX / 2
                && !give_up()
            {
                self.cache
                    .keep_visited_descendants_of(board, fewest, give_up);
                fewest *= 2;
            }
        }
        let process_ceiling = self.process_ceiling();
        let progress = Progress::default();
        let clock = TimeManager::new(limits.time, limits.since.unwrap_or(start))
            .with_safety_net(self.config.safety_time())
            .with_falling_value(FallingValue {
                previous: limits.previous_expectation,
                gain: self.config.falling_value_time,
            });
        // The root solver cannot be interrupted: a ponder skips it (the
        // search on our move runs its own), so that stopping one for the
        // opponent's move never waits for it on our clock.
        if !limits.pondering && !stop.load(Ordering::Relaxed) {
            self.solve_root(board, &root, &clock, &limits.excluded);
        }
        if self.config.root_symmetries && !root.data.lock().proven.is_known() {
            self.average_root_priors(board, &root, &clock);
        }
        if let Some(noise) = limits.root_noise {
            // A root expanded by an earlier search; a fresh one gets its
            // noise when the network answers for it.
            let mut data = root.data.lock();
            if data.state == NodeState::Expanded && !data.proven.is_known() {
                noise.apply(&mut data.edges);
            }
        }
        let run = SearchRun {
            board,
            root: &root,
            restricted_root,
            limits,
            clock: &clock,
            progress: &progress,
            process_ceiling,
        };
        let mut reason = StopReason::Proven;
        let mut halted = Instant::now();
        if !root.data.lock().proven.is_known() {
            (reason, halted) = self.tree_search(run, stop, tree_budget);
        }
        self.adopt_child_proofs(board, &root, &limits.excluded);
        let mut refuted = Vec::new();
        // A ponder plays no move, and its net could not be interrupted by
        // the opponent's move, which would wait for it on our clock.
        if !stop.load(Ordering::SeqCst) && !limits.pondering {
            refuted = self.safety_net(board, &root, &limits.excluded, &clock);
            // The net's reserve is sized for a slow CPU, and a check mostly
            // takes a fraction of it: the tree search goes on into the rest,
            // keeping back enough for the threads' stopping and one more
            // check of the same cost, which runs only if the choice changes.
            if reason == StopReason::Time && !root.data.lock().proven.is_known() {
                let later = clock.after_safety_net(halted.elapsed());
                let now = self.search_progress(&root, &limits.excluded, &later, stop, &progress);
                if !later.tree_search_done_at(now.root(), now.elapsed) {
                    let checked = self.chosen_move(&root, &limits.excluded);
                    let run = SearchRun {
                        clock: &later,
                        ..run
                    };
                    (reason, _) = self.tree_search(run, stop, tree_budget);
                    if !stop.load(Ordering::SeqCst)
                        && self.chosen_move(&root, &limits.excluded) != checked
                    {
                        refuted.extend(self.safety_net(board, &root, &limits.excluded, &later));
                    }
                }
            }
        }
        self.adopt_child_proofs(board, &root, &limits.excluded);
        let mut result = result::summarise(
            self,
            board,
            &root,
            &limits.excluded,
            &progress_snapshot(&progress),
            start.elapsed(),
            reason,
        );
        result.refuted = refuted;
        if restricted_root {
            // Its edges were counted with the cache's, which never holds it.
            self.cache.forget_edges(root.data.lock().edges.len());
        }
        result
    }

    /// The node a search of `board` starts from, and whether it is one of
    /// its own outside the cache. Moves excluded at the root can block the
    /// win or the draw that the cached node is proven by (an earlier
    /// search's solver or tree), and a fresh node would be proven through
    /// them by its own leaf analysis; either way the search would end at
    /// once, without a move it may play or with a value it cannot reach. Such a search gets a node of its own, expanded with the
    /// allowed moves only, so that the cached node keeps every move for the
    /// searches after it; the positions below it are the cache's.
    fn root_for(&self, board: &Board, excluded: &CellSet) -> (Arc<Node>, bool) {
        let cached = self.cache.get_or_insert(board);
        if excluded.is_empty() {
            return (cached, false);
        }
        let own_node = {
            let data = cached.data.lock();
            // A fresh node proven otherwise (a loss, or a win or a draw
            // through an allowed move) keeps its proof.
            data.proof_blocked_by(excluded)
                || (data.state != NodeState::Expanded && !data.proven.is_known())
        };
        if own_node {
            (Arc::new(Node::new(cached.key().clone())), true)
        } else {
            (cached, false)
        }
    }

    /// Runs the search threads on `root` until a stop condition holds
    /// under `clock`; returns it and when the threads were told to stop.
    /// Called again on the same tree, it goes on where the last run stopped.
    fn tree_search(
        &self,
        run: SearchRun,
        stop: &AtomicBool,
        tree_budget: usize,
    ) -> (StopReason, Instant) {
        let SearchRun {
            root,
            limits,
            clock,
            progress,
            process_ceiling,
            ..
        } = run;
        progress.resume();
        progress.idle_rounds.store(0, Ordering::SeqCst);
        let threads = self.config.threads.max(1);
        run_until_halted(
            threads,
            &progress.halt,
            || self.worker(&run),
            || {
                let mut stoppers = Stoppers::for_search(limits, clock, tree_budget);
                let mut live = None;
                if let Some(ceiling) = process_ceiling {
                    stoppers = stoppers.with(ProcessMemory { ceiling });
                    live = Some(memory::LiveMeasure::new(ceiling));
                }
                let reason = self.watch(
                    root,
                    &limits.excluded,
                    &stoppers,
                    clock,
                    stop,
                    progress,
                    live,
                );
                progress.halt_now();
                (reason, Instant::now())
            },
        )
    }

    /// Copies onto the root's unproven edges what is proven of the
    /// positions they lead to. A proof reaches an edge when a descent backs
    /// up through it, but the position may have been proven through
    /// another path (a transposition, or an earlier search from another
    /// root): a search that ends before entering that edge again (a stop,
    /// a memory stop, an only move) would otherwise play a move known to
    /// lose, or miss a known win.
    ///
    /// Not onto `excluded` moves: a root proven won through one would be
    /// taken for settled, and the move played (another) left unchecked by
    /// the safety net.
    fn adopt_child_proofs(&self, board: &Board, root: &Arc<Node>, excluded: &CellSet) {
        let unproven: Vec<Point> = {
            let data = root.data.lock();
            if data.proven.is_known() {
                return;
            }
            data.edges
                .iter()
                .filter(|e| !e.proven.is_known() && !excluded.contains(e.mv))
                .map(|e| e.mv)
                .collect()
        };
        let mut board = board.clone();
        let mut known = Vec::new();
        // No node lock is held while another is taken.
        for mv in unproven {
            board.play_unchecked(mv);
            if let Some(child) = self.cache.get(&board) {
                let proven = child.data.lock().proven;
                if proven.is_known() {
                    known.push((mv, proven.for_parent()));
                }
            }
            board.undo();
        }
        if known.is_empty() {
            return;
        }
        let mut data = root.data.lock();
        for (mv, proven) in known {
            if let Some(edge) = data.edges.iter_mut().find(|e| e.mv == mv) {
                if !edge.proven.is_known() {
                    edge.proven = proven;
                }
            }
        }
        data.prove_from_edges();
    }

    /// The root move the search would play now, if any.
    fn chosen_move(&self, root: &Arc<Node>, excluded: &CellSet) -> Option<Point> {
        let data = root.data.lock();
        choose_edge(&data, self.config.move_choice(), Some(excluded)).map(|i| data.edges[i].mv)
    }

    /// The root safety net: before a move is played, the opponent's forced
    /// wins after it are looked for (VCF, then VCT). A refuted move's edge
    /// is proven lost, and the next choice is checked, until one holds, the
    /// time runs out, or every move is lost. Returns the refuted moves.
    ///
    /// The solver cannot be interrupted, so the time manager sizes each
    /// check by what is left of the deadline.
    fn safety_net(
        &self,
        board: &Board,
        root: &Arc<Node>,
        excluded: &CellSet,
        clock: &TimeManager,
    ) -> Vec<Point> {
        let mut refuted = Vec::new();
        let mut board = board.clone();
        let opponent = board.side_to_move().opponent();
        loop {
            let nodes = clock.safety_net_nodes(self.solver_nodes(self.config.safety_vct_nodes, 1));
            if nodes == 0 {
                break;
            }
            let mv = {
                let data = root.data.lock();
                if data.proven.is_known() {
                    break;
                }
                let Some(i) = choose_edge(&data, self.config.move_choice(), Some(excluded)) else {
                    break;
                };
                if data.edges[i].proven.is_known() {
                    break;
                }
                data.edges[i].mv
            };
            board.play_unchecked(mv);
            // One budget for both searches: the time manager sized `nodes`
            // to what the deadline leaves, which a VCT of `nodes` after a
            // VCF of as many could overrun.
            let mut vcf_spent = 0;
            let win = forced_win_counted(&mut board, opponent, nodes, 0, &mut vcf_spent)
                .or_else(|| forced_win(&mut board, opponent, 0, nodes.saturating_sub(vcf_spent)));
            let child = self.cache.get(&board);
            let plies = win.as_ref().map(|line| win_plies(&mut board, line));
            board.undo();
            let (Some(line), Some(plies)) = (win, plies) else {
                break;
            };
            let child_value = Proven::Win(plies);
            if let Some(child) = child {
                let mut data = child.data.lock();
                if !data.proven.is_known() {
                    data.proven = child_value;
                    data.proof = Some(line.into_boxed_slice());
                }
            }
            let mut data = root.data.lock();
            if let Some(edge) = data.edges.iter_mut().find(|e| e.mv == mv) {
                edge.proven = child_value.for_parent();
            }
            data.prove_from_edges();
            refuted.push(mv);
        }
        refuted
    }

    /// Tries the solver at the root: a proven win is played at once. The
    /// VCT budget is the time manager's share. With moves excluded, only a
    /// win through an allowed first move is kept.
    fn solve_root(&self, board: &Board, root: &Arc<Node>, clock: &TimeManager, excluded: &CellSet) {
        if root.data.lock().proven.is_known() {
            return;
        }
        let vct_nodes = clock.root_vct_nodes(self.solver_nodes(self.config.root_vct_nodes, 1));
        let mut board = board.clone();
        let me = board.side_to_move();
        let settings = self.leaf_settings(0, clock);
        let analysis = if excluded.is_empty() {
            analyse(&mut board, settings, &mut 0)
        } else {
            analyse_root_except(&mut board, settings, excluded, &mut 0)
        };
        if let LeafAnalysis::Proven { value, line } = analysis {
            let mut data = root.data.lock();
            data.proven = value;
            data.proof = (!line.is_empty()).then(|| line.into_boxed_slice());
            adopt_proof_into_edge(&mut data);
            return;
        }
        if vct_nodes == 0 {
            return;
        }
        if let Some(line) = forced_win(&mut board, me, 0, vct_nodes) {
            if line.first().is_some_and(|&mv| excluded.contains(mv)) {
                // A win the blocks take away: the tree looks for another.
                return;
            }
            let plies = win_plies(&mut board, &line);
            let mut data = root.data.lock();
            data.proven = Proven::Win(plies);
            data.proof = Some(line.into_boxed_slice());
            adopt_proof_into_edge(&mut data);
        }
    }

    /// The leaf analysis of a node `ply` moves below the root. The VCT
    /// budget of the shallow nodes is the time manager's share. Every
    /// search thread may run one at once.
    fn leaf_settings(&self, ply: usize, clock: &TimeManager) -> LeafSettings {
        let threads = self.config.threads;
        let vct_nodes = if ply == 0 || ply > self.config.vct_plies as usize {
            0
        } else {
            clock.shallow_vct_nodes(self.solver_nodes(self.config.vct_nodes, threads))
        };
        LeafSettings {
            vcf_nodes: self.solver_nodes(self.config.leaf_vcf_nodes, threads),
            vct_nodes,
            opponent_vcf_nodes: self.solver_nodes(self.config.opponent_vcf_nodes, threads),
            candidate_distance: self.config.candidate_distance,
        }
    }

    /// A solve's node budget: the configured one, cut so that `at_once`
    /// solves running together keep to their share of the memory limit.
    fn solver_nodes(&self, configured: u64, at_once: usize) -> u64 {
        let share = memory::solver_nodes_within(self.config.max_memory) / at_once.max(1) as u64;
        configured.min(share)
    }

    /// The bytes the solver's tables may hold at once: the root's solves
    /// run before and after the tree search, the leaves' during it, one
    /// per thread.
    pub fn solver_reserve(&self) -> usize {
        let config = &self.config;
        let threads = config.threads.max(1);
        let root = self.solver_nodes(config.root_vct_nodes.max(config.safety_vct_nodes), 1);
        let leaf_budget = config
            .leaf_vcf_nodes
            .max(config.opponent_vcf_nodes)
            .max(config.vct_nodes);
        let leaves = self.solver_nodes(leaf_budget, threads) * threads as u64;
        usize::try_from(root.max(leaves))
            .unwrap_or(usize::MAX)
            .saturating_mul(memory::SOLVER_BYTES_PER_NODE)
    }

    /// The bytes the tree may use in this search: what `max_memory` leaves
    /// after the rest of the process (measured now), the solver's tables
    /// and a margin. Without a
    /// limit, half the memory the process may use (the machine's or its
    /// control group's): a tree kept from move to move and game to game (and
    /// grown by pondering) would otherwise grow until the system kills the
    /// process.
    /// A limit above what the machine has is held to the same half: the
    /// system would kill the process long before the limit is reached.
    pub fn tree_budget(&self) -> usize {
        if let Some(fixed) = self.fixed_tree_budget {
            return fixed;
        }
        let limit = self.config.max_memory;
        let machine = memory::available_bytes().map_or(usize::MAX, |bytes| bytes / 2);
        if limit == usize::MAX {
            // Not measured: no manager counts this process's pages.
            return machine;
        }
        // The solver's tables come and go beside the tree.
        let room = limit.saturating_sub(self.solver_reserve());
        let budget = match memory::process_private_bytes() {
            Some(used) => memory::tree_budget(room, used, self.tree_share_of_measure(used)),
            None => room.saturating_sub(memory::MARGIN).max(memory::MIN_TREE),
        };
        if limit >= machine.saturating_mul(2) {
            budget.min(machine.max(memory::MIN_TREE))
        } else {
            budget
        }
    }

    /// The process memory at which this search stops whatever the tree
    /// counts ([`memory::process_ceiling`]), measured after the prune; None
    /// where not watched: no limit, a fixed budget, a limit held to the
    /// machine's memory, or no measure.
    fn process_ceiling(&self) -> Option<usize> {
        let limit = self.config.max_memory;
        if self.fixed_tree_budget.is_some() || limit == usize::MAX {
            return None;
        }
        let machine = memory::available_bytes().map_or(usize::MAX, |bytes| bytes / 2);
        if limit >= machine.saturating_mul(2) {
            return None;
        }
        let used = memory::process_private_bytes()?;
        let rest = used.saturating_sub(self.tree_share_of_measure(used));
        memory::process_ceiling(limit, used, rest)
    }

    /// The tree's share of the process's memory measured now (`used`
    /// bytes), as the budget and the protocols' memory notes count it:
    /// where the measure includes a peak (Windows), the most the tree has
    /// held; elsewhere its nodes and the freed ones the allocator may still
    /// hold. Each call updates the estimate of those.
    pub fn tree_share_of_measure(&self, used: usize) -> usize {
        if memory::MEASURE_INCLUDES_PEAK {
            memory::tree_share_of_measure(self.cache.memory_bytes())
        } else {
            self.cache.share_of_measure(used)
        }
    }

    /// The controlling loop: checks the stop conditions until one holds.
    fn watch(
        &self,
        root: &Arc<Node>,
        excluded: &CellSet,
        stoppers: &Stoppers,
        clock: &TimeManager,
        stop: &AtomicBool,
        progress: &Progress,
        mut live: Option<memory::LiveMeasure>,
    ) -> StopReason {
        loop {
            std::thread::sleep(Duration::from_millis(1));
            let mut now = self.search_progress(root, excluded, clock, stop, progress);
            now.process_bytes = live.as_mut().and_then(|m| m.read(now.tree_bytes));
            if let Some(reason) = stoppers.check(&now) {
                return reason;
            }
        }
    }

    /// The search as the stop conditions see it now, read in the order
    /// they are checked.
    fn search_progress(
        &self,
        root: &Arc<Node>,
        excluded: &CellSet,
        clock: &TimeManager,
        stop: &AtomicBool,
        progress: &Progress,
    ) -> SearchProgress {
        let stop_requested = stop.load(Ordering::SeqCst);
        let mut now = {
            let data = root.data.lock();
            let (chosen_visits, rival_visits) =
                choice_race(&data, self.config.move_choice(), Some(excluded));
            SearchProgress {
                stop_requested,
                root_proven: data.proven.is_known(),
                root_moves: data.edges.len(),
                root_visits: data.visits,
                root_expectation: (data.visits > 0).then(|| crate::nn::expectation(data.wdl())),
                chosen_visits,
                rival_visits,
                playouts: progress.playouts.load(Ordering::Relaxed),
                ..SearchProgress::default()
            }
        };
        now.tree_bytes = self.cache.memory_bytes();
        memory::note_tree_bytes(now.tree_bytes);
        now.idle_rounds = progress.idle_rounds.load(Ordering::Relaxed);
        now.workers_halted = progress.halt.load(Ordering::SeqCst);
        now.elapsed = clock.elapsed();
        now
    }

    /// The node of the position after `path` from `board`, if searched.
    pub fn node_after(&self, board: &Board, path: &[Point]) -> Option<(Board, Arc<Node>)> {
        if path.is_empty() {
            let last = self.last_root.lock();
            let own = last.as_ref().filter(|r| r.key.matches(board));
            if let Some(node) = own.and_then(|r| r.own_node.as_ref()) {
                return Some((board.clone(), Arc::clone(node)));
            }
        }
        let mut board = board.clone();
        for &mv in path {
            board.play(mv).ok()?;
        }
        let node = self.cache.get(&board)?;
        Some((board, node))
    }

    /// The principal variation from `node`: the chosen move at each
    /// expanded node (or a proven win's solver line).
    pub fn principal_variation(
        &self,
        board: &Board,
        node: &Arc<Node>,
        max_len: usize,
    ) -> Vec<Point> {
        self.principal_variation_except(board, node, max_len, &CellSet::new())
    }

    /// The moves the last search of `board`'s position excluded at its root
    /// (none if the last search was of another position).
    pub fn root_exclusions(&self, board: &Board) -> CellSet {
        let last = self.last_root.lock();
        last.as_ref()
            .filter(|r| r.key.matches(board))
            .map_or_else(CellSet::new, |r| r.excluded)
    }

    /// [`Searcher::principal_variation`] whose first move is not one of
    /// `excluded`.
    pub fn principal_variation_except(
        &self,
        board: &Board,
        node: &Arc<Node>,
        max_len: usize,
        excluded: &CellSet,
    ) -> Vec<Point> {
        let mut board = board.clone();
        let mut node = Arc::clone(node);
        let mut pv: Vec<Point> = Vec::new();
        while pv.len() < max_len {
            let data = node.data.lock();
            let skip = pv.is_empty().then_some(excluded);
            let allowed_proof = data.proof.as_ref().filter(|proof| {
                !(pv.is_empty() && proof.first().is_some_and(|&m| excluded.contains(m)))
            });
            let next = match (
                allowed_proof,
                choose_edge(&data, self.config.move_choice(), skip),
            ) {
                (Some(proof), _) if data.proven.is_known() => {
                    for &mv in proof.iter() {
                        if pv.len() < max_len {
                            pv.push(mv);
                        }
                    }
                    return pv;
                }
                (_, Some(i)) if data.edges[i].visits > 0 || data.edges[i].proven.is_known() => {
                    data.edges[i].mv
                }
                _ => return pv,
            };
            drop(data);
            pv.push(next);
            if board.play(next).is_err() {
                return pv;
            }
            match self.cache.get(&board) {
                Some(child) => node = child,
                None => return pv,
            }
        }
        pv
    }
}

/// A root just proven won by the solver, expanded by an earlier search:
/// the edge of the proof's first move is proven too, so that reports and
/// the move choice read it as the win it is, not by its old statistics.
fn adopt_proof_into_edge(data: &mut node::NodeData) {
    let (Proven::Win(plies), Some(&first)) = (
        data.proven,
        data.proof.as_ref().and_then(|proof| proof.first()),
    ) else {
        return;
    };
    if let Some(edge) = data.edges.iter_mut().find(|e| e.mv == first) {
        if !edge.proven.is_known() {
            edge.proven = Proven::Win(plies);
        }
    }
}

fn progress_snapshot(progress: &Progress) -> result::Counters {
    result::Counters {
        playouts: progress.playouts.load(Ordering::Relaxed),
        evaluations: progress.evaluations.load(Ordering::Relaxed),
        batches: progress.batches.load(Ordering::Relaxed),
        max_depth: progress.max_depth.load(Ordering::Relaxed),
        revisits: progress.revisits.load(Ordering::Relaxed),
        collisions: progress.collisions.load(Ordering::Relaxed),
        solver_nodes: progress.solver_nodes.load(Ordering::Relaxed),
    }
}

/// Runs `threads` copies of `work`, which loop until `halt` is raised,
/// beside `watch` on this thread, and raises `halt` when `watch` returns
/// or unwinds, or a worker ends (a panicking one included, so that the
/// watch, which stops on `halt`, does not wait for a clock that may never
/// run out). Without the raise on unwinding, a panic in the watch loop
/// would leave the scope waiting for the workers forever: a hang instead
/// of the fallback move that the engine answers for a failed search.
/// Workers the system refuses to start (a thread or memory limit) leave
/// the search to those that started; with none, the watch is halted at
/// once rather than left to wait for its clock with nothing searching.
fn run_until_halted<R>(
    threads: usize,
    halt: &AtomicBool,
    work: impl Fn() + Sync,
    watch: impl FnOnce() -> R,
) -> R {
    struct RaiseOnDrop<'a>(&'a AtomicBool);
    impl Drop for RaiseOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    std::thread::scope(|scope| {
        let _raise = RaiseOnDrop(halt);
        for started in 0..threads {
            let worker = || {
                let _raise = RaiseOnDrop(halt);
                work()
            };
            if let Err(e) = std::thread::Builder::new().spawn_scoped(scope, worker) {
                tracing::warn!("{started} of {threads} search threads started: {e}");
                if started == 0 {
                    halt.store(true, Ordering::SeqCst);
                }
                break;
            }
        }
        watch()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leaves a tree-search run left queued when it stopped stay
    /// dropped when the next run (after the safety net) lowers the halt:
    /// each run hands the service a cancel flag of its own.
    #[test]
    fn a_stopped_runs_queued_leaves_stay_cancelled_in_the_next_run() {
        let progress = Progress::default();
        let first = progress.cancel.lock().clone();
        progress.halt_now();
        progress.resume();
        assert!(first.load(Ordering::SeqCst));
        assert!(!progress.halt.load(Ordering::SeqCst));
        let second = progress.cancel.lock().clone();
        assert!(!second.load(Ordering::SeqCst));
        // A run that ended without halt_now (a panicking thread raises
        // only the halt) has its leaves cancelled by the next start too.
        progress.halt.store(true, Ordering::SeqCst);
        progress.resume();
        assert!(second.load(Ordering::SeqCst));
    }
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `run_until_halted` with two workers that spin until halted and
    /// count themselves out, and `watch`, on another thread; returns
    /// whether it came back within a generous limit (a hang fails the test
    /// instead of stalling the suite), the workers that ended, and the
    /// result.
    fn run_watch(watch: fn() -> u32) -> (bool, usize, Option<u32>) {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let halt = AtomicBool::new(false);
            let ended = AtomicUsize::new(0);
            let work = || {
                while !halt.load(Ordering::Relaxed) {
                    std::thread::yield_now();
                }
                ended.fetch_add(1, Ordering::SeqCst);
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_until_halted(2, &halt, work, watch)
            }));
            let _ = done.send((ended.load(Ordering::SeqCst), result.ok()));
        });
        match finished.recv_timeout(Duration::from_secs(30)) {
            Ok((ended, result)) => (true, ended, result),
            Err(_) => (false, 0, None),
        }
    }

    #[test]
    fn the_workers_halt_when_the_watch_returns() {
        assert_eq!(run_watch(|| 7), (true, 2, Some(7)));
    }

    #[test]
    fn a_panicking_worker_halts_the_watch() {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let halt = AtomicBool::new(false);
            let watch = || {
                // The search's watch stops on halt (HaltedWorkers).
                while !halt.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_until_halted(1, &halt, || panic!("a search thread failed"), watch)
            }));
            let _ = done.send(result.is_err());
        });
        assert_eq!(
            finished.recv_timeout(Duration::from_secs(30)),
            Ok(true),
            "the watch waited for a halt that never came, or the panic was lost"
        );
    }

    #[test]
    fn the_workers_halt_when_the_watch_panics() {
        let (returned, ended, result) = run_watch(|| panic!("the watch loop failed"));
        assert!(returned, "the scope waited for the workers forever");
        assert_eq!((ended, result), (2, None));
    }

    /// Threads waiting for backups are woken by the next one, not by their
    /// timeout (an hour here), and a thread does not wait at all when a
    /// backup came after what it saw.
    #[test]
    fn a_backup_wakes_the_threads_that_wait_for_one() {
        const NEVER: Duration = Duration::from_secs(3600);
        let backups = Arc::new(Backups::default());
        let seen = backups.seen();
        let (ready, waiting) = mpsc::channel();
        let (done, woken) = mpsc::channel();
        for _ in 0..2 {
            let (backups, ready, done) = (Arc::clone(&backups), ready.clone(), done.clone());
            std::thread::spawn(move || {
                let _ = ready.send(());
                backups.wait_past(seen, NEVER);
                let _ = done.send(());
            });
        }
        for _ in 0..2 {
            assert_eq!(waiting.recv_timeout(Duration::from_secs(60)), Ok(()));
        }
        // Time to be waiting, so that it is the announcement that wakes
        // them (were they not yet, they would not wait: no false failure).
        std::thread::sleep(Duration::from_millis(100));
        backups.announce();
        for _ in 0..2 {
            assert_eq!(woken.recv_timeout(Duration::from_secs(60)), Ok(()));
        }
        let (done, returned) = mpsc::channel();
        std::thread::spawn(move || {
            backups.wait_past(seen, NEVER);
            let _ = done.send(());
        });
        assert_eq!(returned.recv_timeout(Duration::from_secs(60)), Ok(()));
    }

    /// A root move whose position was proven won for the opponent by
    /// another path is taken as lost before the move is chosen.
    #[test]
    fn a_proof_found_through_another_path_reaches_the_root_edge() {
        use crate::game::{BoardSize, Rule};
        use crate::nn::{Model, NetConfig, ServiceConfig};
        use crate::search::node::Proven;
        let model = Model::random_native(
            NetConfig {
                blocks: 1,
                channels: 8,
            },
            1,
        );
        let service = EvalService::start_model(model, ServiceConfig::default())
            .expect("a service for a random network");
        let searcher = Searcher::new(
            Arc::new(service),
            SearchConfig {
                threads: 1,
                ..SearchConfig::default()
            },
        );
        let size = BoardSize::square(15).expect("a board size");
        let mut board = Board::new(size, Rule::Freestyle);
        board
            .play(Point::new(7, 7).expect("a cell"))
            .expect("an empty cell");
        let limits = SearchLimits {
            max_playouts: Some(200),
            ..SearchLimits::default()
        };
        searcher.search(&board, &limits, &AtomicBool::new(false));
        let root = searcher.cache.get(&board).expect("the root was searched");
        let chosen = searcher
            .chosen_move(&root, &limits.excluded)
            .expect("a move");
        let mut after = board.clone();
        after.play(chosen).expect("a legal move");
        searcher.cache.get_or_insert(&after).data.lock().proven = Proven::Win(3);
        searcher.adopt_child_proofs(&board, &root, &limits.excluded);
        let edge_value = |mv| {
            let data = root.data.lock();
            data.edges.iter().find(|e| e.mv == mv).map(|e| e.proven)
        };
        assert_eq!(edge_value(chosen), Some(Proven::Loss(4)));
        let next = searcher.chosen_move(&root, &limits.excluded);
        assert!(next.is_some_and(|mv| mv != chosen), "{next:?}");
        assert!(!root.data.lock().proven.is_known());
    }
}
