"""Elo and the SPRT of pooled match results, with the formulas of
`pbrain-wuzi match` (crates/wuzi-arena/src/arena/stats.rs, cutechess-cli's):
gating tasks on several machines each play part of the games, and the
decision is taken on their sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_975 = 1.959963984540054


@dataclass(frozen=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def bounds(self) -> tuple[float, float]:
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, wins: int, losses: int, draws: int) -> float:
        return llr_bayeselo(wins, losses, draws, self.elo0, self.elo1)

    def decision(self, wins: int, losses: int, draws: int) -> str:
        """'H1' (the candidate is stronger by elo1: promote), 'H0', or
        'undecided'."""
        llr = self.llr(wins, losses, draws)
        lower, upper = self.bounds()
        if llr >= upper:
            return "H1"
        if llr <= lower:
            return "H0"
        return "undecided"

    def engine_argument(self) -> str:
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}"


def elo_from_score(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def elo_estimate(wins: int, losses: int, draws: int) -> tuple[float, float]:
    """The Elo difference and the half-width of its 95% interval (nan
    without games; infinite after a clean sweep)."""
    n = wins + losses + draws
    if n == 0:
        return math.nan, math.nan
    w, l, d = wins / n, losses / n, draws / n
    mu = w + d / 2
    variance = w * (1 - mu) ** 2 + l * mu ** 2 + d * (0.5 - mu) ** 2
    stdev = math.sqrt(variance) / math.sqrt(n)
    margin = (elo_from_score(mu + Z_975 * stdev) - elo_from_score(mu - Z_975 * stdev)) / 2
    return elo_from_score(mu), margin


def recorded_elo(wins: int, losses: int, draws: int) -> tuple[float, float]:
    """`elo_estimate` as the loop stores it: JSON has no infinity or NaN
    (jq and most readers refuse them), so a clean sweep counts half a game
    each way, an interval open on one side (a score near 1 or 0) takes the
    width of its closed side, and no games at all is 0 ± 0."""
    n = wins + losses + draws
    if n == 0:
        return 0.0, 0.0
    if wins == n or losses == n:
        wins, losses = wins + 0.5, losses + 0.5
        n += 1
    elo, margin = elo_estimate(wins, losses, draws)
    if math.isfinite(margin):
        return elo, margin
    w, l, d = wins / n, losses / n, draws / n
    mu = w + d / 2
    stdev = math.sqrt(w * (1 - mu) ** 2 + l * mu ** 2 + d * (0.5 - mu) ** 2) / math.sqrt(n)
    sides = [abs(elo - elo_from_score(mu + sign * Z_975 * stdev)) for sign in (-1, 1)]
    if math.isfinite(min(sides)):
        return elo, min(sides)
    # Open on both sides (a handful of games): the interval's scores held
    # to a game in a thousand from either end.
    low, high = max(mu - Z_975 * stdev, 1e-3), min(mu + Z_975 * stdev, 1 - 1e-3)
    return elo, (elo_from_score(high) - elo_from_score(low)) / 2


def _bayeselo_probabilities(bayes_elo: float, draw_elo: float) -> tuple[float, float, float]:
    win = 1 / (1 + 10 ** ((draw_elo - bayes_elo) / 400))
    loss = 1 / (1 + 10 ** ((draw_elo + bayes_elo) / 400))
    return win, loss, 1 - win - loss


def llr_bayeselo(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    n = wins + losses + draws
    if n == 0:
        return 0.0
    # The draw Elo is estimated from the results; without a win or without a
    # loss it would be infinite, so half a game is added to each outcome for
    # the estimate (cutechess-cli returns 0 there, and a candidate that never
    # lost could then never be accepted).
    if wins == 0 or losses == 0:
        pw, pl = (wins + 0.5) / (n + 1.5), (losses + 0.5) / (n + 1.5)
    else:
        pw, pl = wins / n, losses / n
    draw_elo = 0.0 if draws == 0 and wins and losses else 200 * math.log10((1 - pl) / pl * (1 - pw) / pw)
    x = 10 ** (-draw_elo / 400)
    scale = 4 * x / ((1 + x) * (1 + x))
    w0, l0, d0 = _bayeselo_probabilities(elo0 / scale, draw_elo)
    w1, l1, d1 = _bayeselo_probabilities(elo1 / scale, draw_elo)
    llr = wins * math.log(w1 / w0) + losses * math.log(l1 / l0)
    if draws:
        llr += draws * math.log(d1 / d0)
    return llr
