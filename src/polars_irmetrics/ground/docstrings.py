"""Parameter paragraphs written once and filled into several docstrings.

A docstring's parameter whose description is the line ``%(name)s`` gets the paragraph
``shared[name]``, indented as the line is (:func:`fill_shared`, applied at import), so
help(), numpydoc and the API reference read the whole text (the docs build takes it
from the imported function: ``docs/hooks/shared_docs.py``). The metric functions share
theirs in :data:`polars_irmetrics.expressions.SHARED_PARAMS`, the Spark and Dask
engines theirs in :mod:`polars_irmetrics.engines.params`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["PLACEHOLDER", "fill_shared"]

#: A line of a docstring that stands for a shared paragraph: ``%(name)s`` alone.
PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)%\((?P<name>\w+)\)s$", re.MULTILINE)

_F = TypeVar("_F", bound=Callable[..., Any])


def fill_shared(function: _F, shared: Mapping[str, str]) -> _F:
    """Fill ``function``'s ``%(name)s`` lines with ``shared[name]``, indented as the line
    is; a name that is not a parameter of ``function`` (or not in ``shared``) fails at
    import.

    >>> def top(k: int = 10) -> None:
    ...     '''Top.
    ...
    ...     Parameters
    ...     ----------
    ...     k
    ...         %(k)s
    ...     '''
    >>> print(fill_shared(top, {"k": "Cutoff:\\nranks 1..k."}).__doc__.strip())
    Top.
    <BLANKLINE>
        Parameters
        ----------
        k
            Cutoff:
            ranks 1..k.
    """
    parameters = inspect.signature(function).parameters

    def fill(match: re.Match[str]) -> str:
        name, indent = match["name"], match["indent"]
        if name not in parameters:
            raise TypeError(f"{function.__name__}'s docstring shares {name!r}: not a parameter")
        return "\n".join(indent + line for line in shared[name].split("\n"))

    function.__doc__ = PLACEHOLDER.sub(fill, function.__doc__ or "")
    return function
