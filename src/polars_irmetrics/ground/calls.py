"""The arguments of a public function, checked against its declaration.

Python refuses a call that does not fit a function's signature (an unknown keyword, an
argument too many, one missing) with its own ``TypeError``, which names neither the
options the function takes nor the fix; and a value of the wrong kind (a frame where a
name or a choice goes, a number where a path goes) could reach polars or the standard
library and come back as their words (``the truth value of an Expr is ambiguous``,
``unhashable type: 'list'``, ``'int' object has no attribute 'collect_schema'``).
:func:`checked_call` wraps a public function once, where the package exports it
(``polars_irmetrics/__init__.py``, the ``irm`` namespaces), so that both come back as an
:class:`~polars_irmetrics.errors.ArgumentError` naming the argument, the value and the
fix:

* a call that does not fit the signature is refused before the function runs;
* an error that is not the library's, raised while the function runs, is put on the
  argument whose value is not of the kind its declaration gives (a ``str`` option given
  a list, a ``'linear'``-style choice given an expression, a path given a number), when
  one is; any other such error is raised as it is, never blamed on an argument at random.

The library's own refusals (:class:`~polars_irmetrics.errors.IrmError`) pass unchanged:
they already name the argument.

>>> from polars_irmetrics.ground.calls import checked_call
>>> def top(k: int | None = None, *, gain: str = "linear") -> str:
...     return gain.upper()
>>> checked = checked_call(top, "irm.top")
>>> checked(cutof=10)
Traceback (most recent call last):
...
polars_irmetrics.errors.ArgumentError: irm.top takes no option cutof= (got 10); its options are k, gain
>>> checked(gain=["linear"])
Traceback (most recent call last):
...
polars_irmetrics.errors.ArgumentError: irm.top: gain must be a str, got ['linear']; pass one, e.g. gain='linear'
"""  # noqa: E501

from __future__ import annotations

import difflib
import functools
import inspect
import numbers
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import polars as pl

from polars_irmetrics.errors import ArgumentError, IrmError

__all__ = ["checked_call", "is_data", "shown_value"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The errors of a running function that :func:`checked_call` may put on an argument:
#: Python's (``unhashable type``, ``has no attribute``, ``truth value ... ambiguous``)
#: and polars' (``ComputeError`` of a cast of ``'x'`` to a number).
_FOREIGN_ERRORS = (TypeError, ValueError, AttributeError, LookupError, pl.exceptions.PolarsError)

#: The tables, columns and arrays of other libraries (by module and type name): data,
#: never an option's value (a dtype, a number of theirs is no such thing).
_DATA_TYPES = {
    "pandas": ("DataFrame", "Series", "Index"),
    "numpy": ("ndarray",),
    "pyarrow": ("Table", "RecordBatch", "ChunkedArray", "Array"),
}

#: The atoms of an annotation (as the source writes it) that :func:`_misfit` knows; an
#: annotation with any other atom (an alias, a ``Literal``, a ``Mapping``) has no
#: verdict but for a table or an expression given to an option of a plain default.
_ATOMS: Mapping[str, Callable[[object], bool]] = {
    "str": lambda value: isinstance(value, str),
    "None": lambda value: value is None,
    "bool": lambda value: isinstance(value, bool),
    "int": lambda value: isinstance(value, numbers.Integral) and not isinstance(value, bool),
    "float": lambda value: isinstance(value, numbers.Real) and not isinstance(value, bool),
    "os.PathLike[str]": lambda value: isinstance(value, os.PathLike),
    "Path": lambda value: isinstance(value, os.PathLike),
    "pl.DataFrame": lambda value: isinstance(value, pl.DataFrame),
    "pl.LazyFrame": lambda value: isinstance(value, pl.LazyFrame),
    "pl.Expr": lambda value: isinstance(value, pl.Expr),
}

#: The words of an annotation that admit a table or an expression (``RankSpec`` is a
#: column name or an expression, ``Runs`` a table or a mapping of them).
_DATA_WORDS = ("Frame", "Table", "Expr", "RankSpec", "Runs", "Source", "Series", "Any", "object")

#: How a message names an atom's kind.
_KINDS = {
    "str": "a str",
    "bool": "True or False",
    "int": "an integer",
    "float": "a number",
    "os.PathLike[str]": "a path",
    "Path": "a path",
    "pl.DataFrame": "a polars DataFrame",
    "pl.LazyFrame": "a polars LazyFrame",
    "pl.Expr": "a polars expression",
}


def shown_value(value: object) -> str:
    """``value`` in a message: a table or an expression by its kind (never its whole
    print-out), anything else by its ``repr``, cut at 60 characters.

    >>> import polars as pl
    >>> shown_value(pl.col("x")), shown_value(pl.DataFrame()), shown_value("x" * 70)[-5:]
    ('a polars expression', 'a polars DataFrame', 'xx...')
    """
    if isinstance(value, pl.Expr):
        return "a polars expression"
    if is_data(value):
        module = type(value).__module__.split(".", 1)[0]
        return f"a {module} {type(value).__name__}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_data(value: object) -> bool:
    """Whether ``value`` is a table, a column, an array or an expression.

    >>> import polars as pl
    >>> is_data(pl.DataFrame()), is_data(pl.col("x")), is_data(pl.Float64), is_data(3)
    (True, True, False, False)
    """
    if isinstance(value, pl.DataFrame | pl.LazyFrame | pl.Series | pl.Expr):
        return True
    kind = type(value)
    module = kind.__module__.split(".", 1)[0]
    return module in _DATA_TYPES and kind.__name__.endswith(_DATA_TYPES[module])


def checked_call(function: _F, shown: str) -> _F:
    """``function``, its arguments checked against its signature (see the module);
    ``shown`` is how a message names it (``"irm.ndcg"``, ``"df.irm.evaluate"``)."""
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        # the arguments are bound to the signature only on an error: a call that does
        # not fit a plain function's signature is refused by Python before its body
        # runs, so binding first (about 10 us, 39 times in a small evaluate, where the
        # library calls its own checked methods) only checked what Python checks itself
        try:
            return function(*args, **kwargs)
        except IrmError:
            raise
        except _FOREIGN_ERRORS as error:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:  # refused by Python before the function ran
                raise ArgumentError(_unfit(shown, parameters, args, kwargs)) from None
            message = _misfit(shown, signature, bound.arguments)
            if message is None:
                raise
            raise ArgumentError(message) from error

    return cast(_F, call)


def _unfit(
    shown: str,
    parameters: list[inspect.Parameter],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> str:
    """Why ``args`` and ``kwargs`` do not fit ``parameters`` (their first misfit)."""
    # a method's self is given by Python, never by the caller: neither counted nor named
    own = [p for p in parameters if p.name != "self"]
    args = args[len(parameters) - len(own) :]
    named = [p for p in own if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [p for p in named if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    options = ", ".join(p.name for p in named) or "none"
    if len(args) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in own):
        given = ", ".join(shown_value(value) for value in args)
        if positional:
            names = ", ".join(p.name for p in positional)
            plural = "s" if len(positional) > 1 else ""
            took = f"at most {len(positional)} argument{plural} by position ({names})"
        else:
            took = "no argument by position"
        rest = [p.name for p in named if p not in positional[: len(args)]]
        example = f", e.g. {shown}({'..., ' if positional else ''}{rest[0]}=...)" if rest else ""
        which = "the others" if positional else "each"
        return f"{shown} takes {took}, got {len(args)} ({given}); pass {which} by name{example}"
    for parameter, value in zip(positional, args, strict=False):
        if parameter.name in kwargs:
            return (
                f"{shown} got {parameter.name}= twice: {shown_value(value)} by position and "
                f"{shown_value(kwargs[parameter.name])} by name; pass it once"
            )
    takes_any = any(p.kind == p.VAR_KEYWORD for p in own)
    known = {p.name for p in named if p.kind != p.POSITIONAL_ONLY}
    for name, value in kwargs.items():
        if name not in known and not takes_any:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}=?)" if close else ""
            takes = f"its options are {options}" if named else "it takes none"
            return f"{shown} takes no option {name}= (got {shown_value(value)}){hint}; {takes}"
    passed = {p.name for p in positional[: len(args)]} | set(kwargs)
    missing = [
        p.name for p in named if p.default is inspect.Parameter.empty and p.name not in passed
    ]
    if missing:
        listed = " and ".join(f"{name}=" for name in missing)
        example = ", ".join(f"{name}=..." for name in missing)
        noun = "arguments" if len(missing) > 1 else "argument"
        them = "them" if len(missing) > 1 else "it"
        return f"{shown} is missing its {noun} {listed}; pass {them}, e.g. {shown}({example})"
    return f"{shown} cannot take these arguments; its options are {options}"  # pragma: no cover


def _misfit(shown: str, signature: inspect.Signature, arguments: Mapping[str, Any]) -> str | None:
    """The refusal of the first given argument whose value is not of the kind its
    declaration gives, or ``None`` where every one fits (or none can be told)."""
    for name, value in arguments.items():
        parameter = signature.parameters[name]
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else ""
        atoms = [atom.strip() for atom in text.split("|")] if text else []
        default = parameter.default
        plain = type(default) in (str, bool, int, float)
        if atoms and all(atom in _ATOMS for atom in atoms):
            if any(_ATOMS[atom](value) for atom in atoms):
                continue
            kinds = [_KINDS[atom] for atom in atoms if atom != "None"]
            kind = " or ".join(dict.fromkeys(kinds)) + (" or None" if "None" in atoms else "")
        elif is_data(value) and not any(word in text for word in _DATA_WORDS):
            # a choice or a number given a table or an expression: polars' "truth value
            # of an Expr is ambiguous" where the function compares it with its choices
            kind = (
                f"a {type(default).__name__}"
                if plain
                else f"one of the values help({shown}) lists"
            )
        else:
            continue
        fix = (
            "pass one"
            if default in (inspect.Parameter.empty, None)
            else (f"pass one, e.g. {name}={default!r}")
        )
        return f"{shown}: {name} must be {kind}, got {shown_value(value)}; {fix}"
    return None


#: "pass KEYWORD=VALUE to irm.evaluate", VALUE perhaps with parentheses ("groups=...
#: (one row per (document, group))"); not irm.evaluate_online, nor a call irm.evaluate(...).
_TO_EVALUATE = re.compile(
    r"\bpass (?P<name>\w+)=(?:[^;()]|\((?:[^()]|\([^()]*\))*\))*? to (?P<call>irm\.evaluate)\b"
    r"(?![\w(])"
)


def as_called(text: str, calls: str, keywords: Collection[str]) -> str:
    """``text`` with each "pass KEYWORD=... to irm.evaluate" (the fix of an evaluation's
    refusal) naming ``calls``, the function the user called, where it takes KEYWORD
    (``keywords``); a keyword it does not take keeps irm.evaluate, which does.

    >>> text = "reads groups: pass groups=... (one row per (document, group)) to irm.evaluate"
    >>> print(as_called(text, "irm.compare", {"groups"}))
    reads groups: pass groups=... (one row per (document, group)) to irm.compare
    >>> print(as_called("pass prefs=... to irm.evaluate", "irm.compare", {"groups"}))
    pass prefs=... to irm.evaluate
    """

    def named(match: re.Match[str]) -> str:
        if match.group("name") not in keywords:
            return match.group(0)
        return match.group(0)[: match.start("call") - match.start()] + calls

    return _TO_EVALUATE.sub(named, text)


@contextmanager
def named_as(calls: str, keywords: Collection[str]) -> Iterator[None]:
    """Raise a library error of the block with its "pass KEYWORD=... to irm.evaluate"
    naming ``calls`` where it takes KEYWORD (:func:`as_called`): the same class, the same
    words otherwise. The evaluation below a comparison or a fusion gives
    :func:`~polars_irmetrics.evaluate`'s fix, a function the user did not call.

    >>> from polars_irmetrics.errors import MetricParameterError
    >>> with named_as("irm.tukey_hsd", {"judged_only"}):
    ...     raise MetricParameterError("pass judged_only=True to irm.evaluate, or ...")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: pass judged_only=True to irm.tukey_hsd, or ...
    """
    try:
        yield
    except IrmError as error:
        text = as_called(str(error), calls, keywords)
        if text == str(error):
            raise
        raise type(error)(text) from None
