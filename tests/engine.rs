//! The engine API: background search, pondering, STOP, tree reuse, reports.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::p;
use wuzi::engine::{Engine, Finished, SearchKind};
use wuzi::game::{BoardSize, CellSet, Color, MoveError, Rule};
use wuzi::nn::{EvalService, Model, NetConfig, ServiceConfig};
use wuzi::protocol::session::{Driver, Flow, FrontEnd, Session, Urgency};
use wuzi::search::{SearchBatch, SearchConfig, StopReason};

fn engine(rule: Rule) -> Engine {
    let model = Model::random_native(
        NetConfig {
            blocks: 1,
            channels: 16,
        },
        2,
    );
    let service = Arc::new(EvalService::start_model(model, ServiceConfig::default()).unwrap());
    let config = SearchConfig {
        threads: 2,
        batch_size: SearchBatch::Fixed(4),
        ..SearchConfig::default()
    };
    Engine::new(service, config, BoardSize::square(15).unwrap(), rule)
}

#[test]
fn pondering_builds_the_tree_the_next_move_uses() {
    let mut e = engine(Rule::Freestyle);
    e.play(p(7, 7)).unwrap();
    e.play(p(8, 8)).unwrap();
    // Our move, then ponder on the opponent's time.
    e.play(p(6, 6)).unwrap();
    e.start(SearchKind::Ponder(None));
    // Until a reply has been searched (a fixed wait could end before the
    // first batch on a busy machine; a stop drops batches in flight).
    let deadline = Instant::now() + Duration::from_secs(20);
    while e
        .report(&[], 1)
        .and_then(|r| r.moves.first().map(|m| m.visits))
        .unwrap_or(0)
        < 4
    {
        assert!(Instant::now() < deadline, "no reply searched");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(e.is_searching());
    // The opponent's move stops the pondering.
    let pondered = e.stop().expect("a ponder result");
    assert_eq!(pondered.kind, SearchKind::Ponder(None));
    assert_eq!(pondered.result.reason, StopReason::Stopped);
    let reply = pondered.result.moves[0].mv;
    e.play(reply).unwrap();
    let before = e
        .report(&[], 5)
        .expect("the reply was searched while pondering");
    assert!(before.visits > 0);
    e.time.turn = Some(Duration::from_millis(600));
    e.time.lag = Duration::from_millis(100);
    let result = e.think().expect("a result");
    assert!(result.best_move.is_some());
    let after = e.report(&[], 5).unwrap();
    assert!(after.visits > before.visits);
}

#[test]
fn repeated_settings_leave_a_ponder_running_and_new_ones_stop_it() {
    let mut e = engine(Rule::Freestyle);
    e.play(p(7, 7)).unwrap();
    e.start(SearchKind::Ponder(None));
    let threads = e.config().threads;
    // Managers repeat INFO thread_num and the like before moves.
    e.configure(|c| c.threads = threads);
    assert_eq!(e.search_kind(), Some(SearchKind::Ponder(None)));
    e.configure(|c| c.threads = threads + 1);
    assert_eq!(e.search_kind(), None);
    assert_eq!(e.config().threads, threads + 1);
}

/// A front end of two commands: a ponder, and a setting that keeps it.
struct PonderAndSet;

enum Line {
    Ponder(Option<Duration>),
    Threads(usize),
}

impl FrontEnd for PonderAndSet {
    type Command = Line;
    type Job = ();
    fn urgency(&self, _: &Line) -> Urgency {
        Urgency::InTurn
    }
    fn keeps_background(&self, line: &Line) -> bool {
        matches!(line, Line::Threads(_))
    }
    fn execute(&mut self, s: &mut Session<()>, line: Line) -> Flow {
        match line {
            Line::Ponder(limit) => s.ponder(limit),
            Line::Threads(n) => s.engine.configure(|c| c.threads = n),
        }
        Flow::Continue
    }
    fn finished(&mut self, _: &mut Session<()>, _: (), _: Finished) {}
    fn refuse(&mut self, _: &mut Session<()>, _: Line, _: &str) {}
}

/// A setting that restarts the search (a new thread count) while the
/// engine ponders: the ponder goes on under it, for what is left of its
/// limit; a ponder that has ended is not started again.
#[test]
fn a_ponder_goes_on_after_a_setting_that_restarts_the_search() {
    let mut e = engine(Rule::Freestyle);
    e.play(p(7, 7)).unwrap();
    let threads = e.config().threads;
    let session: Session<()> = Session::new(e, Box::new(std::io::sink()));
    let mut driver = Driver::new(PonderAndSet, session);
    driver.handle(Line::Ponder(None));
    assert_eq!(
        driver.session.engine.search_kind(),
        Some(SearchKind::Ponder(None))
    );
    driver.handle(Line::Threads(threads + 1));
    assert_eq!(driver.session.engine.config().threads, threads + 1);
    assert_eq!(
        driver.session.engine.search_kind(),
        Some(SearchKind::Ponder(None)),
        "pondering again"
    );
    // A limited ponder keeps what is left of its limit.
    let limit = Duration::from_secs(600);
    driver.handle(Line::Ponder(Some(limit)));
    driver.handle(Line::Threads(threads));
    match driver.session.engine.search_kind() {
        Some(SearchKind::Ponder(Some(left))) => assert!(left < limit, "{left:?}"),
        other => panic!("not pondering: {other:?}"),
    }
    // One that has run out stays ended.
    driver.handle(Line::Ponder(Some(Duration::from_millis(50))));
    let start = Instant::now();
    while driver.session.engine.is_searching() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the ponder did not end"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    driver.handle(Line::Threads(threads + 1));
    assert_eq!(driver.session.engine.search_kind(), None);
    driver.session.engine.stop();
}

/// Nodes keep the moves and priors they were expanded with: a setting
/// that expands differently (the move radius, the policy temperature)
/// empties the tree, others keep it for the next search.
#[test]
fn settings_that_expand_differently_empty_the_tree() {
    let mut e = engine(Rule::Freestyle);
    e.play(p(7, 7)).unwrap();
    e.limits.max_playouts = Some(100);
    e.think().unwrap();
    let searched = e.report(&[], 3).expect("the searched root").visits;
    assert!(searched > 0);
    let threads = e.config().threads;
    e.configure(|c| c.threads = threads + 1);
    assert_eq!(e.report(&[], 3).map(|r| r.visits), Some(searched));
    let distance = e.config().candidate_distance;
    e.configure(|c| c.candidate_distance = distance + 1);
    assert!(e.report(&[], 3).is_none_or(|r| r.visits == 0));
    e.think().unwrap();
    let temperature = e.config().policy_temperature;
    e.configure(|c| c.policy_temperature = temperature * 1.3);
    assert!(e.report(&[], 3).is_none_or(|r| r.visits == 0));
}

#[test]
fn a_timed_ponder_ends_by_itself_and_stop_ends_thinking() {
    let mut e = engine(Rule::Renju);
    e.play(p(7, 7)).unwrap();
    e.start(SearchKind::Ponder(Some(Duration::from_millis(100))));
    let start = Instant::now();
    let finished = loop {
        if let Some(f) = e.poll() {
            break f;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "ponder did not end"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(finished.result.reason, StopReason::Time);

    // No clock: thinking runs until STOP.
    e.start(SearchKind::Think);
    std::thread::sleep(Duration::from_millis(150));
    assert!(e.is_searching());
    let stopped = Instant::now();
    let finished = e.stop().unwrap();
    // Seconds of slack for a loaded machine: without STOP it would run on.
    assert!(
        stopped.elapsed() < Duration::from_secs(3),
        "{:?}",
        stopped.elapsed()
    );
    assert_eq!(finished.kind, SearchKind::Think);
    assert_eq!(finished.result.reason, StopReason::Stopped);
    assert!(finished.result.best_move.is_some());
}

#[test]
fn refused_moves_leave_the_position_unchanged() {
    let mut e = engine(Rule::Renju);
    e.play(p(7, 7)).unwrap();
    assert_eq!(e.play(p(7, 7)), Err(MoveError::Occupied(p(7, 7))));
    // A cell off this 15x15 board (negative coordinates are not a Point).
    assert!(matches!(e.play(p(15, 0)), Err(MoveError::OffBoard { .. })));
    assert_eq!(e.board().stone_count(), 1);
    assert_eq!(e.board().side_to_move(), Color::White);
    assert!(e
        .take_back(p(3, 3))
        .unwrap_err()
        .contains("last move is 7,7"));
    assert_eq!(e.take_back(p(7, 7)), Ok(()));
    assert!(e.take_back(p(7, 7)).is_err());
    assert_eq!(e.board().stone_count(), 0);
}

#[test]
fn reports_follow_a_move_path() {
    let mut e = engine(Rule::Standard);
    e.play(p(7, 7)).unwrap();
    e.limits.max_playouts = Some(400);
    let result = e.think().unwrap();
    let root = e.report(&[], 3).unwrap();
    assert_eq!(root.moves.len(), 3);
    assert!(root.moves[0].visits >= root.moves[1].visits);
    assert_eq!(root.side_to_move, Color::White);
    let best = result.best_move.unwrap();
    let child = e.report(&[best], 3).expect("the best move's node");
    assert_eq!(child.side_to_move, Color::Black);
    assert!(child.visits > 0);
    // A path leaving the tree, or an illegal one, has no report.
    assert!(e.report(&[p(7, 7)], 3).is_none());
    assert!(e.report(&[p(0, 0), p(0, 1), p(0, 2), p(0, 3)], 3).is_none());
}

/// A search that must answer counts as busy until its result is
/// collected, not only while its thread runs: a command handled between
/// the thread's end and the collection must wait behind it, not run as if
/// idle and stop the engine, which drops the unanswered result.
#[test]
fn a_finished_search_is_busy_until_collected() {
    let mut e = engine(Rule::Freestyle);
    e.time.turn = Some(Duration::from_millis(30));
    let mut session: Session<()> = Session::new(e, Box::new(std::io::sink()));
    session.think(());
    let started = Instant::now();
    while session.engine.is_searching() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the search never ended"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(session.busy(), "ended, not yet collected");
    assert!(session.engine.poll().is_some());
    assert!(!session.busy(), "collected");
}

/// A search that ends by itself says so on the channel given, and the
/// engine then has its result at once: a protocol loop woken by the
/// message answers without waiting for its next poll.
#[test]
fn a_search_that_ends_wakes_whoever_waits_and_is_collected() {
    let mut e = engine(Rule::Freestyle);
    let (ended, search_ended) = crossbeam_channel::bounded(1);
    e.notify_search_end(ended);
    e.time.turn = Some(Duration::from_millis(40));
    for _ in 0..3 {
        e.start(SearchKind::Think);
        search_ended
            .recv_timeout(Duration::from_secs(20))
            .expect("a wake-up when the search ends");
        let finished = e.poll().expect("the result, right after the wake-up");
        assert!(finished.result.best_move.is_some());
    }
}

/// A block list that a GUI keeps after stones were played on its cells
/// restricts nothing: the search of a new position is the cache's, and a
/// second search of it goes on from the first (a restricted root of its
/// own would start over).
#[test]
fn blocks_on_occupied_cells_restrict_nothing() {
    let mut e = engine(Rule::Freestyle);
    for mv in [p(7, 7), p(8, 8), p(6, 8)] {
        e.play(mv).unwrap();
    }
    e.limits.excluded.insert(p(8, 8));
    e.limits.max_playouts = Some(40);
    let first = e.think().expect("a result");
    assert_eq!(first.counters.playouts, 40);
    let after_first = e.report(&[], 1).expect("searched").visits;
    e.think().expect("a result");
    let after_second = e.report(&[], 1).expect("searched").visits;
    assert!(
        after_second >= after_first + 40,
        "{after_first} then {after_second}"
    );
    // An empty blocked cell does restrict the root.
    let blocked = first.best_move.expect("a move");
    e.limits.excluded.insert(blocked);
    let result = e.think().expect("a result");
    assert_ne!(result.best_move, Some(blocked));
}

/// A blocked move (yxblock) that the reused tree visited most is neither
/// listed nor the head of the line in the reports of a search that may not
/// play it, live or final; without the block it is there again.
#[test]
fn reports_of_a_search_with_a_block_leave_the_blocked_move_out() {
    let mut e = engine(Rule::Freestyle);
    for mv in [p(7, 7), p(8, 8), p(6, 8)] {
        e.play(mv).unwrap();
    }
    e.limits.max_playouts = Some(200);
    let first = e.think().expect("a result");
    let favourite = first.best_move.expect("a move");
    e.limits.excluded.insert(favourite);
    let second = e.think().expect("a result");
    assert_ne!(second.best_move, Some(favourite));
    assert!(second.moves.iter().all(|m| m.mv != favourite));
    assert_eq!(second.pv.first(), second.best_move.as_ref());
    let report = e.report(&[], usize::MAX).expect("searched");
    assert!(!report.moves.is_empty());
    assert!(report.moves.iter().all(|m| m.mv != favourite));
    assert_ne!(report.pv.first(), Some(&favourite));
    e.limits.excluded = CellSet::new();
    e.think().expect("a result");
    let report = e.report(&[], usize::MAX).expect("searched");
    assert!(report.moves.iter().any(|m| m.mv == favourite));
}
