"""Offline benchmarks on real sessions: o200k tokens, cost, prefix stability, latency, fidelity."""
