"""The modules of ``jobs/benchmark.py``, one concern each.

Sketch
------
``paths``     where the repository, ``jobs/rank.py``, the peer scripts and the shared CLUS tools are
``data``      the synthetic data sets with planted features (``make_synthetic.py``), written once
``measure``   one command: wall time, peak RSS of its process tree, load average; the machine's facts
``peers``     a benchmarked program (its command, how to read its ranking) and whether it can run here
``rounds``    alternating the peers' commands for several rounds; per-peer summaries
``tables``    plain-text tables, ratios between peers, the JSON report
``ensemble``  ``--suite ensemble``: PCT ensembles against scikit-learn and CLUS
``relief``    ``--suite relief``: Relief against CLUS and skrebate, and peak memory by rows
``arff``      ``--suite arff``: ARFF row parsing against scipy

A suite is a module with ``SUMMARY`` (its line in ``--suite``'s help), ``add_arguments(parser)``,
``check_arguments(args, error)`` and ``run(args) -> exit code``; ``jobs/benchmark.py`` lists the suites
in ``SUITES``. The peers themselves are scripts in ``jobs/peers/``, started as separate processes.
"""
