//! A tournament's opening file, for reading the PSQ records of its games.
//! The Gomocup judge places each game's first stones from the league's
//! opening file before the engines play, and a PSQ file records them as
//! moves like the rest: a network trained on them would learn the judge's
//! placement as play. A game's opening is the longest first part of its
//! moves that is one of the file's openings, anywhere on the board and
//! under any of its symmetries (the judge shifts and turns them).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use wuzi_formats::bounded_read::read_file_bytes;
use wuzi_formats::opening::{parse_file, read_file_text, OpeningFormat};
use wuzi_formats::record::parse_psq_record;
use wuzi_formats::tsv::TsvGame;
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};

use crate::held_out::{cells, OpeningShapes, PerBoardSize};

/// The openings of a tournament's opening file (offset or pos notation,
/// one opening per line), with their shapes on each board size met.
#[derive(Clone, Debug)]
pub struct TournamentOpenings {
    openings: Vec<Vec<(i64, i64)>>,
    by_size: PerBoardSize<OpeningShapes>,
}

/// The farthest a cell of an opening may be from the board's centre: far
/// beyond any board, near enough that no arithmetic on it saturates (two
/// saturated cells would fall together).
const MAX_OFFSET: i64 = 1 << 16;

impl TournamentOpenings {
    /// Reads the opening file at `path`.
    pub fn read(path: &Path) -> Result<TournamentOpenings, String> {
        let text =
            read_file_text(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        TournamentOpenings::parse(path, &text)
    }

    /// The openings of a file's `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<TournamentOpenings, String> {
        // Offsets count from a board's centre; any board will do, since
        // only the shape is kept.
        let any = BoardSize::square(15).map_err(|e| e.to_string())?;
        let (raw, _) = parse_file(text, OpeningFormat::Auto, any)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut openings = Vec::with_capacity(raw.len());
        for opening in raw {
            let why = if opening.moves.is_empty() {
                Some("an opening without a stone")
            } else if (opening.moves.iter())
                .any(|&(x, y)| x.abs() > MAX_OFFSET || y.abs() > MAX_OFFSET)
            {
                Some("a stone far off any board")
            } else if (1..opening.moves.len())
                .any(|i| opening.moves[..i].contains(&opening.moves[i]))
            {
                Some("two stones on one cell")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(format!("{}: line {}: {why}", path.display(), opening.line));
            }
            openings.push(opening.moves);
        }
        if openings.is_empty() {
            return Err(format!("{}: no opening in the file", path.display()));
        }
        Ok(TournamentOpenings {
            openings,
            by_size: PerBoardSize::default(),
        })
    }

    /// The number of stones of `moves`' opening: the longest first part of
    /// them that is one of the openings, if one is.
    pub fn opening_length(&mut self, moves: &[Point], size: BoardSize) -> Option<usize> {
        let shapes = self.shapes(size);
        let first = &moves[..moves.len().min(shapes.most_stones())];
        shapes.longest_opening(&cells(first), size)
    }

    /// The openings' shapes on a board of `size`, computed once.
    fn shapes(&mut self, size: BoardSize) -> &OpeningShapes {
        let openings = &self.openings;
        self.by_size
            .get_or_make(size, || OpeningShapes::new(openings, size))
    }
}

/// A league of a Gomocup results archive: what its folder's games are.
#[derive(Clone, Debug)]
pub struct League {
    /// Its name in the game ids, e.g. `Freestyle15_1` (the judge's folder).
    pub name: String,
    pub year: u16,
    /// Freestyle or standard: the rules whose games end in a five alone
    /// (a renju or caro record needs the endings of its rule).
    pub rule: Rule,
}

/// The games of a Gomocup results folder (one PSQ file per game, which the
/// judge names `ROUND_I_J_R.psq`, R the result: 1 black won, 2 white, 0 a
/// draw), in the order of their file names, as lines of the Gomocup TSV
/// layout: black the first player named, the opening found among
/// `openings`, the end `five` when the winner's last move makes one,
/// `draw`, or else `other` (a forfeit). Also the files left out, counted
/// by why.
pub fn results_folder_games(
    folder: &Path,
    league: &League,
    openings: &mut TournamentOpenings,
) -> Result<(Vec<TsvGame>, BTreeMap<&'static str, usize>), String> {
    if !matches!(league.rule, Rule::Freestyle | Rule::Standard) {
        return Err(format!(
            "{} games are not converted (their records end by the rule's own endings too): \
             freestyle or standard",
            league.rule
        ));
    }
    let unreadable = |e: std::io::Error| format!("cannot read {}: {e}", folder.display());
    let mut files = Vec::new();
    for entry in fs::read_dir(folder).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        let psq = (path.extension().and_then(|e| e.to_str()))
            .is_some_and(|e| e.eq_ignore_ascii_case("psq"));
        if psq && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let mut games = Vec::with_capacity(files.len());
    let mut left_out = BTreeMap::new();
    for file in files {
        let too_large = "larger than any game's record";
        let game = match read_file_bytes(&file, MAX_PSQ_BYTES) {
            Ok(bytes) => results_game(&file, &judge_text(&bytes), league, openings),
            Err(_) if fs::metadata(&file).is_ok_and(|m| m.len() > MAX_PSQ_BYTES) => Err(too_large),
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        match game {
            Ok(game) => games.push(game),
            Err(why) => *left_out.entry(why).or_insert(0) += 1,
        }
    }
    Ok((games, left_out))
}

/// The largest PSQ file read: a game of the largest board with its times
/// and names is a few kilobytes.
const MAX_PSQ_BYTES: u64 = 1 << 20;

/// A judge's file as text: UTF-8 where it is, else Latin-1 (the judge
/// writes names in its system's code page), so that no name loses a
/// character.
fn judge_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// One game of [`results_folder_games`], or why it is left out.
fn results_game(
    file: &Path,
    text: &str,
    league: &League,
    openings: &mut TournamentOpenings,
) -> Result<TsvGame, &'static str> {
    let record = parse_psq_record(text).map_err(|_| "not a psq record")?;
    let [black, white] = &record.players[..] else {
        return Err("not two engine names");
    };
    if black.is_empty() || white.is_empty() {
        return Err("not two engine names");
    }
    let stem = (file.file_stem().and_then(|s| s.to_str())).unwrap_or_default();
    // The judge's result; older judges (2016: `0x1-29(1).psq`) name none.
    let named = match stem.rsplit_once('_').map(|(_, digit)| digit) {
        Some("1") => Some(Outcome::Win(Color::Black)),
        Some("2") => Some(Outcome::Win(Color::White)),
        Some("0") => Some(Outcome::Draw),
        _ => None,
    };
    let size = record.size;
    let repeated = "an off-board or repeated move";
    let mut board = Board::new(size, league.rule);
    let moves = (record.moves.iter())
        .map(|&(x, y)| {
            let p = board.point(x, y).ok()?;
            board.play(p).ok().map(|()| p)
        })
        .collect::<Option<Vec<Point>>>()
        .ok_or(repeated)?;
    // Without the judge's word, only a five or a full board tells the
    // result: a game lost on time or by a crash says nothing of its moves.
    let winner = named
        .or(board.outcome())
        .ok_or("no result in the name and none on the board")?;
    // The winner's last move made a five (a forfeit's does not).
    let five = board.outcome() == Some(winner);
    let opening = (openings.opening_length(&moves, size)).ok_or("no opening of the file")?;
    let end = match winner {
        Outcome::Draw => "draw",
        _ if five => "five",
        _ => "other",
    };
    Ok(TsvGame {
        id: format!("{}/{}/{stem}", league.year, league.name),
        year: Some(league.year),
        league: league.name.clone(),
        rule: league.rule,
        size,
        black: black.clone(),
        white: white.clone(),
        winner,
        end: end.to_string(),
        opening,
        moves,
        search: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(size: BoardSize, cells: &[(i32, i32)]) -> Vec<Point> {
        cells
            .iter()
            .map(|&(x, y)| size.point(x, y).expect("on the board"))
            .collect()
    }

    #[test]
    fn the_opening_is_the_longest_first_part_that_is_one_anywhere_and_turned() {
        // Three stones, and a longer one that begins with the same three.
        let text = "# two openings\n0,0, 1,0, 0,1\n0,0, 1,0, 0,1, 2,2, -3,3\n";
        let mut openings = TournamentOpenings::parse(Path::new("o.txt"), text).unwrap();
        let size = BoardSize::square(15).unwrap();
        // The short one in a corner, mirrored left-right: (x, y) -> (-x, y).
        let game = points(size, &[(3, 2), (2, 2), (3, 3), (9, 9), (10, 10)]);
        assert_eq!(openings.opening_length(&game, size), Some(3));
        // The long one, turned by a quarter: (x, y) -> (-y, x), shifted.
        let long: Vec<(i32, i32)> = [(0, 0), (1, 0), (0, 1), (2, 2), (-3, 3)]
            .iter()
            .map(|&(x, y)| (7 - y, 7 + x))
            .collect();
        let mut game = points(size, &long);
        game.extend(points(size, &[(0, 0), (14, 14)]));
        assert_eq!(openings.opening_length(&game, size), Some(5));
        // Colours matter: the same three cells with the corner stone's
        // colour exchanged for its neighbour's are no opening.
        let swapped = points(size, &[(1, 0), (0, 0), (0, 1), (5, 5)]);
        assert_eq!(openings.opening_length(&swapped, size), None);
        // A game from elsewhere.
        let other = points(size, &[(7, 7), (8, 8), (9, 9), (10, 10)]);
        assert_eq!(openings.opening_length(&other, size), None);
    }

    #[test]
    fn an_opening_too_large_for_a_board_is_none_of_its_openings() {
        let text = "0,0, 1,0, 8,8\n0,0, 1,1, 0,2\n";
        let mut openings = TournamentOpenings::parse(Path::new("o.txt"), text).unwrap();
        let small = BoardSize::square(7).unwrap();
        // Cut to the board, the first opening would be its first two
        // stones, and every game starting with such a pair would match.
        let pair = points(small, &[(2, 2), (3, 2), (4, 4), (5, 5)]);
        assert_eq!(openings.opening_length(&pair, small), None);
        let fits = points(small, &[(0, 0), (1, 1), (0, 2), (5, 5)]);
        assert_eq!(openings.opening_length(&fits, small), Some(3));
        let large = BoardSize::square(15).unwrap();
        let wide = points(large, &[(2, 2), (3, 2), (10, 10), (0, 14)]);
        assert_eq!(openings.opening_length(&wide, large), Some(3));
        let pair = points(large, &[(2, 2), (3, 2), (4, 4), (5, 5)]);
        assert_eq!(openings.opening_length(&pair, large), None);
    }

    /// The judge's files that are no game are left out by why; a name in
    /// the judge's code page keeps its letters.
    #[test]
    fn results_files_that_are_no_game_are_counted_by_why() {
        let dir = tempfile::tempdir().unwrap();
        let head = "Piskvork 15x15, 11:11, 0\n";
        // Black's five from the opening 0,0 1,0 0,1 placed at (5,5).
        let moves = "6,6,0\n7,6,0\n6,7,0\n10,10,5\n6,8,5\n10,11,5\n6,9,5\n10,12,5\n6,10,5\n";
        let write =
            |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
        let mut latin = format!("{head}{moves}").into_bytes();
        latin.extend_from_slice(b"B\xd6SE.zip\nGOOD.zip\n-1\n1,League\n");
        write("0_1_2_1.psq", &latin);
        write(
            "0_1_3_1.psq",
            format!("{head}{moves}\nGOOD.zip\n").as_bytes(),
        );
        // 2016's judge named no result: the five on the board gives it, and
        // a game without one (lost on time) is left out.
        write(
            "0x1-9(1).psq",
            format!("{head}{moves}A.zip\nB.zip\n").as_bytes(),
        );
        write(
            "0x1-5(2).psq",
            format!("{head}6,6,0\n7,6,0\n6,7,0\n10,10,5\n6,8,5\nA.zip\nB.zip\n").as_bytes(),
        );
        write(
            "0_1_5_2.psq",
            format!("{head}8,8,0\n9,9,0\nA.zip\nB.zip\n").as_bytes(),
        );
        write("0_1_6_1.psq", &vec![b'1'; (MAX_PSQ_BYTES + 1) as usize]);
        write("notes.txt", b"not a game");
        let league = League {
            name: "League".to_string(),
            year: 2024,
            rule: Rule::Freestyle,
        };
        let mut openings =
            TournamentOpenings::parse(Path::new("o.txt"), "0,0, 1,0, 0,1\n").unwrap();
        let (games, left_out) = results_folder_games(dir.path(), &league, &mut openings).unwrap();
        assert_eq!(games.len(), 2, "{left_out:?}");
        assert_eq!(games[0].black, "B\u{d6}SE");
        assert_eq!((games[0].opening, games[0].end.as_str()), (3, "five"));
        assert_eq!(games[0].id, "2024/League/0_1_2_1");
        assert_eq!(games[1].id, "2024/League/0x1-9(1)");
        assert_eq!(games[1].winner, Outcome::Win(Color::Black));
        assert_eq!((games[1].opening, games[1].end.as_str()), (3, "five"));
        let expected: BTreeMap<&str, usize> = [
            ("not two engine names", 1),
            ("no result in the name and none on the board", 1),
            ("no opening of the file", 1),
            ("larger than any game's record", 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(left_out, expected);
        let renju = League {
            rule: Rule::Renju,
            ..league
        };
        assert!(results_folder_games(dir.path(), &renju, &mut openings).is_err());
    }

    #[test]
    fn a_file_without_openings_or_with_a_bad_line_is_refused_naming_it() {
        let why = TournamentOpenings::parse(Path::new("o.txt"), "# nothing\n\n").unwrap_err();
        assert!(why.contains("o.txt") && why.contains("no opening"), "{why}");
        let why = TournamentOpenings::parse(Path::new("o.txt"), "0,0, 1\n").unwrap_err();
        assert!(why.contains("o.txt") && why.contains("line 1"), "{why}");
        let why = TournamentOpenings::parse(Path::new("o.txt"), "0,0\n , \n").unwrap_err();
        assert!(
            why.contains("line 2") && why.contains("without a stone"),
            "{why}"
        );
    }
}
