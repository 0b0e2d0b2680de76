//! `wuzi-encode`: game records to encoded training positions on disk (see
//! `wuzi_data::export` for the format), with the same legality checks and
//! the same train/validation split as `pbrain-wuzi train`, so that a trainer
//! elsewhere (a GPU machine's PyTorch) sees exactly the same data. Needs no
//! libtorch.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use wuzi_data::export::export;
use wuzi_data::records::{parse_board_size, Dataset};
use wuzi_game::game::{BoardSize, Rule};

/// Encodes game records into input planes and targets for an outside trainer.
#[derive(Parser, Debug)]
#[command(name = "wuzi-encode", version)]
struct Args {
    /// Game records: Gomocup TSV files, Piskvork PSQ files, or directories
    /// searched recursively for *.tsv and *.psq.
    #[arg(required = true, value_name = "DATA")]
    data: Vec<PathBuf>,
    /// The tournament's opening file for the PSQ files (as `pbrain-wuzi
    /// train --psq-openings`): each PSQ game's opening stones, placed by
    /// the judge, are not trained on, and a game from none is left out.
    #[arg(long, value_name = "FILE")]
    psq_openings: Option<PathBuf>,
    /// Rule of the games to keep (freestyle, standard, renju, caro).
    #[arg(long)]
    rule: Rule,
    /// Board sizes to keep: N or WIDTHxHEIGHT, repeatable or comma-separated
    /// (default: every size in the data).
    #[arg(long = "board", value_name = "SIZE", value_delimiter = ',',
          value_parser = parse_board_size)]
    boards: Vec<BoardSize>,
    /// Fraction of the games held out for validation (as `pbrain-wuzi train`).
    #[arg(long, default_value_t = 0.05)]
    val_fraction: f64,
    /// Seed of the split (as `pbrain-wuzi train --seed`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Encoding threads (default: the machine's cores; at most 256).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    threads: Option<usize>,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
}

fn run(args: &Args) -> Result<(), String> {
    if !(0.0..1.0).contains(&args.val_fraction) {
        return Err(format!(
            "--val-fraction {} must be in [0, 1)",
            args.val_fraction
        ));
    }
    // The output folder before the data, which can take minutes to load.
    // Inside a data folder, its TSV index would be read as games by the
    // next load of that folder, and refused.
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let out = absolute(&args.out);
    if let Some(data) = args.data.iter().find(|d| out.starts_with(absolute(d))) {
        return Err(format!(
            "--out {} is inside the data {}: the next load of that data would read its index as \
             games",
            args.out.display(),
            data.display()
        ));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("--out {}: cannot create it: {e}", args.out.display()))?;
    let started = Instant::now();
    let data = Dataset::load_with_psq_openings(
        &args.data,
        args.rule,
        &args.boards,
        args.psq_openings.as_deref(),
    )?;
    eprintln!("wuzi-encode: {}", data.stats);
    if data.games.is_empty() {
        return Err(format!("no usable {} game in the data", args.rule));
    }
    let (train, val) = data.split(args.val_fraction, args.seed);
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let summary = export(
        &data,
        &[("train", &train), ("val", &val)],
        &args.out,
        threads,
    )?;
    for (split, size, positions) in &summary.shards {
        println!("{split} {size}: {positions} positions");
    }
    println!(
        "{} training games, {} validation games, {:.1} MB in {} ({:.1} s)",
        train.len(),
        val.len(),
        summary.bytes as f64 / 1e6,
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    wuzi_data::exit("wuzi-encode", run(&Args::parse()))
}
