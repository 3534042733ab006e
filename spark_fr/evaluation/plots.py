"""Figures of an evaluation: the critical-difference diagram, the top-f curves, the per-split values (matplotlib).

* :func:`cd_diagram`: Demsar's average-rank diagram: the methods on a rank axis (1 = best, left), the Nemenyi
  critical difference as a bar above it, and a thick line joining every group of methods whose average ranks
  differ by less than it (:func:`spark_fr.evaluation.statistics.cd_groups`). When Friedman's test does not
  reject, the HMLC paper joins all the methods and draws no CD; so does this diagram.
* :func:`curves_figure`: the relative value of every ranking against the number of top features (log2 axis).
* :func:`splits_figure`: the main measure of every ranking, one dot per split, the baseline's mean as a line.

Every figure is returned closed (a notebook shows it once, as :meth:`spark_fr.Ranking.plot` does) and
:func:`save_png` writes it through a temporary name, marked as spark_fr's so that a later run may replace it.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..io.ownership import PNG_MARK, at, check_creatable, is_our_png, publish_file


def _pyplot():
    from ..ranking import _pyplot as pyplot

    return pyplot()


def cd_diagram(names, ranks, cd: float | None, title: str = "", rejected: bool = True):
    """The critical-difference diagram of methods ``names`` with average ``ranks`` (module sketch)."""
    from .statistics import cd_groups

    plt = _pyplot()
    ranks = np.asarray(ranks, dtype=np.float64)
    k = len(names)
    order = np.argsort(ranks, kind="stable")
    groups = cd_groups(ranks, cd) if rejected and cd else ([list(order)] if k > 1 else [])
    half = (k + 1) // 2
    bottom = -(0.5 * max(half, 1) + 0.25 * len(groups) + 0.4)
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * (1.7 - bottom) + 0.3))
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.3, hi + 0.3)
    ax.set_ylim(bottom, 1.7)
    ax.axis("off")
    ax.hlines(0, lo, hi, color="k", lw=1)
    for t in range(lo, hi + 1):
        ax.vlines(t, 0, 0.15, color="k", lw=1)
        ax.text(t, 0.3, str(t), ha="center", va="bottom", fontsize=9)
    if cd and rejected:
        ax.hlines(1.1, lo, lo + cd, color="k", lw=1.5)
        ax.vlines([lo, lo + cd], 1.0, 1.2, color="k", lw=1.5)
        ax.text(lo + cd / 2, 1.25, f"CD = {cd:.3f}", ha="center", va="bottom", fontsize=9)
    for pos, m in enumerate(order):
        r = ranks[m]
        left = pos < half
        row = pos if left else k - 1 - pos
        y = -(row + 1) * 0.5 - 0.25 * len(groups)
        x_text = lo - 0.2 if left else hi + 0.2
        ax.plot([r, r, x_text], [0, y, y], color="0.3", lw=0.8)
        ax.text(x_text + (-0.05 if left else 0.05), y, f"{names[m]} ({r:.2f})", ha="right" if left else "left",
                va="center", fontsize=9)
    for g, members in enumerate(groups):
        a, b = ranks[members].min(), ranks[members].max()
        y = -0.15 - 0.22 * g
        ax.hlines(y, a - 0.03, b + 0.03, color="k", lw=3)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def curves_figure(curves, baseline: str = "", title: str = ""):
    """Relative value against the number of top features, one panel per dataset (mean over the splits)."""
    plt = _pyplot()
    datasets = list(dict.fromkeys(curves["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets) + 0.5, 4.0), squeeze=False)
    for ax, ds in zip(axes[0], datasets):
        sel = curves[curves.dataset == ds]
        mean = sel.groupby(["ranking", "n_features"], sort=False)["relative"].mean().reset_index()
        for name, g in mean.groupby("ranking", sort=False):
            dashed = name in (baseline, "random")  # the baselines
            ax.plot(g.n_features, g.relative, marker="o", ms=3, lw=1.2, ls="--" if dashed else "-", label=name)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="0.6", lw=0.8)
        measure = sel.measure.iloc[0]
        ax.set_xlabel("top features")
        ax.set_ylabel(f"{measure} relative to all features")
        ax.set_title(ds, fontsize=10)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def splits_figure(table, measure: str, baseline: str, title: str = ""):
    """The value of ``measure`` of every ranking on every split (dots), the mean (bar), one panel per dataset."""
    plt = _pyplot()
    sel = table[(table.measure == measure) & (table.split != "pooled")]
    datasets = list(dict.fromkeys(sel["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(0.9 * sel.ranking.nunique() + 2.5, 3.8) if len(datasets) == 1
                             else (4.5 * len(datasets), 3.8), squeeze=False)
    for ax, ds in zip(axes[0], datasets):
        d = sel[sel.dataset == ds]
        names = list(dict.fromkeys(d.ranking))
        means = [d[d.ranking == n].value.mean() for n in names]
        ax.bar(range(len(names)), means, color=["0.75" if n == baseline else "C0" for n in names], alpha=0.6)
        for i, n in enumerate(names):
            v = d[d.ranking == n].value.to_numpy()
            ax.plot(np.full(v.size, i) + np.linspace(-0.15, 0.15, v.size), v, "k.", ms=3)
        base = d[d.ranking == baseline].value.mean()
        if np.isfinite(base):
            ax.axhline(base, color="0.4", ls="--", lw=0.8)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(measure)
        vals = d.value.to_numpy(dtype=float)
        vals = vals[np.isfinite(vals)]
        if vals.size:
            pad = 0.1 * (vals.max() - vals.min() or abs(vals.max()) or 1.0)
            ax.set_ylim(max(0.0, vals.min() - pad) if vals.min() >= 0 else vals.min() - pad, vals.max() + pad)
        ax.set_title(ds, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def check_plot_path(path: str) -> None:
    """Refuse, before any work, a plot path that is a directory, a file spark_fr did not write, or not writable
    (a local path or a URI, :mod:`spark_fr.io.locations`)."""
    loc, files = at(path, None, "--plot")
    if files.isdir(loc):
        raise InputError(f"--plot {path} is a directory; give a .png file name")
    if files.exists(loc) and not is_our_png(loc, files):
        raise InputError(f"--plot {path} exists and was not written by spark_fr; choose another file name")
    check_creatable(loc, "--plot", files)


def save_png(fig, path: str, mark: str) -> str:
    """Save ``fig`` at ``path`` through a temporary file, marked as spark_fr's (an existing file must be ours)."""
    check_plot_path(path)
    return publish_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png",
                                                      metadata={PNG_MARK: f"evaluation {mark}"}), "--plot")
