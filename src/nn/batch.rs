//! What every backend takes and gives: a batch of positions encoded as
//! `features::encode` writes them, and the network's answer for each.

use std::fmt;
use std::time::{Duration, Instant};

use crate::nn::features::INPUT_PLANES;

/// Positions encoded for the network: each `INPUT_PLANES * height * width`
/// planar floats. Made only from floats that are whole positions, so that
/// a backend need not check the shape again.
#[derive(Clone, Copy, Debug)]
pub struct EncodedBatch<'a> {
    planes: &'a [f32],
    positions: usize,
    height: usize,
    width: usize,
}

/// Floats that are not whole encoded positions of the board named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchShapeError {
    pub floats: usize,
    pub height: usize,
    pub width: usize,
}

impl fmt::Display for BatchShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} floats are not whole positions of {INPUT_PLANES} planes of {}x{}",
            self.floats, self.width, self.height
        )
    }
}

impl std::error::Error for BatchShapeError {}

impl<'a> EncodedBatch<'a> {
    /// The positions in `planes` on a `height` x `width` board (none if
    /// `planes` is empty).
    pub fn new(
        planes: &'a [f32],
        height: usize,
        width: usize,
    ) -> Result<EncodedBatch<'a>, BatchShapeError> {
        let position = INPUT_PLANES * height * width;
        if position == 0 || !planes.len().is_multiple_of(position) {
            return Err(BatchShapeError {
                floats: planes.len(),
                height,
                width,
            });
        }
        Ok(EncodedBatch {
            planes,
            positions: planes.len() / position,
            height,
            width,
        })
    }

    /// Every position's planes, one position after another.
    pub fn planes(&self) -> &'a [f32] {
        self.planes
    }

    pub fn positions(&self) -> usize {
        self.positions
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Cells of the board.
    pub fn area(&self) -> usize {
        self.height * self.width
    }
}

/// The network's answer for a batch, position after position: policy
/// probabilities (`area` each, zero on illegal cells) and win, draw, loss
/// probabilities (3 each).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchOutput {
    pub policy: Vec<f32>,
    pub wdl: Vec<f32>,
}

/// Positions per second of `pass`, one forward pass over a batch of
/// `positions`, run for about `time` (at least once) after one warm-up
/// pass: how every backend's speed is measured.
pub fn measure_rate(positions: usize, time: Duration, mut pass: impl FnMut()) -> f64 {
    pass();
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < time || runs == 0 {
        pass();
        runs += 1;
    }
    (runs * positions as u64) as f64 / start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_positions_make_a_batch() {
        let position = INPUT_PLANES * 15 * 15;
        let floats = vec![0.0; 3 * position];
        let batch = EncodedBatch::new(&floats, 15, 15).expect("three positions");
        assert_eq!((batch.positions(), batch.area()), (3, 225));
        assert_eq!(batch.planes().len(), 3 * position);
        // On a board 20 wide and 10 high the same floats are not whole
        // positions (sizes read width x height).
        let wrong = EncodedBatch::new(&floats, 10, 20).expect_err("not whole");
        assert_eq!(
            wrong,
            BatchShapeError {
                floats: 3 * position,
                height: 10,
                width: 20
            }
        );
        assert!(wrong.to_string().contains("20x10"), "{wrong}");
        assert!(EncodedBatch::new(&floats[1..], 15, 15).is_err());
        assert!(EncodedBatch::new(&floats, 0, 15).is_err());
        assert_eq!(EncodedBatch::new(&[], 15, 15).map(|b| b.positions()), Ok(0));
    }
}
