"""``python -m polars_irmetrics``: the ``irm`` command."""

import sys

from .cli import main

sys.exit(main())
