//! Renju forbidden points against labelled positions (tests/fixtures/renju,
//! see its README for sources and licences).

use std::collections::BTreeSet;

use serde_json::Value;
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule, FORBIDDEN_CHECK_STONES};

const GOMOCUP_TSV: &str = include_str!("fixtures/renju/gomocup_renju_forbidden_points.tsv");
const QUINTET: &str = include_str!("fixtures/renju/quintet_forbidden_cases.jsonl");
const FAMEGON_FORBIDDEN: &str = include_str!("fixtures/renju/famegon_renju_forbidden_cases.json");
const FAMEGON_TERMINAL: &str = include_str!("fixtures/renju/famegon_renju_terminal_cases.json");

fn size15() -> BoardSize {
    BoardSize::square(15).expect("15 is a valid size")
}

fn parse_xy(s: &str) -> Point {
    let (x, y) = s.split_once(',').expect("x,y");
    Point::new(x.parse().expect("x"), y.parse().expect("y")).expect("point")
}

/// The Gomocup judge's positions: each row's six fields, and its board.
fn gomocup_positions() -> impl Iterator<Item = (Vec<&'static str>, Board)> {
    GOMOCUP_TSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 6, "{line}");
            let moves: Vec<Point> = fields[4].split_whitespace().map(parse_xy).collect();
            let board = Board::from_moves(size15(), Rule::Renju, &moves).expect("legal game");
            (fields, board)
        })
}

#[test]
fn gomocup_positions_have_exactly_the_judges_forbidden_points() {
    let mut positions = 0;
    let mut points = 0;
    let mut failures = Vec::new();
    for (fields, mut board) in gomocup_positions() {
        let expected: BTreeSet<Point> = fields[5].split_whitespace().map(parse_xy).collect();
        assert_eq!(board.side_to_move(), Color::Black);
        let found: BTreeSet<Point> = board.forbidden_points().into_iter().collect();
        // The slow definition-by-definition check agrees with the fast scan.
        for p in board.empty_cells().collect::<Vec<_>>() {
            assert_eq!(
                board.is_forbidden(p),
                found.contains(&p),
                "{} at {p}",
                fields[0]
            );
        }
        if found != expected {
            failures.push(format!(
                "{} ({} moves): expected {:?}, found {:?}",
                fields[0], fields[1], expected, found
            ));
        }
        positions += 1;
        points += expected.len();
    }
    assert_eq!(positions, 1431);
    assert!(points > 1431);
    assert!(
        failures.is_empty(),
        "{} positions differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn quintet_board(record: &Value) -> Board {
    let rows = record["board"].as_array().expect("board");
    let mut board = Board::new(size15(), Rule::Renju);
    for (y, row) in rows.iter().enumerate() {
        for (x, ch) in row.as_str().expect("row").chars().enumerate() {
            let color = match ch {
                'X' => Color::Black,
                'O' => Color::White,
                _ => continue,
            };
            let p = Point::new(x as u8, y as u8).expect("point");
            board.place(p, color).expect("empty cell");
        }
    }
    board
}

fn col_row(v: &Value) -> Point {
    Point::new(
        v["col"].as_u64().expect("col") as u8,
        v["row"].as_u64().expect("row") as u8,
    )
    .expect("point")
}

#[test]
fn quintet_cases() {
    let mut checked = 0;
    for line in QUINTET.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).expect("json");
        let mut board = quintet_board(&record);
        if let Some(all) = record["all_forbidden_points"].as_array() {
            let expected: BTreeSet<Point> = all.iter().map(col_row).collect();
            let found: BTreeSet<Point> = board.forbidden_points().into_iter().collect();
            assert_eq!(found, expected, "{}", record["source"]);
        } else {
            let p = col_row(&record["move"]);
            let expected = record["expect_forbidden"].as_bool().expect("bool");
            assert_eq!(
                board.is_forbidden(p),
                expected,
                "{} at {p}\n{board}",
                record["source"]
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 23);
}

/// KataGomo coordinates: letters A-P without I for columns, row 15 at the top.
fn katagomo(s: &str) -> Point {
    let mut chars = s.chars();
    let letter = chars.next().expect("letter") as u8;
    let x = letter - b'A' - u8::from(letter > b'I');
    let row: u8 = chars.as_str().parse().expect("row");
    Point::new(x, 15 - row).expect("point")
}

fn play_katagomo(record: &Value) -> Board {
    let mut board = Board::new(size15(), Rule::Renju);
    for mv in record["moves"].as_array().expect("moves") {
        let color = if mv[0] == "B" {
            Color::Black
        } else {
            Color::White
        };
        board
            .place(katagomo(mv[1].as_str().expect("coord")), color)
            .expect("legal");
    }
    board
}

#[test]
fn famegon_forbidden_cases() {
    let doc: Value = serde_json::from_str(FAMEGON_FORBIDDEN).expect("json");
    let cases = doc["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 6);
    for case in cases {
        let mut board = play_katagomo(case);
        let forbidden = board.forbidden_points();
        let white_next = case["nextPlayer"] == "W";
        for p in case["mustBeForbidden"].as_array().expect("list") {
            let p = katagomo(p.as_str().expect("coord"));
            assert!(
                board.is_forbidden(p),
                "{}: {p} must be forbidden",
                case["name"]
            );
            assert!(forbidden.contains(&p));
        }
        for p in case["mustBeLegal"].as_array().expect("list") {
            let p = katagomo(p.as_str().expect("coord"));
            let color = if white_next {
                Color::White
            } else {
                Color::Black
            };
            let ok = board.check_move(p.x() as i64, p.y() as i64, color);
            assert_eq!(ok, Ok(p), "{}: {p} must be legal", case["name"]);
        }
    }
}

#[test]
fn famegon_full_board_is_a_draw() {
    let doc: Value = serde_json::from_str(FAMEGON_TERMINAL).expect("json");
    let case = &doc["cases"][0];
    let mut board = Board::new(size15(), Rule::Renju);
    let moves = case["moves"].as_array().expect("moves");
    for (i, mv) in moves.iter().enumerate() {
        let p = katagomo(mv[1].as_str().expect("coord"));
        let color = if mv[0] == "B" {
            Color::Black
        } else {
            Color::White
        };
        assert_eq!(board.side_to_move(), color);
        assert_eq!(
            board.check_move(p.x() as i64, p.y() as i64, color),
            Ok(p),
            "move {i}"
        );
        board.play(p).expect("legal");
        if i + 1 < moves.len() {
            assert_eq!(board.outcome(), None, "move {i}");
        }
    }
    assert_eq!(board.stone_count(), 225);
    assert_eq!(board.outcome(), Some(Outcome::Draw));
    assert!(board.forbidden_points().is_empty());
}

/// Every labelled position: the Gomocup games', quintet's and famegon's.
fn labelled_positions() -> Vec<Board> {
    let mut boards: Vec<Board> = gomocup_positions().map(|(_, board)| board).collect();
    for line in QUINTET.lines().filter(|l| !l.trim().is_empty()) {
        boards.push(quintet_board(&serde_json::from_str(line).expect("json")));
    }
    let doc: Value = serde_json::from_str(FAMEGON_FORBIDDEN).expect("json");
    for case in doc["cases"].as_array().expect("cases") {
        boards.push(play_katagomo(case));
    }
    boards
}

/// The bound on a check's recursion decides no labelled position: the
/// deepest check of any of their empty points places a few stones. Held to
/// one stone (the point's own), the threes that need a four point's check
/// are not real, so some double threes turn legal, and nothing else moves.
#[test]
fn the_forbidden_checks_bound_is_far_above_what_labelled_positions_need() {
    let mut most = 0;
    let mut freed = 0;
    for mut board in labelled_positions() {
        for p in board.empty_cells().collect::<Vec<_>>() {
            let mut budget = FORBIDDEN_CHECK_STONES;
            let forbidden = board.is_forbidden_within(p, &mut budget);
            let placed = FORBIDDEN_CHECK_STONES - budget;
            most = most.max(placed);
            let capped = board.is_forbidden_within(p, &mut 1);
            if capped != forbidden {
                assert!(forbidden && placed > 1, "{p} turned forbidden\n{board}");
                freed += 1;
            }
        }
    }
    assert!(
        most * 64 <= FORBIDDEN_CHECK_STONES,
        "a check placed {most} stones"
    );
    assert!(freed > 0, "no point needed the recursion");
}
