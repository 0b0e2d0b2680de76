//! `pbrain-wuzi`: the Wuzi engine's command line.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use wuzi::nn::NetConfig;

/// Wuzi, a gomoku and renju engine (Gomocup brain).
///
/// The Gomocup protocol front end is not built yet; today the binary offers
/// the benchmarks below.
#[derive(Parser)]
#[command(name = "pbrain-wuzi", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Prints speed figures of one part of the engine.
    Bench(BenchArgs),
    /// Trains a network from game records (Gomocup TSV, PSQ).
    Train(wuzi::train::TrainArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Which part to measure.
    #[arg(value_enum)]
    part: BenchPart,
    /// Seconds spent on each figure.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// nn: a network file to measure (default: random weights of --net's size).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// nn: network size BLOCKSxCHANNELS when no --weights are given.
    #[arg(long, default_value = "4x32")]
    net: NetConfig,
    /// nn: device (cpu, auto, cuda, cuda:N); falls back to the CPU with a note.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// nn: libtorch CPU threads (per evaluator).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// nn: evaluator threads of the service.
    #[arg(long, default_value_t = 1)]
    evaluators: usize,
    /// nn: board side.
    #[arg(long, default_value_t = 15)]
    board: u32,
    /// nn: batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,128,256")]
    batches: Vec<usize>,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchPart {
    /// Board make/unmake, forbidden-point scans, VCF/VCT solver.
    Rules,
    /// Network forward passes against the batched evaluation service.
    Nn,
    /// Search speed against the evaluation service (first --batches value).
    Search,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Bench(args)) => {
            let per_item = Duration::from_secs_f64(args.seconds.clamp(0.01, 600.0));
            match args.part {
                BenchPart::Rules => wuzi::bench::rules::run(per_item, &mut io::stdout().lock()),
                BenchPart::Nn | BenchPart::Search => {
                    let options = wuzi::bench::nn::NnBenchOptions {
                        weights: args.weights,
                        net: args.net,
                        device: args.device,
                        threads: args.threads,
                        evaluators: args.evaluators,
                        board_side: args.board,
                        batch_sizes: args.batches,
                        per_item,
                    };
                    if matches!(args.part, BenchPart::Nn) {
                        wuzi::bench::nn::run(&options, &mut io::stdout().lock())
                    } else {
                        wuzi::bench::search::run(&options, &mut io::stdout().lock())
                    }
                }
            }
        }
        Some(Command::Train(args)) => wuzi::train::run(&args)
            .map(|_| ())
            .map_err(io::Error::other),
        None => {
            eprintln!(
                "pbrain-wuzi: the Gomocup protocol front end is not built yet; \
                 try `pbrain-wuzi bench rules` or `pbrain-wuzi --help`"
            );
            return ExitCode::from(2);
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
