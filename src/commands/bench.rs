//! `pbrain-wuzi bench`: the figures of one part of the engine.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::{configure, network_service, Cli};
use crate::nn::NetConfig;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Which part to measure.
    #[arg(value_enum)]
    part: BenchPart,
    /// Seconds spent on each figure (at most 600).
    #[arg(long, default_value_t = 1.0, value_parser = parse_bench_seconds)]
    seconds: f64,
    /// nn, search: network size BLOCKSxCHANNELS of the random weights
    /// measured without --network.
    #[arg(long, default_value = "4x32")]
    net: NetConfig,
    /// nn, search: the backend to measure (native, torch); nn without it:
    /// every backend built in, side by side, and the one `auto` chooses;
    /// search without it: native.
    #[arg(long, value_parser = parse_backend)]
    backend: Option<crate::nn::Backend>,
    /// nn, search: the native kernels' instruction set (auto, avx512, avx2,
    /// portable); one this CPU lacks is replaced by its widest.
    #[arg(long, value_parser = parse_isa)]
    isa: Option<crate::nn::Isa>,
    /// nn, search: libtorch CPU threads per evaluator (the engine's
    /// `network.torch_threads`).
    #[arg(long, default_value_t = 1, value_parser = crate::cli::count_at_most(crate::search::MAX_THREADS))]
    torch_threads: usize,
    /// nn, search: evaluator threads of the service (default: 1 for nn; for
    /// search, as many as the search threads, as the engine's `auto`).
    #[arg(long, value_parser = crate::cli::count_at_most(crate::search::MAX_THREADS))]
    evaluators: Option<usize>,
    /// nn: board side.
    #[arg(long, default_value_t = 15)]
    board: u32,
    /// nn: batch sizes, comma-separated (default 1,8,32,128,256); search:
    /// the leaves per batch of a search thread, the first value (default:
    /// `[search] batch_size` of --config for the backend measured).
    #[arg(long, value_delimiter = ',', value_parser = crate::cli::count_at_most(crate::search::MAX_SETTING_COUNT))]
    batches: Option<Vec<usize>>,
    /// nn, search: inference precision of the service (auto, fp32, bf16, int16, half).
    #[arg(long, default_value = "auto")]
    precision: crate::nn::PrecisionSetting,
    /// blunders: the suite's fixture file.
    #[arg(long, default_value = "tests/fixtures/blunders/freestyle15.tsv")]
    fixture: PathBuf,
    /// blunders: playouts per position.
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..))]
    playouts: u64,
    /// blunders: a reference brain that judges each move played too, as
    /// match runner engine settings (`cmd=PATH tc=0/5 threads=2`: 5 s per
    /// move; `turn=` counts milliseconds): after
    /// the move, does it announce a forced win?
    #[arg(long)]
    reference: Option<String>,
    /// matching: a Gomocup TSV of games (its validation games are used).
    #[arg(
        long,
        default_value = "../shared/data/gomocup_games/gomocup2024_freestyle15_2.tsv"
    )]
    data: PathBuf,
    /// matching: positions measured (spread over the validation games).
    #[arg(long, default_value_t = 500, value_parser = crate::cli::count_at_most(usize::MAX))]
    positions: usize,
    /// matching: the split of `pbrain-wuzi train` (its --split-seed, or its
    /// --seed without one; fraction 0.05).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// matching: write the positions (TSV) to this file instead of
    /// measuring, to measure another engine on them
    /// (`scripts/peer_matching.py`).
    #[arg(long)]
    positions_out: Option<PathBuf>,
    /// serve: clients flooding the server, each reconnecting whenever it
    /// is closed for it (default: as many as one address may hold).
    #[arg(long, default_value_t = 16)]
    flooders: usize,
}

/// `bench nn`'s batch sizes without `--batches`.
const NN_BATCHES: [usize; 5] = [1, 8, 32, 128, 256];

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum BenchPart {
    /// Board make/unmake, forbidden-point scans, VCF/VCT solver.
    Rules,
    /// Network forward passes against the batched evaluation service.
    Nn,
    /// Search speed against the evaluation service (the [search] settings
    /// of --config; --batches overrides its batch size).
    Search,
    /// The match runner's own time per move, between two instant test brains.
    Arena,
    /// Move matching: share of held-out positions of a game file where the
    /// engine's move is the one played (--data, --positions, --seconds per
    /// position; configured freestyle network).
    Matching,
    /// The blunder suite: share of positions where the move played is not
    /// refuted by the solver (--fixture, --playouts; configured networks).
    Blunders,
    /// The game server (`serve`): an honest game's time per move, quiet and
    /// while --flooders clients flood the server with messages.
    Serve,
}

impl BenchPart {
    /// The part as the command line names it.
    fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |value| value.get_name().to_string())
    }
}

/// `bench blunders` with the configured networks (no symmetry, so that the
/// search is deterministic).
pub(crate) fn bench_blunders(cli: &Cli, args: &BenchArgs) -> io::Result<()> {
    use crate::bench::blunders;
    use std::collections::HashMap;
    use std::sync::Arc;
    let mut config = configure(cli).map_err(io::Error::other)?;
    config.network.symmetry = "none".to_string();
    let text = crate::bounded_read::read_file_text(&args.fixture, blunders::MAX_FIXTURE_BYTES)
        .map_err(|e| io::Error::other(format!("{}: {e}", args.fixture.display())))?;
    let positions = blunders::parse(&text).map_err(io::Error::other)?;
    let reference = args
        .reference
        .as_deref()
        .map(|words| {
            let words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
            crate::arena::parse_engine(&[], &words)
        })
        .transpose()
        .map_err(|e| io::Error::other(format!("--reference: {e}")))?;
    let reach = blunders::solver_reach(&positions).map_err(io::Error::other)?;
    blunders::print_reach(&reach, positions.len(), &mut io::stdout().lock())?;
    let mut provider = crate::nn::provider::NetworkProvider::new(&config.network);
    let search = blunders::suite_config(&config.search_config());
    let mut searchers = HashMap::new();
    let summary = blunders::evaluate(
        &positions,
        |rule, size| {
            if let Some(searcher) = searchers.get(&(rule, size)) {
                return Ok(Arc::clone(searcher));
            }
            let (service, note) = provider.service_for(rule, size)?;
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            let searcher = Arc::new(crate::search::Searcher::new(service, search.clone()));
            searchers.insert((rule, size), Arc::clone(&searcher));
            Ok(searcher)
        },
        args.playouts,
        reference.as_ref(),
    )
    .map_err(io::Error::other)?;
    blunders::print(&summary, args.playouts, &mut io::stdout().lock())
}

/// Whether `part` reads the `bench` flag `flag` (as clap names its field).
fn reads(part: BenchPart, flag: &str) -> bool {
    // What nn and search both measure: the network, its service, the time.
    const SERVICE: [&str; 8] = [
        "seconds",
        "net",
        "backend",
        "isa",
        "torch_threads",
        "evaluators",
        "batches",
        "precision",
    ];
    match part {
        BenchPart::Rules => flag == "seconds",
        BenchPart::Arena => false,
        BenchPart::Serve => flag == "flooders",
        BenchPart::Nn => flag == "board" || SERVICE.contains(&flag),
        BenchPart::Search => SERVICE.contains(&flag),
        BenchPart::Matching => {
            ["seconds", "data", "positions", "seed", "positions_out"].contains(&flag)
        }
        BenchPart::Blunders => ["fixture", "playouts", "reference"].contains(&flag),
    }
}

/// Runs `bench PART`; `given` are the bench flags given on the command
/// line (a flag the part does not read is refused: its figure would not
/// be the one asked for).
pub(crate) fn run(cli: &Cli, args: &BenchArgs, given: &[String]) -> io::Result<()> {
    let flags = <BenchArgs as Args>::augment_args(clap::Command::new("bench"));
    let is_flag = |id: &str| {
        flags
            .get_arguments()
            .any(|a| a.get_id() == id && a.get_long().is_some())
    };
    let unused: Vec<String> = given
        .iter()
        .filter(|id| is_flag(id) && !reads(args.part, id))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !unused.is_empty() {
        return Err(io::Error::other(format!(
            "bench {} does not use {}",
            args.part.name(),
            unused.join(", ")
        )));
    }

    let per_item = Duration::from_secs_f64(args.seconds.max(0.01));
    // The engine's flags each part uses; the others are refused.
    let (allowed, hint): (&[&str], &str) = match args.part {
        BenchPart::Rules | BenchPart::Arena | BenchPart::Serve => {
            (&[], "this part measures no network or search")
        }
        BenchPart::Nn => (
            &["--network", "--device"],
            "--torch-threads sets libtorch's threads per evaluator, --evaluators the evaluator \
             threads",
        ),
        BenchPart::Search => (
            &["--network", "--device", "--config"],
            "it measures 1 and 2 search threads; --torch-threads sets libtorch's threads per \
             evaluator, --evaluators the evaluator threads",
        ),
        BenchPart::Matching => (
            &["--config", "--threads", "--device", "--network"],
            "it writes no game logs",
        ),
        // The suite's searches run on one thread, whatever --threads says.
        BenchPart::Blunders => (
            &["--config", "--device", "--network"],
            "it searches with one thread and writes no game logs",
        ),
    };
    super::refuse_unused_flags(cli, allowed, &format!("bench {}", args.part.name()), hint)?;
    match args.part {
        BenchPart::Rules => crate::bench::rules::run(per_item, &mut io::stdout().lock()),
        BenchPart::Arena => bench_arena(),
        BenchPart::Blunders => bench_blunders(cli, args),
        BenchPart::Serve => {
            // No more flooders than the server holds connections.
            let flooders = args
                .flooders
                .min(wuzi_arena::ws::ServerConfig::default().max_connections);
            let report = wuzi_arena::ws::flood::measure(flooders, 100).map_err(io::Error::other)?;
            writeln!(io::stdout().lock(), "{report}")
        }
        BenchPart::Matching => bench_matching(cli, args),
        BenchPart::Nn | BenchPart::Search => {
            // The CPU without --device: figures of one machine stay
            // comparable whether or not it has a GPU.
            let device = super::device_flag(cli)
                .map_err(io::Error::other)?
                .unwrap_or_else(|| "cpu".to_string());
            let options = crate::bench::nn::NnBenchOptions {
                network: cli.network.clone(),
                net: args.net,
                backend: args.backend,
                isa: args.isa,
                device,
                torch_threads: args.torch_threads,
                evaluators: args.evaluators,
                board_side: args.board,
                batch_sizes: match (&args.batches, args.part) {
                    (Some(given), _) => given.clone(),
                    (None, BenchPart::Nn) => NN_BATCHES.to_vec(),
                    (None, _) => Vec::new(),
                },
                per_item,
                precision: args.precision,
            };
            if matches!(args.part, BenchPart::Nn) {
                crate::bench::nn::run(&options, &mut io::stdout().lock())
            } else {
                // The engine's own search settings (solver budgets,
                // c_puct...), so that a configuration can be measured.
                match configure(cli) {
                    Ok(config) => crate::bench::search::run(
                        &options,
                        &config.search_config(),
                        &mut io::stdout().lock(),
                    ),
                    Err(e) => Err(io::Error::other(e)),
                }
            }
        }
    }
}

/// `bench matching` with the configured freestyle network, or, with
/// `--positions-out`, only the positions it measures (no network loaded).
fn bench_matching(cli: &Cli, args: &BenchArgs) -> io::Result<()> {
    let rule = crate::game::Rule::Freestyle;
    let options = crate::bench::matching::MatchingOptions {
        data: args.data.clone(),
        rule,
        positions: args.positions,
        seconds: args.seconds,
        seed: args.seed,
        val_fraction: 0.05,
    };
    if let Some(path) = &args.positions_out {
        return crate::bench::matching::write_positions(&options, path, &mut io::stdout().lock())
            .map(|_| ());
    }
    let config = configure(cli).map_err(io::Error::other)?;
    // The positions are of every size; the network of 15x15 measures them.
    let (service, note) = network_service(&config, rule, crate::game::BoardSize::FIFTEEN)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let searcher = crate::search::Searcher::new(service, config.search_config());
    crate::bench::matching::run(&searcher, &options, &mut io::stdout().lock()).map(|_| ())
}

/// Runner overhead per move, with the test brain built beside this binary.
fn bench_arena() -> io::Result<()> {
    let brain = std::env::current_exe()?.with_file_name("wuzi-test-brain");
    if !brain.is_file() {
        return Err(io::Error::other(format!(
            "{} not found: build it with cargo build --release -p wuzi-arena --bins",
            brain.display()
        )));
    }
    for (rule, logs) in [
        (crate::game::Rule::Freestyle, false),
        (crate::game::Rule::Renju, true),
    ] {
        let dir = std::env::temp_dir().join(format!("wuzi-bench-arena-{}", std::process::id()));
        let log_dir = logs.then_some(dir.as_path());
        let overhead =
            crate::arena::bench_overhead(&brain, &["--mode", "random"], 30, 15, rule, log_dir)
                .map_err(io::Error::other)?;
        writeln!(
            io::stdout().lock(),
            "bench arena: {rule}, 30 games, {}: {overhead}",
            if logs { "with logs" } else { "no logs" }
        )?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// `--isa`: an instruction set, or auto for the widest this CPU has.
fn parse_isa(s: &str) -> Result<crate::nn::Isa, String> {
    Ok(crate::nn::native::simd::resolve_isa(
        crate::nn::native::simd::parse_isa_setting(s)?,
    ))
}

/// `--backend`: native or torch (the latter only in builds with libtorch).
fn parse_backend(s: &str) -> Result<crate::nn::Backend, String> {
    match s.parse::<crate::nn::BackendSetting>()? {
        crate::nn::BackendSetting::Fixed(backend) => Ok(backend),
        crate::nn::BackendSetting::Auto => Err("expected native or torch".into()),
    }
}

/// `--seconds` of a figure: a positive number, at most ten minutes (it was
/// cut to ten minutes without a word).
fn parse_bench_seconds(s: &str) -> Result<f64, String> {
    let seconds = crate::cli::parse_seconds(s)?;
    if seconds > 600.0 {
        return Err(format!("{s:?}: at most 600 seconds per figure"));
    }
    Ok(seconds)
}
