//! The protocol front end: Gomocup, extended Gomocup and Yixin-Board over
//! stdin/stdout, all through one command model ([`crate::gomocup`]) and one engine
//! API ([`crate::engine::Engine`]).
//!
//! A reader thread turns input into lines, so that END, STOP and YXSTOP are
//! seen while a search runs; the controller handles commands, runs searches
//! in the background and writes every answer as one flushed line.

pub mod balance;
mod controller;
pub mod log;
mod reader;

use std::io::{BufRead, Write};
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;

use crate::config::Config;
use crate::gomocup::CommandParser;
pub use controller::Controller;

/// Runs the protocol until END or the end of input.
pub fn run(
    config: Config,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) {
    let lines = reader::spawn(input);
    let mut controller = Controller::new(config, Box::new(output));
    let mut parser = CommandParser::new();
    loop {
        match lines.recv_timeout(Duration::from_millis(5)) {
            Ok((line, received)) => {
                controller.log_input(&line);
                controller.set_received(received);
                for command in parser.feed(&line) {
                    if !controller.handle(command) {
                        controller.shutdown();
                        return;
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // End of input: what was asked is still answered (each
                // search within its own time), as `printf ... | pbrain-wuzi`
                // expects; END would have stopped at once.
                controller.drain();
                controller.shutdown();
                return;
            }
        }
        controller.tick();
        if controller.wants_exit() {
            controller.shutdown();
            return;
        }
    }
}
