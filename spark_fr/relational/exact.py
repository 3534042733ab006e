"""Exact, order-independent sums, means and standard deviations of doubles with native Spark aggregates.

Spark adds doubles in the order rows arrive, which depends on the partitioning; a feature's last bits would
then change with it. Sorting each group's values first (``array_sort(collect_list(x))``) fixes the order but
makes the whole ``groupBy`` an object aggregate (slow: it falls back to sorting serialized buffers). This
module gets the same guarantee with long sums only (Spark's fastest, codegen'd hash aggregate).

Algorithm sketch
----------------
A value column is bounded, ``|x| < 2^e`` (``e`` from :func:`grid_exponent` of a bound: the table's largest
``|x|``, measured, or a bound derived from it for aggregated values).

* **Sum and mean.** Each value is put on the grid ``2^(e - SUM_BITS)``: ``q = rint(x * 2^(SUM_BITS - e))``, an
  integer with ``|q| < 2^SUM_BITS`` (scaling by a power of two is exact; only bits below the grid are
  rounded, ties to even). ``|q|`` is cut into ``SUM_LIMBS`` pieces of ``SUM_LIMB`` bits with exact double
  arithmetic (floors from the top, exact remainders), signed like ``x``, as longs. A group's limb sums
  are exact long sums, whatever the order. The total ``T = sum_j S_j 2^(32 j)`` is carried, with long shifts
  and masks, into three 52-bit words (:func:`words`: each an exact double), added exactly into a
  double-double and rounded once, then scaled back: the exact sum of the gridded values to within one ulp
  (nearly always what ``math.fsum`` of them gives). The mean is that sum divided by the number of non-missing
  values. (Spark's decimals would be exact too, but cost a Java ``BigDecimal`` per operation: slower than the
  whole aggregation.)
* **Standard deviation** (sample, ``ddof = 1``). Values go on a coarser grid, ``q = rint(x * 2^(STD_BITS - e))``
  with ``|q| < 2^64``, cut into four 16-bit limbs ``d_j`` (signed like ``x``); the square's limbs
  ``c_m = sum_{i+j=m} d_i d_j`` are exact longs, so ``S1 = sum q`` and ``S2 = sum q^2`` are exact integers
  (three words each). The variance ``(S2 - S1^2 / n) / (n - 1)`` is computed in double-double arithmetic (each of
  ``S1``, ``S2`` as an unevaluated sum of two doubles; Dekker's products), so the cancellation of a large mean
  costs about ``2^-104 (mean / std)^2`` relative, not ``2^-52 (mean / std)^2``.

Accuracy: sums and means are exact for values on the grid, i.e. any value within ``2^-43`` of the bound keeps
all of its 53 bits and smaller ones are rounded to ``2^(e - 96)``; the standard deviation sees values rounded
to ``2^(e - 64)`` (about ``5e-20`` of the bound, below a double's resolution there). Groups may hold up to
``2^28`` rows. Non-finite bounds
(infinite or NaN values) are not handled here (:func:`grid_exponent` returns None: callers keep the sorted
arrays).

The same arithmetic on numpy arrays (:func:`group_sums_numpy`, :func:`group_stds_numpy`) gives the same bits
without Spark: the driver-side reference of the tests.
"""
from __future__ import annotations

import math
import numpy as np

from .sqltext import Sql, compare, fn, when

#: the sorted folds' rescue from overflow (``aggregates.py``, ``local_kernels.py``): a mean whose sum, or a
#: standard deviation whose sum of squared deviations, overflows while the values are finite is folded again on
#: the values times ``2^-RESCUE_BITS`` (exact: a power of two) and scaled back. Scaled values are at most 2^484,
#: their squared differences 2^970, and 2^28 of them add up below the largest double; values below 2^-482 turn
#: subnormal there, negligible beside the 2^497 or more a deviation must reach to overflow.
RESCUE_BITS = 540
SUM_BITS, SUM_LIMB, SUM_LIMBS = 96, 32, 3
STD_BITS, STD_LIMB, STD_LIMBS = 64, 16, 4
#: the largest group (rows) whose limb sums cannot overflow a long
MAX_GROUP_ROWS = 2 ** 28
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter for doubles
_WORD = 52  # exact totals are carried into three words: T = W2 2^104 + W1 2^52 + W0
_LARGEST = 1.7976931348623157e308


def grid_exponent(bound: float) -> int | None:
    """The smallest ``e`` with ``|x| < 2^e`` for every ``|x| <= bound``; None if ``bound`` is not finite."""
    if bound is None or not math.isfinite(bound):
        return None
    if bound == 0:
        return 0
    return math.frexp(abs(bound))[1]


def _pow2(col, k: int):
    """``col * 2^k`` in two exact steps (a single power of two may overflow a double)."""
    h = k // 2
    return col * float(2.0 ** h) * float(2.0 ** (k - h))


# --- exact totals as three words (operators and two callbacks: Spark columns and numpy arrays alike) -----


def words(sums, limb: int, shift, mask) -> list:
    """``T = sum_j S_j 2^(limb j)`` (``S_j`` signed longs below ``2^62``, ``|T| < 2^156``) as three longs ``W0, W1
    (in [0, 2^52))`` and ``W2`` (signed) with ``T = W2 2^104 + W1 2^52 + W0``: each is an exact double.

    ``shift(c, s)`` is ``floor(c / 2^s)`` (an arithmetic right shift; ``s < 0``: a left shift, which may drop
    high bits: only the low 52 are kept then), ``mask(c)`` is ``c mod 2^52`` (the low 52 bits).
    """
    raw = []
    for k in range(3):
        total = None
        for j, c in enumerate(sums):
            s = _WORD * k - limb * j
            if k < 2:
                if -s >= _WORD:  # the word lies below this term's lowest bit
                    continue
                piece = mask(shift(c, min(s, 63)))
            else:
                piece = shift(c, min(s, 63))
            total = piece if total is None else total + piece
        raw.append(total)
    w0 = mask(raw[0])
    t1 = raw[1] + shift(raw[0], _WORD)
    return [w0, mask(t1), raw[2] + shift(t1, _WORD)]


def _scaled_words(ws) -> list:
    """The three words as doubles at their scale, the largest first (exact)."""
    return [ws[2] * float(2.0 ** (2 * _WORD)), ws[1] * float(2.0 ** _WORD), ws[0]]


def _cascade(terms):
    """Double-double ``(h, l)`` of a sum of exact doubles, added from the first (largest) term."""
    h, l = terms[0], None
    for t in terms[1:]:
        h, e = _two_sum(h, t)
        l = e if l is None else l + e
    return _two_sum(h, l)


def _squares(d) -> list:
    """The limbs ``c_m = sum_{i+j=m} d_i d_j`` of ``q^2`` from the limbs ``d`` of ``q``."""
    out = []
    for m in range(2 * len(d) - 1):
        terms = [d[i] * d[m - i] for i in range(len(d)) if 0 <= m - i < len(d)]
        c = terms[0]
        for t in terms[1:]:
            c = c + t
        out.append(c)
    return out


# --- Spark expressions ------------------------------------------------------------------------------------


def _shift(c, s: int):
    return fn("shiftleft", c, -s) if s < 0 else fn("shiftright", c, s)


def _mask(c):
    return Sql(f"({c.text} & {(1 << _WORD) - 1}L)")


def _limbs(x: Sql, e: int, bits: int, limb: int, n: int) -> list:
    """Signed long limbs of ``rint(|x| 2^(bits - e))``, null where x is null: the top limb is ``floor(q / 2^(limb
    (n-1)))`` and each lower one is cut from the exact remainder (floors and exact double subtractions; a double
    ``%`` would cost a slow ``fmod`` per limb)."""
    rest = fn("rint", _pow2(fn("abs", x), bits - e))
    sign = fn("signum", x).cast("bigint")
    out = []
    for j in reversed(range(n)):
        if j:
            top = fn("floor", rest * float(2.0 ** (-limb * j)))
            out.append(top * sign)
            rest = rest - top.cast("double") * float(2.0 ** (limb * j))
        else:
            out.append(rest.cast("bigint") * sign)
    return out[::-1]


def sum_limbs(x: Sql, e: int) -> list:
    """Per-row long expressions (:class:`Sql`) whose group sums :func:`sum_words` and :func:`sum_from_words`
    turn into the exact sum of ``x``."""
    return _limbs(x, e, SUM_BITS, SUM_LIMB, SUM_LIMBS)


def sum_words(sums: list) -> list:
    """The three exact words (doubles, largest first) of the total of the group sums (:class:`Sql`) of
    :func:`sum_limbs`."""
    return _scaled_words([w.cast("double") for w in words(sums, SUM_LIMB, _shift, _mask)])


def sum_from_words(ws: list, e: int) -> Sql:
    """The group sum (a double: the exact total, rounded once, within an ulp) from :func:`sum_words`' columns."""
    return _pow2(sum_high(ws), e - SUM_BITS)


def sum_high(ws: list):
    """The exact total of :func:`sum_words`' columns rounded once, on the grid's scale (:func:`sum_from_words`
    before its scaling back)."""
    return _cascade(ws)[0]


def mean_from_high(h: Sql, count: Sql, e: int) -> Sql:
    """The group mean from :func:`sum_high`: the sum / ``count``; when that sum overflows (values near the largest
    double), the total divided first and then scaled back, so that a mean of finite values stays finite."""
    total = _pow2(h, e - SUM_BITS)
    return Sql(f"(CASE WHEN {compare(fn('abs', total), '>', _LARGEST).text} THEN {_pow2(h / count, e - SUM_BITS).text}"
               f" ELSE {(total / count).text} END)")


def std_limbs(x: Sql, e: int) -> list:
    """Per-row long expressions for :func:`std_steps`: the 4 limbs of ``q`` then the 7 limbs of ``q^2``."""
    d = _limbs(x, e, STD_BITS, STD_LIMB, STD_LIMBS)
    return d + _squares(d)


def std_steps(sums: list, count: Sql, e: int, prefix: str) -> list:
    """Projection steps (lists of ``(name, Sql)``; each step may use the previous steps' columns) that end
    with column ``prefix`` = the sample standard deviation (null below two values).

    Parameters
    ----------
    sums : list of Sql
        The group sums of the 11 expressions of :func:`std_limbs`.
    count : Sql
        The group's number of non-missing values.
    e : int
        The grid exponent.
    prefix : str
        Output column name; hidden columns are :func:`std_hidden`.
    """
    names = dict(zip(_STD_HIDDEN, std_hidden(prefix)))
    c = {k: Sql.col(v) for k, v in names.items()}
    s1 = _scaled_words([w.cast("double") for w in words(sums[:STD_LIMBS], STD_LIMB, _shift, _mask)])
    s2 = _scaled_words([w.cast("double") for w in words(sums[STD_LIMBS:], STD_LIMB, _shift, _mask)])
    step1 = [(names["n"], when(compare(count, ">", 1), count.cast("double")))]
    step1 += [(names[f"a{k}"], w) for k, w in enumerate(s1)] + [(names[f"b{k}"], w) for k, w in enumerate(s2)]
    h1, l1 = _cascade([c[f"a{k}"] for k in range(3)])
    h2, l2 = _cascade([c[f"b{k}"] for k in range(3)])
    step2 = [(names["h1"], h1), (names["l1"], l1), (names["h2"], h2), (names["l2"], l2)]
    var = _variance(c["h1"], c["l1"], c["h2"], c["l2"], c["n"])
    std = when(Sql(f"({c['n'].text} IS NOT NULL)"), _pow2(fn("sqrt", fn("greatest", var, 0.0)), e - STD_BITS))
    return [step1, step2, [(prefix, std)]]


_STD_HIDDEN = ("n", "a0", "a1", "a2", "b0", "b1", "b2", "h1", "l1", "h2", "l2")


def std_hidden(prefix: str) -> list:
    """The hidden column names :func:`std_steps` adds (to drop)."""
    return [f"{prefix}_{k}" for k in _STD_HIDDEN]


# --- double-double arithmetic (operators only: Spark columns and numpy arrays alike) ----------------------


def _split(a):
    t = a * _SPLIT
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _variance(h1, l1, h2, l2, n):
    """``(S2 - S1^2 / n) / (n - 1)`` with ``S1 = h1 + l1``, ``S2 = h2 + l2`` in double-double arithmetic."""
    p, pe = _two_prod(h1, h1)  # S1^2 = p + pe + 2 h1 l1 (+ l1^2, below the precision)
    pe = pe + 2.0 * h1 * l1
    qh = p / n  # (p + pe) / n
    r, re = _two_prod(qh, n)
    ql = ((p - r) - re + pe) / n
    d, de = _two_sum(h2, -qh)  # S2 - q
    de = de + l2 - ql
    return (d + de) / (n - 1.0)


# --- numpy: the same bits in the driver --------------------------------------------------------------------


def _limbs_numpy(x: np.ndarray, e: int, bits: int, limb: int, n: int) -> list:
    """:func:`_limbs` in numpy: the integer ``q = rint(|x| 2^(bits - e))`` cut into ``n`` limbs of ``limb`` bits
    from the top (each cut exact: scaling by a power of two, ``floor``, and a difference whose bits are a
    subset of ``q``'s), signed."""
    q = np.rint(_pow2(np.abs(x), bits - e))
    sign = np.sign(x).astype(np.int64)
    parts = []
    rest = q
    for j in range(n - 1, 0, -1):
        top = np.floor(rest * float(2.0 ** (-limb * j)))
        rest = rest - top * float(2.0 ** (limb * j))
        parts.append(top)
    parts.append(rest)
    return [c.astype(np.int64) * sign for c in reversed(parts)]


def _shift_numpy(c, s: int):
    return c << np.int64(-s) if s < 0 else c >> np.int64(s)


def _mask_numpy(c):
    return c & np.int64((1 << _WORD) - 1)


def _group_sums(groups: np.ndarray, columns: list, n_groups: int) -> list:
    out = []
    for col in columns:
        acc = np.zeros(n_groups, dtype=np.int64)
        np.add.at(acc, groups, col)
        out.append(acc)
    return out


def _scaled_words_numpy(sums, limb):
    return _scaled_words([w.astype(np.float64) for w in words(sums, limb, _shift_numpy, _mask_numpy)])


#: rows whose limbs exist at once in :func:`limb_sums_numpy` (the limbs of a std take 14 int64 per row)
LIMB_CHUNK = 1 << 20


def limb_sums_numpy(groups: np.ndarray, x: np.ndarray, n_groups: int, e: int, kind: str) -> list:
    """Per group, the sums of the fixed-point limbs of known values ``x`` (no NaN) on grid ``e``:
    :func:`sum_limbs` (``kind`` 'sum') or :func:`std_limbs` ('std') summed in numpy, :data:`LIMB_CHUNK` rows at
    a time (int64 arrays; exact: the sums of limbs cannot overflow below :data:`MAX_GROUP_ROWS` rows)."""
    bits, limb, n = (SUM_BITS, SUM_LIMB, SUM_LIMBS) if kind == "sum" else (STD_BITS, STD_LIMB, STD_LIMBS)
    acc = None
    for start in range(0, max(len(x), 1), LIMB_CHUNK):
        d = _limbs_numpy(x[start:start + LIMB_CHUNK], e, bits, limb, n)
        cols = d if kind == "sum" else d + _squares(d)
        part = _group_sums(groups[start:start + LIMB_CHUNK], cols, n_groups)
        acc = part if acc is None else [a + p for a, p in zip(acc, part)]
    return acc


def sums_from_limb_sums_numpy(sums: list, counts: np.ndarray, e: int) -> np.ndarray:
    """Per group, the sum from its summed limbs (:func:`limb_sums_numpy` 'sum'): :func:`sum_words` then
    :func:`sum_from_words` in numpy; NaN where ``counts`` (known values per group) is 0 (a sum beyond the largest
    double is infinite, as in Spark, without a warning)."""
    with np.errstate(over="ignore"):
        out = sum_from_words(_scaled_words_numpy(sums, SUM_LIMB), e)
    out[counts == 0] = np.nan
    return out


def means_from_limb_sums_numpy(sums: list, counts: np.ndarray, e: int) -> np.ndarray:
    """Per group, :func:`mean_from_high` in numpy from its summed limbs (:func:`limb_sums_numpy` 'sum'); NaN where
    ``counts`` is 0."""
    h = sum_high(_scaled_words_numpy(sums, SUM_LIMB))
    n = np.maximum(counts, 1).astype(np.float64)
    with np.errstate(over="ignore"):
        total = _pow2(h, e - SUM_BITS)
        out = np.where(np.abs(total) > _LARGEST, _pow2(h / n, e - SUM_BITS), total / n)
    out[counts == 0] = np.nan
    return out


def stds_from_limb_sums_numpy(sums: list, counts: np.ndarray, e: int) -> np.ndarray:
    """Per group, :func:`std_steps`' sample standard deviation from its summed limbs (:func:`limb_sums_numpy`
    'std'); NaN below two values."""
    n = np.where(counts > 1, counts.astype(np.float64), np.nan)
    h1, l1 = _cascade(_scaled_words_numpy(sums[:STD_LIMBS], STD_LIMB))
    h2, l2 = _cascade(_scaled_words_numpy(sums[STD_LIMBS:], STD_LIMB))
    with np.errstate(invalid="ignore"):
        return _pow2(np.sqrt(np.maximum(_variance(h1, l1, h2, l2, n), 0.0)), e - STD_BITS)


def group_sums_numpy(groups: np.ndarray, x: np.ndarray, n_groups: int, e: int) -> np.ndarray:
    """What :func:`sum_limbs`, :func:`sum_words` and :func:`sum_from_words` give per group, in numpy (NaN where
    a group has no value).

    Parameters
    ----------
    groups : ndarray of int
        The group (0 .. n_groups - 1) of every value.
    x : ndarray of float
        The values; NaN is missing.
    n_groups : int
    e : int
        The grid exponent.
    """
    known = ~np.isnan(x)
    g = groups[known]
    return sums_from_limb_sums_numpy(limb_sums_numpy(g, x[known], n_groups, e, "sum"),
                                     np.bincount(g, minlength=n_groups), e)


def group_stds_numpy(groups: np.ndarray, x: np.ndarray, n_groups: int, e: int) -> np.ndarray:
    """What :func:`std_limbs` / :func:`std_steps` give per group, in numpy (NaN below two values)."""
    known = ~np.isnan(x)
    g = groups[known]
    return stds_from_limb_sums_numpy(limb_sums_numpy(g, x[known], n_groups, e, "std"),
                                     np.bincount(g, minlength=n_groups), e)
