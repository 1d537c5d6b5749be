"""Each compressor on the largest committed part it shortens."""

from __future__ import annotations

import pytest

from bench.micro.samples import compressor_samples
from deepmem.compressors import REGISTRY


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_compressor(benchmark, name: str) -> None:
    """One call of `compress(part, ctx)`."""
    part, ctx = compressor_samples()[name]
    result = benchmark(REGISTRY[name].compress, part, ctx)
    assert result is not None
