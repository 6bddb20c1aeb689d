"""`python -m evals ...`: the harness's command line (see `evals/harness/cli.py`)."""

from __future__ import annotations

import sys

from evals.harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
