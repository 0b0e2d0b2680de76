//! The dihedral symmetries of the board.
//!
//! Symmetry `k` (0..8) rotates by `k % 4` quarter turns, then mirrors
//! left-right when `k >= 4`. A rectangular board keeps its shape only under
//! 0 (identity), 2 (half turn), 4 (left-right mirror) and 6 (top-bottom mirror).
//! The engine applies them to network tensors (`wuzi::nn::symmetry`); other
//! trainers follow [`Symmetry::map_cell`] and [`Symmetry::plane_order`].

use crate::features::{INPUT_PLANES, PATTERN_BASE, PATTERN_KINDS};

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

    /// Quarter turns before the mirror.
    pub const fn quarter_turns(self) -> u8 {
        self.0 % 4
    }

    /// Whether a left-right mirror follows the turns.
    pub const fn mirrors(self) -> bool {
        self.0 >= 4
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

    /// The input planes in their order after the symmetry: plane `i` of the
    /// transformed input is plane `plane_order()[i]` of the original. A
    /// quarter turn swaps rows with columns and the two diagonals; a mirror
    /// swaps the diagonals; the other planes do not depend on direction.
    pub fn plane_order(self) -> [usize; INPUT_PLANES] {
        let odd_turn = self.0 % 2 == 1;
        let swap_lines = odd_turn;
        let swap_diagonals = odd_turn != self.mirrors();
        // Direction order in the planes: horizontal, vertical, diagonal, anti-diagonal.
        let mut dirs = [0usize, 1, 2, 3];
        if swap_lines {
            dirs.swap(0, 1);
        }
        if swap_diagonals {
            dirs.swap(2, 3);
        }
        let mut order = [0usize; INPUT_PLANES];
        for (i, o) in order.iter_mut().enumerate().take(PATTERN_BASE) {
            *o = i;
        }
        let mut next = PATTERN_BASE;
        for side in 0..2 {
            for &dir in &dirs {
                for kind in 0..PATTERN_KINDS {
                    order[next] = PATTERN_BASE + (side * 4 + dir) * PATTERN_KINDS + kind;
                    next += 1;
                }
            }
        }
        order
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

    #[test]
    fn plane_orders_are_permutations_fixed_by_the_identity() {
        for k in 0..8 {
            let order = Symmetry::new(k).plane_order();
            let mut seen = order.to_vec();
            seen.sort_unstable();
            assert_eq!(seen, (0..INPUT_PLANES).collect::<Vec<_>>(), "symmetry {k}");
        }
        let identity = Symmetry::IDENTITY.plane_order();
        assert!(identity.iter().enumerate().all(|(i, &p)| i == p));
        // A quarter turn makes the horizontal planes vertical.
        let turn = Symmetry::new(1).plane_order();
        assert_eq!(turn[PATTERN_BASE], PATTERN_BASE + PATTERN_KINDS);
    }
}
