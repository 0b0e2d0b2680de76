//! Wuzi: a gomoku and renju engine.
//!
//! The layers below it need no libtorch and are crates of their own,
//! re-exported here: `wuzi-game` ([`game`], [`tactics`], [`rng`],
//! [`nn::features`]), `wuzi-formats` ([`notation`], [`gomocup`], [`gtp`],
//! [`bounded_read`]), `wuzi-data` (game records for training) and
//! `wuzi-arena` ([`arena`], [`ws`]). This crate adds the network, the
//! search, the engine and its front ends.
//!
//! * [`game`]: board, rules, line patterns, renju forbidden points.
//! * [`nn`]: network input features, model, devices and batched evaluation.
//! * [`tactics`]: immediate threats and the VCF/VCT threat-space solver.
//! * [`bench`]: the figures behind `pbrain-wuzi bench`.

pub mod config;
pub mod engine;
pub mod nn;
pub mod protocol;
pub mod search;
#[cfg(feature = "torch")]
pub mod train;

pub use wuzi_arena::{arena, ws};
pub use wuzi_formats::{bounded_read, gomocup, gtp, notation};
pub use wuzi_game::{game, rng, tactics};

pub mod analyse;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod cores;
pub mod panics;
pub mod selfplay;
