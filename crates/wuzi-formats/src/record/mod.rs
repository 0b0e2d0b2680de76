//! Game records as files: PSQ ([`psq`]) and SGF ([`sgf`]), each written
//! and read in its own module.

pub mod psq;
pub mod sgf;

use wuzi_game::game::{Color, Point};

pub use psq::{parse_psq, parse_psq_record, psq_text, PsqError, PsqRecord};
pub use sgf::{parse_first_sgf_game, parse_sgf, sgf_text, SgfError, SgfGame, SgfInfo};

/// One stone of a game record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveRecord {
    pub point: Point,
    pub color: Color,
    /// Milliseconds the engine took (0 for opening stones).
    pub ms: u64,
    /// Placed by the runner as part of the opening.
    pub opening: bool,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A stone of a record, for the formats' tests.
    pub(crate) fn rec(x: u8, y: u8, color: Color) -> MoveRecord {
        MoveRecord {
            point: Point::new(x, y).unwrap(),
            color,
            ms: 5,
            opening: false,
        }
    }
}
