"""Memory search benchmark: LoCoMo evidence retrieval (BM25, embeddings, hybrid) and latency.

    python -m bench.runners.memory            # retrieval + latency
    python -m bench.runners.memory --quality  # retrieval only

Reads the LoCoMo dev split from ../shared/datasets/locomo-dev/ (CC BY-NC 4.0: read in
place, never copied into this repository). Each conversation gets a store of its own in a
temporary folder; every turn is one memory; every question of categories 1-4 is a query.
Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.corpora import REPOSITORY
from deepmem.memory import api
from deepmem.memory.entries import Entry
from deepmem.memory.search import BM25_WEIGHT
from deepmem.memory.store import import_entries
from deepmem.project.folder import Project

LOCOMO = REPOSITORY.parent / "shared" / "datasets" / "locomo-dev" / "locomo-dev.json"
EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
SYSTEMS = {"bm25": 1.0, "embeddings": 0.0, "hybrid": BM25_WEIGHT}


def turns(conversation: dict) -> list[Entry]:
    """Every turn as a memory: `speaker: text` (+ image caption), timed by its session date."""
    entries = []
    for key, value in conversation.items():
        if not (key.startswith("session_") and isinstance(value, list)):
            continue
        date = conversation.get(f"{key}_date_time", "")
        for turn in value:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" (image: {turn['blip_caption']})"
            entries.append(Entry(turn["dia_id"], "fact", text, date))
    return entries


def evidence_ids(raw: list[str]) -> set[str]:
    """Evidence ids normalised (`D:11:26` → `D11:26`, `D8:6; D9:17` → both); unreadable ones dropped."""
    return {f"D{a}:{b}" for item in raw for a, b in EVIDENCE_ID.findall(item)}


def scores(ranked: list[str], evidence: set[str]) -> tuple[float, float, float]:
    """Recall@5, recall@10 and NDCG@10 of one ranking."""
    recall5 = len(evidence & set(ranked[:5])) / len(evidence)
    recall10 = len(evidence & set(ranked[:10])) / len(evidence)
    dcg = sum(1 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:10]) if doc in evidence)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(evidence), 10)))
    return recall5, recall10, dcg / ideal


def quality(base: Path, data: Path) -> None:
    """Evidence recall@5/@10 and NDCG@10 over LoCoMo dev categories 1-4, per system."""
    samples = json.loads(data.read_text())
    totals = {name: [0.0, 0.0, 0.0] for name in SYSTEMS}
    questions = 0
    for sample in samples:
        root = Project.load(base / sample["sample_id"])
        import_entries(root, turns(sample["conversation"]))
        for qa in sample["qa"]:
            evidence = evidence_ids(qa.get("evidence", []))
            if qa["category"] not in (1, 2, 3, 4) or not evidence:
                continue
            questions += 1
            for name, weight in SYSTEMS.items():
                ranked = [hit.entry.id for hit in api.ranked(root, qa["question"], 10, "project", bm25_weight=weight)]
                for slot, value in enumerate(scores(ranked, evidence)):
                    totals[name][slot] += value
    for name, (recall5, recall10, ndcg) in totals.items():
        print(json.dumps({"bench": "locomo-dev", "system": name, "questions": questions,
                          "recall@5": round(recall5 / questions, 3), "recall@10": round(recall10 / questions, 3),
                          "ndcg@10": round(ndcg / questions, 3)}))


def synthetic(count: int, seed: int) -> list[Entry]:
    """Seeded memories built from LoCoMo-sized sentences over a 5,000-word vocabulary."""
    rng = random.Random(seed)
    words = [f"{rng.choice('bcdfghklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{n}" for n in range(5_000)]
    return [Entry(f"s{n}", "fact", " ".join(rng.choices(words, k=rng.randint(8, 24)))) for n in range(count)]


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def p90_ms(samples: list[float]) -> float:
    return round(statistics.quantiles(samples, n=10)[-1] * 1000, 3)


def latency(base: Path) -> None:
    """Search median at 1K and 100K memories, store median at 10K."""
    queries = [entry.text.split()[:5] for entry in synthetic(200, seed=7)]
    for count in (1_000, 100_000):
        root = Project.load(base / f"search-{count}")
        import_entries(root, synthetic(count, seed=1))
        api.search(root, "warm up the index", 10, "project")
        times = []
        for words in queries:
            start = time.perf_counter()
            api.search(root, " ".join(words), 10, "project")
            times.append(time.perf_counter() - start)
        print(json.dumps({"bench": "search", "memories": count, "median_ms": median_ms(times),
                          "p90_ms": p90_ms(times)}))
    root = Project.load(base / "store-10000")
    import_entries(root, synthetic(10_000, seed=2))
    fresh = synthetic(10_200, seed=3)[10_000:]
    api.store(root, fresh[0].text, "fact")
    times = []
    for entry in fresh[1:]:
        start = time.perf_counter()
        api.store(root, entry.text, "fact")
        times.append(time.perf_counter() - start)
    print(json.dumps({"bench": "store", "memories": 10_000, "median_ms": median_ms(times), "p90_ms": p90_ms(times)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quality", action="store_true", help="retrieval quality only")
    parser.add_argument("--latency", action="store_true", help="latency only")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="the LoCoMo dev split (locomo-dev.json)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deepmem-bench-") as tmp:
        os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(Path(tmp) / "global")
        if not args.latency:
            if not args.locomo.is_file():
                print(f"skipped: {args.locomo} not found (the LoCoMo dev split is not shipped)", file=sys.stderr)
            else:
                quality(Path(tmp), args.locomo)
        if not args.quality:
            latency(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
