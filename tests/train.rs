//! Supervised training: record parsing, the split, augmentation, and a
//! tiny end-to-end run (on the CPU).
// libtorch: the torch build only (the native backend: tests/native.rs).
#![cfg(feature = "torch")]

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use tch::{Device, Kind, Tensor};
use wuzi::game::{Board, BoardSize, Color, Outcome, Point, Rule};
use wuzi::nn::symmetry::{Symmetry, TensorSymmetry};
use wuzi::nn::{encode, NetConfig, Network, Precision, PrecisionSetting, INPUT_PLANES};
use wuzi::train::data::{check_game, make_batch, make_batch_with, Dataset, LoadStats, Sample};
use wuzi::train::{run, TrainArgs};

const HEADER: &str =
    "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/games")
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

fn p(x: u8, y: u8) -> Point {
    Point::new(x, y).unwrap()
}

/// A TSV line; `moves` as "x,y x,y ...".
fn line(id: &str, rule: &str, board: &str, winner: &str, opening: usize, moves: &str) -> String {
    let n = moves.split_whitespace().count();
    format!("{id}\t2024\tTest\t{rule}\t{board}\tA\tB\t{winner}\tfive\t{opening}\t{n}\t{moves}")
}

/// Black wins on row 0 with x = 0..5, white plays row 5.
const BLACK_FIVE: &str = "0,0 0,5 1,0 1,5 2,0 2,5 3,0 3,5 4,0";

#[test]
fn tsv_records_are_parsed_filtered_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        HEADER.to_string(),
        line("ok", "freestyle", "15", "B", 2, BLACK_FIVE),
        // Crlf line endings and a 20x20 board (filtered out below).
        line("big", "freestyle", "20", "B", 0, BLACK_FIVE) + "\r",
        line("std", "standard", "15", "B", 0, BLACK_FIVE),
        line("bad-winner", "freestyle", "15", "X", 0, BLACK_FIVE),
        line("bad-move", "freestyle", "15", "B", 0, "0,0 1;1"),
        "short\tline".to_string(),
        line("off-board", "freestyle", "15", "B", 0, "0,0 15,3"),
        line("occupied", "freestyle", "15", "B", 0, "0,0 1,1 0,0"),
        line(
            "after-win",
            "freestyle",
            "15",
            "B",
            0,
            &format!("{BLACK_FIVE} 9,9"),
        ),
        line("mismatch", "freestyle", "15", "W", 0, BLACK_FIVE),
        line("opening-only", "freestyle", "15", "D", 3, "7,7 8,8 9,9")
            .replace("\tfive\t", "\tdraw\t"),
        // Unfinished game recorded as a white win (a timeout): decided
        // off the board, so no result to learn (undecided).
        line("timeout", "freestyle", "15", "W", 1, "7,7 8,8 9,9 10,10")
            .replace("\tfive\t", "\tother\t"),
        // The same recorded as ended by a five: the moves show none.
        line("no-five", "freestyle", "15", "W", 1, "7,7 8,8 9,9 10,10"),
        String::new(),
    ];
    let path = dir.path().join("games.tsv");
    fs::write(&path, lines.join("\n")).unwrap();
    let fifteen = BoardSize::square(15).unwrap();
    let data = Dataset::load(std::slice::from_ref(&path), Rule::Freestyle, &[fifteen]).unwrap();
    let s: &LoadStats = &data.stats;
    assert_eq!(s.files, 1);
    assert_eq!(s.records, 13);
    assert_eq!((s.other_rule, s.other_size), (1, 1));
    assert_eq!(s.malformed, 3, "{:?}", s.warnings);
    assert_eq!(s.illegal_move, 2);
    assert_eq!(s.moves_after_win, 1);
    assert_eq!(s.result_mismatch, 2);
    assert_eq!(s.no_targets, 1);
    assert_eq!(s.undecided, 1);
    assert_eq!(s.skipped(), 10);
    assert_eq!(s.games, 1);
    let ids: Vec<&str> = data.games.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["ok"]);
    let ok = &data.games[0];
    assert_eq!(ok.outcome, Outcome::Win(Color::Black));
    assert_eq!(ok.moves[2], p(1, 0));
    // The two opening stones are played but are not targets.
    assert_eq!((ok.first_target, ok.end_target), (2, 9));
    assert_eq!(s.positions, 7);
    let samples = data.samples(&[0]);
    assert_eq!(samples.first(), Some(&Sample { game: 0, ply: 2 }));
    assert_eq!(samples.len(), 7);
    // Without the size filter the 20x20 game is in too.
    let all = Dataset::load(&[path], Rule::Freestyle, &[]).unwrap();
    assert_eq!(all.stats.games, 2);
    assert_eq!(all.stats.other_size, 0);
}

#[test]
fn the_fixture_games_are_all_legal() {
    for (file, rule, games) in [
        ("gomocup2021_renju_sample.tsv", Rule::Renju, 50),
        ("gomocup2021_standard1_sample.tsv", Rule::Standard, 50),
        ("gomocup2024_freestyle15_2_sample.tsv", Rule::Freestyle, 50),
    ] {
        let data = Dataset::load(&[fixture(file)], rule, &[]).unwrap();
        assert_eq!(data.stats.games, games, "{file}: {}", data.stats);
        assert_eq!(data.stats.skipped(), 0, "{file}: {:?}", data.stats.warnings);
        // Every target is legal: the move's cell is empty.
        for (g, game) in data.games.iter().enumerate() {
            let ply = game.end_target - 1;
            let board = data
                .board(Sample {
                    game: g as u32,
                    ply,
                })
                .unwrap();
            assert!(board.is_empty(game.moves[ply as usize]));
        }
    }
    // A directory: both freestyle files, 15x15 and 20x20.
    let data = Dataset::load(&[fixtures()], Rule::Freestyle, &[]).unwrap();
    assert_eq!(data.stats.files, 4);
    assert_eq!(data.stats.games, 100);
    assert_eq!(data.stats.other_rule, 100);
}

#[test]
fn psq_files_are_parsed_with_results_from_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    // 1-based moves: black (1,1)..(5,1) wins.
    let mut win = String::from("Piskvork 15x15, 11:11, 0\n");
    for i in 1..=5 {
        win += &format!("{i},1,120\n");
        if i < 5 {
            win += &format!("{i},6,80\n");
        }
    }
    win += "pbrain-a.exe\npbrain-b.exe\n-1\n";
    fs::write(dir.path().join("win.psq"), &win).unwrap();
    fs::write(
        dir.path().join("unfinished.PSQ"),
        "Piskvork 15x15, 11:11, 0\r\n8,8,0\r\n9,9,0\r\n10,10,0\r\n",
    )
    .unwrap();
    fs::write(dir.path().join("bad.psq"), "hello\n1,1,1\n").unwrap();
    fs::write(
        dir.path().join("off.psq"),
        "Piskvork 15x15, 11:11, 0\n8,8,0\n16,1,0\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("big.psq"),
        "Piskvork 20x20, 11:11, 0\n8,8,0\n",
    )
    .unwrap();
    fs::write(dir.path().join("notes.txt"), "not a record").unwrap();
    let data = Dataset::load(
        &[dir.path().to_path_buf()],
        Rule::Freestyle,
        &[BoardSize::square(15).unwrap()],
    )
    .unwrap();
    let s = &data.stats;
    assert_eq!(s.files, 5, "the .txt file is not read");
    assert_eq!((s.malformed, s.illegal_move, s.other_size), (1, 1, 1));
    // A game that stops before a five or a full board (a forfeit) has no
    // result to learn: skipped, not taken for a draw.
    assert_eq!((s.games, s.undecided), (1, 1));
    let by_name = |name: &str| {
        data.games
            .iter()
            .find(|g| g.id.ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {:?}", data.games))
    };
    let win_game = by_name("win.psq");
    assert_eq!(win_game.outcome, Outcome::Win(Color::Black));
    assert_eq!(win_game.moves[0], p(0, 0));
    assert_eq!(win_game.moves[1], p(0, 5));
    assert_eq!(win_game.moves.len(), 9);
    assert_eq!((win_game.first_target, win_game.end_target), (0, 9));
    assert!(data.games.iter().all(|g| !g.id.ends_with("unfinished.PSQ")));
    // A PSQ given as a file without the extension is recognised by content.
    let plain = dir.path().join("game");
    fs::write(&plain, &win).unwrap();
    let data = Dataset::load(&[plain], Rule::Freestyle, &[]).unwrap();
    assert_eq!(data.stats.games, 1);
}

#[test]
fn unreadable_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.tsv");
    let e = Dataset::load(&[missing], Rule::Freestyle, &[]).unwrap_err();
    assert!(e.contains("missing.tsv"), "{e}");
    let e = Dataset::load(&[dir.path().to_path_buf()], Rule::Freestyle, &[]).unwrap_err();
    assert!(e.contains("no .tsv or .psq"), "{e}");
    let other = dir.path().join("other.dat");
    fs::write(&other, "some text\n").unwrap();
    let e = Dataset::load(&[other], Rule::Freestyle, &[]).unwrap_err();
    assert!(e.contains("not a game record file"), "{e}");
    let headless = dir.path().join("headless.tsv");
    fs::write(&headless, line("x", "freestyle", "15", "B", 0, BLACK_FIVE)).unwrap();
    let e = Dataset::load(&[headless], Rule::Freestyle, &[]).unwrap_err();
    assert!(e.contains("header"), "{e}");
    let nomoves = dir.path().join("nomoves.tsv");
    fs::write(
        &nomoves,
        "#game_id\trule\tboard\twinner\nx\tfreestyle\t15\tB\n",
    )
    .unwrap();
    let e = Dataset::load(&[nomoves], Rule::Freestyle, &[]).unwrap_err();
    assert!(e.contains("\"moves\""), "{e}");
    // Invalid UTF-8 in a line makes that line malformed, not the file.
    let bytes = dir.path().join("bytes.tsv");
    let mut content = format!("{HEADER}\n").into_bytes();
    content.extend_from_slice(b"\xff\xfe\tjunk\n");
    content.extend_from_slice(line("ok", "freestyle", "15", "B", 0, BLACK_FIVE).as_bytes());
    fs::write(&bytes, content).unwrap();
    let data = Dataset::load(&[bytes], Rule::Freestyle, &[]).unwrap();
    assert_eq!((data.stats.games, data.stats.malformed), (1, 1));
}

#[test]
fn the_split_is_by_game_and_reproducible() {
    let files = [
        fixture("gomocup2021_freestyle1_sample.tsv"),
        fixture("gomocup2024_freestyle15_2_sample.tsv"),
    ];
    let data = Dataset::load(&files, Rule::Freestyle, &[]).unwrap();
    let (train, val) = data.split(0.1, 42);
    // A tenth of the hash range: about a tenth of the games.
    let tenth = data.games.len() / 10;
    assert!(
        (tenth / 2..=tenth * 2).contains(&val.len()),
        "{}",
        val.len()
    );
    assert_eq!(train.len() + val.len(), data.games.len());
    let train_set: HashSet<usize> = train.iter().copied().collect();
    assert!(val.iter().all(|g| !train_set.contains(g)));
    // Every position of a validation game is a validation position.
    let train_samples = data.samples(&train);
    let val_samples = data.samples(&val);
    let val_games: HashSet<u32> = val_samples.iter().map(|s| s.game).collect();
    assert!(train_samples.iter().all(|s| !val_games.contains(&s.game)));
    let per_game: usize = val.iter().map(|&g| data.games[g].targets()).sum();
    assert_eq!(val_samples.len(), per_game);
    // Same seed, same split, whatever the file order; another seed differs.
    let ids = |d: &Dataset, v: &[usize]| -> HashSet<String> {
        v.iter().map(|&g| d.games[g].id.clone()).collect()
    };
    let reversed =
        Dataset::load(&[files[1].clone(), files[0].clone()], Rule::Freestyle, &[]).unwrap();
    assert_eq!(ids(&data, &val), ids(&reversed, &reversed.split(0.1, 42).1));
    assert_ne!(ids(&data, &val), ids(&data, &data.split(0.1, 43).1));
    // Each game's side is its own: games of one file keep their sides
    // when another file joins them (a new generation's self-play).
    let alone = Dataset::load(&files[..1], Rule::Freestyle, &[]).unwrap();
    let (alone_train, alone_val) = alone.split(0.1, 42);
    assert!(!alone_val.is_empty());
    let all_val = ids(&data, &val);
    assert!(ids(&alone, &alone_val).is_subset(&all_val));
    assert!(ids(&alone, &alone_train).is_disjoint(&all_val));
    // Tiny sets keep at least one game on each side.
    assert_eq!(data.split(0.001, 1).1.len(), 1);
    assert_eq!(data.split(0.0, 1).1.len(), 0);
}

fn encoded(board: &mut Board) -> Tensor {
    let (h, w) = (
        board.size().height() as usize,
        board.size().width() as usize,
    );
    let mut out = vec![0.0f32; INPUT_PLANES * h * w];
    encode(board, &mut out, h, w);
    Tensor::from_slice(&out).view([1, INPUT_PLANES as i64, h as i64, w as i64])
}

/// Each symmetry moves the target with the stones: the batch input equals
/// the encoding of the transformed game, and the target cell is a legal,
/// empty cell of it.
fn check_augmentation(data: &Dataset, sample: Sample) {
    let game = &data.games[sample.game as usize];
    let (h, w) = (game.size.height() as usize, game.size.width() as usize);
    for &sym in Symmetry::all_for(h, w) {
        let batch = make_batch(data, &[(sample, sym)]).unwrap();
        assert_eq!(
            batch.input.size(),
            [1, INPUT_PLANES as i64, h as i64, w as i64]
        );
        let moved: Vec<Point> = game.moves[..sample.ply as usize]
            .iter()
            .map(|q| {
                let (x, y) = sym.map_cell(q.x() as usize, q.y() as usize, h, w);
                p(x as u8, y as u8)
            })
            .collect();
        let mut board = Board::from_moves(game.size, data.rule, &moved).unwrap();
        let expected = encoded(&mut board);
        assert!(
            batch.input.equal(&expected),
            "{sym:?}: the transformed input is the transformed board's encoding"
        );
        let target = batch.policy.int64_value(&[0]);
        let (tx, ty) = (target as usize % w, target as usize / w);
        assert!(board.is_empty(p(tx as u8, ty as u8)), "{sym:?}");
        let target_planes = batch.input.get(0).select(2, tx as i64).select(1, ty as i64);
        assert_eq!(target_planes.double_value(&[0]), 0.0, "no own stone");
        assert_eq!(target_planes.double_value(&[1]), 0.0, "no opponent stone");
        assert_eq!(target_planes.double_value(&[3]), 1.0, "legal");
        // The target is the game's move, moved by the symmetry.
        let played = game.moves[sample.ply as usize];
        let (mx, my) = sym.map_cell(played.x() as usize, played.y() as usize, h, w);
        assert_eq!((tx, ty), (mx, my));
        // And it agrees with Symmetry::apply on a one-hot [1,1,H,W] plane.
        let onehot = Tensor::zeros([1, 1, h as i64, w as i64], (Kind::Float, Device::Cpu));
        let _ = onehot
            .get(0)
            .get(0)
            .get(played.y() as i64)
            .get(played.x() as i64)
            .fill_(1.0);
        let flat = sym.apply(&onehot).flatten(0, -1);
        assert_eq!(flat.argmax(0, false).int64_value(&[]), target, "{sym:?}");
        assert_eq!(
            batch.wdl.int64_value(&[0]),
            game.wdl_class(sample.ply as usize)
        );
    }
}

#[test]
fn augmentation_keeps_the_target_on_the_same_stones() {
    let data = Dataset::load(&[fixture("gomocup2021_renju_sample.tsv")], Rule::Renju, &[]).unwrap();
    for g in [0u32, 7] {
        let game = &data.games[g as usize];
        for ply in [game.first_target, game.end_target - 1] {
            check_augmentation(&data, Sample { game: g, ply });
        }
    }
    // A rectangular board: its four symmetries.
    let size = BoardSize::new(12, 9).unwrap();
    let moves = vec![
        p(1, 1),
        p(5, 2),
        p(2, 2),
        p(6, 6),
        p(3, 3),
        p(10, 7),
        p(4, 4),
    ];
    let game = check_game(
        "rect".into(),
        size,
        Rule::Freestyle,
        moves,
        1,
        Some(Outcome::Draw),
        false,
    )
    .unwrap();
    assert_eq!(game.outcome, Outcome::Draw);
    let data = Dataset {
        rule: Rule::Freestyle,
        games: vec![game],
        stats: LoadStats::default(),
    };
    for ply in 1..7 {
        check_augmentation(&data, Sample { game: 0, ply });
    }
    // A batch mixing symmetries keeps each row's target with its stones.
    let items: Vec<(Sample, Symmetry)> = (0..4)
        .map(|k| (Sample { game: 0, ply: 5 }, Symmetry::all_for(9, 12)[3 - k]))
        .collect();
    let batch = make_batch(&data, &items).unwrap();
    for row in 0..4 {
        let t = batch.policy.int64_value(&[row]);
        let legal = batch.input.double_value(&[row, 3, t / 12, t % 12]);
        assert_eq!(legal, 1.0);
    }
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Options of a short run on a handful of games to overfit (the first four
/// of a fixture file, written into `dir`), plus `extra`.
fn tiny_run(dir: &Path, out: &Path, extra: &[&str]) -> TrainArgs {
    let text = fs::read_to_string(fixture("gomocup2024_freestyle15_2_sample.tsv")).unwrap();
    let games = dir.join("few.tsv");
    fs::write(&games, text.lines().take(5).collect::<Vec<_>>().join("\n")).unwrap();
    let mut args = vec![
        games.to_str().unwrap().to_string(),
        "--out".to_string(),
        out.to_str().unwrap().to_string(),
    ];
    args.extend(
        [
            "--rule",
            "freestyle",
            "--net",
            "2x16",
            "--epochs",
            "100",
            "--max-steps",
            "30",
            "--batch-size",
            "32",
            "--lr",
            "0.01",
            "--schedule",
            "constant",
            "--warmup-steps",
            "0",
            "--val-fraction",
            "0.25",
            "--log-every",
            "1",
            "--device",
            "cpu",
            "--quiet",
        ]
        .iter()
        .chain(extra)
        .map(|a| a.to_string()),
    );
    TrainArgs::parse_from(args).unwrap()
}

/// Policy + value loss of each training row of a loss.csv (rows without
/// validation figures).
fn training_losses(rows: &[Vec<String>]) -> Vec<f64> {
    rows[1..]
        .iter()
        .filter(|r| !r[4].is_empty() && r[7].is_empty())
        .map(|r| r[4].parse::<f64>().unwrap() + r[5].parse::<f64>().unwrap())
        .collect()
}

/// Mean of the first five and of the last five values.
fn first_and_last(v: &[f64]) -> (f64, f64) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (mean(&v[..5]), mean(&v[v.len() - 5..]))
}

#[test]
fn a_tiny_training_run_learns_and_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = tiny_run(
        dir.path(),
        &out,
        &[
            "--board",
            "15",
            "--checkpoint-every",
            "10",
            "--torch-threads",
            "2",
            "--seed",
            "3",
        ],
    );
    let summary = run(&args).unwrap();
    assert_eq!(summary.train_games, 3);
    assert_eq!(summary.val_games, 1);
    assert_eq!(summary.result.steps, 30);
    assert!(
        summary.result.stop.contains("max-steps"),
        "{}",
        summary.result.stop
    );
    let val = summary.result.final_val.expect("validation figures");
    assert_eq!(val.positions, summary.val_positions);
    assert!(val.policy_loss.is_finite() && val.value_loss.is_finite());
    assert!((0.0..=1.0).contains(&val.accuracy));

    // The network files load back; each was written beside its name and
    // renamed over it, leaving nothing half written.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".partial."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let final_net = out.join("final.safetensors");
    assert_eq!(summary.result.final_network, final_net);
    let net = Network::load(&final_net, Device::Cpu).unwrap();
    assert_eq!(
        net.config(),
        NetConfig {
            blocks: 2,
            channels: 16
        }
    );
    for step in [10, 20, 30] {
        let path = out.join(format!("step-{step:07}.safetensors"));
        assert!(summary.result.checkpoints.contains(&path), "{path:?}");
        Network::load(&path, Device::Cpu).unwrap();
    }
    let epoch1 = out.join("epoch-001.safetensors");
    assert!(summary.result.checkpoints.contains(&epoch1));

    // The CSV: one row a step, plus rows with validation figures.
    let rows = csv_rows(&out.join("loss.csv"));
    assert_eq!(rows[0][0], "step");
    let columns = rows[0].len();
    assert!(rows.iter().all(|r| r.len() == columns));
    let train = training_losses(&rows);
    assert!(train.len() >= 25, "{} training rows", train.len());
    let val_rows = rows[1..].iter().filter(|r| !r[7].is_empty()).count();
    assert!(val_rows >= 2, "validation at epoch ends and at the stop");
    // The training loss goes down on this tiny set.
    let (first, last) = first_and_last(&train);
    assert!(
        last < 0.8 * first,
        "training loss {first:.3} -> {last:.3} did not fall by 20%"
    );

    // The PNG.
    let png = fs::read(out.join("loss.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 1000);

    // Continuing from the network, and a mismatched --net.
    let out2 = dir.path().join("out2");
    let mut more = args.clone();
    more.init = Some(final_net.clone());
    more.net = None;
    more.max_steps = Some(2);
    more.checkpoint_every = 0;
    more.out = out2.clone();
    let again = run(&more).unwrap();
    assert_eq!(again.net, net.config());
    assert_eq!(again.result.steps, 2);
    assert!(out2.join("final.safetensors").is_file());
    more.net = Some("3x16".parse().unwrap());
    let e = run(&more).unwrap_err();
    assert!(e.contains("differs"), "{e}");
}

/// `--max-steps 0` trains nothing and still validates: the way to measure
/// a network on a split. The figures are the network's own, unchanged by
/// any step (batch-norm statistics included).
#[test]
fn zero_steps_validate_the_network_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let fp32 = ["--checkpoint-every", "0", "--precision", "fp32"];
    let mut args = tiny_run(dir.path(), &out, &fp32);
    args.max_steps = Some(0);
    let untouched = run(&args).unwrap();
    assert_eq!(untouched.result.steps, 0);
    let before = untouched.result.final_val.expect("validation figures");
    // The same network again, from its saved file: the same figures.
    let mut again = args.clone();
    again.init = Some(out.join("final.safetensors"));
    again.net = None;
    again.out = dir.path().join("again");
    let after = run(&again).unwrap().result.final_val.unwrap();
    assert!((before.policy_loss - after.policy_loss).abs() < 1e-9);
    assert!((before.value_loss - after.value_loss).abs() < 1e-9);
    // One step moves them.
    again.max_steps = Some(1);
    again.out = dir.path().join("one");
    let stepped = run(&again).unwrap().result.final_val.unwrap();
    assert!((before.policy_loss - stepped.policy_loss).abs() > 1e-6);
}

/// A Gomocup results folder (one PSQ file per game) trains with the
/// league's opening file: the same positions as the collection's TSV of
/// those games, and a game from none of the openings left out.
#[test]
fn psq_folders_train_after_the_tournament_openings() {
    let tsv = fixture("gomocup2024_freestyle15_2_sample.tsv");
    let text = fs::read_to_string(&tsv).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("Freestyle15_2");
    fs::create_dir(&folder).unwrap();
    // "x,y x,y ..." (0-based) as the judge's PSQ file (1-based, a time each).
    let psq = |moves: &str| {
        let mut text = String::from("Piskvorky 15x15, 11:11, 0\n");
        for xy in moves.split(' ') {
            let (x, y) = xy.split_once(',').unwrap();
            let one = |v: &str| v.parse::<u32>().unwrap() + 1;
            text += &format!("{},{},0\n", one(x), one(y));
        }
        text
    };
    for (i, line) in text.lines().skip(1).enumerate() {
        let moves = line.split('\t').nth(11).unwrap();
        fs::write(folder.join(format!("{i}.psq")), psq(moves)).unwrap();
    }
    fs::write(folder.join("elsewhere.psq"), psq(BLACK_FIVE)).unwrap();

    let out = dir.path().join("out");
    let mut args = tiny_run(dir.path(), &out, &["--checkpoint-every", "0"]);
    args.max_steps = Some(0);
    args.data = vec![folder.clone()];
    args.psq_openings = Some(fixture("gomocup2024_freestyle15_openings.txt"));
    let summary = run(&args).unwrap();
    let collection = Dataset::load(&[tsv], Rule::Freestyle, &[]).unwrap();
    assert!(collection.stats.games >= 40);
    assert_eq!(
        summary.data.games, collection.stats.games,
        "{}",
        summary.data
    );
    assert_eq!(summary.data.positions, collection.stats.positions);
    assert_eq!(summary.data.psq_without_opening, 1);

    // Without the openings, the judge's stones are moves like the others.
    args.psq_openings = None;
    let all = run(&args).unwrap();
    assert_eq!(all.data.games, collection.stats.games + 1);
    let opening_stones: usize = (collection.games.iter())
        .map(|g| usize::from(g.first_target))
        .sum();
    let nine = BLACK_FIVE.split(' ').count();
    assert_eq!(
        all.data.positions,
        collection.stats.positions + opening_stones + nine
    );

    // An opening file that cannot be read stops the run, naming it.
    args.psq_openings = Some(dir.path().join("no-such-openings.txt"));
    let why = run(&args).unwrap_err();
    assert!(why.contains("no-such-openings.txt"), "{why}");
}

/// `--split-seed` picks the validation games alone: a run with another
/// `--seed` (another order and other symmetries) holds out the same games.
#[test]
fn the_split_seed_keeps_the_validation_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = tiny_run(dir.path(), &out, &["--checkpoint-every", "0"]);
    args.max_steps = Some(1);
    let held_out = |seed: u64, split_seed: Option<u64>| {
        let mut args = args.clone();
        args.seed = seed;
        args.split_seed = split_seed;
        let summary = run(&args).unwrap();
        // The four games differ in length: the counts name the games held
        // out (one or two of them at a quarter of the hash range).
        (summary.val_games, summary.val_positions)
    };
    let first = held_out(1, None);
    let other_seed = (2..40)
        .find(|&seed| held_out(seed, None) != first)
        .expect("some seed holds out another game");
    assert_eq!(held_out(other_seed, Some(1)), first);
    assert_ne!(held_out(1, Some(other_seed)), first);
}

/// Mixed precision (bf16 convolutions, fp32 weights and batch norms): the
/// same outputs as fp32 within bf16's rounding, and a run that learns. Runs
/// on every CPU: where bf16 has no hardware it is slow, not wrong.
#[test]
fn bf16_training_matches_fp32_and_learns() {
    let data = Dataset::load(
        &[fixture("gomocup2024_freestyle15_2_sample.tsv")],
        Rule::Freestyle,
        &[BoardSize::square(15).unwrap()],
    )
    .unwrap();
    let samples = data.samples(&(0..data.games.len()).collect::<Vec<_>>());
    let items: Vec<(Sample, Symmetry)> = samples
        .iter()
        .step_by(37)
        .take(48)
        .map(|&s| (s, Symmetry::IDENTITY))
        .collect();
    let batch = make_batch(&data, &items).unwrap();
    let net = Network::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("networks/freestyle-4x32.safetensors"),
        Device::Cpu,
    )
    .unwrap();
    tch::no_grad(|| {
        let (p32, v32) = net.forward(&batch.input, false);
        let (p16, v16) = net.forward_in(&batch.input, false, Kind::BFloat16);
        assert_eq!(p16.kind(), Kind::Float, "outputs are fp32");
        let gap = |a: &Tensor, b: &Tensor| {
            (a.softmax(-1, Kind::Float) - b.softmax(-1, Kind::Float))
                .abs()
                .max()
                .double_value(&[])
        };
        let (policy_gap, value_gap) = (gap(&p32, &p16), gap(&v32, &v16));
        // The training forward rounds each convolution's output to bf16
        // before its batch norm, where the frozen inference path folds the
        // norm into the convolution and rounds once (tests/nn.rs holds that
        // one to 0.03): measured 0.031 and 0.025 here on the shipped
        // freestyle 4x32 (distilled, 2026-11-24). A wrong cast or a layer
        // left out moves probabilities by tenths.
        assert!(
            policy_gap < 0.05 && value_gap < 0.05,
            "bf16 moves probabilities by {policy_gap:.4} (policy) and {value_gap:.4} (value)"
        );
        // And it does round: a forward that quietly stayed in fp32 would
        // agree exactly.
        assert!(policy_gap > 0.0, "bf16 gave fp32's policy exactly");
    });

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = tiny_run(dir.path(), &out, &["--precision", "bf16"]);
    let summary = run(&args).unwrap();
    assert_eq!(summary.precision, Precision::Bf16);
    let (first, last) = first_and_last(&training_losses(&csv_rows(&out.join("loss.csv"))));
    assert!(
        last < 0.8 * first,
        "bf16 training loss {first:.3} -> {last:.3} did not fall by 20%"
    );
    // The weights stay fp32: the file loads as any other network.
    Network::load(&out.join("final.safetensors"), Device::Cpu).unwrap();
}

#[test]
fn bad_options_are_refused() {
    assert!(
        TrainArgs::parse_from(["games.tsv"]).is_err(),
        "--rule is required"
    );
    assert!(
        TrainArgs::parse_from(["--rule", "renju"]).is_err(),
        "data is required"
    );
    assert!(TrainArgs::parse_from(["g.tsv", "--rule", "connect6"]).is_err());
    assert!(TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--board", "40"]).is_err());
    assert!(TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--net", "4y32"]).is_err());
    let args = TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--board", "15,20x15"]).unwrap();
    assert_eq!(
        args.boards,
        [
            BoardSize::square(15).unwrap(),
            BoardSize::new(20, 15).unwrap()
        ]
    );
    let mut args = TrainArgs::parse_from([
        fixture("gomocup2021_renju_sample.tsv").to_str().unwrap(),
        "--rule",
        "freestyle",
        "--quiet",
    ])
    .unwrap();
    let e = run(&args).unwrap_err();
    assert!(e.contains("no usable freestyle game"), "{e}");
    args.teacher_weight = 1.5;
    assert!(run(&args).unwrap_err().contains("--teacher-weight"));
    args.teacher_weight = 0.8;
    args.rule = Rule::Renju;
    args.teacher = Some(fixture("no-such-network.safetensors"));
    let e = run(&args).unwrap_err();
    assert!(
        e.contains("teacher") && e.contains("no-such-network"),
        "{e}"
    );
    args.teacher = None;
    args.batch_size = 0;
    assert!(run(&args).unwrap_err().contains("--batch-size"));
    // A batch too large to allocate is refused, not a panic in libtorch.
    args.batch_size = 8_193;
    assert!(run(&args).unwrap_err().contains("--batch-size"));
    args.batch_size = 64;
    args.epochs = usize::MAX;
    assert!(run(&args).unwrap_err().contains("--epochs"));
    // Rates and weights that overflow fp32 at the first step.
    args.epochs = 1;
    args.lr = 1e39;
    let e = run(&args).unwrap_err();
    assert!(e.contains("--lr") && e.contains("at most"), "{e}");
    args.lr = 1e-3;
    args.value_weight = 1e39;
    assert!(run(&args).unwrap_err().contains("--value-weight"));
    args.value_weight = 1.0;
    for (flag, value) in [("--log-every", "0"), ("--loader-threads", "17")] {
        let e = TrainArgs::parse_from(["g.tsv", "--rule", "renju", flag, value]).unwrap_err();
        assert!(e.contains(flag), "{e}");
    }
    // The network to start from is read before the data (whose loading
    // and labelling can take long).
    let dir = tempfile::tempdir().unwrap();
    let e = run(&TrainArgs::parse_from([
        dir.path().join("no-such-data.tsv").to_str().unwrap(),
        "--rule",
        "renju",
        "--init",
        dir.path()
            .join("no-such-init.safetensors")
            .to_str()
            .unwrap(),
        "--quiet",
    ])
    .unwrap())
    .unwrap_err();
    assert!(e.contains("no-such-init"), "{e}");
    let e = TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--precision", "half"]).unwrap_err();
    assert!(e.contains("loss scaling"), "{e}");
    assert!(TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--precision", "fp8"]).is_err());
    let fixed = TrainArgs::parse_from(["g.tsv", "--rule", "renju", "--precision", "fp32"]).unwrap();
    assert_eq!(fixed.precision, PrecisionSetting::Fixed(Precision::Fp32));
}

/// A network whose weights are not all finite (a diverged run) is not
/// saved: the file from before stays, and no partial file is left.
#[test]
fn non_finite_weights_are_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.safetensors");
    let net = Network::new("2x16".parse::<NetConfig>().unwrap(), Device::Cpu);
    net.save(&path).unwrap();
    let before = fs::read(&path).unwrap();
    tch::no_grad(|| {
        let mut variables = net.var_store().variables().into_iter().collect::<Vec<_>>();
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        let middle = variables.len() / 2;
        let _ = variables[middle].1.fill_(f64::NAN);
    });
    let e = net.save(&path).unwrap_err().to_string();
    assert!(e.contains("NaN"), "{e}");
    assert_eq!(fs::read(&path).unwrap(), before);
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["net.safetensors"]);
    assert!(Network::load(&path, Device::Cpu).is_ok());
}

/// Loads every game under `WUZI_GAMES` (e.g. the shared Gomocup TSVs) under
/// each rule and prints what was kept: `WUZI_GAMES=dir cargo test --release
/// --test train -- --ignored --nocapture`.
#[test]
#[ignore]
fn load_the_games_under_wuzi_games() {
    let Ok(dir) = std::env::var("WUZI_GAMES") else {
        return;
    };
    for rule in [Rule::Freestyle, Rule::Standard, Rule::Renju] {
        let start = std::time::Instant::now();
        let data = Dataset::load(&[PathBuf::from(&dir)], rule, &[]).unwrap();
        println!(
            "{rule}: {} ({:.2} s)",
            data.stats,
            start.elapsed().as_secs_f64()
        );
        for w in &data.stats.warnings {
            println!("  {w}");
        }
    }
}

/// A self-play record's positions get soft targets: the search's visit
/// shares as the policy (through the symmetry), the result mixed with the
/// search's value; a position without a search target is no sample.
#[test]
fn self_play_positions_get_soft_targets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("selfplay-freestyle.tsv");
    // Black makes five on row 7; the searches at plies 2 and 3 are targets.
    let record = "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves\tsearch\n\
selfplay/1/0\t-\tselfplay\tfreestyle\t15\tnet\tnet\tB\tfive\t2\t9\t\
7,7 0,0 8,7 0,2 9,7 0,4 10,7 0,6 11,7\t\
600:100:300/8,7=30;6,7=10 400:200:400/1,1=15;0,2=5 - - - - -\n";
    fs::write(&path, record).unwrap();
    let data = Dataset::load(&[path], Rule::Freestyle, &[BoardSize::square(15).unwrap()]).unwrap();
    let samples = data.samples(&[0]);
    assert_eq!(samples.iter().map(|s| s.ply).collect::<Vec<_>>(), [2, 3]);
    let (h, w) = (15usize, 15usize);
    for k in [0u8, 3, 5] {
        let sym = Symmetry::new(k);
        let items: Vec<(Sample, Symmetry)> = samples.iter().map(|&s| (s, sym)).collect();
        let batch = make_batch_with(&data, &items, 0.5).unwrap();
        let at = |row: i64, x: usize, y: usize| {
            let (mx, my) = sym.map_cell(x, y, h, w);
            batch.policy_dist.double_value(&[row, (my * w + mx) as i64])
        };
        for row in 0..2 {
            let total = batch
                .policy_dist
                .get(row)
                .sum(Kind::Float)
                .double_value(&[]);
            assert!((total - 1.0).abs() < 1e-5, "{total}");
        }
        assert!((at(0, 8, 7) - 0.75).abs() < 1e-6 && (at(0, 6, 7) - 0.25).abs() < 1e-6);
        assert!((at(1, 1, 1) - 0.75).abs() < 1e-6 && (at(1, 0, 2) - 0.25).abs() < 1e-6);
        // The hard target is the most visited move.
        let (mx, my) = sym.map_cell(1, 1, h, w);
        assert_eq!(batch.policy.int64_value(&[1]), (my * w + mx) as i64);
        let wdl = |row: i64| -> Vec<f64> {
            (0..3)
                .map(|c| batch.wdl_dist.double_value(&[row, c]))
                .collect()
        };
        // Black (to move at ply 2) won: [1,0,0] mixed half with [.6,.1,.3].
        for (got, want) in wdl(0).iter().zip([0.8, 0.05, 0.15]) {
            assert!((got - want).abs() < 1e-6, "{:?}", wdl(0));
        }
        // White (to move at ply 3) lost: [0,0,1] mixed with [.4,.2,.4].
        for (got, want) in wdl(1).iter().zip([0.2, 0.1, 0.7]) {
            assert!((got - want).abs() < 1e-6, "{:?}", wdl(1));
        }
    }
    // With weight 0 the value target is the result alone; make_batch uses
    // the default half.
    let items: Vec<(Sample, Symmetry)> = samples.iter().map(|&s| (s, Symmetry::IDENTITY)).collect();
    let only_result = make_batch_with(&data, &items, 0.0).unwrap();
    assert_eq!(only_result.wdl_dist.double_value(&[0, 0]), 1.0);
    let default = make_batch(&data, &items).unwrap();
    assert!((default.wdl_dist.double_value(&[0, 0]) - 0.8).abs() < 1e-6);
}

fn shipped_freestyle_4x32() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("networks/freestyle-4x32.safetensors")
}

/// `--teacher`: every training position's targets become the teacher's
/// probabilities (mixed with the played move by the weight) and its
/// win/draw/loss, checked cell by cell against libtorch's evaluation of
/// the teacher (the labelling evaluates it with the native kernels);
/// games left out of the labelling keep the played move.
#[test]
fn a_teacher_labels_the_training_positions() {
    let path = fixture("gomocup2024_freestyle15_2_sample.tsv");
    let plain = Dataset::load(&[path], Rule::Freestyle, &[BoardSize::square(15).unwrap()]).unwrap();
    assert!(plain.games.len() >= 4);
    let mut data = plain.clone();
    let labelled = wuzi::train::teacher::label(
        &mut data,
        &[0, 1, 2],
        &shipped_freestyle_4x32(),
        Device::Cpu,
        2,
        0.8,
        false,
    )
    .unwrap();
    assert_eq!(labelled.positions, plain.samples(&[0, 1, 2]).len());
    assert!(data.games[3].search.is_empty(), "game 3 was not labelled");
    assert_eq!(data.samples(&[0, 1, 2]), plain.samples(&[0, 1, 2]));

    let teacher = Network::load(&shipped_freestyle_4x32(), Device::Cpu)
        .unwrap()
        .freeze(labelled.precision);
    let samples = plain.samples(&[0, 2]);
    let items: Vec<(Sample, Symmetry)> = samples.iter().map(|&s| (s, Symmetry::IDENTITY)).collect();
    let (policy, wdl) = teacher.evaluate(&make_batch(&plain, &items).unwrap().input);
    // Targets as the trainer builds them, the teacher's value alone.
    let targets = make_batch_with(&data, &items, 1.0).unwrap();
    let mut worst = 0.0f64;
    for (row, sample) in samples.iter().enumerate() {
        let row = row as i64;
        let played = plain.games[sample.game as usize].moves[sample.ply as usize];
        let played_cell = played.y() as i64 * 15 + played.x() as i64;
        for cell in 0..225i64 {
            let teacher_p = policy.double_value(&[row, cell]);
            let mut want = 0.8 * teacher_p;
            if cell == played_cell {
                want += 0.2;
            }
            // Shares under 0.1% are dropped and the rest renormalised.
            let got = targets.policy_dist.double_value(&[row, cell]);
            worst = worst.max((got - want).abs());
        }
        for c in 0..3 {
            let (got, want) = (
                targets.wdl_dist.double_value(&[row, c]),
                wdl.double_value(&[row, c]),
            );
            assert!((got - want).abs() < 2e-3, "wdl {got} against {want}");
        }
    }
    assert!(
        worst < 0.02,
        "a policy target is {worst} away from the teacher's mix"
    );
}

/// The teacher's threads share the positions out; each target lands on
/// its own position whatever the number of threads, and a thread that
/// cannot read a position fails the labelling with the reason.
#[test]
fn teacher_labels_do_not_depend_on_the_threads() {
    let path = fixture("gomocup2024_freestyle15_2_sample.tsv");
    let plain = Dataset::load(&[path], Rule::Freestyle, &[BoardSize::square(15).unwrap()]).unwrap();
    let games: Vec<usize> = (0..plain.games.len()).collect();
    let label = |threads: usize| {
        let mut data = plain.clone();
        let labelled = wuzi::train::teacher::label(
            &mut data,
            &games,
            &shipped_freestyle_4x32(),
            Device::Cpu,
            threads,
            0.8,
            false,
        )
        .unwrap();
        assert_eq!(labelled.threads, threads);
        assert!(
            labelled.evaluator.starts_with("native"),
            "{}",
            labelled.evaluator
        );
        data
    };
    let (one, three) = (label(1), label(3));
    assert!(
        plain.samples(&games).len() > 3 * 32,
        "too few positions for 3 threads"
    );
    // Every position keeps its place among the training samples.
    assert_eq!(three.samples(&games), plain.samples(&games));
    for (a, b) in one.games.iter().zip(&three.games) {
        assert!(!a.search.is_empty(), "game {} was not labelled", a.id);
        assert_eq!(a.search, b.search, "game {}", a.id);
    }

    // A game whose moves stop short of its targets has no move to learn
    // there: the labelling fails, naming the game, and labels nothing.
    let mut broken = plain.clone();
    let last = broken.games.len() - 1;
    broken.games[last].moves.truncate(2);
    let id = broken.games[last].id.clone();
    let why = wuzi::train::teacher::label(
        &mut broken,
        &games,
        &shipped_freestyle_4x32(),
        Device::Cpu,
        3,
        0.8,
        false,
    )
    .unwrap_err();
    assert!(why.contains("has no move") && why.contains(&id), "{why}");
    assert!(
        broken.games.iter().all(|g| g.search.is_empty()),
        "labelled in part"
    );
}

/// Mean Kullback-Leibler divergence of `student`'s policy from
/// `teacher`'s over the positions of `data`.
fn policy_divergence(data: &Dataset, student: &Path, teacher: &Path) -> f64 {
    let samples = data.samples(&(0..data.games.len()).collect::<Vec<_>>());
    let items: Vec<(Sample, Symmetry)> = samples.iter().map(|&s| (s, Symmetry::IDENTITY)).collect();
    let input = make_batch(data, &items).unwrap().input;
    let load = |p: &Path| {
        Network::load(p, Device::Cpu)
            .unwrap()
            .freeze(Precision::Fp32)
    };
    let (want, _) = load(teacher).evaluate(&input);
    let (got, _) = load(student).evaluate(&input);
    let kl = (&want * (want.clamp_min(1e-9).log() - got.clamp_min(1e-9).log())).sum(Kind::Double);
    kl.double_value(&[]) / samples.len() as f64
}

/// A student trained with the teacher's targets ends nearer the teacher
/// than the same run on the played moves alone.
#[test]
fn a_student_learns_the_teachers_policy() {
    let dir = tempfile::tempdir().unwrap();
    let teacher = shipped_freestyle_4x32();
    let teacher_arg = teacher.to_str().unwrap().to_string();
    let common = ["--board", "15", "--torch-threads", "2", "--seed", "3"];
    let longer = |mut args: TrainArgs| {
        args.max_steps = Some(150);
        args
    };
    let plain_out = dir.path().join("plain");
    run(&longer(tiny_run(dir.path(), &plain_out, &common))).unwrap();
    let taught_out = dir.path().join("taught");
    let mut extra = common.to_vec();
    extra.extend(["--teacher", &teacher_arg, "--teacher-weight", "1"]);
    let summary = run(&longer(tiny_run(dir.path(), &taught_out, &extra))).unwrap();
    let labelled = summary.teacher.expect("the summary names the teacher");
    assert_eq!(labelled.positions, summary.train_positions);

    let data = Dataset::load(
        &[dir.path().join("few.tsv")],
        Rule::Freestyle,
        &[BoardSize::square(15).unwrap()],
    )
    .unwrap();
    let plain = policy_divergence(&data, &plain_out.join("final.safetensors"), &teacher);
    let taught = policy_divergence(&data, &taught_out.join("final.safetensors"), &teacher);
    assert!(
        taught < 0.8 * plain,
        "divergence from the teacher: {taught:.3} with it, {plain:.3} without"
    );
}
