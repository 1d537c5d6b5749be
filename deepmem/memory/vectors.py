"""Embedding rows for search: exact moments of the similarity, and a clustered shortlist for large stores.

Small stores score every row. Above EXACT_LIMIT rows, a spherical k-means (deterministic:
strided initial centroids, fixed iterations) groups the rows; the rows are kept in cluster
order so a query scores only the clusters nearest to it, as contiguous slices.
The mean and spread of a query's similarity over all rows come from the rows' mean and
second-moment matrix, so they are exact without scoring every row.
"""

from __future__ import annotations

import math

import numpy as np

EXACT_LIMIT = 20_000
"""Up to this many rows every query scores every row."""
KMEANS_ROUNDS = 6
TRAINING_PER_CLUSTER = 32
PROBE_SHARE = 0.2
"""Share of the clusters, nearest first, whose rows a query scores."""
ASSIGN_CHUNK = 16_384


def _nearest_centroid(rows: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the most similar centroid per row, computed in bounded chunks."""
    parts = [np.argmax(rows[start : start + ASSIGN_CHUNK] @ centroids.T, axis=1)
             for start in range(0, len(rows), ASSIGN_CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def spherical_kmeans(rows: np.ndarray, clusters: int) -> np.ndarray:
    """Unit centroids of `clusters` groups of the rows, trained on an evenly strided sample."""
    sample = rows[:: max(1, len(rows) // (clusters * TRAINING_PER_CLUSTER))]
    centroids = sample[np.linspace(0, len(sample) - 1, clusters).astype(np.int64)].copy()
    for _ in range(KMEANS_ROUNDS):
        labels = _nearest_centroid(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, sample)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        filled = norms[:, 0] > 1e-12
        centroids[filled] = sums[filled] / norms[filled]
    return centroids


class VectorTable:
    """Unit embedding rows (one per entry) with exact similarity moments and, when large, clusters."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.count, self.dim = vectors.shape
        self.mean = vectors.mean(axis=0, dtype=np.float64) if self.count else np.zeros(self.dim)
        self.second = (vectors.T @ vectors).astype(np.float64) / max(self.count, 1)
        self.centroids: np.ndarray | None = None
        if self.count <= EXACT_LIMIT:
            self.rows = np.ascontiguousarray(vectors, dtype=np.float32)
            self.order = self.position = np.arange(self.count)
            return
        self.centroids = spherical_kmeans(vectors, math.isqrt(self.count))
        labels = _nearest_centroid(vectors, self.centroids)
        self.order = np.argsort(labels, kind="stable")
        self.position = np.empty_like(self.order)
        self.position[self.order] = np.arange(self.count)
        self.rows = np.ascontiguousarray(vectors[self.order], dtype=np.float32)
        self.bounds = np.searchsorted(labels[self.order], np.arange(len(self.centroids) + 1))

    def moments(self, query: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the query's similarity over every row (exact)."""
        wide = query.astype(np.float64)
        mean = float(self.mean @ wide)
        return mean, math.sqrt(max(float(wide @ self.second @ wide) - mean * mean, 0.0))

    def similarity(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query to the given entries."""
        return self.rows[self.position[docs]] @ query

    def everything(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query to every entry, in entry order."""
        return (self.rows @ query)[self.position]

    def shortlist(self, query: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """Entries worth scoring and their similarity: every entry (None) when small, else the nearest clusters."""
        if self.centroids is None:
            return None, self.rows @ query
        probes = max(1, math.ceil(len(self.centroids) * PROBE_SHARE))
        nearest = np.sort(np.argpartition(-(self.centroids @ query), probes - 1)[:probes])
        slices = [(self.bounds[c], self.bounds[c + 1]) for c in nearest]
        sims = np.concatenate([self.rows[start:end] @ query for start, end in slices])
        docs = np.concatenate([self.order[start:end] for start, end in slices])
        return docs, sims
