//! Opening files in the two plain-text notations c-gomoku-cli reads, parsed
//! and printed here.
//!
//! * **offset** (the Gomocup opening format): `dx,dy` pairs separated by
//!   commas and blanks, in play order, each an offset from the centre
//!   `(floor(W/2), floor(H/2))`, e.g. `8,-3, 6,-4, 5,-4`.
//! * **pos** (letter-number): moves written back to back as a column letter
//!   from `a` and a row number from `1`, counted from the top-left corner,
//!   e.g. `h8i9j7` (boards up to 26 columns; letters in either case).
//!
//! The first stone is black's, then colours alternate.

use std::fmt;
use std::str::FromStr;

use wuzi_game::game::BoardSize;
use wuzi_game::symmetry::Symmetry;

use crate::notation::{column_letter, parse_column_letter};

/// Notation of an opening file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpeningFormat {
    /// Decide from the first opening line: letters mean `pos`.
    Auto,
    /// `dx,dy, dx,dy, ...` offsets from the centre.
    Offset,
    /// `h8i9j10`: column letter, row number from 1 (top-left origin).
    Pos,
}

/// One opening read from a file, before it is checked against a board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOpening {
    /// 1-based line number in the file.
    pub line: usize,
    /// Board coordinates `(x, y)`, possibly off the board.
    pub moves: Vec<(i64, i64)>,
}

/// Why an opening line, file or format name could not be read, or an
/// opening not written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningError {
    /// An offset that is not an integer.
    #[error("{text:?} is not an integer offset")]
    Offset { text: String },
    /// An odd count of offsets.
    #[error("{count} numbers: offsets come in dx,dy pairs")]
    OddOffsets { count: usize },
    /// In `pos`, something other than a letter where a move starts.
    #[error("expected a column letter, found {found:?}")]
    NotALetter { found: char },
    /// In `pos`, a column letter without a row number.
    #[error("column {letter:?} is not followed by a row number")]
    NoRow { letter: char },
    /// In `pos`, row 0.
    #[error("row {row} of {letter}{row}: rows count from 1")]
    RowZero { letter: char, row: i64 },
    /// In `pos`, a row number too large for any board.
    #[error("the row number after column {letter:?} is too large for any board")]
    HugeRow { letter: char },
    /// More moves on a line than the largest board has cells.
    #[error("more than {MAX_LINE_MOVES} moves on one line")]
    TooManyMoves,
    /// More openings in a file than it may hold.
    #[error("more than {MAX_OPENINGS} openings in one file")]
    TooManyOpenings,
    /// A line of a file (1-based) that could not be read; the message is
    /// the line's error after `line N: `.
    #[error("line {line}: {error}")]
    Line {
        line: usize,
        error: Box<OpeningError>,
    },
    /// A format name other than `auto`, `offset` and `pos`.
    #[error("{text:?} is not an opening format (auto, offset, pos)")]
    Format { text: String },
    /// A column past `z`, or left of the board, written as `pos`.
    #[error("column {x} has no letter in the pos notation")]
    NoLetter { x: i64 },
    /// A row above the board written as `pos`.
    #[error("row {y} is above the board")]
    AboveBoard { y: i64 },
}

/// Which notation a line uses (`Auto` decides by the presence of letters).
pub fn detect_format(line: &str) -> OpeningFormat {
    if line.chars().any(|c| c.is_ascii_alphabetic()) {
        OpeningFormat::Pos
    } else {
        OpeningFormat::Offset
    }
}

/// Parses one opening line into board coordinates for a board of `size`.
pub fn parse_line(
    line: &str,
    format: OpeningFormat,
    size: BoardSize,
) -> Result<Vec<(i64, i64)>, OpeningError> {
    let format = match format {
        OpeningFormat::Auto => detect_format(line),
        f => f,
    };
    match format {
        OpeningFormat::Pos => parse_pos(line),
        _ => parse_offset(line, size),
    }
}

/// The most moves one opening line may have: the cells of the largest
/// board (32x32).
pub const MAX_LINE_MOVES: usize = 1024;
/// The most openings one file may have, far above any real pool: a file of
/// millions of tiny lines would otherwise take many times its size in
/// memory.
pub const MAX_OPENINGS: usize = 1 << 20;

fn parse_offset(line: &str, size: BoardSize) -> Result<Vec<(i64, i64)>, OpeningError> {
    let mut numbers = Vec::new();
    for token in line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        if numbers.len() == 2 * MAX_LINE_MOVES {
            return Err(OpeningError::TooManyMoves);
        }
        numbers.push(token.parse::<i64>().map_err(|_| OpeningError::Offset {
            text: token.to_string(),
        })?);
    }
    if numbers.len() % 2 != 0 {
        return Err(OpeningError::OddOffsets {
            count: numbers.len(),
        });
    }
    let (cx, cy) = centre(size);
    Ok(numbers
        .chunks(2)
        // Saturating: an absurd offset stays far off the board, no overflow.
        .map(|pair| (cx.saturating_add(pair[0]), cy.saturating_add(pair[1])))
        .collect())
}

fn parse_pos(line: &str) -> Result<Vec<(i64, i64)>, OpeningError> {
    let mut moves = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let Some(letter) = chars.next() else { break };
        if moves.len() == MAX_LINE_MOVES {
            return Err(OpeningError::TooManyMoves);
        }
        // Any letter, in either case: the pos notation has 26 columns.
        let x = parse_column_letter(letter, 26).ok_or(OpeningError::NotALetter { found: letter })?
            as i64;
        let mut digits = String::new();
        while let Some(&c) = chars.peek() {
            if !c.is_ascii_digit() {
                break;
            }
            digits.push(c);
            chars.next();
        }
        if digits.is_empty() {
            return Err(OpeningError::NoRow { letter });
        }
        let row: i64 = digits
            .parse()
            .map_err(|_| OpeningError::HugeRow { letter })?;
        if row < 1 {
            return Err(OpeningError::RowZero { letter, row });
        }
        moves.push((x, row - 1));
    }
    Ok(moves)
}

/// An opening's stones as a shape: black's and white's, shifted to the
/// origin and sorted.
pub type OpeningShape = (Vec<(i64, i64)>, Vec<(i64, i64)>);

/// The smallest of an opening's shapes over the board's symmetries and
/// shifts: two openings with the same canonical shape are the same
/// opening, wherever on the board and however turned.
pub fn canonical_shape(moves: &[(i64, i64)], size: BoardSize) -> OpeningShape {
    let (h, w) = (size.height() as usize, size.width() as usize);
    let on_board = |&(x, y): &(i64, i64)| {
        usize::try_from(x).is_ok_and(|x| x < w) && usize::try_from(y).is_ok_and(|y| y < h)
    };
    Symmetry::all_for(h, w)
        .iter()
        .map(|&sym| {
            let cells: Vec<(i64, i64)> = moves
                .iter()
                .filter(|c| on_board(c))
                .map(|&(x, y)| {
                    let (x, y) = sym.map_cell(x as usize, y as usize, h, w);
                    (x as i64, y as i64)
                })
                .collect();
            let min_x = cells.iter().map(|c| c.0).min().unwrap_or(0);
            let min_y = cells.iter().map(|c| c.1).min().unwrap_or(0);
            let shifted = cells.iter().map(|&(x, y)| (x - min_x, y - min_y));
            let (mut black, mut white) = (Vec::new(), Vec::new());
            for (i, cell) in shifted.enumerate() {
                if i % 2 == 0 {
                    black.push(cell)
                } else {
                    white.push(cell)
                }
            }
            black.sort_unstable();
            white.sort_unstable();
            (black, white)
        })
        .min()
        .unwrap_or_default()
}

/// The largest opening file read. Real ones are lines of a few moves, far
/// below this; a path such as `/dev/zero` ends in an error, not in memory
/// exhaustion.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of the opening file at `path`, at most [`MAX_FILE_BYTES`].
pub fn read_file_text(path: &std::path::Path) -> std::io::Result<String> {
    crate::bounded_read::read_file_text(path, MAX_FILE_BYTES)
}

/// Parses a whole opening file: one opening per line; blank lines and lines
/// starting with `#` are skipped; `Auto` is decided once, from the first
/// opening line. Returns the openings and the format used.
pub fn parse_file(
    text: &str,
    format: OpeningFormat,
    size: BoardSize,
) -> Result<(Vec<RawOpening>, OpeningFormat), OpeningError> {
    let mut format = format;
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if format == OpeningFormat::Auto {
            format = detect_format(line);
        }
        if openings.len() == MAX_OPENINGS {
            return Err(OpeningError::Line {
                line: i + 1,
                error: Box::new(OpeningError::TooManyOpenings),
            });
        }
        let moves = parse_line(line, format, size).map_err(|e| OpeningError::Line {
            line: i + 1,
            error: Box::new(e),
        })?;
        openings.push(RawOpening { line: i + 1, moves });
    }
    Ok((openings, format))
}

impl FromStr for OpeningFormat {
    type Err = OpeningError;

    fn from_str(s: &str) -> Result<OpeningFormat, OpeningError> {
        match s {
            "auto" => Ok(OpeningFormat::Auto),
            "offset" => Ok(OpeningFormat::Offset),
            "pos" => Ok(OpeningFormat::Pos),
            other => Err(OpeningError::Format {
                text: other.to_string(),
            }),
        }
    }
}

impl fmt::Display for OpeningFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpeningFormat::Auto => "auto",
            OpeningFormat::Offset => "offset",
            OpeningFormat::Pos => "pos",
        })
    }
}

/// The cell offsets count from: `(floor(W/2), floor(H/2))`.
fn centre(size: BoardSize) -> (i64, i64) {
    (size.width() as i64 / 2, size.height() as i64 / 2)
}

/// Writes an opening of board coordinates as one line of a file in
/// `format` (`Auto` writes offsets), for a board of `size`: the inverse of
/// [`parse_line`]. `pos` has letters for 26 columns only.
pub fn format_line(
    moves: &[(i64, i64)],
    format: OpeningFormat,
    size: BoardSize,
) -> Result<String, OpeningError> {
    let (cx, cy) = centre(size);
    let mut parts = Vec::with_capacity(moves.len());
    for &(x, y) in moves {
        parts.push(match format {
            OpeningFormat::Pos => {
                let letter = u8::try_from(x)
                    .ok()
                    .filter(|&x| x < 26)
                    .ok_or(OpeningError::NoLetter { x })?;
                if y < 0 {
                    return Err(OpeningError::AboveBoard { y });
                }
                format!("{}{}", column_letter(letter), y.saturating_add(1))
            }
            OpeningFormat::Offset | OpeningFormat::Auto => {
                format!("{},{}", x.saturating_sub(cx), y.saturating_sub(cy))
            }
        });
    }
    Ok(match format {
        OpeningFormat::Pos => parts.concat(),
        _ => parts.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_endless_opening_file_ends_in_an_error() {
        let error = read_file_text(std::path::Path::new("/dev/zero")).unwrap_err();
        assert_eq!(error.to_string(), "larger than 64 MiB");
    }

    #[test]
    fn offsets_are_from_floor_half() {
        let s15 = BoardSize::square(15).unwrap();
        let s20 = BoardSize::square(20).unwrap();
        assert_eq!(
            parse_line("0,0, 1,-1", OpeningFormat::Auto, s15).unwrap(),
            vec![(7, 7), (8, 6)]
        );
        assert_eq!(
            parse_line("0,0, -10,9", OpeningFormat::Offset, s20).unwrap(),
            vec![(10, 10), (0, 19)]
        );
        assert!(parse_line("0,0, 1", OpeningFormat::Offset, s15).is_err());
    }

    #[test]
    fn pos_is_letter_then_row_from_one() {
        let s15 = BoardSize::square(15).unwrap();
        assert_eq!(
            parse_line("h8i9A15", OpeningFormat::Auto, s15).unwrap(),
            vec![(7, 7), (8, 8), (0, 14)]
        );
        assert!(parse_line("h", OpeningFormat::Pos, s15).is_err());
        assert!(parse_line("h0", OpeningFormat::Pos, s15).is_err());
    }

    #[test]
    fn errors_carry_what_is_wrong() {
        let s15 = BoardSize::FIFTEEN;
        assert_eq!(
            parse_line("0,0, 1", OpeningFormat::Offset, s15),
            Err(OpeningError::OddOffsets { count: 3 })
        );
        assert_eq!(
            parse_line("0,0, 1.5,2", OpeningFormat::Offset, s15),
            Err(OpeningError::Offset {
                text: "1.5".to_string()
            })
        );
        assert_eq!(
            parse_line("h", OpeningFormat::Pos, s15),
            Err(OpeningError::NoRow { letter: 'h' })
        );
        let err = parse_line("h8i0", OpeningFormat::Pos, s15).unwrap_err();
        assert!(matches!(
            err,
            OpeningError::RowZero {
                letter: 'i',
                row: 0
            }
        ));
        assert_eq!(err.to_string(), "row 0 of i0: rows count from 1");
        assert!(matches!(
            parse_line("h8 8h", OpeningFormat::Pos, s15),
            Err(OpeningError::NotALetter { found: '8' })
        ));
        assert_eq!(
            parse_line("h8a99999999999999999999", OpeningFormat::Pos, s15),
            Err(OpeningError::HugeRow { letter: 'a' })
        );
        // Lines and files of a size no board or pool has are refused
        // before they are held in memory.
        let cells = "a1".repeat(MAX_LINE_MOVES);
        assert_eq!(
            parse_line(&cells, OpeningFormat::Pos, s15).map(|m| m.len()),
            Ok(MAX_LINE_MOVES)
        );
        assert_eq!(
            parse_line(&format!("{cells}a1"), OpeningFormat::Pos, s15),
            Err(OpeningError::TooManyMoves)
        );
        let offsets = "0,0 ".repeat(MAX_LINE_MOVES);
        assert!(parse_line(&offsets, OpeningFormat::Offset, s15).is_ok());
        assert_eq!(
            parse_line(&format!("{offsets}0,0"), OpeningFormat::Offset, s15),
            Err(OpeningError::TooManyMoves)
        );
        let pool = "0,0\n".repeat(MAX_OPENINGS + 1);
        let err = parse_file(&pool, OpeningFormat::Auto, s15).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "line {}: more than {MAX_OPENINGS} openings in one file",
                MAX_OPENINGS + 1
            )
        );
        // A file's error says the line, then what is wrong on it.
        let err = parse_file("# offsets\n0,0\n\n0,0, 1\n", OpeningFormat::Auto, s15).unwrap_err();
        assert!(
            matches!(&err, OpeningError::Line { line: 4, error } if **error == OpeningError::OddOffsets { count: 3 })
        );
        assert_eq!(
            err.to_string(),
            "line 4: 3 numbers: offsets come in dx,dy pairs"
        );
        assert!(matches!(
            "letters".parse::<OpeningFormat>(),
            Err(OpeningError::Format { text }) if text == "letters"
        ));
        assert_eq!(
            format_line(&[(26, 0)], OpeningFormat::Pos, s15),
            Err(OpeningError::NoLetter { x: 26 })
        );
        assert_eq!(
            format_line(&[(0, -1)], OpeningFormat::Pos, s15),
            Err(OpeningError::AboveBoard { y: -1 })
        );
        // Offsets past i64 stay far off the board rather than overflow.
        let far = parse_line("9223372036854775807,0", OpeningFormat::Offset, s15).unwrap();
        assert_eq!(far, vec![(i64::MAX, 7)]);
    }
}
