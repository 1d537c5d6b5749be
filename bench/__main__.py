"""`python -m bench`: the contenders compared (see bench/runners/compare.py)."""

from bench.runners.compare import main

raise SystemExit(main())
