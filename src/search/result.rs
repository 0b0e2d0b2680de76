//! What a search reports: the move, its value and statistics, as neutral
//! facts; each front end writes them in its own protocol
//! (`protocol::summary`).

use std::sync::Arc;
use std::time::Duration;

use crate::game::{Board, CellSet, Color, Point};
use crate::search::expand::fallback_move;
use crate::search::node::{Edge, Node, Proven};
use crate::search::select::choose_edge;
use crate::search::Searcher;

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The root's value was proven.
    Proven,
    /// A stop request (STOP, END, a new position).
    Stopped,
    Time,
    Playouts,
    Memory,
    /// Nothing left to search within the limits (e.g. the depth limit).
    Exhausted,
    /// The root has a single move (a forced block).
    OnlyMove,
}

/// One root move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats {
    pub mv: Point,
    pub visits: u32,
    pub prior: f32,
    /// Win, draw, loss for the player making the move.
    pub wdl: [f32; 3],
    pub proven: Proven,
}

impl MoveStats {
    /// The statistics of a node's edges, most visited first (ties: prior).
    pub fn of_edges(edges: &[Edge]) -> Vec<MoveStats> {
        let mut moves: Vec<MoveStats> = edges
            .iter()
            .map(|e| MoveStats {
                mv: e.mv,
                visits: e.visits,
                prior: e.prior,
                wdl: e.wdl(),
                proven: e.proven,
            })
            .collect();
        moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        moves
    }
}

/// Counters of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub playouts: u64,
    pub evaluations: u64,
    /// Batches the search threads sent to the network.
    pub batches: u64,
    pub max_depth: u32,
    /// Descents that ended on a proven node or at the depth limit.
    pub revisits: u64,
    /// Descents that met a node another descent was evaluating.
    pub collisions: u64,
    /// Solver nodes spent analysing new leaves.
    pub solver_nodes: u64,
}

impl Counters {
    /// How full the batches sent to the network were, on average.
    pub fn leaves_per_batch(&self) -> f64 {
        self.evaluations as f64 / self.batches.max(1) as f64
    }
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play (`None` only when the side to move has no move).
    pub best_move: Option<Point>,
    /// Win, draw, loss for the side to move at the root.
    pub wdl: [f32; 3],
    pub proven: Proven,
    /// Expected outcome `P(win) + P(draw)/2`, for the side to move.
    pub expectation: f32,
    pub pv: Vec<Point>,
    /// Root moves, most visited first.
    pub moves: Vec<MoveStats>,
    pub counters: Counters,
    pub elapsed: Duration,
    pub reason: StopReason,
    /// Who is to move at the root (for the PV's colours).
    pub side_to_move: Color,
    /// Moves the root safety net found refuted (the opponent wins by force
    /// after them) and replaced, in the order they were checked.
    pub refuted: Vec<Point>,
}

pub(crate) fn summarise(
    searcher: &Searcher,
    board: &Board,
    root: &Arc<Node>,
    excluded: &CellSet,
    counters: &Counters,
    elapsed: Duration,
    reason: StopReason,
) -> SearchResult {
    let data = root.data.lock();
    let moves = MoveStats::of_edges(&data.edges);
    let best_move = match (&data.proof, data.proven) {
        (Some(proof), Proven::Win(_)) => proof.first().copied(),
        _ => choose_edge(&data, searcher.config().move_choice(), Some(excluded))
            .map(|i| data.edges[i].mv),
    }
    .or_else(|| fallback_move(&mut board.clone()));
    let wdl = data.wdl();
    let proven = data.proven;
    drop(data);
    let pv = searcher.principal_variation(board, root, 64);
    SearchResult {
        best_move,
        wdl,
        proven,
        expectation: crate::nn::expectation(wdl),
        pv,
        moves,
        counters: *counters,
        elapsed,
        reason,
        side_to_move: board.side_to_move(),
        refuted: Vec::new(),
    }
}

impl SearchResult {
    /// Evaluations per second.
    pub fn nodes_per_second(&self) -> u64 {
        (self.counters.playouts as f64 / self.elapsed.as_secs_f64().max(1e-3)) as u64
    }
}
