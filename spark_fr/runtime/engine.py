"""The two kinds of Spark session, and the few distributed patterns every method is written against.

Sketch
------
A *classic* session has a JVM in this process (or under ``spark-submit``): RDDs, broadcast variables,
``treeAggregate``. A *Spark Connect* session (Databricks serverless and shared-access clusters,
``SparkSession.builder.remote(...)``) has DataFrame APIs only: no ``sparkContext``. The methods never ask which
kind they have; they ask :func:`engine_for` for an :class:`Engine` and use its patterns, which both kinds
implement with the same bits (results are merged exactly or by key, so where a value was computed never
matters)::

    engine_for(spark).kind                        'classic' | 'connect'   (recorded in run.json as "session")
    .parallelism()                                task slots: defaultParallelism | partitions of spark.range
    .run_grouped(payload, groups, work, merge)    work(payload, group) per group in one Spark task each
        classic: sc.broadcast(payload); parallelize(groups, G).treeAggregate(zero, seq, merge)
        connect: the pickled payload in chunks -> a DataFrame P (one partition); spark.range(G) in G
                 partitions crossJoin broadcast(P) -> mapInArrow: assemble the payload, work on the group,
                 pickle the value -> collect -> merge in group order
    .from_frame(df, fn) / .from_units(units, fn)  Parts: the Python objects fn makes of each partition
    .broadcast(value)                             a small read-only value for tasks (classic: a broadcast
                                                  variable; connect: carried in the task's closure)
    .tracked(progress, units, tasks)              feed a running job's task counts to a Progress
                                                  (classic: statusTracker of this thread's job group;
                                                  connect: the session's progress handler)

:class:`Parts` is a distributed collection of Python objects (the encoded blocks, statistics, candidates):
``map``, ``filter``, ``map_partitions``, ``persist``, ``collect``, ``reduce`` (tree reduction), ``fold`` and
``group_by_key`` (every object emits (key, value) pairs; each key's values meet in one task of their own).
Classic: an RDD. Connect: a DataFrame of pickled objects (column ``payload``; an object above
:data:`CHUNK_BYTES` is cut into several rows and joined again where it is read) plus the Python functions
still to apply, composed into a single ``mapInArrow`` when the collection is used; ``group_by_key`` shuffles
with ``repartition(n, key)`` on keys chosen so that Spark's hash partitioning sends key g to partition g
(:func:`partition_keys`: one key per task, as the classic ``partitionBy(n, identity)``; a reader would still
group correctly if a key shared a partition, only the balance depends on the hash).

Decisions: the Connect payload goes through a broadcast join (the way Spark ships one table to every task)
rather than the plan (gRPC messages are limited to 128 MB) or session artifacts (they cannot be removed);
the driver's JVM holds the payload about three times while it is broadcast. Small values (repeated row keys,
a chunk of Relief instances) travel in the closure of the tasks. Job descriptions exist in classic sessions
only; Connect sessions report no job ids (``spark_jobs`` is then null in run.json).
"""
from __future__ import annotations

import contextlib
import copy
import logging
import pickle
import random
import threading
from abc import ABC, abstractmethod
from functools import reduce as _reduce

log = logging.getLogger(__name__)

#: largest piece of a pickled object in one DataFrame row (Connect): well below gRPC's 128 MB messages and
#: Arrow's 2 GB vectors
CHUNK_BYTES = 4 << 20
#: schema of a DataFrame of pickled objects
PICKLED = "oid bigint, part int, parts int, payload binary"
#: ... with the partition key of group_by_key
KEYED = "pkey int, " + PICKLED

_PARALLELISM: dict = {}


# ----- which session --------------------------------------------------------------------------------------
def session_of(spark):
    """The SparkSession behind ``spark`` (a :class:`~spark_fr.runtime.session.SessionStart` is waited for)."""
    from .session import SessionStart

    return spark.result() if isinstance(spark, SessionStart) else spark


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (no ``sparkContext``); for a session of ours still starting,
    whether it will be one (``SPARK_REMOTE``, :func:`spark_fr.runtime.session.remote_url`)."""
    from .session import is_connect_session

    return is_connect_session(spark)


def session_kind(spark) -> str:
    """``'connect'`` or ``'classic'``."""
    return "connect" if is_connect(spark) else "classic"


def engine_for(spark) -> "Engine":
    """The :class:`Engine` of a session (waits for a session of ours still starting)."""
    session = session_of(spark)
    return ConnectEngine(session) if is_connect(session) else ClassicEngine(session)


# ----- pickled objects in Arrow batches (Connect) -----------------------------------------------------------
def _pieces(obj):
    """(oid, part, parts, bytes) rows of one object."""
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    n = max(1, -(-len(blob) // CHUNK_BYTES))
    oid = random.getrandbits(63)
    for i in range(n):
        yield oid, i, n, blob[i * CHUNK_BYTES:(i + 1) * CHUNK_BYTES]


def pickle_batches(objects, key=None):
    """Arrow record batches (schema :data:`PICKLED`, or :data:`KEYED` with ``key(obj)``) of the pickled objects,
    a batch every few MB."""
    import pyarrow as pa

    cols = {"pkey": [], "oid": [], "part": [], "parts": [], "payload": []}
    size = 0

    def flush():
        arrays = [pa.array(cols["oid"], pa.int64()), pa.array(cols["part"], pa.int32()),
                  pa.array(cols["parts"], pa.int32()), pa.array(cols["payload"], pa.binary())]
        names = ["oid", "part", "parts", "payload"]
        if key is not None:
            arrays, names = [pa.array(cols["pkey"], pa.int32())] + arrays, ["pkey"] + names
        batch = pa.RecordBatch.from_arrays(arrays, names=names)
        for c in cols.values():
            c.clear()
        return batch

    for obj in objects:
        pkey = key(obj) if key is not None else None
        for oid, i, n, blob in _pieces(obj):
            cols["pkey"].append(pkey)
            cols["oid"].append(oid)
            cols["part"].append(i)
            cols["parts"].append(n)
            cols["payload"].append(blob)
            size += len(blob)
            if size >= CHUNK_BYTES:
                yield flush()
                size = 0
    if cols["oid"]:
        yield flush()


def unpickle_batches(batches):
    """The objects of Arrow batches made by :func:`pickle_batches` (pieces joined again, in any order)."""
    pending: dict = {}
    for batch in batches:
        names = batch.schema.names
        oid = batch.column(names.index("oid")).to_pylist()
        part = batch.column(names.index("part")).to_pylist()
        parts = batch.column(names.index("parts")).to_pylist()
        payload = batch.column(names.index("payload")).to_pylist()
        for o, i, n, blob in zip(oid, part, parts, payload):
            if n == 1:
                yield pickle.loads(blob)
                continue
            got = pending.setdefault(o, {})
            got[i] = blob
            if len(got) == n:
                del pending[o]
                yield pickle.loads(b"".join(got[j] for j in range(n)))
    if pending:
        raise RuntimeError(f"{len(pending)} objects arrived incomplete")


# ----- Spark's hash partitioning, to give each key of group_by_key its own partition -------------------------
def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def murmur3_int(value: int, seed: int = 42) -> int:
    """Spark's ``Murmur3_x86_32.hashInt`` (the hash of ``repartition(n, int column)``), as a signed int."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    k1 = (value & 0xFFFFFFFF) * c1 & 0xFFFFFFFF
    k1 = _rotl32(k1, 15) * c2 & 0xFFFFFFFF
    h1 = (seed & 0xFFFFFFFF) ^ k1
    h1 = (_rotl32(h1, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def partition_keys(n: int) -> list:
    """For g in 0..n-1 an int key that ``repartition(n, key)`` sends to partition g (pmod(murmur3, n) == g)."""
    keys = [None] * n
    left, k = n, 0
    while left:
        g = murmur3_int(k) % n
        if keys[g] is None:
            keys[g] = k
            left -= 1
        k += 1
    return keys


# ----- progress of running jobs -------------------------------------------------------------------------------
def work_fraction(stages: dict, tasks: int | None) -> float:
    """Fraction of a job's work done, from {stage id: (tasks, completed tasks)}: the stage of ``tasks`` tasks
    (else the one with the most tasks; the latest among equals), completed / tasks. 0 for a job of one task."""
    if tasks is not None and tasks <= 1:
        return 0.0
    cands = [(n, sid) for sid, (n, _) in stages.items() if n > 0 and (tasks is None or n == tasks)]
    if not cands:
        return 0.0
    n, sid = max(cands)
    return min(1.0, stages[sid][1] / n)


class _StageCounts:
    """A Spark Connect progress handler keeping the latest task counts of the stages this thread runs."""

    def __init__(self):
        self.thread = threading.get_ident()
        self.stages: dict = {}

    def __call__(self, stages=None, inflight_tasks=0, operation_id=None, done=False, **_):
        if threading.get_ident() != self.thread:
            return
        for s in stages or ():
            self.stages[s.stage_id] = (int(s.num_tasks), int(s.num_completed_tasks))


# ----- distributed collections of Python objects ----------------------------------------------------------
def _grouped(pairs, fn):
    """``fn(key, values)`` for each key of (key, value) pairs, keys in increasing order."""
    groups: dict = {}
    for g, v in pairs:
        groups.setdefault(g, []).append(v)
    for g in sorted(groups):
        yield from fn(g, groups[g])


_EMPTY = object()


def _reduce_partition(f, items):
    acc = _EMPTY
    for x in items:
        acc = x if acc is _EMPTY else f(acc, x)
    if acc is not _EMPTY:
        yield acc


class Parts(ABC):
    """A distributed collection of Python objects (see the module sketch)."""

    @abstractmethod
    def map_partitions(self, f) -> "Parts":
        """``f(iterator of objects) -> iterator of objects`` on every partition."""

    def map(self, f) -> "Parts":
        return self.map_partitions(lambda items: (f(x) for x in items))

    def filter(self, f) -> "Parts":
        return self.map_partitions(lambda items: (x for x in items if f(x)))

    @abstractmethod
    def persist(self) -> "Parts":
        """The collection kept (memory and disk) for several jobs; use the returned collection."""

    @abstractmethod
    def unpersist(self) -> None:
        """Undo :meth:`persist`."""

    @abstractmethod
    def collect(self) -> list:
        """Every object, on the driver."""

    def reduce(self, f):
        """``f`` over all objects, in a tree (``f`` must be associative and commutative); ValueError if empty."""
        parts = self.map_partitions(lambda items: _reduce_partition(f, items)).collect()
        if not parts:
            raise ValueError("cannot reduce an empty collection")
        return _reduce(f, parts)

    def fold(self, zero, f):
        """``f`` over all objects starting from (copies of) ``zero``."""
        def part(items):
            acc = copy.deepcopy(zero)
            for x in items:
                acc = f(acc, x)
            yield acc

        return _reduce(f, self.map_partitions(part).collect(), copy.deepcopy(zero))

    @abstractmethod
    def group_by_key(self, emit, n: int, fn) -> "Parts":
        """Every object emits (key, value) pairs (``emit(obj) -> iterator``, keys in 0..n-1); the values of a key
        meet in one task, one key per task: ``fn(key, values) -> iterator of objects`` (values in no set order)."""


class RddParts(Parts):
    """:class:`Parts` over an RDD (classic sessions)."""

    def __init__(self, rdd):
        self.rdd = rdd

    def map_partitions(self, f):
        return RddParts(self.rdd.mapPartitions(f))

    def persist(self):
        from pyspark import StorageLevel

        return RddParts(self.rdd.persist(StorageLevel.MEMORY_AND_DISK))

    def unpersist(self):
        self.rdd.unpersist()

    def collect(self):
        return self.rdd.collect()

    def reduce(self, f):
        return self.rdd.treeReduce(f, depth=2)

    def group_by_key(self, emit, n, fn):
        return RddParts(self.rdd.flatMap(emit).partitionBy(n, lambda g: g)
                        .mapPartitions(lambda pairs: _grouped(pairs, fn)))


class FrameParts(Parts):
    """:class:`Parts` over a DataFrame (Spark Connect): ``df``'s Arrow batches, read by ``first`` (batches ->
    objects), then the functions of ``chain`` (iterator -> iterator), all in one ``mapInArrow``."""

    def __init__(self, df, first=unpickle_batches, chain=()):
        self.df, self.first, self.chain = df, first, tuple(chain)
        self._cached = None

    def _objects(self):
        first, chain = self.first, self.chain

        def objects(batches):
            items = first(batches)
            for f in chain:
                items = f(items)
            return items

        return objects

    def frame(self):
        """The objects as a DataFrame of pickled rows (schema :data:`PICKLED`)."""
        if not self.chain and self.first is unpickle_batches:
            return self.df
        objects = self._objects()
        return self.df.mapInArrow(lambda batches: pickle_batches(objects(batches)), PICKLED)

    def map_partitions(self, f):
        return FrameParts(self.df, self.first, self.chain + (f,))

    def persist(self):
        from pyspark import StorageLevel

        df = self.frame()
        out = FrameParts(df)
        try:
            out._cached = df.persist(StorageLevel.MEMORY_AND_DISK)
            out.df = out._cached
        except Exception as err:  # e.g. serverless compute, which caches nothing: read it again instead
            log.info("not persisted (%s): computed again where used", str(err).splitlines()[0][:120])
        return out

    def unpersist(self):
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None

    def collect(self):
        return list(unpickle_batches(self.frame().toArrow().to_batches()))

    def group_by_key(self, emit, n, fn):
        keys = partition_keys(n)
        objects = self._objects()

        def keyed(batches):
            pairs = (pair for x in objects(batches) for pair in emit(x))
            return pickle_batches(pairs, key=lambda pair: keys[pair[0]])

        shuffled = self.df.mapInArrow(keyed, KEYED).repartition(n, "pkey")
        return FrameParts(shuffled, lambda batches: _grouped(unpickle_batches(batches), fn))


# ----- the engines ------------------------------------------------------------------------------------------
class Engine(ABC):
    """The distributed patterns of one session (see the module sketch)."""

    kind = "?"

    def __init__(self, spark):
        self.spark = spark

    @abstractmethod
    def parallelism(self) -> int:
        """Task slots of the cluster (for cutting work into groups)."""

    @abstractmethod
    def run_grouped(self, payload, groups: list, work, merge, zero, *, size=len, progress=None,
                    description: str = "spark_fr"):
        """``work(payload, group)`` for every group, one Spark task each, merged with ``merge`` from ``zero``;
        ``progress`` (a :class:`~spark_fr.runtime.progress.Progress`) advances by ``size(group)`` per group."""

    @abstractmethod
    def from_frame(self, df, fn) -> Parts:
        """The objects ``fn(iterator of Arrow batches)`` yields for each partition of ``df``."""

    @abstractmethod
    def from_units(self, units: list, fn, slices: int) -> Parts:
        """The objects ``fn(list of units)`` yields for each of ``slices`` contiguous slices of ``units``."""

    @abstractmethod
    def broadcast(self, value):
        """A handle with ``.value`` (read in tasks) and ``.destroy()``."""

    @abstractmethod
    def tracked(self, progress, units: int, tasks: int | None = None):
        """Context manager: while a job runs in it, ``progress`` counts ``units`` x the fraction of the job's tasks
        done (the stage of ``tasks`` tasks, else the largest; :func:`work_fraction`); at its end, ``units``."""

    def describe(self, text: str | None):
        """Context manager naming the jobs started in it (Spark UI)."""
        return contextlib.nullcontext()


class ClassicEngine(Engine):
    """RDDs, broadcast variables and ``treeAggregate`` (a session with a ``sparkContext``)."""

    kind = "classic"

    @property
    def sc(self):
        return self.spark.sparkContext

    def parallelism(self):
        return int(self.sc.defaultParallelism)

    @contextlib.contextmanager
    def describe(self, text):
        sc = self.sc
        sc.setJobDescription(text)
        try:
            yield
        finally:
            sc.setJobDescription(None)

    @contextlib.contextmanager
    def tracked(self, progress, units, tasks=None):
        if progress is None or not hasattr(progress, "tracking"):
            yield
            return
        sc = self.sc
        tracker = sc.statusTracker()
        group = sc.getLocalProperty("spark.jobGroup.id")  # this thread's (spark_fr.api sets one per run)
        before = set(tracker.getJobIdsForGroup(group))

        def poll():
            stages = {}
            for job in tracker.getJobIdsForGroup(group):
                info = None if job in before else tracker.getJobInfo(job)
                for sid in (info.stageIds if info is not None else ()):
                    st = tracker.getStageInfo(sid)
                    if st is not None:
                        stages[sid] = (st.numTasks, st.numCompletedTasks)
            return int(units * work_fraction(stages, tasks))

        with progress.tracking(poll):
            yield
        progress.advance(units)

    def run_grouped(self, payload, groups, work, merge, zero, *, size=len, progress=None, description="spark_fr"):
        if not groups:
            return copy.deepcopy(zero)
        sc = self.sc
        bc = sc.broadcast(payload)

        def seq(acc, group):
            return merge(acc, work(bc.value, group))

        try:
            with self.describe(description), self.tracked(progress, sum(size(g) for g in groups), len(groups)):
                return sc.parallelize(groups, len(groups)).treeAggregate(zero, seq, merge, depth=2)
        finally:
            bc.destroy()

    def from_frame(self, df, fn):
        def wrap(batches):
            return pickle_batches(fn(batches))

        return RddParts(df.mapInArrow(wrap, PICKLED).rdd.mapPartitions(_rows_to_objects))

    def from_units(self, units, fn, slices):
        return RddParts(self.sc.parallelize(units, slices).mapPartitions(lambda us: fn(list(us))))

    def broadcast(self, value):
        return self.sc.broadcast(value)


def _rows_to_objects(rows):
    """The objects of pickled rows (schema :data:`PICKLED`) of an RDD of Rows."""
    pending: dict = {}
    for row in rows:
        if row["parts"] == 1:
            yield pickle.loads(row["payload"])
            continue
        got = pending.setdefault(row["oid"], {})
        got[row["part"]] = row["payload"]
        if len(got) == row["parts"]:
            del pending[row["oid"]]
            yield pickle.loads(b"".join(got[j] for j in range(row["parts"])))


class _Inline:
    """A 'broadcast' value carried in the closure of the tasks (Connect)."""

    def __init__(self, value):
        self.value = value

    def destroy(self):
        self.value = None


class ConnectEngine(Engine):
    """DataFrame APIs only (a Spark Connect session)."""

    kind = "connect"

    def parallelism(self):
        key = getattr(self.spark, "session_id", id(self.spark))
        if key not in _PARALLELISM:
            from pyspark.sql import functions as F

            # the leaf parallelism Spark gives spark.range (defaultParallelism): one small JVM-only job
            _PARALLELISM[key] = max(1, int(self.spark.range(0, 1 << 20).select(
                F.spark_partition_id().alias("p")).distinct().count()))
        return _PARALLELISM[key]

    @contextlib.contextmanager
    def tracked(self, progress, units, tasks=None):
        if progress is None or not hasattr(progress, "tracking"):
            yield
            return
        counts = _StageCounts()
        if hasattr(self.spark, "registerProgressHandler"):  # pyspark >= 4.0 clients
            self.spark.registerProgressHandler(counts)
        try:
            with progress.tracking(lambda: int(units * work_fraction(dict(counts.stages), tasks))):
                yield
        finally:
            with contextlib.suppress(Exception):
                self.spark.removeProgressHandler(counts)
        progress.advance(units)

    def run_grouped(self, payload, groups, work, merge, zero, *, size=len, progress=None, description="spark_fr"):
        import pyarrow as pa
        from pyspark.sql import functions as F

        if not groups:
            return copy.deepcopy(zero)
        blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        n_chunks = max(1, -(-len(blob) // CHUNK_BYTES))
        chunks = pa.table({"seq": pa.array(range(n_chunks), pa.int32()),
                           "bytes": pa.array([blob[i * CHUNK_BYTES:(i + 1) * CHUNK_BYTES] for i in range(n_chunks)],
                                             pa.binary())})
        del blob
        G = len(groups)
        shipped = self.spark.createDataFrame(chunks).coalesce(1)
        del chunks

        def task(batches):
            pieces: dict = {}
            for batch in batches:
                for g, seq, data in zip(*(batch.column(i).to_pylist() for i in range(3))):
                    pieces.setdefault(g, {})[seq] = data
            for g in sorted(pieces):
                value = work(pickle.loads(b"".join(pieces[g][i] for i in range(n_chunks))), groups[g])
                pieces[g] = None
                yield (g, value)

        frame = self.spark.range(0, G, 1, G).crossJoin(F.broadcast(shipped)).select("id", "seq", "bytes")
        parts = FrameParts(frame, task)
        with self.tracked(progress, sum(size(g) for g in groups), G):
            values = dict(parts.collect())
        result = copy.deepcopy(zero)
        for g in range(G):
            result = merge(result, values[g])
        return result

    def from_frame(self, df, fn):
        return FrameParts(df, fn)

    def from_units(self, units, fn, slices):
        units = list(units)

        def read(batches):
            return fn([units[i] for b in batches for i in b.column(0).to_pylist()])

        return FrameParts(self.spark.range(0, len(units), 1, max(1, min(slices, len(units)))), read)

    def broadcast(self, value):
        return _Inline(value)
