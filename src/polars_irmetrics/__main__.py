"""``python -m polars_irmetrics``: the ``irm`` command."""

import sys

from polars_irmetrics.cli import main

sys.exit(main())
