//! The brain under a memory limit, measured as GomocupJudge measures it:
//! after every move the USS (private clean + private dirty pages) of the
//! brain's process, which must stay under `INFO max_memory`; between moves
//! the brain is suspended with SIGSTOP and resumed with SIGCONT.

mod common;

use std::collections::HashSet;

use common::brain::{parse_move, Brain};

/// Suspends (SIGSTOP) or resumes (SIGCONT) the brain, as GomocupJudge does
/// between moves.
fn signal(brain: &Brain, signal: libc::c_int) {
    // SAFETY: kill with a valid signal on our own child's pid.
    assert_eq!(unsafe { libc::kill(brain.pid() as libc::pid_t, signal) }, 0);
}

/// USS of the brain, as GomocupJudge sums it (one process here).
fn uss(brain: &Brain) -> usize {
    wuzi::search::memory::private_bytes_of(brain.pid()).expect("smaps_rollup")
}

fn a_move(line: &str) -> (i64, i64) {
    parse_move(line).unwrap_or_else(|| panic!("not a move: {line:?}"))
}

/// Plays `moves` engine moves (new games as needed) under `limit` bytes
/// against a second brain without a limit, suspending the measured brain
/// while the other thinks; returns the largest USS seen and the MESSAGE
/// lines of the measured brain.
fn play_under(limit: usize, moves: usize, enforce: bool) -> (usize, Vec<String>) {
    let mut brain = Brain::start(&[]);
    let mut opponent = Brain::start(&[]);
    let mut peak = 0;
    let mut played = 0;
    while played < moves {
        for (b, memory) in [(&mut brain, limit), (&mut opponent, 0)] {
            b.send("START 15");
            assert_eq!(b.answer(), "OK");
            b.send(&format!("INFO max_memory {memory}"));
            b.send("INFO timeout_turn 300");
            b.send("INFO timeout_match 0");
        }
        let mut taken = HashSet::new();
        brain.send("BEGIN");
        loop {
            let answer = brain.answer();
            if answer.starts_with("ERROR") {
                break; // The opponent's five ended the game.
            }
            let mv = a_move(&answer);
            assert!(taken.insert(mv), "occupied {mv:?}");
            played += 1;
            let used = uss(&brain);
            peak = peak.max(used);
            assert!(
                used <= limit || !enforce,
                "move {played}: USS {} MB above max_memory {} MB",
                used >> 20,
                limit >> 20
            );
            if played >= moves {
                break;
            }
            signal(&brain, libc::SIGSTOP);
            opponent.send(&format!("TURN {},{}", mv.0, mv.1));
            let reply = opponent.answer();
            signal(&brain, libc::SIGCONT);
            if reply.starts_with("ERROR") {
                break; // The measured brain's five ended the game.
            }
            assert!(taken.insert(a_move(&reply)), "occupied {reply}");
            brain.send(&format!("TURN {reply}"));
        }
    }
    (peak, brain.messages())
}

/// The brain's USS after `START 15`, before any search.
fn baseline() -> usize {
    let mut brain = Brain::start(&[]);
    brain.send("START 15");
    assert_eq!(brain.answer(), "OK");
    uss(&brain)
}

#[test]
fn uss_stays_under_max_memory_after_every_move() {
    let (peak, messages) = play_under(350_000_000, 30, true);
    eprintln!("max_memory 350 MB: peak USS {} MB", peak >> 20);
    assert!(
        messages.iter().all(|m| !m.contains("below the")),
        "{messages:?}"
    );
    // A limit 64 MB above the brain's size after START, with 300 ms moves:
    // the tree may stay below its own limit here (the next test reaches
    // it).
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

/// The same said for the configuration file's limit, at start-up, and for
/// Yixin-Board's `hash_size` (KiB).
#[test]
fn a_configured_or_yixin_limit_below_the_engines_needs_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::config_file(
        dir.path(),
        &format!(
            "[engine]\nmax_memory_mb = 1\n[network]\nfreestyle = {:?}\n",
            common::checkout_network("freestyle-4x32.safetensors")
        ),
    );
    let mut brain = Brain::start(&["--config", config.to_str().unwrap()]);
    brain.expect(|l| {
        l.starts_with("MESSAGE [engine] max_memory_mb 1 MB is below the")
            && l.contains("searching with the smallest tree")
    });
    brain.send("START 15");
    assert_eq!(brain.answer(), "OK");
    brain.send("INFO hash_size 2048");
    brain.expect(|l| l.starts_with("MESSAGE hash_size 2 MB is below the"));
    // A limit the engine can keep is not questioned.
    brain.send("INFO hash_size 1048576");
    brain.send("INFO timeout_turn 200");
    brain.send("BEGIN");
    let answer = brain.answer();
    a_move(&answer);
    assert!(
        !brain
            .messages()
            .iter()
            .any(|m| m.contains("hash_size 1024 MB")),
        "{:?}",
        brain.messages()
    );
}

/// A long search stops when its tree reaches the tree's limit (the logs
/// say why the search stopped): under a limit below what the engine needs,
/// the smallest tree, which a search fills in seconds. (Not a limit just
/// above the needs: the USS counts the library pages that no other process
/// maps, so beside other brains of the test run it moves by megabytes, and
/// the tree's share with it.)
#[test]
fn a_long_search_stops_at_the_smallest_tree_under_a_low_max_memory() {
    let logs = tempfile::tempdir().unwrap();
    let mut brain = Brain::start(&["--log-dir", logs.path().to_str().unwrap()]);
    brain.send("START 15");
    assert_eq!(brain.answer(), "OK");
    brain.send("INFO max_memory 20000000");
    brain.expect(|l| l.contains("searching with the smallest tree"));
    // Far longer than the tree takes to fill: a search that ran to the
    // clock would show as "search (time)".
    brain.send("INFO timeout_turn 30000");
    brain.send("INFO timeout_match 0");
    brain.send("BOARD");
    for stone in ["7,7,1", "8,8,2", "7,8,1"] {
        brain.send(stone);
    }
    brain.send("DONE");
    let (x, y) = brain.expect_move();
    assert!(
        ![(7, 7), (8, 8), (7, 8)].contains(&(x, y)),
        "occupied {x},{y}"
    );
    brain.send("END");
    assert!(brain
        .wait_exit(std::time::Duration::from_secs(10))
        .is_some());
    let text: String = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|file| std::fs::read_to_string(file.unwrap().path()).unwrap())
        .collect();
    let searches: Vec<&str> = text.lines().filter(|l| l.contains("search (")).collect();
    assert!(
        searches.len() == 1 && searches[0].contains("search (memory)"),
        "{searches:?}"
    );
}

/// Memory the tree does not count (here a buffer of the test's, as it
/// might be an allocator's retained pages or the solvers' tables) stops a
/// search as the process nears the limit, long before the tree fills the
/// budget it was given at the start.
#[test]
fn a_search_stops_when_the_process_nears_its_limit_whatever_the_tree_counts() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Duration;
    use wuzi::game::{Board, BoardSize, Point, Rule};
    use wuzi::nn::{EvalService, Model, NetConfig, ServiceConfig};
    use wuzi::search::{memory, SearchConfig, SearchLimits, Searcher, StopReason, TimeBudget};

    let service = EvalService::start_model(
        Model::random_native(
            NetConfig {
                blocks: 1,
                channels: 16,
            },
            11,
        ),
        ServiceConfig::default(),
    )
    .expect("a random network");
    let used = memory::process_private_bytes().expect("the process memory is measured here");
    const BALLAST: usize = 320 << 20;
    let searcher = Searcher::new(
        Arc::new(service),
        SearchConfig {
            threads: 1,
            max_memory: used + (300 << 20),
            ..SearchConfig::default()
        },
    );
    let budget = searcher.tree_budget();
    let mut board = Board::new(BoardSize::FIFTEEN, Rule::Freestyle);
    let center = Point::new(7, 7).expect("on the board");
    board.play(center).expect("an empty board");
    let limits = SearchLimits {
        time: Some(TimeBudget {
            target: Duration::from_secs(20),
            deadline: Duration::from_secs(25),
        }),
        ..SearchLimits::default()
    };
    // The ballast arrives once the search has grown its tree (not after a
    // fixed delay: on a busy machine the search could start after it, and
    // its budget would count it).
    const GROWN: usize = 2 << 20;
    let (result, held) = std::thread::scope(|scope| {
        let ballast = scope.spawn(|| {
            let waiting = std::time::Instant::now();
            while searcher.cache().memory_bytes() < GROWN {
                assert!(
                    waiting.elapsed() < Duration::from_secs(20),
                    "the tree never grew"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut bytes = vec![0u8; BALLAST];
            // Written, so that the pages are the process's.
            for page in bytes.chunks_mut(4096) {
                page[0] = 1;
            }
            bytes
        });
        let result = searcher.search(&board, &limits, &AtomicBool::new(false));
        (result, ballast.join().expect("the ballast thread"))
    });
    let tree = searcher.cache().memory_bytes();
    assert_eq!(result.reason, StopReason::Memory, "{result:?}");
    assert!(
        (GROWN..budget / 2).contains(&tree),
        "the tree's own budget stopped it, or it stopped before the ballast: {} of {} MB",
        tree >> 20,
        budget >> 20
    );
    assert_eq!(held.len(), BALLAST);
}
