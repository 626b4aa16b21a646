"""A progress bar for long evaluations: in a terminal and a notebook, silent in pipelines.

Out of core (one step per bucket, fusion grids included), on Spark (the tasks of the
running stages), on Dask (the partitions done) and in ``compare``'s resampling tests
(one step per chunk of resamples, when there is more than one), the work is counted
in steps. :class:`Progress` draws one line on standard error, redrawn in place:

* where: by default (``progress=None``) when standard error is a terminal **or** the
  code runs in a Jupyter kernel (IPython with a kernel: JupyterLab, Notebook, VS Code,
  Colab), whose output area redraws the line in place; nothing at all in a pipeline or
  a log file (not a terminal, not a kernel). ``progress=True`` draws on any stream,
  ``progress=False`` never. Every long evaluation takes ``progress=``
  (:func:`~polars_irmetrics.evaluate` and the doors built on it carry it in their
  one options object, :class:`~polars_irmetrics.ground.options.EvalOptions`; the
  fusion functions, ``evaluate_online`` and the Spark and Dask engines take it too).
  Where it is left at ``None``, :func:`set_progress` (``False``: never, ``True``:
  always, ``None``: the default) or the environment variable ``IRM_PROGRESS=0`` /
  ``1`` decide for the whole process (a batch job that logs standard error).
* how: tqdm's text bar (rate, elapsed and remaining time), not its ipywidgets one: it
  works in every notebook front end without ipywidgets.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO, TypeVar

from tqdm.std import tqdm as _tqdm

from polars_irmetrics.errors import InvalidValueError

__all__ = ["Progress", "check_progress", "in_notebook", "set_progress", "track"]

_DEFAULT: list[bool | None] = [None]


def set_progress(enabled: bool | None) -> None:
    """Draw every bar (``True``), none (``False``), or decide by the stream (``None``).

    It applies where ``progress=`` is not given (or is ``None``); it overrides the
    environment variable ``IRM_PROGRESS`` (``0``: never, ``1``: always).

    Parameters
    ----------
    enabled
        ``True``: every bar, on any stream; ``False``: none (a batch job that logs
        standard error); ``None``: in a terminal or a notebook only (the default).

    Raises
    ------
    InvalidValueError
        ``enabled`` is not a bool or None.

    Examples
    --------
    >>> import io
    >>> from polars_irmetrics.ground.progress import Progress, set_progress
    >>> set_progress(True)
    >>> Progress("buckets", 3, stream=io.StringIO()).shown
    True
    >>> set_progress(None)
    >>> Progress("buckets", 3, stream=io.StringIO()).shown
    False
    """
    if enabled is not None and not isinstance(enabled, bool):
        raise InvalidValueError(f"set_progress({enabled!r}): pass True, False or None")
    _DEFAULT[0] = enabled


def check_progress(progress: object) -> None:
    """Refuse a ``progress=`` that is not ``True``, ``False`` or ``None``.

    Examples
    --------
    >>> from polars_irmetrics.ground.progress import check_progress
    >>> check_progress(None)
    >>> check_progress(1)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: progress must be True, False or None, got ...
    """
    if progress is not None and not isinstance(progress, bool):
        raise InvalidValueError(
            f"progress must be True, False or None, got {progress!r}: True draws a bar on "
            "any stream, False none, None (default) in a terminal or a notebook only"
        )


def _default(stream: TextIO) -> bool:
    if _DEFAULT[0] is not None:
        return _DEFAULT[0]
    env = os.environ.get("IRM_PROGRESS", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    return _isatty(stream) or in_notebook()


T = TypeVar("T")


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython shell with a kernel).

    Examples
    --------
    >>> from polars_irmetrics.ground.progress import in_notebook
    >>> in_notebook()  # a doctest runs in no kernel
    False
    """
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return getattr(shell, "kernel", None) is not None


class Progress:
    """A bar of ``done/total`` steps on ``stream`` (standard error).

    ``enabled=None`` (default) draws on a terminal or in a notebook (a Jupyter kernel),
    never elsewhere; ``True`` draws on any stream, ``False`` never (tqdm's text bar).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress("buckets", 4, stream=out, enabled=True) as bar:
    ...     bar.update(1)
    ...     bar.update(4)
    >>> "buckets" in out.getvalue() and "4/4" in out.getvalue()
    True
    >>> with Progress("buckets", 4, stream=io.StringIO()) as bar:  # a log file
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
        self.shown = _default(self._stream) if enabled is None else enabled
        self._lock = threading.Lock()
        self._bar: Any = None

    def __enter__(self) -> Progress:
        if self.shown:
            self._bar = _tqdm(
                total=self._total or None,
                desc=self._label,
                file=self._stream,
                dynamic_ncols=True,
                mininterval=0.2,
                leave=True,
            )
        return self

    def update(self, done: int, total: int | None = None, label: str | None = None) -> None:
        """Draw ``done`` of ``total`` steps (the total and the label may change)."""
        if not self.shown:
            return
        with self._lock:
            if self._bar is None:  # drawn only inside the with block
                return
            if total is not None and total != self._bar.total:
                self._bar.total = total or None
            if label is not None and label != self._label:
                self._label = label
                self._bar.set_description_str(label, refresh=False)
            self._bar.n = done
            self._bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def track(
    items: Iterable[T],
    label: str,
    total: int,
    enabled: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """``items``, drawing a bar of the steps done as they are consumed.

    Examples
    --------
    >>> [x * 2 for x in track(range(3), "buckets", 3)]
    [0, 2, 4]
    """
    with Progress(label, total, enabled=enabled, stream=stream) as bar:
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
