//! Property tests: over random games on random board sizes and rules, the
//! incrementally updated patterns, threats, cell sets and hash always equal a
//! recomputation from the stones, and undo restores the position exactly.

use proptest::prelude::*;
use wuzi_game::game::{Board, BoardSize, CellKind, Color, Point, Rule};

/// A random game: rule, board size, and for each step a move choice (an
/// index into the empty cells, biased to the neighbourhood of the stones so
/// that real patterns form) or an undo.
fn game() -> impl Strategy<Value = (Rule, u32, u32, Vec<(u16, bool)>)> {
    (
        prop::sample::select(Rule::ALL.to_vec()),
        5u32..=32,
        5u32..=32,
        prop::collection::vec((any::<u16>(), prop::bool::weighted(0.15)), 1..120),
    )
}

/// Picks an empty cell near the last stones (or anywhere when there are none).
fn pick(board: &Board, choice: u16) -> Option<Point> {
    let near: Vec<Point> = board
        .empty_cells()
        .filter(|&p| {
            board
                .history()
                .iter()
                .rev()
                .take(6)
                .any(|&(q, _)| q.distance(p) <= 2)
        })
        .collect();
    let pool = if near.is_empty() || choice % 5 == 0 {
        board.empty_cells().collect()
    } else {
        near
    };
    (!pool.is_empty()).then(|| pool[choice as usize % pool.len()])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn incremental_state_equals_recomputation((rule, w, h, steps) in game()) {
        let size = BoardSize::new(w, h).unwrap();
        let mut board = Board::new(size, rule);
        let mut hashes = vec![board.hash()];
        for (choice, undo) in steps {
            if undo && board.stone_count() > 0 {
                board.undo();
                hashes.pop();
                prop_assert_eq!(board.hash(), *hashes.last().unwrap());
            } else if let Some(p) = pick(&board, choice) {
                board.play(p).unwrap();
                hashes.push(board.hash());
            }
            if let Err(e) = board.check_consistency() {
                return Err(TestCaseError::fail(format!("{e}\n{board:?}")));
            }
        }
        // Undo everything: back to the empty board.
        while board.undo().is_some() {}
        prop_assert_eq!(board.hash(), hashes[0]);
        prop_assert!(board.check_consistency().is_ok());
    }

    #[test]
    fn five_cells_are_exactly_the_winning_moves((rule, w, h, steps) in game()) {
        let size = BoardSize::new(w, h).unwrap();
        let mut board = Board::new(size, rule);
        for (choice, _) in steps {
            let Some(p) = pick(&board, choice) else { break };
            board.play(p).unwrap();
            if board.outcome().is_some() {
                break;
            }
            for color in Color::BOTH {
                let fast = *board.cells_of(CellKind::Five, color);
                for q in board.empty_cells() {
                    prop_assert_eq!(
                        fast.contains(q),
                        board.is_winning_move(q, color),
                        "{} {} at {} on\n{:?}", rule, color, q, board
                    );
                }
            }
        }
    }
}

#[test]
fn hash_depends_on_side_to_move_and_not_on_move_order() {
    let size = BoardSize::square(15).unwrap();
    let p = |x, y| Point::new(x, y).unwrap();
    let a = Board::from_moves(size, Rule::Freestyle, &[p(7, 7), p(8, 8), p(6, 6)]).unwrap();
    let b = Board::from_moves(size, Rule::Freestyle, &[p(6, 6), p(8, 8), p(7, 7)]).unwrap();
    assert_eq!(a.hash(), b.hash());
    let c = Board::from_moves(size, Rule::Freestyle, &[p(7, 7), p(8, 8)]).unwrap();
    let mut d = c.clone();
    d.place(p(6, 6), Color::White).unwrap();
    let mut e = c.clone();
    e.place(p(6, 6), Color::Black).unwrap();
    assert_ne!(d.hash(), e.hash());
    assert_ne!(a.hash(), c.hash());
}

/// A cell chosen by [`pick`] among the empty ones, and a flag (the stone's
/// colour in a set-up, a take-back in the steps after it).
type Choice = (u16, bool);

/// A set-up position: stones of either colour in any numbers (puzzles,
/// renju problems, a GUI's edit mode), then the side to move, then moves
/// played and taken back.
fn setup() -> impl Strategy<Value = (Rule, u32, u32, Vec<Choice>, bool, Vec<Choice>)> {
    (
        prop::sample::select(Rule::ALL.to_vec()),
        5u32..=32,
        5u32..=32,
        prop::collection::vec((any::<u16>(), any::<bool>()), 0..40),
        any::<bool>(),
        prop::collection::vec((any::<u16>(), prop::bool::weighted(0.2)), 0..40),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Patterns, threats, forbidden candidates and the hash stay exact in
    /// positions that no alternating game reaches, and moves played after
    /// the set-up undo back to it exactly. The hash (the search's cache key)
    /// depends only on the stones and the side to move: the same stones
    /// placed in another order with the same side give the same hash.
    #[test]
    fn set_up_positions_stay_exact((rule, w, h, stones, black_to_move, steps) in setup()) {
        let size = BoardSize::new(w, h).unwrap();
        let mut board = Board::new(size, rule);
        for (choice, white) in stones {
            if let Some(p) = pick(&board, choice) {
                board.place(p, if white { Color::White } else { Color::Black }).unwrap();
            }
        }
        let to_move = if black_to_move { Color::Black } else { Color::White };
        board.set_side_to_move(to_move);
        if let Err(e) = board.check_consistency() {
            return Err(TestCaseError::fail(format!("after set-up: {e}\n{board:?}")));
        }
        let setup_hash = board.hash();
        let setup_stones = board.stone_count();
        let mut played = 0;
        for (choice, undo) in steps {
            if undo && played > 0 {
                board.undo();
                played -= 1;
            } else if let Some(p) = pick(&board, choice) {
                board.play(p).unwrap();
                played += 1;
            }
            if let Err(e) = board.check_consistency() {
                return Err(TestCaseError::fail(format!("{e}\n{board:?}")));
            }
        }
        // The same stones in reverse order, the same side to move.
        let mut rebuilt = Board::new(size, rule);
        for &(p, color) in board.history().iter().rev() {
            rebuilt.place(p, color).unwrap();
        }
        rebuilt.set_side_to_move(board.side_to_move());
        prop_assert_eq!(rebuilt.hash(), board.hash());
        prop_assert_eq!(rebuilt.forbidden_points(), board.forbidden_points());
        for _ in 0..played {
            board.undo();
        }
        prop_assert_eq!(board.stone_count(), setup_stones);
        prop_assert_eq!(board.side_to_move(), to_move);
        prop_assert_eq!(board.hash(), setup_hash);
    }
}
