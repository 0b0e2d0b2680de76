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

/// `five_still_possible` by brute force: every line of five cells inside the
/// board, in the four directions, checked cell by cell.
fn five_possible_by_scan(board: &Board, color: Color) -> bool {
    let size = board.size();
    let (w, h) = (size.width() as i64, size.height() as i64);
    let other = Some(color.opponent());
    let directions = [(1, 0), (0, 1), (1, 1), (1, -1)];
    (0..w).any(|x| {
        (0..h).any(|y| {
            directions.iter().any(|&(dx, dy)| {
                (0..5).all(|k| {
                    let (cx, cy) = (x + k * dx, y + k * dy);
                    (0..w).contains(&cx)
                        && (0..h).contains(&cy)
                        && board.stone(Point::new(cx as u8, cy as u8).unwrap()) != other
                })
            })
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// On crowded boards of every shape (where lines of five get blocked),
    /// the bit-parallel check agrees with a scan of every line of five, for
    /// both colours, after every stone.
    #[test]
    fn five_still_possible_matches_a_scan_of_every_line(
        rule in prop::sample::select(Rule::ALL.to_vec()),
        w in 5u32..=12,
        h in 5u32..=12,
        stones in prop::collection::vec((any::<u16>(), any::<bool>()), 0..150),
    ) {
        let size = BoardSize::new(w, h).unwrap();
        let mut board = Board::new(size, rule);
        for (choice, black) in stones {
            let empty: Vec<Point> = board.empty_cells().collect();
            if empty.is_empty() {
                break;
            }
            let p = empty[choice as usize % empty.len()];
            let color = if black { Color::Black } else { Color::White };
            board.place(p, color).unwrap();
            for c in Color::BOTH {
                prop_assert_eq!(
                    board.five_still_possible(c),
                    five_possible_by_scan(&board, c),
                    "{} {} on\n{:?}", rule, c, board
                );
            }
            prop_assert_eq!(
                board.is_dead_draw(),
                !five_possible_by_scan(&board, Color::Black)
                    && !five_possible_by_scan(&board, Color::White)
            );
        }
    }
}

#[test]
fn a_blocked_board_is_a_dead_draw_and_an_open_one_is_not() {
    let size = BoardSize::square(7).unwrap();
    let mut board = Board::new(size, Rule::Freestyle);
    assert!(!board.is_dead_draw());
    // Black where (x + 2y) mod 4 is 0 or 1, white elsewhere: along a row the
    // colours go in pairs, along a column they alternate, along both
    // diagonals they cycle, so every line of five holds both colours.
    let black = |x: u8, y: u8| (x + 2 * y) % 4 < 2;
    for p in size.points().filter(|p| black(p.x(), p.y())) {
        board.place(p, Color::Black).unwrap();
    }
    assert!(board.five_still_possible(Color::Black));
    assert!(!board.five_still_possible(Color::White));
    assert!(!board.is_dead_draw());
    let mut white: Vec<Point> = size.points().filter(|p| !black(p.x(), p.y())).collect();
    let last = white.pop().unwrap();
    for p in white {
        board.place(p, Color::White).unwrap();
    }
    assert!(board.is_dead_draw());
    assert_eq!(board.outcome(), None, "one cell is still empty");
    board.place(last, Color::White).unwrap();
    assert!(board.is_dead_draw());
}
