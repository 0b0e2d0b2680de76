//! Where Wuzi meets other programs, without libtorch:
//!
//! * [`arena`]: the match runner of Gomocup brains (`pbrain-wuzi match`:
//!   referee, clocks, openings, Elo, SPRT, records) and, in `src/bin`, the
//!   faulty or random test brain it is tested with.
//! * [`ws`]: the WebSocket game protocol: messages, the referee's game with
//!   clocks and checkpoints, the server with its web board.

pub mod arena;
pub mod ws;
