"""Shared fixtures: every behaviour is checked on a DataFrame and on a LazyFrame."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.io import sources

Evaluate = Callable[..., pl.DataFrame]


@pytest.fixture(params=["DataFrame", "LazyFrame"])
def frame_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def evaluate(frame_kind: str) -> Evaluate:
    """``irm.evaluate`` on eager or lazy inputs; checks the result's kind, returns a DataFrame."""

    def run(run: pl.DataFrame, metrics: Any, **kwargs: Any) -> pl.DataFrame:
        if frame_kind == "LazyFrame":
            qrels = kwargs.get("qrels")
            if isinstance(qrels, pl.DataFrame):
                kwargs["qrels"] = qrels.lazy()
            out = irm.evaluate(run.lazy(), metrics, **kwargs)
            assert isinstance(out, pl.LazyFrame)
            return out.collect()
        result = irm.evaluate(run, metrics, **kwargs)
        assert isinstance(result, pl.DataFrame)
        return result

    return run


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], None]]:
    """Give the process these bytes as standard input (read once, then cached)."""

    def feed(data: bytes) -> None:
        sources.stream_bytes.cache_clear()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    yield feed
    sources.stream_bytes.cache_clear()
