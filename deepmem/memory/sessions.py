"""Sessions: the entries stored at one moment (same scope and time) searched as one document.

An answer is often spread over the turns of one conversation or the notes of one
checkpoint; a session that matches the query as a whole lends its score to each of its
entries. Entries alone at their moment (or with no time) belong to no session.
"""

from __future__ import annotations

import numpy as np

from deepmem.memory.entries import Entry
from deepmem.memory.lexical import Lexical, standardised


class Sessions:
    """Per session its joined tokens (BM25) and mean embedding; per entry the session it belongs to (-1: none)."""

    def __init__(self, entries: list[Entry], tokens: list[list[str]], vectors: np.ndarray) -> None:
        members: dict[str, list[int]] = {}
        for row, entry in enumerate(entries):
            if entry.time:
                members.setdefault(f"{entry.scope}\x00{entry.time}", []).append(row)
        groups = [rows for rows in members.values() if len(rows) > 1]
        self.of = np.full(len(entries), -1, dtype=np.int64)
        for number, rows in enumerate(groups):
            self.of[rows] = number
        self.lexical = Lexical([[term for row in rows for term in tokens[row]] for rows in groups])
        means = np.stack([vectors[rows].mean(axis=0) for rows in groups]) if groups else np.zeros((0, 1))
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        self.vectors = np.divide(means, norms, out=np.zeros_like(means), where=norms > 1e-12).astype(np.float32)

    def scores(self, terms: list[str], query: np.ndarray, bm25_weight: float) -> np.ndarray:
        """Per entry, its session's fused z-score for the query (0 for entries in no session)."""
        if not len(self.vectors):
            return np.zeros(len(self.of))
        lexical, similarity = self.lexical.scores(terms), self.vectors @ query
        fused = (bm25_weight * standardised(lexical, lexical.mean(), lexical.std())
                 + (1 - bm25_weight) * standardised(similarity, similarity.mean(), similarity.std()))
        return np.where(self.of >= 0, fused[self.of], 0.0)
