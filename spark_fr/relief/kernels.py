"""Relief-family numba kernels: distances, nearest neighbours and the probabilistic update. No Spark.

Algorithm sketch
----------------
Features arrive scaled: numeric ones to [0, 1] by the training range, nominal ones as category indices,
NaN = missing. For one sampled instance r:

    d_i(r, j)  = |x_ri - x_ji| (numeric) or 1[x_ri != x_ji] (nominal);  missing values as Weka and CLUS
                 do: nominal 1 - 1/|values|; numeric, one value t known: max(t, 1 - t); both missing: 1
    d_X(r, j)  = mean_i d_i(r, j)                                                (neighbour search)
    n_1..n_k   = the k rows j != r with the smallest (d_X(r, j), row key)         (per class for ReliefF)
    delta_l    = exp(-(sigma * l)^2), l = 0..k-1, normalised to sum 1 per instance (sigma = 0: 1/k)

RReliefF form (regression, MTR, MLC, HMLC, semi-supervised, unsupervised), per neighbour l:

    omega_l = delta_l * influence(r) * influence(n_l)          (influences are 1 unless semi-supervised)
    d_C     = d_Y(r, n_l) if both are labelled, else d_X(r, n_l)   (unsupervised: always d_X)
    S += omega_l;  P_dC += omega_l d_C;  P_dA[i] += omega_l d_i;  P_dAdC[i] += omega_l d_i d_C
    w_i = P_dAdC[i] / P_dC - (P_dA[i] - P_dAdC[i]) / (S - P_dC)          (on the driver, after summing)

ReliefF form (classification, Kononenko): for every class c with neighbours,
    W[i] += sum_l delta_l d_i(r, n_cl) * (-1 if c == class(r) else P(c) / (1 - P(class(r))))
    w_i = W[i] / m.

Target distances d_Y (codes below, chosen per task in :mod:`spark_fr.tasks`): mean of per-target numeric
distances (regression, MTR), class mismatch, the MLC set distances (Hamming, Jaccard, F1, subset), and the
HMLC weighted Euclidean distance divided by its maximum over the data.

The update for a list of neighbours takes the neighbours' distance matrix (k x D) and target distances, so
broadcast mode (neighbours found here) and tall mode (candidates found per data partition, merged) run the
very same arithmetic and give identical weights.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# target distance codes
T_NUMERIC = 0       # mean over targets of the numeric per-target distance (regression, MTR)
T_CLASS = 1         # class mismatch
T_HAMMING = 2       # MLC: Hamming loss
T_JACCARD = 3       # MLC: 1 - |S1 & S2| / |S1 | S2|
T_F1 = 4            # MLC: 1 - 2 |S1 & S2| / (|S1| + |S2|)
T_SUBSET = 5        # MLC: 1 - P(S1 == S2)
T_HMLC = 6          # HMLC: sqrt(sum_j w_j (s1_j - s2_j)^2) / max
T_HMLC_SQUARED = 7  # HMLC as CLUS computes it: sum_j w_j (s1_j - s2_j)^2 / max
T_DESCRIPTIVE = 8   # unsupervised: d_Y = d_X


@njit(cache=True, inline="always")
def feature_distance(a, b, is_nominal, n_values):
    """d_i of two scaled values (see the module docstring for missing values)."""
    if a != a or b != b:
        if is_nominal:
            return 1.0 - 1.0 / n_values
        if a != a and b != b:
            return 1.0
        t = b if a != a else a
        return t if t > 1.0 - t else 1.0 - t
    if is_nominal:
        return 0.0 if a == b else 1.0
    return abs(a - b)


#: instances whose distances are computed in one pass over the data (each data row is read once per group)
INSTANCE_GROUP = 8


@njit(cache=True, fastmath={"reassoc", "nsz"})
def _l1_sums(X, R, simple, out):
    """out[g, j] = sum_i |R[g, i] - X[j, i]| for the rows g with ``simple[g]`` (NaN if X[j] has a NaN).

    The only kernel allowed to reassociate its sum (so it vectorises); every distance of every mode is
    computed by this same compiled loop, so every mode gets the same bits.
    """
    n, D = X.shape
    G = R.shape[0]
    for j in range(n):
        for g in range(G):
            if simple[g]:
                s = 0.0
                for i in range(D):
                    s += abs(R[g, i] - X[j, i])
                out[g, j] = s


@njit(cache=True)
def block_distances(X, R, nominal, n_values, out):
    """d_X from each row of R to every row of X (``out[g, j]``).

    Rows of R without missing values, when every feature is numeric, go through the vectorised
    :func:`_l1_sums`; a NaN in ``X[j]`` makes that sum NaN, and such pairs (and all pairs of other rows of
    R) are computed with the general per-feature distance of Weka/CLUS.
    """
    n, D = X.shape
    G = R.shape[0]
    simple = np.ones(G, np.bool_)
    for g in range(G):
        for i in range(D):
            if nominal[i] or R[g, i] != R[g, i]:
                simple[g] = False
                break
    _l1_sums(X, R, simple, out)
    for g in range(G):
        for j in range(n):
            if simple[g]:
                s = out[g, j]
                if s == s:
                    out[g, j] = s / D
                    continue
            s = 0.0
            for i in range(D):
                s += feature_distance(R[g, i], X[j, i], nominal[i], n_values[i])
            out[g, j] = s / D


@njit(cache=True)
def target_distance(kind, ya, yb, tw, tnorm):
    """d_Y of two target rows (one row of the task's target matrix each)."""
    T = ya.shape[0]
    if kind == T_NUMERIC:
        s = 0.0
        for j in range(T):
            s += feature_distance(ya[j], yb[j], False, 1.0)
        return s / T
    if kind == T_CLASS:
        return feature_distance(ya[0], yb[0], True, tnorm)
    if kind == T_HAMMING:
        s = 0.0
        for j in range(T):
            s += feature_distance(ya[j], yb[j], True, 2.0)
        return s / T
    if kind == T_JACCARD or kind == T_F1:
        cap = 0.0
        cup = 0.0
        tot = 0.0
        for j in range(T):
            a = ya[j] if ya[j] == ya[j] else 0.5
            b = yb[j] if yb[j] == yb[j] else 0.5
            cap += a * b
            cup += a + b - a * b
            tot += a + b
        if kind == T_JACCARD:
            return 1.0 - cap / cup if cup > 1e-9 else 0.0
        return 1.0 - 2.0 * cap / tot if tot > 1e-9 else 0.0
    if kind == T_SUBSET:
        p = 1.0
        for j in range(T):
            if ya[j] != ya[j] or yb[j] != yb[j]:
                p *= 0.5
            elif ya[j] != yb[j]:
                return 1.0
        return 1.0 - p
    if kind == T_HMLC or kind == T_HMLC_SQUARED:
        s = 0.0
        for j in range(T):
            d = ya[j] - yb[j]
            s += tw[j] * d * d
        if kind == T_HMLC:
            s = np.sqrt(s)
        return s / tnorm
    return 0.0


@njit(cache=True, inline="always")
def _before(d1, k1, d2, k2):
    """Order of neighbour candidates: by distance, then by row key."""
    return d1 < d2 or (d1 == d2 and k1 < k2)


@njit(cache=True)
def insert_candidate(best_d, best_k, best_j, count, cap, d, key, j):
    """Insert (d, key, j) into the sorted candidate list (length ``count`` <= ``cap``); returns the count."""
    if count == cap:
        if not _before(d, key, best_d[cap - 1], best_k[cap - 1]):
            return count
        pos = cap - 1
    else:
        pos = count
        count += 1
    while pos > 0 and _before(d, key, best_d[pos - 1], best_k[pos - 1]):
        best_d[pos] = best_d[pos - 1]
        best_k[pos] = best_k[pos - 1]
        best_j[pos] = best_j[pos - 1]
        pos -= 1
    best_d[pos] = d
    best_k[pos] = key
    best_j[pos] = j
    return count


@njit(cache=True)
def neighbour_weights(k, sigma):
    """delta_l = exp(-(sigma * l)^2), l = 0..k-1 (not normalised)."""
    w = np.empty(k)
    for l in range(k):
        w[l] = np.exp(-(sigma * l) * (sigma * l))
    return w


@njit(cache=True)
def update_rrelieff(dmat, dC, omega, nk, delta, accF, accFT, per_target_dY, accT_t, accFT_t):
    """Add one instance's neighbours (RReliefF form) to the accumulators.

    Parameters
    ----------
    dmat : float64[k, D]
        d_i(r, n_l) for the first ``nk`` rows.
    dC : float64[k]
        d_C(r, n_l).
    omega : float64[k]
        influence(r) * influence(n_l) (ones when not semi-supervised).
    nk : int
        Number of neighbours found (<= k).
    delta : float64[k]
        Neighbour weights by rank.
    accF, accFT : float64[D]
        P_dA and P_dAdC.
    per_target_dY : float64[k, T] or empty
        Per-target distances (for per-target rankings), T = 0 if unused.
    accT_t, accFT_t : float64[T], float64[T, D]
        Per-target P_dC and P_dAdC.

    Returns
    -------
    (dS, dP_dC): the instance's contributions to S and P_dC.
    """
    D = dmat.shape[1]
    T = accT_t.shape[0]
    sw = 0.0
    for l in range(nk):
        sw += delta[l]
    if sw <= 0.0:
        return 0.0, 0.0
    dS = 0.0
    dT = 0.0
    for l in range(nk):
        om = omega[l] * delta[l] / sw
        dS += om
        dT += om * dC[l]
        for i in range(D):
            di = dmat[l, i] * om
            accF[i] += di
            accFT[i] += di * dC[l]
        for t in range(T):
            accT_t[t] += om * per_target_dY[l, t]
            for i in range(D):
                accFT_t[t, i] += dmat[l, i] * om * per_target_dY[l, t]
    return dS, dT


@njit(cache=True)
def update_relieff(dmat, nk, cls, own_class, priors, delta, W):
    """Add one instance's neighbours of one class (ReliefF form, Kononenko) to W."""
    D = dmat.shape[1]
    sw = 0.0
    for l in range(nk):
        sw += delta[l]
    if sw <= 0.0:
        return
    if cls == own_class:
        factor = -1.0
    else:
        factor = priors[cls] / (1.0 - priors[own_class])
    for l in range(nk):
        f = factor * delta[l] / sw
        for i in range(D):
            W[i] += f * dmat[l, i]


@njit(cache=True)
def neighbour_rows(dist, keys, r, k, classes, n_classes):
    """The k nearest rows of r (all rows, or per class when n_classes > 0), in (distance, key) order.

    ``dist`` holds d_X from r to every row. Returns (idx (C, k), counts (C,)) with C = max(n_classes, 1);
    rows with a missing class are skipped in the per-class search.
    """
    n = dist.shape[0]
    C = n_classes if n_classes > 0 else 1
    best_d = np.empty((C, k))
    best_k = np.empty((C, k), np.uint64)
    best_j = np.empty((C, k), np.int64)
    counts = np.zeros(C, np.int64)
    for j in range(n):
        if j == r:
            continue
        c = 0
        if n_classes > 0:
            cv = classes[j]
            if cv != cv:
                continue
            c = int(cv)
        counts[c] = insert_candidate(best_d[c], best_k[c], best_j[c], counts[c], k, dist[j], keys[j], j)
    return best_j, counts


@njit(cache=True)
def fill_dmat(X, r_row, rows, nk, nominal, n_values, dmat):
    """dmat[l, i] = d_i(r, rows[l]) for l < nk."""
    D = X.shape[1]
    for l in range(nk):
        j = rows[l]
        for i in range(D):
            dmat[l, i] = feature_distance(r_row[i], X[j, i], nominal[i], n_values[i])


@njit(cache=True)
def relief_shard(X, keys, Yt, tkind, tw, tnorm, nominal, n_values, instances, k, sigma,
                 classes, n_classes, priors, labelled, influence, per_target_kinds):
    """Accumulators of one shard of sampled instances (broadcast mode).

    Parameters
    ----------
    X : float64[n, D]
        Scaled features.
    keys : uint64[n]
        Row keys (tie-breaking between equally distant neighbours).
    Yt : float64[n, T']
        Target matrix for d_Y.
    tkind, tw, tnorm
        Target distance code, per-column weights (HMLC) and normaliser (HMLC maximum; class count for
        T_CLASS).
    nominal, n_values : feature types and category counts.
    instances : int64[m_s]
        Rows sampled for this shard.
    k : int
    sigma : float
    classes : float64[n]
        Class index per row for ReliefF (n_classes > 0), else ignored.
    n_classes : int
        > 0: ReliefF (classification); 0: RReliefF form.
    priors : float64[C]
    labelled : bool[n]
        Rows whose targets are known (semi-supervised); all True otherwise.
    influence : float64[n]
        Instance influence (1 for labelled rows).
    per_target_kinds : int64[T]
        For per-target rankings: d_Y of target t is ``target_distance(per_target_kinds[t], Yt[:, t:t+1])``;
        empty for none.

    Returns
    -------
    tuple
        (W_relieff (D,), S, P_dC, P_dA (D,), P_dAdC (D,), P_dC_t (T,), P_dAdC_t (T, D), iterations)
    """
    n, D = X.shape
    T = per_target_kinds.shape[0]
    G = INSTANCE_GROUP
    dists = np.empty((G, n))
    R = np.empty((G, D))
    delta = neighbour_weights(k, sigma)
    dmat = np.empty((k, D))
    dC = np.empty(k)
    omega = np.empty(k)
    pt = np.empty((k, T))
    W = np.zeros(D)
    accF = np.zeros(D)
    accFT = np.zeros(D)
    accT_t = np.zeros(T)
    accFT_t = np.zeros((T, D))
    S = 0.0
    PdC = 0.0
    iters = 0.0
    m = instances.shape[0]
    for q0 in range(0, m, G):
        g_n = min(G, m - q0)
        for g in range(g_n):
            R[g] = X[instances[q0 + g]]
        block_distances(X, R[:g_n], nominal, n_values, dists[:g_n])
        for g in range(g_n):
            r = instances[q0 + g]
            r_row = X[r]
            dist = dists[g]
            if n_classes > 0:
                own = classes[r]
                if own != own:
                    continue
                idx, counts = neighbour_rows(dist, keys, r, k, classes, n_classes)
                for c in range(n_classes):
                    if counts[c] == 0:
                        continue
                    fill_dmat(X, r_row, idx[c], counts[c], nominal, n_values, dmat)
                    update_relieff(dmat, counts[c], c, int(own), priors, delta, W)
                iters += 1.0
                continue
            idx, counts = neighbour_rows(dist, keys, r, k, classes, 0)
            nk = counts[0]
            rows = idx[0]
            fill_dmat(X, r_row, rows, nk, nominal, n_values, dmat)
            for l in range(nk):
                j = rows[l]
                omega[l] = influence[r] * influence[j]
                if tkind == T_DESCRIPTIVE or not (labelled[r] and labelled[j]):
                    dC[l] = dist[j]
                else:
                    dC[l] = target_distance(tkind, Yt[r], Yt[j], tw, tnorm)
                for t in range(T):
                    pt[l, t] = target_distance(per_target_kinds[t], Yt[r, t:t + 1], Yt[j, t:t + 1], tw[t:t + 1],
                                               tnorm)
            dS, dT = update_rrelieff(dmat, dC, omega, nk, delta, accF, accFT, pt, accT_t, accFT_t)
            S += dS
            PdC += dT
            iters += 1.0
    return W, S, PdC, accF, accFT, accT_t, accFT_t, iters
