//! The dihedral symmetries of the board, applied to network tensors.
//!
//! Symmetry `k` (0..8) rotates by `k % 4` quarter turns, then mirrors
//! left-right when `k >= 4`. A rectangular board keeps its shape only under
//! 0 (identity), 2 (half turn), 4 (left-right mirror) and 6 (top-bottom mirror).

use tch::Tensor;

use crate::nn::features::{PATTERN_BASE, PATTERN_KINDS};

/// A symmetry of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(u8);

impl Symmetry {
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// `k` modulo 8.
    pub const fn new(k: u8) -> Symmetry {
        Symmetry(k % 8)
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    /// The symmetries that keep a `height x width` board's shape.
    pub fn all_for(height: usize, width: usize) -> &'static [Symmetry] {
        const SQUARE: [Symmetry; 8] = [
            Symmetry(0),
            Symmetry(1),
            Symmetry(2),
            Symmetry(3),
            Symmetry(4),
            Symmetry(5),
            Symmetry(6),
            Symmetry(7),
        ];
        const RECTANGLE: [Symmetry; 4] = [Symmetry(0), Symmetry(2), Symmetry(4), Symmetry(6)];
        if height == width {
            &SQUARE
        } else {
            &RECTANGLE
        }
    }

    /// Applies the symmetry to network input `[N, INPUT_PLANES, H, W]`:
    /// moves the cells, and swaps the direction planes the way the symmetry
    /// turns the lines (a quarter turn swaps rows with columns and the two
    /// diagonals; a mirror swaps the diagonals).
    pub fn apply_to_input(self, x: &Tensor) -> Tensor {
        let moved = self.apply(x);
        let odd_turn = self.0 % 2 == 1;
        let mirror = self.0 >= 4;
        let swap_lines = odd_turn;
        let swap_diagonals = odd_turn != mirror;
        if !swap_lines && !swap_diagonals {
            return moved;
        }
        // Direction order in the planes: horizontal, vertical, diagonal, anti-diagonal.
        let mut dirs = [0i64, 1, 2, 3];
        if swap_lines {
            dirs.swap(0, 1);
        }
        if swap_diagonals {
            dirs.swap(2, 3);
        }
        let mut order: Vec<i64> = (0..PATTERN_BASE as i64).collect();
        for side in 0..2 {
            for &dir in &dirs {
                for kind in 0..PATTERN_KINDS as i64 {
                    order
                        .push(PATTERN_BASE as i64 + (side * 4 + dir) * PATTERN_KINDS as i64 + kind);
                }
            }
        }
        let index = Tensor::from_slice(&order).to_device(x.device());
        moved.index_select(1, &index)
    }

    /// Applies the symmetry to `[N, C, H, W]` tensors (the last two dims).
    pub fn apply(self, x: &Tensor) -> Tensor {
        let turns = (self.0 % 4) as i64;
        let rotated = if turns == 0 {
            x.shallow_clone()
        } else {
            x.rot90(turns, [2, 3])
        };
        if self.0 >= 4 {
            rotated.flip([3])
        } else {
            rotated
        }
    }

    /// Undoes [`Symmetry::apply`].
    pub fn invert(self, x: &Tensor) -> Tensor {
        let unflipped = if self.0 >= 4 {
            x.flip([3])
        } else {
            x.shallow_clone()
        };
        let turns = (self.0 % 4) as i64;
        if turns == 0 {
            unflipped
        } else {
            unflipped.rot90(-turns, [2, 3])
        }
    }

    /// Where the cell (x, y) of a `height x width` board goes.
    pub fn map_cell(self, x: usize, y: usize, height: usize, width: usize) -> (usize, usize) {
        // rot90 on dims (H, W) turns (row, col) into (W-1-col, row).
        let (mut r, mut c, mut h, mut w) = (y, x, height, width);
        for _ in 0..self.0 % 4 {
            (r, c) = (w - 1 - c, r);
            (h, w) = (w, h);
        }
        if self.0 >= 4 {
            c = w - 1 - c;
        }
        let _ = h;
        (c, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;

    #[test]
    fn every_symmetry_inverts_and_moves_cells_as_map_cell_says() {
        for (h, w) in [(5usize, 5usize), (5, 7)] {
            let x = Tensor::arange((h * w) as i64, (Kind::Float, tch::Device::Cpu))
                .view([1, 1, h as i64, w as i64]);
            for &s in Symmetry::all_for(h, w) {
                let y = s.apply(&x);
                assert_eq!(y.size(), vec![1, 1, h as i64, w as i64], "{s:?}");
                assert!(s.invert(&y).equal(&x), "{s:?} inverts");
                for yy in 0..h {
                    for xx in 0..w {
                        let (tx, ty) = s.map_cell(xx, yy, h, w);
                        let moved = y.double_value(&[0, 0, ty as i64, tx as i64]);
                        assert_eq!(moved as usize, yy * w + xx, "{s:?} cell {xx},{yy}");
                    }
                }
            }
            let distinct: std::collections::HashSet<Vec<i64>> = Symmetry::all_for(h, w)
                .iter()
                .map(|s| {
                    Vec::<i64>::try_from(s.apply(&x).flatten(0, -1).to_kind(Kind::Int64)).unwrap()
                })
                .collect();
            assert_eq!(distinct.len(), Symmetry::all_for(h, w).len());
        }
    }
}
