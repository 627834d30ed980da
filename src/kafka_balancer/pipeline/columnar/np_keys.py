"""Keys, joins and group sums over numpy arrays, with Spark SQL's null rules: the building blocks of the
columnar window step (:mod:`np_windows`, :mod:`np_cpu`).

Nulls: a float column holds NaN for null (the samples hold no NaN: ``docs/samples-format.md`` allows
null, never NaN); a key holds -1 for null. A null key groups with the other null keys (as Spark's
window ``partitionBy`` and ``groupBy`` do) and never matches in a join.

Example: two tables keyed by (topic code, partition)::

    >>> a = radix([(np.array([0, 0, 1]), 2), (np.array([0, 1, 0]), 2)], join=True)
    >>> b = radix([(np.array([1, 0]), 2), (np.array([0, 1]), 2)], join=True)
    >>> lookup(a, b).tolist()   # the row of b each row of a joins (-1: none)
    [-1, 1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def floats(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numeric Arrow column as float64, null as NaN."""
    return np.asarray(pc.fill_null(col.cast(pa.float64()), np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)


def ints(col: pa.ChunkedArray | pa.Array, null: int = -1) -> np.ndarray:
    """An integer Arrow column as int64, null as ``null``."""
    return np.asarray(pc.fill_null(col.cast(pa.int64()), null).to_numpy(zero_copy_only=False), dtype=np.int64)


def strings(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A string (or dictionary-of-string) column as one plain string array."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return arr.cast(pa.string()) if pa.types.is_dictionary(arr.type) else arr


def vocabulary(*cols: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The distinct non-null strings of ``cols``, sorted."""
    if not cols:
        return pa.array([], pa.string())
    values = pa.chunked_array([strings(c) for c in cols], pa.string()).combine_chunks()
    return pc.unique(pc.drop_null(values)).sort()


def codes(col: pa.ChunkedArray | pa.Array, vocab: pa.Array) -> np.ndarray:
    """Position of each string in ``vocab``; -1 for null or a string not in it."""
    return ints(pc.index_in(strings(col), value_set=vocab))


def shared_codes(*cols: pa.ChunkedArray | pa.Array) -> tuple[list[np.ndarray], int]:
    """Dense codes (0..k-1, -1 for null) of integer or string columns of several tables, with one shared
    vocabulary, and k."""
    if cols and all(pa.types.is_integer(c.type) for c in cols):
        nulls = [np.asarray(pc.is_null(c).to_numpy(zero_copy_only=False), dtype=bool) for c in cols]
        vals = [ints(c, 0) for c in cols]
        vocab_i = np.unique(np.concatenate([v[~m] for v, m in zip(vals, nulls, strict=True)]))
        out = [np.where(m, -1, np.searchsorted(vocab_i, v)) for v, m in zip(vals, nulls, strict=True)]
        return out, len(vocab_i)
    vocab = vocabulary(*cols)
    return [codes(c, vocab) for c in cols], len(vocab)


def radix(parts: Sequence[tuple[np.ndarray, int]], join: bool = False) -> np.ndarray:
    """One int64 per row from (codes, range) parts (codes in 0..range-1, or -1 for null), equal exactly when
    every part is. Null is a value of its own (rows with a null part group together, as in Spark's
    ``groupBy``); with ``join`` a row with any null part gets -1 instead, which :func:`lookup` never
    matches. Keys of different tables built with the same ranges compare equal."""
    n = len(parts[0][0])
    key = np.zeros(n, dtype=np.int64)
    null = np.zeros(n, dtype=bool)
    size = 1
    for codes_, k in parts:
        if size * (k + 1) >= 2**62:
            raise OverflowError("too many distinct keys for one int64")
        key = key * (k + 1) + (codes_ + 1)
        null |= codes_ < 0
        size *= k + 1
    if join:
        key[null] = -1
    return key


def lookup(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each ``left`` key, the row of ``right`` (keys unique) with that key; -1 when there is none or
    the key is null (-1)."""
    if len(right) == 0:
        return np.full(len(left), -1, dtype=np.int64)
    order = np.argsort(right, kind="stable")
    srt = right[order]
    pos = np.minimum(np.searchsorted(srt, left), len(srt) - 1)
    hit = (srt[pos] == left) & (left >= 0)
    return np.where(hit, order[pos], -1)


def take(values: np.ndarray, rows: np.ndarray, null: float = np.nan) -> np.ndarray:
    """``values[rows]`` with ``null`` where ``rows`` is -1."""
    if len(values) == 0:
        return np.full(len(rows), null, dtype=np.float64 if np.isnan(null) else values.dtype)
    out = values[np.maximum(rows, 0)]
    if rows.size and (rows < 0).any():
        out = out.astype(np.float64) if np.isnan(null) and out.dtype.kind != "f" else out.copy()
        out[rows < 0] = null
    return out


def previous(key: np.ndarray, window: np.ndarray, window_ms: int) -> np.ndarray:
    """For each row, the row of the same key in the window just before (-1 when that window is absent):
    Spark's ``lag`` over the key's rows in window order, kept only when adjacent. Keys with their windows
    are unique."""
    order = np.lexsort((window, key))
    k, w = key[order], window[order]
    adjacent = (k[1:] == k[:-1]) & (w[1:] == w[:-1] + window_ms)
    prev = np.full(len(key), -1, dtype=np.int64)
    prev[order[1:][adjacent]] = order[:-1][adjacent]
    return prev


def groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys sorted, group of each row)."""
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq, inv.reshape(-1)


def group_sum(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Spark's ``sum`` per group: nulls (NaN) skipped; null when a group has no value."""
    ok = ~np.isnan(values)
    total = np.bincount(group[ok], weights=values[ok], minlength=n)
    count = np.bincount(group[ok], minlength=n)
    return np.where(count > 0, total, np.nan)


def group_count(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Spark's ``count(col)`` per group: non-null values."""
    return np.bincount(group[~np.isnan(values)], minlength=n)


def group_max(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Spark's ``max`` per group (nulls skipped; null when none)."""
    out = np.full(n, -np.inf)
    ok = ~np.isnan(values)
    np.maximum.at(out, group[ok], values[ok])
    out[np.isneginf(out) & (np.bincount(group[ok], minlength=n) == 0)] = np.nan
    return out


def group_mean(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Spark's ``avg`` per group (nulls skipped; null when none)."""
    ok = ~np.isnan(values)
    total = np.bincount(group[ok], weights=values[ok], minlength=n)
    count = np.bincount(group[ok], minlength=n)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def greatest0(values: np.ndarray) -> np.ndarray:
    """Spark's ``greatest(x, 0)``: nulls are skipped, so a null gives 0."""
    return np.where(np.isnan(values), 0.0, np.maximum(values, 0.0))


def positive(values: np.ndarray) -> np.ndarray:
    """``when(x > 0, x)``: the value when positive, else null."""
    return np.where(values > 0, values, np.nan)
