"""Hybrid ranking: BM25 on a pre-filtered candidate set, embedding similarity, and their fusion."""

from __future__ import annotations

import math

import msgspec
import numpy as np

from deepmem.memory.embed import encode
from deepmem.memory.entries import CONTROL, Entry
from deepmem.memory.feedback import FEEDBACK_DOCS, feedback_scores, feedback_terms
from deepmem.memory.index import SearchIndex
from deepmem.memory.lexical import standardised
from deepmem.memory.tokenize import tokenize
from deepmem.types import InputError

BM25_WEIGHT = 0.5
"""Weight of the BM25 z-score in the fused score; the similarity z-score has the rest."""
CONTEXT_WEIGHT = 0.7
CONTEXT_DECAY = 0.5
"""An entry gains CONTEXT_WEIGHT × the best positive fused score of the entries stored together with it
within CONTEXT_REACH places, halved per place beyond the first. All three were chosen by leave-one-
conversation-out cross-validation on the LoCoMo dev split (`python -m bench.runners.memory_folds`, docs/benchmarks.md)."""
SESSION_WEIGHT = 1.0
SESSION_BM25_WEIGHT = 0.8
"""An entry gains SESSION_WEIGHT × its session's fused z-score (BM25 share SESSION_BM25_WEIGHT); chosen
the same way."""
LABEL_WEIGHT = 3.0
"""An entry whose leading name (`Caroline: …`) the query names gains LABEL_WEIGHT; the weight four of the five leave-one-conversation-out folds chose."""
QUESTION_WEIGHT = 1.0
"""An entry that asks a question (it rarely holds an answer) loses QUESTION_WEIGHT; chosen the same way."""
FEEDBACK_WEIGHT = 0.2
"""The BM25 z-score of the first hits' rarest words (deepmem.memory.feedback) counts FEEDBACK_WEIGHT; chosen the
same way."""
RECENCY_WEIGHT = 1.0
"""A past session's episode gains RECENCY_WEIGHT × its recency (deepmem.memory.index): work often picks up
where a recent session left it. Episodes only: stored entries rank on what they say. With 1.0 or 2.0 alike,
bench.runners.memory_history finds an earlier session that edited the same files for 0.61 of claude-entire's later
half instead of 0.49 (early half and swe-gemini3 unchanged)."""
CORE_WEIGHT = 2.0
"""A past session's episode gains CORE_WEIGHT × its core work (deepmem.memory.index): a session that changed the
files the project keeps changing tells more of a later one. Among 0.5, 1, 1.5 and 2 (and counting 2 to 4 files),
2 finds an earlier session that edited the same files for 0.75 of claude-entire (0.80 early, 0.70 late) instead of
0.70 (0.76, 0.64); the early half alone would choose 1 (0.81 early, 0.64 late); the SWE corpora are unchanged."""
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


def term_scores(index: SearchIndex, terms: list[str], position: int) -> dict[str, float]:
    """Each query term's BM25 contribution to one entry (only terms the entry holds)."""
    bm25 = index.lexical.bm25
    if bm25 is None:
        return {}
    held = set(index.tokens[position])
    return {
        term: round(float(bm25.get_batch_scores([term], [position])[0]), 3)
        for term in terms
        if term in held
    }


def _ranks(scores: np.ndarray, order: np.ndarray, positions: np.ndarray) -> list[int | None]:
    """1-based rank in `order` of each position, None where the score is not positive."""
    where = {int(doc): rank for rank, doc in enumerate(order, 1)}
    return [where.get(int(doc)) if scores[doc] > 0 else None for doc in positions]


def best(fused: np.ndarray, docs: np.ndarray, allowed: np.ndarray, k: int) -> np.ndarray:
    """Slots of the k highest fused scores among `allowed`, ties broken by entry order."""
    if len(allowed) > k:
        cutoff = np.partition(fused[allowed], len(allowed) - k)[len(allowed) - k]
        allowed = allowed[fused[allowed] >= cutoff]
    return allowed[np.lexsort((docs[allowed], -fused[allowed]))][:k]


def context_boost(fused: np.ndarray, links: list[np.ndarray], decay: float = CONTEXT_DECAY) -> np.ndarray:
    """Per entry, the best positive fused score among the entries stored together with it, decayed by distance."""
    boost = np.zeros_like(fused)
    for distance, together in enumerate(links, 1):
        if not len(together):
            continue
        scale = decay ** (distance - 1)
        np.maximum(boost[:-distance], scale * np.where(together, fused[distance:], 0.0), out=boost[:-distance])
        np.maximum(boost[distance:], scale * np.where(together, fused[:-distance], 0.0), out=boost[distance:])
    return boost


def rank(index: SearchIndex, query: str, k: int = 5, bm25_weight: float = BM25_WEIGHT,
         explain: bool = False) -> list[Hit]:
    """The top k entries by fused score (ties broken by entry order).

    The fusion adds the z-scores of BM25 and of cosine similarity, each taken over the
    whole store, then lends each entry part of the best score of its neighbours stored at
    the same moment (a turn is often found through the turn that asked about it). Only BM25's candidates and the embedding shortlist are scored: any other
    entry has no BM25 score and a lower similarity than the shortlist's entries.
    """
    query = check_query(query)
    count = len(index.entries)
    if count == 0 or k <= 0:
        return []
    terms = list(dict.fromkeys(tokenize(query)))
    lexical = index.lexical.scores(terms)
    vector = encode(index.model, [query])[0]
    docs, similarity = index.vectors.shortlist(vector)
    if docs is None:
        docs = np.arange(count)
    else:
        scored = np.zeros(count, dtype=bool)
        scored[docs] = True
        matching = np.flatnonzero(lexical)
        extra = matching[~scored[matching]]
        docs = np.concatenate([docs, extra])
        similarity = np.concatenate([similarity, index.vectors.similarity(vector, extra)])
    lexical_mean = float(lexical.sum()) / count
    lexical_spread = math.sqrt(max(float(lexical @ lexical) / count - lexical_mean**2, 0.0))
    fused = (bm25_weight * standardised(lexical[docs], lexical_mean, lexical_spread)
             + (1.0 - bm25_weight) * standardised(similarity, *index.vectors.moments(vector)))
    if CONTEXT_WEIGHT:
        whole = np.zeros(count, dtype=np.float64)
        whole[docs] = fused
        fused = fused + CONTEXT_WEIGHT * context_boost(whole, index.context)[docs]
    if SESSION_WEIGHT:
        fused = fused + SESSION_WEIGHT * index.sessions.scores(terms, vector, SESSION_BM25_WEIGHT)[docs]
    if LABEL_WEIGHT:
        named = index.labels.named(query)
        if len(named):
            fused = fused + LABEL_WEIGHT * np.isin(docs, named)
    if QUESTION_WEIGHT:
        fused = fused - QUESTION_WEIGHT * index.labels.asks[docs]
    if RECENCY_WEIGHT:
        fused = fused + RECENCY_WEIGHT * index.recency[docs]
    if CORE_WEIGHT:
        fused = fused + CORE_WEIGHT * index.core[docs]
    evidence = ((lexical[docs] > 0) & (bm25_weight > 0)) | ((similarity > 0) & (bm25_weight < 1))
    if FEEDBACK_WEIGHT:
        first = docs[best(fused, docs, np.flatnonzero(evidence), FEEDBACK_DOCS)]
        extra = feedback_terms(index.lexical, index.tokens, first, {*terms, *index.labels.words})
        if extra:
            fused = fused + FEEDBACK_WEIGHT * feedback_scores(index.lexical, extra)[docs]
    chosen = best(fused, docs, np.flatnonzero(evidence), k)
    top = docs[chosen]
    bm25_ranks: list[int | None] = [None] * len(top)
    sim_ranks: list[int | None] = [None] * len(top)
    if explain:
        every = index.vectors.everything(vector)
        reach = min(count, max(k, 100))
        bm25_ranks = _ranks(lexical, np.lexsort((np.arange(count), -lexical))[:reach], top)
        sim_ranks = _ranks(every, np.lexsort((np.arange(count), -every))[:reach], top)
    return [
        Hit(
            entry=index.entries[doc],
            score=round(float(fused[slot]), 4),
            bm25=round(float(lexical[doc]), 3),
            similarity=round(float(similarity[slot]), 4),
            bm25_rank=bm25_rank,
            similarity_rank=sim_rank,
            terms=term_scores(index, terms, int(doc)) if explain else {},
        )
        for slot, doc, bm25_rank, sim_rank in zip(chosen, top, bm25_ranks, sim_ranks, strict=True)
    ]
