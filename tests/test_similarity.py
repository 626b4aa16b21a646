"""``irm.cosine_similarity``: row-wise over list and array columns, in every context."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import ColumnTypeError, InvalidValueError

FRAME = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "q": [[1.0, 0.0], [1.0, 0.0], [3.0, 4.0], [3.0, 4.0]],
        "d": [[2.0, 0.0], [1.0, 1.0], [-3.0, -4.0], [4.0, -3.0]],
    }
)
#: 1.0 (same direction), 1/sqrt(2), -1.0 (opposite), 0.0 (orthogonal)
EXPECTED = [1.0, 1 / math.sqrt(2), -1.0, 0.0]


def _collect(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def test_row_wise_with_columns(frame_kind: str) -> None:
    frame = FRAME.lazy() if frame_kind == "LazyFrame" else FRAME
    out = _collect(frame.with_columns(irm.cosine_similarity("q", "d")))
    assert out.columns == ["query_id", "q", "d", "cosine_similarity"]
    assert out.schema["cosine_similarity"] == pl.Float64
    assert out["cosine_similarity"].to_list() == pytest.approx(EXPECTED, abs=1e-15)


def test_group_by_rows_and_aggregates(frame_kind: str) -> None:
    frame = FRAME.lazy() if frame_kind == "LazyFrame" else FRAME
    out = _collect(
        frame.group_by("query_id")
        .agg(
            irm.cosine_similarity("q", "d").alias("all"),
            irm.cosine_similarity("q", "d").mean().alias("mean"),
            irm.cosine_similarity("q", "d").max().alias("best"),
        )
        .sort("query_id")
    )
    assert out["all"].to_list() == [
        pytest.approx(EXPECTED[:2], abs=1e-15),
        pytest.approx(EXPECTED[2:], abs=1e-15),
    ]
    assert out["mean"].to_list() == pytest.approx(
        [(1.0 + 1 / math.sqrt(2)) / 2, (-1.0 + 0.0) / 2], abs=1e-15
    )
    assert out["best"].to_list() == pytest.approx([1.0, 0.0], abs=1e-15)


def test_streaming_engine() -> None:
    out = FRAME.lazy().select(irm.cosine_similarity("q", "d")).collect(engine="streaming")
    assert out["cosine_similarity"].to_list() == pytest.approx(EXPECTED, abs=1e-15)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (pl.Array(pl.Float32, 2), pl.Array(pl.Float32, 2)),
        (pl.Array(pl.Float64, 2), pl.List(pl.Float64)),
        (pl.List(pl.Float32), pl.Array(pl.Int64, 2)),
        (pl.List(pl.Int32), pl.List(pl.Int32)),
    ],
)
def test_list_and_array_dtypes(left: pl.DataType, right: pl.DataType) -> None:
    frame = pl.DataFrame(
        {"a": [[1, 0], [1, 1], [3, 4]], "b": [[2, 0], [0, 1], [-3, -4]]},
        schema={"a": left, "b": right},
    )
    out = frame.select(irm.cosine_similarity("a", "b"))["cosine_similarity"].to_list()
    assert out == pytest.approx([1.0, 1 / math.sqrt(2), -1.0], abs=1e-7)


def test_expressions_as_inputs() -> None:
    out = FRAME.select(
        irm.cosine_similarity(pl.col("q"), pl.col("d") * 3).alias("scaled"),
        irm.cosine_similarity("q", "q").alias("self"),
    )
    assert out["scaled"].to_list() == pytest.approx(EXPECTED, abs=1e-15)
    assert out["self"].to_list() == [1.0, 1.0, 1.0, 1.0]


def test_zero_empty_and_null_vectors() -> None:
    frame = pl.DataFrame(
        {
            "a": [[0.0, 0.0], [], None, [1.0, None], [math.nan, 1.0], [0.0, 0.0]],
            "b": [[1.0, 2.0], [], [1.0, 2.0], [1.0, 2.0], [1.0, 1.0], [0.0, 0.0]],
        },
        schema={"a": pl.List(pl.Float64), "b": pl.List(pl.Float64)},
    )
    out = frame.select(irm.cosine_similarity("a", "b"))["cosine_similarity"].to_list()
    assert out[0] == 0.0  # a zero vector: 0.0, as scikit-learn
    assert out[1] == 0.0  # an empty vector is a zero vector
    assert out[2] is None  # a null vector
    assert out[3] is None  # a null entry
    assert math.isnan(out[4])  # NaN propagates
    assert out[5] == 0.0


@pytest.mark.parametrize("scale", [1e155, 1e300, 1e-160, 1e-200, 3e-310])
def test_vectors_far_from_one_in_magnitude(scale: float) -> None:
    # the squares overflowed (1e155: NaN) or underflowed (1e-200: read as a zero vector,
    # 0.0; 1e-160: 0.70719776); each vector is now scaled by a power of two first
    frame = pl.DataFrame({"a": [[scale, scale]], "b": [[scale, 0.0]]})
    got = frame.select(irm.cosine_similarity("a", "b")).item()
    assert got == pytest.approx(math.sqrt(0.5), rel=1e-15)


def test_a_power_of_two_scale_keeps_every_bit() -> None:
    # the scaling is exact: ordinary vectors give the bits of the plain formula
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 8)) * rng.uniform(0.01, 100, (300, 1))
    b = rng.standard_normal((300, 8))
    got = pl.DataFrame({"a": a.tolist(), "b": b.tolist()}).select(irm.cosine_similarity("a", "b"))
    dot = np.einsum("ij,ij->i", a, b)
    plain = np.clip(dot / (np.sqrt((a * a).sum(1)) * np.sqrt((b * b).sum(1))), -1, 1)
    assert np.abs(got.to_series().to_numpy() - plain).max() <= 4e-16


def test_result_is_clipped_to_one() -> None:
    vector = [0.1, 0.2, 0.3, 1e-3, 7.7]
    frame = pl.DataFrame({"a": [vector], "b": [[x * 3 for x in vector]]})
    value = frame.select(irm.cosine_similarity("a", "b")).item()
    assert -1.0 <= value <= 1.0
    assert value == pytest.approx(1.0, abs=1e-15)


def test_length_mismatch_names_columns_and_lengths(frame_kind: str) -> None:
    frame = pl.DataFrame(
        {"query_emb": [[1.0, 0.0], [1.0, 2.0, 3.0]], "doc_emb": [[1.0, 0.0], [1.0, 2.0]]}
    )
    message = (
        "cosine_similarity: columns 'query_emb' and 'doc_emb' hold vectors of different "
        "lengths in the same row (3 and 2); embeddings must have equal lengths"
    )
    lazy = frame.lazy() if frame_kind == "LazyFrame" else frame
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _collect(lazy.select(irm.cosine_similarity("query_emb", "doc_emb")))
    with pytest.raises(ValueError, match="different lengths"):
        _collect(lazy.group_by(pl.lit(1)).agg(irm.cosine_similarity("query_emb", "doc_emb")))


def test_array_width_mismatch() -> None:
    frame = pl.DataFrame(
        {"a": [[1.0, 0.0, 0.0]], "b": [[1.0, 0.0]]},
        schema={"a": pl.Array(pl.Float32, 3), "b": pl.Array(pl.Float32, 2)},
    )
    with pytest.raises(InvalidValueError, match=re.escape("(3 and 2)")):
        frame.select(irm.cosine_similarity("a", "b"))


@pytest.mark.parametrize(
    ("values", "dtype"),
    [(["x", "y"], "String"), ([1.0, 2.0], "Float64"), ([["x"], ["y"]], "List(String)")],
)
def test_not_embeddings(values: list[object], dtype: str) -> None:
    frame = pl.DataFrame({"a": values, "b": [[1.0], [2.0]]})
    with pytest.raises(ColumnTypeError, match=re.escape(f"column 'a' has dtype {dtype}")):
        frame.select(irm.cosine_similarity("a", "b"))


def test_not_embeddings_is_a_type_error() -> None:
    frame = pl.DataFrame({"a": ["x"], "b": [[1.0]]})
    with pytest.raises(TypeError, match="expected embeddings, a list or array of numbers"):
        frame.select(irm.cosine_similarity("b", "a"))


vectors = st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
    )
)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(pairs=st.lists(vectors, min_size=1, max_size=10))
def test_matches_numpy(pairs: list[tuple[list[float], list[float]]]) -> None:
    frame = pl.DataFrame(
        {"a": [a for a, _ in pairs], "b": [b for _, b in pairs]},
        schema={"a": pl.List(pl.Float64), "b": pl.List(pl.Float64)},
    )
    got = frame.select(irm.cosine_similarity("a", "b"))["cosine_similarity"].to_list()
    for (a, b), value in zip(pairs, got, strict=True):
        # each vector over its largest magnitude first (the cosine is the same): numpy's
        # norm of [2.4e-298] squares it to 0 and reads a zero vector
        va, vb = (v / (np.abs(v).max() or 1.0) for v in (np.array(a), np.array(b)))
        norms = float(np.linalg.norm(va) * np.linalg.norm(vb))
        want = 0.0 if norms == 0.0 else float(np.clip(va @ vb / norms, -1.0, 1.0))
        assert value == pytest.approx(want, abs=1e-9)
