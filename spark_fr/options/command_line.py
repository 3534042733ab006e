"""Command lines made from rows of the option table: flags, choices, groups, help with the defaults.

Sketch
------
:func:`build_parser` makes the argparse parser of any list of :class:`~spark_fr.options.table.Option` rows (the
rank job's are those of :data:`~spark_fr.options.table.OPTIONS` the command line takes; ``jobs/evaluate.py``
and ``jobs/drift.py`` pass their own). Every value defaults to None, so that a config file can fill what the
command line leaves out; a bad command line is one line (:class:`Parser`). ``--version`` prints
``spark_fr <version>`` and exits 0 (every job); the old time-travel flags ``--version N`` and ``--timestamp T``
are one-line errors naming ``--version-as-of`` and ``--timestamp-as-of`` (:func:`check_renamed`).
"""
from __future__ import annotations

import argparse
import re

from ..errors import InputError
from .kinds import Choice, Flag
from ..version import __version__
from .table import JOB, OPTIONS, RENAMED, Option

RANK_DESCRIPTION = "Rank the features of a table for predicting structured targets (spark_fr)."
RANK_EPILOG = ("Options can also be given in a YAML file (--config); the command line wins.\n"
               "Example: python jobs/rank.py --input ../shared/datasets/mtr_enb/enb.arff --targets Y1,Y2 "
               "--output out/enb")


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (the usage only with --help), and an abbreviated
    option is refused (``--relief`` would otherwise pick one of the ``--relief-*`` / ``--reliefe-*`` options, or
    a later option would silently change what an old abbreviation means)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        import sys

        args = list(sys.argv[1:] if args is None else args)
        check_renamed(args, self)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        message = re.sub(r"^argument [^:]+: (?=--)", "", message)  # our own messages name the option already
        raise InputError(f"{message} (see {self.prog} --help)")


def check_renamed(args: list, parser: argparse.ArgumentParser) -> None:
    """The flags of :data:`~spark_fr.options.table.RENAMED` refused in one line naming the new ones, on a command
    line that has them: ``--version N`` (time travel before; now ``--version`` prints the version and exits 0, so an
    old scheduled run would silently do nothing) and ``--timestamp T``."""
    for i, arg in enumerate(map(str, args)):
        flag, _, value = arg.partition("=")
        old = flag[2:] if flag.startswith("--") else None
        new = "--" + RENAMED[old].replace("_", "-") if old in RENAMED else None
        if new is None or new not in parser._option_string_actions:
            continue
        if not value and i + 1 < len(args) and not str(args[i + 1]).startswith("-"):
            value = str(args[i + 1])
        if old == "version" and not value:
            continue  # --version alone: the version (argparse's action)
        given = f"{flag} {value}".strip()
        raise InputError(f"{given}: Delta time travel is {f'{new} {value}'.strip()} now; --version alone prints "
                         f"spark_fr's version (see {parser.prog} --help)")


def parse_with(opt: Option):
    """argparse's ``type`` for ``opt``: its kind's parse, a bad value one line naming the flag."""
    def parse(text):
        try:
            return opt.kind.parse(text, opt)
        except InputError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = opt.name  # argparse names the type in its messages
    return parse


def help_text(opt: Option) -> str:
    """The option's help with its default, as ``--help`` shows it."""
    shown = opt.default_help or (",".join(opt.default) if isinstance(opt.default, tuple) else opt.default)
    return opt.help + ("" if shown in (None, False, "") else f" (default: {shown})")


class ChoicesMetavar:
    """The metavar of a :class:`~spark_fr.options.kinds.Choice` option: its words joined by ``|`` when argparse
    prints a usage or help text.

    Decision: joined on demand, not when the parser is built: the ``--task`` words are the task registry's, whose
    import (every task and numba, ~0.4 s of one core) then waited in the main thread before the job could start
    its warm-up thread and read its input."""

    def __init__(self, kind: Choice):
        self.kind = kind

    def __str__(self) -> str:
        return "|".join(self.kind.choices)


def add_option(group, opt: Option) -> None:
    """Add ``opt`` to an argparse group: a flag (with ``--no-<name>`` when negatable), else an option taking one
    value parsed by its kind; the value defaults to None."""
    text = help_text(opt)
    if isinstance(opt.kind, Flag):
        if not opt.kind.negatable:
            group.add_argument(opt.flag, dest=opt.name, action="store_true", default=None, help=text)
            return
        ex = group.add_mutually_exclusive_group()
        ex.add_argument(opt.flag, dest=opt.name, action="store_true", default=None, help=text)
        ex.add_argument("--no-" + opt.flag[2:], dest=opt.name, action="store_false", default=None,
                        help=f"do not {opt.help}" if " " in opt.help else None)
        return
    metavar = ChoicesMetavar(opt.kind) if isinstance(opt.kind, Choice) else None
    group.add_argument(opt.flag, dest=opt.name, type=parse_with(opt), default=None, help=text, metavar=metavar)


def job_options() -> list:
    """The options of the rank job's command line (and of its configs)."""
    return [o for o in OPTIONS if JOB in o.where]


def build_parser(prog: str = "jobs/rank.py", options=None, description: str = RANK_DESCRIPTION,
                 epilog: str = RANK_EPILOG) -> argparse.ArgumentParser:
    """The command line of ``options`` (default: the rank job's), one help section per group in the order the
    groups first appear; every value defaults to None, so that a config file can fill it."""
    p = Parser(prog=prog, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    options = job_options() if options is None else list(options)
    groups = {g: p.add_argument_group(g) for g in dict.fromkeys(o.group for o in options)}
    for opt in options:
        add_option(groups[opt.group], opt)
    p.add_argument("--version", action="version", version=f"spark_fr {__version__}",
                   help="print spark_fr's version and exit")
    return p


def parse_command_line(argv=None, parser=None) -> dict:
    """{name: value} of the options given on the command line (the others are absent); ``parser``: the
    rank job's by default."""
    args = (parser or build_parser()).parse_args(argv)
    return {k: v for k, v in vars(args).items() if v is not None}
