"""The Elo of each generation's network over the initial one, from the
gating results in state.json."""

from __future__ import annotations

import math


def plot_elo(state: dict, out_path: str, title: str | None = None) -> int:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = state.get("history", [])
    figure, axes = plt.subplots(figsize=(7, 4), dpi=110)
    generations = [0] + [entry["generation"] for entry in history]
    current = [0.0] + [entry["current_elo"] for entry in history]
    axes.step(generations, current, where="post", color="tab:blue", label="current network (promoted)")
    for promoted, style in [(True, dict(color="tab:green", label="candidate, promoted")),
                            (False, dict(color="tab:red", mfc="white", label="candidate, rejected"))]:
        chosen = [entry for entry in history if entry["promoted"] == promoted]
        if not chosen:
            continue
        margins = [entry["gating"]["elo_margin"] for entry in chosen]
        margins = [m if math.isfinite(m) else 0.0 for m in margins]
        axes.errorbar([entry["generation"] for entry in chosen],
                      [entry["candidate_elo"] for entry in chosen],
                      yerr=margins, fmt="o", capsize=3, **style)
    axes.set_xlabel("generation")
    axes.set_ylabel("Elo over generation 0")
    axes.set_xticks(generations)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    if title:
        axes.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(out_path)
    plt.close(figure)
    return len(history)
