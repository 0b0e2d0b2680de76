//! The game: board geometry, colours, rules, patterns and renju forbidden points.

mod board;
mod cellset;
mod color;
mod forbidden;
mod pattern;
mod point;
mod rule;
mod zobrist;

pub use board::{Board, MoveError, Outcome};
pub use cellset::CellSet;
pub use color::Color;
pub use forbidden::FORBIDDEN_CHECK_STONES;
pub use pattern::{CellKind, LinePattern, PatternTable, Threat};
pub use point::{BoardSize, BoardSizeError, Direction, Point, CELL_SLOTS, MAX_SIDE, MIN_SIDE};
pub use rule::{Rule, RuleError};
pub use zobrist::{PassThroughHasher, ZobristMap};
