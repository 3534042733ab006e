"""The names of the ensembles' HMLC impurities (:mod:`spark_fr.tasks.hmlc`), in a module without numpy or
numba: :mod:`spark_fr.options` reads them, and so does every command line at start-up (the relational local
engine's runs among them), which should not pay for compiling kernels it may never call."""

#: the ensembles' HMLC impurities (:mod:`spark_fr.tasks.hmlc`'s docstring); the first is the default
#: (``--hmlc-impurity``)
IMPURITIES = ("weighted", "normalised")
DEFAULT_IMPURITY = IMPURITIES[0]
