"""``import polars_irmetrics`` and the ``irm`` command load no heavy optional module.

scipy, matplotlib, great_tables, pandas and the engines are imported where they are
first used (:class:`polars_irmetrics.ground.lazy.LazyModule`, or an import inside the
engine's module): an evaluation that never reads them does not pay for them, and the
``irm`` command starts quickly. ``scipy.optimize`` alone, imported at the top of the
position-bias module, took about half of ``import polars_irmetrics`` (0.9 s to 0.4 s
without it on a 2-core machine).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "matplotlib", "great_tables", "pandas", "pyspark", "dask", "distributed")


@pytest.mark.parametrize("module", ["polars_irmetrics", "polars_irmetrics.cli"])
def test_importing_loads_no_heavy_module(module: str) -> None:
    # a fresh interpreter: this one has imported them for other tests
    code = (
        f"import sys, {module}\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_position_bias_fit_loads_scipy_when_it_runs() -> None:
    code = (
        "import sys\n"
        "from polars_irmetrics.ope import position_bias\n"
        "before = 'scipy.optimize' in sys.modules\n"
        "position_bias.optimize.minimize\n"
        "print(before, 'scipy.optimize' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False True"
