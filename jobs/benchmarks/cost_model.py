"""A cost model of spark_fr's time per tree, fitted to measured runs: ``t = c0 + c1 * n log2(n) * k (T + 4) / E``.

Sketch
------
At a node, spark_fr's grower (``spark_fr/pct/grow.py``) builds, for each of the k candidate features, a
histogram over the node's rows of ``w, w z_j, w z_j^2`` for the T target columns: about ``2 T + 1`` additions
per row and candidate, plus a fixed cost per row (reading its code and weight, indexing the bin). We write
that as ``(T + 4)`` per row and candidate (the fixed part worth about four target columns; T is the same
in all our runs, so this constant is assumed, not fitted). A fully grown tree has about log2(n) levels of
n rows each, and E executors grow trees in parallel. So the work of one tree is ``W = n log2(n) k (T + 4)``,
and the wall time per tree of an ensemble on E executors is modelled as::

    t = c0 + c1 * W / E

``c0`` is a fixed cost per tree (task start, shipping the tree's rows or reading the broadcast, scoring)
and ``c1`` the time per unit of work. Both are fitted by non-negative least squares on the *relative*
errors ((observed - model) / observed), so a 1 s run counts as much as a 60 s run. The fit reports its
residuals; with two points it is exactly determined and says so. Only the variables that the runs vary are
measured: when k or T are the same in every run, their part of the formula is assumed, not tested.
"""
from __future__ import annotations

import math

import numpy as np

#: the constant of the ``(T + 4)`` term: per-row sums besides the targets
EXTRA_SUMS = 4


def features_per_node(features: int) -> int:
    """spark_fr's ``sqrt`` features per node: ``ceil(sqrt(features))``.

    Parameters
    ----------
    features : int

    Returns
    -------
    int
    """
    return max(1, math.ceil(math.sqrt(features)))


def work(rows: float, k: float, targets: float, executors: float) -> float:
    """``n log2(n) k (T + 4) / E``: the model's work per tree and executor.

    Parameters
    ----------
    rows, k, targets, executors : float

    Returns
    -------
    float
    """
    return rows * math.log2(max(rows, 2.0)) * k * (targets + EXTRA_SUMS) / executors


def fit(points: list) -> dict:
    """Fit ``c0`` and ``c1`` (both >= 0) to the points by least squares on the relative errors.

    Parameters
    ----------
    points : list of dict
        Each with ``rows``, ``k``, ``targets``, ``executors`` and ``seconds_per_tree`` (> 0).

    Returns
    -------
    dict
        ``form``, ``c0``, ``c1``, ``points`` (how many), ``exact`` (two points fitted exactly),
        ``varied`` (the variables that take more than one value), ``rms_relative_residual`` and
        ``residuals`` (per point: its inputs, ``work``, ``observed``, ``predicted``, ``relative``).
    """
    from scipy.optimize import nnls

    if len(points) < 2:
        raise ValueError("the cost model needs at least two runs")
    x = np.array([work(p["rows"], p["k"], p["targets"], p["executors"]) for p in points])
    t = np.array([p["seconds_per_tree"] for p in points], dtype=float)
    if np.any(t <= 0):
        raise ValueError("times per tree must be positive")
    A = np.column_stack([np.ones_like(x), x]) / t[:, None]
    (c0, c1), _ = nnls(A, np.ones_like(t))
    pred = c0 + c1 * x
    residuals = [dict({key: p[key] for key in ("rows", "k", "targets", "executors")}, work=float(w),
                      observed=float(o), predicted=float(q), relative=float((o - q) / o))
                 for p, w, o, q in zip(points, x, t, pred)]
    varied = [key for key in ("rows", "k", "targets", "executors") if len({p[key] for p in points}) > 1]
    return {"form": "t = c0 + c1 * n log2(n) * k * (T + 4) / E", "c0": float(c0), "c1": float(c1),
            "points": len(points), "exact": len(points) == 2 and bool(np.all(np.abs(t - pred) <= 1e-9 * t)),
            "varied": varied, "rms_relative_residual": float(np.sqrt(np.mean(((t - pred) / t) ** 2))),
            "residuals": residuals}


def predict(model: dict, rows: float, features: int, targets: int, executors: int, trees: int) -> dict:
    """What the fitted model says for another shape.

    Parameters
    ----------
    model : dict
        From :func:`fit`.
    rows : float
    features : int
        k = ``ceil(sqrt(features))``.
    targets, executors, trees : int

    Returns
    -------
    dict
        ``rows``, ``features``, ``k``, ``targets``, ``executors``, ``trees``, ``seconds_per_tree`` and
        ``seconds`` for all the trees (``trees * seconds_per_tree``).
    """
    k = features_per_node(features)
    per_tree = model["c0"] + model["c1"] * work(rows, k, targets, executors)
    return {"rows": rows, "features": features, "k": k, "targets": targets, "executors": executors, "trees": trees,
            "seconds_per_tree": per_tree, "seconds": per_tree * trees}


def format_fit(label: str, model: dict) -> str:
    """The fit, its residuals and what was varied, as text.

    Parameters
    ----------
    label : str
        What was fitted (``broadcast``, ``partitioned``).
    model : dict
        From :func:`fit`.

    Returns
    -------
    str
    """
    top = max(model["residuals"], key=lambda r: r["work"])
    share = model["c1"] * top["work"] / top["predicted"] if top["predicted"] > 0 else 0.0
    lines = [f"{label}: {model['form']}, c0 = {model['c0']:.3g} s, c1 = {model['c1']:.3g} s per unit, "
             f"{model['points']} runs, rms relative residual {model['rms_relative_residual']:.1%}"
             + (" (two runs: exactly determined, the residuals say nothing)" if model["exact"] else ""),
             f"  varied: {', '.join(model['varied']) or 'nothing'}; "
             f"the others are held fixed, so their part of the formula is assumed, not measured"
             + (f"; the work term is {share:.0%} of the model's time at the largest run: at these sizes the "
                f"time per tree is mostly fixed cost, and c1 is poorly determined" if share < 0.05 else ""),
             f"  {'rows':>10}{'k':>4}{'T':>3}{'E':>3}{'work':>12}{'observed s':>12}{'model s':>10}{'residual':>10}"]
    for r in model["residuals"]:
        lines.append(f"  {r['rows']:>10}{r['k']:>4}{r['targets']:>3}{r['executors']:>3}{r['work']:>12.3g}"
                     f"{r['observed']:>12.3f}{r['predicted']:>10.3f}{r['relative']:>10.1%}")
    return "\n".join(lines)


def format_prediction(label: str, p: dict) -> str:
    """One line for :func:`predict`.

    Parameters
    ----------
    label : str
    p : dict

    Returns
    -------
    str
    """
    return (f"{label}: {p['rows']:.0e} rows x {p['features']} features (k = {p['k']}), T = {p['targets']}, "
            f"E = {p['executors']}: {p['seconds_per_tree']:.3g} s per tree, {p['seconds'] / 3600:.3g} h for "
            f"{p['trees']} trees")
