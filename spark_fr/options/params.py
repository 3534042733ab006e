"""The parameter objects of the ranking methods, made from the option table.

Sketch
------
A :class:`MethodParams` subclass (``EnsembleParams``, ``ReliefParams``, ...) has one attribute per option of its
method (the option's ``field`` name), checked by the option's kind; None means the option's default.
"""
from __future__ import annotations

from ..errors import InputError
from .kinds import Names
from .table import check_value, for_method


class MethodParams:
    """Parameters of one ranking method: one attribute per option of the method (its ``field`` name).

    Values are checked by the options' kinds; None (or absent) means the option's default. Subclasses set
    ``method``, may add internal settings that are not options (``internal``: {attribute: default}) and
    derive values in ``_derive`` (e.g. a default that depends on another option).
    """

    method = ""
    internal: dict = {}

    def __init__(self, **values):
        for opt in for_method(self.method):
            v = values.pop(opt.attribute, None)
            d = list(opt.default) if isinstance(opt.default, tuple) and isinstance(opt.kind, Names) else opt.default
            setattr(self, opt.attribute, d if v is None else check_value(opt, v))
        for attr, d in self.internal.items():
            setattr(self, attr, values.pop(attr, d))
        if values:
            raise InputError(f"unknown {self.method} parameter(s): {', '.join(sorted(values))}")
        self._derive()

    def _derive(self) -> None:
        """Values that depend on other values (none by default)."""

    def check(self) -> None:
        """Checks of combinations of values, before any data is read (none by default)."""

    @classmethod
    def from_options(cls, opts: dict):
        """The parameters from {option name: value} (absent or None: the default)."""
        return cls(**{o.attribute: opts.get(o.name) for o in for_method(cls.method)})

    def to_dict(self) -> dict:
        """{attribute: value} (what the run records in ``params``)."""
        keys = [o.attribute for o in for_method(self.method)] + list(self.internal)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in ((k, getattr(self, k)) for k in keys)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"
