"""The exceptions polars_irmetrics raises for bad input, and the warnings it gives.

Every error the library raises on purpose is an :class:`IrmError`, and also a
built-in ``ValueError`` or ``TypeError``, so callers can catch either family.
Messages name the column or value at fault and say how to fix it.

Every warning it gives is an :class:`IrmWarning` (a ``UserWarning``): a result that
is computed as documented but is more often a mistake than an answer, such as a run
that retrieves no judged document (:class:`CoverageWarning`). Silence them with
``warnings.filterwarnings("ignore", category=irm.errors.IrmWarning)``, or turn them
into errors with ``"error"``.
"""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "ColumnNotFoundError",
    "ColumnTypeError",
    "CoverageWarning",
    "DuplicateError",
    "FileFormatError",
    "InvalidValueError",
    "IrmError",
    "IrmWarning",
    "MetricParameterError",
    "MissingDependencyError",
    "MissingFileError",
    "QuerySetError",
    "SupportWarning",
    "TrecFormatError",
    "UnknownMetricError",
]


#: What polars appends to an error raised while it plans a query (an expression's
#: deferred column check, :mod:`polars_irmetrics.ground.deferred`) or runs one of its
#: Python functions (cosine_similarity's length check: "This error occurred in the
#: following expression: ..."): its own context, cut from the library's messages.
_POLARS_CONTEXT = ("\n\nResolved plan until failure:", "\n\nThis error occurred ")


class IrmError(Exception):
    r"""Base class of every error polars_irmetrics raises on purpose.

    polars re-raises an error raised while it plans a lazy query with its plan appended
    to the message; that context is cut, so the message is the library's alone:

    >>> str(IrmError("column 'x' not found\n\nResolved plan until failure:\n\tDF"))
    "column 'x' not found"
    """

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str):
            text = args[0]
            for marker in _POLARS_CONTEXT:
                text = text.split(marker, 1)[0]
            args = (text, *args[1:])
        super().__init__(*args)


class ColumnNotFoundError(IrmError, ValueError):
    """A column the evaluation needs is not in the frame."""


class ColumnTypeError(IrmError, TypeError):
    """A column has a dtype the evaluation cannot use (or two frames disagree)."""


class InvalidValueError(IrmError, ValueError):
    """A column holds a value the evaluation cannot use (null, NaN, rank < 1, ...)."""


class ArgumentError(InvalidValueError, TypeError):
    """A call's arguments do not fit the function: an option it does not take, an
    argument too many or one missing, or a value of another kind than the one declared
    (a list where a column name goes). Also a ``TypeError``, as Python's own refusal of
    such a call is."""


class DuplicateError(IrmError, ValueError):
    """A document appears twice in one query of a run or of the judgments."""


class UnknownMetricError(IrmError, ValueError):
    """A metric name that the registry does not know."""


class MetricParameterError(IrmError, ValueError):
    """A metric parameter with a wrong value (k that is not a positive integer, ...)."""


class QuerySetError(IrmError, ValueError):
    """Run and judgments cover different queries and the policy says to raise."""


class FileFormatError(IrmError, ValueError):
    """A file is not what a run or judgments file can be: binary data, text that is not
    UTF-8, or a compressed stream that cannot be read."""


class MissingFileError(IrmError, FileNotFoundError):
    """A file named as a run or judgments does not exist."""


class TrecFormatError(FileFormatError):
    """A malformed line in a TREC run or qrels file."""


class MissingDependencyError(IrmError, ImportError):
    """An optional dependency is not installed: an extra (``plot``, ``spark``, ``dask``)."""


class IrmWarning(UserWarning):
    """Base class of every warning polars_irmetrics gives on purpose."""


class CoverageWarning(IrmWarning):
    """A run retrieves no judged document, or misses most judged queries: its values are
    computed as trec_eval computes them (0 for what was not retrieved), but such zeros
    more often come from ids that do not match the judgments' (case, a prefix, leading
    zeros, another query set) than from the system. Given once per run (each system of
    ``systems=``), with the counts and, where the ids match after a change, a hint. An
    impression log with no click at all is warned so too (a join of the clicks onto
    the impressions that matched nothing)."""


class SupportWarning(IrmWarning):
    """An off-policy estimate the log cannot support: the evaluation policy takes actions
    the logging policy never took (:mod:`polars_irmetrics.ope`); the estimate is then
    biased, whatever the estimator."""
