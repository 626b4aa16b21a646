"""The options of a comparison's statistics, carried as one frozen object.

:func:`~polars_irmetrics.compare` packs its statistics keyword arguments into one
:class:`CompareOptions` (and its evaluation options into one
:class:`~polars_irmetrics.ground.options.EvalOptions`); :meth:`CompareOptions.checked`
refuses a bad value with a message naming the argument and the fix.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.progress import check_progress
from polars_irmetrics.stats.multitest import Correction, check_correction

__all__ = [
    "ALTERNATIVES",
    "TESTS",
    "Alternative",
    "CompareOptions",
    "Interval",
    "Mode",
    "QuerySet",
    "Scope",
    "Test",
    "found_above",
]

Test = Literal["t", "wilcoxon", "randomization", "bootstrap"]
Alternative = Literal["two-sided", "greater", "less"]
Mode = Literal["baseline", "pairs"]
QuerySet = Literal["judged", "common", "error"]
Scope = Literal["all", "metric"]
Interval = Literal["t", "bootstrap"]

TESTS: tuple[str, ...] = ("t", "wilcoxon", "randomization", "bootstrap")
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
_MODES: tuple[str, ...] = ("baseline", "pairs")
_QUERY_SETS: tuple[str, ...] = ("judged", "common", "error")
_SCOPES: tuple[str, ...] = ("all", "metric")
_INTERVALS: tuple[str, ...] = ("t", "bootstrap")


def _choose(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        names = ", ".join(repr(c) for c in choices)
        raise InvalidValueError(f"{name}={value!r} is not valid; choose one of {names}")


def _fraction(name: str, value: object, example: str) -> None:
    """A probability strictly between 0 and 1: a Python or numpy number (numpy's
    float32 is no Python float), not a bool."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, numbers.Real)
        or math.isnan(value)
        or not 0 < float(value) < 1
    ):
        raise InvalidValueError(
            f"{name}={value!r} must be strictly between 0 and 1 (e.g. {name}={example})"
        )


def _check_seed(seed: object) -> None:
    """A resampling seed: ``None`` (fresh randomness) or a whole number >= 0, numpy's."""
    try:
        whole = operator.index(seed) if seed is not None else 0  # type: ignore[arg-type]
    except TypeError:
        whole = -1
    if isinstance(seed, bool) or whole < 0:
        raise InvalidValueError(
            f"seed={seed!r} must be a whole number >= 0 (e.g. seed=0) or None (a fresh "
            "random draw each call)"
        )


@dataclass(frozen=True)
class CompareOptions:
    """Every statistics option of :func:`~polars_irmetrics.compare`; the fields and
    defaults are its keyword arguments'.

    Examples
    --------
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> options = CompareOptions(test="bootstrap").checked()
    >>> options.interval, options.replace(alpha=0.01).alpha
    ('bootstrap', 0.01)
    >>> CompareOptions(alpha=1.0).checked()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: alpha=1.0 must be strictly between 0 and 1 ...
    """

    baseline: str | None = None
    mode: Mode | None = None
    test: Test = "t"
    alternative: Alternative = "two-sided"
    correction: Correction = "holm"
    correction_scope: Scope = "all"
    alpha: float = 0.05
    confidence: float = 0.95
    ci: Interval | None = None
    n_resamples: int = 10_000
    seed: int | None = 0
    query_set: QuerySet = "judged"
    progress: bool | None = None
    #: the paired per-query values alone (``compare(per_query=True)``): no test, no
    #: interval, so the statistics options are refused there (:data:`STATISTICS`)
    per_query: bool = False

    @property
    def pairs(self) -> bool:
        """Every pair of systems (``mode="pairs"``, the default without a baseline)."""
        return (self.mode or ("pairs" if self.baseline is None else "baseline")) == "pairs"

    @property
    def interval(self) -> Interval:
        """The confidence interval's method: ``ci``, or the bootstrap's after a bootstrap test."""
        return self.ci or ("bootstrap" if self.test == "bootstrap" else "t")

    def checked(self) -> CompareOptions:
        """``self`` when every field is valid, else :class:`InvalidValueError`."""
        _choose("test", self.test, TESTS)
        _choose("alternative", self.alternative, ALTERNATIVES)
        check_correction(self.correction)
        _choose("correction_scope", self.correction_scope, _SCOPES)
        _choose("query_set", self.query_set, _QUERY_SETS)
        if self.mode is not None:
            _choose("mode", self.mode, _MODES)
        if self.ci is not None:
            _choose("ci", self.ci, _INTERVALS)
        _fraction("alpha", self.alpha, "0.05")
        _fraction("confidence", self.confidence, "0.95")
        check_progress(self.progress)
        try:
            n_resamples = operator.index(self.n_resamples)
        except TypeError:
            n_resamples = 0
        if isinstance(self.n_resamples, bool) or n_resamples < 1:
            raise InvalidValueError(
                f"n_resamples={self.n_resamples!r} must be a positive integer "
                "(e.g. n_resamples=10_000)"
            )
        if self.mode == "baseline" and self.baseline is None:
            raise InvalidValueError(
                "mode='baseline' needs baseline=...: name the system the others are "
                "compared with, or use mode='pairs'"
            )
        _check_seed(self.seed)
        self._refuse_unread()
        return self

    def _refuse_unread(self) -> None:
        """An option the chosen statistics do not read, given another value than its
        default, is refused (as evaluate refuses an option no metric reads)."""
        if self.per_query:  # the paired values alone: no statistic reads them
            for name in STATISTICS:
                value = getattr(self, name)
                if value != _DEFAULTS[name]:
                    raise InvalidValueError(
                        f"{name}={value!r} is read by the tests and intervals of the "
                        "summary, and per_query=True lists the paired per-query values, "
                        f"with no test: drop {name}=, or drop per_query=True"
                    )
        resampled = self.test in ("randomization", "bootstrap") or self.interval == "bootstrap"
        for name in ("n_resamples", "seed"):
            value = getattr(self, name)
            if not resampled and value != _DEFAULTS[name]:
                raise InvalidValueError(
                    f"{name}={value!r} is read by the resampling statistics (test="
                    f"'randomization' or 'bootstrap', ci='bootstrap'), and test={self.test!r} "
                    f"with ci={self.interval!r} reads none: drop {name}=, or choose one of them"
                )
        bootstrap = self.test == "bootstrap" or self.interval == "bootstrap"
        if bootstrap and self.n_resamples > MAX_BOOTSTRAP:
            held = 8 * self.n_resamples / 2**30
            raise InvalidValueError(
                f"n_resamples={self.n_resamples!r} is above {MAX_BOOTSTRAP:_}, the most a "
                "bootstrap (test='bootstrap' or ci='bootstrap') draws: it holds each "
                "comparison's resampled means in memory, 8 bytes each (about "
                f"{held:.1f} GiB per metric and pair of systems here). Pass "
                f"n_resamples={MAX_BOOTSTRAP:_} or fewer (the default 10_000 is plenty), or "
                "test='randomization', which holds none"
            )
        if self.correction is None and self.correction_scope != "all":
            raise InvalidValueError(
                f"correction_scope={self.correction_scope!r} says which p-values a "
                "correction adjusts together, and correction=None adjusts none: drop "
                "correction_scope=, or choose a correction (e.g. correction='holm')"
            )
        if self.mode == "pairs" and self.baseline is not None:
            raise InvalidValueError(
                f"baseline={self.baseline!r} is not read by mode='pairs', which compares "
                "every pair of systems (the earlier of each pair in the baseline column): "
                "drop baseline=, or use mode='baseline'"
            )

    def replace(self, **changes: Any) -> CompareOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


#: The most resamples of compare's bootstrap (``n_resamples`` with ``test='bootstrap'`` or
#: ``ci='bootstrap'``): each comparison's resampled means are held in memory (8 bytes
#: each, and a copy for the percentiles). The randomization test counts as it draws.
MAX_BOOTSTRAP = 10_000_000

#: The options only the summary's tests and intervals read (refused beside
#: ``per_query=True``).
STATISTICS = (
    "test",
    "alternative",
    "correction",
    "correction_scope",
    "alpha",
    "confidence",
    "ci",
    "n_resamples",
    "seed",
)

#: The defaults of the options :meth:`CompareOptions._refuse_unread` checks.
_DEFAULTS: dict[str, object] = {
    f.name: f.default for f in dataclasses.fields(CompareOptions) if f.name in STATISTICS
}


def found_above(
    delta: float, statistic: float | None, options: CompareOptions | None
) -> bool | None:
    """Whether the test of a comparison found the system above its baseline (``True``),
    below (``False``) or neither way (``None``): the alternative of a one-sided test,
    else the sign of the test's ``statistic`` (:func:`~polars_irmetrics.compare`'s
    column; a null or NaN one, or none: the sign of ``delta``, the statistic of the
    mean tests and of Tukey's HSD).

    Examples
    --------
    Wilcoxon's signed ranks below 0 though the mean delta is above:

    >>> from polars_irmetrics.comparison.options import CompareOptions, found_above
    >>> found_above(0.155, -170.0, None)
    False
    >>> found_above(0.155, None, CompareOptions(test="wilcoxon", alternative="less"))
    False
    >>> found_above(0.0, None, None) is None
    True
    """
    if options is not None and options.alternative != "two-sided":
        return options.alternative == "greater"
    sign = delta if statistic is None or math.isnan(statistic) else statistic
    return None if sign == 0 or math.isnan(sign) else sign > 0
