//! The search: multi-threaded MCTS over the node cache, with leaves
//! evaluated in batches by the network and decided by the solver where it can.
//!
//! Each search thread gathers a batch of leaves (virtual visits steer the
//! descents apart), analyses them tactically (a won or lost leaf needs no
//! network), submits the rest to the evaluation service, then expands and
//! backs up. With several threads, selection and the solver run on the CPU
//! while the network works on another thread's batch.

pub mod cache;
pub mod expand;
pub mod memory;
pub mod node;
pub mod result;
pub mod select;
pub mod time;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::game::{Board, CellSet, Point};
use crossbeam_channel::Receiver;
use serde::{Deserialize, Serialize};

use crate::nn::{EvalService, Evaluation};
use crate::search::cache::NodeCache;
use crate::search::expand::{analyse, LeafAnalysis, LeafSettings};
use crate::search::node::{Edge, Node, NodeState, Proven};
use crate::search::select::{choose_edge, select_edge, tempered_prior, PuctParams};
use crate::tactics::forced_win;

pub use result::{MoveStats, SearchResult, StopReason};
pub use time::{RootProgress, SafetyNetTime, TimeBudget, TimeControl, TimeManager};

/// How the search plays: the `[search]` section of `config/wuzi.toml`,
/// read straight into this type (each parameter is declared here once, with
/// its default below), plus the thread count and memory limit, which come
/// from `[engine]` and `INFO`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Search threads (`[engine] threads`, `INFO thread_num`).
    #[serde(skip)]
    pub threads: usize,
    /// Leaves a thread gathers before evaluating them.
    pub batch_size: usize,
    /// Batches a thread keeps with the network at once: with 2, it gathers
    /// the next batch while the network works. 1 is the deterministic mode
    /// (with 1 thread): batches are then always evaluated alone.
    pub pipeline: usize,
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited move is valued at its parent's
    /// value less this.
    pub fpu_reduction: f32,
    /// Softmax temperature of the network's policy over the legal moves:
    /// priors are `p^(1/T)`, renormalised. Above 1 it flattens a policy
    /// that is too sure of itself, so that the search also tries the
    /// network's second thoughts.
    pub policy_temperature: f32,
    /// 0 (defensive, P(win)+P(draw)) .. 2 (classic) .. 4 (offensive, P(win)).
    pub style: u8,
    /// Solver budget per new leaf (VCF of the side to move).
    pub leaf_vcf_nodes: u64,
    /// Solver budget at the root (VCT of the side to move).
    pub root_vct_nodes: u64,
    /// Solver budget per new leaf for the opponent's VCF (as if the side to
    /// move passed): a leaf where it has one keeps only the moves that
    /// could break it.
    pub opponent_vcf_nodes: u64,
    /// Solver budget for the side to move's VCT at every new node within
    /// `vct_plies` of the root (ply 1: the opponent's VCT after a root move).
    pub vct_nodes: u64,
    pub vct_plies: u8,
    /// Root safety net: budget for the opponent's VCT after the move about
    /// to be played (capped by the time left).
    pub safety_vct_nodes: u64,
    /// The safety net's share of each move's target time, kept back from
    /// the tree search ([`SafetyNetTime`]).
    pub safety_share: f32,
    /// Solver nodes per millisecond that the safety net's budget assumes.
    pub safety_nodes_per_ms: u64,
    /// Candidate moves: within this many steps of a stone (plus threats).
    pub candidate_distance: u8,
    /// The process's memory limit in bytes (`[engine] max_memory_mb`,
    /// `INFO max_memory`; usize::MAX: none), counted as managers count it
    /// (see [`memory`]): the tree gets what the rest of the process leaves,
    /// and at that size the search stops.
    #[serde(skip)]
    pub max_memory: usize,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        let safety = SafetyNetTime::default();
        SearchConfig {
            threads: 2,
            batch_size: 8,
            pipeline: 2,
            c_puct: 0.7,
            fpu_reduction: 0.2,
            policy_temperature: 1.0,
            style: 2,
            leaf_vcf_nodes: 200,
            root_vct_nodes: 20_000,
            opponent_vcf_nodes: 200,
            vct_nodes: 2_000,
            vct_plies: 1,
            safety_vct_nodes: 20_000,
            safety_share: safety.share,
            safety_nodes_per_ms: safety.nodes_per_ms,
            candidate_distance: 2,
            max_memory: 350 << 20,
        }
    }
}

impl SearchConfig {
    /// Checks the values a file or a tuner may set; the error names the
    /// key as the configuration file spells it.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, key: &str, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("search.{key}: {what}"))
            }
        };
        check(self.batch_size >= 1, "batch_size", "must be at least 1")?;
        check(self.style <= 4, "style", "must be 0..=4")?;
        check(
            self.c_puct.is_finite() && self.c_puct > 0.0,
            "c_puct",
            "must be positive",
        )?;
        check(
            self.fpu_reduction.is_finite(),
            "fpu_reduction",
            "must be a number",
        )?;
        check(
            self.policy_temperature.is_finite() && self.policy_temperature > 0.0,
            "policy_temperature",
            "must be positive",
        )?;
        check(
            (0.0..=0.5).contains(&self.safety_share),
            "safety_share",
            "must be between 0 and 0.5",
        )?;
        check(
            self.safety_nodes_per_ms >= 1,
            "safety_nodes_per_ms",
            "must be at least 1",
        )?;
        Ok(())
    }

    /// The root safety net's time settings.
    pub fn safety_time(&self) -> SafetyNetTime {
        SafetyNetTime {
            share: self.safety_share,
            nodes_per_ms: self.safety_nodes_per_ms,
        }
    }

    /// The weight of a draw in the utility, from the style.
    pub fn draw_weight(&self) -> f32 {
        1.0 - self.style.min(4) as f32 / 4.0
    }

    fn puct(&self) -> PuctParams {
        PuctParams {
            c_puct: self.c_puct,
            fpu_reduction: self.fpu_reduction,
            draw_weight: self.draw_weight(),
        }
    }
}

/// What ends one search (besides a stop request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
}

/// The search engine: a node cache that lives across moves, the
/// evaluation service, and the settings.
pub struct Searcher {
    cache: NodeCache,
    service: Arc<EvalService>,
    config: SearchConfig,
}

/// Counters shared by the threads of one search.
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
    halt: AtomicBool,
    /// Rounds in a row in which no thread found anything to do.
    idle_rounds: AtomicU32,
    /// Leaves being evaluated (a round without work is idle only if none).
    in_flight: AtomicU32,
    /// Descents that ended on a known node, or on a node being evaluated.
    revisits: AtomicU64,
    collisions: AtomicU64,
    /// Solver nodes spent on the new leaves (the tree's largest own cost).
    solver_nodes: AtomicU64,
}

/// Where a descent ended.
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
        }
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
    }

    /// Searches `board` until a limit or `stop`. Safe to call again on the
    /// next position: what is known of it is reused.
    pub fn search(&self, board: &Board, limits: &SearchLimits, stop: &AtomicBool) -> SearchResult {
        let start = Instant::now();
        let tree_budget = self.tree_budget();
        if self.cache.memory_bytes() > tree_budget / 2 {
            self.cache.keep_descendants_of(board);
        }
        let root = self.cache.get_or_insert(board);
        let progress = Progress {
            playouts: AtomicU64::new(0),
            reserved: AtomicU64::new(0),
            evaluations: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            max_depth: AtomicU32::new(0),
            halt: AtomicBool::new(false),
            idle_rounds: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            revisits: AtomicU64::new(0),
            collisions: AtomicU64::new(0),
            solver_nodes: AtomicU64::new(0),
        };
        let clock = TimeManager::new(limits.time, limits.since.unwrap_or(start))
            .with_safety_net(self.config.safety_time());
        if limits.excluded.is_empty() {
            self.solve_root(board, &root, &clock);
        }
        let mut reason = StopReason::Proven;
        if !root.data.lock().proven.is_known() {
            let threads = self.config.threads.max(1);
            reason = std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| self.worker(board, &root, limits, &clock, &progress));
                }
                let reason = self.watch(&root, limits, &clock, stop, &progress, tree_budget);
                progress.halt.store(true, Ordering::SeqCst);
                reason
            });
        }
        let refuted = if stop.load(Ordering::SeqCst) {
            Vec::new()
        } else {
            self.safety_net(board, &root, &limits.excluded, &clock)
        };
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
        result
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
        let draw_weight = self.config.draw_weight();
        let mut board = board.clone();
        let opponent = board.side_to_move().opponent();
        loop {
            let nodes = clock.safety_net_nodes(self.config.safety_vct_nodes);
            if nodes == 0 {
                break;
            }
            let mv = {
                let data = root.data.lock();
                if data.proven.is_known() {
                    break;
                }
                let Some(i) = choose_edge(&data, draw_weight, Some(excluded)) else {
                    break;
                };
                if data.edges[i].proven.is_known() {
                    break;
                }
                data.edges[i].mv
            };
            board.play_unchecked(mv);
            let win = forced_win(&mut board, opponent, nodes, nodes);
            let child = self.cache.get(&board);
            board.undo();
            let Some(line) = win else {
                break;
            };
            let child_value = Proven::Win(line.len() as u16);
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
    /// VCT budget is the time manager's share.
    fn solve_root(&self, board: &Board, root: &Arc<Node>, clock: &TimeManager) {
        if root.data.lock().proven.is_known() {
            return;
        }
        let vct_nodes = clock.root_vct_nodes(self.config.root_vct_nodes);
        let mut board = board.clone();
        let me = board.side_to_move();
        let settings = self.leaf_settings(0, clock);
        if let LeafAnalysis::Proven { value, line } = analyse(&mut board, settings, &mut 0) {
            let mut data = root.data.lock();
            data.proven = value;
            data.proof = (!line.is_empty()).then(|| line.into_boxed_slice());
            return;
        }
        if vct_nodes == 0 {
            return;
        }
        if let Some(line) = forced_win(&mut board, me, 0, vct_nodes) {
            let mut data = root.data.lock();
            data.proven = Proven::Win(line.len() as u16);
            data.proof = Some(line.into_boxed_slice());
        }
    }

    /// The leaf analysis of a node `ply` moves below the root. The VCT
    /// budget of the shallow nodes is the time manager's share.
    fn leaf_settings(&self, ply: usize, clock: &TimeManager) -> LeafSettings {
        let vct_nodes = if ply == 0 || ply > self.config.vct_plies as usize {
            0
        } else {
            clock.shallow_vct_nodes(self.config.vct_nodes)
        };
        LeafSettings {
            vcf_nodes: self.config.leaf_vcf_nodes,
            vct_nodes,
            opponent_vcf_nodes: self.config.opponent_vcf_nodes,
            candidate_distance: self.config.candidate_distance,
        }
    }

    /// The bytes the tree may use in this search: what `max_memory` leaves
    /// after the rest of the process (measured now) and a margin.
    pub fn tree_budget(&self) -> usize {
        let limit = self.config.max_memory;
        if limit == usize::MAX {
            return limit;
        }
        let tree = self.cache.memory_bytes();
        match memory::process_private_bytes() {
            Some(used) => memory::tree_budget(limit, used, tree),
            None => limit.saturating_sub(memory::MARGIN).max(memory::MIN_TREE),
        }
    }

    /// The controlling loop: checks the limits until one is reached.
    fn watch(
        &self,
        root: &Arc<Node>,
        limits: &SearchLimits,
        clock: &TimeManager,
        stop: &AtomicBool,
        progress: &Progress,
        tree_budget: usize,
    ) -> StopReason {
        loop {
            std::thread::sleep(Duration::from_millis(1));
            if stop.load(Ordering::SeqCst) {
                return StopReason::Stopped;
            }
            let root_progress = {
                let data = root.data.lock();
                if data.proven.is_known() {
                    return StopReason::Proven;
                }
                if data.edges.len() == 1 && data.visits >= 2 {
                    return StopReason::OnlyMove;
                }
                let (mut best, mut second) = (0, 0);
                for edge in &data.edges {
                    if edge.visits > best {
                        (best, second) = (edge.visits, best);
                    } else if edge.visits > second {
                        second = edge.visits;
                    }
                }
                RootProgress {
                    best_visits: best,
                    second_visits: second,
                    playouts: progress.playouts.load(Ordering::Relaxed),
                }
            };
            let playouts = progress.playouts.load(Ordering::Relaxed);
            if limits.max_playouts.is_some_and(|max| playouts >= max) {
                return StopReason::Playouts;
            }
            if self.cache.memory_bytes() >= tree_budget {
                return StopReason::Memory;
            }
            if progress.idle_rounds.load(Ordering::Relaxed) > 64 {
                return StopReason::Exhausted;
            }
            if clock.tree_search_done(root_progress) {
                return StopReason::Time;
            }
        }
    }

    /// A search thread: gathers, evaluates and backs up batches until halted.
    fn worker(
        &self,
        board: &Board,
        root: &Arc<Node>,
        limits: &SearchLimits,
        clock: &TimeManager,
        progress: &Progress,
    ) {
        let depth = self.config.pipeline.max(1);
        let mut in_flight: VecDeque<Vec<(Pending, Receiver<Evaluation>)>> = VecDeque::new();
        while !progress.halt.load(Ordering::Relaxed) {
            let (pending, mut boards, worked) = self.gather(board, root, limits, clock, progress);
            let answers = self.service.submit_boards(&mut boards);
            let submitted = !pending.is_empty();
            if submitted {
                progress.batches.fetch_add(1, Ordering::Relaxed);
                in_flight.push_back(pending.into_iter().zip(answers).collect());
            }
            // Keep up to `depth` batches with the network, so that this
            // thread gathers the next batch while the last is evaluated.
            if in_flight.len() >= depth || (!submitted && !in_flight.is_empty()) {
                if let Some(batch) = in_flight.pop_front() {
                    self.complete(batch, progress);
                }
            }
            if limits
                .max_playouts
                .is_some_and(|max| progress.playouts.load(Ordering::SeqCst) >= max)
            {
                progress.halt.store(true, Ordering::SeqCst);
            }
            if worked || progress.in_flight.load(Ordering::SeqCst) > 0 {
                progress.idle_rounds.store(0, Ordering::Relaxed);
                if !worked {
                    std::thread::sleep(Duration::from_micros(100));
                }
            } else {
                progress.idle_rounds.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        // The search is over: do not wait for what the network is still
        // evaluating (a batch can take tens of milliseconds on a busy
        // CPU). Those leaves go back to fresh and lose their virtual
        // visits, so that a later search of the same tree finds them intact.
        for batch in in_flight {
            for (p, _) in batch {
                p.leaf.data.lock().state = NodeState::Fresh;
                self.revert_leaf(&p.path, &p.leaf);
                progress.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Gathers up to a batch of new leaves: decided ones are backed up at
    /// once, the others come back with their boards for the network.
    fn gather(
        &self,
        board: &Board,
        root: &Arc<Node>,
        limits: &SearchLimits,
        clock: &TimeManager,
        progress: &Progress,
    ) -> (Vec<Pending>, Vec<Board>, bool) {
        let max_depth = limits.max_depth.unwrap_or(u32::MAX) as usize;
        let params = self.config.puct();
        let mut pending = Vec::new();
        let mut boards = Vec::new();
        let mut worked = false;
        let mut collided = Vec::new();
        // Revisits of known nodes and collisions do not fill the batch, but
        // bound the attempts.
        let batch_size = self.config.batch_size.max(1);
        for _ in 0..2 * batch_size {
            if pending.len() >= batch_size {
                break;
            }
            // Reserve a playout first, so that a limit is never passed.
            let reserved = progress.reserved.fetch_add(1, Ordering::SeqCst);
            if limits.max_playouts.is_some_and(|max| reserved >= max) {
                progress.reserved.fetch_sub(1, Ordering::SeqCst);
                break;
            }
            match self.descend(board, root, max_depth, params, &limits.excluded) {
                Descent::Evaluate {
                    path,
                    leaf,
                    mut board,
                } => {
                    progress
                        .max_depth
                        .fetch_max(path.len() as u32, Ordering::Relaxed);
                    progress.in_flight.fetch_add(1, Ordering::SeqCst);
                    worked = true;
                    let settings = self.leaf_settings(path.len(), clock);
                    let mut solver_nodes = 0;
                    let analysis = analyse(&mut board, settings, &mut solver_nodes);
                    progress
                        .solver_nodes
                        .fetch_add(solver_nodes, Ordering::Relaxed);
                    match analysis {
                        LeafAnalysis::Proven { value, line } => {
                            {
                                let mut data = leaf.data.lock();
                                data.proven = value;
                                data.proof = (!line.is_empty()).then(|| line.into_boxed_slice());
                                data.state = NodeState::Expanded;
                            }
                            let wdl = value.wdl().unwrap_or([0.0, 1.0, 0.0]);
                            self.backup(&path, Some(&leaf), wdl, Proven::Unknown);
                            progress.playouts.fetch_add(1, Ordering::Relaxed);
                            progress.in_flight.fetch_sub(1, Ordering::SeqCst);
                        }
                        LeafAnalysis::Moves { moves, complete } => {
                            let width = board.size().width() as usize;
                            pending.push(Pending {
                                path,
                                leaf,
                                moves,
                                complete,
                                width,
                            });
                            boards.push(board);
                        }
                    }
                }
                Descent::Known { path, wdl, proven } => {
                    // A revisit (proven node, depth limit): it informs the
                    // path but is no new playout.
                    progress.reserved.fetch_sub(1, Ordering::SeqCst);
                    progress.revisits.fetch_add(1, Ordering::Relaxed);
                    self.backup(&path, None, wdl, proven);
                }
                Descent::Collision { path } => {
                    progress.reserved.fetch_sub(1, Ordering::SeqCst);
                    progress.collisions.fetch_add(1, Ordering::Relaxed);
                    if path.is_empty() {
                        // The root itself is with the network.
                        break;
                    }
                    // Its virtual visits stay until this batch is gathered,
                    // so that the next descents turn elsewhere instead of
                    // ending the batch (as lc0 does).
                    collided.push(path);
                }
            }
        }
        for path in &collided {
            self.revert(path);
        }
        (pending, boards, worked)
    }

    /// Expands and backs up a batch once the network has answered.
    fn complete(&self, batch: Vec<(Pending, Receiver<Evaluation>)>, progress: &Progress) {
        for (p, answer) in batch {
            let Ok(evaluation) = answer.recv() else {
                // The service is gone: undo this descent and stop.
                p.leaf.data.lock().state = NodeState::Fresh;
                self.revert_leaf(&p.path, &p.leaf);
                progress.halt.store(true, Ordering::SeqCst);
                progress.in_flight.fetch_sub(1, Ordering::SeqCst);
                continue;
            };
            let sharpen = 1.0 / self.config.policy_temperature;
            let mut edges: Vec<Edge> = p
                .moves
                .iter()
                .map(|&m| {
                    let policy = evaluation.policy[m.y() as usize * p.width + m.x() as usize];
                    Edge::new(m, tempered_prior(policy, sharpen))
                })
                .collect();
            let total: f32 = edges.iter().map(|e| e.prior).sum();
            let n = edges.len() as f32;
            for e in &mut edges {
                e.prior = if total > 0.0 {
                    e.prior / total
                } else {
                    1.0 / n
                };
            }
            edges.sort_by(|a, b| b.prior.total_cmp(&a.prior));
            self.cache.add_edges(edges.len());
            {
                let mut data = p.leaf.data.lock();
                data.edges = edges;
                data.complete = p.complete;
                data.nn_wdl = evaluation.wdl;
                data.state = NodeState::Expanded;
            }
            self.backup(&p.path, Some(&p.leaf), evaluation.wdl, Proven::Unknown);
            progress.playouts.fetch_add(1, Ordering::Relaxed);
            progress.evaluations.fetch_add(1, Ordering::Relaxed);
            progress.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Walks from the root to a leaf, adding virtual visits on the way.
    fn descend(
        &self,
        root_board: &Board,
        root: &Arc<Node>,
        max_depth: usize,
        params: PuctParams,
        excluded: &CellSet,
    ) -> Descent {
        let mut board = root_board.clone();
        let mut path: Vec<(Arc<Node>, usize)> = Vec::new();
        let mut node = Arc::clone(root);
        loop {
            let mut data = node.data.lock();
            if let Some(wdl) = data.proven.wdl() {
                let proven = data.proven;
                drop(data);
                return Descent::Known { path, wdl, proven };
            }
            match data.state {
                NodeState::Fresh => {
                    data.state = NodeState::Expanding;
                    data.virtual_visits += 1;
                    drop(data);
                    return Descent::Evaluate {
                        path,
                        leaf: node,
                        board,
                    };
                }
                NodeState::Expanding => {
                    drop(data);
                    return Descent::Collision { path };
                }
                NodeState::Expanded => {}
            }
            if path.len() >= max_depth {
                let wdl = data.nn_wdl;
                drop(data);
                return Descent::Known {
                    path,
                    wdl,
                    proven: Proven::Unknown,
                };
            }
            let skip = if path.is_empty() {
                Some(excluded)
            } else {
                None
            };
            let Some(i) = select_edge(&data, params, skip) else {
                // Expanded without moves: nothing can be played (drawn).
                drop(data);
                return Descent::Known {
                    path,
                    wdl: [0.0, 1.0, 0.0],
                    proven: Proven::Draw,
                };
            };
            data.edges[i].virtual_visits += 1;
            data.virtual_visits += 1;
            let mv = data.edges[i].mv;
            drop(data);
            path.push((Arc::clone(&node), i));
            board.play_unchecked(mv);
            node = self.cache.get_or_insert(&board);
        }
    }

    /// Adds a result to every edge and node of a descent, removes its
    /// virtual visits, and carries proven values up (MCTS-solver). `wdl` is
    /// for the side to move at the leaf; `leaf` is given when the descent
    /// counted a virtual visit on it, `known` is the proven value of a leaf
    /// reached without one.
    fn backup(
        &self,
        path: &[(Arc<Node>, usize)],
        leaf: Option<&Arc<Node>>,
        mut wdl: [f32; 3],
        known: Proven,
    ) {
        let mut child_proven = known;
        if let Some(leaf) = leaf {
            let mut data = leaf.data.lock();
            data.visits += 1;
            data.virtual_visits = data.virtual_visits.saturating_sub(1);
            data.win_sum += wdl[0];
            data.draw_sum += wdl[1];
            child_proven = data.proven;
        }
        for (node, i) in path.iter().rev() {
            wdl = [wdl[2], wdl[1], wdl[0]];
            let mut data = node.data.lock();
            if let Some(edge) = data.edges.get_mut(*i) {
                edge.visits += 1;
                edge.virtual_visits = edge.virtual_visits.saturating_sub(1);
                edge.win_sum += wdl[0];
                edge.draw_sum += wdl[1];
                if child_proven.is_known() && !edge.proven.is_known() {
                    edge.proven = child_proven.for_parent();
                }
            }
            data.prove_from_edges();
            data.visits += 1;
            data.virtual_visits = data.virtual_visits.saturating_sub(1);
            data.win_sum += wdl[0];
            data.draw_sum += wdl[1];
            child_proven = data.proven;
        }
    }

    /// Removes the virtual visits of an abandoned descent.
    fn revert(&self, path: &[(Arc<Node>, usize)]) {
        for (node, i) in path {
            let mut data = node.data.lock();
            if let Some(edge) = data.edges.get_mut(*i) {
                edge.virtual_visits = edge.virtual_visits.saturating_sub(1);
            }
            data.virtual_visits = data.virtual_visits.saturating_sub(1);
        }
    }

    fn revert_leaf(&self, path: &[(Arc<Node>, usize)], leaf: &Arc<Node>) {
        let mut data = leaf.data.lock();
        data.virtual_visits = data.virtual_visits.saturating_sub(1);
        drop(data);
        self.revert(path);
    }

    /// The node of the position after `path` from `board`, if searched.
    pub fn node_after(&self, board: &Board, path: &[Point]) -> Option<(Board, Arc<Node>)> {
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
        let mut board = board.clone();
        let mut node = Arc::clone(node);
        let mut pv = Vec::new();
        while pv.len() < max_len {
            let data = node.data.lock();
            let next = match (
                &data.proof,
                choose_edge(&data, self.config.draw_weight(), None),
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
