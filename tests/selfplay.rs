//! `pbrain-wuzi selfplay`, run as a user would: the games it writes are
//! legal records that the trainers read with their search targets, a run
//! continues an existing file, and bad input is refused.

use std::path::Path;
use std::process::Command;

use wuzi::game::{Board, Rule};

use wuzi_data::records::Dataset;

fn selfplay(out: &Path, openings: &Path, games: usize) -> std::process::Output {
    selfplay_on(15, out, openings, games)
}

/// `selfplay` on a `board` x `board` board.
fn selfplay_on(board: u32, out: &Path, openings: &Path, games: usize) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .args(["selfplay", "--rule", "freestyle"])
        .args(["--board", &board.to_string()])
        .arg("--out")
        .arg(out)
        .arg("--openings")
        .arg(openings)
        .args(["--games", &games.to_string(), "--parallel", "2"])
        .args([
            "--playouts",
            "24",
            "--fast-playouts",
            "8",
            "--full-share",
            "0.5",
        ])
        .args(["--sample-plies", "2", "--seed", "3"])
        .output()
        .expect("pbrain-wuzi runs")
}

fn game_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

#[test]
fn selfplay_writes_records_the_trainer_reads_and_continues_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let openings = dir.path().join("openings.txt");
    // Offset notation from the centre, as the shared opening files.
    std::fs::write(&openings, "0,0, 1,0, 0,1\n-1,-1, 1,1, 2,0\n").expect("write openings");
    let out = dir.path().join("games.tsv");
    let run = selfplay(&out, &openings, 3);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("output written");
    assert_eq!(
        text.lines().next(),
        Some(wuzi_formats::tsv::header().as_str())
    );
    assert_eq!(game_lines(&text).len(), 3, "{text}");

    let data = Dataset::load(std::slice::from_ref(&out), Rule::Freestyle, &[]).expect("loads");
    assert_eq!(data.games.len(), 3, "{:?}", data.stats);
    assert_eq!(data.stats.skipped(), 0, "{:?}", data.stats);
    let mut targets = 0;
    for game in &data.games {
        // Three opening stones, then one search entry per move.
        assert_eq!(game.first_target, 3);
        assert_eq!(game.search.len(), game.moves.len() - 3, "{}", game.id);
        let mut board = Board::new(game.size, Rule::Freestyle);
        for (ply, &mv) in game.moves.iter().enumerate() {
            let ply16 = ply as u16;
            if let Some(t) = game.search_at(ply16) {
                targets += 1;
                assert!(game.is_target(ply16));
                assert_eq!(t.wdl.iter().map(|&v| u32::from(v)).sum::<u32>(), 1000);
                for &(p, visits) in &t.visits {
                    assert!(
                        visits > 0 && board.is_empty(p),
                        "{}: ply {ply} visits {p}",
                        game.id
                    );
                }
                assert_eq!(game.policy_move(ply16), Some(t.best()));
            } else {
                assert!(!game.is_target(ply16));
            }
            board.play(mv).expect("legal move");
        }
    }
    assert_eq!(data.samples(&[0, 1, 2]).len(), targets);
    assert!(targets > 0, "half of the moves are full searches");

    // A run killed while writing leaves a partial line: the next run cuts
    // it and continues up to --games.
    let mut partial = text.clone();
    partial.push_str("selfplay/3/99\t-\tselfpl");
    std::fs::write(&out, &partial).expect("write partial line");
    let run = selfplay(&out, &openings, 5);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("output");
    assert!(text.starts_with(&partial[..partial.len() - "selfplay/3/99\t-\tselfpl".len()]));
    assert_eq!(game_lines(&text).len(), 5, "{text}");
    assert!(text.ends_with('\n'));
    let data = Dataset::load(std::slice::from_ref(&out), Rule::Freestyle, &[]).expect("loads");
    assert_eq!(
        (data.games.len(), data.stats.skipped()),
        (5, 0),
        "{:?}",
        data.stats
    );

    // Games finish out of order with --parallel: a run stopped with game 3
    // written and games 0-2 still running is continued by playing 0-2 (and
    // 4), not by counting lines and playing 3 again.
    let ids = |text: &str| -> Vec<String> {
        let mut ids: Vec<String> = game_lines(text)
            .iter()
            .map(|l| l.split('\t').next().unwrap_or("").to_string())
            .collect();
        ids.sort();
        ids
    };
    let third = game_lines(&text)
        .into_iter()
        .find(|l| l.starts_with("selfplay/3/3\t"))
        .expect("game 3")
        .to_string();
    let gapped = dir.path().join("gapped.tsv");
    std::fs::write(
        &gapped,
        format!("{}\n{third}\n", wuzi_formats::tsv::header()),
    )
    .expect("write");
    let run = selfplay(&gapped, &openings, 5);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let resumed = std::fs::read_to_string(&gapped).expect("output");
    let expected: Vec<String> = (0..5).map(|i| format!("selfplay/3/{i}")).collect();
    assert_eq!(ids(&resumed), expected, "{resumed}");

    // Continuing with another seed, rule or board would mix games in.
    for (what, seed, rule, board) in [
        ("not one of --seed 4", "4", "freestyle", "15"),
        ("give another --out", "3", "renju", "15"),
        ("give another --out", "3", "freestyle", "13"),
    ] {
        let run = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
            .args(["selfplay", "--rule", rule, "--board", board])
            .args(["--seed", seed, "--games", "9", "--playouts", "8"])
            .arg("--out")
            .arg(&out)
            .output()
            .expect("pbrain-wuzi runs");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            !run.status.success() && err.contains(what),
            "{seed} {rule} {board}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&out).expect("kept"), text);
    }
    // So would continuing with another network: the records name theirs,
    // with its fingerprint.
    let first = game_lines(&text)[0];
    let black = first.split('\t').nth(5).expect("black");
    assert!(
        black.starts_with("freestyle-6x64@") && black.len() == "freestyle-6x64@".len() + 8,
        "{black}"
    );
    let run = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .arg("--network")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("networks/freestyle-4x32.safetensors"))
        .args(["selfplay", "--rule", "freestyle", "--board", "15"])
        .args(["--seed", "3", "--games", "9", "--playouts", "8"])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("pbrain-wuzi runs");
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && err.contains("not of freestyle-4x32@"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).expect("kept"), text);
}

/// On a 7x7 board most games are drawn: each must stop at the first
/// position where neither side can make five, not fill the board.
#[test]
fn drawn_games_stop_once_neither_side_can_make_five() {
    let dir = tempfile::tempdir().expect("temp dir");
    let openings = dir.path().join("openings.txt");
    std::fs::write(&openings, "0,0\n1,0\n").expect("write openings");
    let out = dir.path().join("games.tsv");
    let run = selfplay_on(7, &out, &openings, 6);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let data = Dataset::load(std::slice::from_ref(&out), Rule::Freestyle, &[]).expect("loads");
    assert_eq!(data.games.len(), 6, "{:?}", data.stats);
    let text = std::fs::read_to_string(&out).expect("output");
    let mut drawn = 0;
    for (game, line) in data.games.iter().zip(game_lines(&text)) {
        let end = line.split('\t').nth(8).expect("end column");
        let board = Board::from_moves(game.size, Rule::Freestyle, &game.moves).expect("legal");
        let before = &game.moves[..game.moves.len() - 1];
        let before = Board::from_moves(game.size, Rule::Freestyle, before).expect("legal");
        if game.outcome == wuzi::game::Outcome::Draw {
            drawn += 1;
            // The game stops at the first dead board, labelled by it; the
            // search may also prove the draw a few moves before the board dies,
            // and then the proof ends the game on a board that is still alive.
            match end {
                "dead-draw" => assert!(board.is_dead_draw(), "{line}"),
                "proven" => assert!(!board.is_dead_draw(), "{line}"),
                other => panic!("a draw ended by {other}: {line}"),
            }
            assert!(!before.is_dead_draw(), "{line}");
            assert!(game.moves.len() < 49, "{line}");
        } else {
            assert!(!before.is_dead_draw(), "{line}");
        }
    }
    assert!(drawn > 0, "no drawn game among six on 7x7: {text}");
}

#[test]
fn selfplay_refuses_bad_input_and_leaves_files_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let openings = dir.path().join("openings.txt");
    std::fs::write(&openings, "0,0, 1,0, 0,1\n").expect("write openings");
    // Not a self-play file: refused, untouched.
    let other = dir.path().join("notes.tsv");
    std::fs::write(&other, "hello\n").expect("write");
    let run = selfplay(&other, &openings, 2);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("not a self-play file"));
    assert_eq!(std::fs::read_to_string(&other).expect("read"), "hello\n");
    // Nor one line without its end of line (it used to be cut to nothing
    // as a partial last line).
    std::fs::write(&other, "hello").expect("write");
    let run = selfplay(&other, &openings, 2);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("not a self-play file"));
    assert_eq!(std::fs::read_to_string(&other).expect("read"), "hello");
    // A line longer than any game's is refused at the limit, not read to
    // its end.
    let long = dir.path().join("long.tsv");
    std::fs::write(&long, vec![b'a'; (16 << 20) + 2]).expect("write");
    let run = selfplay(&long, &openings, 2);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("longer than 16 MiB"), "{stderr}");
    // A device or a named pipe as --out is refused, not read (a pipe
    // without a writer blocked the run for good).
    #[cfg(unix)]
    {
        let run = selfplay(std::path::Path::new("/dev/zero"), &openings, 2);
        assert!(!run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains("not a regular file"), "{stderr}");
        let fifo = dir.path().join("fifo.tsv");
        let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success());
        let run = selfplay(&fifo, &openings, 2);
        assert!(!run.status.success());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
    // An opening that is already won (five in a row) is refused up front.
    let won = dir.path().join("won.txt");
    std::fs::write(&won, "0,0, 0,5, 1,0, 1,5, 2,0, 2,5, 3,0, 3,5, 4,0\n").expect("write");
    let out = dir.path().join("games.tsv");
    let run = selfplay(&out, &won, 2);
    assert!(!run.status.success());
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("line 1"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!out.exists());
    // An evaluation opening (here the first of freestyle 15x15's) is kept
    // out of self-play, wherever it stands on the board.
    let first = include_str!("../openings/freestyle15-eval.txt")
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .expect("an evaluation opening");
    let held_out = dir.path().join("held-out.txt");
    std::fs::write(&held_out, format!("{first}\n")).expect("write");
    let run = selfplay(&out, &held_out, 2);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{stderr}");
    assert!(
        stderr.contains("line 1: an opening of openings/freestyle15-eval.txt"),
        "{stderr}"
    );
    assert!(!out.exists());
    // An opening that passes through one on its way (its stones, then one
    // more) is left out, the others played.
    let through = dir.path().join("through.txt");
    std::fs::write(&through, format!("{first}o1\na1o15a15o1\n")).expect("write");
    let run = selfplay(&out, &through, 2);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "{said}");
    assert!(
        said.contains("1 of the openings of")
            && said.contains("pass through an opening of openings/freestyle15-eval.txt"),
        "{said}"
    );
    let text = std::fs::read_to_string(&out).expect("games");
    let games = game_lines(&text);
    assert_eq!(games.len(), 2);
    for game in games {
        assert_eq!(game.split('\t').nth(9), Some("4"), "{game}");
    }
    std::fs::remove_file(&out).expect("remove");
    // A share that is not a share, or none: games without targets.
    for share in ["1.5", "0"] {
        let run = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
            .args(["selfplay", "--full-share", share, "--out"])
            .arg(&out)
            .output()
            .expect("runs");
        assert!(!run.status.success(), "{share}");
        assert!(String::from_utf8_lossy(&run.stderr).contains("--full-share"));
    }
    // Root noise that is no share, or has no concentration.
    for args in [["--root-noise", "1.5"], ["--root-noise-alpha", "0"]] {
        let run = Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
            .arg("selfplay")
            .args(args)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("runs");
        assert!(!run.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains("--root-noise"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
}
