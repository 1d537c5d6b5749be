"""`python -m bench`: the contenders compared (see bench/compare.py)."""

from bench.compare import main

raise SystemExit(main())
