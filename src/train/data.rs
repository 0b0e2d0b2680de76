//! Batches of encoded, augmented positions for the trainer; the records, the
//! split and the epoch plans are `wuzi_core::records`.

use tch::{Kind, Tensor};

use crate::game::BoardSize;
use crate::nn::symmetry::{Symmetry, TensorSymmetry};
use crate::nn::{encode, INPUT_PLANES};
pub use wuzi_core::records::*;

/// Encoded positions of one board size, with their targets.
pub struct Batch {
    /// [N, INPUT_PLANES, H, W] float, on the CPU.
    pub input: Tensor,
    /// [N] int64: the move played, `y * W + x` after the symmetry.
    pub policy: Tensor,
    /// [N] int64: 0 win, 1 draw, 2 loss for the side to move.
    pub wdl: Tensor,
    pub len: usize,
    pub size: BoardSize,
}

/// Encodes `items` (all of one board size) into a batch: each position is
/// encoded from its replayed board, then its symmetry is applied to the
/// input with [`Symmetry::apply_to_input`] and to the target with
/// [`Symmetry::map_cell`]. The rows follow `items` sorted (stably) by
/// symmetry.
pub fn make_batch(data: &Dataset, items: &[(Sample, Symmetry)]) -> Result<Batch, String> {
    let first = items.first().ok_or("empty batch")?;
    let size = data
        .games
        .get(first.0.game as usize)
        .ok_or("sample of an unknown game")?
        .size;
    let (h, w) = (size.height() as usize, size.width() as usize);
    let plane_len = INPUT_PLANES * h * w;
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| items[i].1.index());
    let mut input = vec![0.0f32; items.len() * plane_len];
    let mut policy = Vec::with_capacity(items.len());
    let mut wdl = Vec::with_capacity(items.len());
    for (row, &i) in order.iter().enumerate() {
        let (sample, sym) = items[i];
        let game = data
            .games
            .get(sample.game as usize)
            .ok_or("sample of an unknown game")?;
        if game.size != size {
            return Err(format!(
                "batch mixes board sizes {size} and {} (game {})",
                game.size, game.id
            ));
        }
        let target = game
            .policy_move(sample.ply)
            .ok_or_else(|| format!("game {} has no move {}", game.id, sample.ply))?;
        let mut board = data.board(sample)?;
        encode(
            &mut board,
            &mut input[row * plane_len..(row + 1) * plane_len],
            h,
            w,
        );
        let (tx, ty) = sym.map_cell(target.x() as usize, target.y() as usize, h, w);
        // Shape-keeping symmetries only (all_for), so the width is unchanged
        // except for quarter turns of square boards, where h == w.
        policy.push((ty * w + tx) as i64);
        wdl.push(game.wdl_class(sample.ply as usize));
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
    Ok(Batch {
        input,
        policy: Tensor::from_slice(&policy).to_kind(Kind::Int64),
        wdl: Tensor::from_slice(&wdl).to_kind(Kind::Int64),
        len: items.len(),
        size,
    })
}
