"""The scaling suite's figure: strong and weak scaling curves and the cost model against the runs, as a PNG.

Sketch
------
Three panels drawn with matplotlib's Agg backend (no display): time per tree against the Spark master for
the strong-scaling runs (fixed data) and for the weak-scaling runs (rows proportional to the cores), one
line per ensemble mode, the masters in the order they were given (``local[2]`` and ``local-cluster[2,1,..]``
have the same number of cores, so the axis is the master, not a number); and the observed time per tree
against the cost model's, with the diagonal (log axes when the times span a decade).
"""
from __future__ import annotations

from pathlib import Path


def _curves(ax, points: list, part: str, masters: list, title: str) -> None:
    """One scaling panel: seconds per tree by master, a line per mode."""
    modes = sorted({p["mode"] for p in points if part in p["parts"]})
    for mode in modes:
        by_master = {p["master"]: p["seconds_per_tree"] for p in points if part in p["parts"] and p["mode"] == mode}
        xs = [i for i, m in enumerate(masters) if m in by_master]
        ax.plot(xs, [by_master[masters[i]] for i in xs], marker="o", label=mode)
    ax.set_xticks(range(len(masters)))
    ax.set_xticklabels(masters, rotation=15, fontsize=8)
    ax.set_ylabel("seconds per tree")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(bottom=0)
    if modes:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, f"no {part} runs", transform=ax.transAxes, ha="center", color="grey")


def write_plot(path: Path, points: list, masters: list, models: dict, title: str) -> Path:
    """Draw the three panels and write the PNG.

    Parameters
    ----------
    path : Path
        The PNG file (its folder is created).
    points : list of dict
        The runs: ``master``, ``mode``, ``parts`` (``strong``, ``weak``, ``shape``), ``seconds_per_tree``.
    masters : list of str
        The masters in axis order.
    models : dict
        ``{mode: cost_model.fit(...)}``.
    title : str

    Returns
    -------
    Path
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    _curves(axes[0], points, "strong", masters, "strong scaling (fixed data)")
    _curves(axes[1], points, "weak", masters, "weak scaling (rows proportional to cores)")
    ax = axes[2]
    low, high = float("inf"), 0.0
    for mode, model in models.items():
        obs = [r["observed"] for r in model["residuals"]]
        pred = [r["predicted"] for r in model["residuals"]]
        ax.scatter(pred, obs, label=f"{mode}: c0={model['c0']:.2g}, c1={model['c1']:.2g}")
        low, high = min(low, *obs, *pred), max(high, *obs, *pred)
    if high > 0:
        ax.plot([low, high], [low, high], color="grey", linewidth=0.8)
        if high > 10 * low:  # log axes only when the times span a decade
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.legend(fontsize=8)
    ax.set_xlabel("model: c0 + c1 n log2(n) k (T+4) / E  (s per tree)")
    ax.set_ylabel("observed s per tree")
    ax.set_title("cost model", fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
