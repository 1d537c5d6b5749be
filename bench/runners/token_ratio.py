"""How many tokens a provider counts for each token of deepmem's estimate, from the usage the corpora recorded.

    python -m bench.runners.token_ratio [CORPUS ...] [--out FILE]

deepmem decides when a request nears the host's compaction point in its own estimate
(`deepmem.tokens`, close to o200k), while the host counts what the provider billed. Every
assistant message of the shared corpora records that count for its request (`bench.usage`).
Per session, the ratio is the growth of the recorded count between its first and its last
recorded request over the growth of deepmem's estimate of the same requests' messages: what
every request carries before its messages (system prompt, tools) cancels out. Only sessions
whose estimate grows by at least `MIN_GROWTH` tokens are measured, so one odd request does not
decide a ratio. Also per corpus: the answer tokens a step records (the host counts them with the
request). Per provider family the pooled ratios of its corpora; `deepmem.transform.window.TOKEN_RATIOS`
keeps each family's 90th percentile with a margin. Writes `bench/results/token_ratio.json`.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import orjson

from bench.corpora import corpora, corpus_folder, corpus_name, load_messages, session_paths
from bench.report import RESULTS
from bench.usage import recorded_usage
from deepmem.bill.prices import family_of_messages
from deepmem.replay.loop import session_steps
from deepmem.tokens import estimate_tokens
from deepmem.transform.context import context_units
from deepmem.transform.window import ANSWER_TOKENS, TOKEN_RATIOS
from deepmem.types import Message
from deepmem.vault.writer import write_given

MIN_GROWTH = 20_000
"""Estimated tokens a session's history must grow by between its first and last recorded request."""


def quantile(values: list[float], share: float) -> float:
    """The value at `share` of the sorted values (nearest rank); 0 when none."""
    ordered = sorted(values)
    return ordered[round(share * (len(ordered) - 1))] if ordered else 0.0


def session_ratio(messages: list[Message]) -> float | None:
    """Recorded tokens per estimated token over the session's growth; None when it grew too little."""
    points = []
    for step in session_steps(messages):
        usage = recorded_usage(step.message)
        if usage is not None:
            points.append((sum(map(estimate_tokens, context_units(step.history))), usage.tokens))
    if len(points) < 2 or points[-1][0] - points[0][0] < MIN_GROWTH:
        return None
    (first_estimate, first_count), (last_estimate, last_count) = points[0], points[-1]
    return (last_count - first_count) / (last_estimate - first_estimate)


def answer_tokens(messages: list[Message]) -> list[int]:
    """The output tokens each assistant message records (its answer, as the host counts it)."""
    found = []
    for message in messages:
        tokens = message["info"].get("tokens") if message["info"].get("role") == "assistant" else None
        if isinstance(tokens, dict) and isinstance(tokens.get("output"), int):
            found.append(tokens["output"] + int(tokens.get("reasoning") or 0))
    return found


def summary(values: list[float]) -> dict[str, float]:
    """Median, 90th percentile and maximum, rounded."""
    return {
        "median": round(statistics.median(values), 3) if values else 0.0,
        "p90": round(quantile(values, 0.9), 3),
        "max": round(max(values, default=0.0), 3),
    }


def measure_corpus(folder: Path) -> dict:
    """Per-session ratios and answer sizes of one corpus, and the family its sessions name."""
    ratios: dict[str, float] = {}
    answers: list[int] = []
    families: dict[str, int] = {}
    for path in session_paths(folder):
        messages = load_messages(path)
        family = family_of_messages(messages).name
        families[family] = families.get(family, 0) + 1
        answers.extend(answer_tokens(messages))
        ratio = session_ratio(messages)
        if ratio is not None:
            ratios[path.stem] = round(ratio, 4)
    return {
        "family": max(families, key=families.__getitem__) if families else "unknown",
        "sessions_measured": len(ratios),
        "ratio": summary(list(ratios.values())),
        "answer_tokens": {"p99": int(quantile(answers, 0.99)), "max": max(answers, default=0)},
        "sessions": ratios,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure each corpus named (every shared one by default) and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="*", type=corpus_folder, help="corpus names or folders (default: every shared corpus)")
    parser.add_argument("--out", type=Path, default=RESULTS / "token_ratio.json")
    args = parser.parse_args(argv)
    folders = args.corpus or [folder for name, folder in corpora().items() if name != "fixtures"]
    rows = {corpus_name(folder): measure_corpus(folder) for folder in folders}
    pooled: dict[str, list[float]] = {}
    for row in rows.values():
        pooled.setdefault(row["family"], []).extend(row["sessions"].values())
    families = {family: {**summary(values), "kept": TOKEN_RATIOS.get(family)} for family, values in sorted(pooled.items())}
    for name, row in rows.items():
        ratio, answers = row["ratio"], row["answer_tokens"]
        print(
            f"{name:15} {row['family']:9} sessions {row['sessions_measured']:3}  ratio median {ratio['median']:.3f} "
            f"p90 {ratio['p90']:.3f} max {ratio['max']:.3f}  answer p99 {answers['p99']:,} max {answers['max']:,}"
        )
    for family, row in families.items():
        print(f"{family:9} pooled p90 {row['p90']:.3f} max {row['max']:.3f}  kept {row['kept']}")
    result = {"min_growth": MIN_GROWTH, "answer_tokens_kept": ANSWER_TOKENS, "families": families, "corpora": rows}
    write_given(args.out, orjson.dumps(result, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
