"""The numpy key, join and group building blocks of ``pipeline.columnar.np_keys`` on hand-computed cases (no Spark).

Null rules pinned here are Spark SQL's: a null key part is a value of its own in a group (``groupBy`` and
window ``partitionBy`` put the null keys together) and never matches in a join; ``sum``/``max``/``avg``
skip nulls and give null for a group without a value; ``greatest(x, 0)`` skips a null x (so gives 0)."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from kafka_balancer.pipeline.columnar.np_keys import (
    floats,
    greatest0,
    group_count,
    group_max,
    group_mean,
    group_sum,
    groups,
    ints,
    lookup,
    positive,
    previous,
    radix,
    shared_codes,
    take,
)

W = 60_000
NAN = float("nan")


def _i(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _f(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def _same(got: np.ndarray, want: list[float]) -> bool:
    """Equal element by element, NaN == NaN."""
    return got.shape == (len(want),) and bool(np.array_equal(got, np.array(want, dtype=np.float64), equal_nan=True))


# --- radix ---------------------------------------------------------------------------------------


def test_radix_gives_one_key_per_distinct_tuple_with_null_as_a_value_of_its_own() -> None:
    # every (a, b) with a, b in {null, 0, 1}: 9 distinct tuples -> 9 distinct keys, none of them -1
    combos = list(itertools.product((-1, 0, 1), repeat=2))
    a, b = _i(*(x for x, _ in combos)), _i(*(y for _, y in combos))
    key = radix([(a, 2), (b, 2)])
    assert len(set(key.tolist())) == 9 and (key >= 0).all()
    # (null, 1) twice groups together, apart from (0, 1) and (1, null)
    k2 = radix([(_i(-1, -1, 0, 1), 2), (_i(1, 1, 1, -1), 2)])
    assert k2[0] == k2[1] and len({k2[1], k2[2], k2[3]}) == 3


def test_radix_join_gives_minus_one_for_any_null_part_and_keeps_the_other_keys() -> None:
    a, b = _i(0, -1, 1, 1, -1), _i(1, 0, -1, 1, -1)
    plain, joined = radix([(a, 2), (b, 2)]), radix([(a, 2), (b, 2)], join=True)
    assert joined.tolist()[1:3] == [-1, -1] and joined[4] == -1
    # rows without a null keep their (non-negative) key
    assert joined[0] == plain[0] >= 0 and joined[3] == plain[3] >= 0 and joined[0] != joined[3]


def test_keys_of_two_tables_built_with_the_same_ranges_compare_equal() -> None:
    # table a holds (topic, partition) = (0, 2), (1, 0); table b the same two tuples in the other order plus (1, 1)
    ta, pa_ = _i(0, 1), _i(2, 0)
    tb, pb = _i(1, 1, 0), _i(1, 0, 2)
    rt, rp = 2, 3  # the ranges over both tables (shared_codes gives them)
    ka, kb = radix([(ta, rt), (pa_, rp)]), radix([(tb, rt), (pb, rp)])
    assert ka[0] == kb[2] and ka[1] == kb[1] and kb[0] not in ka.tolist()


def test_radix_refuses_a_key_space_beyond_int64() -> None:
    big = 2**31
    with pytest.raises(OverflowError):
        radix([(_i(0), big), (_i(0), big)])  # (2^31 + 1)^2 > 2^62
    radix([(_i(0), 2**20), (_i(0), 2**20)])  # (2^20 + 1)^2 < 2^62: fine


# --- lookup and take -----------------------------------------------------------------------------


def test_lookup_gives_the_matching_row_or_minus_one_for_a_miss_or_a_null_key() -> None:
    right = _i(7, 3, 9, -1)  # row 3 is a null key: nothing may join it
    left = _i(5, 7, -1, 3, 7, 100, 0, 9)
    assert lookup(left, right).tolist() == [-1, 0, -1, 1, 0, -1, -1, 2]
    assert lookup(left, _i()).tolist() == [-1] * len(left)  # nothing on the right


def test_take_puts_the_null_value_where_the_row_is_minus_one() -> None:
    assert _same(take(_f(10.0, 20.0, 30.0), _i(2, -1, 0)), [30.0, NAN, 10.0])
    got = take(_i(10, 20, 30), _i(-1, 1))  # ints with a miss become floats with NaN
    assert got.dtype == np.float64 and _same(got, [NAN, 20.0])
    kept = take(_i(10, 20, 30), _i(1, -1), null=-1)
    assert kept.dtype == np.int64 and kept.tolist() == [20, -1]
    assert _same(take(_f(), _i(-1, -1)), [NAN, NAN])  # nothing to take from
    assert take(_i(4, 5), _i(1, 0)).tolist() == [5, 4]  # no miss: values unchanged, type kept


# --- previous ------------------------------------------------------------------------------------


def test_previous_is_the_same_key_in_the_adjacent_window_before_only() -> None:
    # rows unsorted, keys interleaved: (key, window in units of W)
    rows = [(1, 3), (2, 2), (1, 0), (3, 5), (2, 1), (1, 1), (2, 4)]
    key, win = _i(*(k for k, _ in rows)), _i(*(w * W for _, w in rows))
    want = [
        -1,  # (1, 3): window 2 of key 1 is missing (a gap); (2, 2) is another key
        4,  # (2, 2): (2, 1) is row 4
        -1,  # (1, 0): the first window of key 1
        -1,  # (3, 5): the only window of key 3 ((2, 4), the window before, is another key's)
        -1,  # (2, 1): the first window of key 2
        2,  # (1, 1): (1, 0) is row 2
        -1,  # (2, 4): window 3 of key 2 is missing
    ]
    assert previous(key, win, W).tolist() == want
    # with windows twice as long, (2, 2) and (2, 4) are adjacent, (2, 1) -> (2, 2) is not
    assert previous(key, win, 2 * W).tolist() == [5, -1, -1, -1, -1, -1, 1]


# --- group aggregates ----------------------------------------------------------------------------


GROUP = _i(0, 0, 0, 1, 1, 3, 3)  # group 1: every value null; group 2: no row at all


def test_group_sum_and_count_skip_nulls_and_an_all_null_group_sums_to_null() -> None:
    v = _f(1.0, NAN, 2.0, NAN, NAN, 4.0, -0.5)
    assert _same(group_sum(v, GROUP, 4), [3.0, NAN, NAN, 3.5])
    assert group_count(v, GROUP, 4).tolist() == [2, 0, 0, 2]


def test_group_max_and_mean_skip_nulls() -> None:
    v = _f(-5.0, NAN, -2.0, NAN, NAN, -1.0, -7.0)  # all negative: the max must not come from an initial value
    assert _same(group_max(v, GROUP, 4), [-2.0, NAN, NAN, -1.0])
    assert _same(group_mean(v, GROUP, 4), [-3.5, NAN, NAN, -4.0])  # (-5 - 2) / 2, (-1 - 7) / 2


def test_groups_numbers_the_distinct_keys_in_order() -> None:
    uniq, of = groups(_i(7, -1, 7, 3))
    assert uniq.tolist() == [-1, 3, 7] and of.tolist() == [2, 0, 2, 1]


def test_greatest0_skips_a_null_and_positive_keeps_only_values_above_zero() -> None:
    x = _f(-1.0, 0.0, 2.5, NAN)
    assert _same(greatest0(x), [0.0, 0.0, 2.5, 0.0])  # greatest(null, 0) = 0 in Spark
    assert _same(positive(x), [NAN, NAN, 2.5, NAN])  # when(x > 0, x): 0 and null give null


# --- Arrow columns to codes ----------------------------------------------------------------------


def test_floats_and_ints_turn_nulls_into_nan_and_the_null_code() -> None:
    assert _same(floats(pa.chunked_array([[1, None], [3]], pa.int64())), [1.0, NAN, 3.0])
    assert ints(pa.array([5, None, -2], pa.int32())).tolist() == [5, -1, -2]
    assert ints(pa.array([5, None], pa.int32()), null=0).tolist() == [5, 0]


def test_shared_codes_of_integer_columns() -> None:
    # vocabulary over both columns: 10, 20, 30 (nulls are not values)
    (a, b), k = shared_codes(pa.array([30, None, 10], pa.int32()), pa.chunked_array([[20], [30, None]], pa.int64()))
    assert k == 3 and a.tolist() == [2, -1, 0] and b.tolist() == [1, 2, -1]
    (c,), k0 = shared_codes(pa.array([None, None], pa.int32()))
    assert k0 == 0 and c.tolist() == [-1, -1]


def test_shared_codes_of_plain_and_dictionary_strings() -> None:
    plain = pa.array(["b", None, "a"])
    dic = pa.array(["c", "a", None, "c"]).dictionary_encode()  # its own dictionary order: c, a
    chunked = pa.chunked_array([pa.array(["d"]).dictionary_encode(), pa.array(["b"]).dictionary_encode()])
    (x, y, z), k = shared_codes(plain, dic, chunked)
    # one vocabulary, sorted: a=0, b=1, c=2, d=3
    assert k == 4 and x.tolist() == [1, -1, 0] and y.tolist() == [2, 0, -1, 2] and z.tolist() == [3, 1]
