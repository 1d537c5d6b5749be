"""Fidelity of compression on the evidence fixtures: visible, restorable or lost, per kind.

    python -m bench.runners.fidelity

The same check backs `tests/test_fidelity.py`. Each session of `fixtures/evidence/` is
compressed at its last step; an evidence item is *visible* when the compressed text of
the part that held it still contains it, *restorable* when an original reachable from
that part (a marker's CCR key, or the whole-part key in `metadata.deepmem.part`) does.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import orjson

from bench.corpora import REPOSITORY
from deepmem.history import visible_text
from deepmem.markers import marker_keys, shown_key
from deepmem.transform.outcomes import PART_KEY
from deepmem.transform.plan import apply_edits, plan_transform
from deepmem.types import Part, Settings, Tier
from deepmem.vault.sessionio import read_session

EVIDENCE = REPOSITORY / "fixtures" / "evidence"
EVIDENCE_SETS = {"swe-gemini3": EVIDENCE, "swe-deepseek": EVIDENCE.parent / "evidence-deepseek"}
"""The evidence fixtures of each corpus, reported and gated on their own."""
STATUSES = ("visible", "restorable", "lost")


def restorable_texts(part: Part, originals: dict[str, str]) -> list[str]:
    """Originals reachable from a part: its markers' keys, its whole-part key, and markers
    inside those originals in turn."""
    pending = marker_keys(visible_text(part))
    whole = ((part.get("metadata") or {}).get("deepmem") or {}).get(PART_KEY)
    if isinstance(whole, str):
        pending.append(whole)
    seen: set[str] = set()
    texts = []
    while pending:
        key = pending.pop()
        if key in seen or key not in originals:
            continue
        seen.add(key)
        text = originals[key]
        if key == whole:
            text = visible_text(orjson.loads(text))
        texts.append(text)
        pending.extend(marker_keys(text))
    return texts


def item_status(text: str, part: Part, originals: dict[str, str]) -> str:
    """'visible', 'restorable' or 'lost' for one evidence string of one compressed part."""
    if text in visible_text(part):
        return "visible"
    if any(text in original for original in restorable_texts(part, originals)):
        return "restorable"
    return "lost"


EvidenceOutcome = tuple[dict[str, str], str, bool]
"""An evidence item, its status, and whether its part was old (before the boundary)."""


def session_outcomes(
    path: Path, items: list[dict[str, str]], settings: Settings, tier: Tier | None
) -> list[EvidenceOutcome]:
    """Each evidence item of one session with its status after compression at the last step."""
    messages = read_session(str(path)).messages
    plan = plan_transform(messages, settings, tier)
    compressed = apply_edits(messages, plan.edits)
    originals = {key: original.text for original in plan.originals for key in (original.key, shown_key(original.key))}
    parts = {part.get("id"): part for message in compressed for part in message["parts"]}
    old = {message["info"]["id"] for message in messages[: plan.layout.first_young]}
    return [
        (item, item_status(item["text"], parts[item["part"]], originals), item["message"] in old)
        for item in items
    ]


def load_evidence(folder: Path = EVIDENCE) -> dict[str, list[dict[str, str]]]:
    """Session file name → evidence items."""
    return json.loads((folder / "evidence.json").read_text(encoding="utf-8"))


def outcomes(tier: Tier | None, settings: Settings | None = None, folder: Path = EVIDENCE) -> dict[str, list[EvidenceOutcome]]:
    """Per session of the fixtures, each item with its status."""
    return {
        name: session_outcomes(folder / "sessions" / name, items, settings or Settings(), tier)
        for name, items in sorted(load_evidence(folder).items())
    }


def format_outcomes(label: str, result: dict[str, list[EvidenceOutcome]]) -> str:
    """Counts per kind of evidence, the visible share, and the visible share of old items."""
    by_kind: dict[str, Counter] = {}
    for rows in result.values():
        for item, status, old in rows:
            counts = by_kind.setdefault(item["kind"], Counter())
            counts[status] += 1
            counts["old"] += old
            counts["old visible"] += old and status == "visible"
    total = sum(by_kind.values(), Counter())
    header = f"{'kind':<16}{'items':>7}" + "".join(f"{s:>12}" for s in STATUSES)
    lines = [label, header + f"{'visible':>9}{'old items':>11}{'old visible':>13}"]
    for kind, counts in [*sorted(by_kind.items()), ("all", total)]:
        n = sum(counts[s] for s in STATUSES)
        lines.append(
            f"{kind:<16}{n:>7}"
            + "".join(f"{counts[s]:>12}" for s in STATUSES)
            + f"{counts['visible'] / n:>9.1%}{counts['old']:>11}{counts['old visible'] / max(counts['old'], 1):>13.1%}"
        )
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """Print the fidelity table of each corpus at default settings (automatic tier) and at tier high."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.fidelity", description=__doc__.split("\n")[0])
    parser.parse_args(argv)
    for corpus, folder in EVIDENCE_SETS.items():
        for label, tier in (("default settings, automatic tier", None), ("tier high", "high")):
            print(format_outcomes(f"{corpus}: {label}", outcomes(tier, folder=folder)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
