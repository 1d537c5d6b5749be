"""Transform speed and memory on long histories built by concatenating corpus sessions.

Run alone with `python -m bench.runners.latency`; `python -m bench.replay` runs it too unless told not to.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bench.corpora import DEFAULT, corpus_folder, load_messages, session_paths
from bench.tokens_o200k import TokenCounter
from deepmem.history import step_indexes
from deepmem.transform.context import context_units
from deepmem.transform.outcomes import message_digest
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import Message, Settings


def concatenated_history(paths: list[Path], tokens: int, counter: TokenCounter) -> tuple[list[Message], int]:
    """Sessions appended one after another, cut at the first message that reaches `tokens` o200k tokens."""
    history: list[Message] = []
    total = 0
    for path in paths:
        for message in load_messages(path):
            history.append(message)
            total += sum(counter.count_many(context_units([message])))
            if total >= tokens:
                return history, total
    return history, total


def transform(history: list[Message], settings: Settings, digests: list[bytes | None] | None = None) -> list[Message]:
    """One in-process transform: plan, then apply its edits and appended parts."""
    return apply_transform(history, plan_transform(history, settings, digests=digests))


def timed(action: Callable[[], object]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def next_step(history: list[Message], held: list[bytes | None], settings: Settings) -> list[bytes | None]:
    """Transform a step as the engine does: digests of the messages already seen are kept,
    the newer ones (and the last one seen, which may have grown) are hashed."""
    digests = held[: max(len(held) - 1, 0)]
    digests += [message_digest(message) for message in history[len(digests) :]]
    transform(history, settings, digests)
    return digests


def per_step_latency(history: list[Message], settings: Settings, steps: int) -> dict[str, float]:
    """Median and max time to transform the history at each of its last `steps` steps."""
    indexes = list(step_indexes(history))[-steps:]
    held = next_step(history[: indexes[0]], [], settings)  # the step before, as a running engine saw it
    seconds = []
    for index in indexes:
        start = time.perf_counter()
        held = next_step(history[:index], held, settings)
        seconds.append(time.perf_counter() - start)
    return {"steps": len(seconds), "median_ms": 1000 * statistics.median(seconds), "max_ms": 1000 * max(seconds)}


def cold_transform(history: list[Message], settings: Settings, trace: bool) -> dict[str, float]:
    """One full transform: its time, or (traced, which slows it) its peak allocated memory."""
    if not trace:
        return {"seconds": timed(lambda: transform(history, settings))}
    tracemalloc.start()
    transform(history, settings)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "peak_traced_mb": peak / 2**20,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _per_step_child(paths: list[Path], settings: Settings, steps: int) -> dict[str, float]:
    history, tokens = concatenated_history(paths, 200_000, TokenCounter())
    return {"history_tokens": tokens, "messages": len(history)} | per_step_latency(history, settings, steps)


def _cold_child(paths: list[Path], settings: Settings, trace: bool) -> dict[str, float]:
    history, tokens = concatenated_history(paths, 1_000_000, TokenCounter())
    return {"history_tokens": tokens, "messages": len(history)} | cold_transform(history, settings, trace)


def in_fresh_process(function: Callable[..., dict[str, float]], *args: object) -> dict[str, float]:
    """Run a measurement in a new interpreter, so no cache of an earlier run makes it warm."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


COLD_RUNS = 3
"""Cold transforms timed, each in a fresh interpreter: one run on a shared machine varies by a fifth."""


def measure_latency(paths: list[Path], settings: Settings, steps: int = 20) -> dict[str, dict[str, float]]:
    """Per-step latency on a ~200K-token history and a cold transform of a ~1M-token one (the median
    of COLD_RUNS runs, with the fastest and slowest)."""
    runs = [in_fresh_process(_cold_child, paths, settings, False) for _ in range(COLD_RUNS)]
    times = sorted(run["seconds"] for run in runs)
    cold = runs[0] | {"seconds": statistics.median(times), "fastest": times[0], "slowest": times[-1]}
    return {
        "per_step_200k": in_fresh_process(_per_step_child, paths, settings, steps),
        "cold_1m": cold | in_fresh_process(_cold_child, paths, settings, True),
    }


def format_latency(result: dict[str, dict[str, float]]) -> str:
    """Two lines of plain text."""
    step, cold = result["per_step_200k"], result["cold_1m"]
    return (
        f"per step, {step['history_tokens']:,}-token history ({step['messages']} messages): "
        f"median {step['median_ms']:.1f} ms, max {step['max_ms']:.1f} ms over {step['steps']} steps\n"
        f"cold transform, {cold['history_tokens']:,}-token history ({cold['messages']} messages): "
        f"{cold['seconds']:.2f} s (median of {COLD_RUNS} runs, {cold['fastest']:.2f}–{cold['slowest']:.2f}), "
        f"peak traced {cold['peak_traced_mb']:.0f} MB, "
        f"max RSS {cold['max_rss_mb']:.0f} MB\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the latency figures for the default settings."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.latency", description=__doc__)
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    parser.add_argument("--steps", type=int, default=20, help="steps timed on the 200K history")
    args = parser.parse_args(argv)
    result = measure_latency(session_paths(args.corpus), Settings(), args.steps)
    print(format_latency(result), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
