"""The Params of :class:`~spark_fr.estimator.FeatureRanker` and its model.

One Param per option of :mod:`spark_fr.options` that :func:`spark_fr.rank` takes on a DataFrame (camelCase:
``numTrees``, ``reliefNeighbours``, ``shrinkage``, ...), plus the Params of the pipeline stage itself
(:data:`STAGE_OPTIONS`: ``labelCol``, ``outputCol``, ``hierarchy``, ``numTopFeatures``, ``selectionScore``).
Values are checked when they are set, as :func:`spark_fr.rank` checks its keywords (one-line
:class:`~spark_fr.errors.InputError` naming the Param). Every value is JSON (``DefaultParamsWriter`` saves it);
a :class:`~spark_fr.hierarchy.Hierarchy` is stored as its fields (:class:`HierarchyValue`).
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.ml.param import Param, Params

from .. import options as O
from .. import tasks
from ..errors import InputError


@dataclass(frozen=True)
class HierarchyValue(O.Kind):
    """A label hierarchy: a Clus class specification string (kept as given, checked by parsing it) or a
    :class:`~spark_fr.hierarchy.Hierarchy` (stored as ``{"labels", "parents", "root_parent"}``, exact and JSON)."""

    description: str = "a spark_fr.hierarchy.Hierarchy or a Clus class specification string"

    def coerce(self, value, opt):
        from ..hierarchy import Hierarchy, HierarchyError

        if isinstance(value, Hierarchy):
            return {"labels": list(value.labels), "parents": [list(p) for p in value.parents],
                    "root_parent": list(value.root_parent)}
        if isinstance(value, dict) and set(value) == {"labels", "parents", "root_parent"}:
            return value  # a saved Hierarchy, read back
        if not isinstance(value, str) or not value.strip():
            self.fail(opt, value)
        try:
            Hierarchy.from_clus_spec(value)
        except HierarchyError as err:
            raise InputError(f"{opt.flag}: {err}") from None
        return value


def hierarchy_of(value):
    """The ``hierarchy`` keyword of :func:`spark_fr.rank` for a Param value (a string, or a Hierarchy)."""
    from ..hierarchy import Hierarchy

    if isinstance(value, dict):
        return Hierarchy(tuple(value["labels"]), tuple(tuple(p) for p in value["parents"]),
                         tuple(value["root_parent"]))
    return value


_API = frozenset({O.API})
#: the ranking methods, in the order explainParams names their groups
METHOD_ORDER = ("ensemble", "boosting", "relief", "reliefe")
#: selectionMode's values (spark_fr.estimator.selection)
SELECTION_MODES = ("numTopFeatures", "percentile", "threshold", "fwe")
#: Params of the pipeline stage (not options of a ranking run, or not in rank()'s form)
STAGE_OPTIONS = (
    O.Option("labelCol", O.Text(), None, "the target column (one target; targetCols for several)", O.IO, where=_API),
    O.Option("outputCol", O.Text(), None, "vector column of the selected features that transform appends (unset: "
             "transform keeps the targets and the selected columns)", O.IO, where=_API),
    O.Option("hierarchy", HierarchyValue(), None, "HMLC: a spark_fr.hierarchy.Hierarchy or a Clus class "
             "specification ('01,01/02,02' or 'root/a,a/b'); the single target is a string column of '@'-joined "
             "labels", O.TASK, where=_API),
    O.Option("labelType", O.Choice(("categorical", "continuous")), None, "the label's type: categorical "
             "(classification) or continuous (regression), as UnivariateFeatureSelector's (unset: inferred from the "
             "label's Spark type, ML attribute and values, and logged; task, when set, wins)", O.TASK, where=_API),
    O.Option("selectionMode", O.Choice(SELECTION_MODES), "numTopFeatures", "how transform selects features: "
             "numTopFeatures (the best numTopFeatures), percentile (the best fraction selectionThreshold), threshold "
             "(importance > selectionThreshold, or > a random shadow feature's with 'shadow'), fwe (importance "
             "significantly above 0 over the trees, family-wise error rate selectionThreshold)", O.RUN, where=_API),
    O.Option("selectionThreshold", O.RealOrWord(words=("shadow",), description="a number"), None,
             "the selection mode's value (unset: numTopFeatures, 0.1, 0.0, 0.05 by mode); 'shadow' for threshold",
             O.RUN, where=_API),
    O.Option("numTopFeatures", O.Integer(lo=1, description="a positive integer"), 10,
             "features kept by transform (selectionMode numTopFeatures)", O.RUN, where=_API),
    O.Option("selectionScore", O.Choice(("symbolic", "genie3", "rf", "relief", "reliefe")), None,
             "score whose joint ranking transform uses (unset: genie3, or the fit's only score, e.g. relief)",
             O.RUN, where=_API),
)
#: {Param name: option}
PARAM_OPTIONS = {**{o.param_name: o for o in O.estimator_options()}, **{o.name: o for o in STAGE_OPTIONS}}


def _converter(opt, name: str):
    """A Param type converter that checks values like :func:`spark_fr.rank` does (InputError, one line,
    naming the Param)."""
    def convert(value):
        try:
            return O.check_value(opt, value)
        except InputError as err:
            raise InputError(str(err).replace(opt.flag, name, 1)) from None

    return convert


class RankerParams(Params):
    """The Params (see the module docstring), their defaults, getters and the keywords of a ranking run."""

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(**{name: opt.default for name, opt in PARAM_OPTIONS.items() if opt.default is not None})

    def explainParam(self, param) -> str:
        """One Param's name, doc and values, as pyspark's (which fails on a tuple value, e.g. reliefInfluence's
        default: it formats the value with ``%``)."""
        param = self._resolveParam(param)
        values = []
        if param in self._defaultParamMap:
            values.append(f"default: {self._defaultParamMap[param]}")
        if param in self._paramMap:
            values.append(f"current: {self._paramMap[param]}")
        return f"{param.name}: {param.doc} ({', '.join(values) or 'undefined'})"

    def explainParams(self) -> str:
        """The Params of the stage and of the chosen ``method``, one per line; the Params of the other methods
        (real Params still, saved and usable in a ParamGridBuilder) are named in one line per group of methods.

        Decision: a user of the default method reads the 34 Params it uses and four lines naming the other 21
        (Relief, ReliefE and boosting), not 55 explanations; ``explainParam(name)`` explains any of them.
        """
        method = self._get("method", "ensemble")
        lines, others = [], {}
        for p in self.params:
            methods = PARAM_OPTIONS[p.name].methods if p.name in PARAM_OPTIONS else ()
            if not methods or method in methods:
                lines.append(self.explainParam(p))
            else:
                group = "/".join(m for m in METHOD_ORDER if m in methods)
                others.setdefault(group, []).append(p.name)
        lines += [f"{group} options (unused with method='{method}'; explainParam(name) explains one): "
                  f"{', '.join(names)}" for group, names in sorted(others.items())]
        return "\n".join(lines)

    def _get(self, name: str, empty=None):
        param = getattr(self, name)
        return self.getOrDefault(param) if self.isDefined(param) else empty

    def getTargetCols(self) -> list:
        """The target columns; ``[]`` when none were set (unsupervised, or ``labelCol`` names the target)."""
        return self._get("targetCols", [])

    def getLabelCol(self):
        """The single target column, or None."""
        return self._get("labelCol")

    def getFeaturesCol(self):
        """The vector column of the features, or None (every column but the targets is a feature)."""
        return self._get("featuresCol")

    def getOutputCol(self):
        """The vector column transform appends, or None."""
        return self._get("outputCol")

    def getHierarchy(self):
        """The HMLC hierarchy: the Clus specification string, or a :class:`~spark_fr.hierarchy.Hierarchy`."""
        return hierarchy_of(self._get("hierarchy"))

    def getNumTrees(self):
        return self._get("numTrees")

    def getScores(self):
        return self._get("scores")

    def getNumTopFeatures(self) -> int:
        return self.getOrDefault(self.numTopFeatures)

    def getSelectionScore(self):
        """The score set by ``selectionScore``, or None (the model then picks genie3 or the fit's only score)."""
        return self._get("selectionScore")

    def getLabelType(self):
        """``labelType``: 'categorical', 'continuous', or None (inferred at fit, :mod:`spark_fr.estimator.label`)."""
        return self._get("labelType")

    def getSelectionMode(self) -> str:
        return self.getOrDefault(self.selectionMode)

    def getSelectionThreshold(self):
        """``selectionThreshold``, or None (the mode's default, :mod:`spark_fr.estimator.selection`)."""
        return self._get("selectionThreshold")

    def setLabelType(self, value):
        return self._set(labelType=value)

    def setSelectionMode(self, value):
        return self._set(selectionMode=value)

    def setSelectionThreshold(self, value):
        return self._set(selectionThreshold=value)

    def setFeaturesCol(self, value):
        return self._set(featuresCol=value)

    def setLabelCol(self, value):
        return self._set(labelCol=value)

    def setOutputCol(self, value):
        return self._set(outputCol=value)

    def setNumTopFeatures(self, value):
        return self._set(numTopFeatures=value)

    def setSelectionScore(self, value):
        return self._set(selectionScore=value)

    def target_names(self) -> list:
        """The targets: ``[labelCol]``, else ``targetCols``; both set is an error unless they agree."""
        label, targets = self.getLabelCol(), list(self.getTargetCols())
        if label is not None and targets and targets != [label]:
            raise InputError(f"labelCol '{label}' and targetCols {','.join(targets)} disagree: set labelCol for one "
                             f"target or targetCols for several, not both")
        return [label] if label is not None else targets

    def supervised(self) -> bool:
        """Whether the task (when it is given) has targets; 'auto' does."""
        task = self._get("task", "auto")
        return task == "auto" or tasks.get(task).supervised

    def rank_keywords(self) -> dict:
        """{option name: value} of the set run Params (others take :func:`spark_fr.rank`'s defaults); the targets
        are :meth:`target_names`, the hierarchy a :func:`spark_fr.rank` keyword."""
        out = {opt.name: self.getOrDefault(getattr(self, name)) for name, opt in PARAM_OPTIONS.items()
               if opt not in STAGE_OPTIONS and self.isSet(getattr(self, name))}
        targets = self.target_names()
        out.pop("targets", None)
        if targets:
            out["targets"] = targets
        if self.isSet(self.hierarchy):
            out["hierarchy"] = self.getHierarchy()
        return out


for _name, _opt in PARAM_OPTIONS.items():
    setattr(RankerParams, _name, Param(Params._dummy(), _name, _opt.help, _converter(_opt, _name)))


def check_names(cls, kwargs: dict) -> None:
    """Unknown Param names are an InputError naming the known ones."""
    unknown = sorted(set(kwargs) - set(PARAM_OPTIONS))
    if unknown:
        raise InputError(f"unknown parameter(s) of {cls.__name__}: {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(PARAM_OPTIONS))}")
