//! Wuzi: a gomoku and renju engine.
//!
//! * [`game`]: board, rules, line patterns, renju forbidden points.
//! * [`tactics`]: immediate threats and the VCF/VCT threat-space solver.
//! * [`bench`]: the figures behind `pbrain-wuzi bench`.

pub mod game;
pub mod tactics;

pub mod bench;
