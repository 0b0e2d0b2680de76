//! Move matching: how often the engine plays the move a strong player
//! played, on positions of held-out games (the validation games of
//! `pbrain-wuzi train` with the same seed and fraction, so never positions
//! the network was trained on; a network trained before 2026-12-05, when
//! the split took the lowest-hash fraction of the games it was given,
//! may have learnt from a few of them).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::game::Rule;
use crate::search::{SearchLimits, Searcher, TimeBudget};
use wuzi_data::records::{Dataset, Sample};

/// What `bench matching` measures.
#[derive(Clone, Debug)]
pub struct MatchingOptions {
    pub data: PathBuf,
    pub rule: Rule,
    /// Positions, spread evenly over the validation games' targets.
    pub positions: usize,
    pub seconds: f64,
    /// Split of `pbrain-wuzi train` (seed, validation fraction).
    pub seed: u64,
    pub val_fraction: f64,
}

/// The share matched, with its 95% Wilson interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matching {
    pub positions: usize,
    pub matched: usize,
}

impl Matching {
    pub fn share(&self) -> f64 {
        self.matched as f64 / self.positions.max(1) as f64
    }

    /// 95% Wilson score interval of the share.
    pub fn interval(&self) -> (f64, f64) {
        let n = self.positions.max(1) as f64;
        let p = self.share();
        let z = 1.96f64;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt() / (1.0 + z * z / n);
        (centre - half, centre + half)
    }
}

/// The positions measured: `options.positions` samples spread evenly over
/// the validation games' targets.
struct Chosen {
    data: Dataset,
    validation_games: usize,
    available: usize,
    samples: Vec<Sample>,
}

impl Chosen {
    fn load(options: &MatchingOptions) -> io::Result<Chosen> {
        let data = Dataset::load(std::slice::from_ref(&options.data), options.rule, &[])
            .map_err(io::Error::other)?;
        let (_, val) = data.split(options.val_fraction, options.seed);
        let samples = data.samples(&val);
        if samples.is_empty() {
            return Err(io::Error::other("no validation positions in the data"));
        }
        let k = options.positions.clamp(1, samples.len());
        let chosen = (0..k).map(|i| samples[i * samples.len() / k]).collect();
        Ok(Chosen {
            data,
            validation_games: val.len(),
            available: samples.len(),
            samples: chosen,
        })
    }
}

/// Writes the positions `run` would measure to `path` (TSV: game id, rule,
/// board, moves so far, move played), so that another engine can be
/// measured on the same ones (`scripts/peer_matching.py`). Needs no network.
pub fn write_positions(
    options: &MatchingOptions,
    path: &Path,
    out: &mut impl Write,
) -> io::Result<usize> {
    // Created first, and named in its error: a path that cannot be written
    // is told at once, not after the records are loaded.
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    // Written over, the game records would be gone.
    if let (Ok(out), Ok(data)) = (
        std::fs::canonicalize(path),
        std::fs::canonicalize(&options.data),
    ) {
        if out == data {
            return Err(io::Error::other(format!(
                "--positions-out {} is the --data file: give another",
                path.display()
            )));
        }
    }
    // Opened without truncating: records that fail to load leave an
    // existing file as it was.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(named)?;
    let chosen = Chosen::load(options)?;
    file.set_len(0).map_err(named)?;
    let mut text = format!(
        "# bench matching positions: {} ({}), {} positions of {} validation games (split seed {}).\n\
         # Columns: game id, rule, board (WxH), moves so far (x,y, black first), move played.\n",
        options.data.display(),
        options.rule,
        chosen.samples.len(),
        chosen.validation_games,
        options.seed
    );
    for sample in &chosen.samples {
        let game = &chosen.data.games[sample.game as usize];
        let ply = sample.ply as usize;
        let moves: Vec<String> = game.moves[..ply].iter().map(|p| p.to_string()).collect();
        text += &format!(
            "{}\t{}\t{}\t{}\t{}\n",
            game.id,
            options.rule,
            game.size,
            moves.join(" "),
            game.moves[ply]
        );
    }
    file.write_all(text.as_bytes()).map_err(named)?;
    writeln!(
        out,
        "bench matching: {} positions written to {}",
        chosen.samples.len(),
        path.display()
    )?;
    Ok(chosen.samples.len())
}

/// Runs the measurement with `searcher`, printing a line per 50 positions.
pub fn run(
    searcher: &Searcher,
    options: &MatchingOptions,
    out: &mut impl Write,
) -> io::Result<Matching> {
    let Chosen {
        data,
        validation_games,
        available,
        samples,
    } = Chosen::load(options)?;
    let time = Duration::from_secs_f64(options.seconds.clamp(0.01, 600.0));
    let limits = SearchLimits {
        time: Some(TimeBudget::fixed(time)),
        ..SearchLimits::default()
    };
    let stop = AtomicBool::new(false);
    let mut result = Matching {
        positions: 0,
        matched: 0,
    };
    writeln!(
        out,
        "bench matching: {} ({}), {validation_games} validation games, {} of {available} positions, {:.2} s each",
        options.data.display(),
        options.rule,
        samples.len(),
        time.as_secs_f64()
    )?;
    for sample in samples {
        let board = data.board(sample).map_err(io::Error::other)?;
        let played = data.games[sample.game as usize].moves[sample.ply as usize];
        let found = searcher.search(&board, &limits, &stop);
        result.positions += 1;
        if found.best_move == Some(played) {
            result.matched += 1;
        }
        if result.positions.is_multiple_of(50) {
            writeln!(
                out,
                "  {} positions: {} matched ({:.1}%)",
                result.positions,
                result.matched,
                100.0 * result.share()
            )?;
        }
    }
    let (lo, hi) = result.interval();
    writeln!(
        out,
        "bench matching: {} of {} = {:.1}% (95% interval {:.1}-{:.1}%)",
        result.matched,
        result.positions,
        100.0 * result.share(),
        100.0 * lo,
        100.0 * hi
    )?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval() {
        let m = Matching {
            positions: 500,
            matched: 269,
        };
        let (lo, hi) = m.interval();
        assert!(
            (lo - 0.494).abs() < 0.002 && (hi - 0.581).abs() < 0.002,
            "{lo} {hi}"
        );
    }
}
