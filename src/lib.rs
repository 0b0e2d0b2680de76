//! Wuzi: a gomoku and renju engine.
//!
//! * [`game`]: board, rules, line patterns, renju forbidden points.
//! * [`nn`]: network input features, model, devices and batched evaluation.
//! * [`tactics`]: immediate threats and the VCF/VCT threat-space solver.
//! * [`bench`]: the figures behind `pbrain-wuzi bench`.

pub mod config;
pub mod engine;
pub mod game;
pub mod nn;
pub mod protocol;
pub mod rng;
pub mod search;
pub mod tactics;
pub mod train;

pub mod arena;
pub mod bench;
