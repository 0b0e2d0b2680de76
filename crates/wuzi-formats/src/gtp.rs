//! The Go Text Protocol, version 2, as gomoku GUIs speak it (KataGomo's
//! conventions): commands with optional ids, `=`/`?` responses, colours and
//! vertices. Each type parses and prints itself.
//!
//! A vertex is a column letter (Go style: `A`..`Z` without `I`; columns
//! from the 26th on take two letters, `AA`, `AB`, ..., as KataGo writes
//! them) and a row number counted from the bottom (`A1` is the bottom-left
//! corner). Boards store rows from the top, so a vertex becomes a
//! [`Point`] only on a board of known height.

use std::fmt;
use std::str::FromStr;

use wuzi_game::game::{BoardSize, Color, Point};

/// Column letters: `I` is skipped, as in Go.
const COLUMNS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// A board cell as GTP writes it: column and row, both from 0, the row
/// counted from the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vertex {
    pub column: u8,
    pub row: u8,
}

impl Vertex {
    /// The vertex of `p` on a board of `size`.
    pub fn of(p: Point, size: BoardSize) -> Vertex {
        Vertex {
            column: p.x(),
            row: size.height() - 1 - p.y(),
        }
    }

    /// The cell on a board of `size`, if the vertex lies on it.
    pub fn point_on(self, size: BoardSize) -> Option<Point> {
        if self.column >= size.width() || self.row >= size.height() {
            return None;
        }
        Point::new(self.column, size.height() - 1 - self.row)
    }
}

impl fmt::Display for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.column as usize;
        if c >= COLUMNS.len() {
            write!(f, "{}", COLUMNS[c / COLUMNS.len() - 1] as char)?;
        }
        write!(
            f,
            "{}{}",
            COLUMNS[c % COLUMNS.len()] as char,
            self.row as u32 + 1
        )
    }
}

/// Why a text is not a vertex. Every kind reads `invalid coordinate "I8"`,
/// the text GTP engines answer with (after `syntax error: `).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VertexError {
    /// No row number after the letters.
    #[error("invalid coordinate {text:?}")]
    NoRow { text: String },
    /// Letters that name no column: `I`, more than two, none at all, or
    /// a column past the widest board.
    #[error("invalid coordinate {text:?}")]
    Column { text: String },
    /// A row number that is 0, signed, not a number or past the tallest
    /// board.
    #[error("invalid coordinate {text:?}")]
    Row { text: String },
}

impl FromStr for Vertex {
    type Err = VertexError;

    /// `h8`, `H8`, `AB12`; case-insensitive.
    fn from_str(s: &str) -> Result<Vertex, VertexError> {
        let text = || s.to_string();
        let bad_column = || VertexError::Column { text: text() };
        let bad_row = || VertexError::Row { text: text() };
        let upper = s.to_ascii_uppercase();
        let split = upper
            .find(|c: char| c.is_ascii_digit())
            .ok_or_else(|| VertexError::NoRow { text: text() })?;
        let (letters, digits) = upper.split_at(split);
        let index = |b: u8| COLUMNS.iter().position(|&c| c == b);
        let column = match letters.as_bytes() {
            [one] => index(*one).ok_or_else(bad_column)?,
            [first, second] => {
                (index(*first).ok_or_else(bad_column)? + 1) * COLUMNS.len()
                    + index(*second).ok_or_else(bad_column)?
            }
            _ => return Err(bad_column()),
        };
        let row: u32 = digits.parse().map_err(|_| bad_row())?;
        if row == 0 || digits.starts_with('+') {
            return Err(bad_row());
        }
        Ok(Vertex {
            column: u8::try_from(column).map_err(|_| bad_column())?,
            row: u8::try_from(row - 1).map_err(|_| bad_row())?,
        })
    }
}

/// What `play` and `genmove` carry: a vertex, or a pass or resignation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GtpMove {
    At(Vertex),
    Pass,
    Resign,
}

impl fmt::Display for GtpMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GtpMove::At(v) => v.fmt(f),
            GtpMove::Pass => f.write_str("pass"),
            GtpMove::Resign => f.write_str("resign"),
        }
    }
}

impl FromStr for GtpMove {
    type Err = VertexError;

    fn from_str(s: &str) -> Result<GtpMove, VertexError> {
        match s.to_ascii_lowercase().as_str() {
            "pass" => Ok(GtpMove::Pass),
            "resign" => Ok(GtpMove::Resign),
            _ => s.parse().map(GtpMove::At),
        }
    }
}

/// A GTP colour: `b`, `black`, `w`, `white`, any case.
pub fn parse_color(s: &str) -> Option<Color> {
    match s.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Color::Black),
        "w" | "white" => Some(Color::White),
        _ => None,
    }
}

/// A colour as GTP prints it.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// One command line: an optional id, the command name, its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GtpCommand {
    pub id: Option<u64>,
    pub name: String,
    pub args: Vec<String>,
}

impl GtpCommand {
    /// Parses one input line after the specification's preprocessing
    /// (control characters but HT and LF removed, HT as a space, `#`
    /// comments cut). `None` for a line with nothing left (ignored, no
    /// response).
    pub fn parse(line: &str) -> Option<GtpCommand> {
        let cleaned: String = line
            .split('#')
            .next()
            .unwrap_or("")
            .chars()
            .filter_map(|c| match c {
                '\t' => Some(' '),
                // The specification's control characters: ASCII only.
                c if c.is_ascii_control() => None,
                c => Some(c),
            })
            .collect();
        // Words are separated by spaces (and tabs, made spaces above)
        // alone: other Unicode blanks are part of a word.
        let mut words = cleaned.split(' ').filter(|w| !w.is_empty());
        let first = words.next()?;
        // An id is digits only (`+5` is a command name, unknown).
        let id = first
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| first.parse::<u64>().ok())
            .flatten();
        let (id, name) = match id {
            Some(id) => (Some(id), words.next().unwrap_or("").to_string()),
            None => (None, first.to_string()),
        };
        Some(GtpCommand {
            id,
            name,
            args: words.map(str::to_string).collect(),
        })
    }
}

impl fmt::Display for GtpCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(id) = self.id {
            write!(f, "{id} ")?;
        }
        f.write_str(&self.name)?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// A response: success (`=`) or failure (`?`), the command's id echoed,
/// the text (possibly several lines), ended by an empty line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GtpResponse {
    pub success: bool,
    pub id: Option<u64>,
    pub text: String,
}

impl GtpResponse {
    pub fn success(id: Option<u64>, text: impl Into<String>) -> GtpResponse {
        GtpResponse {
            success: true,
            id,
            text: text.into(),
        }
    }

    pub fn failure(id: Option<u64>, text: impl Into<String>) -> GtpResponse {
        GtpResponse {
            success: false,
            id,
            text: text.into(),
        }
    }
}

impl fmt::Display for GtpResponse {
    /// `= 3 text` or `? 3 text`, then the empty line that ends a response.
    /// The text keeps its lines but no empty one (nor a carriage return):
    /// an empty line inside would end the response there, and the
    /// controller would read the rest as the answer to its next command.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.success { "=" } else { "?" })?;
        if let Some(id) = self.id {
            write!(f, "{id}")?;
        }
        let text = self.text.trim_end();
        if text.is_empty() {
            return write!(f, "\n\n");
        }
        // The first line may be empty: `showboard` starts the board on a
        // line of its own.
        let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
        write!(f, " {}", lines.next().unwrap_or_default().trim_end())?;
        for line in lines.map(str::trim_end).filter(|l| !l.is_empty()) {
            write!(f, "\n{line}")?;
        }
        write!(f, "\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertices_parse_print_and_map_to_points() {
        let size = BoardSize::FIFTEEN;
        let a1: Vertex = "A1".parse().unwrap();
        assert_eq!(a1.point_on(size), Point::new(0, 14));
        let h8: Vertex = "h8".parse().unwrap();
        assert_eq!(h8.point_on(size), Point::new(7, 7));
        // No I: J is the ninth column.
        assert_eq!(
            "J15".parse::<Vertex>().unwrap().point_on(size),
            Point::new(8, 0)
        );
        assert_eq!(
            Vertex::of(Point::new(8, 0).unwrap(), size).to_string(),
            "J15"
        );
        assert!("I5".parse::<Vertex>().is_err());
        // Past Z: two letters.
        let wide = BoardSize::new(32, 5).unwrap();
        let v = Vertex::of(Point::new(25, 4).unwrap(), wide);
        assert_eq!(v.to_string(), "AA1");
        assert_eq!("aa1".parse::<Vertex>(), Ok(v));
        assert_eq!(
            Vertex::of(Point::new(31, 0).unwrap(), wide).to_string(),
            "AG5"
        );
        for p in wide.points() {
            let v = Vertex::of(p, wide);
            assert_eq!(v.to_string().parse::<Vertex>(), Ok(v));
            assert_eq!(v.point_on(wide), Some(p));
        }
        for bad in ["", "A", "1", "A0", "A+1", "ZZZ1", "A1x", "Ä1"] {
            assert!(bad.parse::<Vertex>().is_err(), "{bad}");
        }
        let err = |s: &str| s.parse::<Vertex>().unwrap_err();
        assert!(matches!(err("I8"), VertexError::Column { text } if text == "I8"));
        assert!(
            matches!(err("ZZ1"), VertexError::Column { .. }),
            "column 674"
        );
        assert!(matches!(err("H"), VertexError::NoRow { .. }));
        assert!(matches!(err("H0"), VertexError::Row { .. }));
        assert!(matches!(err("H300"), VertexError::Row { .. }));
        assert!(matches!(err("H8x"), VertexError::Row { .. }));
        assert_eq!(err("I8").to_string(), "invalid coordinate \"I8\"");
        assert!(matches!(
            "pas".parse::<GtpMove>(),
            Err(VertexError::NoRow { .. })
        ));
        assert_eq!(
            "P1".parse::<Vertex>().unwrap().point_on(size),
            Point::new(14, 14)
        );
        assert_eq!("Q1".parse::<Vertex>().unwrap().point_on(size), None);
        assert_eq!("A16".parse::<Vertex>().unwrap().point_on(size), None);
        assert_eq!("PASS".parse::<GtpMove>(), Ok(GtpMove::Pass));
        assert_eq!("resign".parse::<GtpMove>(), Ok(GtpMove::Resign));
    }

    #[test]
    fn commands_and_responses() {
        assert_eq!(GtpCommand::parse("   # only a comment"), None);
        assert_eq!(GtpCommand::parse(""), None);
        let c = GtpCommand::parse("12 play\tb  H8 # comment\r").unwrap();
        assert_eq!(c.id, Some(12));
        assert_eq!(c.name, "play");
        assert_eq!(c.args, ["b", "H8"]);
        assert_eq!(c.to_string(), "12 play b H8");
        let c = GtpCommand::parse("genmove w").unwrap();
        assert_eq!((c.id, c.name.as_str()), (None, "genmove"));
        // The specification's preprocessing: ASCII control characters
        // go, words are split at spaces and tabs only, an id is digits.
        let c = GtpCommand::parse("3 na\x01me\x7f \u{85}x\u{3000}y").unwrap();
        assert_eq!((c.id, c.name.as_str()), (Some(3), "name"));
        assert_eq!(c.args, ["\u{85}x\u{3000}y"]);
        assert_eq!(GtpCommand::parse("\u{3000}").unwrap().name, "\u{3000}");
        let c = GtpCommand::parse("+5 name").unwrap();
        assert_eq!((c.id, c.name.as_str()), (None, "+5"));
        assert_eq!(GtpResponse::success(Some(3), "H8").to_string(), "=3 H8\n\n");
        assert_eq!(GtpResponse::success(None, "").to_string(), "=\n\n");
        // No empty line inside a response: it would end it early.
        assert_eq!(
            GtpResponse::failure(Some(2), "bad x\n\n= A1\r\n  \nrest  \n").to_string(),
            "?2 bad x\n= A1\nrest\n\n"
        );
        assert_eq!(
            GtpResponse::success(None, "\n  A B\n1 . .").to_string(),
            "= \n  A B\n1 . .\n\n"
        );
        assert_eq!(
            GtpResponse::failure(None, "illegal move").to_string(),
            "? illegal move\n\n"
        );
        assert_eq!(parse_color("WHITE"), Some(Color::White));
        assert_eq!(parse_color("x"), None);
    }
}
