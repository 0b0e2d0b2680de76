//! `pbrain-wuzi`: the Wuzi engine's command line.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

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
    Bench {
        /// Which part to measure.
        #[arg(value_enum)]
        part: BenchPart,
        /// Seconds spent on each figure.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchPart {
    /// Board make/unmake, forbidden-point scans, VCF/VCT solver.
    Rules,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Bench {
            part: BenchPart::Rules,
            seconds,
        }) => {
            let per_item = Duration::from_secs_f64(seconds.clamp(0.01, 600.0));
            wuzi::bench::rules::run(per_item, &mut io::stdout().lock())
        }
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
