"""Every option of spark_fr, once: name, type, default, choices, help, and the methods that use it.

Sketch
------
:data:`OPTIONS` is one declarative table (:mod:`.table`). Everything that takes options is derived from it:

* the command lines (:func:`build_parser` in :mod:`.command_line`: flags, choices, groups, help with the
  defaults; the rank job's, and jobs/evaluate.py's and jobs/drift.py's from their own rows);
* YAML configs (:func:`load_config` in :mod:`.config`: unknown keys and values of the wrong type are one-line
  errors) and ``conf/defaults.yaml`` (:func:`defaults_yaml`; a test keeps the file equal to it);
* the keywords of :func:`spark_fr.rank` (:func:`check_keywords`);
* the parameter objects of the methods (:class:`MethodParams` in :mod:`.params`:
  :class:`spark_fr.ensemble.params.EnsembleParams`, :class:`spark_fr.relief.params.ReliefParams`; their
  attributes are the options' ``field`` names);
* the Params of the pyspark.ml Estimator (:func:`estimator_options`), in camelCase.

Values arrive in two forms and are checked by the option's kind (:mod:`.kinds`): text from the command line
(``parse``: ``--trees 10``) and typed values from YAML, Python or a Spark Param (``coerce``). Messages name the
option as its command-line flag and quote the value.
"""
from .command_line import Parser, add_option, build_parser, help_text, job_options, parse_command_line, parse_with
from .config import SCHEMA_KEYS, config_path, defaults_yaml, load_config, shipped_configs
from .kinds import (Choice, CountOrFraction, Flag, FoldCount, Integer, IntegerOrWord, Kind, Names, Pair, Real,
                    RealOrWord, Text, Word)
from .params import MethodParams
from .table import (ALL, API, BOOST, BOOSTING, BOTH, BY_NAME, ENS, ENSEMBLES, GROUPS, IO, JOB, OPTIONS, REL, RELE,
                    RELIEF, RELIEFE, RENAMED, RUN, TASK, TREES, Option, check_keywords, check_value, defaults,
                    estimator_options, for_method, option)

__all__ = ["ALL", "API", "BOOST", "BOOSTING", "BOTH", "BY_NAME", "ENS", "ENSEMBLES", "GROUPS", "IO", "JOB", "OPTIONS",
           "REL", "RELE", "RELIEF", "RELIEFE", "RENAMED", "RUN", "SCHEMA_KEYS", "TASK", "TREES", "Choice",
           "CountOrFraction", "Flag", "FoldCount", "Integer", "IntegerOrWord", "Kind", "MethodParams", "Names",
           "Option", "Pair", "Parser", "Real", "RealOrWord", "Text", "Word", "add_option", "build_parser",
           "check_keywords", "check_value", "config_path", "defaults", "defaults_yaml", "estimator_options",
           "for_method", "help_text", "job_options", "load_config", "option", "parse_command_line", "parse_with",
           "shipped_configs"]
