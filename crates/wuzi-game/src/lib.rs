//! The game of gomoku and renju, and what is computed from a position
//! without a network: the bottom layer of Wuzi, with no libtorch.
//!
//! * [`game`]: board, rules, line patterns, renju forbidden points.
//! * [`tactics`]: immediate threats and the VCF/VCT threat-space solver.
//! * [`features`]: the network's input planes.
//! * [`symmetry`]: the board's dihedral symmetries, on cells and planes.
//! * [`rng`]: the small deterministic generator that games and tools share.

pub mod features;
pub mod game;
pub mod rng;
pub mod symmetry;
pub mod tactics;
