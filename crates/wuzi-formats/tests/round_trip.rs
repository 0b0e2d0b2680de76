//! Every format reads back what it writes: for any board size, cell, game
//! and record this crate can print, its parser returns the same value.

use proptest::prelude::*;

use wuzi_formats::gomocup::Coord;
use wuzi_formats::gtp::Vertex;
use wuzi_formats::notation::Notation;
use wuzi_formats::opening::{format_line, parse_line, OpeningFormat};
use wuzi_formats::record::{parse_psq, parse_sgf, psq_text, sgf_text, MoveRecord, SgfInfo};
use wuzi_formats::search_target::SearchTarget;
use wuzi_formats::tsv::{self, Columns, TsvGame};
use wuzi_game::game::{BoardSize, Color, Outcome, Point, Rule};

/// A board size (5..=32 each way) and some distinct cells on it.
fn board_and_cells(max_cells: usize) -> impl Strategy<Value = (BoardSize, Vec<Point>)> {
    (5u32..=32, 5u32..=32).prop_flat_map(move |(w, h)| {
        let size = BoardSize::new(w, h).unwrap();
        let cells = (w * h) as usize;
        proptest::sample::subsequence((0..cells).collect::<Vec<_>>(), 0..=max_cells.min(cells))
            .prop_shuffle()
            .prop_map(move |indices| {
                let points = indices
                    .into_iter()
                    .map(|i| Point::new((i as u32 % w) as u8, (i as u32 / w) as u8).unwrap())
                    .collect();
                (size, points)
            })
    })
}

fn color_of(ply: usize) -> Color {
    if ply % 2 == 0 {
        Color::Black
    } else {
        Color::White
    }
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._(),-]{0,16}"
}

proptest! {
    #[test]
    fn cells_and_stones((size, cells) in board_and_cells(12), transposed in any::<bool>()) {
        let labels = Notation::Labels { size, transposed };
        for (ply, &p) in cells.iter().enumerate() {
            // A transposed board is read with its sides swapped.
            let on_board = if transposed {
                Point::new(p.y(), p.x()).filter(|&q| size.contains(q))
            } else {
                Some(p)
            };
            if let Some(q) = on_board {
                prop_assert_eq!(labels.parse_cell(&labels.cell(q)), Ok(q));
                let stone = labels.stone(color_of(ply), q);
                prop_assert_eq!(labels.parse_stone(&stone), Ok((color_of(ply), q)));
            }
            prop_assert_eq!(Notation::Gomocup.parse_cell(&Notation::Gomocup.cell(p)), Ok(p));
            let pv = Notation::Gomocup.stone(color_of(ply), p);
            prop_assert_eq!(Notation::Gomocup.parse_stone(&pv), Ok((color_of(ply), p)));
            let coord: Coord = Coord::from(p).to_string().parse().unwrap();
            prop_assert_eq!(coord.point_on(size), Some(p));
            let vertex: Vertex = Vertex::of(p, size).to_string().parse().unwrap();
            prop_assert_eq!(vertex.point_on(size), Some(p));
        }
    }

    #[test]
    fn opening_lines((size, cells) in board_and_cells(10)) {
        let moves: Vec<(i64, i64)> = cells.iter().map(|p| (p.x() as i64, p.y() as i64)).collect();
        let offsets = format_line(&moves, OpeningFormat::Offset, size).unwrap();
        prop_assert_eq!(parse_line(&offsets, OpeningFormat::Auto, size), Ok(moves.clone()));
        if size.width() <= 26 && !moves.is_empty() {
            let letters = format_line(&moves, OpeningFormat::Pos, size).unwrap();
            prop_assert_eq!(parse_line(&letters, OpeningFormat::Auto, size), Ok(moves));
        }
    }

    #[test]
    fn psq_and_sgf_records(
        (size, cells) in board_and_cells(40),
        ms in 0u64..100_000,
        black in text(),
        white in text(),
        rule in prop::sample::select(Rule::ALL.to_vec()),
    ) {
        let records: Vec<MoveRecord> = cells
            .iter()
            .enumerate()
            .map(|(ply, &point)| MoveRecord { point, color: color_of(ply), ms, opening: ply < 3 })
            .collect();
        let (psq_size, psq_moves) = parse_psq(&psq_text(size, &records, &black, &white)).unwrap();
        prop_assert_eq!(psq_size, size);
        let expected: Vec<(i64, i64)> = cells.iter().map(|p| (p.x() as i64, p.y() as i64)).collect();
        prop_assert_eq!(psq_moves, expected);

        let info = SgfInfo {
            size,
            rule,
            black: &black,
            white: &white,
            result: "B+",
            comment: "a [bracket] and a \\ backslash",
            game_name: "round trip",
        };
        let games = parse_sgf(&sgf_text(&info, &records)).unwrap();
        prop_assert_eq!(games.len(), 1);
        let game = &games[0];
        prop_assert_eq!(game.size, size);
        let moves: Vec<(Color, Point)> = records.iter().map(|r| (r.color, r.point)).collect();
        prop_assert_eq!(&game.moves, &moves);
        prop_assert_eq!(game.property("PB"), Some(black.as_str()));
        prop_assert_eq!(game.property("PW"), Some(white.as_str()));
        prop_assert_eq!(game.property("GC"), Some(info.comment));
    }

    #[test]
    fn tsv_games(
        (size, cells) in board_and_cells(30),
        opening in 0usize..4,
        winner in prop::sample::select(vec![
            Outcome::Win(Color::Black), Outcome::Win(Color::White), Outcome::Draw,
        ]),
        rule in prop::sample::select(Rule::ALL.to_vec()),
        name in "[a-z0-9-]{1,12}",
        searched in any::<bool>(),
        visits in 1u32..5000,
        year in prop::option::of(any::<u16>()),
    ) {
        let opening = opening.min(cells.len());
        let search = searched.then(|| {
            cells[opening..]
                .iter()
                .enumerate()
                .map(|(i, &p)| {
                    (i % 3 != 1).then(|| SearchTarget::new([0.5, 0.2, 0.3], [(p, visits)]).unwrap())
                })
                .collect()
        });
        let game = TsvGame {
            id: format!("selfplay/1/{name}"),
            year,
            league: "selfplay".to_string(),
            rule,
            size,
            black: name.clone(),
            white: name,
            winner,
            end: "five".to_string(),
            opening,
            moves: cells,
            search,
        };
        // A match's games (no search of ours) have no `search` column.
        let header = if searched { tsv::header() } else { tsv::header_without_search() };
        let columns = Columns::from_header(&header).unwrap();
        prop_assert_eq!(TsvGame::parse(&columns, &game.line()), Ok(game));
    }
}
