//! The WebSocket game protocol (the specification's `websocket-game-protocol.md`,
//! written for Go, carrying gomoku and renju here): its messages, the
//! referee's game with clocks and checkpoints, and the server.

pub mod client;
pub mod flood;
pub mod game;
pub mod message;
pub mod server;

pub use game::{Ending, WsGame};
pub use message::{
    ClientMessage, EndReason, ProtocolVersion, ServerMessage, WsColor, WsMove, WsPoint,
};
pub use server::{Server, ServerConfig, ServerStats};

/// The page served for a plain `GET /` on the server's port.
pub const PAGE: &str = include_str!("page.html");
