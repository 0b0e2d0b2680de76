//! The `pbrain-wuzi` command line: the global options, the subcommands and
//! how each starts. Each subcommand with more than a few lines of set-up
//! has a module here; the work itself is in the library's modules.

mod bench;
mod network;
mod play;
mod serve;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{Config, ConfigError};

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
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Configuration file (default: wuzi.toml or config/wuzi.toml beside the
    /// binary or the project, then ./config/wuzi.toml).
    #[arg(long, global = true)]
    pub(crate) config: Option<PathBuf>,
    /// Search threads (refused where they would have no effect: train,
    /// match, serve, selfplay (one thread a game, --parallel games), bench
    /// except matching).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Network device: cpu, auto, cuda or cuda:N (bench nn and search: cpu
    /// without it; train takes its own after `train`).
    #[arg(long)]
    pub(crate) device: Option<String>,
    /// Write a log file per START into this folder.
    #[arg(long)]
    pub(crate) log_dir: Option<PathBuf>,
    /// Network file for every rule and precision (instead of the configured
    /// ones); bench nn and search: the network measured.
    #[arg(long, global = true)]
    pub(crate) network: Option<PathBuf>,
    /// Yixin-Board starts its engine with this on Windows (asking for UTF-8
    /// output, which is all this engine writes); accepted and ignored, so
    /// that the GUI can load the brain.
    #[arg(long, hide = true)]
    #[allow(dead_code)]
    force_utf8: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Prints speed figures of one part of the engine.
    Bench(bench::BenchArgs),
    /// Analyses a position or reviews a game (moves, PSQ, SGF, TSV or stdin).
    Analyse(crate::analyse::AnalyseArgs),
    /// Trains a network from game records (Gomocup TSV, PSQ).
    #[cfg(feature = "torch")]
    Train(crate::train::TrainArgs),
    /// Plays a match between two Gomocup brains (Elo, LOS, SPRT, records).
    Match(crate::arena::MatchArgs),
    /// Plays the engine against itself and writes the games as training
    /// records (the configured network of the rule, or --network).
    Selfplay(crate::selfplay::SelfplayArgs),
    /// Prints what a network file holds (size, parameters, storage), and
    /// with --out writes it again in another storage (f16: half the bytes,
    /// as the packages ship their networks).
    Network(network::NetworkArgs),
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
    Serve(serve::ServeArgs),
    /// Plays on a WebSocket game server as NAME, the engine choosing the
    /// moves; reconnects when the connection drops.
    Connect {
        /// ws://HOST:PORT/
        url: String,
        #[arg(long, default_value = "wuzi")]
        name: String,
    },
}

/// `--device`, checked.
pub(crate) fn device_flag(
    cli: &Cli,
) -> Result<Option<String>, crate::nn::settings::InvalidSetting> {
    cli.device
        .as_ref()
        .map(|device| {
            crate::nn::backend::check_device_name(device)
                .map(|()| device.clone())
                .map_err(|why| crate::nn::settings::InvalidSetting::new("--device", why))
        })
        .transpose()
}

/// The configuration file, with the command-line overrides.
pub(crate) fn configure(cli: &Cli) -> Result<Config, ConfigError> {
    let (mut config, _) = Config::locate(cli.config.as_deref())?;
    if let Some(threads) = cli.threads {
        if !(1..=crate::search::MAX_THREADS).contains(&threads) {
            let why = format!("must be 1..={}", crate::search::MAX_THREADS);
            return Err(crate::nn::settings::InvalidSetting::new("--threads", &why).into());
        }
        config.engine.threads = threads;
    }
    if let Some(device) = device_flag(cli)? {
        config.network.device = device;
    }
    if let Some(dir) = &cli.log_dir {
        config.log.enabled = true;
        config.log.dir = dir.clone();
    }
    if let Some(network) = &cli.network {
        config.network.use_one_network(network);
    }
    Ok(config)
}

/// Refuses the engine's flags that `what` does not use (any but `allowed`),
/// rather than taking them without effect; `hint` says what to give
/// instead.
pub(crate) fn refuse_unused_flags(
    cli: &Cli,
    allowed: &[&str],
    what: &str,
    hint: &str,
) -> io::Result<()> {
    let unused: Vec<&str> = [
        ("--config", cli.config.is_some()),
        ("--threads", cli.threads.is_some()),
        ("--device", cli.device.is_some()),
        ("--network", cli.network.is_some()),
        ("--log-dir", cli.log_dir.is_some()),
    ]
    .into_iter()
    .filter(|&(flag, given)| given && !allowed.contains(&flag))
    .map(|(flag, _)| flag)
    .collect();
    if unused.is_empty() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "{what} does not use {}: {hint}",
        unused.join(", ")
    )))
}

/// The configured network of `rule` on a board of `size` behind an
/// evaluation service, saying on stderr when the device had to change; the
/// note says why the network could not be used (the service then evaluates
/// uniformly, where `network.tactics_only_fallback` allows it; otherwise
/// this fails).
pub(crate) fn network_service(
    config: &Config,
    rule: crate::game::Rule,
    size: crate::game::BoardSize,
) -> io::Result<(std::sync::Arc<crate::nn::EvalService>, Option<String>)> {
    let mut provider = crate::nn::provider::NetworkProvider::new(&config.network);
    if let Some(note) = &provider.device_note {
        eprintln!("note: {note}");
    }
    provider.service_for(rule, size).map_err(io::Error::other)
}

/// Runs the command line of this process (`pbrain-wuzi`, or `wuzi-files`).
pub fn main() -> ExitCode {
    let started = std::time::Instant::now();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let named_for_files = |path: &std::path::Path| {
        path.file_stem()
            // Windows file names ignore case (a copy may be WUZI-FILES.EXE).
            .is_some_and(|stem| {
                stem.to_string_lossy()
                    .eq_ignore_ascii_case(play::FILES_NAME)
            })
    };
    // The name it was started by (a link's, on Linux), or the file's own:
    // on Windows the first word of the command line is whatever the
    // manager wrote there.
    let invoked_for_files = args
        .first()
        .is_some_and(|name| named_for_files(std::path::Path::new(name)))
        || std::env::current_exe().is_ok_and(|exe| named_for_files(&exe));
    if invoked_for_files {
        args.push("files".into());
    }
    let matches = <Cli as clap::CommandFactory>::command().get_matches_from(args);
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match &cli.command {
        Some(Command::Bench(args)) => {
            // The flags given on the command line, not taken by default.
            let given = matches
                .subcommand_matches("bench")
                .map_or_else(Vec::new, |m| {
                    m.ids()
                        .filter(|id| {
                            m.value_source(id.as_str())
                                == Some(clap::parser::ValueSource::CommandLine)
                        })
                        .map(|id| id.to_string())
                        .collect()
                });
            bench::run(&cli, args, &given)
        }
        Some(Command::Analyse(args)) => play::analyse(&cli, args),
        #[cfg(feature = "torch")]
        Some(Command::Train(args)) => refuse_unused_flags(
            &cli,
            &[],
            "train",
            "it reads no configuration; give train's own --device, --torch-threads and --init \
             after `train`",
        )
        .and_then(|()| {
            crate::train::run(args)
                .map(|_| ())
                .map_err(io::Error::other)
        }),
        Some(Command::Match(args)) => refuse_unused_flags(
            &cli,
            &[],
            "match",
            "each engine's command and settings go in --engine1, --engine2 and --each",
        )
        .and_then(|()| {
            if let Err(e) = crate::arena::interrupt::install() {
                eprintln!("match: an interrupt will end the match without its summary: {e}");
            }
            match crate::arena::run(args) {
                Ok(s) if s.interrupted => Err(io::Error::other(format!(
                    "match interrupted after {} of {} games",
                    s.games.len(),
                    s.planned_games
                ))),
                Ok(_) => Ok(()),
                Err(e) => Err(io::Error::other(e)),
            }
        }),
        Some(Command::Selfplay(args)) => play::selfplay(&cli, args),
        Some(Command::Network(args)) => refuse_unused_flags(
            &cli,
            &[],
            "network",
            "it reads the file it is given and no configuration",
        )
        .and_then(|()| network::run(args)),
        Some(Command::Files { dir }) => {
            let dir = dir.clone().unwrap_or_else(|| PathBuf::from("."));
            return play::files_protocol(&cli, &dir, started);
        }
        Some(Command::Serve(args)) => {
            refuse_unused_flags(&cli, &[], "serve", "the game server runs no engine")
                .and_then(|()| serve::run(args))
        }
        Some(Command::Connect { url, name }) => match configure(&cli) {
            Ok(config) => {
                crate::protocol::ws_client::run(config, url, name).map_err(io::Error::other)
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
            let engine =
                crate::protocol::run_gtp(config, io::BufReader::new(io::stdin()), io::stdout());
            exit_now(engine)
        }
        None => {
            let config = match configure(&cli) {
                Ok(config) => config,
                Err(e) => {
                    // The manager reads stdout: say it there too, as an ERROR line.
                    println!("{}", crate::gomocup::BrainLine::Error(e.to_string()));
                    eprintln!("pbrain-wuzi: {e}");
                    return ExitCode::from(2);
                }
            };
            let brain = crate::protocol::run(config, io::BufReader::new(io::stdin()), io::stdout());
            exit_now(brain)
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

/// Ends the process once a protocol front end has retired, without freeing
/// its search tree (`Retired` says why).
fn exit_now(front_end: crate::protocol::Retired) -> ! {
    front_end.leave_to_exit();
    let code = match io::stdout().flush() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pbrain-wuzi: {e}");
            1
        }
    };
    exit_without_destructors(code)
}

/// Ends the process at once, with what it holds left to the system.
pub(crate) fn exit_without_destructors(code: i32) -> ! {
    // An evaluator may still be inside a batch (a ponder ended by END):
    // libc's exit would run libtorch's static destructors under it, so on
    // Unix leave at once, with nothing buffered left to lose. Windows'
    // ExitProcess ends the other threads before any library unloads.
    // SAFETY: _exit only ends the process.
    #[cfg(unix)]
    unsafe {
        libc::_exit(code);
    }
    #[cfg(not(unix))]
    std::process::exit(code);
}
