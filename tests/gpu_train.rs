//! The outside trainer (`scripts/gpu_train.py`, PyTorch alone) against the
//! engine: it must see exactly the positions, symmetries and targets that
//! `pbrain-wuzi train` sees, and the network it writes must be loaded by the
//! engine and compute the same outputs. Runs the script on the CPU with the
//! project's own torch (`.venv`, installed by the test command).
// libtorch: the torch build only (the native backend: tests/native.rs).
#![cfg(feature = "torch")]

use std::path::{Path, PathBuf};
use std::process::Command;

use tch::{Device, Kind, Tensor};
use wuzi::game::{BoardSize, Rule};
use wuzi::nn::symmetry::Symmetry;
use wuzi::nn::{encode, Network, INPUT_PLANES};
use wuzi::train::data::{make_batch, Dataset};
use wuzi_data::export::export;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    let venv = root().join(".venv/bin/python");
    assert!(
        venv.is_file(),
        "{} is missing: run scripts/setup-torch.sh (the test command does)",
        venv.display()
    );
    venv
}

/// Runs scripts/gpu_train.py on `exported` into `out` and asserts that it
/// succeeded.
fn gpu_train(exported: &Path, out: &Path, network: &[&str], options: &[&str]) {
    let status = Command::new(python())
        .arg(root().join("scripts/gpu_train.py"))
        .arg(exported)
        .args(network)
        .args(options)
        .arg("--out")
        .arg(out)
        .status()
        .expect("python runs");
    assert!(status.success(), "gpu_train.py failed: {status}");
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[test]
fn the_pytorch_trainer_sees_the_engines_data_and_writes_a_network_it_loads() {
    let data = Dataset::load(
        &[root().join("tests/fixtures/games/gomocup2024_freestyle15_2_sample.tsv")],
        Rule::Freestyle,
        &[BoardSize::square(15).expect("15 is a board size")],
    )
    .expect("fixture loads");
    let (train, val) = data.split(0.1, 1);
    assert!(!train.is_empty() && !val.is_empty());
    let dir = tempfile::tempdir().expect("temp dir");
    let exported = dir.path().join("export");
    let summary = export(&data, &[("train", &train), ("val", &val)], &exported, 2).expect("export");
    assert_eq!(
        summary.shards.iter().map(|s| s.2).sum::<usize>(),
        data.samples(&train).len() + data.samples(&val).len(),
        "every target position is exported"
    );

    let out = dir.path().join("out");
    gpu_train(
        &exported,
        &out,
        &["--net", "2x16", "--max-steps", "6", "--batch-size", "32"],
        &["--device", "cpu", "--dump-eval", "12", "--dump-symmetries"],
    );
    // The 2x16 file does not start a 3x16 network: its third block would
    // stay random without a word.
    let run = Command::new(python())
        .arg(root().join("scripts/gpu_train.py"))
        .arg(&exported)
        .args([
            "--net",
            "3x16",
            "--max-steps",
            "1",
            "--device",
            "cpu",
            "--init",
        ])
        .arg(out.join("final.safetensors"))
        .arg("--out")
        .arg(dir.path().join("grown"))
        .output()
        .expect("python runs");
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && err.contains("lacks"), "{err}");

    // The first training position under each symmetry: planes and target
    // exactly as the engine's own batches have them.
    let first_train = data.samples(&train)[0];
    let dumped = std::fs::read(out.join("symmetries.bin")).expect("symmetries.bin");
    let cells = INPUT_PLANES * 15 * 15;
    assert_eq!(dumped.len(), 8 * (5 + cells));
    for (i, record) in dumped.chunks(5 + cells).enumerate() {
        let k = record[0];
        assert_eq!(k as usize, i);
        let batch = make_batch(&data, &[(first_train, Symmetry::new(k))]).expect("batch");
        let ours: Vec<u8> = Vec::<f32>::try_from(batch.input.flatten(0, -1))
            .expect("floats")
            .into_iter()
            .map(|v| v as u8)
            .collect();
        assert!(ours == record[5..], "symmetry {k}: planes differ");
        let target = i64::try_from(&batch.policy.get(0)).expect("target");
        assert_eq!(read_u32(record, 1) as i64, target, "symmetry {k}: target");
    }

    // The written network loads and computes what PyTorch computed.
    let net = Network::load(&out.join("final.safetensors"), Device::Cpu).expect("network loads");
    let eval = std::fs::read(out.join("eval.bin")).expect("eval.bin");
    let n = read_u32(&eval, 0) as usize;
    assert_eq!((read_u32(&eval, 4), read_u32(&eval, 8)), (15, 15));
    let theirs: Vec<f32> = eval[12..]
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert_eq!(theirs.len(), n * (225 + 3));
    let val_samples = data.samples(&val);
    assert!(n >= 8 && n <= val_samples.len());
    // Every validation position, once: the first n against PyTorch's
    // outputs, all of them for the draw calibration below.
    let mut planes = vec![0.0f32; val_samples.len() * cells];
    for (row, &sample) in val_samples.iter().enumerate() {
        let mut board = data.board(sample).expect("replay");
        encode(
            &mut board,
            &mut planes[row * cells..(row + 1) * cells],
            15,
            15,
        );
    }
    let input =
        Tensor::from_slice(&planes).view([val_samples.len() as i64, INPUT_PLANES as i64, 15, 15]);
    let (policy, wdl) = net.evaluate(&input);
    let ours = Tensor::cat(&[&policy, &wdl], 1)
        .to_kind(Kind::Float)
        .narrow(0, 0, n as i64);
    let theirs = Tensor::from_slice(&theirs).view([n as i64, 228]);
    let diff = (ours - theirs).abs().max().double_value(&[]);
    assert!(diff < 1e-4, "engine and PyTorch outputs differ by {diff}");

    // The validation's draw calibration: the mean predicted draw over every
    // validation position, and the share of drawn games' positions, as the
    // engine computes them.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("summary.json"))
            .expect("summary is JSON");
    let figure = |key: &str| {
        summary["validation"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("validation.{key} in {summary}"))
    };
    let mean_draw = wdl
        .to_kind(Kind::Float)
        .select(1, 1)
        .mean(Kind::Float)
        .double_value(&[]);
    assert!(
        (figure("draw_predicted") - mean_draw).abs() < 1e-4,
        "predicted draws {} against the engine's {mean_draw}",
        figure("draw_predicted")
    );
    let drawn = val_samples
        .iter()
        .filter(|s| data.games[s.game as usize].wdl_class(s.ply as usize) == 1)
        .count();
    assert_eq!(
        figure("draw_actual"),
        drawn as f64 / val_samples.len() as f64
    );
}

/// A self-play record: five for black on column 7, with search targets at
/// plies 2, 4 and 6 (the others short searches, not targets).
const SELFPLAY_TSV: &str = "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves\tsearch
sp/0\t-\tselfplay\tfreestyle\t15\tw\tw\tB\tfive\t2\t9\t7,7 8,8 7,8 9,9 7,9 10,10 7,10 11,11 7,11\t500:0:500/7,8=3;6,6=1 - 900:50:50/7,9=10 - 1000:0:0/7,10=7;3,3=7 - -
";

#[test]
fn soft_targets_of_self_play_records_are_exported_and_turned_with_the_board() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = dir.path().join("selfplay.tsv");
    std::fs::write(&records, SELFPLAY_TSV).expect("write");
    let data = Dataset::load(std::slice::from_ref(&records), Rule::Freestyle, &[]).expect("loads");
    assert_eq!(data.games.len(), 1, "{:?}", data.stats);
    let exported = dir.path().join("export");
    let summary = export(&data, &[("train", &[0])], &exported, 1).expect("export");
    assert_eq!(
        summary.shards,
        vec![("train".to_string(), BoardSize::square(15).expect("15"), 3)]
    );

    // Targets: the most visited move; soft: visit shares and the search's
    // value in 32767ths, 16-bit little-endian.
    let targets = std::fs::read(exported.join("train-15x15.targets")).expect("targets");
    let moves: Vec<u16> = targets
        .chunks(4)
        .map(|t| u16::from_le_bytes([t[0], t[1]]))
        .collect();
    assert_eq!(moves, vec![8 * 15 + 7, 9 * 15 + 7, 10 * 15 + 7]);
    let soft = std::fs::read(exported.join("train-15x15.soft")).expect("soft");
    assert_eq!(soft.len(), 2 * 3 * (225 + 3));
    let values: Vec<u16> = soft
        .chunks(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    // The same games without their search column, exported into the same
    // folder: no soft targets of the earlier export stay behind.
    let plain = dir.path().join("plain.tsv");
    let without_search: String = SELFPLAY_TSV
        .lines()
        .map(|l| l.rsplit_once('\t').map_or(l, |(rest, _)| rest).to_string() + "\n")
        .collect();
    std::fs::write(&plain, without_search).expect("write");
    let plain_data =
        Dataset::load(std::slice::from_ref(&plain), Rule::Freestyle, &[]).expect("loads");
    assert!(plain_data.games.iter().all(|g| g.search.is_empty()));
    let reexport = dir.path().join("reexport");
    std::fs::create_dir_all(&reexport).expect("dir");
    std::fs::write(reexport.join("train-15x15.soft"), &soft).expect("stale soft");
    export(&plain_data, &[("train", &[0])], &reexport, 1).expect("export");
    assert!(!reexport.join("train-15x15.soft").exists());
    let first = &values[..228];
    // 3 and 1 visits: 3/4 and 1/4 of 32767.
    assert_eq!((first[8 * 15 + 7], first[6 * 15 + 6]), (24575, 8192));
    assert_eq!(
        first.iter().take(225).map(|&v| u32::from(v)).sum::<u32>(),
        32767
    );
    assert_eq!(&first[225..], &[16384, 0, 16384]);
    let third = &values[2 * 228..3 * 228];
    assert_eq!((third[10 * 15 + 7], third[3 * 15 + 3]), (16384, 16384));
    assert_eq!(&third[225..], &[32767, 0, 0]);

    // The trainer turns the soft policy with the board: under symmetry k the
    // share of (x, y) is at the engine's map_cell(x, y).
    let out = dir.path().join("out");
    gpu_train(
        &exported,
        &out,
        &["--net", "2x16", "--max-steps", "2", "--batch-size", "2"],
        &["--device", "cpu", "--dump-symmetries", "--val-every", "1"],
    );
    let dumped = std::fs::read(out.join("symmetries.bin")).expect("symmetries.bin");
    let cells = INPUT_PLANES * 15 * 15;
    let record = 5 + cells + 2 * 225;
    assert_eq!(dumped.len(), 8 * record);
    for (k, chunk) in dumped.chunks(record).enumerate() {
        let turned: Vec<u16> = chunk[5 + cells..]
            .chunks(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        let sym = Symmetry::new(k as u8);
        for y in 0..15 {
            for x in 0..15 {
                let (tx, ty) = sym.map_cell(x, y, 15, 15);
                assert_eq!(
                    turned[ty * 15 + tx],
                    first[y * 15 + x],
                    "symmetry {k}, cell ({x},{y})"
                );
            }
        }
    }
}
