//! Dirichlet noise on the root's priors, AlphaZero's exploration for
//! self-play: without it a full search spends its visits where the network
//! already looks, and its targets mostly teach the network what it believes.
//! With it, a few moves drawn at random each search get a share of the
//! prior, so a good move the network rates low is found and learnt.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Gamma};

use super::node::Edge;

/// Noise mixed into the priors of one search's root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootNoise {
    /// Share of the noise in the mixed prior, in (0, 1].
    pub weight: f32,
    /// The Dirichlet concentration summed over the root's moves, each move
    /// getting an equal part: the noise's sparseness then does not depend
    /// on how many moves the root has (KataGo's rule; AlphaZero's 0.03 per
    /// move of Go's 361 is 10.83 in all).
    pub total_alpha: f32,
    /// The seed of this search's draw.
    pub seed: u64,
}

impl RootNoise {
    /// Self-play's defaults: AlphaZero's and KataGo's weight and
    /// concentration.
    pub const WEIGHT: f32 = 0.25;
    pub const TOTAL_ALPHA: f32 = 10.83;

    /// Checks the two settings a user gives.
    pub fn new(weight: f32, total_alpha: f32, seed: u64) -> Result<RootNoise, String> {
        if !(weight > 0.0 && weight <= 1.0) {
            return Err(format!(
                "the root noise's weight must be in (0, 1], not {weight}"
            ));
        }
        if !(total_alpha.is_finite() && total_alpha > 0.0) {
            return Err(format!(
                "the root noise's concentration must be a positive number, not {total_alpha}"
            ));
        }
        Ok(RootNoise {
            weight,
            total_alpha,
            seed,
        })
    }

    /// Mixes a Dirichlet draw into the edges' priors and sorts the edges by
    /// their new priors, highest first (as expanded edges are). Priors
    /// summing to one still do afterwards. A root with one move keeps it.
    pub fn apply(&self, edges: &mut [Edge]) {
        if edges.len() < 2 {
            return;
        }
        let alpha = self.total_alpha / edges.len() as f32;
        let Ok(gamma) = Gamma::new(alpha, 1.0) else {
            return;
        };
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let draws: Vec<f32> = edges.iter().map(|_| gamma.sample(&mut rng)).collect();
        let total: f32 = draws.iter().sum();
        // Every draw can underflow to zero at a tiny concentration: then
        // there is nothing to mix in.
        if !(total.is_finite() && total > 0.0) {
            return;
        }
        for (edge, draw) in edges.iter_mut().zip(draws) {
            edge.prior = (1.0 - self.weight) * edge.prior + self.weight * draw / total;
        }
        edges.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Point;

    fn edges(priors: &[f32]) -> Vec<Edge> {
        priors
            .iter()
            .enumerate()
            .map(|(i, &p)| Edge::new(Point::new((i % 20) as u8, (i / 20) as u8).unwrap(), p))
            .collect()
    }

    fn noise(seed: u64) -> RootNoise {
        RootNoise::new(RootNoise::WEIGHT, RootNoise::TOTAL_ALPHA, seed).unwrap()
    }

    #[test]
    fn noise_keeps_a_distribution_sorted_and_moves_at_most_its_weight() {
        // A network sure of one move among 30.
        let mut priors = vec![0.01 / 29.0; 30];
        priors[0] = 0.99;
        for seed in 0..50 {
            let mut e = edges(&priors);
            noise(seed).apply(&mut e);
            let total: f32 = e.iter().map(|e| e.prior).sum();
            assert!((total - 1.0).abs() < 1e-5, "seed {seed}: sum {total}");
            assert!(e.windows(2).all(|w| w[0].prior >= w[1].prior));
            for edge in &e {
                let before = priors[edge.mv.y() as usize * 20 + edge.mv.x() as usize];
                assert!(edge.prior >= 0.75 * before - 1e-7);
                assert!(edge.prior <= 0.75 * before + 0.25 + 1e-7);
            }
            // The favourite keeps at least three quarters of its prior.
            let first = e
                .iter()
                .find(|e| e.mv == Point::new(0, 0).unwrap())
                .unwrap();
            assert!(first.prior >= 0.7425 - 1e-6);
        }
    }

    #[test]
    fn noise_is_sparse_reproducible_and_differs_by_seed() {
        let uniform = vec![1.0 / 200.0; 200];
        let draw = |seed| {
            let mut e = edges(&uniform);
            noise(seed).apply(&mut e);
            e
        };
        assert_eq!(draw(7), draw(7));
        let (a, b) = (draw(7), draw(8));
        assert_ne!(
            a.iter().map(|e| e.mv).collect::<Vec<_>>(),
            b.iter().map(|e| e.mv).collect::<Vec<_>>()
        );
        // A concentration of about 11 over 200 moves puts most of the
        // noise on a few of them: the top move takes a real share, and
        // most moves keep about their old prior.
        let mut lifted_most = 0;
        for seed in 0..40 {
            let e = draw(seed);
            if e[0].prior > 0.75 / 200.0 + 0.25 * 0.1 {
                lifted_most += 1;
            }
            let unchanged = e
                .iter()
                .filter(|e| e.prior < 0.75 / 200.0 + 0.25 * 0.001)
                .count();
            assert!(
                unchanged > 100,
                "seed {seed}: {unchanged} moves near their prior"
            );
        }
        assert!(
            lifted_most > 30,
            "{lifted_most} of 40 draws lifted one move by 0.025"
        );
    }

    #[test]
    fn one_move_and_bad_settings() {
        let mut e = edges(&[1.0]);
        noise(3).apply(&mut e);
        assert_eq!(e[0].prior, 1.0);
        for (w, a) in [
            (0.0, 10.0),
            (1.5, 10.0),
            (f32::NAN, 10.0),
            (0.25, 0.0),
            (0.25, f32::INFINITY),
        ] {
            assert!(RootNoise::new(w, a, 1).is_err(), "{w} {a}");
        }
    }
}
