"""YAML configs (``--config``): the one reader of every job's config files, and ``conf/defaults.yaml``.

Sketch
------
:func:`load_config` reads a local YAML file into ``{option name: checked value}`` for any job's options (keys with
dashes or underscores; lists where the command line takes a comma list; null = the default); an unknown key, a
value of the wrong type or a file that is not a mapping is one line naming the file. A config holding a
relational schema (its ``tables``) sets ``--schema`` when the job has that option. Fetching a config from a URI is
the runner's (:mod:`spark_fr.runner`). :func:`defaults_yaml` is the text of ``conf/defaults.yaml``.
:func:`config_path` finds ``--config NAME``, a config shipped inside the package (``spark_fr/configs/``).
"""
from __future__ import annotations

import os

from ..errors import InputError, one_line
from .kinds import Choice, Pair
from .table import GROUPS, JOB, OPTIONS, RENAMED, _task_registry, check_value

#: the top-level keys of a relational schema (spark_fr.relational.schema): a config file holding ``tables`` is a
#: schema, and may hold options too
SCHEMA_KEYS = frozenset({"tables", "target", "max_depth", "frequent_values", "aggregates", "base_dir"})


def read_yaml(path: str, shown: str, what: str = "config file"):
    """The content of the local YAML file ``path`` (None for an empty one); one-line errors naming it as ``shown``:
    not found (``<what> not found: <shown>``), or not valid YAML (the parser's first line)."""
    import yaml

    if not os.path.isfile(path):
        raise InputError(f"{what} not found: {shown}")
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        first = one_line(err) if str(err).strip() else type(err).__name__
        raise InputError(f"{shown}: not valid YAML ({first})") from None


def load_config(path: str, name: str | None = None, options=None, job: str | None = None) -> dict:
    """The options of a YAML config file, checked like keywords (one-line errors naming the file).

    Parameters
    ----------
    path : str
        A local file.
    name : str, optional
        What the user named (a URI the file was fetched from), used in messages and as the schema's path.
    options : iterable of Option, optional
        The options the job takes (default: the rank job's, those of the table with the command line).
    job : str, optional
        The job's program, named in the message of an unknown key (``unknown option 'x' of jobs/drift.py``).

    Returns
    -------
    dict
        ``{option name: checked value}``; ``schema`` is the config itself when it holds a relational schema.
    """
    shown = name or path
    cfg = read_yaml(path, shown)
    if cfg is None:
        return {}
    if not isinstance(cfg, dict):
        raise InputError(f"{shown}: a config file must be a mapping of option names to values")
    known = {o.name: o for o in (options if options is not None else (o for o in OPTIONS if JOB in o.where))}
    out = {}
    if "tables" in cfg and "schema" in known:  # a relational schema (spark_fr.relational.schema), maybe with options
        out["schema"] = shown
        cfg = {k: v for k, v in cfg.items() if k not in SCHEMA_KEYS}
    for key, value in cfg.items():
        opt = known.get(str(key).replace("-", "_"))
        if opt is None and RENAMED.get(str(key).replace("-", "_")) in known:
            new = RENAMED[str(key).replace("-", "_")]
            raise InputError(f"{shown}: option '{key}' is now '{new}' (--{new.replace('_', '-')}: Delta time travel; "
                             f"--version prints spark_fr's version)")
        if opt is None or opt.name == "config":
            raise InputError(f"{shown}: unknown option '{key}'" + (f" of {job}" if job else ""))
        if value is not None:  # null = the default
            out[opt.name] = check_value(opt, value, where=f"{shown}: ")
    return out


def shipped_configs() -> dict:
    """The configs shipped inside the package, ``{name: path}``: ``spark_fr/configs/NAME.yaml`` (package data;
    none when spark_fr is imported from a zip, whose configs are not files)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs")
    if not os.path.isdir(folder):
        return {}
    return {f[:-5]: os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".yaml")}


def config_path(given: str) -> str:
    """``--config``'s file: ``given`` itself when it names an existing file, a path (with a separator), a
    ``.yaml``/``.yml`` file or a URI; else a bare name is a config shipped with spark_fr (``--config scheduled``:
    :func:`shipped_configs`), and an unknown name is a one-line error listing the shipped ones.

    Decision: an existing file always wins over a shipped config of the same name (a user's ``scheduled`` file in
    the working folder is what they meant)."""
    text = str(given)
    bare = not any(c in text for c in ("/", os.sep, ":")) and not text.lower().endswith((".yaml", ".yml"))
    if not bare or os.path.isfile(text):
        return text
    shipped = shipped_configs()
    if text in shipped:
        return shipped[text]
    names = ", ".join(shipped) or "none in this installation"
    raise InputError(f"--config {text}: no such file, and not a config shipped with spark_fr ({names}); give a "
                     f"YAML file's path or one of those names")


def defaults_yaml() -> str:
    """The text of ``conf/defaults.yaml``: every option of a config file with its default and help."""
    lines = ["# spark_fr defaults: the value of every option when it is not given (generated from",
             "# spark_fr/options/; tests keep this file equal to it). Copy and edit: any option of",
             "# `jobs/rank.py --help` can appear in a config, with dashes or underscores; the command line wins;",
             "# null means the default (what it is, is said after it)."]
    for group in GROUPS:
        lines.append(f"# --- {group}")
        for o in OPTIONS:
            if o.group != group or JOB not in o.where or o.name in ("config",):
                continue
            d = o.default
            if isinstance(d, tuple) and isinstance(o.kind, Pair):
                value = ",".join(str(float(x)) for x in d)
            elif isinstance(d, tuple):
                value = "[" + ", ".join(d) + "]"
            elif d is None:
                value = "null"
            elif isinstance(d, bool):
                value = "true" if d else "false"
            else:
                value = str(d)
            note = o.help + (f" (null: {o.default_help})" if d is None and o.default_help else "")
            if isinstance(o.kind, Choice):
                note += " [" + " | ".join(o.kind.choices) + "]"
            lines.append(f"{o.name}: {value}".ljust(34) + f"# {note}")
    lines.append("# --- per-task ensemble defaults (the thesis' recommendations), for the options above left at null:")
    for t in _task_registry().TARGET_TYPES:
        if t.ensemble_defaults:
            shown = ", ".join(f"{k}: {'[' + ', '.join(v) + ']' if isinstance(v, list) else str(v).lower()}"
                              for k, v in t.ensemble_defaults.items())
            lines.append(f"#   {t.name}: {shown}")
    return "\n".join(lines) + "\n"
