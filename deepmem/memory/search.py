"""Hybrid ranking: BM25 on a pre-filtered candidate set, embedding similarity, and their fusion."""

from __future__ import annotations

import msgspec
import numpy as np

from deepmem.memory.embed import encode
from deepmem.memory.entries import CONTROL, Entry
from deepmem.memory.index import SearchIndex
from deepmem.memory.tokenize import tokenize
from deepmem.types import InputError

CANDIDATE_CAP = 4_000
"""BM25 scores at most about this many entries: postings are added rarest term first."""
BM25_WEIGHT = 0.4
"""Share of the BM25 score (over the best one) in the fused score; the rest is the spread similarity."""
MAX_QUERY_CHARS = 8_000


class Hit(msgspec.Struct, frozen=True):
    """One ranked entry with the evidence behind its rank."""

    entry: Entry
    score: float
    bm25: float
    similarity: float
    bm25_rank: int | None = None
    similarity_rank: int | None = None
    terms: dict[str, float] = {}


def check_query(query: str) -> str:
    """A usable query, or an InputError saying why not."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty search query")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"search query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    if CONTROL.search(query.replace("\r", "").replace("\t", " ")):
        raise InputError("search query contains control characters")
    return query.strip()


def bm25_candidates(index: SearchIndex, terms: list[str]) -> np.ndarray:
    """Entries holding a query term, rarest terms first, stopping once CANDIDATE_CAP is reached."""
    lists = sorted((index.postings[term] for term in terms if term in index.postings), key=len)
    chosen: list[np.ndarray] = []
    total = 0
    for docs in lists:
        if chosen and total + len(docs) > CANDIDATE_CAP:
            break
        chosen.append(docs)
        total += len(docs)
    return np.unique(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


def bm25_scores(index: SearchIndex, terms: list[str]) -> np.ndarray:
    """A dense BM25 score per entry; entries outside the candidate set score 0."""
    scores = np.zeros(len(index.entries), dtype=np.float64)
    candidates = bm25_candidates(index, terms)
    if index.bm25 is not None and len(candidates):
        scores[candidates] = index.bm25.get_batch_scores(terms, candidates.tolist())
    return np.maximum(scores, 0.0)


def term_scores(index: SearchIndex, terms: list[str], position: int) -> dict[str, float]:
    """Each query term's BM25 contribution to one entry (only terms the entry holds)."""
    if index.bm25 is None:
        return {}
    held = set(index.tokens[position])
    return {
        term: round(float(index.bm25.get_batch_scores([term], [position])[0]), 3)
        for term in terms
        if term in held
    }


def spread(similarity: np.ndarray) -> np.ndarray:
    """Cosine similarities rescaled to 0..1 between the worst and best entry (clipped when all equal)."""
    low, high = float(similarity.min()), float(similarity.max())
    if high - low < 1e-9:
        return np.clip(similarity, 0.0, None)
    return (similarity - low) / (high - low)


def _ranks(scores: np.ndarray, order: np.ndarray, positions: np.ndarray) -> list[int | None]:
    """1-based rank in `order` of each position, None where the score is not positive."""
    where = {int(doc): rank for rank, doc in enumerate(order, 1)}
    return [where.get(int(doc)) if scores[doc] > 0 else None for doc in positions]


def rank(index: SearchIndex, query: str, k: int = 5, bm25_weight: float = BM25_WEIGHT,
         explain: bool = False) -> list[Hit]:
    """The top k entries for a query by fused score (ties broken by entry order)."""
    query = check_query(query)
    count = len(index.entries)
    if count == 0 or k <= 0:
        return []
    terms = list(dict.fromkeys(tokenize(query)))
    lexical = bm25_scores(index, terms)
    top_lexical = float(lexical.max()) if count else 0.0
    lexical_norm = lexical / top_lexical if top_lexical > 0 else lexical
    similarity = index.vectors @ encode(index.model, [query])[0]
    semantic = spread(similarity)
    fused = bm25_weight * lexical_norm + (1.0 - bm25_weight) * semantic
    depth = min(k, count)
    top = np.argpartition(-fused, depth - 1)[:depth]
    top = top[np.lexsort((top, -fused[top]))]
    top = top[fused[top] > 0]
    bm25_order = sim_order = np.zeros(0, dtype=np.int64)
    if explain:
        reach = min(count, max(depth, 100))
        bm25_order = np.lexsort((np.arange(count), -lexical))[:reach]
        sim_order = np.lexsort((np.arange(count), -similarity))[:reach]
    bm25_ranks = _ranks(lexical, bm25_order, top) if explain else [None] * len(top)
    sim_ranks = _ranks(similarity, sim_order, top) if explain else [None] * len(top)
    return [
        Hit(
            entry=index.entries[doc],
            score=round(float(fused[doc]), 4),
            bm25=round(float(lexical[doc]), 3),
            similarity=round(float(similarity[doc]), 4),
            bm25_rank=bm25_rank,
            similarity_rank=sim_rank,
            terms=term_scores(index, terms, int(doc)) if explain else {},
        )
        for doc, bm25_rank, sim_rank in zip(top, bm25_ranks, sim_ranks, strict=True)
    ]
