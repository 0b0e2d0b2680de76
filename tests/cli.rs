//! The command line, run as a user would.

use std::process::Command;

fn wuzi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pbrain-wuzi"))
}

/// Runs the command, asserts that it succeeded (showing its stderr if not)
/// and returns its stdout.
fn stdout_of(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bench_rules_prints_every_figure() {
    let text = stdout_of(wuzi().args(["bench", "rules", "--seconds", "0.05"]));
    assert!(text.contains("make+unmake with pattern update"), "{text}");
    let line_of = |label: &str| {
        text.lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label}:\n{text}"))
    };
    // A figure: digits with thousands separators, e.g. "1,425,545".
    let figure = |word: &str| -> Option<f64> {
        let digits = word.trim_end_matches([';', ',']).replace(',', "");
        (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    // The table rows end with their rate; a label's own digits (15x15)
    // are not figures.
    for label in [
        "renju 15x15",
        "standard 15x15",
        "freestyle 20x20",
        "freestyle 15x15",
    ] {
        let line = line_of(label);
        let rate = line.split_whitespace().last().and_then(figure);
        assert!(rate.is_some_and(|r| r > 0.0), "{line}");
    }
    // The solver lines give the rate after the colon, then the wins found.
    let after = |line: &str, mark: &str| -> f64 {
        line.split(mark)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(figure)
            .unwrap_or_else(|| panic!("no figure after {mark:?}: {line}"))
    };
    let wins = |line: &str| -> f64 {
        let head = &line[..line.find(" wins found").unwrap_or_else(|| panic!("{line}"))];
        head.split_whitespace()
            .last()
            .and_then(figure)
            .unwrap_or_else(|| panic!("{line}"))
    };
    let scans = line_of("full forbidden-point scans per second");
    assert!(after(scans, "): ") > 0.0, "{scans}");
    let vcf = line_of("VCF nodes per second");
    let vct = line_of("VCT (depth-first) nodes per second");
    let pn = line_of("VCT (proof-number, the engine's) nodes per second");
    for line in [vcf, vct, pn] {
        assert!(after(line, "): ") > 0.0, "{line}");
    }
    // Each solver finds wins in these end-of-game positions (their budgets
    // differ, so their counts are not compared).
    for line in [vcf, vct, pn] {
        assert!(wins(line) > 0.0, "{line}");
    }
}

#[test]
fn unknown_arguments_are_refused_with_a_message() {
    let out = wuzi().args(["bench", "nothing"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing"));
}

#[test]
fn bench_nn_prints_raw_and_service_rates_per_batch() {
    let text = stdout_of(wuzi().args([
        "--device",
        "cuda:7",
        "bench",
        "nn",
        "--seconds",
        "0.05",
        "--batches",
        "1,4",
        "--net",
        "2x16",
    ]));
    assert!(text.contains("net 2x16"), "{text}");
    for batch in ["1", "4"] {
        let row = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(batch))
            .unwrap_or_else(|| panic!("no row for batch {batch}:\n{text}"));
        let numbers: Vec<f64> = row
            .split_whitespace()
            .filter_map(|w| w.trim_end_matches('%').replace(',', "").parse().ok())
            .collect();
        // Per backend built in: raw rate, service rate, service share.
        let backends = if cfg!(feature = "torch") { 2 } else { 1 };
        assert_eq!(numbers.len(), 1 + 3 * backends, "{row}");
        for k in 0..backends {
            assert!(
                numbers[1 + 3 * k] > 0.0 && numbers[2 + 3 * k] > 0.0,
                "{row}"
            );
        }
        if backends == 2 {
            let choice = row.split_whitespace().last();
            assert!(matches!(choice, Some("native" | "torch")), "{row}");
        }
    }
    // The missing GPU is reported, not fatal (unless this machine has 8 GPUs).
    #[cfg(feature = "torch")]
    if !wuzi::nn::device::cuda_available() {
        assert!(text.contains("using the CPU"), "{text}");
    }
}

#[test]
fn bench_nn_measures_one_backend_when_asked() {
    let text = stdout_of(wuzi().args([
        "bench",
        "nn",
        "--seconds",
        "0.05",
        "--batches",
        "2",
        "--net",
        "2x16",
        "--backend",
        "native",
    ]));
    // fp32, or bf16 where the CPU has AVX512-BF16 (`--precision auto`).
    assert!(
        text.contains("native 2x16 fp32") || text.contains("native 2x16 bf16"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("2"))
        .unwrap_or_else(|| panic!("no row for batch 2:\n{text}"));
    assert_eq!(row.split_whitespace().count(), 4, "{row}");
    let out = wuzi()
        .args(["bench", "nn", "--backend", "tpu"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("tpu"));
    // Bounds said, not applied without a word (600 s was a silent cap; a
    // huge evaluator count tried to start that many threads).
    for (flag, value) in [
        ("--seconds", "700"),
        ("--evaluators", "100000"),
        // 2^32: it wrapped to 0 threads for libtorch, which panicked.
        ("--torch-threads", "4294967296"),
        ("--torch-threads", "0"),
    ] {
        let out = wuzi().args(["bench", "nn", flag, value]).output().unwrap();
        assert!(!out.status.success(), "{flag} {value}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{flag} {value}"
        );
    }
}

/// One flag per parameter: a subcommand refuses the engine's flags it does
/// not use, rather than taking them without effect, and says what to give
/// instead; bench nn takes the engine's --device.
#[test]
fn subcommands_refuse_the_engines_flags_they_do_not_use() {
    let refused = |args: &[&str], flags: &str, hint: &str| {
        let out = wuzi().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flags) && err.contains(hint), "{args:?}: {err}");
    };
    for part in ["nn", "search"] {
        refused(
            &["--threads", "2", "bench", part, "--seconds", "0.01"],
            "does not use --threads",
            "--torch-threads",
        );
    }
    // The blunder suite searches with one thread whatever --threads says.
    refused(
        &["--threads", "2", "bench", "blunders"],
        "bench blunders does not use --threads",
        "one thread",
    );
    // Each self-play game searches on one thread; --parallel plays more.
    refused(
        &["--threads", "2", "selfplay", "--out", "x.tsv"],
        "selfplay does not use --threads",
        "--parallel",
    );
    refused(
        &["--log-dir", "logs", "bench", "rules"],
        "bench rules does not use --log-dir",
        "measures no network",
    );
    refused(
        &["--log-dir", "logs", "analyse", "h8"],
        "analyse does not use --log-dir",
        "no engine log",
    );
    // Bench's own flags too: the figure would not be the one asked for.
    for (args, flags) in [
        (
            &[
                "bench",
                "blunders",
                "--seconds",
                "30",
                "--positions-out",
                "p.tsv",
            ][..],
            "bench blunders does not use --seconds, --positions-out",
        ),
        (
            &["bench", "search", "--board", "20"],
            "bench search does not use --board",
        ),
        (
            &["bench", "rules", "--net", "10x128"],
            "bench rules does not use --net",
        ),
    ] {
        refused(args, flags, "");
    }
    refused(
        &["--network", "x.safetensors", "serve", "--port", "0"],
        "serve does not use --network",
        "runs no engine",
    );
    refused(
        &[
            "match",
            "--network",
            "x.safetensors",
            "--engine1",
            "cmd=a",
            "--engine2",
            "cmd=b",
        ],
        "match does not use --network",
        "--engine1",
    );
    #[cfg(feature = "torch")]
    refused(
        &[
            "--threads",
            "2",
            "--device",
            "cpu",
            "train",
            "--config",
            "wuzi.toml",
            "--rule",
            "freestyle",
            "nothing.tsv",
        ],
        "train does not use --config, --threads, --device",
        "--torch-threads",
    );
    let out = wuzi()
        .args(["--device", "tpu", "bench", "nn", "--seconds", "0.01"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--device") && err.contains("tpu"), "{err}");
}

#[test]
fn bench_search_batches_as_configured_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wuzi.toml");
    std::fs::write(&config, "[search]\nbatch_size = 3\n").unwrap();
    let header = |extra: &[&str]| {
        let mut command = wuzi();
        command
            .args(["--config"])
            .arg(&config)
            .args(["bench", "search", "--seconds", "0.02", "--net", "2x16"])
            .args(extra);
        let text = stdout_of(&mut command);
        text.lines()
            .find(|l| l.starts_with("bench search:"))
            .unwrap_or_else(|| panic!("no header:\n{text}"))
            .to_string()
    };
    assert!(header(&[]).contains(", batch 3,"), "{}", header(&[]));
    let told = header(&["--batches", "5,7"]);
    assert!(told.contains(", batch 5,"), "{told}");
    // "auto": the native kernels' leaves per batch.
    std::fs::write(&config, "[search]\nbatch_size = \"auto\"\n").unwrap();
    assert!(header(&[]).contains(", batch 2,"), "{}", header(&[]));
}

#[test]
fn bench_nn_measures_its_default_batches_without_batches() {
    let text = stdout_of(wuzi().args([
        "bench",
        "nn",
        "--seconds",
        "0.01",
        "--net",
        "2x16",
        "--backend",
        "native",
    ]));
    let batches: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(batches, ["1", "8", "32", "128", "256"], "{text}");
}

#[test]
fn bench_nn_reports_a_broken_network_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.safetensors");
    std::fs::write(&path, b"garbage").unwrap();
    let out = wuzi()
        .args(["bench", "nn", "--network"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("broken.safetensors") && err.contains("not a readable safetensors"),
        "{err}"
    );
}

/// `bench serve` measures an honest game on the game server, quiet and
/// under a flood; the flooders are closed for flooding and come back, so
/// they open more connections than there are flooders.
#[test]
fn bench_serve_times_an_honest_game_under_a_flood() {
    let text = stdout_of(wuzi().args(["bench", "serve", "--flooders", "4"]));
    let line = |label: &str| -> &str {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line: {text}"))
    };
    for phase in ["bench serve: quiet:", "bench serve: 4 flooders:"] {
        let phase_line = line(phase);
        assert!(phase_line.ends_with("(100 moves)"), "{phase_line}");
        let median: f64 = phase_line
            .split("median ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{phase_line}"));
        assert!(median > 0.0, "{phase_line}");
    }
    let flood = line("bench serve: the flooders sent");
    let numbers: Vec<u64> = flood
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (messages, connections) = (numbers[0], numbers[1]);
    assert!(connections > 4, "{flood}");
    // Each connection is closed once it passes the cap of 100 a second, or
    // when the referee's 64 answers to it wait unsent.
    assert!(messages > 64 * (connections - 4), "{flood}");
}

/// `bench arena` is where the match runner's own time per move is measured
/// (a timed test would flake on a shared machine); its figures must be
/// what it says they are: the move loops' time less the engines', per move
/// played, over whole games.
#[test]
fn bench_arena_prints_the_runner_overhead_per_move() {
    let text = stdout_of(wuzi().args(["bench", "arena"]));
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("bench arena:"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in lines {
        // "... 5.4 us per move (1139 moves; move loops 0.020 s, engines 0.014 s)"
        let number_before = |label: &str| -> f64 {
            let head = &line[..line
                .find(label)
                .unwrap_or_else(|| panic!("{label}: {line}"))];
            head.split_whitespace()
                .last()
                .and_then(|w| w.trim_start_matches('(').parse().ok())
                .unwrap_or_else(|| panic!("no number before {label}: {line}"))
        };
        let number_after = |label: &str| -> f64 {
            let tail = &line[line
                .find(label)
                .unwrap_or_else(|| panic!("{label}: {line}"))
                + label.len()..];
            tail.split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("no number after {label}: {line}"))
        };
        let per_move_us = number_before(" us per move");
        let moves = number_before(" moves;");
        let loops = number_after("move loops ");
        let engines = number_after("engines ");
        // 30 games of two random brains from 2 random stones: black needs 4
        // more stones and white at least 3 moves in between, 7 per game.
        assert!(moves >= 30.0 * 7.0, "{line}");
        assert!(loops >= engines, "{line}");
        // The seconds are printed to the millisecond: allow that rounding.
        let overhead_us = (loops - engines) * 1e6;
        assert!(
            (per_move_us * moves - overhead_us).abs() <= 1_000.0 + 0.05 * per_move_us * moves,
            "{line}"
        );
    }
}

/// The CUDA libraries (about 145 MB that tournament managers count as the
/// brain's memory) are mapped only where an NVIDIA driver is: on a machine
/// without one the brain never loads libtorch_cuda.so; with one, the same
/// binary loads it and uses the GPU.
#[test]
fn the_brain_maps_the_cuda_libraries_only_with_a_driver() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let mut child = wuzi()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "START 15").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "OK");
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
    writeln!(stdin, "END").unwrap();
    let _ = child.wait();
    // The libtorch-free build maps no libtorch at all.
    if cfg!(not(feature = "torch")) {
        assert!(
            !maps.contains("libtorch"),
            "libtorch mapped without the torch feature"
        );
        assert!(
            !maps.contains("libc10"),
            "libc10 mapped without the torch feature"
        );
    }
    #[cfg(feature = "torch")]
    check_cuda_maps(&maps);
}

#[cfg(feature = "torch")]
fn check_cuda_maps(maps: &str) {
    let driver = wuzi::nn::device::load_cuda_backend().is_none();
    assert_eq!(
        maps.contains("libtorch_cuda.so"),
        driver,
        "libtorch_cuda.so mapped: {}, NVIDIA driver here: {driver}",
        maps.contains("libtorch_cuda.so")
    );
    if driver && std::path::Path::new("/dev/nvidia0").exists() {
        assert!(
            wuzi::nn::device::cuda_available(),
            "a GPU machine sees CUDA"
        );
    }
}

#[test]
fn bench_matching_prints_the_share_with_its_interval() {
    let text = stdout_of(
        wuzi()
            .args([
                "bench",
                "matching",
                "--positions",
                "3",
                "--seconds",
                "0.05",
                "--data",
            ])
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/games/gomocup2024_freestyle15_2_sample.tsv"
            )),
    );
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("bench matching: ")
            && last.contains(" of 3 = ")
            && last.contains("95% interval"),
        "{text}"
    );
}

/// `--positions-out` writes the measured positions for other engines: each
/// a legal game so far whose played move is an empty cell, and the peer
/// script measures a Gomocup brain (here Wuzi itself) on exactly those.
#[test]
fn bench_matching_writes_its_positions_for_peers() {
    let dir = std::env::temp_dir().join(format!("wuzi-matching-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("positions.tsv");
    let text = stdout_of(
        wuzi()
            .args(["bench", "matching", "--positions", "4", "--data"])
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/games/gomocup2024_freestyle15_2_sample.tsv"
            ))
            .arg("--positions-out")
            .arg(&file),
    );
    assert!(text.contains("4 positions written"), "{text}");
    let written = std::fs::read_to_string(&file).unwrap();
    let rows: Vec<&str> = written.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 4, "{written}");
    let point = |s: &str| {
        let (x, y) = s.split_once(',').unwrap();
        wuzi::game::Point::new(x.parse().unwrap(), y.parse().unwrap()).unwrap()
    };
    for row in &rows {
        let fields: Vec<&str> = row.split('\t').collect();
        assert_eq!(fields[1..3], ["freestyle", "15x15"], "{row}");
        let moves: Vec<_> = fields[3].split_whitespace().map(point).collect();
        let board = wuzi::game::Board::from_moves(
            wuzi::game::BoardSize::square(15).unwrap(),
            wuzi::game::Rule::Freestyle,
            &moves,
        )
        .unwrap();
        assert!(board.outcome().is_none(), "{row}");
        assert!(board.is_empty(point(fields[4])), "{row}");
    }
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/peer_matching.py"
        ))
        .arg(&file)
        .arg(env!("CARGO_BIN_EXE_pbrain-wuzi"))
        .args(["--turn-ms", "100"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("peer matching: ") && stdout.contains(" of 4 = "),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A worker thread the match runner cannot start (here every thread's stack
/// is made too big to map; a huge `--concurrency` can run out of threads)
/// stops the match with an error line, not a panic.
#[test]
fn match_without_worker_threads_fails_with_a_message() {
    let out = wuzi()
        .args([
            "match",
            "--engine1",
            "cmd=no-such-engine-1",
            "--engine2",
            "cmd=no-such-engine-2",
            "--games",
            "2",
            "--concurrency",
            "2",
            "--quiet",
        ])
        .env("RUST_MIN_STACK", (1u64 << 50).to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot start worker thread 1 of 2 (--concurrency)"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Times that no `Duration` holds (`nan`, `inf`, `1e20`) are refused with
/// the option's name, not a panic.
#[test]
fn impossible_times_are_refused_with_a_reason() {
    for args in [
        &["bench", "rules", "--seconds", "nan"][..],
        &["bench", "nn", "--seconds", "inf"],
        &["analyse", "h8", "--time", "nan"],
        &["analyse", "h8", "--time", "1e20"],
        &["serve", "--port", "0", "--time", "inf"],
    ] {
        let out = wuzi().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains("seconds must be a positive number"),
            "{args:?}: {err}"
        );
        let option = args[args.len() - 2];
        assert!(err.contains(option), "{args:?}: {err}");
    }
}

/// Counts that size threads and buffers are refused with the option's name,
/// not clamped in silence nor met with a panic or an allocation failure;
/// a configuration path that never ends is refused once past any
/// configuration's size.
#[test]
fn out_of_range_counts_and_endless_files_are_refused() {
    for (args, named) in [
        (
            &["--threads", "0", "analyse", "h8", "--time", "0.1"][..],
            "--threads",
        ),
        (
            &["--threads", "100000", "analyse", "h8", "--time", "0.1"],
            "--threads",
        ),
        (
            &[
                "selfplay",
                "--out",
                "x.tsv",
                "--eval-batch",
                "18446744073709551615",
            ],
            "--eval-batch",
        ),
        (
            &["selfplay", "--out", "x.tsv", "--parallel", "100000"],
            "--parallel",
        ),
        (
            &["selfplay", "--out", "x.tsv", "--parallel", "0"],
            "--parallel",
        ),
        // Checked before the network loads (none is given here).
        (
            &[
                "--network",
                "none.safetensors",
                "selfplay",
                "--out",
                "x.tsv",
                "--temperature=-1",
            ],
            "--temperature",
        ),
        (
            &["selfplay", "--out", "x.tsv", "--temperature", "nan"],
            "--temperature",
        ),
        (
            &[
                "selfplay",
                "--out",
                "x.tsv",
                "--board",
                "15",
                "--random-stones",
                "200",
            ],
            "--random-stones",
        ),
        (&["bench", "matching", "--positions", "0"], "--positions"),
        // Told, not raised to 1 (or to 10 ms) without a word.
        (&["serve", "--max-connections", "0"], "--max-connections"),
        (&["serve", "--max-per-address", "0"], "--max-per-address"),
        (&["serve", "--ping-interval-ms", "5"], "--ping-interval-ms"),
        // An output that cannot be written is named, before any loading.
        (
            &[
                "bench",
                "matching",
                "--data",
                "no-such-records",
                "--positions-out",
                "/nonexistent/p.tsv",
            ],
            "/nonexistent/p.tsv",
        ),
    ] {
        let out = wuzi().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
    #[cfg(unix)]
    {
        let out = wuzi()
            .args(["--config", "/dev/zero", "analyse", "h8", "--time", "0.1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("/dev/zero") && err.contains("larger than"),
            "{err}"
        );
    }
}

/// scripts/ladder.py: a league played again replaces its own section of
/// the ladder file and keeps the other leagues' (a one-league rerun wiped
/// them) and the rows of peers it did not play when they were measured on
/// the same CPU under the same conditions; an Elo interval is printed
/// with its two ends (it is not symmetric in Elo), as the runner printed
/// them; a binary older than the checkout's commit is not labelled with it.
#[test]
fn ladder_rerun_of_one_league_keeps_the_others() {
    let code = r###"
import sys
sys.path.insert(0, sys.argv[1])
import ladder
before = "# Ladder\n\nintro\n\n## Freestyle 15x15\n\n- old\n| a |\n\n## Renju 15x15\n\n- renju rows\n"
merged = ladder.merged_sections(before, ["## Freestyle 15x15", "", "- new", ""])
print("\n".join(merged))
print(ladder.elo_text({"w": 30, "l": 6, "d": 4, "elo": 241.2, "margin": 137.0, "lower": 136.4, "upper": 410.1}))
print(ladder.elo_text({"w": 10, "l": 10, "d": 1, "elo": -0.04, "margin": 137.0}))
# A rerun against one peer keeps the other peer's row of the league.
old = ["## Standard 15x15", "", "| Wuzi vs | W-L-D |", "|---|---|", "| Pela | 37-2-1 |", "| Rapfi 0.43 | 1-37-2 |", ""]
new = ["## Standard 15x15", "", "| Wuzi vs | W-L-D |", "|---|---|", "| Pela | 38-1-1 |", "", "commands"]
print("\n".join(ladder.merged_sections("\n".join(old), new)))
# Rows of another CPU are not kept under this run's header.
cpu = lambda name: [old[0], "- CPU: " + name] + old[1:]
print("other cpu:", "\n".join(ladder.merged_sections("\n".join(cpu("A")), [new[0], "- CPU: B"] + new[1:])))
import os, tempfile
with tempfile.NamedTemporaryFile() as stale:
    os.utime(stale.name, (0, 0))
    print("stale:", ladder.commit_text(stale.name))
"###;
    let out = Command::new("python3")
        .args(["-c", code, concat!(env!("CARGO_MANIFEST_DIR"), "/scripts")])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("- new") && !stdout.contains("- old"),
        "{stdout}"
    );
    assert!(
        stdout.contains("## Renju 15x15") && stdout.contains("- renju rows"),
        "{stdout}"
    );
    assert!(stdout.contains("+241.2 (+136.4..+410.1)"), "{stdout}");
    assert!(
        stdout.contains("| Pela | 38-1-1 |\n| Rapfi 0.43 | 1-37-2 |")
            && !stdout.contains("37-2-1")
            && stdout.contains("kept from an earlier run")
            && stdout.contains("Rapfi 0.43."),
        "{stdout}"
    );
    let other_cpu = stdout.split("other cpu:").nth(1).unwrap_or("");
    assert!(!other_cpu.contains("1-37-2"), "{stdout}");
    assert!(stdout.contains("stale: unknown"), "{stdout}");
    assert!(
        stdout.contains("+0.0 ± 137.0") && !stdout.contains("-0.0"),
        "{stdout}"
    );
}

/// `--log-dir` logs the GTP engine too (it was read by the Gomocup brain
/// alone): the commands it received are in the file.
#[test]
fn log_dir_logs_a_gtp_session() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = wuzi()
        .args(["--log-dir", dir.path().to_str().unwrap(), "gtp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"name\nboardsize 15\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let logs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].contains("boardsize 15"), "{}", logs[0]);
}

/// `network` describes a file, and with --out writes it in f16 at about
/// half the bytes, which reads back as f16; a broken file or a storage it
/// does not know is refused with a message, writing nothing.
#[test]
fn network_describes_a_file_and_stores_it_in_f16() {
    let dir = tempfile::tempdir().unwrap();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/networks/freestyle-4x32.safetensors"
    );
    let out = dir.path().join("half.safetensors");
    let text = stdout_of(wuzi().args(["network", source, "--out", out.to_str().unwrap()]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains("4x32 network") && lines[0].contains("stored in f32"),
        "{text}"
    );
    assert!(lines[1].contains("stored in f16"), "{text}");
    let (full, half) = (
        std::fs::metadata(source).unwrap().len(),
        std::fs::metadata(&out).unwrap().len(),
    );
    assert!(half < full * 55 / 100, "{half} of {full}");
    let described = stdout_of(wuzi().args(["network", out.to_str().unwrap()]));
    assert_eq!(described.trim(), lines[1], "{described}");
    let broken = dir.path().join("broken.safetensors");
    std::fs::write(&broken, b"not a network").unwrap();
    let never = dir.path().join("never.safetensors");
    for args in [
        vec![
            "network",
            broken.to_str().unwrap(),
            "--out",
            never.to_str().unwrap(),
        ],
        vec![
            "network",
            source,
            "--out",
            never.to_str().unwrap(),
            "--storage",
            "int4",
        ],
        vec!["network", source, "--storage", "f16"],
    ] {
        let run = wuzi().args(&args).output().unwrap();
        assert!(!run.status.success(), "{args:?}");
        assert!(!String::from_utf8_lossy(&run.stderr).is_empty(), "{args:?}");
        assert!(!never.exists(), "{args:?}");
    }
}
