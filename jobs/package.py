"""Build the archive that ships spark_fr to a cluster's executors: ``--py-files`` with a numba cache inside; or,
with ``--wheel``, spark_fr's wheel with that cache inside (``pip install`` it: the first run loads the kernels).

    python jobs/package.py --output dist/spark_fr.zip [--python /path/to/executor/python] [--no-numba-cache]
    spark-submit --master ... --py-files dist/spark_fr.zip jobs/rank.py --input ... [options]
    python jobs/package.py --wheel [--output dist]       # dist/spark_fr-<version>-py3-none-any.whl
    pip install dist/spark_fr-*.whl                      # %pip install on Databricks, or a cluster's init script

The numba cache is compiled for any x86-64 (``--cpu generic``, the default; ``--cpu host``: this machine's CPU
family only), and the processes that import spark_fr from the archive or the installed wheel compile for that
target too, so that the cache is found on every machine of a cluster (spark_fr/runtime/numba_cache.py: one rule
for zips and installed wheels; ``spark_fr/_numba_cache.json`` beside the cache says what it was built for).
Measured on a 2-core machine (2026-11-29, load 9-17): the generic kernels grew trees 7-13 % slower than the
machine's own (200,000 x 40 x 3, 10 trees: 9.9-11.7 s of CPU against 9.3-10.3 s), and a fresh wheel's first run
of the README's job cost 2.4 s of CPU against 1.8 s for the second (36.8 s against 1.9 s without the cache).

The zip holds the package's sources (``spark_fr/**.py``, fixed timestamps: the same sources give the same
bytes) and, unless ``--no-numba-cache``, the numba cache of every method's kernels (``spark_fr/_numba_cache/``),
compiled by running each method's warm-up (``--methods``, default all) with ``--python`` (default: this
Python) importing spark_fr from the zip. Executors need numpy, numba, pandas, pyarrow and scipy (and pyspark,
which a Spark installation puts on their path), not spark_fr: they import it from the archive, copy the shipped
cache into their numba cache folder and load the kernels instead of compiling them
(``spark_fr/runtime/numba_cache.py``). Build the cache with a Python like the executors' (same Python minor
version and numba version; with ``--cpu host``, on a machine of the executors' CPU family too); otherwise it is a
cache miss and executors compile, as without it.

Bad options are one line on standard error (exit code 2), found before any work: an ``--output`` that is not a
local ``.zip`` path (a URI such as ``dbfs:/...`` is refused: write the archive here, then copy it; ``file:`` URIs
are local paths), that is a directory, that lies under a file, or that names an existing file which is not an
archive of spark_fr's (``spark_fr/...`` entries only: a rebuilt archive replaces its older self, never another
file); a ``--python`` that does not run. A failure while building is one line too (exit code 1); an interrupted
or terminated build (exit codes 130, 143) or a failed one leaves neither its temporary archive nor the folders it
made.

Decision: a zip for ``--py-files`` rather than a wheel (pyspark puts only ``.zip``, ``.egg`` and ``.jar`` files
of ``--py-files`` on the executors' Python path: a ``.whl`` gives ``No module named 'spark_fr'``) or a whole
packed environment (a venv-pack archive is 0.5-1 GB with pyspark's jars and must match the executors' OS; the
cluster's own Python with the five libraries is what Databricks and most clusters have).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "spark_fr"
SHIPPED = f"{PACKAGE}/_numba_cache/"
EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed entry times: the same sources make the same archive
METHODS = ("ensemble", "relief", "reliefe", "boosting")
URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")  # two letters at least: not a Windows drive


class PackageError(Exception):
    """A one-line error of the build (``code``: 2 for bad options, 1 for a failed build)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code

# every method's warm-up with every value of the run options it takes (the ensemble's --missing: fractional trees,
# the default, route with kernels of their own), so that no run of these methods compiles
WARM_UP = """
import json, platform, sys, numba
from numba.misc.numba_sysinfo import get_sysinfo
import spark_fr
from spark_fr import api
from spark_fr.runtime import numba_cache
assert spark_fr.__file__.startswith(sys.argv[1]), spark_fr.__file__
api.warm_up_all(sys.argv[2].split(","))
info = numba_cache.install()
print(json.dumps({"root": info["root"], "python": sys.version.split()[0], "numba": numba.__version__,
                  "cpu": numba.config.CPU_NAME or get_sysinfo().get("CPU Name", "?"), "machine": platform.machine()}))
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Build the --py-files archive of spark_fr (with a numba cache).")
    p.add_argument("--output", default=None,
                   help="the zip to write (default dist/spark_fr.zip); with --wheel, the wheel's folder (default dist)")
    p.add_argument("--python", default=sys.executable,
                   help="the Python that compiles the shipped numba cache: one like the executors' (same Python "
                        "minor version and numba version); default this Python")
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"the methods whose kernels the shipped cache holds (default all: {','.join(METHODS)})")
    p.add_argument("--no-numba-cache", action="store_true", help="ship the sources only (executors compile)")
    p.add_argument("--cpu", choices=("generic", "host"), default="generic",
                   help="the CPU the shipped numba cache is compiled for: generic (default: any x86-64; processes "
                        "that import spark_fr compile for it too) or host (this machine's CPU family only)")
    p.add_argument("--wheel", action="store_true",
                   help="build a wheel with the numba cache inside instead of the zip (--output: its folder, default "
                        "dist/); pip install it, and its first run loads the kernels instead of compiling them")
    return p.parse_args(argv)


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def source_files(package_dir: Path) -> list:
    """The package's ``.py`` files, as (path, name inside the archive), sorted."""
    return sorted((p, p.relative_to(package_dir.parent).as_posix()) for p in package_dir.rglob("*.py")
                  if "__pycache__" not in p.parts)


def write_sources(output: Path, package_dir: Path) -> int:
    files = source_files(package_dir)
    with zipfile.ZipFile(output, "w") as zf:
        for path, name in files:
            zf.writestr(_entry(name), path.read_bytes())
    return len(files)


def _numba_cache_module():
    """spark_fr/runtime/numba_cache.py alone (without importing the package)."""
    import importlib.util

    path = ROOT / PACKAGE / "runtime" / "numba_cache.py"
    spec = importlib.util.spec_from_file_location("_spark_fr_numba_cache", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_from_checkout(cache: Path, output: Path) -> int:
    """Start from the checkout's own numba cache (its folder under numba's cache, spark_fr.runtime.checkout_cache,
    e.g. after the tests): the same files as an archive's cache of the same sources (the folder is named by their
    hash, numba's stamp is a hash of the module's source, its index keys the bytecode's hash and numba's version), so
    numba loads what is fresh and compiles only the rest. Returns the count."""
    module = _numba_cache_module()
    root = cache / f"{PACKAGE}-{module.sources_hash(str(output))}"
    checkout = Path(module.cache_root(module.FolderSources(str(ROOT))))
    copied = 0
    for path in checkout.rglob("*"):
        if path.suffix in (".nbi", ".nbc"):
            target = root / path.relative_to(checkout)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
            copied += 1
    return copied


def warm_cache(output: Path, python: str, methods: str, cpu: str = "generic") -> tuple:
    """Compile every method's kernels with ``python`` importing spark_fr from ``output``, into a fresh cache
    folder, for ``cpu`` ('generic': any x86-64, ``NUMBA_CPU_NAME=generic``; 'host': this machine's CPU); returns
    (the cache files as (name inside the archive, bytes), ``spark_fr/_numba_cache.json`` last, what compiled them).
    Decision: 'generic' by default, the wheel's and the zip's: numba's index keys every entry by the CPU, and a
    cluster's machines are not the build machine (spark_fr/runtime/numba_cache.py)."""
    import json

    with tempfile.TemporaryDirectory(prefix="spark_fr-numba-") as cache:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
        if cpu == "generic":
            env.update(NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="")
        elif os.path.realpath(python) == os.path.realpath(sys.executable):
            seed_from_checkout(Path(cache), output)  # the checkout's cache is the host's
        env.update(PYTHONPATH=str(output), NUMBA_CACHE_DIR=cache, PYTHONNOUSERSITE="1")
        run = subprocess.run([python, "-c", WARM_UP, str(output), methods], env=env, cwd=cache, capture_output=True,
                             text=True)
        if run.returncode != 0:
            tail = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise PackageError(f"compiling the kernels with {python} failed: {tail}", code=1)
        built = json.loads(run.stdout.strip().splitlines()[-1])
        root = Path(built["root"])
        files = sorted((p, SHIPPED + p.relative_to(root).as_posix()) for p in root.rglob("*")
                       if p.is_file() and p.suffix in (".nbi", ".nbc"))
        contents = [(name, path.read_bytes()) for path, name in files]
    target = {"cpu_name": cpu, "cpu_features": "" if cpu == "generic" else None, "machine": built["machine"],
              "python": built["python"], "numba": built["numba"], "built_on": built["cpu"],
              "sources": Path(built["root"]).name[len(PACKAGE) + 1:]}  # refused by other sources
    contents.append((SHIPPED.rstrip("/") + ".json", (json.dumps(target, sort_keys=True) + "\n").encode()))
    return contents, built


def local_output(given: str) -> Path:
    """The archive's path from ``--output``: a local path or a ``file:`` URI, ending in ``.zip``."""
    text = given
    scheme = URI.match(given)
    if scheme and scheme.group(1).lower() == "file":
        from urllib.parse import unquote, urlparse

        parsed = urlparse(given)
        if parsed.netloc not in ("", "localhost"):
            raise PackageError(f"--output {given}: a file: URI of another host ({parsed.netloc}); give a local path")
        text = unquote(parsed.path)
    elif scheme:
        raise PackageError(f"--output {given}: the archive is written on this machine: give a local path (then copy "
                           f"it where the cluster reads it, e.g. databricks fs cp, hdfs dfs -put)")
    if not text.strip():
        raise PackageError("--output is empty: give the archive's path (e.g. dist/spark_fr.zip)")
    output = Path(text).expanduser().resolve()
    if output.suffix != ".zip":
        raise PackageError(f"--output {given}: the archive's name must end in .zip (Python imports from zips only)")
    return output


def ours(path: Path) -> bool:
    """Whether ``path`` is an archive this script wrote (a zip of ``spark_fr/...`` entries only)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return bool(names) and all(n.startswith(PACKAGE + "/") for n in names)


def check_output(given: str) -> Path:
    """``--output`` checked before any work (the module docstring's rules); its resolved path."""
    output = local_output(given)
    if output.is_dir():
        raise PackageError(f"--output {given}: {output} is a directory; give the archive's file name")
    if output.exists() and not ours(output):
        raise PackageError(f"--output {given}: {output} exists and is not an archive of spark_fr's; it is left as "
                           f"it is: remove it or choose another name")
    folder = output.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise PackageError(f"--output {given}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PackageError(f"--output {given}: {folder} is not writable")
    return output


def check_python(given: str) -> str:
    """``--python``: an executable that runs (its path)."""
    found = shutil.which(given)
    if found is None:
        raise PackageError(f"--python {given}: no such executable (give the path of the Python that compiles the "
                           f"executors' numba cache)")
    try:
        subprocess.run([found, "-c", "pass"], capture_output=True, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError) as err:
        raise PackageError(f"--python {given}: it does not run ({type(err).__name__})") from None
    return found


def make_folders(folder: Path, made: list) -> None:
    """Make ``folder`` and its missing parents, appending each one made to ``made`` (outermost first)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        f.mkdir()
        made.append(f)


def build(args, output: Path, start: float) -> int:
    """Write the archive to a temporary name beside ``output`` and move it there (see the module docstring)."""
    made: list = []
    tmp = output.with_name(f".{output.stem}-{os.getpid()}.zip")  # a .zip too: spark_fr is imported from it
    done = False
    try:
        make_folders(output.parent, made)
        n_sources = write_sources(tmp, ROOT / PACKAGE)
        note = "no numba cache"
        if not args.no_numba_cache:
            cache, built = warm_cache(tmp, args.python, args.methods, args.cpu)
            with zipfile.ZipFile(tmp, "a") as zf:
                for name, data in cache:
                    zf.writestr(_entry(name), data)
            note = (f"numba cache of {args.methods}: {len(cache)} files for Python {built['python']}, "
                    f"numba {built['numba']}, CPU {built['cpu']} ({built['machine']})")
        os.replace(tmp, output)
        done = True
    except OSError as err:
        raise PackageError(f"writing {output} failed: {err.strerror or err}", code=1) from None
    finally:
        if not done:
            tmp.unlink(missing_ok=True)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
    print(f"{output}: {n_sources} sources, {note}; {output.stat().st_size / 1e6:.1f} MB in "
          f"{time.monotonic() - start:.1f} s")
    print(f"ship it with: spark-submit --py-files {output} jobs/rank.py ...")
    return 0


# ----- the wheel: pip install it, and the first run loads the kernels --------------------------------------------
def check_wheel_folder(given: str) -> Path:
    """``--output`` of ``--wheel``: a local folder (made if missing) where the wheel is written."""
    if URI.match(given) and not given.lower().startswith("file:"):
        raise PackageError(f"--output {given}: the wheel is written on this machine: give a local folder")
    folder = Path(given[5:] if given.lower().startswith("file:") else given).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise PackageError(f"--output {given}: {folder} is a file; with --wheel give the wheel's folder")
    parent = folder
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise PackageError(f"--output {given}: {parent} is not a writable folder")
    return folder


def stage_project(stage: Path) -> None:
    """Copy the project's files (git's list when this is a checkout; else all but caches and builds) to ``stage``:
    the wheel is built there, so the checkout gets no ``build/`` or ``*.egg-info``."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n and (ROOT / n).is_file()]
    else:
        skip = {".git", ".venv", "build", "dist", "__pycache__", "_numba_cache"}
        names = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                 if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]
    for name in names:
        target = stage / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def wheel_sources(wheel: Path, archive: Path) -> int:
    """The wheel's ``spark_fr/**.py`` as a zip at ``archive`` (the kernels compile from exactly the sources the
    installed package holds: the same sources hash). Returns their count."""
    with zipfile.ZipFile(wheel) as whl, zipfile.ZipFile(archive, "w") as zf:
        names = sorted(n for n in whl.namelist() if n.startswith(PACKAGE + "/") and n.endswith(".py"))
        for name in names:
            zf.writestr(_entry(name), whl.read(name))
    return len(names)


def add_to_wheel(wheel: Path, files: list) -> None:
    """Rewrite ``wheel`` with ``files`` ((name, bytes)) added and its ``RECORD`` listing them (hash and size)."""
    import base64
    import hashlib

    def digest(data: bytes) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    tmp = wheel.with_name(f".{wheel.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as new:
            record = next(n for n in old.namelist() if n.endswith(".dist-info/RECORD"))
            for info in old.infolist():
                if info.filename != record:
                    new.writestr(info, old.read(info))
            lines = old.read(record).decode().splitlines()
            for name, data in files:
                new.writestr(_entry(name), data)
                lines.insert(len(lines) - 1, f"{name},sha256={digest(data)},{len(data)}")
            new.writestr(old.getinfo(record), "\n".join(lines) + "\n")
        os.replace(tmp, wheel)
    finally:
        tmp.unlink(missing_ok=True)


def build_wheel(args, folder: Path, start: float) -> int:
    """Build spark_fr's wheel (``pip wheel``), compile the kernels' numba cache for its sources and add it as
    ``spark_fr/_numba_cache/`` (see spark_fr/runtime/numba_cache.py: installed, spark_fr copies it into the user's
    numba cache on import). The wheel is written to ``folder``; a wheel of the same name there is replaced."""
    with tempfile.TemporaryDirectory(prefix="spark_fr-wheel-") as tmp:
        stage, built_dir = Path(tmp) / "project", Path(tmp) / "dist"
        stage_project(stage)
        run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(built_dir),
                              str(stage)], capture_output=True, text=True)
        wheels = sorted(built_dir.glob(f"{PACKAGE}-*.whl"))
        if run.returncode != 0 or len(wheels) != 1:
            tail = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise PackageError(f"pip wheel failed: {tail}", code=1)
        wheel = wheels[0]
        note = "no numba cache"
        if not args.no_numba_cache:
            archive = Path(tmp) / "sources.zip"
            wheel_sources(wheel, archive)
            cache, built = warm_cache(archive, args.python, args.methods, args.cpu)
            add_to_wheel(wheel, cache)
            note = (f"numba cache of {args.methods}: {len(cache)} files for Python {built['python']}, numba "
                    f"{built['numba']}, CPU {args.cpu if args.cpu == 'generic' else built['cpu']} ({built['machine']})")
        folder.mkdir(parents=True, exist_ok=True)
        output = folder / wheel.name
        shutil.copy(wheel, folder / f".{wheel.name}.part")
        os.replace(folder / f".{wheel.name}.part", output)
    print(f"{output}: {note}; {output.stat().st_size / 1e6:.1f} MB in {time.monotonic() - start:.1f} s")
    print(f"install it with: pip install {output}")
    return 0


def _terminated(signum, frame):
    raise SystemExit(143)  # unwinds through build()'s clean-up


def main(argv=None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        unknown = sorted(set(args.methods.split(",")) - set(METHODS))
        if unknown:
            raise PackageError(f"--methods {args.methods}: unknown {', '.join(unknown)} ({', '.join(METHODS)})")
        if args.wheel:
            folder = check_wheel_folder(args.output or "dist")
            args.python = check_python(args.python)
            return build_wheel(args, folder, start)
        output = check_output(args.output or "dist/spark_fr.zip")
        if not args.no_numba_cache:
            args.python = check_python(args.python)
        return build(args, output, start)
    except PackageError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
