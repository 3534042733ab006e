"""The modules of ``jobs/benchmark.py``, one concern each.

Sketch
------
``paths``         where the repository, ``jobs/rank.py``, the peer scripts and the shared CLUS tools are
``options``       the shared options' per-suite defaults, comma lists, ``--peers``
``data``          the synthetic data sets with planted features (``make_synthetic.py``), written once
``tall_data``     the tall MTR table, Parquet written row group by row group (10^7 rows in bounded memory)
``wide_data``     the wide classification table, as Parquet and as ARFF with the same values
``measure``       one command: wall time, peak RSS of its process tree, load average; the machine's facts; why a
                  run did not finish (out of memory, timeout)
``peers``         a benchmarked program (its command, how to read its ranking) and whether it can run here
``rounds``        alternating the peers' commands for several rounds; per-peer summaries
``tables``        plain-text tables, ratios between peers, the JSON report
``cost_model``    the fitted model of the time per tree, ``c0 + c1 n log2(n) k (T + 4) / E``
``scaling_plot``  the scaling suite's PNG
``relational_data`` the relational suite's synthetic customers -> accounts -> transactions tables (Parquet, 10^7
                  fact rows in bounded memory), their schema YAML and the planted label
``ensemble``      ``--suite ensemble``: PCT ensembles against scikit-learn and CLUS
``relief``        ``--suite relief``: Relief against CLUS and skrebate, and peak memory by rows
``arff``          ``--suite arff``: ARFF row parsing against scipy
``tall``          ``--suite tall``: a tall MTR table against scikit-learn, XGBoost, LightGBM and Spark MLlib, at full
                  depth and at a depth; broadcast vs partitioned
``wide``          ``--suite wide``: a wide table (Parquet and ARFF) against CLUS, scikit-learn, XGBoost and LightGBM
``scaling``       ``--suite scaling``: strong and weak scaling by Spark master and mode, and the cost model
``reliefe_data``  the ReliefE suite's wide, sparse classification set with planted features (a ``.mat`` file)
``reliefe``       ``--suite reliefe``: ReliefE against the authors' ``reliefe`` 0.18 and spark_fr's ReliefF
``relational``    ``--suite relational``: relational feature generation against featuretools' deep feature synthesis

A suite is a module with ``SUMMARY`` (its line in ``--suite``'s help), ``add_arguments(parser)``,
``check_arguments(args, error)`` and ``run(args) -> exit code``; ``jobs/benchmark.py`` lists the suites
in ``SUITES``. The peers themselves are scripts in ``jobs/peers/``, started as separate processes.
"""
