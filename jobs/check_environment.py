"""Check spark_fr in a fresh environment: a new virtualenv with a given Python, the runtime's packages installed
first (a Spark runtime's pyspark, numpy, pandas, pyarrow ...), then the spark_fr wheel built from this checkout.

    python jobs/check_environment.py --python python3.12 \\
        --preinstall pyspark==4.2.0 numpy==2.1.3 pandas==2.2.3 pyarrow==19.0.1
    python jobs/check_environment.py --python python3.11 --preinstall pyspark==3.5.0 numpy==1.26.4 \\
        pandas==1.5.3 pyarrow==14.0.1 scipy==1.11.4 numba==0.59.1 matplotlib==3.7.2 PyYAML==6.0

It fails (exit 1, one line per problem) unless:

1. installing the wheel (plain ``pip install``, no constraints) changes none of the preinstalled packages
   (``pip freeze`` before and after) and ``pip check`` is clean;
2. ``import spark_fr`` in that environment is the installed wheel, and a small ranking run on Spark there
   (ENB, 20 trees, every tree a Spark task on ``local[2]``; Iris from CSV read by Spark; Relief) equals, bit
   for bit, the same run in this Python with this checkout (Relief under another numba version: the same
   ranks, importances within 1e-3 of the largest; see :func:`compare`).

Needs the package registry (pip) and ``../shared/datasets``; takes 2-5 minutes (pip's cache makes repeats
faster). The environment is made under ``--workdir`` (default: a temporary folder, removed unless ``--keep``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
COLUMNS = ["feature", "score", "target", "importance", "rank", "importance_std"]

RANK = """
import json, os, sys
import pyspark, spark_fr
from pyspark.sql import SparkSession
out, data = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
runs = {"enb": dict(data=f"{data}/mtr_enb/enb.arff", targets="Y1,Y2", trees=20, seed=1),
        "iris_csv": dict(data=f"{data}/sklearn_iris/iris.csv", trees=10, seed=1),
        "enb_relief": dict(data=f"{data}/mtr_enb/enb.arff", targets="Y1,Y2", method="relief", seed=1)}
for name, kw in runs.items():
    ranking = spark_fr.rank(spark=spark, **kw)
    ranking.to_pandas().to_csv(os.path.join(out, name + ".csv"), index=False)
print(json.dumps({"spark_fr": spark_fr.__file__, "versions": ranking.metadata["versions"]}))
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Install spark_fr's wheel into a fresh environment next to "
                                            "preinstalled packages and compare a ranking with this checkout's.")
    p.add_argument("--python", default="python3.12", help="the interpreter of the new environment")
    p.add_argument("--preinstall", nargs="*", default=["pyspark==4.2.0"],
                   help="requirements installed before spark_fr (the runtime's own), e.g. pyspark==3.5.2 numpy==1.26.4")
    p.add_argument("--workdir", help="where to make the environment (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the environment")
    p.add_argument("--report", help="write a JSON report here")
    return p.parse_args(argv)


def find_python(name: str) -> str:
    """The interpreter ``name`` (a path or a command; a pyenv shim's inactive version is found under pyenv's root)."""
    probe = "import sys; print(sys.executable)"
    done = subprocess.run([name, "-c", probe], capture_output=True, text=True)
    if done.returncode == 0:
        return done.stdout.strip()
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for candidate in sorted(pyenv.glob(f"*/bin/{Path(name).name}"), reverse=True):
        return str(candidate)
    raise SystemExit(f"error: no interpreter {name} here (tried it on PATH and under {pyenv})")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip() or "(no output)").splitlines()[-1]
        shown = " ".join(str(c) if len(str(c)) < 80 and "\n" not in str(c) else "<script>" for c in cmd[:5])
        raise SystemExit(f"error: {shown} ... failed: {tail}")
    return done


def freeze(python: Path) -> dict:
    lines = run([python, "-m", "pip", "freeze", "--all"]).stdout.splitlines()
    return {ln.split("==")[0].lower(): ln.split("==", 1)[1] for ln in lines if "==" in ln}


def ranking_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "PYTHON", "SPARK_FR", "VIRTUAL_ENV"))}
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_FR_DRIVER_MAX_SECONDS="0")
    return env


def rank_with(python: Path, out: Path, cwd: Path, pythonpath: str | None = None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = ranking_env()
    env["PYSPARK_PYTHON"] = str(python)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = run([python, "-c", RANK, out, DATA], env=env, cwd=cwd)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(a: Path, b: Path, same_numba: bool) -> tuple:
    """Problems, and notes on rankings that differ within what a numba version explains.

    Every ranking must equal this checkout's bit for bit, except Relief's under another numba version: its
    distance kernel reassociates its sums to vectorise (``spark_fr/relief/distances.py``), so another LLVM may
    round differently; there the ranks must agree and the importances within 1e-3 of the largest one.
    """
    import pandas as pd

    def read(path):  # names as text (a feature "1e5" or "007", a run id of digits and an 'e': pandas issue 62617)
        table = pd.read_csv(path, usecols=COLUMNS, dtype={c: str for c in ("feature", "score", "target")})
        return table[COLUMNS].sort_values(["score", "target", "feature"]).reset_index(drop=True)

    problems, notes = [], []
    for path in sorted(a.glob("*.csv")):
        x, y = read(path), read(b / path.name)
        if x.equals(y):
            continue
        same_ranks = x[["feature", "score", "target", "rank"]].equals(y[["feature", "score", "target", "rank"]])
        delta = (x.importance - y.importance).abs().max()
        what = (f"{path.stem}: the ranking differs from this checkout's ({'same' if same_ranks else 'other'} ranks, "
                f"max |importance difference| {delta:.3g})")
        relief = set(x.score) == {"relief"}
        if relief and not same_numba and same_ranks and delta <= 1e-3 * y.importance.abs().max():
            notes.append(what + ", another numba")
        else:
            problems.append(what)
    return problems, notes


def main(argv=None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    python = find_python(args.python)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="spark_fr-env-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    problems = []
    try:
        dist = work / "dist"
        src = work / "src"  # a copy: building in place would leave build/ and *.egg-info in the checkout
        shutil.copytree(ROOT / "spark_fr", src / "spark_fr", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, src], cwd=work)
        wheel = next(dist.glob("spark_fr-*.whl"))
        venv = work / "venv"
        run([python, "-m", "venv", venv])
        vpy = venv / "bin" / "python"
        if args.preinstall:
            run([vpy, "-m", "pip", "install", "-q", *args.preinstall])
        before = freeze(vpy)
        run([vpy, "-m", "pip", "install", "-q", wheel])
        after = freeze(vpy)
        changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
        problems += [f"installing spark_fr changed {k} {v} -> {w}" for k, (v, w) in sorted(changed.items())]
        check = subprocess.run([vpy, "-m", "pip", "check"], capture_output=True, text=True)
        if check.returncode != 0:
            problems.append("pip check: " + "; ".join(check.stdout.strip().splitlines()))
        fresh = rank_with(vpy, work / "rank-env", cwd=work)
        if not fresh["spark_fr"].startswith(str(venv)):
            problems.append(f"spark_fr was imported from {fresh['spark_fr']}, not from the environment")
        here = rank_with(Path(sys.executable), work / "rank-here", cwd=work, pythonpath=str(ROOT))
        same_numba = fresh["versions"]["numba"] == here["versions"]["numba"]
        differ, notes = compare(work / "rank-env", work / "rank-here", same_numba)
        problems += differ
        report = {"python": args.python, "preinstall": args.preinstall, "installed": after,
                  "versions": fresh["versions"], "checkout_versions": here["versions"],
                  "added": sorted(set(after) - set(before)), "problems": problems, "notes": notes,
                  "seconds": round(time.monotonic() - start, 1)}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=1, sort_keys=True))
    v = report["versions"]
    pins = " ".join(f"{k}=={report['installed'].get(k, '?')}" for k in ("pyspark", "numpy", "pandas", "pyarrow",
                                                                         "numba", "scipy"))
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    for line in report["notes"]:
        print(f"note: {line}")
    status = "FAILED" if problems else "ok"
    same = ("differ" if any("differs" in p for p in problems) else
            "identical" if not report["notes"] else "identical but Relief's (another numba)")
    print(f"{status}: Python {v['python']}, {pins}; {len(report['added'])} packages added by spark_fr; "
          f"rankings {same} ({report['seconds']} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
