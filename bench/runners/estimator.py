"""How close `deepmem.tokens.estimate_tokens` is to exact o200k counts, and how fast.

    python -m bench.runners.estimator [--sessions N]

Measures every visible text on the corpus, per part kind and per whole session (ratio of
estimated to exact tokens; the target is 0.85–1.15), and the estimator's throughput.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import orjson

from bench.corpora import DEFAULT, corpus_folder, load_messages, session_paths
from bench.tokens_o200k import TokenCounter
from deepmem.history import is_user_typed
from deepmem.tokens import estimate_tokens
from deepmem.types import Message

TOLERANCE = 0.15


def kind_texts(messages: list[Message]) -> list[tuple[str, str]]:
    """(kind, text) for every text a model sees: prose, reasoning, tool inputs and outputs."""
    found = []
    for message in messages:
        role = message["info"]["role"]
        for part in message["parts"]:
            kind = part.get("type")
            if kind in ("text", "reasoning") and isinstance(part.get("text"), str):
                label = "user text" if is_user_typed(message, part) else f"{role} {kind}"
                found.append((label, part["text"]))
            elif kind == "tool":
                state = part.get("state") or {}
                found.append(("tool input", orjson.dumps(state.get("input")).decode()))
                for field in ("output", "error"):
                    if isinstance(state.get(field), str):
                        found.append((f"tool {field}", state[field]))
    return found


def measure(paths: list[Path]) -> dict:
    """Estimated vs exact totals per kind and per session, worst ratios, throughput."""
    counter = TokenCounter()
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    sessions = {}
    texts: list[str] = []
    for path in paths:
        pairs = kind_texts(load_messages(path))
        exact = counter.count_many([text for _, text in pairs])
        session = [0, 0]
        for (kind, text), tokens in zip(pairs, exact, strict=True):
            estimate = estimate_tokens(text)
            for row in (kinds[kind], session):
                row[0] += estimate
                row[1] += tokens
        sessions[path.stem] = session[0] / session[1]
        texts.extend(text for _, text in pairs)
    start = time.perf_counter()
    for text in texts:
        estimate_tokens(text)
    seconds = time.perf_counter() - start
    chars = sum(map(len, texts))
    return {
        "kinds": {kind: {"estimated": e, "exact": x, "ratio": e / x} for kind, (e, x) in sorted(kinds.items())},
        "sessions": sessions,
        "throughput_mb_per_s": chars / seconds / 1e6,
        "chars": chars,
    }


def format_measure(result: dict) -> str:
    """Plain tables."""
    lines = [f"{'kind':<22}{'estimated':>12}{'o200k':>12}{'ratio':>8}", "-" * 54]
    for kind, row in result["kinds"].items():
        lines.append(f"{kind:<22}{row['estimated']:>12,}{row['exact']:>12,}{row['ratio']:>8.3f}")
    total_e = sum(row["estimated"] for row in result["kinds"].values())
    total_x = sum(row["exact"] for row in result["kinds"].values())
    lines.append(f"{'all':<22}{total_e:>12,}{total_x:>12,}{total_e / total_x:>8.3f}")
    ratios = sorted(result["sessions"].values())
    inside = sum(abs(r - 1) <= TOLERANCE for r in ratios)
    lines.append(
        f"per session ({len(ratios)}): min {ratios[0]:.3f}, median {ratios[len(ratios) // 2]:.3f}, "
        f"max {ratios[-1]:.3f}; {inside} within ±{TOLERANCE:.0%}"
    )
    lines.append(f"estimator throughput: {result['throughput_mb_per_s']:.0f} M chars/s over {result['chars']:,} chars")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the estimator's accuracy and speed on the corpus."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.estimator", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    parser.add_argument("--sessions", type=int, help="only the first N sessions")
    args = parser.parse_args(argv)
    print(format_measure(measure(session_paths(args.corpus, args.sessions))), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
