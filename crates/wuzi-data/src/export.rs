//! Encoded training positions written to files, for trainers outside this
//! program (`scripts/gpu_train.py` with a GPU machine's own PyTorch, which
//! cannot load this engine's libtorch build).
//!
//! An export directory holds, for each split (`train`, `val`) and board size
//! (`WxH`):
//! * `SPLIT-WxH.planes`: per position, the [`INPUT_PLANES`] x H x W input
//!   planes of [`encode`] as bits, plane-major then row-major, packed eight
//!   to a byte with the first bit in the highest bit (numpy's `packbits`
//!   order), each position padded to whole bytes;
//! * `SPLIT-WxH.targets`: per position, four bytes: the move played (in a
//!   self-play record the search's most visited, which differs from the
//!   move played on the opening plies sampled by temperature) as
//!   `y * W + x` (u16, little-endian), the result class for the side to move
//!   (0 win, 1 draw, 2 loss) and a zero byte;
//!
//! * `SPLIT-WxH.soft`, only when some game is a self-play record with
//!   search targets: per position, `H * W` values of policy (the search's
//!   visit shares, `y * W + x` order; the move played as a whole share for
//!   other games) and three of win, draw and loss for the side to move (the
//!   search's value; the result for other games), each an unsigned 16-bit
//!   little-endian count of [`SOFT_ONE`]ths (bytes rounded a one-visit
//!   share of a 400-playout search half as large again, and shares of
//!   longer searches to nothing).
//!
//! `index.tsv` listing them (`split`, `width`, `height`, `positions`,
//! `planes`, `bytes_per_position`), and `symmetries.tsv`: per symmetry
//! `0..8`, [`Symmetry::plane_order`]. Positions are in game order and encoded
//! under the identity: a trainer applies the symmetries itself, moving the
//! cells as [`Symmetry::map_cell`] does and reordering the planes by
//! [`Symmetry::plane_order`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::records::Dataset;
use wuzi_game::features::{encode, INPUT_PLANES};
use wuzi_game::game::{Board, BoardSize};
use wuzi_game::symmetry::Symmetry;

/// Bytes of one position's packed planes on a `height x width` board.
pub fn packed_len(height: usize, width: usize) -> usize {
    (INPUT_PLANES * height * width).div_ceil(8)
}

/// Packs 0/1 values eight to a byte, the first in the highest bit.
pub fn pack_bits(values: &[f32], out: &mut Vec<u8>) {
    for chunk in values.chunks(8) {
        let mut byte = 0u8;
        for (i, &v) in chunk.iter().enumerate() {
            if v != 0.0 {
                byte |= 0x80 >> i;
            }
        }
        out.push(byte);
    }
}

/// One shard's encoded positions.
#[derive(Default)]
struct Shard {
    planes: Vec<u8>,
    targets: Vec<u8>,
    soft: Vec<u8>,
    positions: usize,
}

/// A whole share in the soft targets: 15 bits, so that a reader may hold
/// them as signed 16-bit numbers.
pub const SOFT_ONE: u16 = 32767;

/// Values (16-bit) of one position's soft targets on a `height x width`
/// board; its bytes are twice as many.
pub fn soft_len(height: usize, width: usize) -> usize {
    height * width + 3
}

/// Appends the soft targets of the position before `ply` of `game`.
fn push_soft(game: &crate::records::Game, ply: u16, width: usize, out: &mut Vec<u8>) {
    let mut values = vec![0u16; soft_len(game.size.height() as usize, width)];
    let share = |v: f32| {
        (f32::from(SOFT_ONE) * v)
            .round()
            .clamp(0.0, f32::from(SOFT_ONE)) as u16
    };
    let n = values.len();
    match game.search_at(ply) {
        Some(t) => {
            for (p, s) in t.policy() {
                values[p.y() as usize * width + p.x() as usize] = share(s);
            }
            for (slot, &v) in values[n - 3..].iter_mut().zip(&t.wdl) {
                *slot = share(f32::from(v) / 1000.0);
            }
        }
        None => {
            if let Some(p) = game.moves.get(ply as usize) {
                values[p.y() as usize * width + p.x() as usize] = SOFT_ONE;
            }
            values[n - 3 + game.wdl_class(ply as usize) as usize] = SOFT_ONE;
        }
    }
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
}

/// Encodes every target position of `games` (indices into `data`), in game
/// order, grouped by board size; with `soft`, their soft targets too.
fn encode_games(
    data: &Dataset,
    games: &[usize],
    soft: bool,
) -> Result<BTreeMap<BoardSize, Shard>, String> {
    let mut shards: BTreeMap<BoardSize, Shard> = BTreeMap::new();
    let mut planes = Vec::new();
    for &g in games {
        let game = data
            .games
            .get(g)
            .ok_or_else(|| format!("unknown game {g}"))?;
        let (h, w) = (game.size.height() as usize, game.size.width() as usize);
        planes.resize(INPUT_PLANES * h * w, 0.0);
        let shard = shards.entry(game.size).or_default();
        let mut board = Board::new(game.size, data.rule);
        for (ply, &p) in game.moves.iter().enumerate().take(game.end_target as usize) {
            // At most 1024 plies (32x32), so u16 holds them.
            if game.is_target(ply as u16) {
                encode(&mut board, &mut planes, h, w);
                pack_bits(&planes, &mut shard.planes);
                let target = game.policy_move(ply as u16).unwrap_or(p);
                let index = target.y() as usize * w + target.x() as usize;
                let index = u16::try_from(index)
                    .map_err(|_| format!("game {}: move index {index} too large", game.id))?;
                shard.targets.extend_from_slice(&index.to_le_bytes());
                shard.targets.push(game.wdl_class(ply) as u8);
                shard.targets.push(0);
                if soft {
                    push_soft(game, ply as u16, w, &mut shard.soft);
                }
                shard.positions += 1;
            }
            board
                .play(p)
                .map_err(|e| format!("game {}: replay failed: {e}", game.id))?;
        }
    }
    Ok(shards)
}

/// Games encoded at once by [`export`].
const GAMES_PER_BATCH: usize = 1024;

/// One split's files for one board size, written as batches come.
struct ShardFiles {
    /// (path, writer) of planes, targets and, with soft targets, soft.
    files: Vec<(std::path::PathBuf, BufWriter<File>)>,
    positions: usize,
}

impl ShardFiles {
    fn create(dir: &Path, split: &str, size: BoardSize, soft: bool) -> Result<ShardFiles, String> {
        let stem = format!("{split}-{}x{}", size.width(), size.height());
        let mut names = vec!["planes", "targets"];
        if soft {
            names.push("soft");
        } else {
            // The trainer takes soft targets wherever the file is: one
            // left by an earlier export into this folder would be used
            // with these positions.
            let stale = dir.join(format!("{stem}.soft"));
            match std::fs::remove_file(&stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {}: {e}", stale.display())),
            }
        }
        let mut files = Vec::new();
        for ext in names {
            let path = dir.join(format!("{stem}.{ext}"));
            let file = File::create(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            files.push((path, BufWriter::new(file)));
        }
        Ok(ShardFiles {
            files,
            positions: 0,
        })
    }

    /// Appends `shard`; returns the bytes written.
    fn append(&mut self, shard: &Shard) -> Result<u64, String> {
        let mut bytes = 0;
        for ((path, out), data) in
            self.files
                .iter_mut()
                .zip([&shard.planes, &shard.targets, &shard.soft])
        {
            out.write_all(data)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            bytes += data.len() as u64;
        }
        self.positions += shard.positions;
        Ok(bytes)
    }

    /// Flushes the files; returns the positions written.
    fn finish(mut self) -> Result<usize, String> {
        for (path, out) in &mut self.files {
            out.flush()
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(self.positions)
    }
}

/// What [`export`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// (split, board size, positions) per file pair.
    pub shards: Vec<(String, BoardSize, usize)>,
    pub bytes: u64,
}

/// Encodes the target positions of `splits` (a name and its games, as from
/// [`Dataset::split`]) into `dir`, using `threads` threads.
pub fn export(
    data: &Dataset,
    splits: &[(&str, &[usize])],
    dir: &Path,
    threads: usize,
) -> Result<ExportSummary, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The shards are written as they come and the index last: an export
    // that fails midway leaves no index, so a trainer refuses the folder
    // rather than read an earlier export's index beside new shards.
    let index_path = dir.join("index.tsv");
    match std::fs::remove_file(&index_path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove {}: {e}", index_path.display())),
    }
    let mut index = String::from("split\twidth\theight\tpositions\tplanes\tbytes_per_position\n");
    let mut summary = ExportSummary::default();
    let soft = data.games.iter().any(|g| !g.search.is_empty());
    for &(name, games) in splits {
        let mut files: BTreeMap<BoardSize, ShardFiles> = BTreeMap::new();
        // A batch of games at a time, each split into contiguous chunks
        // (one a thread) that keep game order when written one after the
        // other: memory holds a batch's positions, not the split's.
        for batch in games.chunks(GAMES_PER_BATCH) {
            let threads = threads.clamp(1, batch.len().max(1));
            let chunk = batch.len().div_ceil(threads).max(1);
            let parts: Vec<Result<BTreeMap<BoardSize, Shard>, String>> = std::thread::scope(|s| {
                let handles: Vec<_> = batch
                    .chunks(chunk)
                    .map(|part| s.spawn(move || encode_games(data, part, soft)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err("an encoding thread panicked".into()))
                    })
                    .collect()
            });
            for part in parts {
                for (size, shard) in part? {
                    let out = match files.entry(size) {
                        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(ShardFiles::create(dir, name, size, soft)?)
                        }
                    };
                    summary.bytes += out.append(&shard)?;
                }
            }
        }
        for (size, out) in files {
            let positions = out.finish()?;
            let (w, h) = (size.width() as usize, size.height() as usize);
            let _ = writeln!(
                index,
                "{name}\t{w}\t{h}\t{positions}\t{INPUT_PLANES}\t{}",
                packed_len(h, w)
            );
            summary.shards.push((name.to_string(), size, positions));
        }
    }
    let path = dir.join("index.tsv");
    std::fs::write(&path, index).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut orders = String::from("# symmetry, then the source plane of each output plane\n");
    for k in 0..8 {
        let order = Symmetry::new(k).plane_order();
        let _ = writeln!(orders, "{k}\t{}", order.map(|p| p.to_string()).join("\t"));
    }
    let path = dir.join("symmetries.tsv");
    std::fs::write(&path, orders).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_pack_highest_first() {
        let mut out = Vec::new();
        pack_bits(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0], &mut out);
        assert_eq!(out, vec![0x81, 0x80]);
        assert_eq!(packed_len(15, 15), 1069);
    }
}
