//! Distillation: a larger network's move probabilities and values as the
//! training targets of a smaller one. One played move per position is a
//! thin signal (the 4x32 networks reach 46-51% of the played moves where
//! the GPU-trained 6x64 and 8x64 ones reach 53-55% on the same games); the
//! teacher's whole distribution says which other moves were good too.
//!
//! The teacher labels each training position once, before training, in
//! its stored orientation; the targets then go through the same symmetry
//! as the input, as self-play visit counts do. Validation games keep the
//! played move and the result, so validation figures stay comparable with
//! runs without a teacher.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tch::{Device, Kind};

use crate::game::Point;
use crate::nn::precision::{resolve, Precision, PrecisionSetting};
use crate::nn::symmetry::Symmetry;
use crate::nn::{NetConfig, Network};
use crate::train::data::{make_batch, Dataset, SearchTarget};

/// A position's policy target is written as counts summing to about this.
const TARGET_SCALE: f32 = 10_000.0;
/// Teacher shares under this many counts (0.1% of the target) are dropped:
/// they carry nothing a training step could use and would take memory.
const MIN_COUNT: u32 = 10;
/// Positions per teacher forward pass.
const LABEL_BATCH: usize = 256;

/// What labelling did.
#[derive(Clone, Debug)]
pub struct Labelled {
    /// The teacher's file and size.
    pub network: PathBuf,
    pub config: NetConfig,
    pub positions: usize,
    pub seconds: f64,
    pub precision: Precision,
}

impl std::fmt::Display for Labelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "teacher {} ({}, {}): {} training positions labelled in {:.0} s",
            self.network.display(),
            self.config,
            self.precision,
            self.positions,
            self.seconds
        )
    }
}

/// The policy target of one position: the teacher's probabilities
/// (`policy`, one per cell, row-major over a board `width` wide) weighing
/// `weight`, the move played `1 - weight`, as counts for a
/// [`SearchTarget`].
pub fn policy_counts(
    policy: &[f32],
    width: usize,
    played: Point,
    weight: f32,
) -> Vec<(Point, u32)> {
    let weight = weight.clamp(0.0, 1.0);
    let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
    for (cell, &p) in policy.iter().enumerate() {
        let n = (p.max(0.0) * weight * TARGET_SCALE).round() as u32;
        if n >= MIN_COUNT {
            counts.insert(cell, n);
        }
    }
    let played_cell = played.y() as usize * width + played.x() as usize;
    let played_count = ((1.0 - weight) * TARGET_SCALE).round() as u32;
    *counts.entry(played_cell).or_insert(0) += played_count;
    counts
        .into_iter()
        .filter_map(|(cell, n)| Some((Point::new((cell % width) as u8, (cell / width) as u8)?, n)))
        .collect()
}

/// A teacher output's values, row after row, on the CPU.
fn to_host(output: &tch::Tensor) -> Result<Vec<f32>, String> {
    let flat = output
        .to_device(Device::Cpu)
        .to_kind(Kind::Float)
        .flatten(0, -1);
    Vec::<f32>::try_from(flat).map_err(|e| format!("teacher output: {e}"))
}

/// Gives every training position of `games` (those without search targets
/// of their own, i.e. not self-play games) the targets of the teacher in
/// `path`: policy as [`policy_counts`], value the teacher's win/draw/loss
/// (the trainer mixes it with the result by `--search-value-weight`).
/// With `progress`, a line on stderr counts the positions done.
pub fn label(
    dataset: &mut Dataset,
    games: &[usize],
    path: &Path,
    device: Device,
    weight: f32,
    progress: bool,
) -> Result<Labelled, String> {
    let started = Instant::now();
    let teacher =
        Network::load(path, device).map_err(|e| format!("teacher {}: {e}", path.display()))?;
    let (precision, _) = resolve(PrecisionSetting::Auto, &teacher, LABEL_BATCH);
    let frozen = teacher.freeze(precision);
    let plain: Vec<usize> = games
        .iter()
        .copied()
        .filter(|&g| dataset.games[g].search.is_empty())
        .collect();
    let samples = dataset.samples(&plain);
    let mut targets: BTreeMap<u32, Vec<Option<SearchTarget>>> = BTreeMap::new();
    let (mut done, mut shown, mut line_open) = (0usize, Instant::now(), false);
    for group in dataset.by_size(&samples).values() {
        for chunk in group.chunks(LABEL_BATCH) {
            if progress && shown.elapsed().as_secs() >= 5 {
                let rate = done as f64 / started.elapsed().as_secs_f64();
                eprint!(
                    "\rtrain: teacher labelling {done}/{} positions, {rate:.0}/s   ",
                    samples.len()
                );
                shown = Instant::now();
                line_open = true;
            }
            done += chunk.len();
            let items: Vec<_> = chunk.iter().map(|&s| (s, Symmetry::IDENTITY)).collect();
            // All rows share the identity symmetry, so the batch keeps the
            // chunk's order.
            let batch = make_batch(dataset, &items)?;
            let (policy, wdl) = frozen.evaluate(&batch.input.to_device(frozen.device()));
            let cells = policy.size()[1] as usize;
            let (policy, wdl) = (to_host(&policy)?, to_host(&wdl)?);
            let width = batch.size.width() as usize;
            for (row, sample) in chunk.iter().enumerate() {
                let game = &dataset.games[sample.game as usize];
                let played = *game
                    .moves
                    .get(sample.ply as usize)
                    .ok_or_else(|| format!("game {} has no move {}", game.id, sample.ply))?;
                let counts = policy_counts(
                    &policy[row * cells..(row + 1) * cells],
                    width,
                    played,
                    weight,
                );
                let value = [wdl[row * 3], wdl[row * 3 + 1], wdl[row * 3 + 2]];
                let slots = targets.entry(sample.game).or_insert_with(|| {
                    vec![None; usize::from(game.end_target.saturating_sub(game.first_target))]
                });
                let slot = slots
                    .get_mut(usize::from(sample.ply - game.first_target))
                    .ok_or_else(|| format!("game {}: ply {} out of range", game.id, sample.ply))?;
                *slot = SearchTarget::new(value, counts);
            }
        }
    }
    if line_open {
        eprintln!();
    }
    for (game, search) in targets {
        dataset.games[game as usize].search = search;
    }
    Ok(Labelled {
        network: path.to_path_buf(),
        config: teacher.config(),
        positions: samples.len(),
        seconds: started.elapsed().as_secs_f64(),
        precision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: u8, y: u8) -> Point {
        Point::new(x, y).expect("on the board")
    }

    #[test]
    fn the_played_move_and_the_teacher_share_the_target() {
        // A 3-wide board: the teacher likes cell (1,1) at 0.9 and (2,0)
        // at 0.0005 (dropped), the game played (0,2).
        let mut policy = vec![0.0f32; 9];
        policy[4] = 0.9;
        policy[2] = 0.0005;
        policy[0] = 0.0995;
        let counts = policy_counts(&policy, 3, p(0, 2), 0.8);
        assert_eq!(
            counts,
            vec![(p(0, 0), 796), (p(1, 1), 7200), (p(0, 2), 2000)]
        );
        // With the played move among the teacher's, the shares add up.
        let counts = policy_counts(&policy, 3, p(1, 1), 0.5);
        assert_eq!(counts, vec![(p(0, 0), 498), (p(1, 1), 4500 + 5000)]);
    }
}
