"""`python -m bench.replay`: every contender replayed per corpus and price model (see bench/runners/replay.py)."""

from bench.runners.replay import main

raise SystemExit(main())
