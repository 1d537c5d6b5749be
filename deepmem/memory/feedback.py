"""Pseudo-relevance feedback: the rarest words of the first hits, searched again with BM25.

The entries ranked first for a query share words with the answer that the query lacks
("What instruments does Melanie play?" finds a turn about her violin, whose neighbours in
the ranking talk about the clarinet). Their rarest words, by idf, form a second query
whose BM25 z-score is added to the fused score.
"""

from __future__ import annotations

import math

import numpy as np

from deepmem.memory.lexical import Lexical, standardised

FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 10
"""Words taken from the FEEDBACK_DOCS best entries, the FEEDBACK_TERMS rarest (by idf, summed over the entries)."""


def feedback_terms(lexical: Lexical, tokens: list[list[str]], top: np.ndarray, skip: set[str]) -> list[str]:
    """The rarest words of the top entries that are not in `skip` (the query's own terms, leading names)."""
    if lexical.bm25 is None:
        return []
    idf = lexical.bm25.idf
    weight: dict[str, float] = {}
    for row in top[:FEEDBACK_DOCS]:
        for term in set(tokens[int(row)]):
            if term not in skip and term.isalpha() and len(term) > 2:
                weight[term] = weight.get(term, 0.0) + idf.get(term, 0.0)
    return sorted(weight, key=lambda term: (-weight[term], term))[:FEEDBACK_TERMS]


def feedback_scores(lexical: Lexical, terms: list[str]) -> np.ndarray:
    """The BM25 z-score of every entry for the feedback words (all zero without them)."""
    if not terms:
        return np.zeros(lexical.count)
    scores = lexical.scores(terms)
    mean = float(scores.sum()) / max(lexical.count, 1)
    spread = math.sqrt(max(float(scores @ scores) / max(lexical.count, 1) - mean**2, 0.0))
    return standardised(scores, mean, spread)
