//! The match runner against real processes: two random test brains under
//! every rule, a random brain against each faulty one, the statistics, the
//! opening files and the records.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use wuzi_arena::arena::openings::{self, OpeningFormat};
use wuzi_arena::arena::stats::{self, EloEstimate, Pentanomial, SprtModel, SprtParams, Wld};
use wuzi_arena::arena::{
    run, ArenaError, EndReason, GameSummary, MatchArgs, MatchSummary, SprtDecision,
};
use wuzi_formats::record::parse_sgf;
use wuzi_game::game::{Board, BoardSize, Color, Outcome, Point, Rule};

const BRAIN: &str = env!("CARGO_BIN_EXE_wuzi-test-brain");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openings");

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// A match: engine words are appended per engine, the rest is common.
fn play(engine1: &str, engine2: &str, rest: &str) -> Result<MatchSummary, ArenaError> {
    let mut w = vec!["--engine1".to_string()];
    w.extend(words(engine1));
    w.push("--engine2".into());
    w.extend(words(engine2));
    w.extend(words(rest));
    w.push("--quiet".into());
    let args = MatchArgs::from_words(&w).unwrap_or_else(|e| panic!("{e}"));
    run(&args)
}

fn brain(mode: &str, name: &str) -> String {
    format!("cmd={BRAIN} arg=--mode arg={mode} name={name}")
}

/// Replays a game and checks the verdict against the board.
fn check_game(g: &GameSummary, size: BoardSize, rule: Rule) {
    let mut board = Board::new(size, rule);
    let n = g.moves.len();
    for (i, m) in g.moves.iter().enumerate() {
        assert_eq!(
            m.color,
            board.side_to_move(),
            "game {}: colours alternate",
            g.index
        );
        assert_eq!(m.opening, i < g.opening_stones);
        let last = i + 1 == n;
        let check = board.check_move(m.point.x() as i64, m.point.y() as i64, m.color);
        if last && matches!(g.reason, EndReason::Forbidden { .. }) {
            assert!(
                check.is_err(),
                "game {}: the last move is forbidden",
                g.index
            );
        } else {
            check.unwrap_or_else(|e| panic!("game {}: move {i}: {e}", g.index));
        }
        board.place(m.point, m.color).unwrap();
        if !last {
            assert_eq!(
                board.outcome(),
                None,
                "game {}: over before its end",
                g.index
            );
        }
    }
    match &g.reason {
        EndReason::Five => assert_eq!(board.outcome(), Some(g.outcome)),
        EndReason::BoardFull => {
            assert!(board.is_full());
            assert_eq!(g.outcome, Outcome::Draw);
        }
        EndReason::Forbidden { point } => {
            assert_eq!(rule, Rule::Renju);
            assert_eq!(board.last_move(), Some(*point));
            assert_eq!(g.outcome, Outcome::Win(Color::White));
        }
        // Renju's draw 25 cells before the full board (GomocupJudge's).
        EndReason::DrawAdjudicated { plies } => {
            assert_eq!(rule, Rule::Renju);
            assert_eq!(*plies, size.cell_count() - 25);
            assert_eq!(board.stone_count(), *plies);
            assert_eq!(g.outcome, Outcome::Draw);
        }
        other => panic!("game {}: unexpected ending {other:?}", g.index),
    }
}

/// Two random brains, a few games, every record checked.
fn random_match(rule: Rule, side: u32, games: usize, extra: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rest = format!(
        "--rule {} --board {side} --games {games} --random-stones 3 --seed 7 \
         --each turn=3000 --tolerance 1000 --init-timeout 10000 --end-grace 500 \
         --psq {} --tsv {} --sgf {} --log-dir {} {extra}",
        rule.gomocup_value(),
        d.join("psq").display(),
        d.join("records/games.tsv").display(),
        d.join("all.sgf").display(),
        d.join("logs").display()
    );
    let s = play(&brain("random", "alpha"), &brain("random", "beta"), &rest).unwrap();
    let size = BoardSize::square(side).unwrap();
    assert_eq!(s.games.len(), games);
    assert_eq!(s.total.games() as usize, games);
    assert_eq!(s.names, ["alpha".to_string(), "beta".to_string()]);
    for g in &s.games {
        assert!(!g.reason.is_fault(), "{g:?}");
        assert_eq!(g.opening_stones, 3);
        check_game(g, size, rule);
    }
    // Colours swap within each opening pair.
    for pair in s.games.chunks(2) {
        assert_eq!(pair[0].pair, pair[1].pair);
        assert_eq!(pair[0].opening, pair[1].opening);
        assert_eq!(pair[0].moves[..3], pair[1].moves[..3]);
        assert_eq!((pair[0].black, pair[1].black), (0, 1));
    }
    let by_colour: u32 = (0..2).map(|e| s.as_black[e].games()).sum();
    assert_eq!(by_colour as usize, games);
    assert_eq!(s.as_black[0].games() as usize, games / 2);
    assert_eq!(s.as_white[0].wins + s.as_black[0].wins, s.total.wins);
    // PSQ records parse back to the same moves.
    for g in &s.games {
        let text = fs::read_to_string(d.join(format!("psq/game_{:05}.psq", g.index + 1))).unwrap();
        assert!(text.starts_with(&format!("Piskvork {side}x{side}, 11:11, 0\n")));
        let (psq_size, moves) = wuzi_formats::record::parse_psq(&text).unwrap();
        assert_eq!(psq_size, size);
        let expected: Vec<(i64, i64)> = g
            .moves
            .iter()
            .map(|m| (m.point.x() as i64, m.point.y() as i64))
            .collect();
        assert_eq!(moves, expected);
    }
    // TSV: one line a game under the header, the opening's stones counted
    // apart, read back by the line parser.
    let text = fs::read_to_string(d.join("records/games.tsv")).unwrap();
    let mut lines = text.lines();
    let columns = wuzi_formats::tsv::Columns::from_header(lines.next().unwrap()).unwrap();
    let records: Vec<_> = lines
        .map(|line| wuzi_formats::tsv::TsvGame::parse(&columns, line).unwrap())
        .collect();
    assert_eq!(records.len(), games);
    for g in &s.games {
        let id = format!("game_{:05}", g.index + 1);
        let r = records.iter().find(|r| r.id == id).unwrap();
        assert_eq!((r.rule, r.size, r.winner), (rule, size, g.outcome));
        assert_eq!(r.opening, 3);
        assert_eq!(r.black, ["alpha", "beta"][g.black]);
        let moves: Vec<_> = g.moves.iter().map(|m| m.point).collect();
        assert_eq!(r.moves, moves);
        assert_eq!(r.end, g.reason.tsv_end());
        assert_eq!(r.search, None);
    }
    // ... and by the trainer's loader, which checks a record's search
    // column against its moves: every game is a training game.
    let data =
        wuzi_data::records::Dataset::load(&[d.join("records/games.tsv")], rule, &[]).unwrap();
    let st = &data.stats;
    assert_eq!((st.records, st.skipped()), (games, 0), "{:?}", st.warnings);
    assert_eq!(st.games + st.evaluation_openings, games, "{st:?}");
    assert!(st.games > 0, "{st:?}");
    // SGF: every game in the collection, matched by name.
    let sgf = parse_sgf(&fs::read_to_string(d.join("all.sgf")).unwrap()).unwrap();
    assert_eq!(sgf.len(), games);
    for g in &s.games {
        let name = format!("game {}", g.index + 1);
        let r = sgf
            .iter()
            .find(|r| r.property("GN") == Some(&name))
            .unwrap();
        assert_eq!(r.size, size);
        assert_eq!(r.property("RE"), Some(g.sgf_result().as_str()));
        assert_eq!(r.property("RU"), Some(rule.to_string().as_str()));
        let moves: Vec<_> = g.moves.iter().map(|m| (m.color, m.point)).collect();
        assert_eq!(r.moves, moves);
    }
    // Logs hold both directions with times.
    let log = fs::read_to_string(d.join("logs/game_00001.log")).unwrap();
    assert!(log.contains(&format!("alpha > START {side}")), "{log}");
    assert!(log.contains("alpha < OK"), "{log}");
    assert!(
        log.contains(&format!("INFO rule {}", rule.gomocup_value())),
        "{log}"
    );
    assert!(log.contains("> BOARD") || log.contains("> TURN"), "{log}");
    assert!(log.starts_with('['), "{log}");
    println!("{s}");
}

#[test]
fn random_brains_freestyle_9x9() {
    random_match(Rule::Freestyle, 9, 6, "--position piskvork --concurrency 2");
}

#[test]
fn random_brains_standard_15x15_cgc_style() {
    random_match(Rule::Standard, 15, 4, "--position cgc");
}

#[test]
fn random_brains_renju_15x15_board_every_move() {
    random_match(Rule::Renju, 15, 6, "--position board");
}

/// On a 7x7 board random brains often reach 24 stones: renju games are
/// drawn there, as the Gomocup's referee draws them, not played on.
#[test]
fn renju_games_are_drawn_25_cells_before_the_board_is_full() {
    let s = play(
        &brain("random", "alpha"),
        &brain("random", "beta"),
        "--rule renju --board 7 --games 8 --random-stones 3 --seed 7 --each turn=3000",
    )
    .unwrap();
    let size = BoardSize::square(7).unwrap();
    for g in &s.games {
        check_game(g, size, Rule::Renju);
    }
    assert!(
        s.games
            .iter()
            .any(|g| g.reason == EndReason::DrawAdjudicated { plies: 24 }),
        "{:?}",
        s.games.iter().map(|g| &g.reason).collect::<Vec<_>>()
    );
}

#[test]
fn random_brains_caro_9x9_new_processes() {
    random_match(Rule::Caro, 9, 4, "--new-process --concurrency 2");
}

#[test]
fn rectangular_board_and_reuse_with_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!(
            "--board 12x8 --games 4 --random-stones 2 --seed 3 --log-dir {}",
            dir.path().display()
        ),
    )
    .unwrap();
    assert_eq!(s.games.len(), 4);
    for g in &s.games {
        check_game(g, BoardSize::new(12, 8).unwrap(), Rule::Freestyle);
    }
    let first = fs::read_to_string(dir.path().join("game_00001.log")).unwrap();
    assert!(first.contains("a > RECTSTART 12,8"), "{first}");
    // Later games reuse the processes through RESTART.
    let second = fs::read_to_string(dir.path().join("game_00002.log")).unwrap();
    assert!(second.contains("a > RESTART"), "{second}");
    assert!(second.contains("a < OK"), "{second}");
    assert!(!second.contains("START 12"), "{second}");
}

/// A random brain (engine 1) against a faulty one (engine 2): every game
/// is lost by the faulty brain for `expect`, and the runner stays quick.
fn faulty(mode: &str, at: u32, rest: &str, expect: fn(&EndReason) -> bool) -> MatchSummary {
    let started = Instant::now();
    // Short move limits for the faulty brain, and a short START limit for
    // one that never answers (`--at 0`); otherwise room for a loaded
    // machine (starting a test brain loads libtorch: 0.4 s on an idle core).
    let init = if at == 0 { 3000 } else { 30000 };
    let faulty = format!("{} arg=--at arg={at} init={init}", brain(mode, "faulty"));
    let s = play(
        &format!(
            "{} turn=3000 tolerance=1000 init=30000",
            brain("random", "good")
        ),
        &faulty,
        &format!(
            "--games 2 --random-stones 0 --board 15 --each turn=500 --tolerance 400 \
             --end-grace 300 --concurrency 2 {rest}"
        ),
    )
    .unwrap();
    let took = started.elapsed();
    println!("{mode}: {took:?}\n{s}");
    assert_eq!(s.games.len(), 2);
    for g in &s.games {
        assert_eq!(g.loser(), Some(1), "{mode}: {g:?}");
        assert!(expect(&g.reason), "{mode}: {:?}", g.reason);
        assert!(g.reason.is_fault());
    }
    assert_eq!(s.total, Wld::new(2, 0, 0));
    assert_eq!(s.faults(1).len(), 1);
    assert!(s.faults(0).is_empty());
    assert!(
        s.to_string()
            .contains("Warning: 2 game(s) ended by an engine fault"),
        "{s}"
    );
    assert!(took < Duration::from_secs(20), "{mode} took {took:?}");
    s
}

#[test]
fn timeout_brain_loses_on_time() {
    let s = faulty(
        "timeout",
        2,
        "",
        |r| matches!(r, EndReason::TimeForfeit { allowed_ms: 900, elapsed_ms, .. } if *elapsed_ms >= 900),
    );
    // The faulty brain made one move in each game before timing out.
    for g in &s.games {
        let own = g
            .moves
            .iter()
            .filter(|m| {
                m.color
                    == if g.black == 1 {
                        Color::Black
                    } else {
                        Color::White
                    }
            })
            .count();
        assert_eq!(own, 1, "{g:?}");
    }
}

#[test]
fn timeout_on_match_time_with_increment() {
    // 1 s for the game plus 100 ms per move: time_left shrinks, the turn
    // limit is the match time; the faulty brain sleeps 3x its time left.
    let faulty = format!(
        "{} arg=--at arg=3 match=1000 inc=100",
        brain("timeout", "faulty")
    );
    let dir = tempfile::tempdir().unwrap();
    let s = play(
        &brain("random", "good"),
        &faulty,
        &format!(
            "--games 1 --random-stones 0 --tolerance 300 --log-dir {}",
            dir.path().display()
        ),
    )
    .unwrap();
    let g = &s.games[0];
    assert_eq!(g.loser(), Some(1));
    assert!(
        matches!(g.reason, EndReason::TimeForfeit { .. }),
        "{:?}",
        g.reason
    );
    let log = fs::read_to_string(dir.path().join("game_00001.log")).unwrap();
    assert!(log.contains("faulty > INFO timeout_match 1000"), "{log}");
    assert!(log.contains("faulty > INFO time_increment 100"), "{log}");
    assert!(log.contains("faulty > INFO time_left 1000"), "{log}");
    assert!(log.contains("good > INFO time_left 2147483647"), "{log}");
}

#[test]
fn illegal_brain_loses_by_occupied_cell() {
    faulty("illegal", 2, "", |r| {
        matches!(r, EndReason::Occupied { .. })
    });
}

#[test]
fn illegal_first_move_on_empty_board_is_off_board() {
    // As black on the empty board its first answer is off the board.
    let s = play(
        &brain("random", "good"),
        &format!("{} arg=--at arg=1", brain("illegal", "faulty")),
        "--games 2 --random-stones 0 --end-grace 300",
    )
    .unwrap();
    let black_game = s.games.iter().find(|g| g.black == 1).unwrap();
    assert!(
        matches!(black_game.reason, EndReason::OffBoard { x: 15, y: 0 }),
        "{:?}",
        black_game.reason
    );
}

#[test]
fn garbage_answer_is_unparsable() {
    faulty(
        "garbage",
        3,
        "",
        |r| matches!(r, EndReason::Unparsable { line } if line == "I resign"),
    );
}

#[test]
fn garbage_is_skipped_as_c_gomoku_cli_does_when_asked() {
    // The line is passed over; the brain then says nothing more and loses
    // on time instead.
    faulty("garbage", 3, "--skip-unparsable", |r| {
        matches!(r, EndReason::TimeForfeit { .. })
    });
}

/// A brain without ABOUT that loads for longer than the runner waits for
/// ABOUT's answer: its late UNKNOWN is ABOUT's, not START's refusal.
#[test]
fn a_late_unknown_about_is_not_taken_as_starts_answer() {
    let s = play(
        &format!(
            "{} arg=--no-about arg=--load-ms arg=2500",
            brain("random", "slow")
        ),
        &brain("random", "b"),
        "--games 2 --random-stones 2 --seed 6 --new-process",
    )
    .unwrap();
    assert_eq!(s.games.len(), 2);
    assert!(
        s.games.iter().all(|g| !g.reason.is_fault()),
        "{:?}",
        s.games.iter().map(|g| &g.reason).collect::<Vec<_>>()
    );
}

/// The same late UNKNOWN from a process launched for a game that the
/// other engine lost before its START (it failed to start first): the
/// process is started in the next game, and its ABOUT's answer is still
/// ABOUT's, so it loses no game it did not fail.
#[cfg(unix)]
#[test]
fn a_late_about_answer_of_a_process_kept_for_the_next_game_is_not_a_refusal() {
    let s = play(
        "cmd=/bin/false name=broken",
        &format!(
            "{} arg=--no-about arg=--load-ms arg=1000",
            brain("random", "slow")
        ),
        "--games 2 --random-stones 2 --seed 6",
    )
    .unwrap();
    assert_eq!(s.games.len(), 2);
    for g in &s.games {
        assert!(
            matches!(g.reason, EndReason::StartFailure { .. }),
            "{:?}",
            g.reason
        );
        assert_eq!(g.result_for(1).points(), 1.0, "{:?}", g.reason);
    }
}

/// An engine that cannot start a game three times in a row stops the
/// match with an error: its losses are no result to test or rate.
#[cfg(unix)]
#[test]
fn an_engine_failing_to_start_again_and_again_stops_the_match() {
    let err = play(
        "cmd=/bin/false name=broken",
        &brain("random", "fine"),
        "--games 20 --random-stones 2 --seed 6 --sprt elo0=0 elo1=40",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("broken failed to start 3 games in a row"),
        "{err}"
    );
}

/// Two engines that both fail to start: no game has a loser, so none is
/// scored (against black, as they once were) or recorded; each counts as
/// a start failure of both, and the match stops after three, saying why.
#[cfg(unix)]
#[test]
fn two_engines_failing_to_start_stop_the_match() {
    let dir = tempfile::tempdir().unwrap();
    let err = play(
        "cmd=/bin/false name=one",
        "cmd=/bin/false name=two",
        &format!(
            "--games 20 --random-stones 2 --seed 6 --psq {}",
            dir.path().display()
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("one failed to start 3 games in a row (game 3: neither engine started: "),
        "{err}"
    );
    assert!(err.contains("one (") && err.contains("two ("), "{err}");
    assert!(err.contains("exited"), "{err}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// An engine (a script around the test brain) whose `fail_at`-th launch
/// exits at once, counted in a file beside it.
#[cfg(unix)]
fn failing_once(dir: &Path, name: &str, fail_at: u32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let count = dir.join(format!("{name}.count"));
    let engine = dir.join(format!("{name}.sh"));
    fs::write(
        &engine,
        format!(
            "#!/bin/sh\nn=$(( $(cat {c} 2>/dev/null || echo 0) + 1 ))\necho $n > {c}\n\
             [ $n -eq {fail_at} ] && exit 1\nexec {BRAIN} --mode random \"$@\"\n",
            c = count.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&engine, fs::Permissions::from_mode(0o755)).unwrap();
    format!("cmd={} name={name}", engine.display())
}

/// One game that neither engine started (a busy moment, say) is left
/// unscored, its log kept, and the match goes on.
#[cfg(unix)]
#[test]
fn a_game_neither_engine_started_goes_unscored_and_the_match_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (psq, logs) = (dir.path().join("psq"), dir.path().join("logs"));
    fs::create_dir(&psq).unwrap();
    let s = play(
        &failing_once(dir.path(), "a", 2),
        &failing_once(dir.path(), "b", 2),
        &format!(
            "--games 4 --random-stones 2 --seed 6 --new-process --psq {} --log-dir {}",
            psq.display(),
            logs.display()
        ),
    )
    .unwrap();
    assert_eq!(s.unstarted, 1, "{s}");
    let played: Vec<usize> = s.games.iter().map(|g| g.index).collect();
    assert_eq!(played, [0, 2, 3], "{s}");
    assert!(s.games.iter().all(|g| !g.reason.is_fault()), "{s}");
    assert_eq!(s.total.games(), 3, "{s}");
    assert!(
        s.to_string()
            .contains("Not played: 1 games that neither engine started"),
        "{s}"
    );
    assert_eq!(fs::read_dir(&psq).unwrap().count(), 3);
    let log_of_game_2 = fs::read_dir(&logs)
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|text| text.contains("game 2 at unix time"));
    assert!(log_of_game_2.is_some(), "no log of the unstarted game");
}

/// Openings whose every colour and symmetry would be played exceed the
/// match's most games: refused, asking for --games, before any is built.
#[test]
fn too_many_openings_for_the_default_games_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.txt");
    let mut text = String::new();
    // Distinct two-stone openings: 70,000 of them, 16 games each.
    let at = |cell: i32| (cell % 20 - 10, cell / 20 - 10);
    for i in 0..70_000i32 {
        let (first, second) = (i % 400, (i % 400 + 1 + i / 400) % 400);
        let ((a, b), (c, d)) = (at(first), at(second));
        text += &format!("{a},{b}, {c},{d}\n");
    }
    fs::write(&path, text).unwrap();
    let err = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!("--board 20 --openings {} --symmetries", path.display()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("give --games"), "{err}");
}

#[test]
fn brain_refusing_restart_gets_a_new_process_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let s = play(
        &brain("random", "a"),
        &format!("{} arg=--no-restart", brain("random", "b")),
        &format!(
            "--games 3 --random-stones 2 --seed 4 --log-dir {}",
            dir.path().display()
        ),
    )
    .unwrap();
    assert!(s.games.iter().all(|g| !g.reason.is_fault()));
    assert!(!s.to_string().contains("Warning"), "{s}");
    let log = |n: usize| fs::read_to_string(dir.path().join(format!("game_{n:05}.log"))).unwrap();
    let second = log(2);
    assert!(second.contains("a > RESTART"), "{second}");
    assert!(second.contains("b > RESTART"), "{second}");
    assert!(second.contains("b < UNKNOWN RESTART"), "{second}");
    assert!(second.contains("b > END"), "{second}");
    assert!(second.contains("b > START 15"), "{second}");
    // Not asked again.
    let third = log(3);
    assert!(!third.contains("b > RESTART"), "{third}");
    assert!(
        third.contains("b > END") && third.contains("b > START 15"),
        "{third}"
    );
    assert!(third.contains("a > RESTART"), "{third}");
}

/// A brain that never answers RESTART costs the init timeout once: from
/// the next game on it gets a new process without being asked.
#[test]
fn brain_ignoring_restart_is_not_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = play(
        &brain("random", "a"),
        &format!("{} arg=--silent-restart", brain("random", "b")),
        &format!(
            "--games 3 --random-stones 2 --seed 4 --init-timeout 1000 --log-dir {}",
            dir.path().display()
        ),
    )
    .unwrap();
    assert!(s.games.iter().all(|g| !g.reason.is_fault()), "{s}");
    let log = |n: usize| fs::read_to_string(dir.path().join(format!("game_{n:05}.log"))).unwrap();
    let second = log(2);
    assert!(second.contains("b > RESTART"), "{second}");
    assert!(second.contains("b > START 15"), "{second}");
    let third = log(3);
    assert!(!third.contains("b > RESTART"), "{third}");
    assert!(third.contains("b > START 15"), "{third}");
}

#[test]
fn crashing_brain_loses_by_crash() {
    faulty(
        "crash",
        2,
        "",
        |r| matches!(r, EndReason::Crash { detail } if detail.contains("while thinking")),
    );
}

#[test]
fn silent_brain_loses_on_time_and_is_killed() {
    faulty("silent", 2, "", |r| {
        matches!(r, EndReason::TimeForfeit { .. })
    });
}

/// An engine that writes without end instead of answering cannot hold the
/// runner past its deadline (lines written later are a timeout, even when
/// queued before they were read), nor its memory (the queue is bounded and
/// the game log capped), with the log written as in a real match.
#[test]
fn flooding_brain_loses_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = faulty(
        "flood",
        2,
        &format!("--log-dir {}", dir.path().display()),
        |r| matches!(r, EndReason::TimeForfeit { .. }),
    );
    for g in &s.games {
        let log = fs::read_to_string(dir.path().join(format!("game_{:05}.log", g.index + 1)))
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        assert!(
            log.contains("MESSAGE thinking hard"),
            "{}",
            &log[..log.len().min(2000)]
        );
        assert!(log.len() <= 17 << 20, "{} bytes", log.len());
    }
}

/// Only the first SUGGEST of a request is answered with PLAY: an engine
/// repeating it without reading its input would otherwise fill the pipe,
/// and the runner's write would block for good.
#[test]
fn brain_flooding_suggest_loses_on_time() {
    faulty(
        "suggest-flood",
        2,
        "",
        |r| matches!(r, EndReason::TimeForfeit { last_error: Some(e), .. } if e.starts_with("SUGGEST")),
    );
}

/// An engine started through a wrapper (a shell script, a launcher) is
/// killed with the wrapper: the whole process group goes, not only the
/// process the runner started (processes looked for in Linux's /proc).
#[cfg(target_os = "linux")]
#[test]
fn a_wrapped_engine_is_killed_with_its_wrapper() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("engine.sh");
    // Not `exec`: the shell stays the parent, as launchers do.
    fs::write(&wrapper, format!("#!/bin/sh\n{BRAIN} \"$@\"\nexit $?\n")).unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let marker = format!("wrapped-{}-{:?}", std::process::id(), Instant::now());
    let marker = marker.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let s = play(
        &brain("random", "good"),
        &format!(
            "cmd={} arg=--mode arg=slow-end arg={marker} name=wrapped",
            wrapper.display()
        ),
        // A grace the good brain always exits within, even on a busy
        // machine beside other matches.
        "--games 1 --random-stones 2 --end-grace 2000 --seed 5",
    )
    .unwrap();
    assert_eq!(s.end_kills, [0, 1], "{s}");
    // The brain under the shell ignores END for 30 s unless killed.
    assert!(
        gone_within(&marker, Duration::from_secs(3)),
        "the wrapped brain outlived the match"
    );
}

/// Whether no process whose command line holds `marker` is left within
/// `limit` (processes looked for in Linux's /proc).
#[cfg(target_os = "linux")]
fn gone_within(marker: &str, limit: Duration) -> bool {
    let alive = || {
        fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                fs::read(entry.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(marker))
                    .unwrap_or(false)
            })
    };
    let waited = Instant::now();
    while alive() && waited.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    !alive()
}

/// What an engine starts and leaves running when it exits (a helper in
/// its process group) is killed with it, even when the engine itself
/// exits on END and needs no kill.
#[cfg(target_os = "linux")]
#[test]
fn a_helper_left_running_by_an_engine_that_exits_is_killed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("helper-{}-{:?}", std::process::id(), Instant::now());
    let marker = marker.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    let helper = dir.path().join(format!("{marker}.sh"));
    fs::write(&helper, "#!/bin/sh\nsleep 60\n").unwrap();
    fs::set_permissions(&helper, fs::Permissions::from_mode(0o755)).unwrap();
    let engine = dir.path().join("engine.sh");
    fs::write(
        &engine,
        format!(
            "#!/bin/sh\n{} >/dev/null 2>&1 </dev/null &\nexec {BRAIN} \"$@\"\n",
            helper.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&engine, fs::Permissions::from_mode(0o755)).unwrap();
    let s = play(
        &brain("random", "good"),
        &format!("cmd={} arg=--mode arg=random name=helped", engine.display()),
        "--games 1 --random-stones 2 --end-grace 2000 --seed 5",
    )
    .unwrap();
    assert_eq!(s.end_kills, [0, 0], "{s}");
    assert!(
        gone_within(&marker, Duration::from_secs(3)),
        "the helper outlived its engine"
    );
}

#[test]
fn brain_silent_from_the_start_fails_to_start() {
    faulty(
        "silent",
        0,
        "",
        |r| matches!(r, EndReason::StartFailure { detail } if detail.contains("no OK to START")),
    );
}

#[test]
fn brain_ignoring_end_is_killed_after_the_grace() {
    let started = Instant::now();
    let s = play(
        &brain("random", "good"),
        &brain("slow-end", "slow"),
        // A grace the good brain always exits within (see above).
        "--games 2 --random-stones 2 --new-process --end-grace 2000 --seed 5 --concurrency 2",
    )
    .unwrap();
    let took = started.elapsed();
    println!("slow-end: {took:?}\n{s}");
    for g in &s.games {
        assert!(!g.reason.is_fault(), "{g:?}");
        // Every game ends with END to both; only the slow one is killed.
        assert_eq!(g.killed_after_end, [0, 1]);
    }
    assert_eq!(s.end_kills, [0, 2]);
    assert!(took < Duration::from_secs(15), "{took:?}");

    // Reused processes: END (and the kill) only when the match is over,
    // once per worker.
    let s = play(
        &brain("random", "good"),
        &brain("slow-end", "slow"),
        "--games 4 --random-stones 2 --end-grace 2000 --seed 5 --concurrency 2",
    )
    .unwrap();
    assert!(s.games.iter().all(|g| g.killed_after_end == [0, 0]));
    assert_eq!(s.end_kills, [0, 2]);
}

#[test]
fn missing_program_stops_the_match() {
    let e = play(
        "cmd=/nonexistent/pbrain-nothing",
        &brain("random", "b"),
        "--games 2",
    )
    .unwrap_err();
    assert!(matches!(e, ArenaError::Spawn { .. }), "{e}");
    assert!(e.to_string().contains("pbrain-nothing"), "{e}");
}

#[test]
fn sprt_stops_a_lopsided_match() {
    // A brain that blocks fives against one that does not: a big gap.
    let s = play(
        &format!("{} arg=--block", brain("random", "blocker")),
        &brain("random", "plain"),
        "--board 9 --games 600 --random-stones 2 --seed 11 --concurrency 2 \
         --sprt elo0=0 elo1=60 alpha=0.05 beta=0.05",
    )
    .unwrap();
    println!("{s}");
    let (params, status) = s.sprt.unwrap();
    assert_eq!(params.model, SprtModel::BayesElo);
    assert_eq!(status.decision, SprtDecision::AcceptH1);
    assert!(s.stopped_early);
    assert!(s.games.len() < 600);
    assert!(status.llr >= status.upper);
    // Games finished after the verdict are recorded, not tested.
    // The games tested are those of complete pairs.
    let n = s.sprt_decided_after.unwrap();
    assert!(n <= s.games.len());
    assert!(n >= 2);
    assert_eq!(n % 2, 0, "decided after {n} games");
    assert!(s.elo.unwrap().elo > 60.0);
    // The pairs counted are those with both games played, each with the
    // points its two games gave engine 1.
    let mut by_pair: std::collections::HashMap<usize, Vec<f64>> = Default::default();
    for g in &s.games {
        by_pair
            .entry(g.pair)
            .or_default()
            .push(g.result_for(0).points());
    }
    let mut expected = [0u32; 5];
    for points in by_pair.values().filter(|p| p.len() == 2) {
        expected[(2.0 * (points[0] + points[1])) as usize] += 1;
    }
    assert_eq!(s.pairs.counts, expected);
    assert!(s.pairs.pairs() >= 1);
    assert!(s.to_string().contains("Pairs (points 0, 1/2, 1, 3/2, 2): "));
    // Decided on completed opening pairs: one game at a time, the verdict
    // comes after the second game of a pair.
    let s = play(
        &format!("{} arg=--block", brain("random", "blocker")),
        &brain("random", "plain"),
        "--board 9 --games 600 --random-stones 2 --seed 12 --concurrency 1 \
         --sprt elo0=0 elo1=60 alpha=0.05 beta=0.05",
    )
    .unwrap();
    let n = s.sprt_decided_after.unwrap();
    assert_eq!(n % 2, 0, "decided after {n} games");
    // The worker starts its next game only once the last one is counted,
    // so no game follows the verdict, however busy the machine.
    assert_eq!(
        s.games.len(),
        n,
        "one game at a time: {} games, decided after {n}",
        s.games.len()
    );
    // The pentanomial model tests the runner's pairs: with one game at a
    // time every game counted is in a completed pair.
    let s = play(
        &format!("{} arg=--block", brain("random", "blocker")),
        &brain("random", "plain"),
        "--board 9 --games 600 --random-stones 2 --seed 13 --concurrency 1 \
         --sprt elo0=0 elo1=60 model=pentanomial",
    )
    .unwrap();
    let (params, status) = s.sprt.unwrap();
    assert_eq!(params.model, SprtModel::Pentanomial);
    assert_eq!(status.decision, SprtDecision::AcceptH1);
    assert_eq!(2 * s.pairs.pairs() as usize, s.games.len());
    let llr = stats::llr_pentanomial(&s.pairs, 0.0, 60.0);
    assert!((status.llr - llr).abs() < 1e-9, "{} vs {llr}", status.llr);
}

#[test]
fn elo_los_and_margin_known_values() {
    // 60% over 100 games: +70.4 Elo, whatever mix of wins and draws.
    for wld in [
        Wld::new(60, 40, 0),
        Wld::new(50, 30, 20),
        Wld::new(20, 0, 80),
    ] {
        let e = EloEstimate::new(wld).unwrap();
        assert!((e.elo - 70.436).abs() < 0.01, "{wld:?}: {}", e.elo);
        assert!((e.score - 0.6).abs() < 1e-12);
    }
    let e = EloEstimate::new(Wld::new(60, 40, 0)).unwrap();
    // 95% interval of the mean score from the trinomial variance.
    assert!((e.margin - 70.571).abs() < 0.01, "{}", e.margin);
    // Its ends, not symmetric about the estimate in Elo.
    assert!((e.lower - 2.767).abs() < 0.01, "{}", e.lower);
    assert!((e.upper - 143.909).abs() < 0.01, "{}", e.upper);
    // An interval that reaches a score of 0 has one finite end.
    let lopsided = EloEstimate::new(Wld::new(3, 37, 0)).unwrap();
    assert_eq!(lopsided.lower, f64::NEG_INFINITY);
    assert!(
        (lopsided.upper + 292.465).abs() < 0.01,
        "{}",
        lopsided.upper
    );
    // LOS = Phi((W - L) / sqrt(W + L)) = Phi(2).
    assert!((e.los - 0.977_25).abs() < 1e-4, "{}", e.los);
    assert_eq!(stats::los(Wld::new(0, 0, 10)), 0.5);
    assert!((stats::elo_from_score(0.5)).abs() < 1e-12);
    assert!((stats::elo_from_score(0.75) - 190.849).abs() < 0.01);
    assert!(EloEstimate::new(Wld::new(5, 0, 0))
        .unwrap()
        .elo
        .is_infinite());
    assert!(EloEstimate::new(Wld::default()).is_none());
}

#[test]
fn sprt_bounds_and_llr_known_values() {
    let p = SprtParams::new(0.0, 3.0, 0.05, 0.05);
    let (lower, upper) = p.bounds();
    assert!((lower - (0.05f64 / 0.95).ln()).abs() < 1e-12);
    assert!((lower + 2.944_439).abs() < 1e-6);
    assert!((upper - 2.944_439).abs() < 1e-6);
    let (lower, upper) = SprtParams::new(0.0, 5.0, 0.1, 0.05).bounds();
    assert!((lower - (0.05f64 / 0.9).ln()).abs() < 1e-12);
    assert!((upper - (0.95f64 / 0.1).ln()).abs() < 1e-12);
    // cutechess's BayesElo trinomial LLR (elo bounds scaled by the sample's
    // draw Elo); without the scaling (elo0/elo1 read as BayesElo, as
    // OpenBench does) the same sample gives 2.467.
    let wld = Wld::new(4307, 4063, 8620);
    let llr = stats::llr_bayeselo(wld, 0.0, 3.0);
    assert!((llr - 2.991_937).abs() < 1e-4, "{llr}");
    assert_eq!(
        p.status(wld, &Pentanomial::default()).decision,
        SprtDecision::AcceptH1
    );
    // The logistic GSPRT approximation agrees closely here.
    let g = stats::llr_gsprt(wld, 0.0, 3.0);
    assert!((g - 2.992_213).abs() < 1e-4, "{g}");
    // Without draws the BayesElo model is the binomial test.
    let llr = stats::llr_bayeselo(Wld::new(60, 40, 0), 0.0, 10.0);
    assert!((llr - 0.534_231).abs() < 1e-4, "{llr}");
    // Nothing to compute without games.
    assert_eq!(stats::llr_bayeselo(Wld::new(0, 0, 0), 0.0, 10.0), 0.0);
    // Six alike games (five wins, a draw) have almost no spread: taken as
    // it is, their LLR was 4.70 against (0, 50), past the bound of 2.94.
    let few = stats::llr_gsprt(Wld::new(5, 0, 1), 0.0, 50.0);
    assert!(few > 0.0 && few < 2.0, "{few}");
    // A side that never lost (or never won) still moves the LLR: its draw
    // Elo is estimated with half a game added to each outcome.
    let p40 = SprtParams::new(0.0, 40.0, 0.05, 0.05);
    assert!(stats::llr_bayeselo(Wld::new(10, 0, 3), 0.0, 10.0) > 0.0);
    assert_eq!(
        p40.status(Wld::new(60, 0, 140), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH1
    );
    assert_eq!(
        p40.status(Wld::new(0, 60, 140), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH0
    );
    assert_eq!(
        p40.status(Wld::new(30, 0, 0), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH1
    );
    assert_eq!(
        p40.status(Wld::new(5, 0, 0), &Pentanomial::default())
            .decision,
        SprtDecision::Continue
    );
    let g40 = SprtParams {
        model: SprtModel::Gsprt,
        ..p40
    };
    assert_eq!(
        g40.status(Wld::new(40, 0, 0), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH1
    );
    assert_eq!(
        g40.status(Wld::new(0, 40, 0), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH0
    );
    assert_eq!(
        SprtParams::new(0.0, 10.0, 0.05, 0.05)
            .status(Wld::new(3, 5, 0), &Pentanomial::default())
            .decision,
        SprtDecision::Continue
    );
    assert_eq!(
        SprtParams::new(0.0, 10.0, 0.05, 0.05)
            .status(Wld::new(400, 600, 0), &Pentanomial::default())
            .decision,
        SprtDecision::AcceptH0
    );
    let parsed = SprtParams::parse(&words("elo0=-2 elo1=4 alpha=0.1 model=gsprt")).unwrap();
    assert_eq!(
        (parsed.elo0, parsed.elo1, parsed.alpha, parsed.beta),
        (-2.0, 4.0, 0.1, 0.05)
    );
    assert_eq!(parsed.model, SprtModel::Gsprt);
    assert!(SprtParams::parse(&words("elo0=5 elo1=1")).is_err());
    assert!(SprtParams::parse(&words("alpha=0.05")).is_err());
}

#[test]
fn pentanomial_sprt_counts_opening_pairs() {
    let (win, loss, draw) = (Wld::new(1, 0, 0), Wld::new(0, 1, 0), Wld::new(0, 0, 1));
    let mut pairs = Pentanomial::default();
    for (first, second) in [
        (loss, loss),
        (loss, draw),
        (win, loss),
        (draw, draw),
        (draw, win),
        (win, win),
        (loss, win),
    ] {
        pairs.add_pair(first, second);
    }
    assert_eq!(pairs.counts, [1, 1, 3, 1, 1]);
    assert_eq!(pairs.pairs(), 7);
    // The normal approximation over pairs: N (s1 - s0)(2 mean - s0 - s1) /
    // (2 var), with the mean of a pair's score per game and its variance
    // with half a pair added to each cell.
    let pairs = Pentanomial {
        counts: [5, 20, 40, 25, 10],
    };
    let llr = stats::llr_pentanomial(&pairs, 0.0, 10.0);
    assert!((llr - 0.663309).abs() < 1e-5, "{llr}");
    let (elo, lower, upper) = pairs.elo_interval().unwrap();
    assert!((elo - 26.1067).abs() < 1e-3, "{elo}");
    assert!((lower + 8.4570).abs() < 1e-3, "{lower}");
    assert!((upper - 61.1958).abs() < 1e-3, "{upper}");
    // Where the opening decides most games (pairs split 1-1), the pairs'
    // spread is small and the same advantage is decided sooner than over
    // single games, which take each split pair for a win and a loss.
    let split = Pentanomial {
        counts: [0, 0, 80, 20, 0],
    };
    let games = Wld::new(100, 80, 20);
    let p = SprtParams {
        model: SprtModel::Pentanomial,
        ..SprtParams::new(0.0, 40.0, 0.05, 0.05)
    };
    let over_pairs = p.status(games, &split);
    let over_games = stats::llr_gsprt(games, 0.0, 40.0);
    assert!(
        (over_pairs.llr - 9.508980).abs() < 1e-5,
        "{}",
        over_pairs.llr
    );
    assert!((over_games - 1.101535).abs() < 1e-5, "{over_games}");
    assert_eq!(over_pairs.decision, SprtDecision::AcceptH1);
    assert_eq!(
        SprtParams {
            model: SprtModel::Gsprt,
            ..p
        }
        .status(games, &split)
        .decision,
        SprtDecision::Continue
    );
    // Three pairs decide nothing, however alike (the variance as it is
    // would have taken these for H0 accepted); eight lost twice do.
    for counts in [[1, 1, 0, 1, 0], [1, 1, 0, 0, 0], [3, 0, 0, 0, 0]] {
        let few = Pentanomial { counts };
        assert_eq!(
            p.status(Wld::default(), &few).decision,
            SprtDecision::Continue,
            "{counts:?}"
        );
    }
    assert_eq!(
        p.status(
            Wld::default(),
            &Pentanomial {
                counts: [8, 0, 0, 0, 0]
            }
        )
        .decision,
        SprtDecision::AcceptH0
    );
    // Every pair alike still decides once there are enough of them.
    let sweep = Pentanomial {
        counts: [0, 0, 0, 0, 30],
    };
    assert_eq!(
        p.status(Wld::new(60, 0, 0), &sweep).decision,
        SprtDecision::AcceptH1
    );
    assert_eq!(p.status(Wld::default(), &Pentanomial::default()).llr, 0.0);
    assert!(Pentanomial::default().elo_interval().is_none());
    // Nor from pairs all alike (no spread to estimate it from).
    assert!(Pentanomial {
        counts: [0, 0, 3, 0, 0]
    }
    .elo_interval()
    .is_none());
    let parsed = SprtParams::parse(&words("elo1=5 model=pentanomial")).unwrap();
    assert_eq!(parsed.model, SprtModel::Pentanomial);
    assert!(SprtParams::parse(&words("elo1=5 model=quadrinomial"))
        .unwrap_err()
        .contains("pentanomial"));
}

fn fixture(name: &str) -> String {
    fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap()
}

#[test]
fn opening_files_in_both_notations() {
    let s15 = BoardSize::square(15).unwrap();
    let s20 = BoardSize::square(20).unwrap();
    let (offset, f1) = openings::parse_file(
        &fixture("gomocup2021_renju15.txt"),
        OpeningFormat::Auto,
        s15,
    )
    .unwrap();
    let (pos, f2) = openings::parse_file(
        &fixture("gomocup2021_renju15_pos.txt"),
        OpeningFormat::Auto,
        s15,
    )
    .unwrap();
    assert_eq!((f1, f2), (OpeningFormat::Offset, OpeningFormat::Pos));
    assert_eq!(offset.len(), 12);
    assert_eq!(
        offset.iter().map(|o| &o.moves).collect::<Vec<_>>(),
        pos.iter().map(|o| &o.moves).collect::<Vec<_>>()
    );
    // First line `0,1, 1,0, 0,3, 0,0, 2,0` = `h9i8h11h8j8`.
    assert_eq!(
        offset[0].moves,
        vec![(7, 8), (8, 7), (7, 10), (7, 7), (9, 7)]
    );
    assert_eq!(offset[3].moves, vec![(12, 2), (11, 2)]);
    assert_eq!(
        openings::parse_line("h9i8h11h8j8", OpeningFormat::Pos, s15).unwrap(),
        offset[0].moves
    );
    for o in &offset {
        openings::check_opening(s15, Rule::Renju, &o.moves).unwrap();
    }
    // CRLF line ends, 20x20 offsets from floor(20/2) = 10.
    let (cgc, _) = openings::parse_file(
        &fixture("cgomokucli_example_offset_freestyle_20x20.txt"),
        OpeningFormat::Offset,
        s20,
    )
    .unwrap();
    assert_eq!(cgc.len(), 4);
    assert_eq!(cgc[0].moves[0], (18, 7));
    assert_eq!(cgc[3].moves.len(), 20);
    let (free, _) = openings::parse_file(
        &fixture("gomocup2021_freestyle20.txt"),
        OpeningFormat::Auto,
        s20,
    )
    .unwrap();
    assert_eq!(free.len(), 12);
    for o in free.iter().chain(&cgc) {
        openings::check_opening(s20, Rule::Freestyle, &o.moves).unwrap();
    }
    // Piskvork's set: 41 openings, 3 or 5 stones, any board size.
    let (pisk, _) =
        openings::parse_file(&fixture("piskvork_openings.txt"), OpeningFormat::Auto, s15).unwrap();
    assert_eq!(pisk.len(), 41);
    assert!(pisk
        .iter()
        .all(|o| o.moves.len() == 3 || o.moves.len() == 5));
    // Off a small board: refused with a reason.
    let s9 = BoardSize::square(9).unwrap();
    let e = openings::check_opening(s9, Rule::Freestyle, &[(12, 2)]).unwrap_err();
    assert!(e.contains("off"), "{e}");
    assert!(openings::check_opening(s15, Rule::Freestyle, &[(1, 1), (2, 2), (1, 1)]).is_err());
}

#[test]
fn openings_under_their_symmetries() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.txt");
    // One opening with eight distinct images, and the centre alone (one).
    fs::write(&file, "h8i9j9\nh8\n").unwrap();
    let s = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!(
            "--openings {} --opening-format pos --symmetries",
            file.display()
        ),
    )
    .unwrap();
    assert_eq!(s.planned_games, 18, "two games per distinct opening");
    assert!(
        s.openings.contains("9 openings with their symmetries"),
        "{}",
        s.openings
    );
    let s15 = BoardSize::square(15).unwrap();
    let mut distinct = std::collections::HashSet::new();
    for g in &s.games {
        let stones: Vec<Point> = g.moves[..g.opening_stones]
            .iter()
            .map(|m| m.point)
            .collect();
        distinct.insert(stones);
        check_game(g, s15, Rule::Freestyle);
    }
    assert_eq!(distinct.len(), 9);
    // A rectangle keeps its shape under four symmetries: the opening has
    // four images, h8 (off the centre row) two. The same stones in another
    // order are the same position: played once.
    fs::write(&file, "h8i9j9\nh8\nj9i9h8\n").unwrap();
    let s = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!(
            "--board 15x10 --openings {} --opening-format pos --symmetries",
            file.display()
        ),
    )
    .unwrap();
    assert_eq!(s.planned_games, 12, "{}", s.openings);
    let s15x10 = BoardSize::new(15, 10).unwrap();
    for g in &s.games {
        check_game(g, s15x10, Rule::Freestyle);
    }
    // Without an opening file there is nothing to turn.
    assert!(MatchArgs::from_words(words("--engine1 x --engine2 y --symmetries")).is_err());
}

#[test]
fn match_from_an_opening_file() {
    let file = Path::new(FIXTURES).join("gomocup2021_renju15_pos.txt");
    let s = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!("--rule renju --games 4 --openings {}", file.display()),
    )
    .unwrap();
    let s15 = BoardSize::square(15).unwrap();
    let (raw, _) = openings::parse_file(
        &fixture("gomocup2021_renju15_pos.txt"),
        OpeningFormat::Auto,
        s15,
    )
    .unwrap();
    for g in &s.games {
        let expected = &raw[g.pair].moves;
        let got: Vec<(i64, i64)> = g.moves[..g.opening_stones]
            .iter()
            .map(|m| (m.point.x() as i64, m.point.y() as i64))
            .collect();
        assert_eq!(&got, expected);
        assert!(
            g.opening.ends_with(&format!(":{}", raw[g.pair].line)),
            "{}",
            g.opening
        );
        check_game(g, s15, Rule::Renju);
    }
    // Openings that do not fit the board are skipped; none fitting is an error.
    let e = play(
        &brain("random", "a"),
        &brain("random", "b"),
        &format!("--board 5 --games 2 --openings {}", file.display()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no opening fits"), "{e}");
}

#[test]
fn command_line_help_and_errors() {
    let help = MatchArgs::from_words(["--help"]).unwrap_err().to_string();
    for key in [
        "--engine1",
        "cmd=",
        "option.KEY",
        "--sprt",
        "--psq",
        "--sgf",
        "--log-dir",
    ] {
        assert!(help.contains(key), "{key}: {help}");
    }
    assert!(MatchArgs::from_words(["--engine1", "cmd=x"]).is_err());
    assert!(MatchArgs::from_words(words("--engine1 x --engine2 y --board 4")).is_err());
    assert!(MatchArgs::from_words(words("--engine1 x --engine2 y --rule 2")).is_err());
    let a =
        MatchArgs::from_words(words("--engine1 x --engine2 y --board 20x10 --rule renju")).unwrap();
    assert_eq!(a.board, BoardSize::new(20, 10).unwrap());
    assert_eq!(a.rule, Rule::Renju);
    let e = play("cmd=x speed=3", "cmd=y", "--games 2").unwrap_err();
    assert!(e.to_string().contains("speed"), "{e}");
    // Settings that would make the match meaningless or endless.
    for (rest, named) in [
        ("--games 2 --concurrency 0", "--concurrency"),
        ("--games 2 --concurrency 50000", "--concurrency"),
        ("--games 2 --draw-after 3", "--draw-after"),
        ("--games 2 --tolerance 99999999999", "--tolerance"),
        ("--games 2 --end-grace 99999999999", "--end-grace"),
    ] {
        let e = play("cmd=x", "cmd=y", rest).unwrap_err();
        assert!(e.to_string().contains(named), "{rest}: {e}");
    }
}

/// The reference judge of the blunder suite: a brain that announces its
/// wins (the test brain does as Rapfi does when it completes a five) is
/// read right, with its move.
#[test]
fn a_reference_brain_announces_its_forced_win() {
    use wuzi_arena::arena::judge::verdict;
    use wuzi_arena::arena::parse_engine;
    let spec = parse_engine(&[], &[format!("cmd={BRAIN}"), "turn=1".into()]).unwrap();
    let p = |x, y| Point::new(x, y).unwrap();
    // Black has four in a row and is to move: a win in one ply.
    let moves = [
        p(7, 3),
        p(0, 0),
        p(7, 4),
        p(0, 2),
        p(7, 5),
        p(0, 4),
        p(7, 6),
        p(0, 6),
    ];
    let board = Board::from_moves(BoardSize::FIFTEEN, Rule::Freestyle, &moves).unwrap();
    let v = verdict(&spec, &board).unwrap();
    assert_eq!(v.win_in, Some(1), "{v:?}");
    assert!(matches!(v.answer.as_deref(), Some("7,7" | "7,2")), "{v:?}");
    // Nothing to announce after one stone each.
    let board = Board::from_moves(BoardSize::FIFTEEN, Rule::Freestyle, &moves[..2]).unwrap();
    let v = verdict(&spec, &board).unwrap();
    assert_eq!(v.win_in, None, "{v:?}");
    assert!(v.answer.is_some());
}
