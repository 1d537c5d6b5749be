"""Compactions that never come: would the host have compacted where the agent did, with deepmem?

    python -m bench.runners.compactions_avoided [CORPUS] [--context N --input N --output N] [--out FILE]

For each real compaction of a corpus (a session the agent split, `bench.runners.compactions`),
the segment before it and the continuation after it (less the summary that opens it) are
replayed as one session, whole requests, through deepmem as the bridge runs it: the model's
window and limits (a 200K Claude model with a 64K output limit by default), OpenCode's frame and
deepmem's own (tool schemas, memory block) before the messages, and its priced schedule with the
pressure jump (`deepmem.transform.window`). Once more without the pressure jump (the window unknown), to
show what the priced jumps do alone.

A request counts, as the host would see it, the provider's tokens of the whole request and its
answer: deepmem's estimate of it times the session's own tokenizer ratio (measured on the
segment's recorded usage as `bench.runners.token_ratio` does; the family's kept ratio when the
segment grew too little), plus the answer's recorded tokens. The host compacts at the first
request that reaches its usable window (168,000 for the default model).

Per compaction: deepmem's context at the step where the agent compacted (the segment's last
request), in estimated and in the host's tokens, against the uncompressed request; the first
step, if any, where deepmem's request reaches the host's threshold. A compaction is avoided
when no request of the recorded continuation reaches it; put off when the first that does comes
at least `PUT_OFF_STEPS` steps after the agent's compaction. Writes
`bench/results/compactions_avoided-<corpus>.json`.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import msgspec
import orjson

from bench.corpora import corpus_folder, corpus_name, load_messages
from bench.frames import corpus_additions, opencode_frame_tokens, session_additions
from bench.report import RESULTS
from bench.runners.compactions import SUMMARY_OPENING, compaction_pairs
from bench.runners.token_ratio import session_ratio
from deepmem.bill.prices import family_of_messages
from deepmem.history import message_steps
from deepmem.project.config import load_settings
from deepmem.replay.loop import Deepmem, session_steps
from deepmem.tokens import estimate_tokens
from deepmem.transform.additions import Additions
from deepmem.transform.context import context_units
from deepmem.transform.jumps import RequestFrame
from deepmem.transform.window import ModelLimits, pressure_tokens, token_ratio, usable_tokens
from deepmem.types import Message
from deepmem.vault.writer import write_given

PUT_OFF_STEPS = 20
"""A compaction that first comes this many steps after the agent's is put off."""


class Replayed(msgspec.Struct):
    """One compaction replayed: per request of the joined session, what the host would count."""

    name: str
    compacted_at: int
    """The step of the agent's compaction: the last request of the earlier segment (1-based)."""
    steps: int
    ratio: float
    measured: bool
    """The ratio is the session's own (else the family's kept one)."""
    estimate_none: list[int]
    estimate_deepmem: list[int]
    estimate_priced_only: list[int]
    host_none: list[int]
    host_deepmem: list[int]
    host_priced_only: list[int]


def joined_session(earlier: list[Message], continuation: list[Message]) -> list[Message]:
    """The earlier segment, then the continuation without the summary message that opens it."""
    def is_summary(message: Message) -> bool:
        return message["info"].get("role") == "user" and any(
            str(part.get("text") or "").startswith(SUMMARY_OPENING) for part in message["parts"] if part.get("type") == "text"
        )

    return [*earlier, *(message for message in continuation if not is_summary(message))]


def answer_tokens(message: Message) -> int:
    """The output tokens a step's answer records (0 when none)."""
    tokens = message["info"].get("tokens")
    return int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0) if isinstance(tokens, dict) else 0


def whole_estimate(messages: list[Message], frame: int) -> int:
    """deepmem's estimate of a request: the frame and its messages' visible units."""
    return frame + sum(map(estimate_tokens, context_units(messages)))


def replay_pair(earlier_path: Path, later_path: Path, limits: ModelLimits, host: int, additions: Additions) -> Replayed:
    """The joined session stepped through deepmem with and without its pressure jump (`additions`: what it
    adds, `host`: OpenCode's frame), and as recorded."""
    earlier = load_messages(earlier_path)
    messages = joined_session(earlier, load_messages(later_path))
    family = family_of_messages(messages).name
    measured = session_ratio(earlier)
    ratio = measured or token_ratio(family)
    added = additions.frame
    settings = load_settings(None)
    ceiling = pressure_tokens(limits, family)
    pressed = Deepmem(
        msgspec.structs.replace(settings, context_window=limits.context),
        additions=additions,
        request_frame=RequestFrame(host, added, ceiling),
    )
    priced_only = Deepmem(
        msgspec.structs.replace(settings, context_window=0), additions=additions, request_frame=RequestFrame(host, added)
    )
    rows: dict[str, list[int]] = {"none": [], "deepmem": [], "priced_only": []}
    hosts: dict[str, list[int]] = {"none": [], "deepmem": [], "priced_only": []}
    for step in session_steps(messages):
        answer = answer_tokens(step.message)
        for name, sent, frame in (
            ("none", step.history, host),
            ("deepmem", pressed.messages(step.history), host + added),
            ("priced_only", priced_only.messages(step.history), host + added),
        ):
            estimate = whole_estimate(sent, frame)
            rows[name].append(estimate)
            hosts[name].append(round(estimate * ratio) + answer)
    steps = message_steps(earlier)
    return Replayed(
        later_path.stem,
        steps[-1] if steps else 0,
        len(rows["none"]),
        round(ratio, 4),
        measured is not None,
        rows["none"],
        rows["deepmem"],
        rows["priced_only"],
        hosts["none"],
        hosts["deepmem"],
        hosts["priced_only"],
    )


def first_reach(counts: list[int], usable: int) -> int | None:
    """The first step (1-based) whose count reaches the host's usable window, or None."""
    return next((step for step, count in enumerate(counts, 1) if count >= usable), None)


def outcome(replayed: Replayed, counts: list[int], usable: int) -> str:
    """'avoided', 'put off' (≥ PUT_OFF_STEPS later) or 'comes' within the recorded continuation."""
    reach = first_reach(counts, usable)
    if reach is None:
        return "avoided"
    return "put off" if reach - replayed.compacted_at >= PUT_OFF_STEPS else "comes"


def row_of(replayed: Replayed, usable: int) -> dict:
    """One compaction's figures."""
    at = replayed.compacted_at - 1
    return {
        "compaction": replayed.name,
        "compacted_at_step": replayed.compacted_at,
        "steps": replayed.steps,
        "continuation_steps": replayed.steps - replayed.compacted_at,
        "ratio": replayed.ratio,
        "ratio_measured": replayed.measured,
        "at_compaction": {
            name: {"estimate": estimates[at], "host": hosts[at]}
            for name, estimates, hosts in (
                ("none", replayed.estimate_none, replayed.host_none),
                ("deepmem", replayed.estimate_deepmem, replayed.host_deepmem),
                ("priced_only", replayed.estimate_priced_only, replayed.host_priced_only),
            )
        },
        "max_host": {"deepmem": max(replayed.host_deepmem), "priced_only": max(replayed.host_priced_only)},
        "first_reach": {
            "none": first_reach(replayed.host_none, usable),
            "deepmem": first_reach(replayed.host_deepmem, usable),
            "priced_only": first_reach(replayed.host_priced_only, usable),
        },
        "outcome": {
            "deepmem": outcome(replayed, replayed.host_deepmem, usable),
            "priced_only": outcome(replayed, replayed.host_priced_only, usable),
        },
    }


def summary_of(rows: list[dict]) -> dict:
    """Counts of outcomes and the median context at the compaction step."""
    def median(name: str, unit: str) -> int:
        return round(statistics.median(row["at_compaction"][name][unit] for row in rows)) if rows else 0

    return {
        "compactions": len(rows),
        **{
            f"{kind}_{name}": sum(row["outcome"][name] == label for row in rows)
            for name in ("deepmem", "priced_only")
            for kind, label in (("avoided", "avoided"), ("put_off", "put off"), ("comes", "comes"))
        },
        "median_at_compaction": {
            name: {"estimate": median(name, "estimate"), "host": median(name, "host")}
            for name in ("none", "deepmem", "priced_only")
        },
        "max_host_deepmem": max((row["max_host"]["deepmem"] for row in rows), default=0),
        "max_host_priced_only": max((row["max_host"]["priced_only"] for row in rows), default=0),
    }


def main(argv: list[str] | None = None) -> int:
    """Replay every compaction of one corpus; print and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=corpus_folder, default="claude-entire")
    parser.add_argument("--context", type=int, default=200_000, help="the model's context window (tokens)")
    parser.add_argument("--input", type=int, default=0, help="the model's input limit (0: none)")
    parser.add_argument("--output", type=int, default=64_000, help="the model's output limit (0: none)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    name = corpus_name(args.corpus)
    limits = ModelLimits(args.context, args.input, args.output)
    usable = usable_tokens(limits)
    additions = corpus_additions(args.corpus, name)
    rows = []
    for earlier, later in compaction_pairs(args.corpus):
        replayed = replay_pair(earlier, later, limits, opencode_frame_tokens(), session_additions(additions, earlier.stem))
        row = row_of(replayed, usable)
        rows.append(row)
        at = row["at_compaction"]
        print(
            f"{replayed.name:70} step {replayed.compacted_at:4}/{replayed.steps:4}  none {at['none']['host']:>7,}  "
            f"deepmem {at['deepmem']['host']:>7,} (max {row['max_host']['deepmem']:>7,}, {row['outcome']['deepmem']})  "
            f"priced only {at['priced_only']['host']:>7,} ({row['outcome']['priced_only']})"
        )
    result = {"corpus": name, "limits": msgspec.to_builtins(limits), "usable": usable, "summary": summary_of(rows), "rows": rows}
    print(orjson.dumps(result["summary"], option=orjson.OPT_INDENT_2).decode())
    out = args.out or RESULTS / f"compactions_avoided-{name}.json"
    write_given(out, orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
