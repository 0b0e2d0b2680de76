//! A pbrain-wuzi process driven line by line, for the protocol and memory
//! tests.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use wuzi::gomocup::Coord;

/// How long any expected line may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running brain with its output read on a thread.
pub struct Brain {
    pub child: Child,
    /// `None` once closed (end of input for the brain).
    pub stdin: Option<ChildStdin>,
    /// What the brain writes to stderr.
    stderr: File,
    lines: Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
}

impl Brain {
    pub fn start(args: &[&str]) -> Brain {
        // Kept, not discarded: a test that fails on how the brain ended
        // shows what it said there (a panic, say).
        let stderr = tempfile::tempfile().expect("a file for the brain's stderr");
        let mut child = super::brain_command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr.try_clone().expect("share the stderr file"))
            .spawn()
            .expect("start pbrain-wuzi");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Brain {
            child,
            stdin,
            stderr,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to the brain");
        stdin.flush().expect("flush");
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    /// The next line that is not a MESSAGE/DEBUG/INFO line.
    pub fn answer(&mut self) -> String {
        self.expect(|l| {
            !l.starts_with("MESSAGE") && !l.starts_with("DEBUG") && !l.starts_with("INFO ")
        })
    }

    pub fn expect(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        // Under wine a brain starting while others start may stall for
        // seconds before its first line.
        let wait = if super::brain_runs_under_wine() {
            WAIT * 3
        } else {
            WAIT
        };
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(e) => {
                    let why = match e {
                        RecvTimeoutError::Timeout => format!("nothing for {wait:?}"),
                        RecvTimeoutError::Disconnected => format!(
                            "its output closed (exit: {:?})",
                            self.child.try_wait().ok().flatten()
                        ),
                    };
                    panic!(
                        "no expected line ({why}); the brain said:\n{}\nits stderr:\n{}",
                        self.seen.join("\n"),
                        self.stderr_text()
                    )
                }
            }
        }
    }

    pub fn expect_move(&mut self) -> (i64, i64) {
        let line = self.answer();
        parse_move(&line)
            .unwrap_or_else(|| panic!("not a move: {line:?}; before:\n{}", self.seen.join("\n")))
    }

    /// Lines printed within `window`.
    pub fn drain(&mut self, window: Duration) -> Vec<String> {
        let deadline = Instant::now() + window;
        let mut got = Vec::new();
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => got.push(line),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => return got,
            }
        }
    }

    /// How long the brain took to exit, within `limit`; `None` if it is
    /// still running. An exit other than status 0 (a signal, a panic)
    /// fails the test, with what the brain wrote to stderr.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().ok().flatten() {
                assert!(
                    status.success() || killed_by_wine(status),
                    "the brain ended with {status}; its stderr:\n{}",
                    self.stderr_text()
                );
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// What the brain has written to stderr so far.
    pub fn stderr_text(&mut self) -> String {
        let mut text = String::new();
        if self.stderr.rewind().is_ok() {
            let mut bytes = Vec::new();
            let _ = self.stderr.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    }
}

impl Brain {
    /// The MESSAGE lines read so far.
    pub fn messages(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|l| l.starts_with("MESSAGE"))
            .cloned()
            .collect()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `status` is wine's SIGKILL of a Windows brain that is exiting:
/// wineserver finishes off the Unix process of an ending Windows one that
/// lingers, which a loaded machine shows now and then (the same exe and
/// input otherwise exit with status 0). A Windows brain that crashes ends
/// with an exit code, not a signal, so this forgives nothing else.
fn killed_by_wine(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    super::brain_runs_under_wine() && status.signal() == Some(9)
}

/// A move line, `x,y`, read with the protocol's own coordinates.
pub fn parse_move(line: &str) -> Option<(i64, i64)> {
    let c: Coord = line.parse().ok()?;
    Some((c.x, c.y))
}
