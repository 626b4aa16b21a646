"""A progress bar for long evaluations, on a terminal only; silent in pipelines.

Out of core (one step per bucket), on Spark (the tasks of the running stages) and on
Dask (the partitions done), the work is counted in steps. :class:`Progress` draws one
line on standard error, redrawn in place, and nothing at all when standard error is
not a terminal (a pipeline, a log file, a notebook's captured stream) or when
``enabled=False``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

__all__ = ["Progress", "track"]

T = TypeVar("T")
_WIDTH = 24


class Progress:
    """``label [#####     ] done/total  12.3 s`` on ``stream``, when it is a terminal.

    ``enabled=None`` (default) draws only on a terminal; ``True`` draws on any stream
    (for a notebook or a test), ``False`` never.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress("buckets", 4, stream=out, enabled=True) as bar:
    ...     bar.update(1)
    ...     bar.update(4)
    >>> print(out.getvalue().replace("\\r", "\\n").strip().splitlines()[-1][:38])
    buckets [########################] 4/4
    >>> with Progress("buckets", 4, stream=io.StringIO()) as bar:  # not a terminal
    ...     bar.shown
    False
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
    ) -> None:
        self._label = label
        self._total = total
        self._stream = sys.stderr if stream is None else stream
        self.shown = self._stream.isatty() if enabled is None else enabled
        self._start = time.perf_counter()
        self._lock = threading.Lock()

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        return self

    def update(self, done: int, total: int | None = None, label: str | None = None) -> None:
        """Draw ``done`` of ``total`` steps (the total and the label may change)."""
        if not self.shown:
            return
        with self._lock:
            self._total = self._total if total is None else total
            self._label = self._label if label is None else label
            full = _WIDTH if self._total <= 0 else _WIDTH * min(done, self._total) // self._total
            bar = "#" * full + " " * (_WIDTH - full)
            seconds = time.perf_counter() - self._start
            self._stream.write(f"\r{self._label} [{bar}] {done}/{self._total}  {seconds:.1f} s   ")
            self._stream.flush()

    def __exit__(self, *exc: object) -> None:
        if self.shown:
            self._stream.write("\n")
            self._stream.flush()


def track(items: Iterable[T], label: str, total: int, enabled: bool | None = None) -> Iterator[T]:
    """``items``, drawing a bar of the steps done as they are consumed.

    Examples
    --------
    >>> [x * 2 for x in track(range(3), "buckets", 3)]
    [0, 2, 4]
    """
    with Progress(label, total, enabled=enabled) as bar:
        bar.update(0)
        for done, item in enumerate(items, start=1):
            yield item
            bar.update(done)


def poll(
    bar: Progress, read: Callable[[], tuple[int, int, str] | None], every: float = 0.5
) -> Callable[[], None]:
    """Redraw ``bar`` from ``read()`` (done, total, label) every ``every`` seconds in a
    thread; returns the function that stops it. Nothing starts when the bar is hidden."""
    if not bar.shown:
        return lambda: None
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            state = read()
            if state is not None:
                bar.update(state[0], state[1], state[2])

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join()

    return stop
