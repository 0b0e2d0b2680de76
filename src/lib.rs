//! Wuzi: a gomoku and renju engine.
//!
//! The rules, the threat solver, the network's input encoding, the protocol
//! vocabularies and the match runner live in `wuzi_core` (no libtorch) and
//! are re-exported here as [`game`], [`tactics`], [`gomocup`], [`gtp`],
//! [`arena`] and [`nn::features`].
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

pub use wuzi_core::{arena, game, gomocup, gtp, rng, tactics, ws};

pub mod analyse;
pub mod bench;
pub mod cli;
pub mod selfplay;
