//! `pbrain-wuzi`: the Wuzi engine's command line.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use wuzi::config::Config;
use wuzi::nn::NetConfig;

// mimalloc in place of glibc's malloc, for the whole process: its feature
// `override` also serves libtorch's C++ allocations, which glibc's malloc
// made a tenth of the evaluator's time (perf: _int_malloc, _int_free,
// malloc_consolidate), even with the thresholds raised in nn::device.
// Declared as Rust's allocator too so that the library is always linked.
// Not on windows-gnu (see Cargo.toml): the system allocator there.
#[cfg(not(all(windows, target_env = "gnu")))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Wuzi, a gomoku and renju engine: a Gomocup brain.
///
/// Without a subcommand it speaks the Gomocup protocol (with the extended
/// Gomocup and Yixin-Board commands) on stdin/stdout, as Piskvork, the
/// Gomocup tournament tools, c-gomoku-cli and Yixin-Board expect.
///
/// Settings come from config/wuzi.toml (see --config); the flags below
/// override it.
#[derive(Parser)]
#[command(name = "pbrain-wuzi", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Configuration file (default: wuzi.toml or config/wuzi.toml beside the
    /// binary or the project, then ./config/wuzi.toml).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Search threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Network device: cpu, auto, cuda or cuda:N.
    #[arg(long)]
    device: Option<String>,
    /// Write a log file per START into this folder.
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Network file for every rule and precision (instead of the configured
    /// ones).
    #[arg(long)]
    network: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Prints speed figures of one part of the engine.
    Bench(BenchArgs),
    /// Analyses a position or reviews a game (moves, PSQ, SGF, TSV or stdin).
    Analyse(wuzi::analyse::AnalyseArgs),
    /// Trains a network from game records (Gomocup TSV, PSQ).
    #[cfg(feature = "torch")]
    Train(wuzi::train::TrainArgs),
    /// Plays a match between two Gomocup brains (Elo, LOS, SPRT, records).
    Match(wuzi::arena::MatchArgs),
    /// Plays the engine against itself and writes the games as training
    /// records (the configured network of the rule, or --network).
    Selfplay(wuzi::selfplay::SelfplayArgs),
    /// Speaks GTP version 2 on stdin/stdout (gomoku conventions of
    /// KataGomo; lz-analyze and kata-analyze for Lizzie and LizzieYzy).
    Gtp,
    /// Answers one move of the old file protocol: reads PLOCHA.DAT, TAH.DAT,
    /// TIMEOUTS.DAT and INFO.DAT in DIR, writes the move into TAH.DAT and a
    /// line into MSG.DAT, and exits (non-zero, with the reason in MSG.DAT,
    /// when a file is missing or malformed). A copy or link of this program
    /// named wuzi-files does this in the current folder without arguments,
    /// as managers of that protocol start their brains.
    Files {
        /// The folder of the files (default: the current one).
        dir: Option<PathBuf>,
    },
    /// Runs a game server of the WebSocket game protocol: clients connect
    /// to ws://HOST:PORT/ and the first two named ones are paired; the
    /// board referees; a plain GET / on the same port is a page.
    Serve(ServeArgs),
    /// Plays on a WebSocket game server as NAME, the engine choosing the
    /// moves; reconnects when the connection drops.
    Connect {
        /// ws://HOST:PORT/
        url: String,
        #[arg(long, default_value = "wuzi")]
        name: String,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (0.0.0.0: every interface).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Rule (freestyle, standard, renju, caro).
    #[arg(long, default_value = "freestyle")]
    rule: wuzi::game::Rule,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    board: u32,
    /// Each player's time for a game, in seconds.
    #[arg(long, default_value_t = 300.0, value_parser = wuzi::cli::parse_seconds)]
    time: f64,
    /// Heartbeat: a ping every this many milliseconds; a client that has
    /// not answered the previous ping is disconnected.
    #[arg(long, default_value_t = 10_000)]
    ping_interval_ms: u64,
    /// Start a game as soon as two named clients wait (without it, the web
    /// board's Start button starts games).
    #[arg(long)]
    pair: bool,
    /// How long an interrupted game waits for both players to come back,
    /// in seconds.
    #[arg(long, default_value_t = 600)]
    resume_window_s: u64,
    /// Connections open at once; more are refused (503).
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// Connections open at once from one remote address (this machine's
    /// own clients count only toward --max-connections).
    #[arg(long, default_value_t = 16)]
    max_per_address: usize,
    /// An origin that browsers may connect from besides the server's own
    /// page, as browsers send it (`http://example.org:8080`); repeatable.
    #[arg(long = "allow-origin")]
    allow_origins: Vec<String>,
    /// A shared secret that players and web boards must give in the URL
    /// (`ws://HOST:PORT/?token=SECRET`, the page `http://HOST:PORT/?token=SECRET`).
    #[arg(long)]
    token: Option<String>,
}

/// `pbrain-wuzi serve`: runs until the process is stopped.
fn serve(args: &ServeArgs) -> io::Result<()> {
    use wuzi::ws::{Server, ServerConfig};
    let size =
        wuzi::game::BoardSize::square(args.board).map_err(|e| io::Error::other(e.to_string()))?;
    // The parser (cli::parse_seconds) refused nan, inf and non-positive
    // times; a game server also takes no clock of 1e7 seconds or more.
    if args.time >= 1e7 {
        return Err(io::Error::other(
            "--time must be less than 10000000 seconds",
        ));
    }
    let listener = std::net::TcpListener::bind((args.host.as_str(), args.port)).map_err(|e| {
        io::Error::other(format!("cannot listen on {}:{}: {e}", args.host, args.port))
    })?;
    // The token travels in URLs as it is (it is not percent-decoded).
    if let Some(token) = &args.token {
        if token.is_empty()
            || !token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        {
            return Err(io::Error::other(
                "--token: use letters, digits and - . _ ~ only (it goes into URLs as it is)",
            ));
        }
    }
    let config = ServerConfig {
        size,
        rule: args.rule,
        time: Duration::from_secs_f64(args.time),
        ping_interval: Duration::from_millis(args.ping_interval_ms.max(10)),
        auto_pair: args.pair,
        resume_window: Duration::from_secs(args.resume_window_s),
        max_connections: args.max_connections.max(1),
        max_per_address: args.max_per_address.max(1),
        allowed_origins: args.allow_origins.clone(),
        token: args.token.clone(),
        ..ServerConfig::default()
    };
    // The referee's events (clients, games, results) on stderr.
    let _ = tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_target(false)
        .try_init();
    let server = Server::spawn(listener, config, wuzi::ws::PAGE)?;
    eprintln!(
        "serving {} {size} games on ws://{}/ (the page: http://{}/)",
        args.rule, server.address, server.address
    );
    loop {
        std::thread::park();
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Which part to measure.
    #[arg(value_enum)]
    part: BenchPart,
    /// Seconds spent on each figure.
    #[arg(long, default_value_t = 1.0, value_parser = wuzi::cli::parse_seconds)]
    seconds: f64,
    /// nn: a network file to measure (default: random weights of --net's size).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// nn: network size BLOCKSxCHANNELS when no --weights are given.
    #[arg(long, default_value = "4x32")]
    net: NetConfig,
    /// nn, search: the backend to measure (native, torch); nn without it:
    /// every backend built in, side by side, and the one `auto` chooses;
    /// search without it: native.
    #[arg(long, value_parser = parse_backend)]
    backend: Option<wuzi::nn::Backend>,
    /// nn, search: the native kernels' instruction set (auto, avx512, avx2,
    /// portable); one this CPU lacks is replaced by its widest.
    #[arg(long, value_parser = parse_isa)]
    isa: Option<wuzi::nn::Isa>,
    /// nn: device (cpu, auto, cuda, cuda:N); falls back to the CPU with a note.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// nn: libtorch CPU threads (per evaluator).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// nn, search: evaluator threads of the service (default: 1 for nn; for
    /// search, as many as the search threads, as the engine's `auto`).
    #[arg(long)]
    evaluators: Option<usize>,
    /// nn: board side.
    #[arg(long, default_value_t = 15)]
    board: u32,
    /// nn: batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,128,256")]
    batches: Vec<usize>,
    /// nn, search: inference precision of the service (auto, fp32, bf16, half).
    #[arg(long, default_value = "auto")]
    precision: wuzi::nn::PrecisionSetting,
    /// blunders: the suite's fixture file.
    #[arg(long, default_value = "tests/fixtures/blunders/freestyle15.tsv")]
    fixture: PathBuf,
    /// blunders: playouts per position.
    #[arg(long, default_value_t = 400)]
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
    #[arg(long, default_value_t = 500)]
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
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchPart {
    /// Board make/unmake, forbidden-point scans, VCF/VCT solver.
    Rules,
    /// Network forward passes against the batched evaluation service.
    Nn,
    /// Search speed against the evaluation service (first --batches value;
    /// the [search] settings of --config).
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
}

/// `bench blunders` with the configured networks (no symmetry, so that the
/// search is deterministic).
fn bench_blunders(cli: &Cli, args: &BenchArgs) -> io::Result<()> {
    use std::collections::HashMap;
    use std::sync::Arc;
    use wuzi::bench::blunders;
    let mut config = configure(cli).map_err(io::Error::other)?;
    config.network.symmetry = "none".to_string();
    let text = std::fs::read_to_string(&args.fixture)
        .map_err(|e| io::Error::other(format!("{}: {e}", args.fixture.display())))?;
    let positions = blunders::parse(&text).map_err(io::Error::other)?;
    let reference = args
        .reference
        .as_deref()
        .map(|words| {
            let words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
            wuzi::arena::parse_engine(&[], &words)
        })
        .transpose()
        .map_err(|e| io::Error::other(format!("--reference: {e}")))?;
    let reach = blunders::solver_reach(&positions).map_err(io::Error::other)?;
    blunders::print_reach(&reach, positions.len(), &mut io::stdout().lock())?;
    let mut provider = wuzi::nn::provider::NetworkProvider::new(&config.network);
    let search = blunders::suite_config(&config.search_config());
    let mut searchers = HashMap::new();
    let summary = blunders::evaluate(
        &positions,
        |rule| {
            if let Some(searcher) = searchers.get(&rule) {
                return Ok(Arc::clone(searcher));
            }
            let (service, note) = provider.service_for(rule)?;
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            let searcher = Arc::new(wuzi::search::Searcher::new(service, search.clone()));
            searchers.insert(rule, Arc::clone(&searcher));
            Ok(searcher)
        },
        args.playouts,
        reference.as_ref(),
    )
    .map_err(io::Error::other)?;
    blunders::print(&summary, args.playouts, &mut io::stdout().lock())
}

/// The configured network of `rule` behind an evaluation service, saying
/// on stderr when the device had to change; the note says why the network
/// could not be used (the service then evaluates uniformly, where
/// `network.tactics_only_fallback` allows it; otherwise this fails).
fn network_service(
    config: &Config,
    rule: wuzi::game::Rule,
) -> io::Result<(std::sync::Arc<wuzi::nn::EvalService>, Option<String>)> {
    let mut provider = wuzi::nn::provider::NetworkProvider::new(&config.network);
    if let Some(note) = &provider.device_note {
        eprintln!("note: {note}");
    }
    provider.service_for(rule).map_err(io::Error::other)
}

/// `analyse` with the configured network of the game's rule.
fn analyse(cli: &Cli, args: &wuzi::analyse::AnalyseArgs) -> io::Result<()> {
    let config = configure(cli).map_err(io::Error::other)?;
    let text = wuzi::analyse::run(args, |rule| {
        let (service, note) = network_service(&config, rule).map_err(|e| e.to_string())?;
        if let Some(note) = note {
            eprintln!("note: {note}");
        }
        Ok(wuzi::search::Searcher::new(service, config.search_config()))
    })
    .map_err(io::Error::other)?;
    io::stdout().write_all(text.as_bytes())
}

/// `bench matching` with the configured freestyle network, or, with
/// `--positions-out`, only the positions it measures (no network loaded).
fn bench_matching(cli: &Cli, args: &BenchArgs) -> io::Result<()> {
    let rule = wuzi::game::Rule::Freestyle;
    let options = wuzi::bench::matching::MatchingOptions {
        data: args.data.clone(),
        rule,
        positions: args.positions,
        seconds: args.seconds,
        seed: args.seed,
        val_fraction: 0.05,
    };
    if let Some(path) = &args.positions_out {
        return wuzi::bench::matching::write_positions(&options, path, &mut io::stdout().lock())
            .map(|_| ());
    }
    let config = configure(cli).map_err(io::Error::other)?;
    let (service, note) = network_service(&config, rule)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let searcher = wuzi::search::Searcher::new(service, config.search_config());
    wuzi::bench::matching::run(&searcher, &options, &mut io::stdout().lock()).map(|_| ())
}

/// `selfplay` with the configured network of the rule.
fn selfplay(cli: &Cli, args: &wuzi::selfplay::SelfplayArgs) -> io::Result<()> {
    let mut config = configure(cli).map_err(io::Error::other)?;
    if let Some(batch) = args.eval_batch {
        config.network.batch_size = batch.max(1);
    }
    let (service, note) = network_service(&config, args.rule)?;
    if let Some(note) = note {
        // Self-play without the network would write worthless targets.
        return Err(io::Error::other(note));
    }
    let player = config
        .network
        .network_for(args.rule)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "wuzi".to_string());
    wuzi::selfplay::run(
        args,
        service,
        config.search_config(),
        &player,
        &mut io::stderr(),
    )
    .map(|_| ())
    .map_err(io::Error::other)
}

/// Runner overhead per move, with the test brain built beside this binary.
fn bench_arena() -> io::Result<()> {
    let brain = std::env::current_exe()?.with_file_name("wuzi-test-brain");
    if !brain.is_file() {
        return Err(io::Error::other(format!(
            "{} not found: build it with cargo build --release --bins",
            brain.display()
        )));
    }
    for (rule, logs) in [
        (wuzi::game::Rule::Freestyle, false),
        (wuzi::game::Rule::Renju, true),
    ] {
        let dir = std::env::temp_dir().join(format!("wuzi-bench-arena-{}", std::process::id()));
        let log_dir = logs.then_some(dir.as_path());
        let overhead =
            wuzi::arena::bench_overhead(&brain, &["--mode", "random"], 30, 15, rule, log_dir)
                .map_err(io::Error::other)?;
        println!(
            "bench arena: {rule}, 30 games, {}: {overhead}",
            if logs { "with logs" } else { "no logs" }
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// `--isa`: an instruction set, or auto for the widest this CPU has.
fn parse_isa(s: &str) -> Result<wuzi::nn::Isa, String> {
    Ok(wuzi::nn::native::simd::resolve_isa(
        wuzi::nn::native::simd::parse_isa_setting(s)?,
    ))
}

/// `--backend`: native or torch (the latter only in builds with libtorch).
fn parse_backend(s: &str) -> Result<wuzi::nn::Backend, String> {
    match s.parse::<wuzi::nn::BackendSetting>()? {
        wuzi::nn::BackendSetting::Fixed(backend) => Ok(backend),
        wuzi::nn::BackendSetting::Auto => Err("expected native or torch".into()),
    }
}

/// The configuration file, with the command-line overrides.
fn configure(cli: &Cli) -> Result<Config, String> {
    let (mut config, _) = Config::locate(cli.config.as_deref())?;
    if let Some(threads) = cli.threads {
        config.engine.threads = threads.max(1);
    }
    if let Some(device) = &cli.device {
        wuzi::nn::backend::check_device_name(device)?;
        config.network.device = device.clone();
    }
    if let Some(dir) = &cli.log_dir {
        config.log.enabled = true;
        config.log.dir = dir.clone();
    }
    if let Some(network) = &cli.network {
        config.network.freestyle = network.clone();
        config.network.standard = network.clone();
        config.network.renju = network.clone();
        config.network.caro = network.clone();
        // The one network in every precision: a CPU without bf16 would
        // otherwise play the configured smaller fp32 networks instead.
        for fp32 in [
            &mut config.network.freestyle_fp32,
            &mut config.network.standard_fp32,
            &mut config.network.renju_fp32,
            &mut config.network.caro_fp32,
        ] {
            *fp32 = PathBuf::new();
        }
    }
    Ok(config)
}

/// The name under which this program answers the old file protocol in the
/// current folder (managers of that protocol give a brain no arguments).
const FILES_NAME: &str = "wuzi-files";

/// `pbrain-wuzi files DIR`: one move of the old file protocol.
fn files_protocol(cli: &Cli, dir: &std::path::Path, started: std::time::Instant) -> ExitCode {
    let outcome = configure(cli)
        .and_then(|config| wuzi::protocol::files::run(config, dir, started).map_err(Into::into));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The manager reads MSG.DAT (written by run, or here when the
            // configuration failed before it); a person reads stderr.
            let _ = std::fs::write(dir.join("MSG.DAT"), format!("{e}\n"));
            eprintln!("pbrain-wuzi files: {e}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let started = std::time::Instant::now();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let invoked_for_files = args.first().is_some_and(|name| {
        std::path::Path::new(name)
            .file_stem()
            .is_some_and(|stem| stem.to_string_lossy() == FILES_NAME)
    });
    if invoked_for_files {
        args.push("files".into());
    }
    let cli = Cli::parse_from(args);
    let result = match &cli.command {
        Some(Command::Bench(args)) => {
            let per_item = Duration::from_secs_f64(args.seconds.clamp(0.01, 600.0));
            match args.part {
                BenchPart::Rules => wuzi::bench::rules::run(per_item, &mut io::stdout().lock()),
                BenchPart::Arena => bench_arena(),
                BenchPart::Blunders => bench_blunders(&cli, args),
                BenchPart::Matching => bench_matching(&cli, args),
                BenchPart::Nn | BenchPart::Search => {
                    let options = wuzi::bench::nn::NnBenchOptions {
                        weights: args.weights.clone(),
                        net: args.net,
                        backend: args.backend,
                        isa: args.isa,
                        device: args.device.clone(),
                        threads: args.threads,
                        evaluators: args.evaluators,
                        board_side: args.board,
                        batch_sizes: args.batches.clone(),
                        per_item,
                        precision: args.precision,
                    };
                    if matches!(args.part, BenchPart::Nn) {
                        wuzi::bench::nn::run(&options, &mut io::stdout().lock())
                    } else {
                        // The engine's own search settings (solver budgets,
                        // c_puct...), so that a configuration can be measured.
                        match configure(&cli) {
                            Ok(config) => wuzi::bench::search::run(
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
        Some(Command::Analyse(args)) => analyse(&cli, args),
        #[cfg(feature = "torch")]
        Some(Command::Train(args)) => wuzi::train::run(args).map(|_| ()).map_err(io::Error::other),
        Some(Command::Match(args)) => wuzi::arena::run(args).map(|_| ()).map_err(io::Error::other),
        Some(Command::Selfplay(args)) => selfplay(&cli, args),
        Some(Command::Files { dir }) => {
            let dir = dir.clone().unwrap_or_else(|| PathBuf::from("."));
            return files_protocol(&cli, &dir, started);
        }
        Some(Command::Serve(args)) => serve(args),
        Some(Command::Connect { url, name }) => match configure(&cli) {
            Ok(config) => {
                wuzi::protocol::ws_client::run(config, url, name).map_err(io::Error::other)
            }
            Err(e) => Err(io::Error::other(e)),
        },
        Some(Command::Gtp) => {
            let config = match configure(&cli) {
                Ok(config) => config,
                Err(e) => {
                    // A GTP controller reads responses only: say it on stderr.
                    eprintln!("pbrain-wuzi: {e}");
                    return ExitCode::from(2);
                }
            };
            wuzi::protocol::run_gtp(config, io::BufReader::new(io::stdin()), io::stdout());
            Ok(())
        }
        None => {
            let config = match configure(&cli) {
                Ok(config) => config,
                Err(e) => {
                    // The manager reads stdout: say it there too, as an ERROR line.
                    println!("ERROR {e}");
                    eprintln!("pbrain-wuzi: {e}");
                    return ExitCode::from(2);
                }
            };
            wuzi::protocol::run(config, io::BufReader::new(io::stdin()), io::stdout());
            Ok(())
        }
    };
    match result.and_then(|()| io::stdout().flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pbrain-wuzi: {e}");
            ExitCode::FAILURE
        }
    }
}
