//! The protocol front ends over stdin/stdout: Gomocup, extended Gomocup
//! and Yixin-Board ([`gomocup`], one command model: [`crate::gomocup`]),
//! each a thin adapter over the session core ([`session`]), which drives
//! the one engine API ([`crate::engine::Engine`]).
//!
//! A reader thread turns input into lines, so that END, STOP and YXSTOP are
//! seen while a search runs; the session runs searches in the background
//! and the front end writes every answer as one flushed line.

pub mod gomocup;
pub mod log;
mod reader;
mod report;
pub mod session;

use std::io::{BufRead, Write};
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;

use crate::config::Config;
use crate::gomocup::CommandParser;
pub use gomocup::{Dialect, Gomocup};

/// Runs the protocol until END or the end of input.
pub fn run(
    config: Config,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) {
    let lines = reader::spawn(input);
    let mut brain = Gomocup::brain(config, Box::new(output));
    let mut parser = CommandParser::new();
    loop {
        match lines.recv_timeout(Duration::from_millis(5)) {
            Ok((line, received)) => {
                tracing::info!("< {}", line.trim_end());
                brain.session.set_received(received);
                for command in parser.feed(&line) {
                    if !brain.handle(command) {
                        brain.shutdown();
                        return;
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // End of input: what was asked is still answered (each
                // search within its own time), as `printf ... | pbrain-wuzi`
                // expects; END would have stopped at once.
                brain.drain();
                brain.shutdown();
                return;
            }
        }
        brain.tick();
        if brain.wants_exit() {
            brain.shutdown();
            return;
        }
    }
}
