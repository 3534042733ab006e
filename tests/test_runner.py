"""One runner for the command lines (spark_fr.runner): a job is its options and its work; options from the
defaults, a config and the command line; one line on standard error and the exit code for every way a run ends;
the same for jobs/rank.py, jobs/evaluate.py and jobs/drift.py."""
import logging
import os
import signal

import pytest

from spark_fr import options as O
from spark_fr.errors import InputError
from spark_fr import runner

ANSWER = O.Option("answer", O.Integer(lo=1, description="a positive integer"), 42, "the answer", "toy")


@pytest.fixture
def root_logger():
    """The runner sets up logging as a process does: the root logger is put back after the test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def toy(work):
    """A job whose work is ``work(opts)`` (its options: --answer, --config, --log-level)."""
    options = (ANSWER, O.BY_NAME["config"], O.BY_NAME["log_level"])
    return runner.Job("jobs/toy.py", "a toy", "", options, lambda opts, given: work(opts))


def run(job, argv, capsys):
    code = runner.main(job, [str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, [ln for ln in err.splitlines() if ln.strip()]


def test_options_come_from_the_defaults_the_config_and_the_command_line(tmp_path, capsys, root_logger):
    seen = []
    job = toy(lambda opts: seen.append(opts["answer"]) or 0)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("answer: 7\n")
    assert run(job, [], capsys)[0] == 0
    assert run(job, ["--config", cfg], capsys)[0] == 0
    assert run(job, ["--config", cfg, "--answer", "9"], capsys)[0] == 0
    assert seen == [42, 7, 9]


@pytest.mark.parametrize("argv, config, line", [
    (["--answer", "0"], None, "error: --answer must be a positive integer, not 0 (see jobs/toy.py --help)"),
    (["--answr", "3"], None, "error: unrecognized arguments: --answr 3 (see jobs/toy.py --help)"),
    ([], "answer: x\n", "error: {cfg}: --answer must be a positive integer, not 'x'"),
    ([], "question: 1\n", "error: {cfg}: unknown option 'question' of jobs/toy.py"),
    ([], "- answer\n", "error: {cfg}: a config file must be a mapping of option names to values"),
])
def test_bad_options_are_one_line_and_exit_code_2_before_any_work(tmp_path, capsys, root_logger, argv, config, line):
    worked = []
    cfg = tmp_path / "c.yaml"
    if config is not None:
        cfg.write_text(config)
        argv = [*argv, "--config", cfg]
    code, out, err = run(toy(worked.append), argv, capsys)
    assert (code, err, worked) == (2, [line.format(cfg=cfg)], [])


def _interrupt(opts):
    raise KeyboardInterrupt


def _terminate(opts):
    os.kill(os.getpid(), signal.SIGTERM)
    import time

    time.sleep(5)  # the signal is raised here
    return 0


@pytest.mark.parametrize("work, code, line", [
    (lambda opts: 3, 3, None),  # a job's own code (drift's alert)
    (lambda opts: (_ for _ in ()).throw(InputError("x.csv: column 'a' is not numeric\n(row 3)")), 2,
     "error: x.csv: column 'a' is not numeric"),
    (lambda opts: open("/nonexistent-spark_fr/x"), 2, "error: [Errno 2] No such file or directory: "
                                                      "'/nonexistent-spark_fr/x'"),
    (lambda opts: {}["k"], 1, "error: unexpected failure: 'k' (rerun with --log-level debug for details)"),
    (_interrupt, 130, "error: interrupted"),
    (_terminate, 143, "error: terminated (SIGTERM)"),
], ids=["own code", "bad input", "missing file", "failure", "interrupted", "terminated"])
def test_every_way_a_run_ends_is_one_line_and_its_exit_code(capsys, root_logger, work, code, line):
    got, out, err = run(toy(work), [], capsys)
    assert (got, err) == (code, [line] if line else [])


def test_debug_shows_the_traceback_of_a_failure(capsys, root_logger):
    with pytest.raises(KeyError):
        runner.main(toy(lambda opts: {}["k"]), ["--log-level", "debug"])


@pytest.mark.parametrize("module", ["spark_fr.cli", "spark_fr.evaluation.job", "spark_fr.evaluation.drift_job"])
def test_the_three_command_lines_are_jobs_of_the_runner(module, tmp_path, capsys, root_logger):
    """rank, evaluate and drift: --log-level and --config, a config's unknown key named with the job, exit code 2."""
    import importlib

    job = importlib.import_module(module).JOB
    assert {"config", "master", "log_level"} <= {o.name for o in job.options}
    cfg = tmp_path / "c.yaml"
    cfg.write_text("log-level: debug\nnot_an_option: 1\n")
    code, out, err = run(job, ["--config", cfg], capsys)
    assert (code, err) == (2, [f"error: {cfg}: unknown option 'not_an_option' of {job.prog}"])
    code, out, err = run(job, ["--log-level", "loud"], capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith("error: --log-level must be one of debug, info"), err


# ----- the console scripts and python -m (issue 35, 1) -------------------------------------------------------------
@pytest.mark.parametrize("module", ["spark_fr.cli", "spark_fr.evaluation.job", "spark_fr.evaluation.drift_job"])
def test_python_dash_m_runs_the_command_and_names_it_as_invoked(module, tmp_path):
    """``python -m spark_fr.evaluation.drift_job`` exited 0 doing nothing (spark_fr.cli and .evaluation.job too):
    each runs its command now (a bad option: one line, exit code 2), named as it was invoked."""
    import subprocess
    import sys

    from tests.paths import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run_ = subprocess.run([sys.executable, "-m", module, "--no-such-option"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert run_.returncode == 2 and run_.stderr.strip().splitlines() == [
        f"error: unrecognized arguments: --no-such-option (see python -m {module} --help)"], run_.stderr


@pytest.mark.parametrize("argv0, prog", [("/venv/bin/spark-fr-rank", "spark-fr-rank"),
                                         ("C:\\venv\\Scripts\\spark-fr-drift.exe", "spark-fr-drift"),
                                         ("jobs/rank.py", "jobs/rank.py"), ("-c", "jobs/rank.py")])
def test_a_console_script_is_named_as_invoked(argv0, prog, monkeypatch):
    import sys
    import types

    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # a console script's: no spec
    monkeypatch.setattr(os.path, "basename", lambda p: p.replace("\\", "/").rsplit("/", 1)[-1])
    assert runner.invoked_as("jobs/rank.py") == prog
