"""The shared benchmark sets of each kind, as an evaluation suite reads them (``--suite mtr|mlc|hmlc|classification``).

The files are read in place from the project's shared data folder (``../shared/datasets`` from the project, or
``SPARK_FR_DATA``; :func:`spark_fr.notebook.find_path` finds it from the working directory upwards); what each set
is and which of its attributes are targets is the table of that folder's README.md:

* ``mtr``: ENB, EDM, Jura, Slump, ATP1d, SCPF, SF1 (the last 2, 2, 3, 3, 6, 3, 3 attributes; random splits).
* ``mlc``: Emotions, Yeast, Scene, Medical, Flags (Mulan's train and test files and label XML).
* ``hmlc`` (the HMLC paper's protocol on the original splits): cellcycle_FUN and derisi_GO (the training and
  validation files ranked together, the test file judged: the paper's yeast sets have train + valid rows, 2,482 of
  cellcycle against 1,628 + 848 here), Diatoms (train / test), enron (the HARFF's labelled training set; its test
  rows are the other 494 rows of the full ``enron.harff``, which labels them: the full file with the training
  rows taken out, ``test_holds_training``). The ensembles' settings are the paper's where spark_fr's defaults
  differ (:data:`ENSEMBLE_OPTIONS`: extra trees try sqrt(D) features per node, as random forests do; a binary
  feature has one test, so with every feature tried, extra trees on enron hardly differ from one another).
* ``classification``: iris, wine, breast_cancer, digits (scikit-learn's CSVs), madelon and chess (ReliefE's
  ``.mat`` files).
"""
from __future__ import annotations

import os

from ..errors import InputError

KINDS = ("mtr", "mlc", "hmlc", "classification")

#: kind -> [(name, folder, input (a file, or a tuple of files read as one), test or None, {read options},
#: last-k targets or None)]
SUITES = {
    "mtr": [("enb", "mtr_enb", "enb.arff", None, {}, 2), ("edm", "mtr_edm", "edm.arff", None, {}, 2),
            ("jura", "mtr_jura", "jura.arff", None, {}, 3), ("slump", "mtr_slump", "slump.arff", None, {}, 3),
            ("atp1d", "mtr_atp1d", "atp1d.arff", None, {}, 6), ("scpf", "mtr_scpf", "scpf.arff", None, {}, 3),
            ("sf1", "mtr_sf1", "sf1.arff", None, {}, 3)],
    "mlc": [(n, f"mlc_{n}", f"{n}-train.arff", f"{n}-test.arff", {"labels_xml": f"{n}.xml"}, None)
            for n in ("emotions", "yeast", "scene", "medical", "flags")],
    "hmlc": [("cellcycle_FUN", "hmlc_cellcycle_FUN", ("cellcycle_FUN.train.arff", "cellcycle_FUN.valid.arff"),
              "cellcycle_FUN.test.arff", {}, None),
             ("derisi_GO", "hmlc_derisi_GO", ("derisi_GO.train.arff", "derisi_GO.valid.arff"), "derisi_GO.test.arff",
              {}, None),
             ("Diatoms", "hmlc_Diatoms", "Diatoms_train.arff", "Diatoms_test.arff", {}, None),
             ("enron", "hmlc_enron_harff", "enron-training_set.harff.zip", "enron.harff.zip",
              {"test_holds_training": True}, None)],
    "classification": [("iris", "sklearn_iris", "iris.csv", None, {}, None),
                       ("wine", "sklearn_wine", "wine_data.csv", None, {}, None),
                       ("breast_cancer", "sklearn_breast_cancer", "breast_cancer.csv", None, {}, None),
                       ("digits", "sklearn_digits", "digits.csv.gz", None, {"task": "classification"}, None),
                       ("madelon", "reliefe_mat", "madelon.mat", None, {}, None),
                       ("chess", "reliefe_mat", "chess.mat", None, {}, None)],
}

#: kind -> {ensemble: rank() keywords}: a suite's protocol's settings of the named ensemble rankings where they
#: differ from spark_fr's defaults (:func:`spark_fr.evaluation.configs.with_ensemble_options`; an option the caller
#: gives wins). HMLC: the paper's extra trees try sqrt(D) features per node (methods-papers.md 1.3).
ENSEMBLE_OPTIONS = {"hmlc": {"extra_trees": {"max_features": "sqrt"}}}


def datasets_folder() -> str:
    """The shared datasets folder: ``SPARK_FR_DATA``, else ``../shared/datasets`` (or ``shared/datasets``) found
    from the working directory upwards (:func:`spark_fr.notebook.find_path`)."""
    from ..notebook import find_path

    for relative in ("../shared/datasets", "shared/datasets"):
        path = find_path(relative, "SPARK_FR_DATA")
        if os.path.isdir(path):
            return os.path.normpath(path)
    raise InputError("--suite: the shared datasets folder was not found (../shared/datasets); set SPARK_FR_DATA")


def suite_entries(kind: str, folder: str | None = None) -> list:
    """[(name, input, test, {evaluate keywords})] of a suite, with paths under the datasets folder (input: a path,
    or a list of paths read as one input).

    Raises
    ------
    InputError
        An unknown kind, or a file of the suite that is missing.
    """
    from ..io.arff import read_header

    if kind not in SUITES:
        raise InputError(f"--suite must be one of {', '.join(KINDS)}, not '{kind}'")
    base = folder or datasets_folder()
    out = []
    for name, sub, inp, test, read, last in SUITES[kind]:
        paths = [os.path.join(base, sub, f) for f in ((inp,) if isinstance(inp, str) else inp)]
        test_path = os.path.join(base, sub, test) if test else None
        for path in paths + ([test_path] if test_path else []):
            if not os.path.exists(path):
                raise InputError(f"--suite {kind}: {path} not found")
        kw = {k: (os.path.join(base, sub, v) if k == "labels_xml" else v) for k, v in read.items()}
        if last:
            names = [a.name for a in read_header(paths[0]).attributes]
            kw["targets"] = names[-last:]
        out.append((name, paths[0] if len(paths) == 1 else paths, test_path, kw))
    return out
