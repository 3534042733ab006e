"""The documentation's commands are run by tests, and the options page is the option table's.

Every shell command in the ``bash``, ``sh`` and ``console`` code blocks of README.md and docs/ is one of:

* **run here** (:func:`test_the_commands_of_a_page_run`): a ``python jobs/X.py ...`` or a plain
  ``spark-submit jobs/X.py ...`` (no options of its own), run in this process under the suite's Spark session
  (``run_as_process`` of tests/job_in_process.py, as a process would run it), in a scratch folder that looks like
  the project's root to the command: ``jobs/``, ``conf/``, ``notebooks/`` and ``spark_fr/`` linked from the
  checkout, ``../shared`` the shared data, ``out/`` its own, and the tables of yours the docs name
  (:data:`FIXTURES`) made small. Small work runs on the driver's threads, as users run it. Each command must end
  with the exit code :data:`EXPECTED` gives it (0 by default), and every local ``--output`` and ``--plot`` it
  names must exist afterwards. A page's commands run in their order, in one scratch folder.
* **run by another test** (:data:`OTHER_TESTS`: the test's name, which must exist under tests/) or **impossible
  here** (:data:`NOT_HERE`: the reason). Their options are still parsed by the job's own parser
  (:func:`test_commands_run_elsewhere_parse`), so a renamed option fails here.
* **a pytest command**: collected in this process, not run (each must select at least one test); the README's suite
  command must be ``.ci/run``'s, and the README's first command must install as ``.ci/run`` does.

Python blocks listed in :data:`PYTHON_SNIPPETS` (runnable as written: no session or table of the reader's) run in a
fresh Python process from the project's root (:func:`test_the_python_snippets_run`; docs/python.md's scikit-learn
snippet, 17 s at load 15).

A command in the docs that is none of these fails :func:`test_every_command_is_run_by_a_test`, and so does a
listed command that is no longer in the docs. The links between the pages and the files they name are checked
too.

Cost (the shared 2-core machine, numba caches warm, 2026-11-29): the module in 294 s at load 14-17 (its 32
commands 245 s, the suite's session 36 s); the same commands took about 130 s at load 6-8. Each page's commands
are kept small (seconds each on a quiet machine); a run that is the first to use a kernel also compiles it.
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import DATASETS, SHARED, _subprocess_env
from tests.job_in_process import run_as_process
from tests.paths import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(bash|sh|console)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
INTERPRETERS = ("python", "python3", ".venv/bin/python")
#: the README's install, which .ci/run makes too; its commands are checked against .ci/run, not run
SETUP = ("python3", "-m", "venv", ".venv")

#: commands another test runs: {command as written: the test (a function under tests/)}
OTHER_TESTS = {
    "python jobs/package.py --output dist/spark_fr.zip":
        "test_archive_holds_sources_and_a_numba_cache",  # tests/end_to_end/test_package.py builds it (a minute)
    "python jobs/package.py --wheel":  # tests/end_to_end/test_cold_start.py builds it (environment marker)
        "test_the_first_run_of_a_fresh_wheel_costs_at_most_10_s_of_cpu_more_than_the_second",
    "python -m pip wheel . --no-deps -w dist":  # tests/end_to_end/test_package.py builds it from a copy
        "test_the_wheel_holds_the_package_its_shipped_configs_and_three_entry_points",
}
#: commands that cannot run here: {command as written: why}
NOT_HERE = {
    "spark-submit --master spark://host:7077 --py-files dist/spark_fr.zip "
    "--conf spark.pyspark.python=/path/to/executor/python jobs/rank.py --input hdfs:///data/features.parquet "
    "--targets y --output hdfs:///data/rankings":
        "a standalone cluster and HDFS; tests/end_to_end/test_package.py's "
        "test_local_cluster_with_the_archive_and_a_bare_executor_python runs the archive on a local-cluster master",
    "spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 jobs/rank.py --input-table main.sales.features "
    "--version-as-of 42 --exclude customer_id --targets churn --output-table main.ml.feature_rankings "
    "--run-id 2026-11-26":
        "Databricks' catalog (Unity Catalog tables); tests/io/test_delta_lake.py's "
        "test_the_job_from_a_catalog_table_to_a_catalog_table runs the job between catalog Delta tables",
    "spark-submit jobs/drift.py --table main.ml.feature_rankings --last 2 --top 20 --fail-above 0.3 "
    "--plot out/drift.png":
        "a Databricks catalog table; tests/evaluation/test_drift.py's test_catalog_table reads one",
    "spark-submit jobs/evaluate.py --suite mtr --output out/mtr-suite --plot out/mtr-suite.png":
        "every shared MTR set (4.4 minutes); the suites' code is tested by "
        "tests/evaluation/test_evaluation_protocol.py",
    "python jobs/evaluate.py --suite classification --task unsupervised --curves --relief-neighbours 30 "
    "--rankings genie3-extra_trees,rf-extra_trees,relief,laplace --output out/unsup-suite":
        "reproduces a result table (about 20 minutes); test_unsupervised_suite_drops_the_sets_targets runs the "
        "suite's code",
    "python jobs/evaluate.py --input ../shared/datasets/reliefe_mat/chess.mat --labelled 50,100,200 "
    "--no-similarity --rankings genie3-rf,symbolic-rf,rf-rf,relief --output out/chess-ssl":
        "reproduces a result table (about 11 minutes); the semi-supervised protocol runs on a small set above",
    "python jobs/evaluate.py --input ../shared/datasets/reliefe_mat/madelon.mat --rankings "
    "reliefe,reliefe-absmean-adaptive,relief,multisurf,rf-rf --curves --curve-learner sklearn --curve-features "
    "1,2,4,8,16,20,32,50,64,100,128,200,250,300,400,500 --splits 3 --output out/madelon-quality":
        "reproduces a result table (27 minutes); tests/evaluation/test_evaluation_reliefe_peers.py runs these "
        "rankings small",
    "python jobs/evaluate.py --input ../shared/datasets/reliefe_mat/chess.mat --rankings "
    "reliefe,reliefe-absmean-adaptive,relief,multisurf,rf-rf --curves --curve-learner sklearn --curve-features "
    "1,2,3,4,5,6,8,10,12,16,20,24,32,38 --splits 5 --output out/chess-quality":
        "reproduces a result table (22 minutes); tests/evaluation/test_evaluation_reliefe_peers.py runs these "
        "rankings small",
    "python jobs/benchmark.py --suite ensemble --json out/bench-ensemble.json":
        "a benchmark (minutes, every peer a process); test_ensemble_suite_without_spark (marker peers) runs the "
        "suite small",
    "python jobs/benchmark.py --suite tall --rows 100000 --trees 20":
        "a benchmark (minutes, every peer a process); test_tall_suite (marker peers) runs the suite smaller",
    "databricks fs cp dist/spark_fr-0.1.0-py3-none-any.whl dbfs:/Volumes/main/ml/wheels/":
        "a Databricks workspace; tests/end_to_end/test_package.py's "
        "test_the_wheel_with_pyspark_client_only_runs_the_databricks_job installs the wheel into a new venv",
    "databricks jobs create --json @jobs/databricks/scheduled_job.json":
        "a Databricks workspace; tests/end_to_end/test_package.py's "
        "test_the_wheel_with_pyspark_client_only_runs_the_databricks_job runs the job's tasks from that JSON",
    "python jobs/benchmark.py --suite tall --trees 20 --max-memory-gb 16 --peers spark_fr_d12,xgboost_d12,"
    "lightgbm_d12,spark_fr_d20,xgboost_d20,spark_fr,sklearn,xgboost,lightgbm --json out/tall-peers.json":
        "a benchmark at the issue's size (10^6 rows, XGBoost to its memory limit: an hour, 16 GB); "
        "test_tall_suite_with_the_forests_at_one_depth (marker peers) runs the suite small",
    "python jobs/benchmark.py --suite wide --peers spark_fr,sklearn,xgboost,lightgbm --json out/wide-peers.json":
        "a benchmark at the issue's size (2,000 x 20,000, minutes a peer); test_forests_classify_the_wide_table "
        "(marker peers) runs the peers small",
    "python jobs/benchmark.py --check":
        "the benchmark harness's own tests (marker peers, minutes: every peer a process); "
        "test_check_runs_the_peers_tests_the_default_run_leaves_out checks what it selects",
}
#: exit codes other than 0
EXPECTED: dict = {}
#: commands run more than once where they stand: a schedule's task 1 runs every day, and drift needs two runs
REPEAT = {"spark-submit jobs/rank.py --config scheduled --input ../shared/datasets/mtr_enb/enb.arff --targets Y1,Y2 "
          "--output out/scheduled/rankings --plot out/scheduled/ranking.png": 2}


# ----- reading the commands ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    """One shell command of a code block."""

    page: str  # the page, relative to the project's root
    text: str  # as written, comments and line continuations dropped (the key of the lists above)
    argv: tuple  # its words, the block's variables ($D) expanded, without leading VAR=value assignments
    env: tuple  # the leading VAR=value assignments, as (name, value)
    raw: str = ""  # the line as written, comment dropped

    @property
    def parts(self) -> list:
        """The commands joined by ``&&``, each a list of words."""
        out, part = [], []
        for word in self.argv:
            if word == "&&":
                out.append(part)
                part = []
            else:
                part.append(word)
        return out + [part]

    @property
    def job(self):
        """(script, arguments, spark-submit's own options) of a jobs/ script, else None."""
        words = self.parts[-1]
        if words[:1] == ["spark-submit"]:
            i = next((k for k, w in enumerate(words) if w.endswith(".py")), None)
            return None if i is None else (words[i], words[i + 1:], words[1:i])
        if len(words) >= 2 and words[0] in INTERPRETERS and words[1].startswith("jobs/"):
            return words[1], words[2:], []
        return None

    @property
    def pytest(self) -> bool:
        words = self.parts[-1]
        return len(words) >= 3 and words[0] in INTERPRETERS and words[1:3] == ["-m", "pytest"]

    @property
    def runnable(self) -> bool:
        """Run here: a jobs/ script with no spark-submit options and no environment of its own, not listed as run
        elsewhere."""
        job = self.job
        return (job is not None and not job[2] and not self.env and self.parts[0][:4] != list(SETUP)
                and self.text not in OTHER_TESTS and self.text not in NOT_HERE)


def _strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` that starts a word, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _logical_lines(kind: str, body: str) -> list:
    """A block's commands: continuation lines joined, console prompts dropped (its output lines skipped)."""
    lines, buf = [], ""
    for line in body.splitlines():
        if kind == "console" and not buf:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        lines.append(buf + line)
        buf = ""
    return lines


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def commands_of(text: str, page: str) -> list:
    """The commands of the shell code blocks of a Markdown ``text``."""
    out = []
    for m in FENCE.finditer(text):
        variables: dict = {}
        for line in _logical_lines(m.group(1), m.group(2)):
            words = shlex.split(_strip_comment(line))
            if not words:
                continue
            n = next((i for i, w in enumerate(words) if not ASSIGNMENT.match(w)), len(words))
            pairs = tuple(tuple(w.split("=", 1)) for w in words[:n])
            if n == len(words):  # D=... on a line of its own: a variable of the block
                variables.update(pairs)
                continue

            def expand(word):
                return re.sub(r"\$\{?(\w+)\}?", lambda v: variables.get(v.group(1), v.group(0)), word)

            out.append(Command(page, " ".join(words), tuple(expand(w) for w in words[n:]), pairs,
                               " ".join(_strip_comment(line).split())))
    return out


def pages() -> list:
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


def documented() -> list:
    return [c for p in pages() for c in commands_of(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]


def unaccounted(commands) -> list:
    """The commands no test runs: neither run here, collected, checked against .ci/run, nor listed."""
    return [c for c in commands if not (c.runnable or c.pytest or c.text in OTHER_TESTS or c.text in NOT_HERE
                                        or (c.page == "README.md" and c.parts[0][:4] == list(SETUP)))]


COMMANDS = documented()


# ----- every command has a test ---------------------------------------------------------------------------------
def test_every_command_is_run_by_a_test():
    missing = unaccounted(COMMANDS)
    assert not missing, "commands no test runs (make them runnable here, or list them with the test or the " \
                        "reason):\n" + "\n".join(f"{c.page}: {c.text}" for c in missing)
    texts = {c.text for c in COMMANDS}
    stale = sorted((set(OTHER_TESTS) | set(NOT_HERE)) - texts)
    assert not stale, "listed commands that are no longer in the docs:\n" + "\n".join(stale)
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))
    gone = [name for name in OTHER_TESTS.values() if not re.search(rf"^\s*def {name}\(", sources, re.M)]
    assert not gone, f"tests named in OTHER_TESTS that do not exist: {gone}"
    assert len(NOT_HERE) + len(OTHER_TESTS) <= len(COMMANDS) // 3, "most documented commands must run here"


def test_a_new_command_without_a_test_is_caught():
    """The check can fail: an unlisted command that cannot run here, and one hidden in a console block."""
    page = ("text\n\n```bash\npython jobs/rank.py --input x.csv --targets y   # runs here\n"
            "spark-submit --master yarn jobs/rank.py --input hdfs:///x --targets y\n```\n\n"
            "```console\n$ SPARK_REMOTE=sc://h:15002 python jobs/rank.py --input x.csv \\\n"
            "  --targets y\noutput\n```\n")
    found = commands_of(page, "new.md")
    assert [c.text for c in found] == ["python jobs/rank.py --input x.csv --targets y",
                                       "spark-submit --master yarn jobs/rank.py --input hdfs:///x --targets y",
                                       "SPARK_REMOTE=sc://h:15002 python jobs/rank.py --input x.csv --targets y"]
    assert [c.text for c in unaccounted(found)] == [c.text for c in found[1:]]


def test_the_readme_commands_are_ci_runs():
    """The README's test command is exactly .ci/run's, and its first command installs as .ci/run does."""
    readme = [c for c in COMMANDS if c.page == "README.md"]
    first, suite = readme[0], readme[1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == suite.raw, "the README's test command and .ci/run's differ"
    assert suite.pytest and suite.parts[-1][3:] == ["-q"]
    assert first.parts[:-1] == suite.parts[:-1], "the README's two commands install differently"
    assert first.runnable is False and first.job[0] == "jobs/rank.py"


# ----- running them --------------------------------------------------------------------------------------------
def _lake_features(path: Path) -> None:
    """A Delta table of customers (two versions) with a churn depending on x1 and x2."""
    import datetime

    import numpy as np
    import pyarrow as pa
    from deltalake import write_deltalake

    for version, n in enumerate((240, 120)):
        rng = np.random.default_rng(version)
        x = rng.normal(size=(n, 4))
        start = datetime.date(2026, 10, 15)
        table = pa.table({"customer_id": np.arange(n) + 1000 * version,
                          "region": rng.choice(["eu", "us"], n),
                          "day": [start + datetime.timedelta(days=int(d)) for d in rng.integers(0, 40, n)],
                          **{f"x{j}": x[:, j] for j in range(4)},
                          "churn": np.where(x[:, 1] + 0.5 * x[:, 2] > 0, "yes", "no")})
        write_deltalake(str(path), table, mode="append" if version else "error")


def _churn_parquet(path: Path) -> None:
    """300 rows of which 60 labelled: two clusters along x0 and x1 decide churn, 8 noise features."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    cluster = rng.integers(0, 2, 300)
    frame = pd.DataFrame(rng.normal(size=(300, 10)), columns=[f"x{j}" for j in range(10)])
    frame[["x0", "x1"]] += 3.0 * cluster[:, None]
    frame["churn"] = np.where(cluster == 1, "yes", "no").astype(object)
    frame.loc[rng.permutation(300)[60:], "churn"] = None
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False)


#: tables of yours that the docs name, made small here: {path in the scratch folder: maker}
FIXTURES = {"lake/features": _lake_features, "data/churn.parquet": _churn_parquet}


def _scratch(tmp: Path) -> Path:
    """A folder that looks like the project's root to a command: its ../shared is the shared data."""
    work = tmp / "work"
    work.mkdir()
    (tmp / "shared").symlink_to(SHARED)
    for name in ("jobs", "conf", "notebooks", "spark_fr"):
        (work / name).symlink_to(ROOT / name)
    return work


@contextlib.contextmanager
def _jvm_working_directory(spark, path: Path):
    """The JVM's local file system resolves relative paths against ``path`` in the block, as a JVM started there
    would: a process run in ``path`` has its JVM's working directory there, while the suite's JVM keeps its own."""
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
    before = fs.getWorkingDirectory()
    fs.setWorkingDirectory(jvm.org.apache.hadoop.fs.Path(str(path)))
    try:
        yield
    finally:
        fs.setWorkingDirectory(before)


def _named_outputs(args) -> list:
    """The local paths a job's --output and --plot name."""
    return [b for a, b in zip(args, args[1:]) if a in ("--output", "--plot") and ":" not in b]


RUN_PAGES = sorted({c.page for c in COMMANDS if c.runnable})


@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_commands_of_a_page_run(page, spark, tmp_path):
    assert DATASETS.is_dir()
    work = _scratch(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "SPARK_FR_DRIVER_MAX_SECONDS"}  # as users run it
    commands = [c for c in COMMANDS if c.page == page and (c.runnable or (c.parts[0][:4] == list(SETUP) and c.job))]
    for fixture, make in FIXTURES.items():
        if any(fixture in c.text for c in commands):
            make(work / fixture)
    for c in commands:
        script, args, _ = c.job
        if c.parts[0][:4] == list(SETUP):  # the README's first command: .ci/run installs; the job runs here
            assert c.parts[-1][0] == ".venv/bin/python"
        for _ in range(REPEAT.get(c.text, 1)):
            start = time.monotonic()
            with _jvm_working_directory(spark, work):
                done = run_as_process(work / script, args, cwd=work, env=env)
            print(f"{time.monotonic() - start:6.1f} s  {c.text}")  # shown with -s, or when the test fails
            assert done["code"] == EXPECTED.get(c.text, 0), f"{c.text}\n{done['stderr'][-3000:]}"
        for path in _named_outputs(args):
            assert (work / path).exists(), f"{c.text}: {path} was not written"


# ----- parsed, collected, and the options page ---------------------------------------------------------------------
def _parser(script: str):
    """A function that parses a job's arguments as the job does (raising on a bad option), without running it."""
    if script == "jobs/rank.py":
        from spark_fr.options import parse_command_line

        return parse_command_line
    if script in ("jobs/evaluate.py", "jobs/drift.py"):
        from spark_fr.evaluation import drift_job, job

        return (job if script == "jobs/evaluate.py" else drift_job).build_parser().parse_args
    import runpy

    return runpy.run_path(str(ROOT / script), run_name="docs")["parse_args"]  # benchmark.py, package.py


@pytest.mark.parametrize("command", sorted(c.text for c in COMMANDS if c.job and c.text in set(OTHER_TESTS) | set(
    NOT_HERE)), ids=lambda c: c[:80])
def test_commands_run_elsewhere_parse(command, monkeypatch):
    """The jobs' commands run elsewhere parse (pip's and the databricks CLI's are not jobs)."""
    c = next(c for c in COMMANDS if c.text == command)
    script, args, _ = c.job
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))  # jobs/benchmark.py puts jobs/ first
    try:
        _parser(script)(list(args))
    except SystemExit as exc:  # argparse's way out
        pytest.fail(f"{command}: exit {exc.code}")


PYTEST_COMMANDS = [c for c in COMMANDS if c.pytest and c.page != "README.md"]


class _Count:
    """A plugin counting the tests a collection selects."""

    n = 0

    def pytest_collection_finish(self, session):
        self.n = len(session.items)


def test_the_pytest_commands_select_tests(monkeypatch, capsys):
    """Each documented pytest command collects without error and selects at least one test.

    Decision: each command's own arguments go to ``pytest.main(["--collect-only", ...])`` in this process, from the
    project's root, as its own pytest would parse them (options, ``-k``, ``-m``, paths, the conftest's deselection),
    with the project's configuration: the test modules this process already collected are not imported again. (A
    separate interpreter started Python and imported the whole suite's modules once more: 19-28 s of the suite's
    CPU, for nothing the test checks.)"""
    assert PYTEST_COMMANDS
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    failed = []
    for c in PYTEST_COMMANDS:
        args = [a for a in c.parts[-1][3:] if a != "-q"]
        count = _Count()
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args], plugins=[count])
        if int(code) != 0 or count.n == 0:
            failed.append(f"{c.text}: exit {int(code)}, {count.n} tests selected")
    capsys.readouterr()  # the collections' listings
    assert not failed, "\n".join(failed)


def _docs_script():
    import runpy

    return runpy.run_path(str(ROOT / "jobs" / "docs.py"), run_name="docs")


def test_the_options_page_is_the_option_table_and_has_every_option_of_the_help(spark, tmp_path):
    page = (DOCS / "options.md").read_text(encoding="utf-8")
    assert page == _docs_script()["options_markdown"](), "docs/options.md is stale: run python jobs/docs.py"
    done = run_as_process(ROOT / "jobs" / "rank.py", ["--help"], cwd=tmp_path)
    assert done["code"] == 0
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", done["stdout"])) - {"--help"}
    assert len(flags) > 60, flags
    missing = sorted(f for f in flags if f"`{f}`" not in page)
    assert not missing, f"options of jobs/rank.py --help not on docs/options.md: {missing}"


def test_a_stale_options_page_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    docs = _docs_script()
    page = tmp_path / "options.md"
    page.write_text(docs["options_markdown"]().replace("--trees", "--tree"))
    main = docs["main"]
    monkeypatch.setitem(main.__globals__, "PAGE", page)
    monkeypatch.setitem(main.__globals__, "ROOT", tmp_path)
    assert main(["--check"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not the option table's" in err


# ----- links ---------------------------------------------------------------------------------------------------------
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set:
    """The anchors GitHub gives a page's headings (lower case; punctuation but '-' and '_' dropped; spaces '-')."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    out = set()
    for heading in re.findall(r"^#+\s+(.+?)\s*$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-"))
    return out


def test_every_link_between_the_pages_leads_somewhere():
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


PATH_NAMED = re.compile(r"`((?:spark_fr|jobs|tests|conf|notebooks)/[\w./-]+)`")


def test_every_file_the_docs_name_exists():
    """A module, script, config or test module named in the docs (`spark_fr/io/locations.py`) is in the checkout."""
    gone = sorted({f"{p.relative_to(ROOT)}: {name}" for p in pages()
                   for name in PATH_NAMED.findall(p.read_text(encoding="utf-8"))
                   if "*" not in name and not (ROOT / name.rstrip("/")).exists()})
    assert not gone, "files the docs name that do not exist:\n" + "\n".join(gone)


# ----- the Python snippets that are runnable as written -----------------------------------------------------------
#: Python blocks run as written: {(page, the heading the block follows): text its output must hold}
PYTHON_SNIPPETS = {("python.md", "## scikit-learn"): "'rank__n_features_to_select'"}


def python_block(page: str, heading: str) -> str:
    """The first ``python`` code block after ``heading`` on a page of docs/."""
    text = (DOCS / page).read_text(encoding="utf-8")
    after = text.split(f"\n{heading}\n", 1)[1]
    return re.search(r"^```python[ \t]*\n(.*?)^```[ \t]*$", after, re.M | re.S).group(1)


@pytest.mark.parametrize("page,heading", sorted(PYTHON_SNIPPETS))
def test_the_python_snippets_run(page, heading, tmp_path):
    """The snippet in a fresh Python process from the project's root (``../shared`` as the docs' paths expect),
    small work on the driver as users run it."""
    env = {k: v for k, v in _subprocess_env().items() if k not in ("SPARK_FR_DRIVER_MAX_SECONDS", "SPARK_REMOTE")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", python_block(page, heading)], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert PYTHON_SNIPPETS[(page, heading)] in proc.stdout, proc.stdout[-2000:]
