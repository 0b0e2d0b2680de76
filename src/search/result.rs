//! What a search reports: the move, its value and statistics, as neutral
//! facts; each front end writes them in its own protocol
//! (`protocol::summary`).

use std::sync::Arc;
use std::time::Duration;

use crate::game::{Board, CellSet, Color, Point};
use crate::search::expand::fallback_move_except;
use crate::search::node::{Edge, Node, Proven};
use crate::search::select::{choose_edge, lower_bound};
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
    /// The search threads stopped by themselves: the network service went
    /// away, or a thread failed.
    WorkersHalted,
}

impl std::fmt::Display for StopReason {
    /// The word the logs show (`search (memory): ...`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Proven => "proven",
            StopReason::Stopped => "stopped",
            StopReason::Time => "time",
            StopReason::Playouts => "playouts",
            StopReason::Memory => "memory",
            StopReason::Exhausted => "exhausted",
            StopReason::OnlyMove => "only move",
            StopReason::WorkersHalted => "workers halted",
        })
    }
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

    /// A pessimistic expected score of the move (a draw worth a half), the
    /// bound the `"lcb"` move rule compares, in [0, 1]: the proof's score
    /// when proven, 0 before the first visit.
    pub fn score_lower_bound(&self) -> f32 {
        match self.proven {
            Proven::Unknown if self.visits == 0 => 0.0,
            Proven::Unknown => lower_bound(crate::nn::expectation(self.wdl), self.visits).max(0.0),
            proven => proven.expected_score(self.wdl),
        }
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
    /// Root moves, most visited first (those excluded left out).
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
    let allowed = |mv: Point| !excluded.contains(mv);
    let mut moves = MoveStats::of_edges(&data.edges);
    moves.retain(|m| allowed(m.mv));
    let proof_move = match data.proven {
        Proven::Win(_) => data.proof.as_ref().and_then(|proof| proof.first().copied()),
        _ => None,
    };
    let chosen = choose_edge(&data, searcher.config().move_choice(), Some(excluded));
    // A win proven before moves were blocked (Yixin-Board's yxblock: by the
    // root's first analysis, or an earlier search or ponder through the
    // cache) holds only through an allowed winning move: the proof's
    // first, or an edge proven won (which the choice takes first); a draw
    // proven from the edges, only through an allowed drawing edge.
    let blocked_proof = data.proof_blocked_by(excluded);
    let mut best_move = match proof_move {
        Some(mv) if allowed(mv) => Some(mv),
        _ => chosen.map(|i| data.edges[i].mv),
    };
    let (mut wdl, mut proven) = (data.wdl(), data.proven);
    if blocked_proof {
        // What is known without the blocked moves: a five of our own, or
        // the chosen move's statistics, else the network's value.
        proven = Proven::Unknown;
        wdl = match chosen.map(|i| &data.edges[i]) {
            Some(edge) if edge.visits > 0 || edge.proven.is_known() => edge.wdl(),
            _ => data.network_wdl(),
        };
        if let Some(five) = board
            .winning_moves(board.side_to_move())
            .find(|&p| allowed(p))
        {
            (best_move, proven, wdl) = (Some(five), Proven::Win(1), [1.0, 0.0, 0.0]);
        }
    }
    let best_move = best_move.or_else(|| fallback_move_except(&mut board.clone(), excluded));
    drop(data);
    let pv = if blocked_proof {
        best_move.into_iter().collect()
    } else {
        let pv = searcher.principal_variation_except(board, root, 64, excluded);
        match best_move {
            // The tree's choice was a blocked move (or there was none): the
            // line starts with the move played, then follows the tree.
            Some(mv) if pv.first() != Some(&mv) => {
                let mut after = board.clone();
                let rest = match after.play(mv) {
                    Ok(()) => searcher
                        .node_after(&after, &[])
                        .map(|(_, child)| searcher.principal_variation(&after, &child, 63))
                        .unwrap_or_default(),
                    Err(_) => Vec::new(),
                };
                std::iter::once(mv).chain(rest).collect()
            }
            _ => pv,
        }
    };
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
    /// The answer when no search could be made of `board` (its thread
    /// failed): the fallback move (a block, a defence, a candidate) outside
    /// `excluded`, no statistics, an even value.
    pub fn unsearched(board: &Board, excluded: &CellSet) -> SearchResult {
        let wdl = [0.5, 0.0, 0.5];
        SearchResult {
            best_move: fallback_move_except(&mut board.clone(), excluded),
            wdl,
            proven: Proven::Unknown,
            expectation: crate::nn::expectation(wdl),
            pv: Vec::new(),
            moves: Vec::new(),
            counters: Counters::default(),
            elapsed: Duration::ZERO,
            reason: StopReason::Stopped,
            side_to_move: board.side_to_move(),
            refuted: Vec::new(),
        }
    }

    /// Evaluations per second.
    pub fn nodes_per_second(&self) -> u64 {
        (self.counters.playouts as f64 / self.elapsed.as_secs_f64().max(1e-3)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::select::{lower_confidence_bound, utility};

    #[test]
    fn a_failed_search_still_answers_a_block() {
        let p = |x, y| Point::new(x, y).unwrap();
        let board = Board::from_moves(
            crate::game::BoardSize::square(15).unwrap(),
            crate::game::Rule::Freestyle,
            &[
                p(0, 0),
                p(7, 7),
                p(0, 2),
                p(8, 7),
                p(0, 4),
                p(9, 7),
                p(0, 6),
                p(10, 7),
            ],
        )
        .unwrap();
        let result = SearchResult::unsearched(&board, &CellSet::new());
        assert!(
            matches!(result.best_move, Some(m) if m == p(6, 7) || m == p(11, 7)),
            "{:?}",
            result.best_move
        );
        assert_eq!(result.side_to_move, Color::Black);
        assert!((result.expectation - 0.5).abs() < 1e-6);
        assert_eq!(result.reason, StopReason::Stopped);
    }

    #[test]
    fn the_reported_lower_bound_is_the_one_the_move_rule_compares() {
        let mut edge = Edge::new(Point::new(7, 7).unwrap(), 0.4);
        edge.visits = 100;
        edge.win_sum = 50.0;
        edge.draw_sum = 20.0;
        let stats = |e: &Edge| MoveStats::of_edges(std::slice::from_ref(e)).remove(0);
        // Expectation 0.6; 0.6 - 1.96 * sqrt(0.24 / 100) = 0.504.
        let lcb = stats(&edge).score_lower_bound();
        assert!((lcb - 0.504).abs() < 1e-3, "{lcb}");
        assert!((lcb - lower_confidence_bound(&edge, 0.5)).abs() < 1e-6);
        assert!(lcb < utility(edge.wdl(), 0.5));
        edge.visits = 0;
        edge.win_sum = 0.0;
        edge.draw_sum = 0.0;
        assert_eq!(stats(&edge).score_lower_bound(), 0.0);
        edge.proven = Proven::Draw;
        assert_eq!(stats(&edge).score_lower_bound(), 0.5);
        edge.proven = Proven::Win(3);
        assert_eq!(stats(&edge).score_lower_bound(), 1.0);
    }
}
