"""What the benchmarks run: one module a command, `python -m bench.runners.<name>`."""
