"""A plan's warnings, held while it runs and given in one order when its collect ends.

The checks of an evaluation warn from inside its plan (polars callbacks:
:func:`~polars_irmetrics.ground.validate.warn_from_plan`), each when its branch of the
plan runs. Which branch runs first is polars' choice: it differs between the in-memory
and the streaming engine, and from one run to the next where branches run side by
side, so the same data would give the same warnings in another order. A door's plan
is therefore built under :func:`holding`: each callback that may warn is wrapped by
:func:`warns_in_order` as the plan is built, which numbers it in the order the plan
declares its checks; its warnings are kept (:func:`hold`), and the last step of the
plan (:func:`flushed`) gives them, ordered by that number (a callback's own warnings in
the order it gave them), once every branch has run: whether the door collects the plan
or the user collects the LazyFrame it returns, on either engine. An eager door gives
what is held when its collect raises too (:meth:`HeldWarnings.flush`), so a warning
given before a refusal is still said.

Without :func:`holding` (the plan of an engine's partition, of a comparison's parts)
:func:`warns_in_order` returns the callback itself, whose warnings are given at once.

Examples
--------
Two branches warn; the order the plan declares them in is kept, whichever runs first:

>>> import warnings
>>> import polars as pl
>>> def warner(text):
...     def say(frame):
...         if not hold(text, UserWarning):
...             warn_now(text, UserWarning)
...         return frame
...     return say
>>> said = HeldWarnings()
>>> with holding(said):
...     first = pl.LazyFrame({"v": [1]}).map_batches(warns_in_order(warner("first")))
...     second = pl.LazyFrame({"v": [2]}).map_batches(warns_in_order(warner("second")))
>>> plan = flushed(pl.concat([second, first]), said)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     _ = plan.collect()
>>> [str(w.message) for w in caught]
['first', 'second']
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import polars as pl

__all__ = ["HeldWarnings", "flushed", "hold", "holding", "warn_now", "warns_in_order"]

_F = TypeVar("_F", bound=Callable[..., Any])


def warn_now(text: str, category: type[Warning]) -> None:
    """The warning given from the plan: under the library's name, without a source line
    (not polars' own file), and each time (not once per process)."""
    warnings.warn_explicit(
        text, category, filename="polars_irmetrics", lineno=0, module="polars_irmetrics"
    )


class HeldWarnings:
    """The warnings of one door's plan held while it runs: each with the number of the
    callback that gave it (:meth:`slot`, in the order the plan was built)."""

    def __init__(self) -> None:
        self.slots = 0
        self.said: list[tuple[int, str, type[Warning]]] = []

    def slot(self) -> int:
        """The next callback's number."""
        self.slots += 1
        return self.slots

    def flush(self) -> None:
        """Give the warnings held, by their callbacks' numbers (a callback's own in the
        order it gave them), and hold none."""
        said, self.said = self.said, []
        for _, text, category in sorted(said, key=lambda entry: entry[0]):
            warn_now(text, category)


#: The :class:`HeldWarnings` of the plan being built (:func:`holding`), if any.
_BUILDING: ContextVar[HeldWarnings | None] = ContextVar("irm_held_building", default=None)

#: The callback running in this thread under :func:`warns_in_order`: its
#: :class:`HeldWarnings` and number.
_RUNNING = threading.local()


@contextlib.contextmanager
def holding(said: HeldWarnings) -> Iterator[HeldWarnings]:
    """Build a plan whose callbacks wrapped by :func:`warns_in_order` keep their warnings in
    ``said`` (given by :func:`flushed`'s last step)."""
    token = _BUILDING.set(said)
    try:
        yield said
    finally:
        _BUILDING.reset(token)


def warns_in_order(callback: _F) -> _F:
    """``callback`` (a polars callback of the plan being built, which may warn through
    :func:`hold`), numbered in the plan built under :func:`holding`: its warnings are
    kept until the plan's end. Without :func:`holding`, ``callback`` itself."""
    said = _BUILDING.get()
    if said is None:
        return callback
    number = said.slot()

    def run(*args: Any, **kwargs: Any) -> Any:
        before = getattr(_RUNNING, "slot", None)
        _RUNNING.slot = (said, number)
        try:
            return callback(*args, **kwargs)
        finally:
            _RUNNING.slot = before

    return run  # type: ignore[return-value]


def hold(text: str, category: type[Warning]) -> bool:
    """Keep the warning where a callback wrapped by :func:`warns_in_order` runs in this thread
    (``True``); ``False`` where it is to be given now."""
    running = getattr(_RUNNING, "slot", None)
    if running is None:
        return False
    said, number = running
    said.said.append((number, text, category))
    return True


def flushed(plan: pl.LazyFrame, said: HeldWarnings) -> pl.LazyFrame:
    """``plan``, whose last step gives the warnings ``said`` holds (:meth:`HeldWarnings.flush`):
    after every branch of the plan, which its one input needs, has run."""

    def give(frame: pl.DataFrame) -> pl.DataFrame:
        said.flush()
        return frame

    # its schema, the plan's own (unchanged), is not resolved again
    return plan.map_batches(give, validate_output_schema=False)
