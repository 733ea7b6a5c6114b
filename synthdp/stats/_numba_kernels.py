"""The compiled loops of :mod:`synthdp.stats.compiled` (numba). Imported only through it, on use.

Each function releases Python's global lock (``nogil``), so the reader's threads sum two
chunks on two cores at once, and is cached on disk after its first compilation (``cache``; where
numba has no folder to write its cache to, compiled in each process instead: :func:`_njit`).
``fastmath={"reassoc"}`` lets the compiler reorder a sum over rows into vector lanes: the sums
differ from numpy's in their last digits (the order of additions), never in what is summed.
"""

from __future__ import annotations

import numba
import numpy as np


def _njit(**options):
    """``numba.njit(nogil=True, cache=True, **options)``; without the cache where numba finds no folder it
    can write one to (none beside this file, in NUMBA_CACHE_DIR or in the user's cache folder: a read-only
    install run by a user without a writable home), where it raises on decorating: the kernels are then
    compiled in each process that uses them (about 3 s), not a traceback."""

    def decorate(function):
        try:
            return numba.njit(nogil=True, cache=True, **options)(function)
        except RuntimeError as error:
            if "cannot cache" not in str(error):
                raise
            return numba.njit(nogil=True, **options)(function)

    return decorate


@_njit(fastmath={"reassoc"})
def _chebyshev_rows(table, base, width, m):  # pragma: no cover - compiled
    """Rows ``base + 2 .. base + width - 1`` of the table, T_k = 2 x T_{k-1} - T_{k-2}, from its rows
    ``base`` (T_0 = 1) and ``base + 1`` (T_1 = x), for the block's first ``m`` rows."""
    for k in range(2, width):
        for i in range(m):
            table[base + k, i] = 2.0 * table[base + 1, i] * table[base + k - 1, i] - table[base + k - 2, i]


@_njit(fastmath={"reassoc"})
def _prefix_sums(table, m, prefix_factors, prefix_lengths, group_start, group_last, product,
                 sums):  # pragma: no cover - compiled
    """Add one block's sums to ``sums``: per prefix the product of its factors (rows of ``table``),
    then the sums of that product times each of its functions' last factors, four functions at a
    time (the product read once for four sums)."""
    for p in range(prefix_factors.shape[0]):
        first = prefix_factors[p, 0]
        for i in range(m):
            product[i] = table[first, i]
        for f in range(1, prefix_lengths[p]):
            factor = prefix_factors[p, f]
            for i in range(m):
                product[i] *= table[factor, i]
        r, end = group_start[p], group_start[p + 1]
        while r + 4 <= end:
            l0, l1, l2, l3 = group_last[r], group_last[r + 1], group_last[r + 2], group_last[r + 3]
            s0 = s1 = s2 = s3 = 0.0
            for i in range(m):
                v = product[i]
                s0 += v * table[l0, i]
                s1 += v * table[l1, i]
                s2 += v * table[l2, i]
                s3 += v * table[l3, i]
            sums[r] += s0
            sums[r + 1] += s1
            sums[r + 2] += s2
            sums[r + 3] += s3
            r += 4
        while r < end:
            last = group_last[r]
            total = 0.0
            for i in range(m):
                total += product[i] * table[last, i]
            sums[r] += total
            r += 1


@_njit(fastmath={"reassoc"})
def moment_sums(points, used, width, prefix_factors, prefix_lengths, group_start, group_last,
                block):  # pragma: no cover - compiled; tests call it through synthdp.stats.compiled
    """sum over rows of phi_r(x) for every r, the functions grouped by prefix: those of prefix p
    are ``group_start[p]`` to ``group_start[p + 1]``, each its prefix times ``group_last[r]``.

    Per block of ``block`` rows: the table T_k(x_j), k < ``width``, of the ``used`` columns
    (one row of the table per flat factor c * width + k), then :func:`_prefix_sums`.
    """
    n = points.shape[0]
    table = np.empty((used.shape[0] * width, block))
    product = np.empty(block)
    sums = np.zeros(group_last.shape[0])
    for start in range(0, n, block):
        m = min(block, n - start)
        for c in range(used.shape[0]):
            column, base = used[c], c * width
            for i in range(m):
                table[base, i] = 1.0
                table[base + 1, i] = points[start + i, column]
            _chebyshev_rows(table, base, width, m)
        _prefix_sums(table, m, prefix_factors, prefix_lengths, group_start, group_last, product, sums)
    return sums


@_njit()
def _cells(unit, first, m, boundaries, slopes, intercepts, tops, binned, cells, out_first, keep, counts,
           count):  # pragma: no cover - compiled
    """The cells of ``unit[j, first : first + m]`` for every column j: written to ``cells[j, out_first + i]``
    with ``keep``, counted in ``counts[j, cell]`` with ``count`` (:func:`column_cells`). One call per block
    of values, not per value: a call per value with these arrays costs ten times the search."""
    for j in range(unit.shape[0]):
        top = tops[j]
        for i in range(m):
            x = unit[j, first + i]
            if x != x:  # NaN: a binned column's last bin, a value column's last value
                c = top - 1 if binned[j] else top
            else:
                guess = min(max(x * slopes[j] + intercepts[j], 0.0), float(top))
                c = int(guess)
                while True:
                    if boundaries[j, c] > x:
                        c -= 1
                    elif boundaries[j, c + 1] <= x:
                        c += 1
                    else:
                        break
                if binned[j] and x == -1.0:
                    c = 0
            if keep:
                cells[j, out_first + i] = c
            if count:
                counts[j, c] += 1.0


@_njit()
def column_cells(columns, boundaries, slopes, intercepts, tops, binned, out):  # pragma: no cover - compiled
    """The cell of every value of ``columns`` (d, rows) into ``out`` (d, rows): the number of
    column j's sorted ``boundaries[j, 1 : tops[j] + 1]`` at or below the value (the row's padding,
    NaN, compares false), from an affine guess moved until it settles; the atom -1 of a
    ``binned`` column in cell 0; a NaN in the cell the binary search gives it (:class:`CellSearch`)."""
    _cells(columns, 0, columns.shape[1], boundaries, slopes, intercepts, tops, binned, out, 0, True,
           np.zeros((0, 0)), False)


@_njit(fastmath={"reassoc"})
def score_products(cells, table, clip_norm_sq, signs, block, products, column_sums):  # pragma: no cover - compiled
    """Add the sums over rows of s_a s_b (every a, b: ``products`` (D, D), D = d rounded up to a
    multiple of 4; a <= b is read) and of s_a (``column_sums`` (d,)) of the scores
    ``table[a, cells[a, i]]`` (cells (d, rows)), each row's vector shrunk onto
    ||s||^2 <= ``clip_norm_sq`` unless they are ``signs`` (as :meth:`synthdp.stats.scores.ScoreMap.clipped_scores`
    shrinks them; the norm's additions, like the products', may be reordered into vector lanes).

    Block by block of ``block`` rows: the block's scores gathered and shrunk into a (D, block)
    buffer held in cache, then their products four columns by four (a tile of 16 sums, each
    column's scores read once for four products), never writing the chunk's (d, rows) scores out.
    The padding columns are 0, so their products are too."""
    d, rows = cells.shape
    width = products.shape[0]
    scores = np.zeros((width, block))
    for start in range(0, rows, block):
        m = min(block, rows - start)
        for a in range(d):
            for i in range(m):
                scores[a, i] = table[a, cells[a, start + i]]
        if not signs:
            for i in range(m):
                norm_sq = 0.0
                for a in range(d):
                    norm_sq += scores[a, i] * scores[a, i]
                shrink = np.sqrt(min(1.0, clip_norm_sq / max(norm_sq, 1e-300)))
                for a in range(d):
                    scores[a, i] *= shrink
        for a in range(d):
            total = 0.0
            for i in range(m):
                total += scores[a, i]
            column_sums[a] += total
        for a in range(0, width, 4):
            for b in range(a, width, 4):
                s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = 0.0
                s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = 0.0
                for i in range(m):
                    x0, x1, x2, x3 = scores[a, i], scores[a + 1, i], scores[a + 2, i], scores[a + 3, i]
                    y0, y1, y2, y3 = scores[b, i], scores[b + 1, i], scores[b + 2, i], scores[b + 3, i]
                    s00 += x0 * y0
                    s01 += x0 * y1
                    s02 += x0 * y2
                    s03 += x0 * y3
                    s10 += x1 * y0
                    s11 += x1 * y1
                    s12 += x1 * y2
                    s13 += x1 * y3
                    s20 += x2 * y0
                    s21 += x2 * y1
                    s22 += x2 * y2
                    s23 += x2 * y3
                    s30 += x3 * y0
                    s31 += x3 * y1
                    s32 += x3 * y2
                    s33 += x3 * y3
                products[a, b] += s00
                products[a, b + 1] += s01
                products[a, b + 2] += s02
                products[a, b + 3] += s03
                products[a + 1, b] += s10
                products[a + 1, b + 1] += s11
                products[a + 1, b + 2] += s12
                products[a + 1, b + 3] += s13
                products[a + 2, b] += s20
                products[a + 2, b + 1] += s21
                products[a + 2, b + 2] += s22
                products[a + 2, b + 3] += s23
                products[a + 3, b] += s30
                products[a + 3, b + 1] += s31
                products[a + 3, b + 2] += s32
                products[a + 3, b + 3] += s33


@_njit()
def cell_counts(cells, counts):  # pragma: no cover - compiled
    """Add each column's rows per cell of ``cells`` (d, rows) to ``counts`` (d, M)."""
    d, rows = cells.shape
    for j in range(d):
        for i in range(rows):
            counts[j, cells[j, i]] += 1.0


@_njit()
def _clip_column(x, out, low, high, span, clipped):  # pragma: no cover - compiled
    """:func:`clip_to_unit`'s operations on one column's values ``x`` into ``out`` (which may be ``x``),
    ``clipped[i]`` set where the clip changed value i (a NaN counts)."""
    for i in range(x.shape[0]):
        value = x[i]
        unit = value
        if unit < low:
            unit = low
        if unit > high:
            unit = high
        if unit != value:
            clipped[i] = True
        unit = ((unit - low) / span) * 2.0 - 1.0  # divided first: 2 (x - low) overflows near the largest floats
        if unit < -1.0:
            unit = -1.0
        if unit > 1.0:
            unit = 1.0
        out[i] = unit


@_njit()
def clip_to_unit(values, lower, upper, width, out):  # pragma: no cover - compiled
    """:func:`synthdp.stats.row_sums.clip_to_unit`'s operations, in its order, value by value into
    ``out`` (which may be ``values``): clip into [lower, upper], then 2 (x - lower) / width - 1
    clipped into [-1, 1]. Returns the rows with a value changed by the clip (a NaN counts)."""
    rows, d = values.shape
    clipped = np.zeros(rows, dtype=np.bool_)
    for j in range(d):
        _clip_column(values[:, j], out[:, j], lower[j], upper[j], width[j], clipped)
    return int(clipped.sum())


@_njit()
def unit_sums(values, lower, upper, width, used, degree_width, prefix_factors, prefix_lengths, group_start, group_last,
              moments, boundaries, slopes, intercepts, tops, binned, cells, counts, keep,
              block):  # pragma: no cover - compiled
    """One pass over a chunk's ``values`` (rows, d), block by block of ``block`` rows held in cache:
    each block clipped into the domain and mapped onto [-1, 1] (:func:`_clip_column`, the points of
    :func:`clip_to_unit` to the bit), then, where ``moments`` holds the basis' R functions, their
    sums (:func:`moment_sums`' tables and :func:`_prefix_sums`, in its blocks and order), and, where
    ``counts`` (d, M) has rows, each value's cell (:func:`_cells`) counted there and, with ``keep``,
    written to ``cells`` (d, rows). Returns the rows with a value changed by the clip. The chunk's
    points are never written out: the pass reads its values once instead of its points three times.
    """
    rows, d = values.shape
    unit = np.empty((d, block))
    clipped = np.zeros(block, dtype=np.bool_)
    table = np.empty((used.shape[0] * degree_width, block))
    product = np.empty(block)
    with_moments, with_cells = moments.shape[0] > 0, counts.shape[0] > 0
    rows_clipped = 0
    for start in range(0, rows, block):
        m = min(block, rows - start)
        clipped[:m] = False
        for j in range(d):
            _clip_column(values[start : start + m, j], unit[j, :m], lower[j], upper[j], width[j], clipped)
        for i in range(m):
            if clipped[i]:
                rows_clipped += 1
        if with_cells:
            _cells(unit, 0, m, boundaries, slopes, intercepts, tops, binned, cells, start, keep, counts, True)
        if with_moments:
            for c in range(used.shape[0]):
                column, base = used[c], c * degree_width
                for i in range(m):
                    table[base, i] = 1.0
                    table[base + 1, i] = unit[column, i]
                _chebyshev_rows(table, base, degree_width, m)
            _prefix_sums(table, m, prefix_factors, prefix_lengths, group_start, group_last, product, moments)
    return rows_clipped
