"""The micro-benchmarks (bench/micro, outside the default run) have an input for every compressor."""

from __future__ import annotations

from bench.micro.samples import compressor_samples
from deepmem.compressors import REGISTRY


def test_every_compressor_has_a_benchmark_input() -> None:
    """A new compressor without a committed part it shortens fails here, not silently in the skipped benchmarks."""
    samples = compressor_samples()
    assert sorted(samples) == sorted(REGISTRY)
    for name, (part, ctx) in samples.items():
        assert REGISTRY[name].compress(part, ctx) is not None, name
