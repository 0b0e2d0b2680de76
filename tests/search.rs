//! The search with a small random network: tactics it must get right
//! whatever the network says, limits, stopping, tree reuse, determinism.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{black_has_only_forbidden_cells, board, board15, p};
use wuzi::game::{Board, BoardSize, Color, Point, Rule};
use wuzi::nn::{EvalService, Model, NetConfig, ServiceConfig, SymmetryMode};
use wuzi::search::node::Proven;
use wuzi::search::{
    memory, RootNoise, SearchBatch, SearchConfig, SearchLimits, Searcher, StopReason, TimeBudget,
};
use wuzi::tactics::{solve, SolveLimits, ThreatKind};

fn service() -> Arc<EvalService> {
    service_with(SymmetryMode::None)
}

fn service_with(symmetry: SymmetryMode) -> Arc<EvalService> {
    // Random weights from a fixed seed: every call gives the same network.
    Arc::new(
        EvalService::start_model(
            Model::random_native(
                NetConfig {
                    blocks: 1,
                    channels: 16,
                },
                11,
            ),
            ServiceConfig {
                batch_size: 8,
                symmetry,
                ..ServiceConfig::default()
            },
        )
        .unwrap(),
    )
}

fn searcher(threads: usize) -> Searcher {
    Searcher::new(
        service(),
        SearchConfig {
            threads,
            batch_size: SearchBatch::Fixed(4),
            ..SearchConfig::default()
        },
    )
}

/// One search thread, one batch of four leaves in flight: the same tree
/// for the same network every time.
fn one_thread() -> SearchConfig {
    SearchConfig {
        threads: 1,
        pipeline: 1,
        batch_size: SearchBatch::Fixed(4),
        ..SearchConfig::default()
    }
}

fn playouts(n: u64) -> SearchLimits {
    SearchLimits {
        max_playouts: Some(n),
        ..SearchLimits::default()
    }
}

#[test]
fn a_five_is_played_and_reported_as_a_proven_win() {
    let b = board15(
        Rule::Freestyle,
        &[(7, "...XXXX..O....."), (8, "...OOO.O.......")],
        Color::Black,
    );
    let s = searcher(2);
    let result = s.search(&b, &playouts(1000), &AtomicBool::new(false));
    assert!(
        matches!(result.best_move, Some(m) if m == p(2, 7) || m == p(7, 7)),
        "{result:?}"
    );
    assert_eq!(result.proven, Proven::Win(1));
    assert!(summary(&result).contains("ev W1"), "{}", summary(&result));
    assert!(summary(&result).contains(" pv X"), "{}", summary(&result));
}

#[test]
fn a_win_on_a_blocked_cell_is_not_played() {
    // Black's only five is at (7,7), which the manager blocked (yxblock).
    let b = board15(
        Rule::Freestyle,
        &[(7, "..OXXXX........"), (9, "....O...O......")],
        Color::Black,
    );
    let mut limits = playouts(20);
    limits.excluded.insert(p(7, 7));
    let s = searcher(1);
    for attempt in 0..2 {
        // The second search finds the root proven in the cache.
        let result = s.search(&b, &limits, &AtomicBool::new(false));
        let mv = result.best_move.expect("a move");
        assert_ne!(mv, p(7, 7), "attempt {attempt}: {result:?}");
        assert!(b.is_empty(mv), "{result:?}");
        assert_eq!(result.proven, Proven::Unknown, "{result:?}");
        assert!(result.expectation < 1.0, "{result:?}");
        // The line starts with the move played (the opponent may then
        // take the blocked cell).
        assert_eq!(result.pv.first(), Some(&mv), "{result:?}");
    }
    // Unblocked, the five is played.
    let result = s.search(&b, &playouts(20), &AtomicBool::new(false));
    assert_eq!(result.best_move, Some(p(7, 7)), "{result:?}");
    // An open four with one five cell blocked: the other one, still a win.
    let open = board15(
        Rule::Freestyle,
        &[(7, "...XXXX........"), (9, "....O...O.O....")],
        Color::Black,
    );
    for blocked in [p(2, 7), p(7, 7)] {
        let mut limits = playouts(20);
        limits.excluded.insert(blocked);
        let other = if blocked == p(2, 7) { p(7, 7) } else { p(2, 7) };
        for attempt in 0..2 {
            let result = s.search(&open, &limits, &AtomicBool::new(false));
            assert_eq!(result.best_move, Some(other), "{attempt}: {result:?}");
            assert_eq!(result.proven, Proven::Win(1), "{attempt}: {result:?}");
        }
    }
}

/// The search proved the side to move's win.
fn assert_proven_won(result: &wuzi::search::SearchResult) {
    assert!(
        matches!(result.proven, Proven::Win(_)),
        "{}",
        summary(result)
    );
}

/// A freestyle 15x15 game of four black moves at `black`, white's four in
/// the corners (no threat of white's), black to move.
fn black_against_the_corners(black: &[Point; 4]) -> Board {
    let corners = [p(0, 0), p(0, 14), p(14, 0), p(14, 14)];
    let moves: Vec<Point> = black
        .iter()
        .zip(corners)
        .flat_map(|(&b, w)| [b, w])
        .collect();
    Board::from_moves(BoardSize::square(15).unwrap(), Rule::Freestyle, &moves).unwrap()
}

/// A win proven through a move that is then blocked (yxblock, a refused
/// move) is searched again among the moves left, not answered with the
/// fallback; and the blocks leave the cached position as it was.
#[test]
fn a_proven_win_through_a_blocked_move_searches_the_moves_left() {
    // Black's open three on the diagonal: either end makes an open four.
    let b = black_against_the_corners(&[p(7, 7), p(8, 8), p(9, 9), p(3, 10)]);
    let ends = [p(6, 6), p(10, 10)];
    let s = searcher(1);
    let first = s.search(&b, &playouts(50), &AtomicBool::new(false));
    assert_proven_won(&first);
    let won_by = first.best_move.expect("a move");
    assert!(ends.contains(&won_by), "{}", summary(&first));
    let other_end = if won_by == ends[0] { ends[1] } else { ends[0] };
    for attempt in 0..2 {
        // The second time the cached position is still proven won through
        // the blocked move, and again searched without it.
        let mut limits = playouts(50);
        limits.excluded.insert(won_by);
        let result = s.search(&b, &limits, &AtomicBool::new(false));
        let seen = format!("attempt {attempt}: {}", summary(&result));
        assert_eq!(result.best_move, Some(other_end), "{seen}");
        assert!(matches!(result.proven, Proven::Win(_)), "{seen}");
    }
    // Both ends blocked: a move of the searched tree, not a blocked one.
    let mut limits = playouts(100);
    limits.excluded.insert(ends[0]);
    limits.excluded.insert(ends[1]);
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    let mv = result.best_move.expect("a move");
    assert!(!ends.contains(&mv), "{}", summary(&result));
    assert!(
        result.moves.iter().any(|m| m.mv == mv && m.visits > 0),
        "not a searched root move: {}",
        summary(&result)
    );
    assert!(result.counters.playouts >= 2, "{}", summary(&result));
    // Reports of the position read the tree just searched, without the
    // blocked moves.
    let (_, reported) = s.node_after(&b, &[]).expect("the searched root");
    let data = reported.data.lock();
    assert!(data.visits > 0);
    assert!(data.edges.iter().all(|e| !ends.contains(&e.mv)));
    drop(data);
    // Unblocked, the cached position still wins through either end.
    let again = s.search(&b, &playouts(50), &AtomicBool::new(false));
    assert_proven_won(&again);
    assert!(
        again.best_move.is_some_and(|m| ends.contains(&m)),
        "{}",
        summary(&again)
    );
    let (_, cached) = s.node_after(&b, &[]).expect("the cached root");
    assert!(!Arc::ptr_eq(&cached, &reported));
}

/// A 5x5 freestyle board, white to move, two cells empty: the first
/// blocks black's four on row 0, and the full board then draws; the
/// second lets black's five in.
fn white_draws_only_by_blocking() -> (Board, Point, Point) {
    let rows = ["XXXX.", "OOOXO", "XXOOX", "OOXXO", "XOOX."];
    (
        board(Rule::Freestyle, &rows, Color::White),
        p(4, 0),
        p(4, 4),
    )
}

/// A draw proven through a move that is then blocked is not reported as
/// the value of the moves left: searched again without it, the position
/// is lost.
#[test]
fn a_proven_draw_through_a_blocked_move_is_searched_again() {
    let (b, block, other) = white_draws_only_by_blocking();
    let s = Searcher::new(service(), one_thread());
    let drawn = s.search(&b, &playouts(20), &AtomicBool::new(false));
    assert_eq!(drawn.proven, Proven::Draw, "{}", summary(&drawn));
    assert_eq!(drawn.best_move, Some(block), "{}", summary(&drawn));
    let mut limits = playouts(20);
    limits.excluded.insert(block);
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    let seen = summary(&result);
    assert_eq!(result.best_move, Some(other), "{seen}");
    assert!(matches!(result.proven, Proven::Loss(_)), "{seen}");
    // The cached position still draws through the block.
    let again = s.search(&b, &playouts(20), &AtomicBool::new(false));
    assert_eq!(again.proven, Proven::Draw, "{}", summary(&again));
}

/// The root's VCT still runs with a move blocked, and its win stands when
/// its first move is allowed; a block of that first move sends the search
/// to the moves left.
#[test]
fn the_root_solver_runs_with_blocked_moves() {
    // Black's double three at (9,7): a win by VCT, not by VCF.
    let b = black_against_the_corners(&[p(7, 7), p(8, 7), p(9, 8), p(9, 9)]);
    assert!(solve(
        &mut b.clone(),
        Color::Black,
        ThreatKind::Vcf,
        SolveLimits::new(100_000, 40),
    )
    .win
    .is_none());
    let far = p(14, 7);
    let s = searcher(1);
    let mut limits = playouts(1);
    limits.excluded.insert(far);
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    assert_proven_won(&result);
    let first = result.best_move.expect("a move");
    assert_ne!(first, far);
    // Proven once without blocks, the cached proof holds under an
    // unrelated block even where the clock leaves the solver nothing.
    let fresh = searcher(1);
    let unblocked = fresh.search(&b, &playouts(1), &AtomicBool::new(false));
    assert_proven_won(&unblocked);
    let late = SearchLimits {
        time: Some(TimeBudget::fixed(Duration::from_millis(50))),
        since: Instant::now().checked_sub(Duration::from_secs(5)),
        excluded: limits.excluded,
        ..SearchLimits::default()
    };
    let result = fresh.search(&b, &late, &AtomicBool::new(false));
    assert_proven_won(&result);
    assert_eq!(result.best_move, unblocked.best_move);
    // Blocked, its first move is not played, and the win is not claimed
    // through it.
    let mut limits = playouts(200);
    limits.excluded.insert(first);
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    assert_ne!(result.best_move, Some(first), "{}", summary(&result));
    assert!(result.counters.playouts >= 1, "{}", summary(&result));
}

/// With the tree's choice blocked (yxblock), the reported line starts
/// with the move played.
#[test]
fn the_principal_variation_starts_with_the_move_played() {
    let b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Freestyle,
        &[p(7, 7), p(8, 7)],
    )
    .unwrap();
    let s = searcher(1);
    let free = s.search(&b, &playouts(300), &AtomicBool::new(false));
    let favourite = free.best_move.expect("a move");
    assert_eq!(free.pv.first(), Some(&favourite), "{free:?}");
    let mut limits = playouts(30);
    limits.excluded.insert(favourite);
    let blocked = s.search(&b, &limits, &AtomicBool::new(false));
    let played = blocked.best_move.expect("a move");
    assert_ne!(played, favourite);
    assert_eq!(blocked.pv.first(), Some(&played), "{blocked:?}");
}

/// The first move with the centre blocked: beside it, not in a corner
/// (the root lists only the centre on an empty board).
#[test]
fn a_blocked_centre_on_an_empty_board_gets_a_move_beside_it() {
    let b = Board::new(BoardSize::square(15).unwrap(), Rule::Freestyle);
    let mut limits = playouts(20);
    limits.excluded.insert(p(7, 7));
    let result = searcher(1).search(&b, &limits, &AtomicBool::new(false));
    let mv = result.best_move.expect("a move");
    assert_eq!(mv.distance(p(7, 7)), 1, "{result:?}");
}

#[test]
fn an_opponent_four_is_blocked() {
    // White to move; black threatens (7,7) only ((2,7) is white).
    let b = board15(
        Rule::Freestyle,
        &[(7, "..OXXXX........"), (9, "....O...O......")],
        Color::White,
    );
    let s = searcher(2);
    let result = s.search(&b, &playouts(200), &AtomicBool::new(false));
    assert_eq!(result.best_move, Some(p(7, 7)), "{result:?}");
}

#[test]
fn a_vcf_is_answered_with_its_first_move_and_a_proven_win() {
    let b = board15(
        Rule::Renju,
        &[
            (0, "O.............O"),
            (4, "......X........"),
            (5, "......X........"),
            (7, "..OXXX........."),
            (14, "O.............."),
        ],
        Color::Black,
    );
    let s = searcher(1);
    let result = s.search(&b, &playouts(100), &AtomicBool::new(false));
    assert_eq!(result.best_move, Some(p(6, 7)));
    assert!(matches!(result.proven, Proven::Win(_)), "{result:?}");
    let summary = summary(&result);
    assert!(summary.contains("ev W5"), "{summary}");
    assert!(summary.contains("pv Xg7 Oh7"), "{summary}");
}

#[test]
fn lost_positions_still_get_a_legal_move() {
    // Black has an open four; white can block only one end.
    let b = board15(
        Rule::Freestyle,
        &[(7, "....XXXX......."), (9, "...O.O.O.......")],
        Color::White,
    );
    let s = searcher(1);
    let result = s.search(&b, &playouts(50), &AtomicBool::new(false));
    assert!(matches!(result.proven, Proven::Loss(_)), "{result:?}");
    let m = result.best_move.expect("a move");
    assert!(m == p(3, 7) || m == p(8, 7), "blocks one end: {m}");
}

#[test]
fn playout_depth_and_memory_limits_are_obeyed() {
    let b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Freestyle,
        &[p(7, 7), p(8, 8)],
    )
    .unwrap();
    let s = searcher(2);
    let result = s.search(&b, &playouts(300), &AtomicBool::new(false));
    assert_eq!(result.reason, StopReason::Playouts);
    assert_eq!(result.counters.playouts, 300);

    let s = searcher(1);
    let limits = SearchLimits {
        max_depth: Some(1),
        max_playouts: Some(100_000),
        ..SearchLimits::default()
    };
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    assert!(result.counters.max_depth <= 1, "{:?}", result.counters);
    assert_eq!(result.reason, StopReason::Exhausted);
    assert!(result.counters.evaluations <= 1 + result.moves.len() as u64);

    // Without a limit the tree still has one: half the memory the process
    // may use (the machine's, or its control group's where less).
    let mut s = searcher(2);
    s.config_mut().max_memory = usize::MAX;
    let available = memory::available_bytes().expect("the machine's memory");
    assert_eq!(s.tree_budget(), available / 2);
    // Nor does a limit above the machine's memory (an INFO max_memory of
    // 100 GB) let the tree take more.
    s.config_mut().max_memory = usize::MAX - 1;
    assert_eq!(s.tree_budget(), available / 2);

    // max_memory is the whole process's: the tree gets what the rest
    // leaves less a margin, here the smallest tree.
    let mut s = searcher(2);
    let used = memory::process_private_bytes().unwrap();
    s.config_mut().max_memory = used + memory::MARGIN + memory::MIN_TREE;
    let budget = s.tree_budget();
    assert!(
        (memory::MIN_TREE..memory::MIN_TREE + (4 << 20)).contains(&budget),
        "{budget}"
    );
    let result = s.search(&b, &playouts(1_000_000), &AtomicBool::new(false));
    assert_eq!(result.reason, StopReason::Memory);
    // The limit is checked every millisecond: a little overshoot, no more.
    assert!(
        s.cache().memory_bytes() < 2 * budget,
        "{}",
        s.cache().memory_bytes()
    );
    assert!(result.best_move.is_some());
}

#[test]
fn a_small_time_budget_is_kept() {
    let b = Board::from_moves(BoardSize::square(15).unwrap(), Rule::Freestyle, &[p(7, 7)]).unwrap();
    let s = searcher(2);
    let budget = TimeBudget {
        target: Duration::from_millis(80),
        deadline: Duration::from_millis(120),
    };
    let limits = SearchLimits {
        time: Some(budget),
        ..SearchLimits::default()
    };
    let start = Instant::now();
    let result = s.search(&b, &limits, &AtomicBool::new(false));
    assert_eq!(result.reason, StopReason::Time);
    // Generous slack for a loaded machine; the point is that it stops.
    assert!(
        start.elapsed() < Duration::from_millis(120 + 2000),
        "{:?}",
        start.elapsed()
    );
    // The tree stops no earlier than the target less the safety net's
    // share (a tenth of it), and the safety net may then take no time.
    assert!(
        result.elapsed >= Duration::from_millis(80 - 8),
        "{:?}",
        result.elapsed
    );
    assert!(result.best_move.is_some());
}

/// A request whose clock ran out before its search began (it waited behind
/// another command, or the machine stalled) still gets the network's
/// choice: the root is evaluated once, and the move is its most likely
/// one, not the fallback's first candidate. The clock's first check used
/// to race the search threads' start (it could halt them before they had
/// gathered the root), so the search is repeated from a fresh tree.
#[test]
fn a_clock_spent_before_the_search_still_evaluates_the_root() {
    // Some milliseconds an evaluation on the largest board: the first
    // check of the clock comes before the root's answer.
    let service = Arc::new(
        EvalService::start_model(
            Model::random_native(
                NetConfig {
                    blocks: 4,
                    channels: 64,
                },
                11,
            ),
            ServiceConfig::default(),
        )
        .unwrap(),
    );
    let b = Board::from_moves(
        BoardSize::square(32).unwrap(),
        Rule::Freestyle,
        &[p(15, 15), p(16, 16), p(15, 16), p(17, 17)],
    )
    .unwrap();
    for attempt in 0..40 {
        let s = Searcher::new(
            Arc::clone(&service),
            SearchConfig {
                threads: 2,
                ..SearchConfig::default()
            },
        );
        let limits = SearchLimits {
            time: Some(TimeBudget::fixed(Duration::from_millis(50))),
            since: Instant::now().checked_sub(Duration::from_secs(5)),
            ..SearchLimits::default()
        };
        assert!(limits.since.is_some());
        let result = s.search(&b, &limits, &AtomicBool::new(false));
        let seen = format!("attempt {attempt}: {}", summary(&result));
        assert_eq!(result.reason, StopReason::Time, "{seen}");
        assert!(result.counters.playouts >= 1, "{seen}");
        assert!(
            result.moves.iter().any(|m| Some(m.mv) == result.best_move),
            "not a root move of the tree: {seen}"
        );
        // With the root's evaluation alone (no move visited yet), the move
        // is the policy's first.
        if result.moves.iter().all(|m| m.visits == 0) {
            let likeliest = result
                .moves
                .iter()
                .max_by(|a, b| a.prior.total_cmp(&b.prior))
                .map(|m| m.mv);
            assert_eq!(result.best_move, likeliest, "{seen}");
        }
    }
}

#[test]
fn stop_ends_an_unlimited_search() {
    let b = Board::from_moves(BoardSize::square(15).unwrap(), Rule::Standard, &[p(7, 7)]).unwrap();
    let s = searcher(2);
    let stop = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let handle = scope.spawn(|| s.search(&b, &SearchLimits::default(), &stop));
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        handle.join().unwrap()
    });
    assert_eq!(result.reason, StopReason::Stopped);
    assert!(result.counters.playouts > 0);
    assert!(result.best_move.is_some());
}

/// With several batches in flight, descents of the next meet leaves of the
/// earlier ones (collisions). A collision keeps its virtual visits until the batch
/// is gathered, so the next descents turn elsewhere and the batch still
/// fills (one thread: the search is deterministic).
#[test]
fn collisions_do_not_end_a_batch() {
    // A renju middle game with threats on the board: few moves per node,
    // so descents meet.
    let b = wuzi::bench::positions::RENJU_MIDGAME
        .board_after(24)
        .unwrap();
    let s = Searcher::new(
        service(),
        SearchConfig {
            threads: 1,
            batch_size: SearchBatch::Fixed(32),
            pipeline: 4,
            ..SearchConfig::default()
        },
    );
    let r = s.search(&b, &playouts(800), &AtomicBool::new(false));
    let c = r.counters;
    assert!(c.collisions > 0, "{c:?}");
    let fill = c.leaves_per_batch();
    // Measured: 25.4 leaves per batch; 18.0 when a collision ended the batch.
    assert!(fill >= 22.0, "{fill:.2} leaves per batch: {c:?}");
}

#[test]
fn the_tree_is_reused_after_both_moves() {
    let mut b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Freestyle,
        &[p(7, 7), p(8, 7)],
    )
    .unwrap();
    let s = searcher(2);
    let first = s.search(&b, &playouts(2000), &AtomicBool::new(false));
    let ours = first.best_move.unwrap();
    b.play(ours).unwrap();
    // The opponent answers with its most searched reply.
    let (_, node) = s
        .node_after(&b, &[])
        .expect("our move's node is in the tree");
    let reply = {
        let data = node.data.lock();
        data.edges
            .iter()
            .max_by_key(|e| e.visits)
            .map(|e| e.mv)
            .unwrap()
    };
    b.play(reply).unwrap();
    let (_, root) = s
        .node_after(&b, &[])
        .expect("the reply's node is in the tree");
    let visits_before = root.data.lock().visits;
    assert!(visits_before > 0);
    let second = s.search(&b, &playouts(100), &AtomicBool::new(false));
    let visits_after = root.data.lock().visits;
    assert!(
        visits_after >= visits_before + 100,
        "{visits_before} -> {visits_after}"
    );
    assert!(second.moves.iter().map(|m| m.visits as u64).sum::<u64>() >= visits_before as u64);
}

/// The largest difference between the root priors of `result` and the
/// policy of `reference` renormalised over the same moves.
fn prior_gap(result: &wuzi::search::SearchResult, reference: &[f32]) -> f32 {
    let at = |m: Point| reference[m.y() as usize * 15 + m.x() as usize];
    let total: f32 = result.moves.iter().map(|m| at(m.mv)).sum();
    result
        .moves
        .iter()
        .map(|m| (m.prior - at(m.mv) / total).abs())
        .fold(0.0, f32::max)
}

#[test]
fn root_priors_average_the_policy_over_the_symmetries_when_asked() {
    let b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Freestyle,
        &[p(7, 7), p(8, 6), p(9, 8)],
    )
    .unwrap();
    // References: the network in one orientation, and averaged over all.
    let (single_service, averaging_service) = (service(), service_with(SymmetryMode::All));
    for root_symmetries in [true, false] {
        // The network evaluates in one orientation: only the root may average.
        let s = Searcher::new(
            service(),
            SearchConfig {
                threads: 1,
                batch_size: SearchBatch::Fixed(4),
                root_symmetries,
                ..SearchConfig::default()
            },
        );
        let mut board = b.clone();
        // A fresh root.
        let first = s.search(&board, &playouts(300), &AtomicBool::new(false));
        let averaged = averaging_service.evaluate(&mut board.clone()).unwrap();
        let single = single_service.evaluate(&mut board.clone()).unwrap();
        // A root expanded by the search before, with one symmetry.
        board.play(first.best_move.unwrap()).unwrap();
        let (_, child) = s.node_after(&board, &[]).expect("in the tree");
        let visits_before = child.data.lock().visits;
        assert!(visits_before > 0);
        let second = s.search(&board, &playouts(50), &AtomicBool::new(false));
        let child_averaged = averaging_service.evaluate(&mut board.clone()).unwrap();
        let child_single = single_service.evaluate(&mut board.clone()).unwrap();
        let gaps = [
            prior_gap(&first, &averaged.policy),
            prior_gap(&second, &child_averaged.policy),
        ];
        let single_gaps = [
            prior_gap(&first, &single.policy),
            prior_gap(&second, &child_single.policy),
        ];
        if root_symmetries {
            assert!(gaps.iter().all(|&g| g < 1e-4), "{gaps:?}");
        } else {
            assert!(single_gaps.iter().all(|&g| g < 1e-4), "{single_gaps:?}");
            // The two differ on this network: the check above can fail.
            assert!(gaps.iter().all(|&g| g > 1e-3), "{gaps:?}");
        }
    }
}

/// Self-play's root noise: a fresh root and a root kept from the search
/// before both get the network's priors mixed with a seeded draw, off the
/// policy by more than rounding and by at most the noise's weight, the
/// same for the same seed; a search without noise keeps the policy, and
/// the kept root its visits.
#[test]
fn root_noise_mixes_a_seeded_draw_into_fresh_and_kept_roots() {
    let b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Freestyle,
        &[p(7, 7), p(8, 6), p(9, 8)],
    )
    .unwrap();
    let policy = service().evaluate(&mut b.clone()).unwrap().policy;
    let noised = |seed| SearchLimits {
        root_noise: Some(RootNoise::new(0.25, 10.83, seed).unwrap()),
        ..playouts(200)
    };
    let priors = |r: &wuzi::search::SearchResult| {
        let mut p: Vec<(Point, f32)> = r.moves.iter().map(|m| (m.mv, m.prior)).collect();
        p.sort_by_key(|&(mv, _)| (mv.y(), mv.x()));
        p
    };
    let stop = AtomicBool::new(false);
    let fresh = |seed| Searcher::new(service(), one_thread()).search(&b, &noised(seed), &stop);
    let first = fresh(1);
    let gap = prior_gap(&first, &policy);
    assert!(gap > 0.01 && gap <= 0.25 + 1e-4, "gap {gap}");
    let total: f32 = first.moves.iter().map(|m| m.prior).sum();
    assert!((total - 1.0).abs() < 1e-4, "{total}");
    assert_eq!(priors(&first), priors(&fresh(1)));
    assert_ne!(priors(&first), priors(&fresh(2)));

    let s = Searcher::new(service(), one_thread());
    let plain = s.search(&b, &playouts(100), &stop);
    assert!(prior_gap(&plain, &policy) < 1e-4);
    let kept = s.search(&b, &noised(3), &stop);
    let gap = prior_gap(&kept, &policy);
    assert!(gap > 0.01 && gap <= 0.25 + 1e-4, "gap {gap}");
    for m in &plain.moves {
        let after = kept
            .moves
            .iter()
            .find(|k| k.mv == m.mv)
            .expect("the same moves");
        assert!(
            after.visits >= m.visits,
            "{}: {} -> {}",
            m.mv,
            m.visits,
            after.visits
        );
    }
}

#[test]
fn one_thread_searches_are_deterministic() {
    let b = Board::from_moves(
        BoardSize::square(15).unwrap(),
        Rule::Renju,
        &[p(7, 7), p(8, 6), p(8, 8)],
    )
    .unwrap();
    let run = || {
        let s = Searcher::new(
            service(),
            SearchConfig {
                threads: 1,
                batch_size: SearchBatch::Fixed(1),
                pipeline: 1,
                ..SearchConfig::default()
            },
        );
        let r = s.search(&b, &playouts(300), &AtomicBool::new(false));
        (
            r.best_move,
            r.moves
                .iter()
                .map(|m| (m.mv, m.visits))
                .collect::<Vec<(Point, u32)>>(),
        )
    };
    assert_eq!(run(), run());
}

/// Black: two twos crossing at (8,7), one closed by (8,4): a VCT. White to
/// move has four moves after which black has no VCT within depth 20:
/// (9,4), (4,7), (7,7) and (8,7). Found by trying every move with the
/// proof-number solver at 200,000 nodes, each search run to its end; every
/// other move loses to a VCT. Rapfi still wins after those four with quiet
/// moves, which no threat search plays. (With the white stone of (10,4) on
/// (0,14) instead, the proof-number solver, and Rapfi, find a VCT after
/// every white move: the depth-first solver did not, and the old version of
/// this position named (8,7) and (9,4) as defences.)
fn black_threatens_a_double_three() -> Board {
    board15(
        Rule::Freestyle,
        &[
            (0, "O.............O"),
            (4, "........O.O...."),
            (5, "........X......"),
            (6, "........X......"),
            (7, ".....XX........"),
        ],
        Color::White,
    )
}

/// Whether black, to move after `mv`, wins by VCT within `nodes`.
fn black_wins_after(board: &Board, mv: Point, nodes: u64) -> bool {
    let mut b = board.clone();
    b.play(mv).unwrap();
    solve(
        &mut b,
        Color::Black,
        ThreatKind::Vct,
        SolveLimits::new(nodes, 20),
    )
    .win
    .is_some()
}

#[test]
fn the_safety_net_replaces_a_move_the_opponent_wins_against() {
    let b = black_threatens_a_double_three();
    let config = |safety_vct_nodes| SearchConfig {
        vct_plies: 0,
        safety_vct_nodes,
        ..one_thread()
    };
    // Without the net, the network's choice loses (deterministic mode; with
    // more playouts this random network finds a defence by itself).
    let unguarded = Searcher::new(service(), config(0));
    let result = unguarded.search(&b, &playouts(6), &AtomicBool::new(false));
    let chosen = result.best_move.unwrap();
    assert!(
        black_wins_after(&b, chosen, 20_000),
        "the test needs a refuted first choice, got {chosen}"
    );
    assert!(result.refuted.is_empty());
    // With it, that move is refuted and replaced by one that holds.
    let guarded = Searcher::new(service(), config(20_000));
    let result = guarded.search(&b, &playouts(6), &AtomicBool::new(false));
    let played = result.best_move.unwrap();
    assert_eq!(result.refuted.first(), Some(&chosen), "{result:?}");
    assert!(!result.refuted.contains(&played));
    assert!(!black_wins_after(&b, played, 20_000), "{played} loses");
    for &r in &result.refuted {
        assert!(black_wins_after(&b, r, 20_000), "{r} was refuted wrongly");
    }
    // Named before the PV, which GUIs read to the end of the line.
    let summary = summary(&result);
    let named = summary.find(&format!(" refuted {chosen}"));
    assert!(
        named.is_some_and(|at| summary.find(" pv").is_some_and(|pv| at < pv)),
        "{summary}"
    );
}

#[test]
fn the_opponents_vct_after_a_root_move_proves_that_move_lost() {
    // No safety net: the VCT at ply 1 alone must find the refutations.
    let b = black_threatens_a_double_three();
    let s = Searcher::new(
        service(),
        SearchConfig {
            vct_plies: 1,
            vct_nodes: 20_000,
            safety_vct_nodes: 0,
            ..one_thread()
        },
    );
    let result = s.search(&b, &playouts(400), &AtomicBool::new(false));
    let played = result.best_move.unwrap();
    assert!(!black_wins_after(&b, played, 20_000), "{played} loses");
    let lost: Vec<_> = result
        .moves
        .iter()
        .filter(|m| matches!(m.proven, Proven::Loss(_)))
        .collect();
    assert!(!lost.is_empty(), "{result:?}");
    for m in lost {
        assert!(black_wins_after(&b, m.mv, 20_000), "{} is no loss", m.mv);
    }
}

#[test]
fn black_with_only_forbidden_cells_is_lost_not_drawn() {
    let mut b = black_has_only_forbidden_cells();
    assert_eq!(b.outcome(), None);
    assert!(b.is_forbidden(p(3, 0)) && b.is_forbidden(p(2, 1)));
    let s = searcher(1);
    let result = s.search(&b, &playouts(20), &AtomicBool::new(false));
    // Piskvork scores a forbidden move as black's loss, and there is no pass.
    assert_eq!(result.proven, Proven::Loss(1), "{result:?}");
    assert_eq!(result.best_move, None, "no legal move to name: {result:?}");
}

/// The Gomocup summary line of a result, as the front ends write it.
fn summary(result: &wuzi::search::SearchResult) -> String {
    wuzi::protocol::summary::summary_line(result, wuzi::notation::Notation::Gomocup)
}

/// Black's double-three threat, and white's split three on row 12, whose
/// gap (3, 12) makes an open four: white's only winning move.
fn white_wins_only_through_the_gap() -> (Board, Point) {
    let mut b = black_threatens_a_double_three();
    for x in [2, 4, 5] {
        b.place(p(x, 12), Color::White).unwrap();
    }
    b.set_side_to_move(Color::White);
    (b, p(3, 12))
}

/// A search with white's only winning move blocked, from a cached root
/// that the search before left unproven, after the position behind that
/// move was proven lost for black (as a transposition would have it):
/// the root is not taken for won through the blocked move, which would
/// skip the safety net's check of the move played.
#[test]
fn a_root_is_not_proven_won_through_a_blocked_move_by_the_cache() {
    let (b, gap) = white_wins_only_through_the_gap();
    // No solver at the root or the leaves: the first search leaves the
    // root unproven, with the gap among its moves.
    let s = Searcher::new(
        service(),
        SearchConfig {
            leaf_vcf_nodes: 0,
            root_vct_nodes: 0,
            vct_plies: 0,
            ..one_thread()
        },
    );
    s.search(&b, &playouts(1), &AtomicBool::new(false));
    let (_, root) = s.node_after(&b, &[]).expect("the searched root");
    assert!(!root.data.lock().proven.is_known());
    let mut after = b.clone();
    after.play(gap).unwrap();
    let lost = s.search(&after, &playouts(6), &AtomicBool::new(false));
    assert!(matches!(lost.proven, Proven::Loss(_)), "{}", summary(&lost));
    let mut blocked = playouts(6);
    blocked.excluded.insert(gap);
    let result = s.search(&b, &blocked, &AtomicBool::new(false));
    assert_ne!(result.best_move, Some(gap));
    let data = root.data.lock();
    assert!(
        !data.proven.is_known(),
        "{:?} through {:?}",
        data.proven,
        data.edges.iter().find(|e| e.proven.is_known())
    );
}

/// A position whose descendants alone fill the tree's budget (the same
/// position searched again after a search that stopped for memory) is
/// searched again, its least visited positions dropped, rather than
/// stopped at once on the last search's numbers.
#[test]
fn a_tree_full_of_the_roots_descendants_makes_room_by_visits() {
    let b = board15(
        Rule::Freestyle,
        &[(7, ".......X......."), (8, ".......O.......")],
        Color::Black,
    );
    let mut s = searcher(1);
    s.fix_tree_budget(memory::MIN_TREE);
    let budget = s.tree_budget();
    assert_eq!(budget, memory::MIN_TREE);
    let full = s.search(&b, &playouts(1_000_000), &AtomicBool::new(false));
    assert_eq!(full.reason, StopReason::Memory);
    assert!(
        s.cache().memory_bytes() >= budget,
        "{}",
        s.cache().memory_bytes()
    );
    let again = s.search(&b, &playouts(1_000_000), &AtomicBool::new(false));
    assert!(
        again.counters.playouts >= 1_000,
        "{:?} after pruning to {} of {budget}",
        again.counters,
        s.cache().memory_bytes()
    );
}
