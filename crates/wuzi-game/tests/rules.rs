//! Edge cases of each rule, judged on whole boards.

mod common;

use common::{board15, p};
use wuzi_game::game::{Board, BoardSize, Color, MoveError, Outcome, Point, Rule, Threat};

fn board(rule: Rule, rows: &[&str]) -> Board {
    common::board(rule, rows, Color::Black)
}

/// Plays `color` on `at` and returns the outcome.
fn result_of(mut board: Board, at: Point, color: Color) -> Option<Outcome> {
    board.place(at, color).unwrap();
    board.outcome()
}

const ROW_FOUR_AND_ONE: &[&str] = &[
    "...........",
    ".XXXX.X....",
    "...........",
    "...........",
    "...........",
];

#[test]
fn freestyle_five_and_overline_win() {
    let b = board(Rule::Freestyle, ROW_FOUR_AND_ONE);
    assert_eq!(
        result_of(b.clone(), p(0, 1), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
    assert_eq!(
        result_of(b, p(5, 1), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
}

#[test]
fn standard_overline_wins_for_nobody() {
    let b = board(Rule::Standard, ROW_FOUR_AND_ONE);
    assert_eq!(
        result_of(b.clone(), p(0, 1), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
    assert_eq!(result_of(b.clone(), p(5, 1), Color::Black), None);
    assert!(!b.is_winning_move(p(5, 1), Color::Black));
    let w = board(
        Rule::Standard,
        &[
            ".OOOO.O....",
            "...........",
            "...........",
            "...........",
            "...........",
        ],
    );
    assert_eq!(result_of(w, p(5, 0), Color::White), None);
}

#[test]
fn renju_overline_is_forbidden_for_black_and_wins_for_white() {
    let mut b = board(Rule::Renju, ROW_FOUR_AND_ONE);
    assert!(b.is_forbidden(p(5, 1)));
    assert!(!b.is_forbidden(p(0, 1)), "an exact five is never forbidden");
    assert_eq!(
        b.check_move(5, 1, Color::Black),
        Err(MoveError::Forbidden(p(5, 1)))
    );
    assert_eq!(b.check_move(5, 1, Color::White), Ok(p(5, 1)));
    assert_eq!(result_of(b.clone(), p(5, 1), Color::Black), None);
    let w = board(
        Rule::Renju,
        &[
            ".OOOO.O....",
            "...........",
            "...........",
            "...........",
            "...........",
        ],
    );
    assert_eq!(
        result_of(w, p(5, 0), Color::White),
        Some(Outcome::Win(Color::White))
    );
}

#[test]
fn renju_five_with_an_overline_elsewhere_is_not_forbidden() {
    // (5,5) completes an exact five down the column and an overline along the row.
    let mut b = board(
        Rule::Renju,
        &[
            "...........",
            ".....X.....",
            ".....X.....",
            ".....X.....",
            ".....X.....",
            "XXXXX.X....",
            "...........",
        ],
    );
    assert_eq!(b.threat(p(5, 5), Color::Black), Threat::Five);
    assert!(!b.is_forbidden(p(5, 5)));
    assert_eq!(
        result_of(b, p(5, 5), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
}

#[test]
fn renju_double_four_on_one_line_is_forbidden() {
    let mut b = board(
        Rule::Renju,
        &[
            "...........",
            ".X.XX..X...",
            "...........",
            "...........",
            "...........",
        ],
    );
    // Playing (5,1) gives X.XXX.X: two fours on one line.
    assert!(b.is_forbidden(p(5, 1)));
    let mut w = board(
        Rule::Freestyle,
        &[
            "...........",
            ".X.XX..X...",
            "...........",
            "...........",
            "...........",
        ],
    );
    assert_eq!(w.threat(p(5, 1), Color::Black), Threat::FourFour);
    assert!(!w.is_forbidden(p(5, 1)));
}

#[test]
fn caro_five_closed_at_both_ends_does_not_win() {
    let rows = &[
        "OXXXX.O....",
        "...........",
        "...........",
        "...........",
        "...........",
    ];
    let b = board(Rule::Caro, rows);
    assert_eq!(result_of(b.clone(), p(5, 0), Color::Black), None);
    // The same line under freestyle wins.
    assert_eq!(
        result_of(board(Rule::Freestyle, rows), p(5, 0), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
    // The board edge does not close a line.
    let edge = board(
        Rule::Caro,
        &[
            "XXXX.O.....",
            "...........",
            "...........",
            "...........",
            "...........",
        ],
    );
    assert_eq!(
        result_of(edge, p(4, 0), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
    // Six or more closed at both ends still wins (as Piskvork judges rule 8).
    let six = board(
        Rule::Caro,
        &[
            "OXXXX.XO...",
            "...........",
            "...........",
            "...........",
            "...........",
        ],
    );
    assert_eq!(
        result_of(six, p(5, 0), Color::Black),
        Some(Outcome::Win(Color::Black))
    );
}

#[test]
fn full_board_without_five_is_a_draw() {
    // Colour by (x + y + y/2) mod 2: no five anywhere on a 6x6 board.
    let size = BoardSize::new(6, 6).unwrap();
    for rule in Rule::ALL {
        let mut b = Board::new(size, rule);
        let cells: Vec<Point> = size.points().collect();
        let color_of = |q: Point| {
            if (q.x() + q.y() + q.y() / 2) % 2 == 0 {
                Color::Black
            } else {
                Color::White
            }
        };
        let (blacks, whites): (Vec<Point>, Vec<Point>) =
            cells.iter().partition(|&&q| color_of(q) == Color::Black);
        assert_eq!(blacks.len(), whites.len());
        for (bq, wq) in blacks.iter().zip(&whites) {
            assert_eq!(b.outcome(), None);
            b.play(*bq).unwrap();
            assert_eq!(b.outcome(), None, "{rule}");
            b.play(*wq).unwrap();
        }
        assert!(b.is_full());
        assert_eq!(b.outcome(), Some(Outcome::Draw), "{rule}\n{b}");
    }
}

#[test]
fn rectangular_boards_and_size_limits() {
    assert!(BoardSize::new(4, 15).is_err());
    assert!(BoardSize::new(15, 33).is_err());
    let size = BoardSize::new(32, 5).unwrap();
    let mut b = Board::new(size, Rule::Freestyle);
    for y in 0..4 {
        b.place(p(31, y), Color::White).unwrap();
    }
    assert!(b.is_winning_move(p(31, 4), Color::White));
    assert_eq!(
        b.check_move(32, 0, Color::Black).unwrap_err().to_string(),
        "move 32,0 is outside the 32x5 board"
    );
    assert!(matches!(
        b.check_move(-1, 0, Color::Black),
        Err(MoveError::OffBoard { x: -1, y: 0, .. })
    ));
    assert_eq!(
        b.check_move(31, 0, Color::Black),
        Err(MoveError::Occupied(p(31, 0)))
    );
    assert!(matches!(
        b.check_move(i64::MAX, 0, Color::Black),
        Err(MoveError::OffBoard {
            x: i64::MAX,
            y: 0,
            ..
        })
    ));
    assert_eq!(
        b.place(p(31, 0), Color::Black),
        Err(MoveError::Occupied(p(31, 0)))
    );
    assert_eq!(b.stone_count(), 4, "a refused move changes nothing");
    // The wide coordinates of record parsers: the i32 overflow is off the board too.
    assert_eq!(size.point_from_i64(31, 4), Some(p(31, 4)));
    assert_eq!(size.point_from_i64(32, 4), None);
    assert_eq!(size.point_from_i64(0, -1), None);
    assert_eq!(size.point_from_i64(1 << 32, 0), None, "not wrapped to 0");
    assert_eq!(size.point_from_i64(i64::MIN, 0), None);
}

#[test]
fn undo_restores_side_and_stones() {
    let size = BoardSize::square(15).unwrap();
    let mut b = Board::from_moves(size, Rule::Renju, &[p(7, 7), p(7, 8)]).unwrap();
    assert_eq!(b.side_to_move(), Color::Black);
    assert_eq!(b.undo(), Some((p(7, 8), Color::White)));
    assert_eq!(b.side_to_move(), Color::White);
    assert_eq!(b.stone(p(7, 8)), None);
    assert_eq!(b.undo(), Some((p(7, 7), Color::Black)));
    assert_eq!(b.undo(), None);
}

/// A three whose straight-four point makes a five on another line is no
/// real three for the Gomocup judge (its recursive check calls the point
/// foul), so it does not make a double three with another.
#[test]
fn a_three_whose_four_point_makes_five_is_not_real() {
    let mut b = board15(
        Rule::Renju,
        &[
            (2, ".......O......."),
            (3, ".......X......."),
            (4, ".......X......."),
            (5, "......XX......."),
            (6, "......XX......."),
            (7, "..O.XX........."),
        ],
        Color::Black,
    );
    // (6,7): a three in column 6 and one on row 7, whose straight-four
    // point (7,7) completes column 7's five.
    assert!(b.is_winning_move(p(7, 7), Color::Black));
    assert!(!b.is_forbidden(p(6, 7)));
    // Without column 7's four, (7,7) makes the row's three real: a
    // double three.
    let mut without = board15(
        Rule::Renju,
        &[
            (5, "......XX......."),
            (6, "......XX......."),
            (7, "..O.XX........."),
        ],
        Color::Black,
    );
    assert!(!without.is_winning_move(p(7, 7), Color::Black));
    assert!(without.is_forbidden(p(6, 7)));
}
