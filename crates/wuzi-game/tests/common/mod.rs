//! Boards and game records for the integration tests of both crates (the
//! engine crate includes this file through its own tests/common).
#![allow(dead_code)]

use wuzi_game::game::{Board, BoardSize, Color, Point, Rule};

pub fn p(x: u8, y: u8) -> Point {
    Point::new(x, y).expect("coordinates below 32")
}

/// A board from rows of text (`X` black, `O` white, anything else empty),
/// with `to_move` to play.
pub fn board(rule: Rule, rows: &[&str], to_move: Color) -> Board {
    let size = BoardSize::new(rows[0].len() as u32, rows.len() as u32).expect("size");
    let mut board = Board::new(size, rule);
    for (y, row) in rows.iter().enumerate() {
        for (x, ch) in row.chars().enumerate() {
            let color = match ch {
                'X' => Color::Black,
                'O' => Color::White,
                _ => continue,
            };
            board.place(p(x as u8, y as u8), color).expect("empty cell");
        }
    }
    board.set_side_to_move(to_move);
    board
}

/// A 6x6 renju position, black to move, whose two empty cells, (3,0) and
/// (2,1), both make an overline for black, and neither wins for white:
/// every move black has is forbidden, and nothing else decides the game.
pub fn black_has_only_forbidden_cells() -> Board {
    let rows = ["XXX.XX", "XX.XXX", "XOOOOX", "OOOOXO", "XOXXOO", "OOOXOO"];
    board(Rule::Renju, &rows, Color::Black)
}

/// A 15x15 board whose listed rows (index, text) replace empty ones.
pub fn board15(rule: Rule, rows: &[(usize, &str)], to_move: Color) -> Board {
    let mut all = ["..............."; 15];
    for &(y, row) in rows {
        all[y] = row;
    }
    board(rule, &all, to_move)
}

/// A game record from a fixture TSV line.
pub struct Game {
    pub id: String,
    pub rule: Rule,
    pub size: BoardSize,
    pub moves: Vec<Point>,
}

pub fn games(tsv: &str) -> Vec<Game> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let rule = match f[3] {
                "freestyle" => Rule::Freestyle,
                "standard" => Rule::Standard,
                "renju" => Rule::Renju,
                other => panic!("rule {other}"),
            };
            let side: u32 = f[4].parse().expect("board");
            let moves = f[11]
                .split_whitespace()
                .map(|m| {
                    let (x, y) = m.split_once(',').expect("x,y");
                    p(x.parse().expect("x"), y.parse().expect("y"))
                })
                .collect();
            Game {
                id: f[0].to_string(),
                rule,
                size: BoardSize::square(side).expect("size"),
                moves,
            }
        })
        .collect()
}

pub const FIXTURE_GAMES: [&str; 4] = [
    include_str!("../../../../tests/fixtures/games/gomocup2021_freestyle1_sample.tsv"),
    include_str!("../../../../tests/fixtures/games/gomocup2021_standard1_sample.tsv"),
    include_str!("../../../../tests/fixtures/games/gomocup2021_renju_sample.tsv"),
    include_str!("../../../../tests/fixtures/games/gomocup2024_freestyle15_2_sample.tsv"),
];

/// Renju: black XXX.XX on row 3, so (3,3) is an overline for black; white's
/// three on column 3 makes a four at (3,7) whose only block is (3,3).
pub const FORCED_ONTO_FORBIDDEN: &[(usize, &str)] = &[
    (2, "...X..........."),
    (3, "XXX.XX........."),
    (4, "...O..........."),
    (5, "...O..........."),
    (6, "...O..........."),
    (8, "...X..........."),
    (12, "......O...O.O.O"),
];

/// Black: a closed three on row 7 and a split three on column 6; (6,7)
/// makes four and open three at once, then the open four wins.
pub fn four_three(rule: Rule, to_move: Color) -> Board {
    board15(
        rule,
        &[
            (0, "O.............O"),
            (4, "......X........"),
            (5, "......X........"),
            (7, "..OXXX........."),
            (14, "O.............."),
        ],
        to_move,
    )
}
