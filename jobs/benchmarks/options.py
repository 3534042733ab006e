"""Options the suites share: per-suite defaults of the shared options, comma lists, the ``--peers`` choice.

Sketch
------
``jobs/benchmark.py`` declares ``--rows``, ``--features``, ``--targets``, ``--trees``, ``--repeats`` and
``--peers`` once, with no default: each suite's ``check_arguments`` fills in its own defaults with
:func:`fill_defaults` (the ensemble suite's 20,000 rows are not the tall suite's 1,000,000) and parses
``--peers`` against its own peer names with :func:`parse_peers`.
"""
from __future__ import annotations


def comma_list(text: str) -> list:
    """The non-empty, stripped items of a comma-separated string.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
    """
    return [x.strip() for x in str(text).split(",") if x.strip()]


def fill_defaults(args, **defaults) -> None:
    """Give every shared option the user left out (None) the suite's default, in place.

    Parameters
    ----------
    args : argparse.Namespace
    **defaults
        ``option name -> default`` (``rows=20000``, ``repeats=3``, ...).
    """
    for name, value in defaults.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def parse_peers(args, choices: tuple, default: str, error) -> None:
    """Parse ``--peers`` (or the suite's default) into a list of the suite's peer names, in place.

    Parameters
    ----------
    args : argparse.Namespace
        ``args.peers`` (a comma list or None) becomes a list.
    choices : tuple of str
        The suite's peer names.
    default : str
        The comma list used when ``--peers`` is not given.
    error : callable
        ``error(message)`` exits with a usage error.
    """
    args.peers = comma_list(args.peers if args.peers is not None else default)
    bad = [p for p in args.peers if p not in choices]
    if bad or not args.peers:
        error(f"--peers: unknown {','.join(bad) or '(empty)'} for --suite {args.suite}; "
              f"choose from {', '.join(choices)}")
