"""BM25 with an always-positive idf over token lists, and its inverted index."""

from __future__ import annotations

import math

import numpy as np

BM25_K1 = 1.2
BM25_B = 0.4
"""Short memories: weaker length normalisation than the usual 0.75 ranks them better."""
CANDIDATE_CAP = 4_000
"""BM25 scores at most about this many rows: postings are added rarest term first."""


def lucene_idf(count: int, postings: dict[str, list[int]]) -> dict[str, float]:
    """Always-positive idf, log(1 + (N - df + 0.5) / (df + 0.5)): Okapi's own idf is 0 or
    negative for terms in half the entries or more, which blinds BM25 in small stores."""
    return {term: math.log(1.0 + (count - len(docs) + 0.5) / (len(docs) + 0.5)) for term, docs in postings.items()}


def standardised(scores: np.ndarray, mean: float, deviation: float) -> np.ndarray:
    """Scores as z-scores over the whole store (all zero when every entry scores the same)."""
    if deviation < 1e-9:
        return np.zeros_like(scores, dtype=np.float64)
    return (scores - mean) / deviation


class Lexical:
    """BM25 over token lists, with an inverted index (term -> rows holding it)."""

    def __init__(self, tokens: list[list[str]]) -> None:
        from rank_bm25 import BM25Okapi

        self.count = len(tokens)
        self.bm25 = BM25Okapi(tokens, k1=BM25_K1, b=BM25_B) if any(tokens) else None
        postings: dict[str, list[int]] = {}
        for position, terms in enumerate(tokens):
            for term in set(terms):
                postings.setdefault(term, []).append(position)
        self.postings = {term: np.asarray(docs, dtype=np.int64) for term, docs in postings.items()}
        if self.bm25 is not None:
            self.bm25.doc_len = np.asarray(self.bm25.doc_len)
            self.bm25.idf = lucene_idf(self.count, postings)



    def candidates(self, terms: list[str]) -> np.ndarray:
        """Rows holding a query term, rarest terms first, stopping once CANDIDATE_CAP is reached."""
        lists = sorted((self.postings[term] for term in terms if term in self.postings), key=len)
        chosen: list[np.ndarray] = []
        total = 0
        for docs in lists:
            if chosen and total + len(docs) > CANDIDATE_CAP:
                break
            chosen.append(docs)
            total += len(docs)
        return np.unique(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)

    def scores(self, terms: list[str]) -> np.ndarray:
        """A dense BM25 score per row; rows outside the candidate set score 0."""
        scores = np.zeros(self.count, dtype=np.float64)
        candidates = self.candidates(terms)
        if self.bm25 is not None and len(candidates):
            scores[candidates] = self.bm25.get_batch_scores(terms, candidates.tolist())
        return np.maximum(scores, 0.0)
