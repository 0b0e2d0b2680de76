//! The input thread: reads lines (any line ending, invalid UTF-8 replaced,
//! overlong lines cut, by the shared [`LineSplitter`]) and hands them to the
//! controller.

use std::io::Read;
use std::time::Instant;

use crossbeam_channel::{unbounded, Receiver};

use crate::gomocup::LineSplitter;

/// Longest line kept; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

/// Starts the reader; each line comes with the moment it was read. The
/// channel closes at the end of input.
pub fn spawn(mut input: impl Read + Send + 'static) -> Receiver<(String, Instant)> {
    let (sender, lines) = unbounded();
    let spawned = std::thread::Builder::new()
        .name("protocol-input".to_string())
        .spawn(move || {
            let mut splitter = LineSplitter::new(MAX_LINE);
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
