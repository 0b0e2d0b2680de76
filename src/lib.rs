//! Wuzi: a gomoku and renju engine.
//!
//! The rules, the threat solver and the network's input encoding live in
//! `wuzi_core` (no libtorch) and are re-exported here as [`game`],
//! [`tactics`] and [`nn::features`].
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
pub mod train;

pub use wuzi_core::{game, gomocup, gtp, rng, tactics};

pub mod analyse;
pub mod arena;
pub mod bench;
pub mod selfplay;
