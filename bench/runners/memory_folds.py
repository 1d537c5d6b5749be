"""Fusion settings by leave-one-conversation-out cross-validation on the LoCoMo dev split.

    python -m bench.runners.memory_folds [--locomo PATH]

For each conversation, the grid point (BM25 weight, context weight, context reach,
session weight, session BM25 share, leading-name weight, question weight, feedback weight)
with the best evidence recall@10 on the other conversations is scored on the held-out one.
Prints one JSON line per fold, then the mean and spread of the held-out recall, so the
shipped settings can be checked against a split they were not chosen on. Every question's
BM25 and similarity z-scores are computed once with the search code; the grid only
re-weights them. The feedback words come from the first hits at the shipped weights (the
search takes them at the weights it runs with, the same unless the grid moves them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from itertools import product
from pathlib import Path

import numpy as np

from bench.runners.memory import LOCOMO, evidence_ids, turns
from deepmem.memory.embed import encode, model_name
from deepmem.memory.feedback import feedback_scores, feedback_terms
from deepmem.memory.files import read_memory_file
from deepmem.memory.index import search_index
from deepmem.memory.lexical import standardised
from deepmem.memory.search import (
    BM25_WEIGHT,
    CONTEXT_WEIGHT,
    LABEL_WEIGHT,
    QUESTION_WEIGHT,
    SESSION_BM25_WEIGHT,
    SESSION_WEIGHT,
    context_boost,
)
from deepmem.memory.store import import_entries, memory_path
from deepmem.memory.tokenize import tokenize
from deepmem.project.folder import Project

GRID = list(product((0.4, 0.5), (0.5, 0.7), (2,), (0.7, 1.0, 1.3), (0.8,), (2.0, 3.0, 4.0), (0.0, 0.5, 1.0),
                   (0.0, 0.2, 0.3, 0.5)))
"""(BM25 weight, context weight, context reach, session weight, session BM25 share, leading-name weight,
question weight, feedback weight). The first five are narrowed to the values most folds chose on the
wider grid (0.4-0.6, 0.5-1, 1-2, 0-1.3, 0.7-0.8) before the last three were added."""
Point = tuple[float, float, int, float, float, float, float, float]
SHIPPED: Point = (BM25_WEIGHT, CONTEXT_WEIGHT, 2, SESSION_WEIGHT, SESSION_BM25_WEIGHT, LABEL_WEIGHT, QUESTION_WEIGHT,
                  0.0)
"""The search's own weights, whose first hits give the feedback words."""
Question = tuple[str, np.ndarray, np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                 np.ndarray, set[int], int]


def questions(data: Path, base: Path) -> list[Question]:
    """Per question: conversation, BM25 and similarity z-scores, context links, its sessions' BM25 and
    similarity z-scores, leading-name matches, questions, feedback z-scores, evidence rows, evidence count."""
    found = []
    for sample in json.loads(data.read_text()):
        root = Project.load(base / sample["sample_id"])
        import_entries(root, turns(sample["conversation"]))
        index = search_index([read_memory_file(memory_path(root, "project"), "project")], model_name(root))
        rows = {entry.id: row for row, entry in enumerate(index.entries)}
        for qa in sample["qa"]:
            evidence = evidence_ids(qa.get("evidence", []))
            if qa["category"] not in (1, 2, 3, 4) or not evidence:
                continue
            terms = list(dict.fromkeys(tokenize(qa["question"])))
            vector = encode(index.model, [qa["question"]])[0]
            lexical, similarity = index.lexical.scores(terms), index.vectors.everything(vector)
            item = (sample["sample_id"], standardised(lexical, lexical.mean(), lexical.std()),
                    standardised(similarity, similarity.mean(), similarity.std()), index.context,
                    index.sessions.scores(terms, vector, 1.0), index.sessions.scores(terms, vector, 0.0),
                    index.labels.matches(qa["question"]), index.labels.asks)
            first = np.lexsort((np.arange(len(lexical)), -fuse(item, SHIPPED)))
            extra = feedback_terms(index.lexical, index.tokens, first, {*terms, *index.labels.words})
            found.append((*item, feedback_scores(index.lexical, extra),
                          {rows[e] for e in evidence if e in rows}, len(evidence)))
    return found


def fuse(item: tuple, point: Point) -> np.ndarray:
    """The fused score of every entry for one question at one grid point."""
    weight, context, reach, session, session_share, label, question, feedback = point
    _, lexical, similarity, links, session_lexical, session_similarity, named, asks, *rest = item
    fused = weight * lexical + (1 - weight) * similarity
    fused = fused + context * context_boost(fused, links[:reach])
    fused = fused + session * (session_share * session_lexical + (1 - session_share) * session_similarity)
    fused = fused + label * named - question * asks
    return fused + feedback * rest[0] if rest and feedback else fused


def recall10(items: list[Question], point: Point) -> float:
    """Mean evidence recall@10 of the items at one grid point."""
    total = 0.0
    for item in items:
        fused = fuse(item, point)
        top = np.lexsort((np.arange(len(fused)), -fused))[:10]
        evidence, count = item[-2], item[-1]
        total += len(evidence & set(top.tolist())) / count
    return total / len(items)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="the LoCoMo dev split (locomo-dev.json)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deepmem-folds-") as tmp:
        os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(Path(tmp) / "global")
        items = questions(args.locomo, Path(tmp))
    held = []
    for conversation in sorted({item[0] for item in items}):
        train = [item for item in items if item[0] != conversation]
        test = [item for item in items if item[0] == conversation]
        point = max(GRID, key=lambda p: recall10(train, p))
        held.append(recall10(test, point))
        print(json.dumps({"held_out": conversation, "questions": len(test), "bm25_weight": point[0],
                          "context_weight": point[1], "context_reach": point[2], "session_weight": point[3],
                          "session_bm25_share": point[4], "label_weight": point[5],
                          "question_weight": point[6], "feedback_weight": point[7],
                          "recall@10": round(held[-1], 3)}))
    print(json.dumps({"folds": len(held), "recall@10_mean": round(statistics.mean(held), 3),
                      "recall@10_stdev": round(statistics.pstdev(held), 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
