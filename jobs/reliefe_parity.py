"""ReliefE against the authors' package (PyPI ``reliefe`` 0.18, [R]) on the same rows and settings.

Run with the project's Python; [R] runs in its own virtual environment (numba, umap-learn 0.5.12) as a
subprocess, on the very rows spark_fr encodes (range-scaled CSR, canonical order), so only the algorithms
differ::

    python jobs/reliefe_parity.py --out out/reliefe_parity [--reliefe-python /work/reliefe-venv/bin/python]
        [--datasets madelon,chess,medical] [--settings f1,f1-alg3]

For each dataset and setting it writes the Spearman correlation of the two weight vectors (with `--self-check`
also reliefe's own on the rows in another order, i.e. how much the order of tied neighbours moves it), the overlap of
their top 20 features and both run times to ``OUT/parity.json`` and ``OUT/parity.md``.

Settings (spark_fr option -> [R] constructor argument):
* ``standard``: no embedding, k = 15, the standard update, every row sampled
  (``embedding_based_distances=False``, ``k=15``, ``num_iter=1.0``) - both are ReliefF with Manhattan distance
  on range-scaled features;
* ``absmean``: the same with ``--reliefe-update absmean`` (``use_average_neighbour=True``);
* ``adaptive``: the same with ``--reliefe-k adaptive`` (``determine_k_automatically=True``);
* MLC ``f1``: raw labels, F1 distance; MLC ``cosine-pca``: the target embedded by PCA (d = 8) and compared by
  cosine ([R] gets the same scikit-learn PCA as its ``embedding_method``);
* MLC ``f1-alg3`` and ``cosine-pca-alg3``: the same, with [R]'s MLC update kernel recompiled from its own
  source with one change, ``(d_diff - t_diff)`` -> ``(d_diff - t_d_diff)``: the paper's Alg. 3 (spec C1), which
  spark_fr implements. It shows whether that term alone explains the MLC differences.
[R] 0.18 needs a shim with today's scikit-learn (np.matrix handed to ``normalize`` and
``euclidean_distances``): ``import_reliefe`` of ``jobs/peers/reliefe_peer.py``, the benchmark's [R] peer.
The input embedding is not compared: [R]'s update loop then reads the *embedded* matrix over |F| columns
(spec Sec. 5, C2), which is not ReliefE as the paper defines it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers")
DATASETS = {"madelon": ("reliefe_mat/madelon.mat", None), "chess": ("reliefe_mat/chess.mat", None),
            "medical": ("mlc_medical/medical.arff", "mlc_medical/medical.xml")}

SETTINGS = {"classification": {"standard": ({"embed": "none", "k": 15}, {"k": 15}),
                               "absmean": ({"embed": "none", "k": 15, "update": "absmean"},
                                           {"k": 15, "use_average_neighbour": True}),
                               "adaptive": ({"embed": "none", "k": "adaptive"},
                                            {"k": 15, "determine_k_automatically": True})},
            "mlc": {"f1": ({"embed": "none", "k": 15, "mlc_distance": "f1"}, {"k": 15, "mlc_distance": "f1"}),
                    "cosine-pca": ({"embed": "target", "k": 15, "dimension": 8, "embedder": "pca"},
                                   {"k": 15, "mlc_distance": "cosine", "pca": 8}),
                    "f1-alg3": ({"embed": "none", "k": 15, "mlc_distance": "f1"},
                                {"k": 15, "mlc_distance": "f1", "alg3": True}),
                    "cosine-pca-alg3": ({"embed": "target", "k": 15, "dimension": 8, "embedder": "pca"},
                                        {"k": 15, "mlc_distance": "cosine", "pca": 8, "alg3": True})}}

#: what runs in [R]'s environment: read X, y, the settings; fit; write the weights
R_SCRIPT = r'''
import json, sys, time
import numpy as np
from scipy import sparse
from sklearn.decomposition import PCA

sys.path.insert(0, sys.argv[4])  # jobs/peers: the benchmark's reliefe peer holds the shim for today's scikit-learn
from reliefe_peer import import_reliefe

ReliefE = import_reliefe()

class DensePCA:
    def __init__(self, d): self.p = PCA(n_components=d, svd_solver="full")
    def fit(self, y): self.p.fit(np.asarray(y.todense() if sparse.issparse(y) else y)); return self
    def transform(self, y): return self.p.transform(np.asarray(y.todense() if sparse.issparse(y) else y))

def use_algorithm_3():
    """Recompile [R]'s MLC update kernel from its source with Alg. 3's ``(d - td)`` for its ``(d - t)``."""
    import inspect
    import reliefe.reliefe_classes as rc
    f = rc._compiled_multi_label_classification_update_weights
    src = inspect.getsource(f.py_func)
    old = "(d_diff - t_diff)"
    assert src.count(old) == 1, "reliefe's MLC update changed: the Alg. 3 patch does not apply"
    exec(compile(src.replace(old, "(d_diff - t_d_diff)"), rc.__file__, "exec"), rc.__dict__)

z = np.load(sys.argv[1])
X = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
y = z["y"]
kw = json.loads(sys.argv[2])
perm_seed = kw.pop("permute_rows", None)
if perm_seed is not None:  # the same rows in another order: only the order of equally distant neighbours changes
    order = np.random.default_rng(perm_seed).permutation(X.shape[0])
    X, y = X[order], y[order]
pca = kw.pop("pca", None)
if kw.pop("alg3", False):
    use_algorithm_3()
t = time.perf_counter()
r = ReliefE(num_iter=1.0, embedding_based_distances=False, verbose=False, **kw)
if y.shape[1] == 1:
    r.fit(X, y[:, 0].astype(int))
else:
    r.fit(X, sparse.csr_matrix(y), embedding_method=DensePCA(pca) if pca else "UMAP")
np.save(sys.argv[3], np.asarray(r.feature_importances_, np.float64))
print(time.perf_counter() - t)
'''


def read_rows(spark, root: str, path: str, xml):
    """spark_fr's rows of a dataset: (ReliefEData, task, classes, feature names)."""
    from spark_fr.data.prepare import prepare
    from spark_fr.data.schema import resolve
    from spark_fr.io.readers import read_dataset
    from spark_fr.relief.reliefe_data import build_reliefe_data, collect_sparse

    ds = read_dataset(spark, os.path.join(root, path), labels_xml=os.path.join(root, xml) if xml else None)
    spec = resolve(ds, None, "auto", False)
    prep = prepare(ds, spec, outputs=("scaled",), method="reliefe", spark=spark)
    try:
        nominal = np.array([b.nominal for b in prep.plan.bins], bool)
        data = build_reliefe_data(collect_sparse(prep, spark), spec.feature_names, nominal, len(prep.encoder.names))
        classes = prep.encoder.classes
        return data, prep.task, len(classes) if classes else 0, spec.feature_names
    finally:
        prep.release()


def reference_weights(python: str, data, kw: dict) -> tuple:
    """([R]'s weights, its seconds) on the same rows."""
    with tempfile.TemporaryDirectory() as tmp:
        X = data.X
        np.savez(os.path.join(tmp, "rows.npz"), data=X.data, indices=X.indices, indptr=X.indptr,
                 shape=np.array(X.shape), y=data.Y)
        script = os.path.join(tmp, "r.py")
        with open(script, "w") as fh:
            fh.write(R_SCRIPT)
        out = subprocess.run([python, script, os.path.join(tmp, "rows.npz"), json.dumps(kw),
                              os.path.join(tmp, "w.npy"), PEERS], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"reliefe failed ({kw}): {out.stderr.strip().splitlines()[-1:]}")
        return np.load(os.path.join(tmp, "w.npy")), float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    from scipy.stats import spearmanr

    from spark_fr.relief.params import ReliefEParams
    from spark_fr.relief.reliefe import reliefe_weights
    from spark_fr.runtime.session import get_spark

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--datasets", default="madelon,chess,medical")
    ap.add_argument("--settings", default=None, help="comma-separated setting names (default: all of the task's)")
    ap.add_argument("--self-check", action="store_true",
                    help="also run reliefe on the rows in another order: how far ties between neighbours move it")
    ap.add_argument("--reliefe-python", default="/work/reliefe-venv/bin/python")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                                   "shared", "datasets"))
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    spark = get_spark()
    rows = []
    for name in a.datasets.split(","):
        data, task, n_classes, names = read_rows(spark, a.root, *DATASETS[name])
        for setting, (ours_kw, r_kw) in SETTINGS["mlc" if task == "mlc" else "classification"].items():
            if a.settings and setting not in a.settings.split(","):
                continue
            t = time.perf_counter()
            res, info, _ = reliefe_weights(spark, data, n_classes, ReliefEParams(seed=0, **ours_kw))
            ours_s = time.perf_counter() - t
            ours = res[0].importance
            ref, ref_s = reference_weights(a.reliefe_python, data, dict(r_kw))
            rho = float(spearmanr(ours, ref).correlation)
            self_rho = None
            if a.self_check:
                again, _ = reference_weights(a.reliefe_python, data, dict(r_kw, permute_rows=1))
                self_rho = float(spearmanr(ref, again).correlation)
            top = len(set(np.argsort(-ours)[:20]) & set(np.argsort(-ref)[:20]))
            row = {"dataset": name, "task": task, "rows": data.n_rows, "features": data.n_features,
                   "setting": setting, "spearman": rho, "reliefe_self_spearman": self_rho, "top20_overlap": top,
                   "max_abs_diff": float(np.abs(ours - ref).max()),
                   "ours_s": ours_s, "reliefe_s": ref_s, "k_used": info["reliefe_k_used"],
                   "load": os.getloadavg()[0]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(os.path.join(a.out, "parity.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    with open(os.path.join(a.out, "parity.md"), "w") as fh:
        fh.write("| dataset | setting | Spearman | reliefe vs reliefe, rows reordered | top-20 overlap | max abs diff "
                 "| ours s | reliefe s | load |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            selfr = "" if r["reliefe_self_spearman"] is None else f"{r['reliefe_self_spearman']:.4f}"
            fh.write(f"| {r['dataset']} | {r['setting']} | {r['spearman']:.4f} | {selfr} | {r['top20_overlap']} | "
                     f"{r['max_abs_diff']:.2e} | {r['ours_s']:.1f} | {r['reliefe_s']:.1f} | {r['load']:.1f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
