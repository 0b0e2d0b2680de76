//! Opening policy: the moves that leave a position nearest to even (for
//! BALANCE, the swap rules and Yixin-Board's balance commands), and the
//! choice under a swap rule. Protocols print these decisions; they do not
//! take them.

use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::game::{Board, Color, Point};
use crate::search::expand::candidate_moves;
use crate::search::SearchResult;
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

/// Candidates whose one-ply evaluation is nearest to even that a search
/// then judges (Rapfi spends about 2 s on a balancing move).
const SEARCHED: usize = 6;

/// `count` moves from `board` (colours alternating from the side to move),
/// each leaving the position as near to the wanted value as the engine can
/// tell within `time` in all: among moves that leave neither side a forced
/// win, the network's one-ply values pick the nearest few, and a search of
/// each decides. Each move gets an equal share of what is left of `time`:
/// the screening stops when the share is spent (with at least one
/// candidate), and the searches divide what it left. The wanted value is
/// even plus `bias` (an expectation, -0.5..=0.5) for the side not to move
/// in `board`, so that one number means the same player whatever `count`
/// is. Returns fewer moves only if
/// no legal move is left.
pub(super) fn balancing_moves(
    engine: &mut Engine,
    board: &Board,
    count: usize,
    time: Duration,
    bias: f32,
) -> Vec<Point> {
    let began = Instant::now();
    balancing_moves_on(engine, board, count, time, bias, &|| began.elapsed())
}

/// `balancing_moves` on a given clock: `elapsed()` is the time spent since
/// the call (the tests stop it, so that what is screened does not depend
/// on the machine's speed).
fn balancing_moves_on(
    engine: &mut Engine,
    board: &Board,
    count: usize,
    time: Duration,
    bias: f32,
    elapsed: &dyn Fn() -> Duration,
) -> Vec<Point> {
    let favoured = board.side_to_move().opponent();
    let bias = bias.clamp(-0.5, 0.5);
    let mut board = board.clone();
    let mut moves = Vec::new();
    // The wanted value for the side to move in `board` (values are the
    // side to move's).
    let wanted = |board: &Board| {
        if board.side_to_move() == favoured {
            0.5 + bias
        } else {
            0.5 - bias
        }
    };
    for step in 0..count {
        let share = time.saturating_sub(elapsed()) / (count - step) as u32;
        let step_began = elapsed();
        let in_step = || elapsed().saturating_sub(step_began);
        let mut screened: Vec<(f32, Point)> = Vec::new();
        let mut fallback = None;
        for m in candidates(&mut board) {
            // Each candidate's checks run to their end, so the screening
            // is bounded here: on a slow CPU or a short turn it would
            // otherwise outlast the turn.
            if !screened.is_empty() && in_step() >= share {
                break;
            }
            if board.play(m).is_err() {
                continue;
            }
            fallback.get_or_insert(m);
            if !decided(&mut board) {
                if let Some(eval) = engine.evaluate(&mut board) {
                    let value = crate::nn::expectation(eval.wdl);
                    screened.push(((value - wanted(&board)).abs(), m));
                }
            }
            board.undo();
        }
        screened.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        screened.truncate(SEARCHED);
        let per_search = share.saturating_sub(in_step()) / SEARCHED as u32;
        if per_search >= Duration::from_millis(20) {
            for entry in screened.iter_mut() {
                if board.play(entry.1).is_err() {
                    continue;
                }
                let target = wanted(&board);
                let result = engine.search_position(&board, per_search);
                board.undo();
                let value = result.proven.expected_score(result.wdl);
                entry.0 = (value - target).abs();
            }
            screened.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        let Some(m) = screened.first().map(|&(_, m)| m).or(fallback) else {
            break;
        };
        if board.play(m).is_err() {
            break;
        }
        moves.push(m);
    }
    moves
}

/// What to do with a position handed over under a swap rule, where the
/// engine would otherwise play white.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapChoice {
    /// Swap: take black (white's prospects are poor).
    TakeBlack,
    /// Swap2 after three stones: add two balancing stones and let the
    /// opponent choose.
    Balance,
    /// Stay white and play a move.
    Stay,
}

impl SwapChoice {
    /// The choice after searching the position with `stones` stones (the
    /// search is from white's side). Swap2 takes black a little earlier
    /// (below 0.42) and balances what is neither clearly bad nor clearly
    /// good for white (0.42..0.58); plain swap takes black below 0.5.
    pub fn after_search(result: &SearchResult, stones: usize, swap2: bool) -> SwapChoice {
        let value = result.proven.expected_score(result.wdl);
        let three = swap2 && stones == 3;
        if value < if three { 0.42 } else { 0.5 } {
            SwapChoice::TakeBlack
        } else if three && value < 0.58 {
            SwapChoice::Balance
        } else {
            SwapChoice::Stay
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::game::{BoardSize, Rule};
    use crate::nn::{EvalService, ServiceConfig};
    use crate::search::SearchConfig;

    /// An engine whose network rates every position even: every screened
    /// candidate ties, and the lowest point wins the tie.
    fn even_engine() -> Engine {
        let service = EvalService::start_uniform(ServiceConfig::default()).expect("service");
        let size = BoardSize::square(15).expect("size");
        Engine::new(
            Arc::new(service),
            SearchConfig::default(),
            size,
            Rule::Freestyle,
        )
    }

    #[test]
    fn the_screening_stops_when_its_time_is_spent() {
        let mut engine = even_engine();
        let size = BoardSize::square(15).expect("size");
        let board = Board::from_moves(size, Rule::Freestyle, &[Point::new(7, 7).expect("point")])
            .expect("board");
        let mut scratch = board.clone();
        let order = candidates(&mut scratch);
        let nearest = order[0];
        let lowest = order.iter().copied().min().expect("candidates");
        assert_ne!(nearest, lowest);
        // No time: the first candidate (nearest the stones) is all there is.
        assert_eq!(
            balancing_moves(&mut engine, &board, 1, Duration::ZERO, 0.0),
            vec![nearest]
        );
        // Time for every candidate (the clock stands still) but too little
        // for searches (under 20 ms each): all are screened and tie.
        let mut one_move_in_110_ms = |clock: &dyn Fn() -> Duration| {
            balancing_moves_on(
                &mut engine,
                &board,
                1,
                Duration::from_millis(110),
                0.0,
                clock,
            )
        };
        assert_eq!(one_move_in_110_ms(&|| Duration::ZERO), vec![lowest]);
        // A clock that passes the share while the first candidate is
        // screened (it reads 0 at the step's start): that one only.
        let readings = std::cell::Cell::new(0);
        let moving = || {
            readings.set(readings.get() + 1);
            if readings.get() <= 2 {
                Duration::ZERO
            } else {
                Duration::from_millis(200)
            }
        };
        assert_eq!(one_move_in_110_ms(&moving), vec![nearest]);
    }

    /// Yixin-Board's balance bias: the same candidates judged by the same
    /// (deterministic) network values, so a bias for black picks a move
    /// that leaves black at least as well off as a bias against black
    /// does, and better where the candidates differ at all.
    #[test]
    fn a_balance_bias_favours_the_side_it_names() {
        let model = crate::nn::Model::random_native(
            crate::nn::NetConfig {
                blocks: 1,
                channels: 16,
            },
            2,
        );
        let service = EvalService::start_model(model, ServiceConfig::default()).expect("service");
        let size = BoardSize::square(15).expect("size");
        let mut engine = Engine::new(
            Arc::new(service),
            SearchConfig::default(),
            size,
            Rule::Freestyle,
        );
        let board = Board::from_moves(size, Rule::Freestyle, &[Point::new(7, 7).expect("point")])
            .expect("board");
        // White to move: the bias is for black, the side not to move.
        let value_for_black = |engine: &Engine, m| {
            let mut b = board.clone();
            b.play(m).expect("legal");
            let eval = engine.evaluate(&mut b).expect("an evaluation");
            eval.wdl[0] + 0.5 * eval.wdl[1]
        };
        // Every candidate screened (a stopped clock), no searches (100 ms
        // leaves under 20 ms for each): network values alone decide.
        let mut pick = |bias| {
            let moves = balancing_moves_on(
                &mut engine,
                &board,
                1,
                Duration::from_millis(100),
                bias,
                &|| Duration::ZERO,
            );
            assert_eq!(moves.len(), 1, "{moves:?}");
            moves[0]
        };
        let (good, even, bad) = (pick(0.45), pick(0.0), pick(-0.45));
        let (good, even, bad) = (
            value_for_black(&engine, good),
            value_for_black(&engine, even),
            value_for_black(&engine, bad),
        );
        assert!(good >= even && even >= bad, "{good} {even} {bad}");
        assert!(good > bad, "{good} {bad}");
    }
}
