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
) -> Result<Vec<(i64, i64)>, String> {
    let format = match format {
        OpeningFormat::Auto => detect_format(line),
        f => f,
    };
    match format {
        OpeningFormat::Pos => parse_pos(line),
        _ => parse_offset(line, size),
    }
}

fn parse_offset(line: &str, size: BoardSize) -> Result<Vec<(i64, i64)>, String> {
    let numbers = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<i64>()
                .map_err(|_| format!("{t:?} is not an integer offset"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if numbers.len() % 2 != 0 {
        return Err(format!(
            "{} numbers: offsets come in dx,dy pairs",
            numbers.len()
        ));
    }
    let (cx, cy) = centre(size);
    Ok(numbers
        .chunks(2)
        .map(|pair| (cx + pair[0], cy + pair[1]))
        .collect())
}

fn parse_pos(line: &str) -> Result<Vec<(i64, i64)>, String> {
    let mut moves = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let Some(letter) = chars.next() else { break };
        // Any letter, in either case: the pos notation has 26 columns.
        let x = parse_column_letter(letter, 26)
            .ok_or_else(|| format!("expected a column letter, found {letter:?}"))?
            as i64;
        let mut digits = String::new();
        while let Some(&c) = chars.peek() {
            if !c.is_ascii_digit() {
                break;
            }
            digits.push(c);
            chars.next();
        }
        let row: i64 = digits
            .parse()
            .map_err(|_| format!("column {letter:?} is not followed by a row number"))?;
        if row < 1 {
            return Err(format!("row {row} of {letter}{row}: rows count from 1"));
        }
        moves.push((x, row - 1));
    }
    Ok(moves)
}

/// Parses a whole opening file: one opening per line; blank lines and lines
/// starting with `#` are skipped; `Auto` is decided once, from the first
/// opening line. Returns the openings and the format used.
pub fn parse_file(
    text: &str,
    format: OpeningFormat,
    size: BoardSize,
) -> Result<(Vec<RawOpening>, OpeningFormat), String> {
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
        let moves = parse_line(line, format, size).map_err(|e| format!("line {}: {e}", i + 1))?;
        openings.push(RawOpening { line: i + 1, moves });
    }
    Ok((openings, format))
}

impl FromStr for OpeningFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<OpeningFormat, String> {
        match s {
            "auto" => Ok(OpeningFormat::Auto),
            "offset" => Ok(OpeningFormat::Offset),
            "pos" => Ok(OpeningFormat::Pos),
            other => Err(format!(
                "{other:?} is not an opening format (auto, offset, pos)"
            )),
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
) -> Result<String, String> {
    let (cx, cy) = centre(size);
    let mut parts = Vec::with_capacity(moves.len());
    for &(x, y) in moves {
        parts.push(match format {
            OpeningFormat::Pos => {
                let letter = u8::try_from(x)
                    .ok()
                    .filter(|&x| x < 26)
                    .ok_or_else(|| format!("column {x} has no letter in the pos notation"))?;
                if y < 0 {
                    return Err(format!("row {y} is above the board"));
                }
                format!("{}{}", column_letter(letter), y + 1)
            }
            OpeningFormat::Offset | OpeningFormat::Auto => format!("{},{}", x - cx, y - cy),
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
}
