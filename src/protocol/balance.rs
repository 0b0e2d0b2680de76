//! Balanced openings: the moves that leave a position nearest to even, for
//! BALANCE, the swap rules and Yixin-Board's balance commands.

use crate::engine::Engine;
use crate::game::{Board, Color, Point};
use crate::search::expand::candidate_moves;
use crate::tactics::{solve, SolveLimits, ThreatKind};

/// Moves tried at each step at most (the nearest to the stones' centre).
const CANDIDATES: usize = 48;
/// Solver budget when checking that a candidate leaves no forced win.
const THREAT_CHECK_NODES: u64 = 2_000;

/// Whether the side to move, or the other side, has a forced win by fours
/// (or a five) in `board`: such a position is not balanced.
fn decided(board: &mut Board) -> bool {
    if board.outcome().is_some() {
        return true;
    }
    let limits = SolveLimits::new(THREAT_CHECK_NODES, 20);
    Color::BOTH.into_iter().any(|c| {
        board.winning_moves(c).next().is_some()
            || solve(board, c, ThreatKind::Vcf, limits).win.is_some()
    })
}

/// Candidate moves, nearest to the centre of the stones (or of the board)
/// first.
fn candidates(board: &mut Board) -> Vec<Point> {
    let (mut moves, _) = candidate_moves(board, 2);
    let size = board.size();
    let (cx, cy) = if board.stone_count() == 0 {
        let c = size.center();
        (c.x() as f32, c.y() as f32)
    } else {
        let n = board.stone_count() as f32;
        let sx: f32 = board.history().iter().map(|(p, _)| p.x() as f32).sum();
        let sy: f32 = board.history().iter().map(|(p, _)| p.y() as f32).sum();
        (sx / n, sy / n)
    };
    let distance = |p: &Point| (p.x() as f32 - cx).powi(2) + (p.y() as f32 - cy).powi(2);
    moves.sort_by(|a, b| distance(a).total_cmp(&distance(b)).then(a.cmp(b)));
    moves.truncate(CANDIDATES);
    moves
}

/// `count` moves from `board` (colours alternating from the side to move),
/// each chosen so that the position after it is as even as the network
/// judges, among moves that leave neither side a forced win. Returns fewer
/// moves only if no legal move is left.
pub fn balancing_moves(engine: &Engine, board: &Board, count: usize) -> Vec<Point> {
    let mut board = board.clone();
    let mut moves = Vec::new();
    for _ in 0..count {
        let mut best: Option<(f32, Point)> = None;
        let mut fallback = None;
        for m in candidates(&mut board) {
            if board.play(m).is_err() {
                continue;
            }
            fallback.get_or_insert(m);
            if !decided(&mut board) {
                if let Some(eval) = engine.evaluate(&mut board) {
                    let even = (eval.wdl[0] + 0.5 * eval.wdl[1] - 0.5).abs();
                    if best.is_none_or(|(b, _)| even < b) {
                        best = Some((even, m));
                    }
                }
            }
            board.undo();
        }
        let Some(m) = best.map(|(_, m)| m).or(fallback) else {
            break;
        };
        if board.play(m).is_err() {
            break;
        }
        moves.push(m);
    }
    moves
}
