"""A refused run warns of nothing, on every route (round 28).

On one machine a run whose recommended items the interactions never hold is refused
under ``novelty@k`` and ``arp@k`` before anything is warned about. On Dask, the task
that warns when the interactions mostly lack the run's items ran beside the task that
refuses them: its warning came from a worker through ``distributed.warn`` whenever that
task outran the refusal, sometimes after ``compute()`` had raised, on the client's own
thread (CI saw it land in a later test). The warning's tasks now read the run after the
refusal's gate: a refused run's graph never reaches them.
"""

from __future__ import annotations

import re
import warnings

import dask
import pytest

import polars_irmetrics as irm
from tests.helpers import dask_idle, engine_io
from tests.test_engines_round13 import ENGINES
from tests.test_engines_round14 import CASES, HISTORY, RUN


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize(("metric", "message"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("engine", [*ENGINES, "dask local"])
def test_a_refused_run_warns_of_nothing(
    engine: str, metric: str, message: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(RUN, [metric], interactions=HISTORY)
    assert _said(caught) == []
    evaluate, to_engine, back = engine_io(engine.split()[0], request)
    local = dask.config.set(scheduler="sync") if engine == "dask local" else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
                back(
                    evaluate(
                        to_engine(RUN),
                        [metric],
                        interactions=to_engine(HISTORY),
                        partitions=partitions,
                    )
                )
        finally:
            if local is not None:
                local.__exit__(None, None, None)
        if engine == "dask":
            dask_idle(request.getfixturevalue("client"))
    assert _said(caught) == []
