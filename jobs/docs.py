"""Generate ``docs/options.md`` from the option table: ``python jobs/docs.py`` writes it, ``--check`` compares.

Every option of spark_fr is declared once, in :data:`spark_fr.options.OPTIONS` (``spark_fr/options/table.py``);
the command line, YAML configs, ``rank()``'s keywords, the Estimator's Params and ``conf/defaults.yaml`` are
derived from it, and so is the options page. ``tests/end_to_end/test_docs.py`` keeps the committed page equal to
:func:`options_markdown` and checks that every option of ``jobs/rank.py --help`` is on it.

Decision: the renderer lives here, beside the other scripts, not in ``spark_fr.options``: the page is
documentation of the package, not something the package needs at run time.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spark_fr import options as O  # noqa: E402

PAGE = ROOT / "docs" / "options.md"
HEADER = """# Options

<!-- Generated from spark_fr/options/table.py by `python jobs/docs.py`; edit the option table, not this page
(tests/end_to_end/test_docs.py keeps the two equal). -->

Every option is declared once, in `spark_fr/options/table.py`, and means the same everywhere: on the command
line of `jobs/rank.py` (`--flag`), as a key of a YAML config (`--config`; dashes or underscores; the command line
wins; `conf/defaults.yaml` lists them all), as a keyword of `spark_fr.rank` (underscores), and, where the
"Estimator Param" column names one, as a Param of the Estimator `FeatureRanker` (camelCase). "config only" marks
an option of the command line and YAML that `rank()` does not take (its data and outputs are arguments and
methods of their own); "`rank()` only" one that only Python takes. Values are checked the same way in each (a
string where a number is expected is an error, `inf` and `nan` are never accepted). An empty default is decided
at run time (`run.json`'s `params` records what was used). "Methods" are the `--method` values that use the
option; "all" means every run. `jobs/evaluate.py` passes the ranking options it does not set to every ranking;
`python jobs/evaluate.py --help` and `python jobs/drift.py --help` list their own options. Every command's `--version` prints spark_fr's version
(Delta time travel is `--version-as-of` / `--timestamp-as-of`), and `--config NAME` takes a config shipped in the
package by its name (`--config scheduled`: [install](install.md#build-the-wheel)).
"""


def _cell(text) -> str:
    """Text made safe for a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("\n", " ")


def _accepts(opt: O.Option) -> str:
    """What values the option takes."""
    kind = opt.kind
    if isinstance(kind, O.Flag):
        return f"a flag (`--no-{opt.flag[2:]}` turns it off)" if kind.negatable else "a flag"
    if isinstance(kind, O.Choice):
        return " or ".join(f"`{c}`" for c in kind.choices)
    if isinstance(kind, O.Names) and kind.choices:
        return "a comma list of " + ", ".join(f"`{c}`" for c in kind.choices)
    if isinstance(kind, (O.IntegerOrWord, O.RealOrWord)):
        return " or ".join([f"`{w}`" for w in kind.words] + [kind.description])
    if isinstance(kind, O.CountOrFraction) and kind.words:
        return ", ".join(f"`{w}`" for w in kind.words) + ", " + kind.description
    return kind.description if type(kind) is not O.Kind else "a Python object"


def _default(opt: O.Option) -> str:
    """The default as ``--help`` states it (empty: decided at run time)."""
    if opt.default_help:
        return opt.default_help
    d = opt.default
    if d is None or d is False:
        return "off" if d is False else ""
    if isinstance(d, tuple):
        return ",".join(str(x) for x in d)
    return str(d)


def _where(opt: O.Option) -> str:
    """The option's names in the front ends that accept it."""
    names = []
    if O.JOB in opt.where:
        names.append(f"`{opt.flag}`")
    if O.API not in opt.where:
        names.append(f"`{opt.name}` (config only)")
    else:
        names.append(f"`{opt.name}`" + ("" if O.JOB in opt.where else " (`rank()` only)"))
    return "<br>".join(names)


def options_markdown() -> str:
    """The text of ``docs/options.md``: every option of the table, by ``--help``'s groups."""
    lines = [HEADER]
    for group in O.GROUPS:
        lines += [f"## {group[0].upper()}{group[1:]}", "",
                  "| option | accepts | default | methods | Estimator Param | description |",
                  "|---|---|---|---|---|---|"]
        for opt in O.OPTIONS:
            if opt.group != group:
                continue
            methods = ", ".join(sorted(opt.methods)) or "all"
            param = f"`{opt.param_name}`" if opt.param_name else ""
            cells = [_where(opt), _accepts(opt), _default(opt), methods, param, opt.help]
            lines.append("| " + " | ".join(_cell(c) if i else c for i, c in enumerate(cells)) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Write the page, or with ``--check`` say in one line whether it is the table's (exit code 1 if not)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare docs/options.md with the table; write nothing")
    args = ap.parse_args(argv)
    text = options_markdown()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"error: {PAGE.relative_to(ROOT)} is not the option table's: run python jobs/docs.py",
                  file=sys.stderr)
            return 1
        print(f"{PAGE.relative_to(ROOT)} is the option table's ({len(O.OPTIONS)} options)")
        return 0
    PAGE.parent.mkdir(exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} ({len(O.OPTIONS)} options)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
