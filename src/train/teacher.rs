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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tch::Device;

use crate::game::Point;
use crate::nn::precision::{resolve, Precision, PrecisionSetting};
use crate::nn::{Backend, BatchEvaluator, EncodedBatch, Model, NativeNetwork, NetConfig, Network};
use crate::train::data::{encode_samples, game_and_move, Dataset, Sample, SearchTarget};

/// A position's policy target is written as counts summing to about this.
const TARGET_SCALE: f32 = 10_000.0;
/// Teacher shares under this many counts (0.1% of the target) are dropped:
/// they carry nothing a training step could use and would take memory.
const MIN_COUNT: u32 = 10;
/// Positions per libtorch forward pass (on a GPU).
const TORCH_BATCH: usize = 256;
/// Positions per native forward pass: the kernels work through a batch in
/// cache-sized chunks, so a larger one gains nothing and costs memory.
const NATIVE_BATCH: usize = 32;

/// What labelling did.
#[derive(Clone, Debug)]
pub struct Labelled {
    /// The teacher's file and size.
    pub network: PathBuf,
    pub config: NetConfig,
    pub positions: usize,
    pub seconds: f64,
    pub precision: Precision,
    /// What evaluated it ([`Model::describe`]) and on how many threads.
    pub evaluator: String,
    pub threads: usize,
}

impl std::fmt::Display for Labelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "teacher {} ({}, {} thread{}): {} training positions labelled in {:.0} s ({:.0}/s)",
            self.network.display(),
            self.evaluator,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.positions,
            self.seconds,
            self.positions as f64 / self.seconds.max(1e-9)
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

/// The teacher in `path` ready to evaluate on `device`, with its batch:
/// on the CPU the native kernels in fp32, one evaluator per thread (exact
/// targets, and faster there than libtorch: docs/native-backend.md); on a
/// GPU libtorch, in the precision it resolves to.
fn teacher_model(path: &Path, device: Device) -> Result<(Model, usize), String> {
    let unreadable = |e: crate::nn::NetError| format!("teacher {}: {e}", path.display());
    if device == Device::Cpu {
        let network = NativeNetwork::load(path).map_err(unreadable)?;
        let fp32 = PrecisionSetting::Fixed(Precision::Fp32);
        let model = Model::native(Arc::new(network), None, fp32, NATIVE_BATCH);
        return Ok((model, NATIVE_BATCH));
    }
    let network = Network::load(path, device).map_err(unreadable)?;
    let (precision, _) = resolve(PrecisionSetting::Auto, &network, TORCH_BATCH);
    let model = Model::Torch {
        network: Box::new(network),
        precision,
    };
    Ok((model, TORCH_BATCH))
}

/// The targets of one chunk of positions (all of one board size), each
/// with its sample, from the teacher's `evaluator`.
fn label_chunk(
    dataset: &Dataset,
    chunk: &[Sample],
    evaluator: &mut dyn BatchEvaluator,
    weight: f32,
    planes: &mut Vec<f32>,
) -> Result<Vec<(Sample, Option<SearchTarget>)>, String> {
    if chunk.is_empty() {
        return Ok(Vec::new());
    }
    // In their stored orientation, as the targets are kept.
    let size = encode_samples(dataset, chunk, planes)?;
    let (height, width) = (size.height() as usize, size.width() as usize);
    let batch = EncodedBatch::new(planes, height, width).map_err(|e| e.to_string())?;
    let output = evaluator.evaluate(batch);
    let cells = height * width;
    if output.policy.len() != chunk.len() * cells || output.wdl.len() != chunk.len() * 3 {
        return Err(format!(
            "the teacher answered {} policy and {} value numbers for {} positions of {size}",
            output.policy.len(),
            output.wdl.len(),
            chunk.len()
        ));
    }
    let mut out = Vec::with_capacity(chunk.len());
    for ((&sample, policy), wdl) in chunk
        .iter()
        .zip(output.policy.chunks_exact(cells))
        .zip(output.wdl.chunks_exact(3))
    {
        // A game without search targets learns the move played.
        let (_, played) = game_and_move(dataset, sample)?;
        let counts = policy_counts(policy, width, played, weight);
        out.push((sample, SearchTarget::new([wdl[0], wdl[1], wdl[2]], counts)));
    }
    Ok(out)
}

/// A labelling thread's panic as an error.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let why = crate::panics::message(&*payload).unwrap_or("unknown cause");
    format!("a teacher labelling thread panicked: {why}")
}

/// Raises `failed` when its thread unwinds, so that the other threads stop
/// taking positions.
struct StopOthersOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOthersOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

type ChunkTargets = Vec<(Sample, Option<SearchTarget>)>;

/// Gives every training position of `games` (those without search targets
/// of their own, i.e. not self-play games) the targets of the teacher in
/// `path`: policy as [`policy_counts`], value the teacher's win/draw/loss
/// (the trainer mixes it with the result by `--search-value-weight`).
/// On the CPU `threads` evaluators share the positions out. With
/// `progress`, a line on stderr counts the positions done. On an error
/// the dataset is left as it was.
pub fn label(
    dataset: &mut Dataset,
    games: &[usize],
    path: &Path,
    device: Device,
    threads: usize,
    weight: f32,
    progress: bool,
) -> Result<Labelled, String> {
    let started = Instant::now();
    let (model, batch) = teacher_model(path, device)?;
    let plain: Vec<usize> = games
        .iter()
        .copied()
        .filter(|&g| {
            dataset
                .games
                .get(g)
                .is_some_and(|game| game.search.is_empty())
        })
        .collect();
    let samples = dataset.samples(&plain);
    let groups = dataset.by_size(&samples);
    let chunks: Vec<&[Sample]> = groups.values().flat_map(|g| g.chunks(batch)).collect();
    // libtorch spreads one forward pass over its own threads.
    let wanted = match model.backend() {
        Backend::Native => threads.clamp(1, chunks.len().max(1)),
        Backend::Torch => 1,
    };

    let (next, done, failed) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicBool::new(false),
    );
    let data: &Dataset = dataset;
    let results = std::thread::scope(|scope| -> Result<Vec<_>, String> {
        let mut workers = Vec::with_capacity(wanted);
        for index in 0..wanted {
            let mut evaluator = model.evaluator();
            let (next, done, failed, chunks) = (&next, &done, &failed, &chunks);
            let spawned = std::thread::Builder::new()
                .name(format!("teacher-{index}"))
                .spawn_scoped(scope, move || -> Result<ChunkTargets, String> {
                    let _stop_others = StopOthersOnPanic(failed);
                    let (mut labelled, mut planes) = (Vec::new(), Vec::new());
                    while !failed.load(Ordering::Relaxed) {
                        let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        match label_chunk(data, chunk, &mut *evaluator, weight, &mut planes) {
                            Ok(targets) => labelled.extend(targets),
                            Err(why) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(why);
                            }
                        }
                        done.fetch_add(chunk.len(), Ordering::Relaxed);
                    }
                    Ok(labelled)
                });
            match spawned {
                Ok(worker) => workers.push(worker),
                // The threads already started share the positions.
                Err(e) if index > 0 => {
                    tracing::warn!("teacher labelling on {index} threads, not {wanted}: {e}");
                    break;
                }
                Err(e) => return Err(format!("cannot start a teacher labelling thread: {e}")),
            }
        }
        let (mut shown, mut line_open) = (Instant::now(), false);
        while progress && !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            if shown.elapsed() >= Duration::from_secs(5) {
                let done = done.load(Ordering::Relaxed);
                eprint!(
                    "\rtrain: teacher labelling {done}/{} positions, {:.0}/s   ",
                    samples.len(),
                    done as f64 / started.elapsed().as_secs_f64()
                );
                shown = Instant::now();
                line_open = true;
            }
        }
        if line_open {
            eprintln!();
        }
        let results: Vec<Result<ChunkTargets, String>> = workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|payload| Err(panic_message(payload)))
            })
            .collect();
        Ok(results)
    })?;

    // One result per thread that ran.
    let threads = results.len();
    let mut targets: BTreeMap<u32, Vec<Option<SearchTarget>>> = BTreeMap::new();
    for result in results {
        for (sample, target) in result? {
            let game = dataset
                .games
                .get(sample.game as usize)
                .ok_or("sample of an unknown game")?;
            let slots = targets.entry(sample.game).or_insert_with(|| {
                vec![None; usize::from(game.end_target.saturating_sub(game.first_target))]
            });
            let slot = sample
                .ply
                .checked_sub(game.first_target)
                .and_then(|i| slots.get_mut(usize::from(i)))
                .ok_or_else(|| format!("game {}: ply {} out of range", game.id, sample.ply))?;
            *slot = target;
        }
    }
    for (game, search) in targets {
        if let Some(game) = dataset.games.get_mut(game as usize) {
            game.search = search;
        }
    }
    Ok(Labelled {
        network: path.to_path_buf(),
        config: model.config(),
        positions: samples.len(),
        seconds: started.elapsed().as_secs_f64(),
        precision: model.precision(),
        evaluator: model.describe(),
        threads,
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
