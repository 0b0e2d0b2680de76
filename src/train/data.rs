//! Batches of encoded, augmented positions for the trainer; the records, the
//! split and the epoch plans are `wuzi_data::records`.

use tch::{Kind, Tensor};

use crate::game::{BoardSize, Point};
use crate::nn::symmetry::{Symmetry, TensorSymmetry};
use crate::nn::{encode, INPUT_PLANES};
pub use wuzi_data::records::*;

/// Weight of a self-play position's search value in its value target when
/// none is given (the rest is the game's result), as `gpu_train.py`.
pub const DEFAULT_SEARCH_VALUE_WEIGHT: f32 = 0.5;

/// Encoded positions of one board size, with their targets.
pub struct Batch {
    /// [N, INPUT_PLANES, H, W] float, on the CPU.
    pub input: Tensor,
    /// [N] int64: the move played (a self-play position: the most visited
    /// one), `y * W + x` after the symmetry; for the accuracy.
    pub policy: Tensor,
    /// [N, H * W] float: the policy target, the move played (one-hot) or,
    /// for a self-play position, the search's visit shares.
    pub policy_dist: Tensor,
    /// [N] int64: 0 win, 1 draw, 2 loss for the side to move.
    pub wdl: Tensor,
    /// [N, 3] float: the value target, the result (one-hot) or, for a
    /// self-play position, the result mixed with the search's value.
    pub wdl_dist: Tensor,
    pub len: usize,
    pub size: BoardSize,
}

/// The game of `sample` and its policy target there ([`Game::policy_move`]).
pub fn game_and_move(data: &Dataset, sample: Sample) -> Result<(&Game, Point), String> {
    let game = data
        .games
        .get(sample.game as usize)
        .ok_or("sample of an unknown game")?;
    let target = game
        .policy_move(sample.ply)
        .ok_or_else(|| format!("game {} has no move {}", game.id, sample.ply))?;
    Ok((game, target))
}

/// Encodes `samples`, all of one board size and each with a move to learn,
/// one after another into `planes` (replacing what it held) as played, no
/// symmetry applied; returns their board size.
pub fn encode_samples(
    data: &Dataset,
    samples: &[Sample],
    planes: &mut Vec<f32>,
) -> Result<BoardSize, String> {
    let first = samples.first().ok_or("empty batch")?;
    let size = data
        .games
        .get(first.game as usize)
        .ok_or("sample of an unknown game")?
        .size;
    let (h, w) = (size.height() as usize, size.width() as usize);
    let plane_len = INPUT_PLANES * h * w;
    planes.clear();
    planes.resize(samples.len() * plane_len, 0.0);
    for (&sample, row) in samples.iter().zip(planes.chunks_exact_mut(plane_len)) {
        let (game, _) = game_and_move(data, sample)?;
        if game.size != size {
            return Err(format!(
                "batch mixes board sizes {size} and {} (game {})",
                game.size, game.id
            ));
        }
        let mut board = data.board(sample)?;
        encode(&mut board, row, h, w);
    }
    Ok(size)
}

/// Encodes `items` (all of one board size) into a batch: each position is
/// encoded from its replayed board, then its symmetry is applied to the
/// input with [`Symmetry::apply_to_input`] and to the target with
/// [`Symmetry::map_cell`]. The rows follow `items` sorted (stably) by
/// symmetry. Self-play positions get soft targets, the search's value
/// weighing [`DEFAULT_SEARCH_VALUE_WEIGHT`].
pub fn make_batch(data: &Dataset, items: &[(Sample, Symmetry)]) -> Result<Batch, String> {
    make_batch_with(data, items, DEFAULT_SEARCH_VALUE_WEIGHT)
}

/// As [`make_batch`], with the search value's weight in the value target
/// of self-play positions.
pub fn make_batch_with(
    data: &Dataset,
    items: &[(Sample, Symmetry)],
    search_value_weight: f32,
) -> Result<Batch, String> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| items[i].1.index());
    let ordered: Vec<Sample> = order.iter().map(|&i| items[i].0).collect();
    let mut input = Vec::new();
    let size = encode_samples(data, &ordered, &mut input)?;
    let (h, w) = (size.height() as usize, size.width() as usize);
    let mut policy = Vec::with_capacity(items.len());
    let mut wdl = Vec::with_capacity(items.len());
    let cells = h * w;
    let mut policy_dist = vec![0.0f32; items.len() * cells];
    let mut wdl_dist = vec![0.0f32; items.len() * 3];
    for (row, &i) in order.iter().enumerate() {
        let (sample, sym) = items[i];
        let (game, target) = game_and_move(data, sample)?;
        let (tx, ty) = sym.map_cell(target.x() as usize, target.y() as usize, h, w);
        // Shape-keeping symmetries only (all_for), so the width is unchanged
        // except for quarter turns of square boards, where h == w.
        policy.push((ty * w + tx) as i64);
        let result = game.wdl_class(sample.ply as usize);
        wdl.push(result);
        let (row_policy, row_wdl) = (
            &mut policy_dist[row * cells..(row + 1) * cells],
            &mut wdl_dist[row * 3..(row + 1) * 3],
        );
        row_wdl[result as usize] = 1.0;
        match game.search_at(sample.ply) {
            Some(search) => {
                // In u64: each count is a u32 from the file, their sum need not be.
                let total: u64 = search.visits.iter().map(|&(_, n)| u64::from(n)).sum();
                for &(p, n) in &search.visits {
                    let (x, y) = sym.map_cell(p.x() as usize, p.y() as usize, h, w);
                    row_policy[y * w + x] += (f64::from(n) / total.max(1) as f64) as f32;
                }
                let k = search_value_weight.clamp(0.0, 1.0);
                for (target, &per_mille) in row_wdl.iter_mut().zip(&search.wdl) {
                    *target = (1.0 - k) * *target + k * f32::from(per_mille) / 1000.0;
                }
            }
            None => row_policy[ty * w + tx] = 1.0,
        }
    }
    let n = items.len() as i64;
    let raw = Tensor::from_slice(&input).view([n, INPUT_PLANES as i64, h as i64, w as i64]);
    // Apply each symmetry to its contiguous run of rows.
    let mut parts = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let sym = items[order[start]].1;
        let mut end = start + 1;
        while end < order.len() && items[order[end]].1 == sym {
            end += 1;
        }
        let rows = raw.narrow(0, start as i64, (end - start) as i64);
        parts.push(if sym == Symmetry::IDENTITY {
            rows
        } else {
            sym.apply_to_input(&rows)
        });
        start = end;
    }
    let input = if parts.len() == 1 {
        parts.pop().ok_or("empty batch")?.contiguous()
    } else {
        Tensor::cat(&parts, 0)
    };
    let dist =
        |values: &[f32], columns: usize| Tensor::from_slice(values).view([n, columns as i64]);
    Ok(Batch {
        input,
        policy: Tensor::from_slice(&policy).to_kind(Kind::Int64),
        policy_dist: dist(&policy_dist, cells),
        wdl: Tensor::from_slice(&wdl).to_kind(Kind::Int64),
        wdl_dist: dist(&wdl_dist, 3),
        len: items.len(),
        size,
    })
}
