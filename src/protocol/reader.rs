//! The input thread: reads lines (any line ending, invalid UTF-8 replaced,
//! overlong lines cut, by the shared [`LineSplitter`]) and hands them to the
//! controller.

use std::io::Read;
use std::time::Instant;

use crossbeam_channel::{bounded, unbounded, Receiver};

use crate::gomocup::LineSplitter;

/// Longest line kept; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

/// Lines read ahead of the controller at most. A writer faster than the
/// controller (a flood, or a manager writing while the engine balances an
/// opening) then waits on the pipe instead of growing this queue: memory
/// stays bounded by this many lines of at most [`MAX_LINE`] bytes.
const QUEUED_LINES: usize = 256;

/// How a front end's input is cut into lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnds {
    /// `\n`, `\r\n` or a lone `\r` (the Gomocup managers' various ends).
    Any,
    /// `\n`, every `\r` dropped (GTP).
    LfOnly,
}

/// Starts the reader; each line comes with the moment it was read. The
/// channel closes at the end of input.
pub fn spawn(mut input: impl Read + Send + 'static, ends: LineEnds) -> Receiver<(String, Instant)> {
    let (sender, lines) = bounded(QUEUED_LINES);
    let spawned = std::thread::Builder::new()
        .name("protocol-input".to_string())
        .spawn(move || {
            let mut splitter = match ends {
                LineEnds::Any => LineSplitter::new(MAX_LINE),
                LineEnds::LfOnly => LineSplitter::discarding_cr(MAX_LINE),
            };
            let mut buf = [0u8; 8192];
            let mut open = true;
            while open {
                let n = match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                splitter.feed(&buf[..n], |line| {
                    open = open && sender.send((line, Instant::now())).is_ok();
                });
            }
            if let Some(line) = splitter.finish() {
                let _ = sender.send((line, Instant::now()));
            }
        });
    if spawned.is_err() {
        // Without a reader thread there is no input: the closed channel
        // makes the controller exit cleanly.
        return unbounded().1;
    }
    lines
}
