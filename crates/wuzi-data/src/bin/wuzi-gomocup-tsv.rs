//! `wuzi-gomocup-tsv`: a Gomocup results folder (one PSQ file per game, as
//! in `gomocupYYYYresults.zip`) as the Gomocup TSV of the shared game
//! collection, to keep beside the networks. `pbrain-wuzi train
//! --psq-openings` reads such a folder as it is; this writes it down once,
//! with the engines' names and the results the judge recorded.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use wuzi_data::tournament::{results_folder_games, League, TournamentOpenings};
use wuzi_formats::tsv;
use wuzi_game::game::Rule;

/// Writes a Gomocup results folder's games as Gomocup TSV on stdout.
#[derive(Parser, Debug)]
#[command(name = "wuzi-gomocup-tsv", version)]
struct Args {
    /// The folder of PSQ files, one game each (named ROUND_I_J_R.psq by the
    /// judge, R the result: 1 black won, 2 white won, 0 a draw; where the
    /// name has no result, as in 2016's, the five or full board decides and
    /// a game with neither is left out).
    folder: PathBuf,
    /// The league's opening file (offset or pos notation): each game's
    /// opening is the longest first part of its moves that is one of them,
    /// anywhere and turned; a game from none is left out.
    #[arg(long, value_name = "FILE")]
    openings: PathBuf,
    /// The league's name for the game ids, e.g. Freestyle15_1.
    #[arg(long)]
    league: String,
    /// The tournament's year.
    #[arg(long)]
    year: u16,
    /// The league's rule: freestyle or standard.
    #[arg(long)]
    rule: Rule,
}

fn run(args: &Args) -> Result<(), String> {
    let mut openings = TournamentOpenings::read(&args.openings)?;
    let league = League {
        name: args.league.clone(),
        year: args.year,
        rule: args.rule,
    };
    let (games, left_out) = results_folder_games(&args.folder, &league, &mut openings)?;
    let mut out = tsv::header_without_search();
    for game in &games {
        out.push('\n');
        out.push_str(&game.line());
    }
    println!("{out}");
    eprintln!("wuzi-gomocup-tsv: {} games", games.len());
    for (why, count) in left_out {
        eprintln!("wuzi-gomocup-tsv: left out {count}: {why}");
    }
    Ok(())
}

fn main() -> ExitCode {
    wuzi_data::exit("wuzi-gomocup-tsv", run(&Args::parse()))
}
