"""The test suite: one folder per package of spark_fr (tests/pct/ tests spark_fr/pct/, ...), the comparisons with
outside implementations in tests/comparisons/, the whole processes in tests/end_to_end/ (docs/testing.md).

Decision: tests/ and its folders are packages, so a test module is imported under its full name
(``tests.relational.test_relational_local``) and a module that shares another's helpers imports them by that
name, from any folder, whatever pytest collected first (pytest's default prepend import mode puts the project's
root on ``sys.path``, not every test folder).
"""
