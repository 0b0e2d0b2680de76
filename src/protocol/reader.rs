//! The input thread: reads lines (any line ending, invalid UTF-8 replaced,
//! overlong lines cut) and hands them to the controller.

use std::io::BufRead;

use std::time::Instant;

use crossbeam_channel::{unbounded, Receiver};

/// Longest line kept; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

/// Starts the reader; each line comes with the moment it was read. The
/// channel closes at the end of input.
pub fn spawn(mut input: impl BufRead + Send + 'static) -> Receiver<(String, Instant)> {
    let (sender, lines) = unbounded();
    let spawned = std::thread::Builder::new()
        .name("protocol-input".to_string())
        .spawn(move || {
            let mut line = Vec::new();
            loop {
                let (consumed, ended) = match input.fill_buf() {
                    Ok([]) => {
                        if !line.is_empty() {
                            let _ = sender.send((
                                String::from_utf8_lossy(&line).into_owned(),
                                Instant::now(),
                            ));
                        }
                        return;
                    }
                    Ok(buf) => match buf.iter().position(|&b| b == b'\n' || b == b'\r') {
                        Some(i) => {
                            if line.len() < MAX_LINE {
                                line.extend_from_slice(&buf[..i.min(MAX_LINE - line.len())]);
                            }
                            (i + 1, true)
                        }
                        None => {
                            if line.len() < MAX_LINE {
                                line.extend_from_slice(
                                    &buf[..buf.len().min(MAX_LINE - line.len())],
                                );
                            }
                            (buf.len(), false)
                        }
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                };
                input.consume(consumed);
                if ended {
                    let text = String::from_utf8_lossy(&line).into_owned();
                    line.clear();
                    if sender.send((text, Instant::now())).is_err() {
                        return;
                    }
                }
            }
        });
    if spawned.is_err() {
        // Without a reader thread there is no input: the closed channel
        // makes the controller exit cleanly.
        return unbounded().1;
    }
    lines
}
