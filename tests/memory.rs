//! The brain under a memory limit, measured as GomocupJudge measures it:
//! after every move the USS (private clean + private dirty pages) of the
//! brain's process, which must stay under `INFO max_memory`; between moves
//! the brain is suspended with SIGSTOP and resumed with SIGCONT.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

struct Brain {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Brain {
    fn start() -> Brain {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
        let stdin = child.stdin.take().expect("stdin");
        Brain {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next line that is not a MESSAGE or DEBUG line, with the
    /// MESSAGE lines seen on the way.
    fn answer(&mut self, messages: &mut Vec<String>) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .expect("the brain answers within 20 s");
            if line.starts_with("MESSAGE") || line.starts_with("DEBUG") {
                messages.push(line);
                continue;
            }
            return line;
        }
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill with a valid signal on our own child's pid.
        let pid = self.child.id() as libc::pid_t;
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// USS of the brain, as GomocupJudge sums it (one process here).
    fn uss(&self) -> usize {
        wuzi::search::memory::private_bytes_of(self.child.id()).expect("smaps_rollup")
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        let _ = writeln!(self.stdin, "END");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_move(line: &str) -> (i64, i64) {
    let (x, y) = line
        .split_once(',')
        .unwrap_or_else(|| panic!("not a move: {line:?}"));
    (x.trim().parse().expect("x"), y.trim().parse().expect("y"))
}

/// Plays `moves` engine moves (new games as needed) under `limit` bytes
/// against a second brain without a limit, suspending the measured brain
/// while the other thinks; returns the largest USS seen and the MESSAGE
/// lines of the measured brain.
fn play_under(limit: usize, moves: usize, enforce: bool) -> (usize, Vec<String>) {
    let mut brain = Brain::start();
    let mut opponent = Brain::start();
    let mut messages = Vec::new();
    let mut ignored = Vec::new();
    let mut peak = 0;
    let mut played = 0;
    while played < moves {
        for (b, memory) in [(&mut brain, limit), (&mut opponent, 0)] {
            b.send("START 15");
            assert_eq!(b.answer(&mut ignored), "OK");
            b.send(&format!("INFO max_memory {memory}"));
            b.send("INFO timeout_turn 300");
            b.send("INFO timeout_match 0");
        }
        let mut taken = HashSet::new();
        brain.send("BEGIN");
        loop {
            let answer = brain.answer(&mut messages);
            if answer.starts_with("ERROR") {
                break; // The opponent's five ended the game.
            }
            let mv = parse_move(&answer);
            assert!(taken.insert(mv), "occupied {mv:?}");
            played += 1;
            let uss = brain.uss();
            peak = peak.max(uss);
            assert!(
                uss <= limit || !enforce,
                "move {played}: USS {} MB above max_memory {} MB",
                uss >> 20,
                limit >> 20
            );
            if played >= moves {
                break;
            }
            brain.signal(libc::SIGSTOP);
            opponent.send(&format!("TURN {},{}", mv.0, mv.1));
            let reply = opponent.answer(&mut ignored);
            brain.signal(libc::SIGCONT);
            if reply.starts_with("ERROR") {
                break; // The measured brain's five ended the game.
            }
            assert!(taken.insert(parse_move(&reply)), "occupied {reply}");
            brain.send(&format!("TURN {reply}"));
        }
    }
    (peak, messages)
}

/// The brain's USS after `START 15`, before any search.
fn baseline() -> usize {
    let mut brain = Brain::start();
    brain.send("START 15");
    assert_eq!(brain.answer(&mut Vec::new()), "OK");
    brain.uss()
}

#[test]
fn uss_stays_under_max_memory_after_every_move() {
    let (peak, messages) = play_under(350_000_000, 30, true);
    eprintln!("max_memory 350 MB: peak USS {} MB", peak >> 20);
    assert!(
        messages.iter().all(|m| !m.contains("below the")),
        "{messages:?}"
    );
    // A limit 64 MB above the brain's size after START: once it has
    // searched (libtorch's buffers, the allocator's pools) the tree gets
    // about 15 MB under it (24 MB are kept free below the limit), so the
    // tree's own limit is reached and its accounting tested.
    let tight = baseline() + (64 << 20);
    let (peak, _) = play_under(tight, 30, true);
    eprintln!("max_memory {} MB: peak USS {} MB", tight >> 20, peak >> 20);
}

#[test]
fn a_limit_below_the_engines_own_needs_is_said_and_survived() {
    let (_, messages) = play_under(20_000_000, 3, false);
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("MESSAGE max_memory 19 MB is below the")),
        "{messages:?}"
    );
}
