"""Modules loaded when first used, so that ``import polars_irmetrics`` (and the ``irm``
command) stays quick.

scipy's statistics, matplotlib and great_tables cost about 2.5 s of CPU to import
together; most evaluations never touch them. A :class:`LazyModule` stands for such a
module and imports it at its first attribute access (``stats.ttest_rel``): the module's
own import statement, with its types, is under ``TYPE_CHECKING`` beside it. An optional
extra that is not installed raises the library's
:class:`~polars_irmetrics.errors.MissingDependencyError` naming it, at that first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from polars_irmetrics.errors import MissingDependencyError

__all__ = ["LazyModule"]


class LazyModule:
    """A module imported at its first attribute access.

    Parameters
    ----------
    name
        The module's dotted name (``"scipy.stats"``, ``"matplotlib.figure"``).
    missing
        The message of the :class:`~polars_irmetrics.errors.MissingDependencyError`
        raised when it is not installed (an optional extra); ``None`` for a dependency
        every install has.

    Examples
    --------
    >>> stats = LazyModule("scipy.stats")
    >>> float(stats.norm.cdf(0.0))
    0.5
    >>> LazyModule("no_such_module", missing="plots need it: pip install it").available
    False
    >>> LazyModule("no_such_module", missing="plots need it: pip install it").anything
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingDependencyError: plots need it: pip install it
    """

    def __init__(self, name: str, *, missing: str | None = None) -> None:
        self._name = name
        self._missing = missing

    @property
    def module(self) -> ModuleType:
        """The module itself, imported now if it was not yet."""
        try:
            return importlib.import_module(self._name)
        except ImportError as exc:
            if self._missing is None:
                raise
            raise MissingDependencyError(self._missing) from exc

    @property
    def available(self) -> bool:
        """Whether the module can be imported (imports it)."""
        try:
            return isinstance(self.module, ModuleType)
        except MissingDependencyError:
            return False

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(self.module, attribute)

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"
