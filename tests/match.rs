//! pbrain-wuzi under its own match runner, against the random test brain
//! of the core crate (built beside it in the same target folder).

use std::path::PathBuf;

use wuzi::arena::stats::Wld;
use wuzi::arena::{run, EndReason, MatchArgs};
use wuzi::game::{Board, BoardSize, Rule};

const WUZI: &str = env!("CARGO_BIN_EXE_pbrain-wuzi");

/// The test brain: `cargo test --workspace` builds it beside pbrain-wuzi.
fn test_brain() -> PathBuf {
    let path = PathBuf::from(WUZI).with_file_name("wuzi-test-brain");
    assert!(
        path.exists(),
        "{} is missing: run the tests with --workspace",
        path.display()
    );
    path
}

/// The runner's command for a match of two test brains in `mode` (named
/// first and second), 15x15 from two random stones, without ABOUT; the
/// caller adds the games, the seed and the rest.
fn test_brain_match(mode: &str) -> std::process::Command {
    let brain = test_brain();
    let engine = |name: &str| {
        [
            format!("cmd={}", brain.display()),
            "arg=--mode".to_string(),
            format!("arg={mode}"),
            format!("name={name}"),
        ]
    };
    let mut command = std::process::Command::new(WUZI);
    command
        .arg("match")
        .arg("--engine1")
        .args(engine("first"))
        .arg("--engine2")
        .args(engine("second"))
        .args(["--board", "15", "--random-stones", "2", "--no-about"]);
    command
}

/// Every game is legal, ends by a five, and the engine wins them all (it
/// blocks fives and makes its own; the random brain does neither reliably).
#[test]
fn pbrain_wuzi_beats_the_random_brain() {
    let brain = test_brain();
    for rule in [Rule::Freestyle, Rule::Renju] {
        let words = format!(
            "--engine1 cmd={WUZI} arg=--threads arg=1 name=wuzi init=20000 \
             --engine2 cmd={} arg=--mode arg=random name=random \
             --each turn=300 tolerance=2000 --rule {} --board 15 --games 2 --random-stones 2 --seed 9 --quiet",
            brain.display(),
            rule.gomocup_value()
        );
        let words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
        let args = MatchArgs::from_words(&words).unwrap_or_else(|e| panic!("{e}"));
        let s = run(&args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.games.len(), 2);
        for g in &s.games {
            assert!(
                matches!(g.reason, EndReason::Five),
                "{rule}: {:?}",
                g.reason
            );
            let mut board = Board::new(BoardSize::FIFTEEN, rule);
            for m in &g.moves {
                board
                    .check_move(m.point.x() as i64, m.point.y() as i64, m.color)
                    .unwrap_or_else(|e| panic!("{rule}: game {}: {e}", g.index));
                board.place(m.point, m.color).expect("legal");
            }
            assert_eq!(board.outcome(), Some(g.outcome), "{rule}: game {}", g.index);
        }
        assert_eq!(
            s.total,
            Wld {
                wins: 2,
                losses: 0,
                draws: 0
            },
            "{rule}: {s}"
        );
    }
}

/// A signal during a match (Ctrl-C, or SIGTERM from a script) stops the
/// schedule: the games in progress finish, the summary of the games played
/// is printed and the exit status says the match did not complete. The
/// signal goes to the runner's whole process group, as a terminal's Ctrl-C
/// does: the engines, in groups of their own, do not get it.
#[cfg(unix)]
#[test]
fn an_interrupted_match_prints_the_summary_of_the_games_played() {
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Stdio};
    use std::time::{Duration, Instant};

    /// Kills the match if the test fails before it ends.
    struct Running(Child);
    impl Drop for Running {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let mut command = test_brain_match("random");
    command
        .args(["--games", "100000", "--seed", "3"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A runner started ignoring SIGINT keeps it ignored (nohup, background
    // jobs), and so would this one when the tests run in the background:
    // start it with the default disposition, as a terminal would.
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = command.spawn().expect("start the match");
    let mut running = Running(child);
    let mut stdout = BufReader::new(running.0.stdout.take().expect("stdout"));
    let mut stderr = running.0.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let mut seen = String::new();
    // Wait for the first games, then interrupt the whole group.
    while !seen.contains("Game 3 ") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
    }
    let group = libc::pid_t::try_from(running.0.id()).expect("pid");
    // SAFETY: kill(2) on the process group of a child we started.
    assert_eq!(unsafe { libc::kill(-group, libc::SIGINT) }, 0);
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).map(|_| rest)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = running.0.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the match did not end within 60 s of the signal"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    seen.push_str(&reader.join().expect("reader").expect("read"));
    let stderr = stderr.join().expect("stderr reader").expect("read");
    assert!(!status.success(), "{status:?}");
    assert!(stderr.contains("interrupted after"), "{stderr}");
    let played = seen.lines().filter(|l| l.starts_with("Game ")).count();
    assert!((3..100_000).contains(&played), "{played} games");
    assert!(
        seen.contains(&format!("{played} of 100000 games, openings")),
        "{seen}"
    );
    assert!(
        seen.contains(&format!(
            "Interrupted: no game started once the signal was seen; {played} of 100000 games played"
        )),
        "{seen}"
    );
    // The engines were not hit: no game ended by a crash or a fault.
    for name in ["first", "second"] {
        assert!(
            seen.contains(&format!("{name}: losses by error: none")),
            "{seen}"
        );
    }
    for fault in ["crash", "time forfeit", "unparsable", "start failure"] {
        assert!(!seen.contains(fault), "{fault}: {seen}");
    }
    assert!(!seen.contains("Warning:"), "{seen}");
    assert!(seen.contains("Score of first vs second: "), "{seen}");
}

/// A runner killed outright (SIGKILL, the OOM killer) takes its engines
/// with it: they are in process groups of their own, and these ignore end
/// of input for 30 s, so without the parent-death signal they would outlive
/// it.
#[cfg(target_os = "linux")]
#[test]
fn engines_die_with_a_killed_runner() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    /// The fields of /proc/PID/stat after the name (which may hold
    /// spaces): state, ppid, ...; none for a process gone.
    fn stat_fields(pid: u32) -> Vec<String> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        after.split_whitespace().map(str::to_string).collect()
    }
    /// The processes whose parent is `parent`, from /proc.
    fn children(parent: u32) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| stat_fields(pid).get(1) == Some(&parent.to_string()))
            .collect()
    }
    /// Running, not a zombie waiting for whoever adopted it.
    fn alive(pid: u32) -> bool {
        matches!(stat_fields(pid).first().map(String::as_str), Some(s) if s != "Z" && s != "X")
    }

    let mut runner = test_brain_match("slow-end")
        .args(["--games", "100000", "--seed", "5", "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the match");
    let started = Instant::now();
    let engines = loop {
        let found = children(runner.id());
        if found.len() == 2 {
            break found;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = runner.kill();
            let _ = runner.wait();
            panic!("the runner did not start two engines within 30 s: {found:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    runner.kill().expect("kill the runner");
    runner.wait().expect("reap the runner");
    let killed = Instant::now();
    while engines.iter().any(|&pid| alive(pid)) {
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "engines {engines:?} still running 10 s after their runner was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A match whose output is cut off (`match ... | head -1`) plays and
/// records every game, and ends without a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_does_not_stop_the_records() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("a temporary folder");
    let psq = dir.path().join("psq");
    let mut child = test_brain_match("random")
        .args(["--games", "8", "--seed", "5", "--psq"])
        .arg(&psq)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the match");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("read");
    assert!(first.starts_with("Game 1 "), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    let status = child.wait().expect("wait");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?}: {stderr}");
    let records = std::fs::read_dir(&psq).expect("the PSQ folder").count();
    assert_eq!(records, 8, "{stderr}");
}
