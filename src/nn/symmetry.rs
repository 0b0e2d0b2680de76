//! The board's symmetries ([`wuzi_game::symmetry`]) applied to network
//! tensors.

#[cfg(feature = "torch")]
use tch::Tensor;

pub use wuzi_game::symmetry::Symmetry;

/// [`Symmetry`] on `[N, C, H, W]` tensors.
#[cfg(feature = "torch")]
pub trait TensorSymmetry {
    /// Applies the symmetry to network input `[N, INPUT_PLANES, H, W]`:
    /// moves the cells, and reorders the direction planes as
    /// [`Symmetry::plane_order`] says.
    fn apply_to_input(self, x: &Tensor) -> Tensor;
    /// Applies the symmetry to `[N, C, H, W]` tensors (the last two dims).
    fn apply(self, x: &Tensor) -> Tensor;
    /// Undoes [`TensorSymmetry::apply`].
    fn invert(self, x: &Tensor) -> Tensor;
}

#[cfg(feature = "torch")]
impl TensorSymmetry for Symmetry {
    fn apply_to_input(self, x: &Tensor) -> Tensor {
        let moved = self.apply(x);
        let order = self.plane_order();
        if order.iter().enumerate().all(|(i, &p)| i == p) {
            return moved;
        }
        let order: Vec<i64> = order.iter().map(|&p| p as i64).collect();
        let index = Tensor::from_slice(&order).to_device(x.device());
        moved.index_select(1, &index)
    }

    fn apply(self, x: &Tensor) -> Tensor {
        let turns = self.quarter_turns() as i64;
        let rotated = if turns == 0 {
            x.shallow_clone()
        } else {
            x.rot90(turns, [2, 3])
        };
        if self.mirrors() {
            rotated.flip([3])
        } else {
            rotated
        }
    }

    fn invert(self, x: &Tensor) -> Tensor {
        let unflipped = if self.mirrors() {
            x.flip([3])
        } else {
            x.shallow_clone()
        };
        let turns = self.quarter_turns() as i64;
        if turns == 0 {
            unflipped
        } else {
            unflipped.rot90(-turns, [2, 3])
        }
    }
}

#[cfg(all(test, feature = "torch"))]
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
