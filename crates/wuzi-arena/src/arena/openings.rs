//! Opening positions: files in the two plain-text notations c-gomoku-cli
//! reads, and random balanced-ish openings.
//!
//! * **offset** (the Gomocup opening format): `dx,dy` pairs separated by
//!   commas and blanks, in play order, each an offset from the centre
//!   `(floor(W/2), floor(H/2))`, e.g. `8,-3, 6,-4, 5,-4`.
//! * **pos** (letter-number): moves written back to back as a column letter
//!   from `a` and a row number from `1`, counted from the top-left corner,
//!   e.g. `h8i9j7` (boards up to 26 columns).
//!
//! The first stone is black's, then colours alternate.

use clap::ValueEnum;

use wuzi_game::game::{Board, BoardSize, CellKind, Color, MoveError, Point, Rule};

/// Notation of an opening file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OpeningFormat {
    /// Decide from the first opening line: letters mean `pos`.
    Auto,
    /// `dx,dy, dx,dy, ...` offsets from the centre.
    Offset,
    /// `h8i9j10`: column letter, row number from 1 (top-left origin).
    Pos,
}

/// How openings are taken from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OpeningOrder {
    /// In file order.
    Sequential,
    /// Shuffled with the match seed.
    Random,
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
    let (cx, cy) = (size.width() as i64 / 2, size.height() as i64 / 2);
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
        if !letter.is_ascii_alphabetic() {
            return Err(format!("expected a column letter, found {letter:?}"));
        }
        let x = (letter.to_ascii_lowercase() as u8 - b'a') as i64;
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

/// Plays an opening on a fresh board: every stone on the board and on an
/// empty cell, no renju-forbidden black stone, and no five on the board.
pub fn check_opening(size: BoardSize, rule: Rule, moves: &[(i64, i64)]) -> Result<Board, String> {
    let mut board = Board::new(size, rule);
    for (i, &(x, y)) in moves.iter().enumerate() {
        let color = board.side_to_move();
        let p = board.check_move(x, y, color).map_err(|e| match e {
            MoveError::OffBoard { .. } => {
                format!("stone {} ({x},{y}) is off the {size} board", i + 1)
            }
            other => format!("stone {}: {other}", i + 1),
        })?;
        board.place(p, color).map_err(|e| e.to_string())?;
        if board.outcome().is_some() {
            return Err(format!("the game is over after stone {}", i + 1));
        }
    }
    Ok(board)
}

pub use wuzi_game::rng::Rng;

/// The generator of openings and their order, from the match seed.
pub fn rng(seed: u64) -> Rng {
    Rng::new(seed ^ 0x2545_F491_4F6C_DD1D)
}

/// Whether neither side can make a four or a five with its next stone (so
/// there is no three and no four on the board: nothing is decided).
fn is_quiet(board: &Board) -> bool {
    Color::BOTH.iter().all(|&c| {
        board.cells_of(CellKind::Five, c).is_empty() && board.cells_of(CellKind::Four, c).is_empty()
    })
}

/// A random opening of `stones` stones near the centre, black first: legal
/// stones (no renju foul) in a square around the centre that grows when it
/// gets crowded, such that after every stone neither side has a four or can
/// make one (no threes, no fours, no five). Never a decided position.
pub fn random_opening(
    size: BoardSize,
    rule: Rule,
    stones: usize,
    rng: &mut Rng,
) -> Result<Vec<Point>, String> {
    if stones == 0 {
        return Ok(Vec::new());
    }
    if stones * 2 > size.cell_count() {
        return Err(format!(
            "a random opening of {stones} stones does not fit a {size} board"
        ));
    }
    let centre = size.center();
    let max_radius = size.width().max(size.height()) as i32;
    // Start with about three cells per stone around the centre.
    let mut radius = 1;
    while (2 * radius + 1) * (2 * radius + 1) < 3 * stones as i32 {
        radius += 1;
    }
    for attempt in 0..200 {
        let r = (radius + attempt / 20).min(max_radius);
        let mut board = Board::new(size, rule);
        let mut moves = Vec::with_capacity(stones);
        'stones: for _ in 0..stones {
            for _ in 0..100 {
                let dx = rng.below(2 * r as usize + 1) as i32 - r;
                let dy = rng.below(2 * r as usize + 1) as i32 - r;
                let Some(p) = size.point(centre.x() as i32 + dx, centre.y() as i32 + dy) else {
                    continue;
                };
                let color = board.side_to_move();
                if board.check_move(p.x() as i64, p.y() as i64, color).is_err() {
                    continue;
                }
                board.place(p, color).map_err(|e| e.to_string())?;
                if is_quiet(&board) && board.outcome().is_none() {
                    moves.push(p);
                    continue 'stones;
                }
                board.undo();
            }
            break;
        }
        if moves.len() == stones {
            return Ok(moves);
        }
    }
    Err(format!(
        "could not find a quiet random opening of {stones} stones on a {size} board"
    ))
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

    #[test]
    fn random_openings_are_quiet_and_legal() {
        let mut rng = rng(1);
        for rule in Rule::ALL {
            for (side, stones) in [(9, 4), (15, 6), (15, 10), (5, 3)] {
                let size = BoardSize::square(side).unwrap();
                let moves = random_opening(size, rule, stones, &mut rng).unwrap();
                assert_eq!(moves.len(), stones);
                let raw: Vec<(i64, i64)> =
                    moves.iter().map(|p| (p.x() as i64, p.y() as i64)).collect();
                let board = check_opening(size, rule, &raw).unwrap();
                assert!(is_quiet(&board));
            }
        }
    }
}
