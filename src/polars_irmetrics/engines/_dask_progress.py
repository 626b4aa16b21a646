"""Dask, ``progress=True``: the result persisted now, its tasks drawn on standard error.

With a ``distributed.Client`` connected (the scheduler Dask would compute with), the
frame is persisted on its cluster and the scheduler reports the tasks done (the
result's and all they depend on) to a :class:`~polars_irmetrics.ground.progress.Progress`
bar; without one, the local scheduler's callbacks do. A library error raised by a task
is raised by the call as the library's own exception.
"""

from __future__ import annotations

from typing import Any, TextIO

import dask.dataframe as dd
from dask.base import get_scheduler
from dask.callbacks import Callback

from polars_irmetrics.engines._partition import raise_carried
from polars_irmetrics.ground.progress import Progress

__all__ = ["persist"]

_LABEL = "dask tasks"


def persist(frame: dd.DataFrame, stream: TextIO | None = None) -> dd.DataFrame:
    """``frame`` persisted (on the active client's cluster, or by the local scheduler),
    drawing the tasks done on ``stream`` (standard error by default) until finished."""
    client = _client()
    with Progress(_LABEL, 0, stream=stream, enabled=True) as bar:
        try:
            if client is None:
                with _LocalBar(bar):
                    return frame.persist()
            return _on_cluster(client, frame, bar)
        except Exception as exc:  # a task's error: ours, or one that carries ours
            raise_carried(exc)


def _client() -> Any:
    """The ``distributed.Client`` Dask would compute with now, or ``None`` (no client
    connected, or ``dask.config``'s ``scheduler`` names a local one)."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - the dask extra brings distributed
        return None
    client = getattr(get_scheduler(), "__self__", None)
    return client if isinstance(client, Client) else None


def _on_cluster(client: Any, frame: dd.DataFrame, bar: Progress) -> dd.DataFrame:
    from distributed import futures_of, wait
    from distributed.diagnostics.progressbar import TextProgressBar

    class ClusterBar(TextProgressBar):
        """The scheduler's counts of the tasks done, drawn by the library's bar."""

        def _draw_bar(self, remaining: int, all: int, **kwargs: Any) -> None:
            bar.update(all - remaining, all)

        def _draw_stop(self, **kwargs: Any) -> None:
            pass

    persisted = client.persist(frame)
    futures = futures_of(persisted)
    ClusterBar(futures, scheduler=client.scheduler.address)
    wait(futures)
    for future in futures:
        if future.status == "error":
            future.result()  # raises the task's exception
    return persisted


class _LocalBar(Callback):
    """The local scheduler's tasks done, drawn by the library's bar."""

    def __init__(self, bar: Progress) -> None:
        super().__init__()
        self._bar = bar

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        done = len(state["finished"])
        left = sum(len(state[k]) for k in ("ready", "waiting", "running"))
        self._bar.update(done, done + left)
