"""The metric functions' shared parameter paragraphs are written once
(``expressions.SHARED_PARAMS``) and filled into every docstring of a function that
takes the parameter, where help(), numpydoc and the API reference read them; so are
the paragraphs the Spark and Dask engines share (``engines.params.ENGINE_PARAMS``)."""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import pytest

from polars_irmetrics import expressions
from polars_irmetrics.engines import dask as engine_dask
from polars_irmetrics.engines import params as engine_params
from polars_irmetrics.engines import spark as engine_spark
from polars_irmetrics.engines.params import ENGINE_PARAMS

from .helpers import docs_hook

SOURCE = Path(expressions.__file__).read_text()
#: Functions whose parameter of a shared name means something else, with its own text.
OWN = {
    ("r_precision", "k"),
    ("rank_by_score", "doc_id"),
    ("rank_by_score", "score"),
    ("rbp", "gain"),
}


def _entry(name: str) -> str:
    """The numpydoc entry of a shared parameter, as a docstring holds it."""
    return f"\n    {name}\n" + textwrap.indent(expressions.SHARED_PARAMS[name], " " * 8) + "\n"


@pytest.mark.parametrize("name", sorted(expressions.SHARED_PARAMS))
def test_a_shared_paragraph_is_written_once_in_the_source(name: str) -> None:
    # its opening words once (in SHARED_PARAMS; a long paragraph is split across string
    # literals there), never as a docstring's own text
    opening = expressions.SHARED_PARAMS[name][:30]
    assert SOURCE.count(opening) == 1, opening
    assert _entry(name) not in SOURCE


@pytest.mark.parametrize("name", sorted(expressions.SHARED_PARAMS))
def test_every_function_that_takes_the_parameter_has_the_paragraph(name: str) -> None:
    takers = [
        function
        for function in expressions.__all__
        if name in inspect.signature(getattr(expressions, function)).parameters
        and (function, name) not in OWN
    ]
    assert len(takers) >= 2, takers  # shared: more than one function takes it
    for function in takers:
        doc = getattr(expressions, function).__doc__
        assert _entry(name) in doc, function
        assert "%(" not in doc, function


def test_a_placeholder_for_a_parameter_the_function_lacks_fails_at_import() -> None:
    def top(k: int | None = None) -> None:
        """Top.

        Parameters
        ----------
        rank
            %(rank)s
        """

    with pytest.raises(TypeError, match=re.escape("top's docstring shares 'rank'")):
        expressions._shared_doc(top)  # type: ignore[type-var]


def test_the_api_reference_renders_the_filled_in_text() -> None:
    import griffe  # mkdocstrings' loader (griffelib, in the test extra)

    extensions = griffe.load_extensions(docs_hook("shared_docs").SharedDocs())
    root = Path(expressions.__file__).parents[1]
    package = griffe.load("polars_irmetrics", search_paths=[str(root)], extensions=extensions)
    for function in ("ndcg", "precision", "err"):
        docstring = package[f"expressions.{function}"].docstring.value
        assert "%(" not in docstring
        assert docstring == inspect.cleandoc(getattr(expressions, function).__doc__)


ENGINES = {"Spark": engine_spark, "Dask": engine_dask}


@pytest.mark.parametrize("name", sorted(ENGINE_PARAMS))
def test_an_engine_paragraph_is_written_once(name: str) -> None:
    # in engines/params.py, for both engines; never in an engine's own source
    opening = ENGINE_PARAMS[name][:30]
    for module in (engine_spark, engine_dask, engine_params):
        count = Path(module.__file__ or "").read_text().count(opening)
        assert count == (module is engine_params), (module.__name__, opening)


@pytest.mark.parametrize(("engine", "name"), [(e, n) for e in ENGINES for n in ENGINE_PARAMS])
def test_each_engine_reads_the_paragraph_with_its_name(engine: str, name: str) -> None:
    doc = ENGINES[engine].evaluate.__doc__ or ""
    text = ENGINE_PARAMS[name].replace("{engine}", engine)
    assert textwrap.indent(text, " " * 8) in doc
    assert "%(" not in doc
    assert "{engine}" not in doc
    other = "Dask" if engine == "Spark" else "Spark"
    assert f"{other} DataFrame" not in doc


def test_the_api_reference_renders_the_engines_filled_in_text() -> None:
    import griffe

    extensions = griffe.load_extensions(docs_hook("shared_docs").SharedDocs())
    root = Path(expressions.__file__).parents[1]
    package = griffe.load("polars_irmetrics", search_paths=[str(root)], extensions=extensions)
    for engine, module in ENGINES.items():
        docstring = package[f"engines.{engine.lower()}.evaluate"].docstring.value
        assert "%(" not in docstring
        assert docstring == inspect.cleandoc(module.evaluate.__doc__ or "")
