//! Match statistics: Elo difference with a 95% margin, likelihood of
//! superiority (LOS), and the sequential probability ratio test (SPRT).
//!
//! The formulas are cutechess-cli's: the margin comes from the trinomial
//! (win/draw/loss) variance of the mean score, LOS from the normal
//! approximation of wins against losses, and the SPRT log-likelihood ratio
//! from the BayesElo trinomial model with the draw Elo estimated from the
//! sample. Two more models use the logistic GSPRT approximation of fishtest
//! and c-chess-cli: over single games, and over opening pairs (the
//! pentanomial model: a pair's two games, colours swapped, are correlated
//! through their opening, and counting pairs takes that into account).

use std::fmt;

/// The 97.5% quantile of the standard normal distribution (two-sided 95%).
const Z_975: f64 = 1.959_963_984_540_054;

/// Wins, losses and draws from one side's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wld {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

impl Wld {
    pub const fn new(wins: u32, losses: u32, draws: u32) -> Wld {
        Wld {
            wins,
            losses,
            draws,
        }
    }

    pub const fn games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    /// Points: a win is 1, a draw 1/2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// Mean score in `0..=1`; 0.5 with no games.
    pub fn score(&self) -> f64 {
        match self.games() {
            0 => 0.5,
            n => self.points() / n as f64,
        }
    }

    /// The mean score per game and its variance (a win 1, a draw 1/2, a
    /// loss 0); `None` with no games.
    pub fn score_moments(&self) -> Option<(f64, f64)> {
        (self.games() > 0).then(|| self.moments_with(0.0))
    }

    /// The mean score and its variance with `extra` games added to each
    /// outcome (0 for the results as they are).
    fn moments_with(&self, extra: f64) -> (f64, f64) {
        let n = self.games() as f64 + 3.0 * extra;
        let (w, l, d) = (
            (self.wins as f64 + extra) / n,
            (self.losses as f64 + extra) / n,
            (self.draws as f64 + extra) / n,
        );
        let mean = w + d / 2.0;
        let variance = w * (1.0 - mean).powi(2) + l * mean.powi(2) + d * (0.5 - mean).powi(2);
        (mean, variance)
    }

    /// The same games from the other side's point of view.
    pub const fn flipped(&self) -> Wld {
        Wld::new(self.losses, self.wins, self.draws)
    }

    pub fn add(&mut self, other: Wld) {
        self.wins += other.wins;
        self.losses += other.losses;
        self.draws += other.draws;
    }
}

impl fmt::Display for Wld {
    /// `W - L - D [score]`, as cutechess prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} - {} - {}  [{:.3}]",
            self.wins,
            self.losses,
            self.draws,
            self.score()
        )
    }
}

/// Completed opening pairs (the same opening, colours swapped) by the
/// points one engine took from the pair: 0, 1/2, 1, 3/2 or 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial {
    pub counts: [u32; 5],
}

impl Pentanomial {
    /// Adds the pair of games `first` and `second` (one game each).
    pub fn add_pair(&mut self, first: Wld, second: Wld) {
        debug_assert!(first.games() == 1 && second.games() == 1);
        // Points are whole halves: twice them is the cell.
        let halves = 2 * (first.wins + second.wins) + first.draws + second.draws;
        if let Some(cell) = self.counts.get_mut(halves as usize) {
            *cell += 1;
        }
    }

    pub fn pairs(&self) -> u32 {
        self.counts.iter().sum()
    }

    /// The mean score per game of a pair and its variance over pairs;
    /// `None` with no pairs.
    pub fn score_moments(&self) -> Option<(f64, f64)> {
        (self.pairs() > 0).then(|| self.moments_with(0.0))
    }

    /// The moments with `extra` pairs added to each cell.
    fn moments_with(&self, extra: f64) -> (f64, f64) {
        let n = self.pairs() as f64 + 5.0 * extra;
        let share = |c: u32| (c as f64 + extra) / n;
        let score = |cell: usize| cell as f64 / 4.0;
        let mean: f64 = (0..5).map(|i| share(self.counts[i]) * score(i)).sum();
        let variance = (0..5)
            .map(|i| share(self.counts[i]) * (score(i) - mean).powi(2))
            .sum();
        (mean, variance)
    }

    /// The Elo difference with the ends of its 95% interval, from the
    /// spread of the pairs' scores; `None` with no pairs, or while every
    /// pair is alike.
    pub fn elo_interval(&self) -> Option<(f64, f64, f64)> {
        let (mean, variance) = self.score_moments().filter(|&(_, v)| v > 0.0)?;
        let stdev = (variance / self.pairs() as f64).sqrt();
        Some((
            elo_from_score(mean),
            elo_from_score((mean - Z_975 * stdev).max(0.0)),
            elo_from_score((mean + Z_975 * stdev).min(1.0)),
        ))
    }
}

impl fmt::Display for Pentanomial {
    /// The five counts, from pairs lost twice to pairs won twice.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e] = self.counts;
        write!(f, "{a} {b} {c} {d} {e}")
    }
}

/// The logistic Elo difference of a mean score: `-400 log10(1/s - 1)`
/// (infinite at 0 and 1).
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of an Elo difference (inverse of [`elo_from_score`]).
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The error function, from the Chebyshev fit of Numerical Recipes' `erfcc`
/// (fractional error below 1.2e-7 everywhere).
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 {
        1.0 - erfc
    } else {
        erfc - 1.0
    }
}

/// An Elo estimate from a match result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// Mean score in `0..=1`.
    pub score: f64,
    /// Elo difference (may be infinite after a clean sweep).
    pub elo: f64,
    /// Half-width of the 95% confidence interval, in Elo: infinite where
    /// the interval reaches a score of 0 or 1 (NaN after a clean sweep).
    pub margin: f64,
    /// Ends of the 95% confidence interval, in Elo: infinite where it
    /// reaches a score of 0 or 1 (the interval is not symmetric in Elo,
    /// and after a near sweep only one end is finite).
    pub lower: f64,
    pub upper: f64,
    /// Likelihood of superiority in `0..=1`.
    pub los: f64,
    /// Share of draws.
    pub draw_ratio: f64,
}

impl EloEstimate {
    /// `None` without games.
    pub fn new(wld: Wld) -> Option<EloEstimate> {
        let (mu, variance) = wld.score_moments()?;
        let n = wld.games() as f64;
        let stdev = variance.sqrt() / n.sqrt();
        let (lower, upper) = (
            elo_from_score((mu - Z_975 * stdev).max(0.0)),
            elo_from_score((mu + Z_975 * stdev).min(1.0)),
        );
        Some(EloEstimate {
            score: mu,
            elo: elo_from_score(mu),
            margin: (upper - lower) / 2.0,
            lower,
            upper,
            los: los(wld),
            draw_ratio: wld.draws as f64 / n,
        })
    }
}

/// Likelihood of superiority: `0.5 (1 + erf((W - L) / sqrt(2 (W + L))))`;
/// 0.5 when every game was drawn.
pub fn los(wld: Wld) -> f64 {
    let decisive = (wld.wins + wld.losses) as f64;
    if decisive == 0.0 {
        return 0.5;
    }
    0.5 * (1.0 + erf((wld.wins as f64 - wld.losses as f64) / (2.0 * decisive).sqrt()))
}

/// How the SPRT's log-likelihood ratio is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtModel {
    /// cutechess-cli: the BayesElo trinomial model, the draw Elo estimated
    /// from the sample, the hypotheses' Elo converted to BayesElo with the
    /// sample's scale. Needs at least one win and one loss; draws may be
    /// absent (the draw term then vanishes: a binomial test).
    BayesElo,
    /// The generalised SPRT with the normal approximation of the score
    /// (fishtest, c-chess-cli): `N (s1 - s0)(2 mean - s0 - s1) / (2 var)`,
    /// with `s0`, `s1` the logistic scores of `elo0`, `elo1`.
    Gsprt,
    /// The same over completed opening pairs (fishtest's pentanomial
    /// model): `N` pairs, the mean and variance of a pair's score.
    Pentanomial,
}

/// The SPRT's settings: H0 `elo = elo0` against H1 `elo = elo1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtParams {
    pub elo0: f64,
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds (false positive).
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds (false negative).
    pub beta: f64,
    pub model: SprtModel,
}

/// What the SPRT says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    Continue,
    AcceptH0,
    AcceptH1,
}

/// The SPRT's state after some games.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtStatus {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    pub decision: SprtDecision,
}

impl SprtParams {
    /// Defaults as in cutechess-cli: elo0 0, alpha = beta = 0.05, BayesElo.
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> SprtParams {
        SprtParams {
            elo0,
            elo1,
            alpha,
            beta,
            model: SprtModel::BayesElo,
        }
    }

    /// Parses `elo0=E0 elo1=E1 alpha=A beta=B model=bayeselo|gsprt|pentanomial` tokens
    /// (only `elo1` is required).
    pub fn parse(tokens: &[String]) -> Result<SprtParams, String> {
        let mut params = SprtParams::new(0.0, f64::NAN, 0.05, 0.05);
        for token in tokens.iter().flat_map(|t| t.split_whitespace()) {
            let (key, value) = token
                .split_once('=')
                .ok_or_else(|| format!("SPRT setting {token:?} is not KEY=VALUE"))?;
            let number = || {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("SPRT setting {key}: {value:?} is not a number"))
            };
            match key.to_ascii_lowercase().as_str() {
                "elo0" => params.elo0 = number()?,
                "elo1" => params.elo1 = number()?,
                "alpha" => params.alpha = number()?,
                "beta" => params.beta = number()?,
                "model" => {
                    params.model = match value.to_ascii_lowercase().as_str() {
                        "bayeselo" | "cutechess" | "trinomial" => SprtModel::BayesElo,
                        "gsprt" | "logistic" | "normal" => SprtModel::Gsprt,
                        "pentanomial" | "ptnml" | "pairs" => SprtModel::Pentanomial,
                        other => {
                            return Err(format!(
                                "SPRT model {other:?}: expected bayeselo, gsprt or pentanomial"
                            ))
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "unknown SPRT setting {other:?}: expected elo0, elo1, alpha, beta or model"
                    ))
                }
            }
        }
        if params.elo1.is_nan() {
            return Err("the SPRT needs elo1=E1".to_string());
        }
        if params.elo1 <= params.elo0 {
            return Err(format!(
                "SPRT: elo1 ({}) must be above elo0 ({})",
                params.elo1, params.elo0
            ));
        }
        for (name, p) in [("alpha", params.alpha), ("beta", params.beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!("SPRT: {name} must be in (0, 0.5), got {p}"));
            }
        }
        Ok(params)
    }

    /// The stopping bounds `(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 against H0 for the games of the
    /// completed pairs `pairs`, `wld` (0 while it cannot be computed yet).
    pub fn llr(&self, wld: Wld, pairs: &Pentanomial) -> f64 {
        match self.model {
            SprtModel::BayesElo => llr_bayeselo(wld, self.elo0, self.elo1),
            SprtModel::Gsprt => llr_gsprt(wld, self.elo0, self.elo1),
            SprtModel::Pentanomial => llr_pentanomial(pairs, self.elo0, self.elo1),
        }
    }

    pub fn status(&self, wld: Wld, pairs: &Pentanomial) -> SprtStatus {
        let llr = self.llr(wld, pairs);
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        };
        SprtStatus {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

impl fmt::Display for SprtModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SprtModel::BayesElo => "bayeselo",
            SprtModel::Gsprt => "gsprt",
            SprtModel::Pentanomial => "pentanomial",
        })
    }
}

/// The logarithms of the win, loss and draw probabilities of the BayesElo
/// model. In logarithms because far from zero Elo (a tiny scale from a
/// sample of nearly all draws) `1 - win - loss` rounds to zero or below
/// and the ratio of two of them is NaN.
fn bayeselo_ln_probabilities(bayes_elo: f64, draw_elo: f64) -> (f64, f64, f64) {
    let k = std::f64::consts::LN_10 / 400.0;
    // ln(1 + e^x) without overflow.
    let softplus = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    let ln_win = -softplus((draw_elo - bayes_elo) * k);
    let ln_loss = -softplus((draw_elo + bayes_elo) * k);
    // draw = (uv - 1) / ((1 + u)(1 + v)) with u, v the two powers of ten
    // above, divided through by the larger: symmetric in the sign of b.
    let b = bayes_elo.abs();
    let ln_two_sinh = draw_elo * k + (-(-2.0 * draw_elo * k).exp_m1()).ln();
    let ln_draw =
        -b * k + ln_two_sinh - softplus((draw_elo - b) * k) - softplus(-(draw_elo + b) * k);
    (ln_win, ln_loss, ln_draw)
}

/// cutechess-cli's log-likelihood ratio (BayesElo trinomial model).
pub fn llr_bayeselo(wld: Wld, elo0: f64, elo1: f64) -> f64 {
    if wld.games() == 0 {
        return 0.0;
    }
    let n = wld.games() as f64;
    let (w, l, d) = (wld.wins as f64, wld.losses as f64, wld.draws as f64);
    // The draw Elo is estimated from the results; without a win or without
    // a loss it would be infinite, so half a game is added to each outcome
    // for the estimate (cutechess-cli returns 0 there, and a side that never
    // lost could then never be accepted).
    let one_sided = wld.wins == 0 || wld.losses == 0;
    let (pw, pl) = if one_sided {
        ((w + 0.5) / (n + 1.5), (l + 0.5) / (n + 1.5))
    } else {
        (w / n, l / n)
    };
    let draw_elo = if wld.draws == 0 && !one_sided {
        0.0
    } else {
        200.0 * ((1.0 - pl) / pl * (1.0 - pw) / pw).log10()
    };
    let x = 10f64.powf(-draw_elo / 400.0);
    let scale = 4.0 * x / ((1.0 + x) * (1.0 + x));
    let (w0, l0, d0) = bayeselo_ln_probabilities(elo0 / scale, draw_elo);
    let (w1, l1, d1) = bayeselo_ln_probabilities(elo1 / scale, draw_elo);
    let mut llr = w * (w1 - w0) + l * (l1 - l0);
    if wld.draws > 0 {
        llr += d * (d1 - d0);
    }
    llr
}

/// The generalised SPRT's log-likelihood ratio, normal approximation
/// (logistic Elo).
pub fn llr_gsprt(wld: Wld, elo0: f64, elo1: f64) -> f64 {
    let Some((mean, _)) = wld.score_moments() else {
        return 0.0;
    };
    // The variance with half a game added to each outcome, always (as the
    // pentanomial model's): a few alike games have almost no spread, and
    // five wins and a draw crossed the bound of (0, 50) taken as they
    // were; a sweep is still accepted rather than never decided.
    let variance = wld.moments_with(0.5).1;
    gsprt(wld.games() as f64, mean, variance, elo0, elo1)
}

/// The normal approximation's LLR for `n` observations of the score per
/// game with `mean` and `variance`: `N (s1 - s0)(2 mean - s0 - s1) / (2
/// var)`, with `s0`, `s1` the logistic scores of `elo0`, `elo1`.
fn gsprt(n: f64, mean: f64, variance: f64, elo0: f64, elo1: f64) -> f64 {
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)
}

/// The generalised SPRT's log-likelihood ratio over opening pairs, normal
/// approximation (logistic Elo).
pub fn llr_pentanomial(pairs: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    let Some((mean, _)) = pairs.score_moments() else {
        return 0.0;
    };
    // The variance with half a pair added to each cell, always: the first
    // few pairs are often alike, and their spread taken as it is would let
    // two or three pairs cross a bound (a match was stopped after five
    // games this way). The added pairs weigh nothing after a few dozen.
    let variance = pairs.moments_with(0.5).1;
    gsprt(pairs.pairs() as f64, mean, variance, elo0, elo1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, e) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!((erf(x) - e).abs() < 1e-6, "erf({x}) = {}", erf(x));
        }
    }

    /// The model's probabilities as they read, for comparison.
    fn bayeselo_probabilities(bayes_elo: f64, draw_elo: f64) -> (f64, f64, f64) {
        let win = 1.0 / (1.0 + 10f64.powf((draw_elo - bayes_elo) / 400.0));
        let loss = 1.0 / (1.0 + 10f64.powf((draw_elo + bayes_elo) / 400.0));
        (win, loss, 1.0 - win - loss)
    }

    #[test]
    fn bayeselo_logarithms_are_the_models_probabilities() {
        for (b, d) in [(0.0, 100.0), (35.0, 0.1), (-120.0, 250.0), (600.0, 40.0)] {
            let (w, l, dr) = bayeselo_probabilities(b, d);
            let (lw, ll, ld) = bayeselo_ln_probabilities(b, d);
            for (p, lp) in [(w, lw), (l, ll), (dr, ld)] {
                assert!(
                    (p.ln() - lp).abs() < 1e-9,
                    "b {b} d {d}: ln {p} against {lp}"
                );
            }
        }
    }

    #[test]
    fn bayeselo_llr_stays_finite_on_samples_of_draws() {
        // Nearly all draws make the scale tiny and the model's Elo huge:
        // `1 - win - loss` rounded to zero there and the LLR was NaN.
        for draws in [1, 100, 4_000, 1_000_000] {
            for (wins, losses) in [(0, 0), (1, 0), (0, 1), (3, 2)] {
                let wld = Wld {
                    wins,
                    losses,
                    draws,
                };
                for (elo0, elo1) in [(-5.0, 5.0), (0.0, 40.0), (-30.0, 10.0)] {
                    let llr = llr_bayeselo(wld, elo0, elo1);
                    assert!(
                        llr.is_finite(),
                        "{wins}-{losses}-{draws} ({elo0}, {elo1}): {llr}"
                    );
                }
            }
        }
    }

    #[test]
    fn score_and_elo_are_inverse() {
        for elo in [-300.0, -10.0, 0.0, 35.5, 400.0] {
            assert!((elo_from_score(score_from_elo(elo)) - elo).abs() < 1e-9);
        }
    }
}
