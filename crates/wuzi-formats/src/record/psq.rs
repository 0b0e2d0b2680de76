//! Piskvork's PSQ game records, written as its manager writes them and
//! read as it and the Gomocup archives write them.

use std::fmt::Write as _;

use wuzi_game::game::{BoardSize, BoardSizeError};

use crate::record::MoveRecord;

/// A PSQ record as the Piskvork manager writes it: the header
/// `Piskvork WxH, 11:11, 0`, one `x,y,ms` line per stone (1-based
/// coordinates, the engine's time in milliseconds), then the names of the
/// players of black and of white.
pub fn psq_text(size: BoardSize, moves: &[MoveRecord], black: &str, white: &str) -> String {
    let mut text = String::with_capacity(32 + moves.len() * 12);
    let _ = writeln!(
        text,
        "Piskvork {}x{}, 11:11, 0",
        size.width(),
        size.height()
    );
    for m in moves {
        let _ = writeln!(text, "{},{},{}", m.point.x() + 1, m.point.y() + 1, m.ms);
    }
    let _ = writeln!(text, "{}", one_line(black));
    let _ = writeln!(text, "{}", one_line(white));
    text
}

/// A player's name as one line that cannot be read as a move (`1,2,0`
/// would be: the moves end at the first line of another form).
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ").replace(',', ";")
}

/// Why a text is not a PSQ record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PsqError {
    #[error("empty file")]
    Empty,
    /// A first line that does not start with `Piskvork`.
    #[error("first line {first:?} is not a Piskvork header like \"Piskvork 20x20, 11:11, 0\"")]
    Header { first: String },
    /// A header without `WIDTHxHEIGHT`.
    #[error("no board size WIDTHxHEIGHT in the header {header:?}")]
    NoSize { header: String },
    /// A board size the engine does not play.
    #[error(transparent)]
    Size(#[from] BoardSizeError),
    /// A move line (`x,y,time`, numbers) whose numbers do not fit.
    #[error("line {line}: move {text:?} has a number out of range")]
    MoveRange { line: usize, text: String },
    /// A move line cut short (`x,y` or `x,y,` with no time).
    #[error("line {line}: move {text:?} is cut short (expected x,y,time)")]
    CutMove { line: usize, text: String },
    /// More moves than the board has cells.
    #[error("line {line}: more moves than the {size} board has cells")]
    TooManyMoves { line: usize, size: BoardSize },
}

/// Parses a PSQ file: the size from the first line (`Piskvork 20x20, 11:11,
/// 0`), then moves `x,y,time` (1-based) up to the first line of another
/// form. Returns the size and the moves made 0-based (not yet checked
/// against the board).
pub fn parse_psq(text: &str) -> Result<(BoardSize, Vec<(i64, i64)>), PsqError> {
    parse_psq_record(text).map(|record| (record.size, record.moves))
}

/// A PSQ file read whole: [`parse_psq`]'s size and moves, and the players.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsqRecord {
    pub size: BoardSize,
    /// 0-based, not yet checked against the board.
    pub moves: Vec<(i64, i64)>,
    /// The lines after the moves, black's player first, as far as there
    /// are two: Piskvork writes the players' names there, the Gomocup judge
    /// their archives' (`RAPFI21.zip`, the `.zip` left out here).
    pub players: Vec<String>,
}

/// Parses a PSQ file with its players ([`PsqRecord`]).
pub fn parse_psq_record(text: &str) -> Result<PsqRecord, PsqError> {
    let mut lines = text.lines();
    let first = lines
        .next()
        .map(|l| l.trim().trim_start_matches('\u{feff}'))
        .ok_or(PsqError::Empty)?;
    if !first.to_ascii_lowercase().starts_with("piskvork") {
        return Err(PsqError::Header {
            first: first.to_string(),
        });
    }
    let size = first
        .split([' ', ','])
        .map(str::trim)
        .find_map(|token| {
            let (w, h) = token.split_once(['x', 'X'])?;
            Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?))
        })
        .ok_or_else(|| PsqError::NoSize {
            header: first.to_string(),
        })?;
    let size = BoardSize::new(size.0, size.1)?;
    let cells = size.width() as usize * size.height() as usize;
    let mut moves = Vec::new();
    // The first line after the moves.
    let mut after = None;
    for (i, line) in lines.by_ref().enumerate() {
        // At most four fields: a line of a million commas is not a
        // million of them in memory.
        let fields: Vec<&str> = line.trim().splitn(4, ',').map(str::trim).collect();
        let all_numbers = fields.iter().all(|f| {
            let digits = f.strip_prefix('-').unwrap_or(f);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        });
        // A move line cut short (`9,9`, `9,9,`) is a broken move, not the
        // end of the moves: names cannot hold commas.
        let digits = |f: &str| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit());
        if let [x, y] | [x, y, ""] = fields[..] {
            if digits(x) && digits(y) {
                return Err(PsqError::CutMove {
                    line: i + 2,
                    text: line.trim().to_string(),
                });
            }
        }
        if fields.len() != 3 {
            after = Some(line);
            break;
        }
        // The time as wide as any the printer writes (a u64).
        let numbers: Option<Vec<i128>> = fields.iter().map(|f| f.parse::<i128>().ok()).collect();
        let cell = |v: i128| i64::try_from(v).ok().map(|v| v.saturating_sub(1));
        match numbers.as_deref() {
            // No game has more: a file of endless move lines is refused
            // rather than held.
            Some(&[_, _, _]) if moves.len() == cells => {
                return Err(PsqError::TooManyMoves { line: i + 2, size })
            }
            Some(&[x, y, _time]) if cell(x).is_some() && cell(y).is_some() => {
                moves.extend(cell(x).zip(cell(y)))
            }
            // Digits that do not fit are a broken move, not the end of the
            // moves (the names that follow them are no numbers).
            _ if all_numbers => {
                return Err(PsqError::MoveRange {
                    line: i + 2,
                    text: line.trim().to_string(),
                })
            }
            _ => {
                after = Some(line);
                break;
            }
        }
    }
    let players = (after.into_iter().chain(lines))
        .take(2)
        .map(|line| {
            let name = line.trim();
            let archive = name.len().checked_sub(4).filter(|&cut| {
                name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".zip")
            });
            archive.map_or(name, |cut| &name[..cut]).to_string()
        })
        .collect();
    Ok(PsqRecord {
        size,
        moves,
        players,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wuzi_game::game::Color;

    use crate::record::tests::rec;

    #[test]
    fn psq_layout() {
        let size = BoardSize::square(15).unwrap();
        let text = psq_text(size, &[rec(7, 7, Color::Black)], "x", "y");
        assert_eq!(text, "Piskvork 15x15, 11:11, 0\n8,8,5\nx\ny\n");
    }

    #[test]
    fn a_move_line_cut_short_is_an_error() {
        for (text, line) in [
            ("Piskvork 15x15, 11:11, 0\n8,8,0\n9,9\n", 3),
            ("Piskvork 15x15, 11:11, 0\n8,8,0\n9,9,\nx\n", 3),
            ("Piskvork 15x15, 11:11, 0\n8,8\n", 2),
        ] {
            assert!(
                matches!(parse_psq(text), Err(PsqError::CutMove { line: l, .. }) if l == line),
                "{text:?}: {:?}",
                parse_psq(text)
            );
        }
        // A line of commas is no move, and not a million fields either.
        let commas = format!("Piskvork 15x15, 11:11, 0\n8,8,0\n{}\n", ",".repeat(1 << 20));
        let size = BoardSize::square(15).unwrap();
        assert_eq!(parse_psq(&commas), Ok((size, vec![(7, 7)])));
    }

    #[test]
    fn the_largest_time_reads_back() {
        let size = BoardSize::square(15).unwrap();
        let mut stone = rec(7, 7, Color::Black);
        stone.ms = u64::MAX;
        let text = psq_text(size, &[stone], "x", "y");
        assert_eq!(parse_psq(&text), Ok((size, vec![(7, 7)])), "{text}");
    }

    #[test]
    fn a_name_like_a_move_is_not_read_as_one() {
        let size = BoardSize::square(15).unwrap();
        for name in ["1,2,0", "99999999999999999999,1,0"] {
            let text = psq_text(size, &[rec(7, 7, Color::Black)], name, "w");
            assert_eq!(parse_psq(&text), Ok((size, vec![(7, 7)])), "{text}");
        }
    }

    #[test]
    fn the_players_follow_the_moves() {
        let size = BoardSize::square(15).unwrap();
        let text = psq_text(size, &[rec(7, 7, Color::Black)], "black one", "white");
        let record = parse_psq_record(&text).unwrap();
        assert_eq!(record.moves, [(7, 7)]);
        assert_eq!(record.players, ["black one", "white"]);
        // The Gomocup judge's: archives, then its own lines.
        let judge = "Piskvork 15x15, 11:11, 0\n8,8,0\n9,9,120\nRAPFI21.zip\nEMBRYO21.F.ZIP\n-1\n1,Freestyle1\n";
        let record = parse_psq_record(judge).unwrap();
        assert_eq!(record.moves, [(7, 7), (8, 8)]);
        assert_eq!(record.players, ["RAPFI21", "EMBRYO21.F"]);
        // A record cut after the moves has no players.
        let cut = parse_psq_record("Piskvork 15x15, 11:11, 0\n8,8,0\n").unwrap();
        assert!(cut.players.is_empty());
    }

    #[test]
    fn a_move_out_of_range_is_an_error_not_the_end() {
        let text = "Piskvork 15x15, 11:11, 0\n8,8,0\n99999999999999999999,1,0\n9,9,0\n";
        assert!(matches!(
            parse_psq(text),
            Err(PsqError::MoveRange { line: 3, .. })
        ));
    }

    #[test]
    fn no_more_moves_than_cells_are_read() {
        let size = BoardSize::square(5).unwrap();
        let full = "1,1,0\n".repeat(25);
        let text = format!("Piskvork 5x5, 11:11, 0\n{full}");
        assert_eq!(parse_psq(&text).map(|(_, m)| m.len()), Ok(25));
        let text = format!("Piskvork 5x5, 11:11, 0\n{full}1,1,0\n");
        assert_eq!(
            parse_psq(&text),
            Err(PsqError::TooManyMoves { line: 27, size })
        );
    }

    #[test]
    fn psq_parsing() {
        let text = "Piskvork 20x20, 11:11, 0\r\n10,10,100\r\n11,10,0\r\n12,12,5\r\npbrain-a.exe\r\n3,3,3\r\n";
        let (size, moves) = parse_psq(text).unwrap();
        assert_eq!(size, BoardSize::square(20).unwrap());
        assert_eq!(moves, vec![(9, 9), (10, 9), (11, 11)]);
        assert!(matches!(
            parse_psq("hello\n1,1,1\n"),
            Err(PsqError::Header { first }) if first == "hello"
        ));
        assert_eq!(parse_psq(""), Err(PsqError::Empty));
        assert_eq!(
            parse_psq("Piskvork 40x40, 11:11, 0\n"),
            Err(PsqError::Size(BoardSizeError {
                width: 40,
                height: 40
            }))
        );
        assert!(matches!(
            parse_psq("Piskvork, 11:11, 0\n"),
            Err(PsqError::NoSize { .. })
        ));
        let (size, moves) = parse_psq("Piskvorky 15x10, 11:11, 0\n1,1,0\n-1\n").unwrap();
        assert_eq!(size, BoardSize::new(15, 10).unwrap());
        assert_eq!(moves, vec![(0, 0)]);
    }
}
