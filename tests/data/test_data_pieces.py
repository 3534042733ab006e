"""The data layer piece by piece, on Arrow batches built here (no Spark): reading values out of batches,
the mergeable statistics, the plan's bins, and the row keys."""
import numpy as np
import pyarrow as pa
import pytest

from spark_fr.data.blocks import codes_of_rows
from spark_fr.data.columns import BatchValues, category_indices, numeric_array, vector_csr
from spark_fr.data.plan import feature_bins, nominal_categories, target_columns
from spark_fr.data.rowkeys import content_keys, distinct_keys, raw_row_hashes
from spark_fr.data.schema import ColumnInfo
from spark_fr.data.stats import ColumnStats, batch_stats, gather_rows, stack_blocks

VECTOR = pa.struct([("type", pa.int8()), ("size", pa.int32()), ("indices", pa.list_(pa.int32())),
                    ("values", pa.list_(pa.float64()))])


def vectors(rows):
    """Spark ML vectors as Arrow: ('s', size, {i: v}) sparse, ('d', [values]) dense, None null."""
    out = []
    for r in rows:
        if r is None:
            out.append(None)
        elif r[0] == "s":
            idx = sorted(r[2])
            out.append({"type": 0, "size": r[1], "indices": idx, "values": [r[2][i] for i in idx]})
        else:
            out.append({"type": 1, "size": None, "indices": None, "values": list(r[1])})
    return pa.array(out, VECTOR)


def test_numeric_and_category_values():
    np.testing.assert_array_equal(numeric_array(pa.array([1, None, 3], pa.int64())), [1, np.nan, 3])
    np.testing.assert_array_equal(numeric_array(pa.array([True, False, None])), [1, 0, np.nan])
    np.testing.assert_array_equal(category_indices(pa.array(["b", None, "z", "a"]), ["a", "b"]), [1, np.nan, np.nan, 0])
    np.testing.assert_array_equal(category_indices(pa.array([True, False]), ["false", "true"]), [1, 0])


def test_vector_rows_sparse_dense_and_null():
    arr = vectors([("s", 4, {1: 2.0, 3: -1.0}), ("d", [1.0, 0.0, 0.0, 5.0]), None])
    indptr, idx, val = vector_csr(arr, 4)
    rows = [dict(zip(idx[indptr[r]:indptr[r + 1]], val[indptr[r]:indptr[r + 1]])) for r in range(3)]
    assert rows[0] == {1: 2.0, 3: -1.0} and rows[1] == {0: 1.0, 1: 0.0, 2: 0.0, 3: 5.0}
    assert sorted(rows[2]) == [0, 1, 2, 3] and all(np.isnan(v) for v in rows[2].values())
    batch = pa.RecordBatch.from_arrays([arr], ["v"])
    cols = [ColumnInfo(f"v[{i}]", "numeric", None, "v", i) for i in range(4)]
    bv = BatchValues(batch, cols, vector_size=4)
    np.testing.assert_array_equal(bv.values(3), [-1.0, 5.0, np.nan])
    np.testing.assert_array_equal(bv.values(2), [0.0, 0.0, np.nan])  # implicit zeros are values
    r, v = bv.sparse(1)
    assert list(r) == [0, 1, 2] and v[0] == 2.0 and v[1] == 0.0


def random_batch(rng, n):
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    k = rng.integers(0, 5, n).astype(float)
    s = np.array(["red", "green", "blue"], dtype=object)[rng.integers(0, 3, n)]
    s[rng.random(n) < 0.1] = None
    return pa.RecordBatch.from_arrays([pa.array(x, from_pandas=True), pa.array(k), pa.array(list(s))], ["x", "k", "s"])


COLS = [ColumnInfo("x", "numeric", None, "x"), ColumnInfo("k", "numeric", None, "k"), ColumnInfo("s", "nominal", None, "s")]


def test_statistics_merge_to_the_same_result_in_any_order():
    rng = np.random.default_rng(0)
    batches = [random_batch(rng, int(n)) for n in rng.integers(5, 60, 12)]
    whole = batch_stats(batches, COLS, [False, False, True], 0, None, 100)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(len(batches))
        parts = [batch_stats([batches[i]], COLS, [False, False, True], 0, None, 100) for i in order]
        total = parts[0]
        for p in parts[1:]:
            total.merge(p)
        assert total.n_rows == whole.n_rows
        for a, b in zip(total.columns, whole.columns):
            assert (a.n_known, a.n_missing, a.vmin, a.vmax, a.counts) == (b.n_known, b.n_missing, b.vmin, b.vmax,
                                                                          b.counts)
            assert (a.distinct is None) == (b.distinct is None)
            if a.distinct is not None:
                np.testing.assert_array_equal(a.distinct, b.distinct)
        for i in (0, 1):
            np.testing.assert_array_equal(np.sort(total.sample.column(i)), np.sort(whole.sample.column(i)))
    # the sample: the 100 rows with the smallest hash, whichever batches they came in
    h = np.concatenate([raw_row_hashes(BatchValues(b, COLS), 3) for b in batches])
    x = np.concatenate([b.column("x").to_numpy(zero_copy_only=False) for b in batches])
    np.testing.assert_array_equal(np.sort(whole.sample.hashes), np.sort(h)[:100])
    np.testing.assert_array_equal(np.sort(whole.sample.column(0)), np.sort(x[np.argsort(h)[:100]]))
    sx = whole.columns[0]
    assert sx.n_missing == np.isnan(x).sum() and sx.vmax == np.nanmax(x) and sx.distinct is None  # > 255 values
    np.testing.assert_array_equal(whole.columns[1].distinct, [0, 1, 2, 3, 4])


def test_distinct_values_are_remembered_up_to_255():
    s = ColumnStats()
    s.add_numeric(np.arange(255.0))
    assert s.distinct.size == 255
    s.add_numeric(np.array([1000.0]))
    assert s.distinct is None and s.vmax == 1000.0


def test_plan_bins_usability_and_categories():
    rng = np.random.default_rng(1)
    stats = batch_stats([random_batch(rng, 400)], COLS, [False, False, True], 0, None, 1000)
    const = ColumnStats()
    const.add_numeric(np.full(20, 3.0))
    gone = ColumnStats()
    gone.add_numeric(np.full(20, np.nan))
    cols = COLS + [ColumnInfo("c", "numeric", None, "c"), ColumnInfo("g", "numeric", None, "g")]
    bins, cats, usable = feature_bins(cols, stats.columns + [const, gone], stats.sample)
    assert list(usable) == [True, True, True, False, False]
    assert bins[0].n_bins == 255 and not bins[0].lossless  # quantile bins for a continuous column
    assert bins[1].lossless and bins[1].n_bins == 5
    assert cats[2] == ["blue", "green", "red"] and bins[2].nominal
    many = {f"v{i:03d}": 300 - i for i in range(300)}
    kept = nominal_categories("big", None, many)
    assert len(kept) == 255 and kept[-1] == "__other__" and "v000" in kept and "v299" not in kept
    tc = target_columns([ColumnInfo("s", "nominal", None, "s")], [stats.columns[2]])[0]
    assert tc.kind == "nominal" and tc.categories == ["blue", "green", "red"] and sum(tc.counts.values()) > 300


def test_row_keys_depend_on_content_only():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 255, (5, 50)).astype(np.uint8)
    Y = rng.normal(size=(50, 2))
    Y[3, 1] = np.nan
    keys = content_keys([codes], Y)
    perm = rng.permutation(50)
    np.testing.assert_array_equal(content_keys([codes[:, perm]], Y[perm]), keys[perm])
    codes[:, 7] = codes[:, 8]
    Y[7] = Y[8]
    k2 = content_keys([codes], Y)
    assert k2[7] == k2[8] and len(set(k2)) == 49
    pos, neg = Y.copy(), Y.copy()
    pos[0, 0], neg[0, 0] = 0.0, -0.0  # -0.0 and 0.0 are one value
    assert content_keys([codes], pos)[0] == content_keys([codes], neg)[0]
    assert content_keys([codes], pos)[1] == keys[1] and content_keys([codes], pos)[0] != keys[0]
    distinct = distinct_keys(np.sort(k2))
    assert len(set(distinct)) == 50 and set(np.sort(k2)) <= set(distinct)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_values_are_refused_with_the_column(bad):
    from spark_fr.data.schema import Dataset
    from spark_fr.data.validate import check_finite
    from spark_fr.errors import InputError

    s = ColumnStats()
    s.add_numeric(np.array([1.0, bad, 2.0]))
    with pytest.raises(InputError, match="column 'x' holds an infinite value"):
        check_finite(Dataset(None, [], "f.csv"), [COLS[0]], [s])


def test_the_sample_hash_depends_on_the_values_only():
    """The same rows hash the same as dense columns or a vector (sparse or dense, zeros stored or not), in any
    batches; another value changes the hash."""
    rng = np.random.default_rng(3)
    X = np.where(rng.random((30, 4)) < 0.5, 0.0, rng.normal(size=(30, 4)))
    X[2, 1] = np.nan
    cols = [ColumnInfo(f"v[{i}]", "numeric", None, "v", i) for i in range(4)]
    sparse = vectors([("s", 4, {i: v for i, v in enumerate(row) if v != 0.0}) for row in X])
    dense = vectors([("d", list(row)) for row in X])
    a = raw_row_hashes(BatchValues(pa.RecordBatch.from_arrays([sparse], ["v"]), cols, vector_size=4), 4)
    b = raw_row_hashes(BatchValues(pa.RecordBatch.from_arrays([dense], ["v"]), cols, vector_size=4), 4)
    np.testing.assert_array_equal(a, b)
    distinct_rows = len({tuple(np.nan_to_num(r, nan=7.5)) for r in X})
    assert len(set(a)) == distinct_rows  # identical rows (all zeros) hash alike, the others differ
    strings = pa.RecordBatch.from_arrays([pa.array(["a", None, "b", "a"])], ["s"])
    h = raw_row_hashes(BatchValues(strings, [ColumnInfo("s", "nominal", None, "s")]), 1)
    assert h[0] == h[3] and len({h[0], h[1], h[2]}) == 3
    half = raw_row_hashes(BatchValues(pa.RecordBatch.from_arrays([sparse.slice(10, 5)], ["v"]), cols, vector_size=4), 4)
    np.testing.assert_array_equal(half, a[10:15])


@pytest.mark.parametrize("rows", [40, 700, 1200, 3000])
def test_matrix_statistics_equal_column_by_column_statistics(rows):
    from spark_fr.data.stats import add_numeric_matrix

    rng = np.random.default_rng(rows)
    M = np.column_stack([rng.normal(size=rows), rng.integers(0, 200, rows), rng.integers(0, 300, rows),
                         np.where(rng.random(rows) < 0.3, np.nan, rng.integers(0, 3, rows)), np.full(rows, np.nan),
                         np.r_[rng.integers(0, 250, rows - 5), np.arange(1000, 1005)]]).astype(float)
    one, many = [ColumnStats() for _ in range(6)], [ColumnStats() for _ in range(6)]
    for part in np.array_split(M, 3):  # batch after batch, with running distinct sets
        add_numeric_matrix(many, np.asfortranarray(part))
        for j, s in enumerate(one):
            s.add_numeric(part[:, j])
    for a, b in zip(one, many):
        assert (a.n_known, a.n_missing, a.vmin, a.vmax) == (b.n_known, b.n_missing, b.vmin, b.vmax)
        assert (a.distinct is None) == (b.distinct is None)
        if a.distinct is not None:
            np.testing.assert_array_equal(a.distinct, b.distinct)


def test_dense_matrix_equals_the_columns_one_by_one():
    """:meth:`BatchValues.dense_matrix` (float64 and float32 columns in one Arrow call each) against
    :meth:`BatchValues.dense` of each column, for float64 and float32 columns with nulls (and a NaN), other numeric
    types, nominal columns, a column read twice, and a batch that is a slice of a longer one (Arrow offsets)."""
    rng = np.random.default_rng(7)
    n = 50
    floats = [pa.array(np.where(rng.random(n) < 0.2, None, rng.normal(size=n)).tolist(), pa.float64()) for _ in range(4)]
    arrays = floats[:2] + [pa.array(rng.integers(-5, 5, n), pa.int32()), pa.array(["a", "b"] * (n // 2))] + floats[2:] \
        + [pa.array([None] * n, pa.float64()), pa.array(np.r_[-0.0, np.inf, rng.normal(size=n - 2)], pa.float32()),
           pa.array(np.where(rng.random(n) < 0.2, None, np.r_[np.nan, rng.normal(size=n - 1)]).tolist(), pa.float32())]
    names = [f"c{i}" for i in range(len(arrays))]
    cols = [ColumnInfo(nm, "nominal" if nm == "c3" else "numeric", None, nm) for nm in names]
    cats = [["a", "b"] if c.kind == "nominal" else None for c in cols]
    whole = pa.RecordBatch.from_arrays(arrays, names=names)
    for batch in (whole, whole.slice(7, 30), whole.slice(0, 0)):
        for idx in (list(range(len(cols))), [0, 1, 4, 5], [5, 0, 2, 0], [6], [], [7, 8], [8, 0, 7, 2]):
            bv = BatchValues(batch, cols, cats)
            M = bv.dense_matrix(idx)
            expected = np.column_stack([BatchValues(batch, cols, cats).dense(i) for i in idx]) if idx \
                else np.empty((batch.num_rows, 0))
            assert M.shape == (batch.num_rows, len(idx)) and M.flags.f_contiguous and M.dtype == np.float64
            np.testing.assert_array_equal(M, expected)
            assert np.array_equal(np.signbit(M), np.signbit(expected))
            for j, i in enumerate(idx):
                np.testing.assert_array_equal(bv.dense(i), expected[:, j])


def _one_feature_quantile_bins(name, candidates, vmin, vmax):
    """The obvious feature-by-feature binning from candidate cuts (what ``numeric_bins`` computed before it was
    vectorised): distinct candidates below vmax, thinned to 254, then the bounds."""
    from spark_fr.data.binning import FeatureBins

    cuts = np.unique(np.asarray(candidates, dtype=np.float64))
    cuts = cuts[cuts < vmax]
    if cuts.size > 254:
        cuts = np.unique(cuts[np.linspace(0, cuts.size - 1, 254).round().astype(int)])
    return FeatureBins(name, False, cuts, None, np.r_[vmin, cuts], np.r_[cuts, vmax], np.r_[cuts, np.inf], False)


@pytest.mark.parametrize("q", [0, 1, 254, 400])
def test_quantile_bins_equal_the_feature_by_feature_bins(q):
    """:func:`quantile_bins` (every feature at once, arrays cut out of flat ones) against the obvious per-feature
    computation: repeated candidates, candidates at or above the maximum, NaN (no cut), all-missing features (NaN
    bounds), signed zeros, unsorted candidates, more than 254 distinct candidates."""
    from spark_fr.data.binning import numeric_bins, quantile_bins

    rng = np.random.default_rng(q)
    k = 9
    C = np.round(rng.normal(size=(q, k)), 1 if q < 300 else 4)
    C[:, 1] = np.sort(C[:, 1])
    C[rng.random((q, k)) < 0.1] = np.nan
    C[:, 2] = np.nan
    C[:q // 2, 3] = -0.0
    C[q // 2:, 3] = 0.0
    C[:, 4] = 5.0
    vmin, vmax = np.nanmin(np.r_[C, np.zeros((1, k))], axis=0) - 1, np.r_[np.full(k - 2, 0.5), np.nan, 9.0]
    names = [f"f{j}" for j in range(k)]
    got = quantile_bins(names, C, vmin, vmax)
    for j, b in enumerate(got):
        want = _one_feature_quantile_bins(names[j], C[:, j], vmin[j], vmax[j])
        for a, e in [(b.cuts, want.cuts), (b.lower, want.lower), (b.upper, want.upper), (b.thresholds, want.thresholds)]:
            np.testing.assert_array_equal(a, e, err_msg=names[j])
            assert a.dtype == np.float64 and np.array_equal(np.signbit(a), np.signbit(e)), names[j]
        assert (b.name, b.nominal, b.lossless, b.categories) == (names[j], False, False, None)
        one = numeric_bins(names[j], None, C[:, j], vmin[j], vmax[j])
        np.testing.assert_array_equal(one.thresholds, want.thresholds)
    assert quantile_bins([], np.empty((q, 0)), np.empty(0), np.empty(0)) == []


def test_a_batch_remembers_its_statistics_matrix_for_the_encoding():
    """:mod:`spark_fr.data.batch_matrix`: the statistics pass's matrix of a driver batch's float64 columns (with nulls)
    is what a later :meth:`BatchValues.dense_matrix` of any of them gives (a view for consecutive columns), and is
    forgotten with its batch; a batch with a float32 column among them keeps none (read again, the same values)."""
    import gc

    from spark_fr.data.batch_matrix import _REMEMBERED, remember, remembered_columns
    from spark_fr.data.stats import batch_stats

    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 4))
    x[rng.random(x.shape) < 0.2] = np.nan
    cols = [ColumnInfo(f"c{j}", "numeric", None, f"c{j}") for j in range(4)]
    for kind in ("float64", "float32"):
        arrays = [pa.array(x[:, j], type=pa.float32() if kind == "float32" and j == 2 else pa.float64(),
                           from_pandas=True) for j in range(4)]
        batch = pa.RecordBatch.from_arrays(arrays + [pa.array(["a"] * 50)], ["c0", "c1", "c2", "c3", "s"])
        fresh = BatchValues(batch, cols).dense_matrix([2, 0, 3])
        batch_stats([batch], cols, [False] * 4, 0, None, 10, remember_matrices=True)
        for idx in ([0, 1, 2, 3], [1, 2], [2, 0, 3]):
            got = remembered_columns(batch, [f"c{j}" for j in idx])
            if kind == "float32":
                assert got is None
                continue
            np.testing.assert_array_equal(got, BatchValues(batch, cols).dense_matrix(idx))
            assert got.flags.f_contiguous
            if idx != [2, 0, 3]:  # consecutive: a view of the remembered matrix
                assert not got.flags.owndata
        np.testing.assert_array_equal(BatchValues(batch, cols).dense_matrix([2, 0, 3]), fresh)
    assert remembered_columns(batch, ["c0", "nope"]) is None
    gc.collect()  # the first loop's batch, if a cycle still holds it, leaves now, not in the count below
    n_before = len(_REMEMBERED)
    other = pa.RecordBatch.from_arrays([pa.array(x[:, 0], from_pandas=True)], ["c0"])
    remember(other, ["c0"], np.asfortranarray(x[:, :1]))
    assert len(_REMEMBERED) == n_before + 1
    del other
    gc.collect()
    assert len(_REMEMBERED) == n_before


def test_a_sample_keeping_every_row_appends_its_batches_and_truncates_as_before():
    """:class:`RowSample`: while no row is dropped the batches' blocks are appended (the rows of every batch, stacked
    in the batches' order); past k, the k rows of smallest hash, as the one-matrix sketch kept them; the quantile
    cuts of the blocks equal those of the stacked matrix."""
    import pickle

    from spark_fr.data.plan import quantile_cuts
    from spark_fr.data.stats import RowSample

    rng = np.random.default_rng(5)
    blocks = [np.asfortranarray(rng.normal(size=(m, 3))) for m in (4, 6, 5)]
    hashes = [rng.integers(-2**62, 2**62, m) for m in (4, 6, 5)]
    every = RowSample(15)
    for h, b in zip(hashes, blocks):
        every.add(h, [0, 1, 2], b)
    assert len(every.blocks) == 3
    np.testing.assert_array_equal(every.values, np.vstack(blocks))
    np.testing.assert_array_equal(every.hashes, np.concatenate(hashes))
    assert every.values.flags.f_contiguous and len(every.blocks) == 1
    np.testing.assert_array_equal(every.matrix([2, 0]), np.vstack(blocks)[:, [2, 0]])
    own = every.matrix([0, 1, 2])  # every column in order: still a new matrix, the caller's to sort
    assert own.flags.f_contiguous and not np.shares_memory(own, every.values)
    np.testing.assert_array_equal(every.matrix([2, 0], sort=True), np.sort(np.vstack(blocks)[:, [2, 0]], axis=0))
    assert RowSample(3).matrix([0, 1]).shape == (0, 2)
    for cols in ([1, 2], [2], [0, 2], [2, 1, 0], [0, 1, 2, 0, 1], []):  # runs of consecutive columns and others
        np.testing.assert_array_equal(every.matrix(cols), np.vstack(blocks)[:, cols])
    some = RowSample(9)
    for h, b in zip(hashes, blocks):
        some.add(h, [0, 1, 2], b)
    h_all, v_all = np.concatenate(hashes), np.vstack(blocks)
    order = np.argsort(some.hashes)
    np.testing.assert_array_equal(some.hashes[order], np.sort(h_all)[:9])
    np.testing.assert_array_equal(some.values[order], v_all[np.argsort(h_all)[:9]])
    cuts = quantile_cuts(every.matrix([0, 1, 2], sort=True), presorted=True)  # the blocks' sample, sorted in pieces
    np.testing.assert_array_equal(cuts, quantile_cuts(np.vstack(blocks)))
    assert not np.isnan(cuts).any()
    # a long stream (cut back past 2k rows, later rows above the bound dropped), in blocks and merged samples
    hs = [rng.integers(-2**62, 2**62, m) for m in rng.integers(0, 9, 40)]
    vs = [np.asfortranarray(rng.normal(size=(h.size, 2))) for h in hs]
    h_all, v_all = np.concatenate(hs), np.vstack(vs)
    stream, parts = RowSample(6), [RowSample(6), RowSample(6)]
    for i, (h, v) in enumerate(zip(hs, vs)):
        stream.add(h, [0, 1], v)
        parts[i % 2].add(h, [0, 1], v)
    merged = pickle.loads(pickle.dumps(parts[0])).merge(pickle.loads(pickle.dumps(parts[1])))
    for sample in (stream, merged):
        order = np.argsort(sample.hashes)
        np.testing.assert_array_equal(sample.hashes[order], np.sort(h_all)[:6])
        np.testing.assert_array_equal(sample.values[order], v_all[np.argsort(h_all)[:6]])


@pytest.mark.parametrize("m", [1, 7, 600])
def test_quantile_cuts_equal_numpys_inverted_cdf_quantiles_per_column(m, monkeypatch):
    """:func:`quantile_cuts` (one sort of all columns) against ``np.quantile(..., method="inverted_cdf")`` of each
    column's known values, with columns full, holed, all missing, and of repeated values."""
    from spark_fr.data import stats
    from spark_fr.data.plan import QUANTILE_PROBS, quantile_cuts
    from spark_fr.data.stats import RowSample

    rng = np.random.default_rng(m)
    V = rng.normal(size=(m, 6))
    V[rng.random(m) < 0.3, 1] = np.nan
    V[:, 2] = np.nan
    V[:, 3] = np.round(V[:, 3])
    V[rng.random(m) < 0.6, 5] = np.nan  # holed as well, with another count of known values
    got = quantile_cuts(V)
    assert got.shape == (QUANTILE_PROBS.size, 6)
    sample = RowSample(m)
    for part in np.array_split(np.arange(m), 3):  # a sample of three blocks, sorted in pieces of 2 columns
        sample.add(part.astype(np.int64), list(range(6)), np.asfortranarray(V[part]))
    monkeypatch.setattr(stats, "SAMPLE_PIECE_COLUMNS", 2)
    for threads in ("1", "4"):  # the pieces shared among threads, or not: the same cuts
        monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
        np.testing.assert_array_equal(quantile_cuts(sample.matrix(list(range(6)), sort=True), presorted=True), got)
    for j in range(6):
        known = V[~np.isnan(V[:, j]), j]
        if known.size == 0:
            assert np.isnan(got[:, j]).all()
        else:
            np.testing.assert_array_equal(got[:, j], np.quantile(known, QUANTILE_PROBS, method="inverted_cdf"))


def test_the_drivers_statistics_on_several_threads_equal_one_threads(monkeypatch):
    """:func:`driver_stats` cuts the batches into runs of consecutive ones, one per driver thread, and merges their
    statistics: the same statistics, sampled rows and batches (in order) as on one thread; the runs cover every batch
    once, in order, as even in rows as whole batches allow."""
    from spark_fr.data.stats import _runs, driver_stats

    rng = np.random.default_rng(11)
    batches = [random_batch(rng, int(n)) for n in rng.integers(0, 40, 9)]
    results = {}
    for threads in ("1", "2", "4"):
        monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
        results[threads] = driver_stats(batches, COLS, [False, False, True], 0, None, 25)
    one, kept_one = results["1"]
    assert kept_one == batches
    for threads in ("2", "4"):
        stats, kept = results[threads]
        assert kept == batches and stats.n_rows == one.n_rows
        for a, b in zip(stats.columns, one.columns):
            assert (a.n_known, a.n_missing, a.vmin, a.vmax, a.counts) == (b.n_known, b.n_missing, b.vmin, b.vmax,
                                                                          b.counts)
            assert (a.distinct is None) == (b.distinct is None)
        order, order_one = np.argsort(stats.sample.hashes), np.argsort(one.sample.hashes)
        np.testing.assert_array_equal(stats.sample.hashes[order], one.sample.hashes[order_one])
        np.testing.assert_array_equal(stats.sample.values[order], one.sample.values[order_one])
    for n in (1, 2, 3, 20):
        runs = _runs(batches, n)
        assert [b for run in runs for b in run] == batches and 1 <= len(runs) <= n and all(runs)
    rows = [sum(b.num_rows for b in run) for run in _runs(batches, 2)]
    assert abs(rows[0] - rows[1]) <= 2 * max(b.num_rows for b in batches)


@pytest.mark.parametrize("kept", ["all", "some", "none"])
def test_codes_of_rows_equal_a_boolean_mask(kept):
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 256, size=(30, 50), dtype=np.uint8)
    rows = {"all": np.ones(50, bool), "some": rng.random(50) < 0.6, "none": np.zeros(50, bool)}[kept]
    got = codes_of_rows(codes, rows)
    np.testing.assert_array_equal(got, codes[:, rows])
    assert got.flags.c_contiguous
    assert (got is codes) == (kept == "all")  # every row kept: no copy
    assert codes_of_rows(np.asfortranarray(codes), rows).flags.c_contiguous  # a column-major input is copied


def test_gather_rows_equals_the_stacked_blocks_rows():
    rng = np.random.default_rng(3)
    blocks = [np.asfortranarray(rng.random((n, 7))) for n in (5, 0, 9, 4)]
    stacked = np.vstack(blocks)
    for idx in (np.arange(18), np.sort(rng.choice(18, 6, replace=False)), np.array([0, 17]), np.arange(5, 14)):
        got = gather_rows(blocks, idx)
        np.testing.assert_array_equal(got, stacked[idx])
        assert got.flags.f_contiguous
    np.testing.assert_array_equal(stack_blocks(blocks), stacked)
