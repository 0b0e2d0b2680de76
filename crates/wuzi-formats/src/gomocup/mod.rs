//! The Gomocup protocol family's vocabulary, one set of types for every
//! program that speaks it: the brain reads [`Command`]s and prints
//! [`BrainLine`]s, the match runner and the test brain the other way round.
//! Each type parses itself (`FromStr` or a parser) and prints itself
//! (`Display`), so that what one side writes the other reads back.
//!
//! Coordinates stay as written (`x,y`, possibly off the board) until a board
//! checks them: a [`Coord`] becomes a [`Point`] only through
//! [`Board::point`](wuzi_game::game::Board::point), which says why it is not one.

mod clock;
mod command;
mod lines;
mod position;
mod reply;

use std::fmt;
use std::str::FromStr;

pub use clock::{Clock, ClockValueError, MAX_PROTOCOL_LAG_MS};
pub use command::{BlockKind, Command, CommandError, CommandParser, Stone};
pub use lines::LineSplitter;
pub use position::{position, PositionError};
pub use reply::BrainLine;

use wuzi_game::game::{BoardSize, Point};

/// The time value that means "no limit" in `INFO time_left` (and that
/// managers send in `INFO timeout_match` for an unlimited match).
pub const UNLIMITED_MS: i64 = 2_147_483_647;

/// Coordinates as written on the wire: `x,y`. Yixin-Board sends row,col,
/// which the engine takes the same way (see the Yixin spec on transposition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Coord {
    pub x: i64,
    pub y: i64,
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

impl Coord {
    /// The cell at these coordinates on the largest board (32x32), if there
    /// is one: for records whose board is checked later.
    pub fn point(self) -> Option<Point> {
        Point::new(u8::try_from(self.x).ok()?, u8::try_from(self.y).ok()?)
    }

    /// The cell at these coordinates on a board of `size`, if there is one.
    pub fn point_on(self, size: BoardSize) -> Option<Point> {
        size.point(i32::try_from(self.x).ok()?, i32::try_from(self.y).ok()?)
    }
}

impl From<Point> for Coord {
    fn from(p: Point) -> Coord {
        Coord {
            x: i64::from(p.x()),
            y: i64::from(p.y()),
        }
    }
}

/// Why a text is not `x,y`: the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected x,y, got {0:?}")]
pub struct CoordError(pub String);

impl FromStr for Coord {
    type Err = CoordError;

    /// `x,y` with blanks allowed around either number, nothing else.
    fn from_str(s: &str) -> Result<Coord, CoordError> {
        let bad = || CoordError(s.to_string());
        let (x, y) = s.split_once(',').ok_or_else(bad)?;
        Ok(Coord {
            x: x.trim().parse().map_err(|_| bad())?,
            y: y.trim().parse().map_err(|_| bad())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_parse_and_print_back() {
        for (text, x, y) in [("7,8", 7, 8), (" 7 , 8 ", 7, 8), ("-1,3", -1, 3)] {
            let c: Coord = text.parse().unwrap();
            assert_eq!((c.x, c.y), (x, y), "{text}");
            assert_eq!(c.to_string().parse::<Coord>(), Ok(c));
        }
        for bad in [
            "7",
            "7,",
            ",8",
            "7.5,2",
            "7,8,9",
            "a,b",
            "",
            "99999999999999999999,1",
        ] {
            let err = bad.parse::<Coord>().unwrap_err();
            assert!(err.to_string().contains("expected x,y"), "{bad}: {err}");
        }
        assert_eq!(Coord::from(Point::new(3, 12).unwrap()).to_string(), "3,12");
        let size = BoardSize::new(15, 10).unwrap();
        assert_eq!(Coord { x: 14, y: 9 }.point_on(size), Point::new(14, 9));
        assert_eq!(Coord { x: 31, y: 0 }.point(), Point::new(31, 0));
        for (x, y) in [(32, 0), (-1, 0), (0, 256)] {
            assert_eq!(Coord { x, y }.point(), None, "{x},{y}");
        }
        for (x, y) in [(15, 0), (0, 10), (-1, 0), (i64::MAX, 0)] {
            assert_eq!(Coord { x, y }.point_on(size), None, "{x},{y}");
        }
    }
}
