"""Getting a SparkSession that works here: the venv's Python on the workers, loopback in local mode, memory
sized to the machine, and Spark's own console output kept out of the user's terminal.

Sketch
------
* Under ``spark-submit`` (or in a notebook) the active or submitted configuration is used as it is.
* Started from plain Python (``python jobs/rank.py``), the session is local (``local[*]`` unless
  ``--master`` says otherwise; the URL is checked first), binds to 127.0.0.1, and its Python workers run
  this interpreter (``PYSPARK_PYTHON = sys.executable``), so the packages of the virtual environment are
  found. The driver gets half of the machine's memory (at least 2 GB; ``SPARK_FR_DRIVER_MEMORY=8g``
  overrides it): a local session runs every task in the driver's JVM.
* ``quiet=True``: the JVM's standard error (its start-up banner, Spark's log, the Python workers' output,
  an ``OutOfMemoryError``) goes to a log file instead of the terminal, so that a failing run prints one
  line; :func:`jvm_log_tail` reads it back to explain a failure. ``--log-level debug`` shows it all.
* A JVM that we launch gets :data:`JVM_OPTIONS` (added to any ``spark.driver.extraJavaOptions`` given):
  HotSpot then also compiles methods over 8,000 bytes of bytecode, which Spark's generated code for wide
  aggregations and projections has (the relational features: more than 100 aggregates per ``groupBy``);
  left to the bytecode interpreter they ran 2x slower (measured: the 10^7-row relational benchmark took
  58.6 s instead of 70.6 s with it). Under ``spark-submit`` the JVM is already running: pass it with
  ``--driver-java-options -XX:-DontCompileHugeMethods`` there (and ``spark.executor.extraJavaOptions``
  on a cluster).
* Before launching a JVM, :func:`check_java` finds the ``java`` that Spark's launcher will run (as
  ``spark-class`` does: ``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``) and asks it its version
  (``java -version``, a fraction of a second): no Java, a ``JAVA_HOME`` without one, a ``java`` that does not
  run, or a Java older than :data:`MIN_JAVA` is a one-line :class:`JavaError` (an ``InputError``: exit code
  2 from ``jobs/rank.py``, nothing written) naming the cause and the fix, instead of pyspark's
  ``[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number``. Decision: newer
  Javas are accepted (Spark 4 supports 17 and 21; 25 started and ran jobs here); a session that exists
  already, or a JVM started by ``spark-submit``, is not checked.
* ``SPARK_REMOTE=sc://host:port`` (a Spark Connect server): before the session is made, and when a
  :class:`SessionStart` is created (before any work), :func:`check_connect` opens a gRPC channel to the server
  and waits until it accepts a connection. A server that refuses it, a host that does not resolve, a TLS
  handshake that fails (:data:`CONNECT_FAILING` seconds of failed attempts) or no answer within
  :data:`CONNECT_TIMEOUT` seconds (``SPARK_FR_CONNECT_TIMEOUT`` overrides it) is a one-line
  :class:`ConnectError` (an ``InputError``: exit code 2) naming the address and gRPC's reason, instead of
  pyspark's retries (at least 10 minutes, by design, meant for a server that restarts). Decision: only the
  first connection is checked this way; a server lost during the run is left to pyspark's retries.
* ``pyspark-client`` only (no JVM) and no ``SPARK_REMOTE``: a run that needs a session gets one line saying to set
  ``SPARK_REMOTE`` or to pass a session (:mod:`spark_fr.runtime.client_only`), not ``[CONNECT_URL_NOT_SET]``.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from ..errors import InputError
from .client_only import check_local_spark

MASTER_URL = re.compile(r"^(local(\[(\*|[1-9]\d*)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|spark://\S+|yarn|"
                        r"k8s://\S+|mesos://\S+)$")
_JVM_LOG: dict = {}
#: HotSpot options for a JVM this module launches (see the module sketch)
JVM_OPTIONS = "-XX:-DontCompileHugeMethods"


#: the oldest Java that Spark 4 (pyspark 4.x) runs on
MIN_JAVA = 17
JAVA_HELP = "install Java 17 or newer (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME to one"


class JavaError(InputError):
    """The machine's Java cannot run Spark (missing, not runnable, too old): one line naming the cause."""


def find_java() -> tuple:
    """``(path of the java Spark's launcher will run, how it was found)``, as ``spark-class`` finds it.

    Raises
    ------
    JavaError
        ``JAVA_HOME`` is set but holds no ``bin/java``, or it is unset and no ``java`` is on ``PATH``.
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not (os.path.isfile(java) and os.access(java, os.X_OK)):
            raise JavaError(f"JAVA_HOME={home} points to no Java ({java} is not there); set JAVA_HOME to a Java "
                            f"{MIN_JAVA}+ installation (such as /usr/lib/jvm/java-17-openjdk-amd64), or unset it to "
                            f"use the java on PATH")
        return java, f"JAVA_HOME={home}"
    java = shutil.which("java")
    if java is None:
        raise JavaError(f"Java not found (JAVA_HOME is not set and no java is on PATH); Spark needs Java "
                        f"{MIN_JAVA} or newer: {JAVA_HELP}")
    return java, "PATH"


def java_major(banner: str) -> int | None:
    """The major version in ``java -version``'s output (``version "17.0.15"`` -> 17, ``"1.8.0_292"`` -> 8)."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


@functools.lru_cache(maxsize=8)
def _java_version(java: str) -> tuple:
    """``(major or None, first line of the banner or of the failure)`` of one java executable."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"{type(err).__name__}: {err}"
    banner = (done.stderr or "") + (done.stdout or "")
    first = next((ln.strip() for ln in banner.splitlines() if ln.strip()), f"exit code {done.returncode}")
    return (java_major(banner) if done.returncode == 0 else None), first


def check_java() -> int:
    """Check that the Java Spark's launcher will run is there and is Java :data:`MIN_JAVA` or newer.

    Returns
    -------
    int
        Its major version.

    Raises
    ------
    JavaError
        One line naming the cause (module sketch).
    """
    java, how = find_java()
    major, first = _java_version(os.path.realpath(java))
    where = java if how == "PATH" else f"{java} ({how})"
    if major is None:
        raise JavaError(f"the java at {where} does not run ({first}); {JAVA_HELP}")
    if major < MIN_JAVA:
        raise JavaError(f"Java {major} found at {where}; Spark 4 needs Java {MIN_JAVA} or newer: {JAVA_HELP}")
    return major


def _under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def remote_url() -> str | None:
    """The Spark Connect URL a session of ours connects to: ``SPARK_REMOTE`` (pyspark's own variable: ``sc://host``,
    or ``local[N]`` for pyspark's local server), unless under ``spark-submit``; None for a classic session."""
    return None if _under_spark_submit() else (os.environ.get("SPARK_REMOTE") or None)


def local_master_cores(master: str) -> int | None:
    """The cores of a local master URL (``local``: 1, ``local[N]``: N, ``local[*]``: this machine's, ``local[N, F]``
    and ``local[*, F]`` with F task failures allowed, as a single-node cluster's), None for any other master."""
    found = re.fullmatch(r"local(?:\[\s*(\*|\d+)\s*(?:,\s*\d+\s*)?\])?", master.strip())
    if found is None:
        return None
    cores = found.group(1)
    if cores is None:
        return 1
    return (os.cpu_count() or 1) if cores == "*" else int(cores)


def is_connect_session(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (a :class:`SessionStart`: the one it started, or will start)."""
    if isinstance(spark, SessionStart):
        return is_connect_session(spark._value) if spark.ready else remote_url() is not None
    return type(spark).__module__.startswith("pyspark.sql.connect")


#: seconds to wait for a Spark Connect server to accept a connection (``SPARK_FR_CONNECT_TIMEOUT`` overrides)
CONNECT_TIMEOUT = 20.0
#: seconds of failed connection attempts (refused, unknown host, failed TLS handshake) that make a Spark Connect
#: server unreachable before :data:`CONNECT_TIMEOUT` (gRPC retries at about 0, 1, 2.6 and 4.8 s)
CONNECT_FAILING = 5.0
#: the Spark Connect URLs found reachable in this process (checked once)
_REACHED: set = set()


class ConnectError(InputError):
    """The Spark Connect server of ``SPARK_REMOTE`` cannot be reached: one line naming its address."""


def connect_timeout() -> float:
    """Seconds :func:`check_connect` waits: ``SPARK_FR_CONNECT_TIMEOUT`` or :data:`CONNECT_TIMEOUT`."""
    value = os.environ.get("SPARK_FR_CONNECT_TIMEOUT")
    try:
        return float(value) if value else CONNECT_TIMEOUT
    except ValueError:
        raise InputError(f"SPARK_FR_CONNECT_TIMEOUT={value!r} is not a number of seconds") from None


def check_connect(url: str, timeout: float | None = None) -> None:
    """Check that the Spark Connect server of ``url`` (``sc://host:port/;...``) accepts a connection (module
    sketch); ``local...`` URLs (a server this process starts) and URLs found reachable before pass at once.

    Raises
    ------
    ConnectError
        The server refuses the connection, its host does not resolve, or it does not answer within ``timeout``
        seconds (:func:`connect_timeout`).
    spark_fr.errors.InputError
        ``url`` is not a Spark Connect URL.
    """
    if url.startswith("local") or url in _REACHED:
        return
    try:
        import grpc
        from pyspark.sql.connect.client.core import DefaultChannelBuilder
    except ImportError:  # pyspark[connect] missing: pyspark's own error says what to install
        return
    try:
        builder = DefaultChannelBuilder(url)
    except Exception as err:  # noqa: BLE001 - pyspark's INVALID_CONNECT_URL and the like
        raise InputError(f"SPARK_REMOTE={_without_secrets(url)} is not a Spark Connect URL "
                         f"(sc://host:port): {err}") from None
    timeout = connect_timeout() if timeout is None else timeout
    channel = builder.toChannel()
    try:
        if _wait_until_ready(channel, grpc, timeout):
            _REACHED.add(url)
            return
        why = _connection_failure(channel, grpc) or f"no connection within {timeout:g} s"
    finally:
        channel.close()
    raise ConnectError(f"the Spark Connect server at {builder.endpoint} (SPARK_REMOTE={_without_secrets(url)}) "
                       f"cannot be reached: {why}; check the address, and that the server is running and accepts "
                       f"connections from this machine")


def _wait_until_ready(channel, grpc, timeout: float) -> bool:
    """Whether ``channel`` connects within ``timeout`` seconds; False as soon as its connection attempts have
    failed for :data:`CONNECT_FAILING` seconds."""
    seen: dict = {}
    changed = threading.Event()

    def watch(state):
        if state != seen.get("state"):
            seen["state"], seen["since"] = state, time.monotonic()
        changed.set()

    channel.subscribe(watch, try_to_connect=True)
    try:
        end = time.monotonic() + timeout
        while True:
            state = seen.get("state")
            if state == grpc.ChannelConnectivity.READY:
                return True
            now = time.monotonic()
            failing = state == grpc.ChannelConnectivity.TRANSIENT_FAILURE and now - seen["since"] >= CONNECT_FAILING
            if failing or now >= end:
                return False
            changed.wait(min(0.1, end - now))
            changed.clear()
    finally:
        channel.unsubscribe(watch)


def _connection_failure(channel, grpc) -> str:
    """gRPC's reason why ``channel`` does not connect ('' if a call gives none): one call that does not wait."""
    try:
        channel.unary_unary("/spark.connect.SparkConnectService/Config")(b"", timeout=3, wait_for_ready=False)
    except grpc.RpcError as err:
        if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return " ".join(str(err.details() or "").split())
    return ""


def _without_secrets(url: str) -> str:
    """A Spark Connect URL with the values of its ``token`` parameter hidden."""
    return re.sub(r"(?i)(;\s*token\s*=)[^;]*", r"\1***", url)


def default_driver_memory() -> str:
    """Half of the machine's physical memory, at least 2 GB (or ``SPARK_FR_DRIVER_MEMORY``)."""
    env = os.environ.get("SPARK_FR_DRIVER_MEMORY")
    if env:
        return env
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4g"
    return f"{max(2, int(total / 2 ** 30 / 2))}g"


def check_master(master: str) -> None:
    """A Spark master URL (``local[*]``, ``local[4]``, ``local-cluster[2,1,1024]``, ``spark://...``, ...)."""
    if not MASTER_URL.match(master or ""):
        raise InputError(f"--master '{master}' is not a Spark master URL (local[*], local[N], "
                         f"local-cluster[N,cores,MB], spark://host:port, yarn, k8s://...)")


@contextlib.contextmanager
def _stderr_to(path: str):
    """Point file descriptor 2 at ``path`` while the block runs (a JVM started in it keeps writing there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _remove_jvm_log(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def remove_jvm_log() -> None:
    """Remove the JVM log file of this process now (it is removed at exit otherwise)."""
    if _JVM_LOG.get("path"):
        _remove_jvm_log(_JVM_LOG["path"])


def jvm_log_tail(max_bytes: int = 200_000) -> str:
    """The end of the log of the JVM this process started quietly ('' if none)."""
    path = _JVM_LOG.get("path")
    if not path or not os.path.exists(path):
        return ""
    with open(path, "rb") as fh:
        fh.seek(max(0, os.path.getsize(path) - max_bytes))
        return fh.read().decode("utf-8", "replace")


class SessionStart:
    """A SparkSession started in a background (daemon) thread: :meth:`result` waits for it.

    The JVM takes seconds to start; meanwhile the caller can import and compile what it needs. A daemon
    thread never delays the exit of a run that fails early (the JVM ends when its stdin closes). With
    ``lazy=True`` the JVM starts only when it is first needed (:meth:`start`, or the session used), so a run
    that does all its work in the driver never starts it: its start-up would take CPU from that work.
    """

    def __init__(self, lazy: bool = False, **kwargs):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._value = None
        self._error = None
        self._kwargs = kwargs
        self.seconds = None
        if remote_url() is not None:
            check_connect(remote_url())  # an unreachable Spark Connect server is named before any work
        if not lazy:
            self.start()

    def start(self) -> "SessionStart":
        """Start the JVM in the background now (if it was not started yet)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="spark_fr-session", daemon=True)
                self._thread.start()
        return self

    @property
    def requested(self) -> bool:
        """Whether the start has begun (a lazy start begins when the session is first needed)."""
        return self._thread is not None

    def _run(self):
        t0 = time.perf_counter()
        try:
            self._value = get_spark(**self._kwargs)
        except BaseException as err:  # handed to the caller by result()
            self._error = err
        finally:
            self.seconds = time.perf_counter() - t0
            self._done.set()

    def result(self):
        """The session (or the error its start raised); the first call runs the :meth:`when_ready` hooks."""
        self.start()
        self._done.wait()
        if self._error is not None:
            raise self._error
        hooks, self._hooks = getattr(self, "_hooks", []), []
        for hook in hooks:
            hook(self._value)
        return self._value

    def settle(self, timeout: float = 30.0) -> None:
        """Before this process exits abandoning a start still under way: wait (at most ``timeout`` seconds)
        until pyspark's launcher is past the JVM's launch, which removes the launcher's temporary folder (an exit
        during it would leave the folder behind). The JVM then ends by itself when this process has gone (its
        standard input closes) and removes its own folders. A start not begun, or ended, needs nothing."""
        if self._thread is None or self._done.is_set() or not (remote_url() or "local").startswith("local"):
            return  # a Spark Connect client to a remote server launches no JVM here: nothing to wait for
        from pyspark import SparkContext

        end = time.monotonic() + timeout
        while not self._done.is_set() and SparkContext._gateway is None and time.monotonic() < end:
            self._done.wait(0.05)

    @property
    def requested_master(self) -> str:
        """The master this start asked for (``local[*]`` by default, as :func:`get_spark`)."""
        return self._kwargs.get("master") or "local[*]"

    @property
    def local_cores(self) -> int | None:
        """The cores of the local master this start would run on (``local``: 1, ``local[N]``: N, ``local[*]``:
        this machine's), without starting it; None when the session would not be a classic local one of this
        process (another master, ``spark-submit``'s, or Spark Connect)."""
        if _under_spark_submit() or remote_url() is not None:
            return None
        return local_master_cores(self.requested_master)

    @property
    def started(self) -> bool:
        """Whether the start has ended (with a session, or with an error :meth:`result` raises)."""
        return self._done.is_set()

    @property
    def ready(self) -> bool:
        return self._done.is_set() and self._error is None

    def when_ready(self, hook) -> None:
        """Run ``hook(session)`` in the thread that first asks for the session (now, if it is ready)."""
        if self.ready and not getattr(self, "_hooks", None):
            hook(self.result())
        else:
            self._hooks = getattr(self, "_hooks", []) + [hook]

    def __getattr__(self, name):
        """Used as a SparkSession, it waits for the session: code that needs no Spark runs before."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result(), name)


def when_ready(spark, hook) -> None:
    """Run ``hook(session)`` now, or when a session still starting (:class:`SessionStart`) is first used."""
    if hasattr(type(spark), "when_ready"):
        spark.when_ready(hook)
    else:
        hook(spark)


def master_of(spark) -> str:
    """The session's master URL; for a session of ours still starting, the master it was asked for (not
    waiting for it: a run that never needed Spark does not wait for the JVM to report it)."""
    if isinstance(spark, SessionStart) and not spark.ready and not _under_spark_submit():
        return remote_url() or spark.requested_master
    if is_connect_session(spark):  # no sparkContext: the server's setting
        try:
            return str(spark.conf.get("spark.master", "connect"))
        except Exception:  # a server that does not say (serverless compute)
            return "connect"
    return spark.sparkContext.master


def conf_value(spark, key: str, default: str) -> str:
    """A Spark SQL setting; Spark's default while a session of ours is still starting (not waiting for it)."""
    if isinstance(spark, SessionStart) and not spark.ready:
        return default
    return str(spark.conf.get(key, default))


def with_jvm_options(options: str | None) -> str:
    """``options`` (a ``spark.driver.extraJavaOptions`` value, or None) with :data:`JVM_OPTIONS` added, unless
    it already sets the same HotSpot flags."""
    options = (options or "").strip()
    mine = [o for o in JVM_OPTIONS.split() if _hotspot_flag(o) not in options]
    return " ".join([options, *mine]).strip()


def _hotspot_flag(option: str) -> str:
    """The flag's name in ``-XX:+Name``, ``-XX:-Name`` or ``-XX:Name=value``."""
    return re.sub(r"^-XX:[+-]?", "", option).split("=")[0]


def get_spark(master: str | None = None, app_name: str = "spark_fr", conf: dict | None = None,
              quiet: bool = False):
    """The active SparkSession, or a new one (see the module sketch).

    Parameters
    ----------
    master : str, optional
        Spark master URL when not under spark-submit (default ``local[*]``).
    app_name : str
    conf : dict, optional
        Extra Spark configuration.
    quiet : bool
        Send the JVM's standard error to a log file (see :func:`jvm_log_tail`).

    Returns
    -------
    pyspark.sql.SparkSession

    Raises
    ------
    JavaError
        A new local or cluster session is needed and the Java it would run is missing or too old
        (:func:`check_java`).
    spark_fr.runtime.client_only.ClientOnlyError
        A new local or cluster session is needed and this pyspark is ``pyspark-client`` only.
    spark_fr.errors.InputError
        ``master`` is not a Spark master URL.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if remote_url() is not None:
        return _connect_session(remote_url(), app_name, conf, quiet)
    if not _under_spark_submit():
        check_local_spark()  # pyspark-client only: SPARK_REMOTE is needed, not Java (checked before it)
    builder = SparkSession.builder.appName(app_name)
    if _under_spark_submit():
        from pyspark import SparkConf

        submitted = SparkConf().get("spark.master", "")
        if submitted.startswith("local"):
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        quiet = False
    else:
        master = master or "local[*]"
        check_master(master)
        check_java()  # a JVM is about to be launched: a missing or old Java is named, not JAVA_GATEWAY_EXITED
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = (builder.config("spark.driver.bindAddress", "127.0.0.1")
                       .config("spark.driver.host", "127.0.0.1"))
        builder = (builder.master(master)
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "8")
                   .config("spark.driver.memory", default_driver_memory()))
    builder = builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
    conf = dict(conf or {})
    if not _under_spark_submit():
        conf["spark.driver.extraJavaOptions"] = with_jvm_options(conf.get("spark.driver.extraJavaOptions"))
        conf = _with_delta(conf, master.startswith("local"))
    for k, v in conf.items():
        builder = builder.config(k, v)
    return _get_or_create(builder, quiet)


def _get_or_create(builder, quiet: bool):
    """``builder.getOrCreate()``; when ``quiet``, the JVM's start-up output goes to a log file of its own."""
    if not quiet:
        return builder.getOrCreate()
    fd, path = tempfile.mkstemp(prefix="spark_fr-jvm-", suffix=".log")
    os.close(fd)
    _JVM_LOG["path"] = path
    atexit.register(_remove_jvm_log, path)
    with _stderr_to(path):
        return builder.getOrCreate()


def _with_delta(conf: dict, local: bool) -> dict:
    """``conf`` with Delta Lake added when ``delta-spark`` is installed (:mod:`spark_fr.runtime.delta`)."""
    from .delta import LOCAL_CONF, delta_conf

    extra = delta_conf(conf=conf)
    if extra and local:
        extra = {**LOCAL_CONF, **extra}
    return {**conf, **extra}


def _connect_session(url: str, app_name: str, conf: dict | None, quiet: bool):
    """A Spark Connect session to ``url`` (``SPARK_REMOTE``). ``local[N]``: pyspark's local Connect server, started
    in this process and set up as a local classic session is (loopback, this Python on the workers, memory, the
    JVM's options and log file); the configuration it took at its start the client cannot set again, and warns
    about: those warnings are dropped."""
    import warnings

    from pyspark.sql import SparkSession

    check_connect(url)
    builder = SparkSession.builder.remote(url).appName(app_name)
    conf = dict(conf or {})
    if url.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        conf = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1",
                "spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "8",
                "spark.driver.memory": default_driver_memory(), **conf}
        conf["spark.driver.extraJavaOptions"] = with_jvm_options(conf.get("spark.driver.extraJavaOptions"))
        conf = _with_delta(conf, True)
    conf.setdefault("spark.sql.execution.arrow.pyspark.enabled", "true")
    for k, v in conf.items():
        builder = builder.config(k, v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _get_or_create(builder, quiet and url.startswith("local"))
