//! The part of Wuzi that needs no libtorch: it builds in seconds and runs
//! anywhere (a GPU machine's own PyTorch, a referee, tools).
//!
//! * [`game`]: board, rules, line patterns, renju forbidden points.
//! * [`tactics`]: immediate threats and the VCF/VCT threat-space solver.
//! * [`features`]: the network's input planes.
//! * [`symmetry`]: the board's dihedral symmetries, on cells and planes.
//! * [`records`]: game records (Gomocup TSV, Piskvork PSQ) for training.
//! * [`search_target`]: a self-play position's search targets as recorded.
//! * [`export`]: encoded training positions written out for other trainers.
//! * [`gomocup`]: the Gomocup protocol family's commands, replies and
//!   coordinates, for brains, managers and test brains alike.
//! * [`gtp`]: the Go Text Protocol's commands, responses and vertices.
//! * [`ws`]: the WebSocket game protocol: messages, referee, server.
//! * [`arena`]: the match runner (`pbrain-wuzi match`) and, in `src/bin`,
//!   the test brain it is tested with.

pub mod arena;
pub mod export;
pub mod features;
pub mod game;
pub mod gomocup;
pub mod gtp;
pub mod records;
pub mod rng;
pub mod search_target;
pub mod symmetry;
pub mod tactics;
pub mod ws;
