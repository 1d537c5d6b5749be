"""Our bill checked against the real one: no compression replayed on a corpus that carries the
provider's usage (`claude-entire`), compared request by request with what the provider billed.

Each session is replayed through the one replay loop (`deepmem/replay/loop.py`), its requests
counted in o200k tokens and billed at Anthropic's prices at OpenCode's marks, three ways: the
messages alone with 5-minute entries; with the session's real prefix (`bench/usage.py`)
before every request, as the frame OpenCode's `system[0]` mark covers; and that at the session's own
cache lifetime (1-hour entries at 2× the input price). For each, and for the record: the
share of input tokens read from the cache, the share written to it, and the cost per input
token as a multiple of the input price, pooled over every request and at the median
session. Then the requests where replay and record disagree, counted by cause. Writes
`bench/results/bill_check.json`.

    python -m bench.runners.bill_check [--corpus NAME|DIR] [--sessions N] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

import msgspec

from bench.corpora import corpus_folder, corpus_name, load_messages, session_paths
from bench.report import RESULTS, write_json
from bench.usage import SessionUsage, Usage, session_usage
from deepmem.bill.accounting import Meter
from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.replay.loop import TokenCounter, Uncompressed, replay_session

CORPUS = "claude-entire"
"""The corpus whose sessions carry the provider's usage."""
TARGET_READ_SHARE = 0.01
"""The replay's cache-read share may differ from the recorded one by this much."""
TARGET_COST = 0.03
"""The replay's cost per token may differ from the recorded one by this share of it."""
HIT = 0.5
"""A request that reads at least this share of its tokens from the cache hit it."""
WAYS = {
    "recorded": "recorded usage",
    "messages": "replay, messages only, 5-minute",
    "prefix": "replay + real prefix, 5-minute",
    "lifetime": "replay + real prefix, own lifetime",
}
"""The bills compared, by key: the record, then the replay billed three ways."""
CAUSES = {
    "first_request_read": "first request read a prefix an earlier session cached",
    "hit_after_pause": "hit after a pause past the lifetime",
    "hit_after_short_pause": "  of them within twice the lifetime",
    "hit_where_replay_writes": "hit where the replay writes (history changed)",
    "miss_where_replay_reads": "missed where the replay reads",
}
"""Requests where replay and record disagree, by cause."""


class Bill(msgspec.Struct):
    """Input tokens of some requests: all of them, those read from the cache, those written to
    it, and what they cost in input-price units (the rest billed at the input price)."""

    tokens: float = 0.0
    read: float = 0.0
    written: float = 0.0
    cost: float = 0.0

    def add(self, tokens: float, read: float, written: float, prices: PriceModel) -> None:
        """One request billed at `prices`."""
        self.tokens += tokens
        self.read += read
        self.written += written
        self.cost += prices.input_units(read, written, tokens - read - written)

    def merge(self, other: Bill) -> None:
        """Add another bill into this one."""
        self.tokens += other.tokens
        self.read += other.read
        self.written += other.written
        self.cost += other.cost

    def figures(self) -> dict[str, float]:
        """Read share, written share and cost per token (× the input price)."""
        whole = self.tokens or 1.0
        return {"read_share": self.read / whole, "written_share": self.written / whole, "cost_per_token": self.cost / whole}


def replayed_requests(meter: Meter, prices: PriceModel, usage: SessionUsage) -> list[tuple[int, float, Usage]]:
    """Per request with recorded usage: the replay's tokens, frame included, what it reads from
    the cache at `prices`, and the record."""
    requests = zip(
        meter.request_tokens,
        meter.request_cached,
        meter.request_marked,
        meter.request_pauses,
        meter.request_frame,
        meter.request_frame_read,
        usage.requests,
        strict=True,
    )
    return [
        (tokens + frame, prices.read_tokens(cached + frame_read, marked + frame_read, pause), recorded)
        for tokens, cached, marked, pause, frame, frame_read, recorded in requests
        if recorded is not None
    ]


def replayed_bill(meter: Meter, prices: PriceModel, usage: SessionUsage) -> Bill:
    """The replay's bill over the requests that carry a record: what is not read is written."""
    bill = Bill()
    for tokens, read, _ in replayed_requests(meter, prices, usage):
        bill.add(tokens, read, tokens - read, prices)
    return bill


def recorded_bill(usage: SessionUsage, prices: PriceModel) -> Bill:
    """What the provider billed for the session's requests."""
    bill = Bill()
    for recorded in filter(None, usage.requests):
        bill.add(recorded.tokens, recorded.cache_read, recorded.cache_write, prices)
    return bill


def disagreements(meter: Meter, prices: PriceModel, usage: SessionUsage) -> Counter[str]:
    """Requests where the replay at `prices` and the record disagree on hitting the cache, by cause."""
    causes: Counter[str] = Counter()
    pauses = [pause for pause, recorded in zip(meter.request_pauses, usage.requests, strict=True) if recorded]
    for index, ((tokens, read, recorded), pause) in enumerate(zip(replayed_requests(meter, prices, usage), pauses, strict=True)):
        ours, theirs = read >= HIT * tokens, recorded.cache_read >= HIT * recorded.tokens
        if index == 0:
            causes["first_request_read"] += recorded.cache_read > 0
        elif theirs and not ours and prices.expired(pause):
            causes["hit_after_pause"] += 1
            causes["hit_after_short_pause"] += not prices.expired(pause / 2)
        elif theirs and not ours:
            causes["hit_where_replay_writes"] += 1
        elif ours and not theirs:
            causes["miss_where_replay_reads"] += 1
    return causes


def check_session(path: Path, counter: TokenCounter) -> dict:
    """One session's bills (recorded and replayed three ways), its real prefix, lifetime and disagreements."""
    messages = load_messages(path)
    usage = session_usage(path, messages, counter)
    five = FAMILIES["anthropic"]
    own = usage.prices(five)
    bare = replay_session(messages, [Uncompressed()], counter)["none"]
    whole = replay_session(messages, [Uncompressed()], counter, frame=usage.prefix)["none"]
    bills = {
        "recorded": recorded_bill(usage, own),
        "messages": replayed_bill(bare, five, usage),
        "prefix": replayed_bill(whole, five, usage),
        "lifetime": replayed_bill(whole, own, usage),
    }
    return {
        "session": path.stem,
        "requests": sum(recorded is not None for recorded in usage.requests),
        "prefix_tokens": usage.prefix,
        "one_hour": usage.one_hour,
        "bills": {way: msgspec.to_builtins(bill) for way, bill in bills.items()},
        "figures": {way: bill.figures() for way, bill in bills.items()},
        "disagreements": dict(disagreements(whole, own, usage)),
    }


def pooled_figures(sessions: list[dict]) -> dict[str, dict[str, float]]:
    """Per way, the figures of every request of the sessions together."""
    pooled = {}
    for way in WAYS:
        bill = Bill()
        for row in sessions:
            bill.merge(Bill(**row["bills"][way]))
        pooled[way] = bill.figures()
    return pooled


def median_session(sessions: list[dict], way: str) -> dict[str, float]:
    """Each figure's median over the sessions."""
    return {name: statistics.median(row["figures"][way][name] for row in sessions) for name in ("read_share", "written_share", "cost_per_token")}


def targets(pooled: dict[str, dict], median: dict[str, dict], way: str) -> dict[str, bool]:
    """Whether `way` meets the targets against the record: read share within 0.01 and cost per
    token within 3%, pooled and at the median session."""
    met = {}
    for scope, figures in (("pooled", pooled), ("median", median)):
        ours, theirs = figures[way], figures["recorded"]
        met[f"{scope}_read_share"] = abs(ours["read_share"] - theirs["read_share"]) <= TARGET_READ_SHARE
        met[f"{scope}_cost_per_token"] = abs(ours["cost_per_token"] / theirs["cost_per_token"] - 1) <= TARGET_COST
    return met


def check_corpus(paths: list[Path], counter: TokenCounter) -> dict:
    """Every session's check with tokens counted by `counter`, the pooled and median figures per
    way, the targets and the disagreements."""
    sessions = []
    for number, path in enumerate(paths, 1):
        sessions.append(check_session(path, counter))
        print(f"\r{number}/{len(paths)} sessions checked", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    pooled = pooled_figures(sessions)
    median = {way: median_session(sessions, way) for way in WAYS}
    causes: Counter[str] = Counter()
    for row in sessions:
        causes.update(row["disagreements"])
    prefixes = [row["prefix_tokens"] for row in sessions]
    return {
        "corpus": corpus_name(paths[0].parent) if paths else "",
        "price_model": msgspec.to_builtins(FAMILIES["anthropic"]),
        "sessions_checked": len(sessions),
        "requests": sum(row["requests"] for row in sessions),
        "prefix_tokens": {"median": statistics.median(prefixes), "min": min(prefixes), "max": max(prefixes)} if prefixes else {},
        "one_hour_sessions": sum(row["one_hour"] for row in sessions),
        "pooled": pooled,
        "median_session": median,
        "pooled_one_hour_sessions": pooled_figures([row for row in sessions if row["one_hour"]]),
        "targets": {way: targets(pooled, median, way) for way in WAYS if way != "recorded"},
        "disagreements": {cause: causes[cause] for cause in CAUSES},
        "sessions": sessions,
    }


def format_check(result: dict) -> str:
    """The figures as a table, the targets and the disagreements."""
    names = ("read_share", "written_share", "cost_per_token")
    header = f"{'':<38}{'read':>7}{'written':>9}{'cost/tok':>10}  |{'read':>7}{'written':>9}{'cost/tok':>10}"
    lines = [
        f"{result['corpus']}: {result['sessions_checked']} sessions, {result['requests']:,} requests; "
        f"real prefix median {result['prefix_tokens'].get('median', 0):,.0f} tokens; "
        f"{result['one_hour_sessions']} sessions with 1-hour entries",
        f"{'':<38}{'pooled':^26}  |{'median session':^26}",
        header,
        "-" * len(header),
    ]
    for way, label in WAYS.items():
        pooled = result["pooled"][way]
        median = result["median_session"][way]
        lines.append(
            f"{label:<38}" + "".join(f"{pooled[name]:>{width}.3f}" for name, width in zip(names, (7, 9, 10), strict=True))
            + "  |" + "".join(f"{median[name]:>{width}.3f}" for name, width in zip(names, (7, 9, 10), strict=True))
        )
    hour = result["pooled_one_hour_sessions"]
    lines += ["", f"the {result['one_hour_sessions']} sessions with 1-hour entries, pooled"]
    lines += [
        f"{label:<38}" + "".join(f"{hour[way][name]:>{width}.3f}" for name, width in zip(names, (7, 9, 10), strict=True))
        for way, label in WAYS.items()
    ]
    lines += ["", f"targets (read share within {TARGET_READ_SHARE}, cost per token within {TARGET_COST:.0%})"]
    for way, met in result["targets"].items():
        lines.append(f"  {WAYS[way]:<36}" + "  ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in met.items()))
    lines += ["", "requests where replay and record disagree (own lifetime, real prefix)"]
    lines += [f"  {label:<52}{result['disagreements'][cause]:>6}" for cause, label in CAUSES.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Check the bill, print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.bill_check", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, default=CORPUS, help="a corpus whose sessions record their usage")
    parser.add_argument("--sessions", type=int, help="check only the first N sessions (by name)")
    parser.add_argument("--out", type=Path, default=RESULTS / "bill_check.json")
    args = parser.parse_args(argv)
    paths = session_paths(args.corpus, args.sessions)
    if not paths:
        parser.error(f"no sessions in {args.corpus}")
    from bench.tokens_o200k import TokenCounter as O200kCounter  # the bench extra, needed only here

    result = check_corpus(paths, O200kCounter())
    print(format_check(result), end="")
    write_json(result, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
