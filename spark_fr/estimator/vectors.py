"""Where the features of a DataFrame live, and the vector of the selected ones that transform appends.

A feature is an ordinary column (numeric, boolean or string) or one element of a Spark ML vector column,
named by the vector's ML attribute metadata (``VectorAssembler``, ``VectorSlicer``, this module's own
output), else ``column[i]`` as :func:`spark_fr.data.schema.columns_of_dataframe` names it. A :class:`Slot`
says where one feature is; a fit keeps the slots of all the features it ranked, in input order.

The output vector (:func:`append_selected`) is dense, holds the selected features in input order (as Spark's
``UnivariateFeatureSelector`` and ``VectorSlicer`` with sorted indices do) and carries ML attribute metadata
naming them: a vector element keeps its input attribute (nominal values included), an ordinary column is a
numeric attribute (a ``StringIndexer`` output column a nominal one). Missing values (null) become NaN, as
``VectorAssembler(handleInvalid='keep')`` does; a null vector is a row whose every element is missing, so its
selected elements are NaN too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.ml.linalg import VectorUDT
from pyspark.sql import types as T

from ..data.columns import qcol
from ..data.schema import numeric_types, vector_names_from_metadata
from ..errors import InputError

#: the name of an element of a vector without attribute metadata (spark_fr.data.schema's rule)
_UNNAMED = re.compile(r"^(.*)\[(\d+)\]$")


@dataclass(frozen=True)
class Slot:
    """Where one feature lives: an ordinary ``column`` (``index`` None) or element ``index`` of a vector column."""

    name: str
    column: str
    index: int | None = None

    def where(self) -> str:
        return f"the column '{self.column}'" if self.index is None else \
            f"element {self.index} of the vector column '{self.column}'"


def named_slots(schema, features_col: str | None = None) -> list:
    """The slots whose names the schema gives (ordinary columns, and elements of vectors with attribute
    metadata), in input order, without reading any row: what a duplicate-name check needs."""
    out = []
    plain = (*numeric_types(), T.StringType, T.BooleanType)
    for f in schema.fields:
        if isinstance(f.dataType, VectorUDT):
            if features_col is None or f.name == features_col:
                out.extend(Slot(n, f.name, i) for i, n in enumerate(vector_names_from_metadata(f) or ()))
        elif features_col is None and isinstance(f.dataType, plain):
            out.append(Slot(f.name, f.name))
    return out


def check_unique(slots: list, targets: list, features_col: str | None) -> None:
    """Feature names are unique and no feature is named like a target (one-line InputError otherwise).

    Decision: the same name twice is an error, never a silent choice: with ``featuresCol`` unset, a frame that
    still holds a VectorAssembler's input columns next to its output vector would count every feature twice.
    """
    seen = {}
    for s in slots:
        if s.name in targets and s.index is not None:
            raise InputError(f"{s.where()} is named '{s.name}', like the target: a target cannot be a feature "
                             f"(leave it out of the VectorAssembler's inputCols)")
        if s.name in seen:
            hint = ("set featuresCol to rank one vector column alone" if features_col is None
                    else f"rename the inputs of '{features_col}'")
            raise InputError(f"the feature name '{s.name}' is both {seen[s.name].where()} and {s.where()}: {hint}, "
                             f"or drop one of them")
        seen[s.name] = s


def locate(schema, features_col: str | None, names: list) -> list:
    """The slots of the ranked features ``names``, in input order (columns in schema order, elements by index).

    ``names`` come from a ranking of a frame with this schema, so every one is found.
    """
    fields = [f for f in schema.fields if features_col is None or f.name == features_col
              or not isinstance(f.dataType, VectorUDT)]
    position = {f.name: p for p, f in enumerate(fields)}
    known = {s.name: s for s in named_slots(schema, features_col)}
    slots = []
    for n in names:
        s = known.get(n)
        if s is None:
            m = _UNNAMED.match(n)
            if m is None or m.group(1) not in position:
                raise InputError(f"the ranked feature '{n}' is not a column or element of the fitted DataFrame")
            s = Slot(n, m.group(1), int(m.group(2)))
        slots.append(s)
    return sorted(slots, key=lambda s: (position[s.column], -1 if s.index is None else s.index))


def _attrs(field) -> tuple:
    """({index: (attribute type, attribute dict)} of a vector field's metadata, its number of elements or None)."""
    meta = (field.metadata or {}).get("ml_attr", {})
    out = {}
    for kind, group in (meta.get("attrs") or {}).items():
        for a in group:
            out[int(a["idx"])] = (kind, a)
    return out, meta.get("num_attrs")


def _column_attr(field, name: str) -> tuple:
    """(type, attribute) of an ordinary column: nominal when its metadata says so (StringIndexer), else numeric."""
    meta = (field.metadata or {}).get("ml_attr", {})
    if meta.get("type") == "nominal":
        return "nominal", {k: v for k, v in meta.items() if k in ("vals", "num_vals", "ord")} | {"name": name}
    return "numeric", {"name": name}


def _element(field, slot: Slot, attrs: tuple) -> tuple:
    """(type, attribute) of a vector element, after checking it is the element the fit ranked."""
    by_index, size = attrs
    if size is not None and slot.index >= int(size):
        raise InputError(f"selected feature '{slot.name}' is element {slot.index} of the vector column "
                         f"'{slot.column}', which has {size} elements here")
    kind, a = by_index.get(slot.index, ("numeric", {}))
    if a.get("name", slot.name) != slot.name and not _UNNAMED.match(slot.name):
        raise InputError(f"element {slot.index} of the vector column '{slot.column}' is '{a['name']}' here but "
                         f"'{slot.name}' when the ranker was fitted")
    return kind, {k: v for k, v in a.items() if k != "idx"} | {"name": slot.name}


def append_selected(dataset, slots: list, output_col: str):
    """``dataset`` with the vector column ``output_col`` of the features at ``slots`` (in that order) appended.

    Raises
    ------
    InputError
        ``output_col`` exists already, or a slot's column is missing, is a string column, or (a vector) does not
        hold the fitted element.
    """
    from pyspark.ml.functions import array_to_vector, vector_to_array
    from pyspark.sql import functions as F

    fields = {f.name: f for f in dataset.schema.fields}
    if output_col in fields:
        raise InputError(f"outputCol '{output_col}' is already a column of the DataFrame")
    arrays, attrs, values, groups = {}, {}, [], {}
    scalar = (*numeric_types(), T.BooleanType)
    for j, s in enumerate(slots):
        f = fields.get(s.column)
        if f is None:
            raise InputError(f"selected feature '{s.name}' is {s.where()}, which the DataFrame does not have")
        if s.index is None:
            if not isinstance(f.dataType, scalar):
                raise InputError(f"selected feature '{s.name}' is a {f.dataType.simpleString()} column; a vector holds "
                                 f"numbers: index it first (StringIndexer) or rank an assembled featuresCol")
            value, (kind, attr) = qcol(s.column).cast("double"), _column_attr(f, s.name)
        else:
            if not isinstance(f.dataType, VectorUDT):
                raise InputError(f"selected feature '{s.name}' is {s.where()}, which is a "
                                 f"{f.dataType.simpleString()} column here")
            if s.column not in arrays:
                arrays[s.column], attrs[s.column] = f"__spark_fr_array_{len(arrays)}", _attrs(f)
            value = F.col(arrays[s.column])[s.index]
            kind, attr = _element(f, s, attrs[s.column])
        values.append(F.coalesce(value, F.lit(float("nan"))))
        groups.setdefault(kind, []).append({"idx": j, **attr})
    metadata = {"ml_attr": {"attrs": groups, "num_attrs": len(slots)}}
    staged = dataset.select("*", *[F.when(qcol(c).isNotNull(), vector_to_array(qcol(c))).alias(a)  # null: NaN
                                   for c, a in arrays.items()])
    vector = array_to_vector(F.array(*values)).alias(output_col, metadata=metadata)
    return staged.select(*[qcol(c) for c in dataset.columns], vector)
