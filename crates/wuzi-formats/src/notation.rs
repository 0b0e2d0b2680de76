//! Cells and moves as people and GUIs write them with letters, each form
//! parsed and printed here, in one place:
//!
//! * [`Notation::Labels`]: a board diagram's labels, `h8` (column letter
//!   from the left, row number from the bottom), as `analyse` and
//!   Yixin-Board's log panel show them; Yixin-Board's own coordinates are
//!   transposed (`row,col`), which `transposed` accounts for.
//! * [`Notation::Gomocup`]: the extended Gomocup protocol's PV moves, `Xh7`
//!   (colour, column letter, row number from 0 at the top), and its cells
//!   `7,7` ([`Point`]'s own `Display`).
//!
//! Column letters run `a..z`, then `A..Z` for boards wider than 26
//! ([`column_letter`]); on boards at most 26 wide a capital letter is read
//! as its small one, as people type `H8`. (The opening files' letter form,
//! counted from the top, is in `arena::openings`; GTP's vertices in `gtp`.)

use wuzi_game::game::{BoardSize, Color, Point};

use crate::gomocup::{Coord, CoordError};

/// The letter of column `x`: `a` for 0; beyond `z` (boards wider than 26)
/// from `A`.
pub fn column_letter(x: u8) -> char {
    if x < 26 {
        (b'a' + x) as char
    } else {
        (b'A' + x - 26) as char
    }
}

/// The column of `letter` on a board `width` columns wide: the inverse of
/// [`column_letter`], and case-blind where no column needs a capital.
pub fn parse_column_letter(letter: char, width: u8) -> Option<u8> {
    let x = match letter {
        'a'..='z' => letter as u8 - b'a',
        'A'..='Z' if width <= 26 => letter as u8 - b'A',
        'A'..='Z' => letter as u8 - b'A' + 26,
        _ => return None,
    };
    (x < width).then_some(x)
}

/// Why a cell or move could not be read: the text as given, and what is
/// wrong with it (`"p8": not a column of this board`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {kind}")]
pub struct NotationError {
    pub text: String,
    pub kind: NotationErrorKind,
}

/// What is wrong with a cell or move ([`NotationError::kind`]); its
/// `Display` is the reason alone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationErrorKind {
    /// A Gomocup cell that is not `x,y`.
    #[error("not x,y")]
    NotXy(#[source] CoordError),
    /// `x,y` with a coordinate beyond the largest board.
    #[error("off every board")]
    OffEveryBoard,
    #[error("empty")]
    Empty,
    /// A letter that names no column of a board `columns` wide.
    #[error("not a column of this board")]
    NotAColumn { letter: char, columns: u8 },
    #[error("no row number after the column letter")]
    NoRow,
    /// A row number outside `1..=rows`.
    #[error("not a row of this board")]
    NotARow { row: u32, rows: u8 },
    /// A cell whose column and row each exist but not together (a
    /// transposed board).
    #[error("off the board")]
    OffBoard { size: BoardSize },
    #[error("not a stone (X or O first)")]
    NotAStone,
    #[error("no column letter")]
    NoColumnLetter,
    /// A character that is no column letter on any board.
    #[error("not a column letter")]
    NotAColumnLetter { letter: char },
}

/// How moves are written in text (summary lines, `INFO evaluate`,
/// `analyse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// The extended Gomocup PV notation (`Xh7`: row from 0 at the top).
    Gomocup,
    /// A board diagram's labels: column letter from the left, row number
    /// from the bottom (`h8` is the centre of 15x15), as Yixin-Board draws
    /// them. Yixin-Board sends `row,col` where Piskvork sends `col,row`, so
    /// with `transposed` a point's x is the GUI's row and its y the column.
    Labels { size: BoardSize, transposed: bool },
}

impl Notation {
    /// The diagram labels of a `size` board, not transposed.
    pub fn labels(size: BoardSize) -> Notation {
        Notation::Labels {
            size,
            transposed: false,
        }
    }

    /// A cell: `h8` (labels) or `7,7` (Gomocup's numbers).
    pub fn cell(self, mv: Point) -> String {
        match self {
            Notation::Gomocup => mv.to_string(),
            Notation::Labels { size, transposed } => {
                let (column, row, rows) = if transposed {
                    (mv.y(), mv.x(), size.width())
                } else {
                    (mv.x(), mv.y(), size.height())
                };
                format!("{}{}", column_letter(column), rows.saturating_sub(row))
            }
        }
    }

    /// Reads a cell as [`Notation::cell`] writes it.
    pub fn parse_cell(self, text: &str) -> Result<Point, NotationError> {
        let error = |kind| NotationError {
            text: text.to_string(),
            kind,
        };
        match self {
            Notation::Gomocup => text
                .parse::<Coord>()
                .map_err(|e| error(NotationErrorKind::NotXy(e)))?
                .point()
                .ok_or_else(|| error(NotationErrorKind::OffEveryBoard)),
            Notation::Labels { size, transposed } => {
                let (columns, rows) = if transposed {
                    (size.height(), size.width())
                } else {
                    (size.width(), size.height())
                };
                let mut chars = text.chars();
                let letter = chars
                    .next()
                    .ok_or_else(|| error(NotationErrorKind::Empty))?;
                let column = parse_column_letter(letter, columns)
                    .ok_or_else(|| error(NotationErrorKind::NotAColumn { letter, columns }))?;
                let row: u32 = chars
                    .as_str()
                    .parse()
                    .map_err(|_| error(NotationErrorKind::NoRow))?;
                if !(1..=u32::from(rows)).contains(&row) {
                    return Err(error(NotationErrorKind::NotARow { row, rows }));
                }
                let row = rows - row as u8;
                let (x, y) = if transposed {
                    (row, column)
                } else {
                    (column, row)
                };
                Point::new(x, y)
                    .filter(|&p| size.contains(p))
                    .ok_or_else(|| error(NotationErrorKind::OffBoard { size }))
            }
        }
    }

    /// A stone of `color` on `mv`, for a line of moves.
    pub fn stone(self, color: Color, mv: Point) -> String {
        match self {
            Notation::Gomocup => {
                format!("{}{}{}", stone_letter(color), column_letter(mv.x()), mv.y())
            }
            Notation::Labels { .. } => format!("{}{}", stone_letter(color), self.cell(mv)),
        }
    }

    /// Reads a stone as [`Notation::stone`] writes it.
    pub fn parse_stone(self, text: &str) -> Result<(Color, Point), NotationError> {
        let error = |kind| NotationError {
            text: text.to_string(),
            kind,
        };
        let mut chars = text.chars();
        let color = match chars.next() {
            Some('X') => Color::Black,
            Some('O') => Color::White,
            _ => return Err(error(NotationErrorKind::NotAStone)),
        };
        let rest = chars.as_str();
        let point = match self {
            Notation::Gomocup => {
                let mut chars = rest.chars();
                let letter = chars
                    .next()
                    .ok_or_else(|| error(NotationErrorKind::NoColumnLetter))?;
                let x = parse_column_letter(letter, wuzi_game::game::MAX_SIDE)
                    .ok_or_else(|| error(NotationErrorKind::NotAColumnLetter { letter }))?;
                let y: u8 = chars
                    .as_str()
                    .parse()
                    .map_err(|_| error(NotationErrorKind::NoRow))?;
                Point::new(x, y).ok_or_else(|| error(NotationErrorKind::OffEveryBoard))?
            }
            // The cell's reason, said of the whole stone.
            Notation::Labels { .. } => self.parse_cell(rest).map_err(|e| error(e.kind))?,
        };
        Ok((color, point))
    }

    /// A line of moves, `first` to play the first, each with a leading blank.
    pub fn line(self, first: Color, moves: &[Point]) -> String {
        let mut text = String::new();
        let mut color = first;
        for &mv in moves {
            text.push(' ');
            text.push_str(&self.stone(color, mv));
            color = color.opponent();
        }
        text
    }
}

fn stone_letter(color: Color) -> char {
    if color == Color::Black {
        'X'
    } else {
        'O'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_count_rows_from_the_bottom() {
        let size = BoardSize::square(15).unwrap();
        let labels = Notation::labels(size);
        let centre = Point::new(7, 7).unwrap();
        assert_eq!(labels.cell(centre), "h8");
        assert_eq!(labels.parse_cell("h8"), Ok(centre));
        assert_eq!(labels.parse_cell("H8"), Ok(centre));
        assert_eq!(labels.parse_cell("a15"), Ok(Point::new(0, 0).unwrap()));
        assert_eq!(labels.cell(Point::new(0, 14).unwrap()), "a1");
        for bad in ["p8", "h16", "h0", "zz", "", "8h", "h-1"] {
            assert!(labels.parse_cell(bad).is_err(), "{bad}");
        }
        assert_eq!(Notation::Gomocup.stone(Color::Black, centre), "Xh7");
        assert_eq!(labels.stone(Color::White, centre), "Oh8");
    }

    #[test]
    fn capitals_are_columns_past_z_on_wide_boards() {
        let size = BoardSize::square(32).unwrap();
        let labels = Notation::labels(size);
        let p = Point::new(26, 31).unwrap();
        assert_eq!(labels.cell(p), "A1");
        assert_eq!(labels.parse_cell("A1"), Ok(p));
        assert_eq!(labels.parse_cell("a1"), Ok(Point::new(0, 31).unwrap()));
        assert!(labels.parse_cell("G1").is_err(), "column 32 of 0..31");
    }

    #[test]
    fn errors_say_which_part_is_wrong() {
        let labels = Notation::labels(BoardSize::FIFTEEN);
        let kind = |r: Result<_, NotationError>| r.map(|_: Point| ()).unwrap_err().kind;
        assert!(matches!(
            kind(labels.parse_cell("p8")),
            NotationErrorKind::NotAColumn {
                letter: 'p',
                columns: 15
            }
        ));
        assert_eq!(
            kind(labels.parse_cell("h16")),
            NotationErrorKind::NotARow { row: 16, rows: 15 }
        );
        assert_eq!(kind(labels.parse_cell("h")), NotationErrorKind::NoRow);
        assert_eq!(kind(labels.parse_cell("")), NotationErrorKind::Empty);
        assert!(matches!(
            kind(Notation::Gomocup.parse_cell("7;7")),
            NotationErrorKind::NotXy(_)
        ));
        assert_eq!(
            kind(Notation::Gomocup.parse_cell("32,0")),
            NotationErrorKind::OffEveryBoard
        );
        // The text in the message is the whole stone, the reason its cell's.
        let err = labels.parse_stone("Xz9").unwrap_err();
        assert_eq!(err.text, "Xz9");
        assert_eq!(err.to_string(), "\"Xz9\": not a column of this board");
        assert_eq!(
            labels.parse_stone("h8").unwrap_err().kind,
            NotationErrorKind::NotAStone
        );
        assert_eq!(
            Notation::Gomocup.parse_stone("X-1").unwrap_err().kind,
            NotationErrorKind::NotAColumnLetter { letter: '-' }
        );
    }
}
