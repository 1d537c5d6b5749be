"""Memory search at 1K and 100K project memories (seeded synthetic entries, as bench/runners/memory.py builds them)."""

from __future__ import annotations

import pytest

from bench.runners.memory import synthetic
from deepmem.memory import api
from deepmem.memory.store import import_entries
from deepmem.project.folder import Project


@pytest.fixture(scope="module", params=[1_000, 100_000], ids=["1K", "100K"])
def store(request, tmp_path_factory):
    """A project root holding the memories, its index built by one search."""
    root = Project.load(tmp_path_factory.mktemp(f"memories-{request.param}"))
    import_entries(root, synthetic(request.param, seed=1))
    api.search(root, "warm up the index", 10, "project")
    return root


def test_search(benchmark, store) -> None:
    """One query of five words from the same vocabulary, top 10."""
    query = " ".join(synthetic(1, seed=7)[0].text.split()[:5])
    hits = benchmark(api.search, store, query, 10, "project")
    assert hits
