"""Should the running bills stop a session's jumps? Gates on the priced schedule, weighed per session.

    python -m bench.runners.jump_gates [--corpus NAME ...]

Each session is priced by the schedule's own cost model (`deepmem.transform.jumps`: whole requests, the
host's frame and deepmem's additions of `bench/results/additions-<corpus>.json`, at the
corpus's prices), once per schedule:

- priced: the schedule deepmem runs (a jump once waiting has cost what it costs);
- hindsight: the cheapest jumps knowing the whole session (`bench.contenders.hindsight`);
- behind-waits: the priced schedule, but no jump that pays while the session's running
  bill with deepmem is above the bill without it (a cold or window jump still goes);
- later-behind-waits: the same, from the second jump on (the first is never blocked);
- waits-twice: a jump once waiting has cost twice what it costs;
- warm-guess-first: the priced schedule, whose first paying jump also goes once what it
  removes, rented over the requests of the warm run so far (since the last request after a
  pause past the cache's lifetime), covers what it costs: a guess that the warm run lasts
  as long again.

Per corpus and schedule it prints the median session, the sessions costlier than none, the
worst and the pooled ratio, and writes `bench/results/jump_gates.json`. Only the messages'
own sizes are priced here, so the figures are the schedule's estimate, not the replay's bill.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path

from bench.contenders.hindsight import hindsight_jumps
from bench.corpora import billed_at, corpora, corpus_folder, corpus_name, load_messages, session_paths
from bench.frames import corpus_additions, opencode_frame_tokens, session_additions
from bench.report import RESULTS, write_json
from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.transform.jumps import (
    Bills,
    RequestFrame,
    Sizes,
    bill_request,
    jump_premium,
    jump_reason,
    priced_jumps,
    removed_tokens,
    running_bills,
)
from deepmem.transform.schedule import session_sizes
from deepmem.types import Settings

Gate = Callable[[Bills, int], bool]
"""(the bills so far, jumps made) → whether a jump that pays may go."""


Guess = Callable[[Sizes, int, int, int, PriceModel, int], bool]
"""(sizes, step, boundary, target, prices, jumps made) → whether to jump now on a guess of what is to come."""


def gated_jumps(
    sizes: Sizes, settings: Settings, prices: PriceModel, gate: Gate, patience: float = 1.0, guess: Guess | None = None
) -> tuple[int, ...]:
    """The priced schedule with its paying jumps held back by `gate`, waiting `patience` times the
    premium, and made sooner where `guess` says so."""
    jumps, waited, bills = [0], 0.0, Bills()
    bill_request(bills, sizes, 0, jumps, settings, prices)
    for step in range(1, len(sizes.tokens)):
        boundary, target = jumps[-1], step - settings.tail_steps
        if target > boundary:
            waited += prices.rent(max(removed_tokens(sizes, boundary, target), 0))
            reason = jump_reason(sizes, step, boundary, waited / patience, settings, prices)
            guessed = guess is not None and guess(sizes, step, boundary, target, prices, len(jumps) - 1)
            if guessed or (reason and (reason != "pays" or gate(bills, len(jumps) - 1))):
                jumps.append(target)
                waited = 0.0
        bill_request(bills, sizes, step, jumps, settings, prices)
    return tuple(jumps)


def warm_age(sizes: Sizes, step: int) -> int:
    """Requests made since the last one that found the cache cold (or the session's first)."""
    return step - max((cold for cold in range(step + 1) if sizes.cold[cold]), default=0)


def first_on_warm_age(sizes: Sizes, step: int, boundary: int, target: int, prices: PriceModel, made: int) -> bool:
    """The first jump, once what it removes at the read price, over the warm run's age so far, covers its premium."""
    rent = prices.rent(max(removed_tokens(sizes, boundary, target), 0))
    return made == 0 and rent > 0 and rent * warm_age(sizes, step) >= jump_premium(sizes, step, boundary, target, prices)


def never(bills: Bills, made: int) -> bool:
    """No gate."""
    return True


def not_behind(bills: Bills, made: int) -> bool:
    """A paying jump only while the session costs no more with deepmem than without."""
    return bills.deepmem <= bills.none


def first_or_not_behind(bills: Bills, made: int) -> bool:
    """The first paying jump always; a later one only while the session is not behind."""
    return made == 0 or not_behind(bills, made)


SCHEDULES: dict[str, Callable[[Sizes, Settings, PriceModel], tuple[int, ...]]] = {
    "priced": priced_jumps,
    "hindsight": hindsight_jumps,
    "behind-waits": lambda sizes, settings, prices: gated_jumps(sizes, settings, prices, not_behind),
    "later-behind-waits": lambda sizes, settings, prices: gated_jumps(sizes, settings, prices, first_or_not_behind),
    "waits-twice": lambda sizes, settings, prices: gated_jumps(sizes, settings, prices, never, patience=2.0),
    "warm-guess-first": lambda sizes, settings, prices: gated_jumps(sizes, settings, prices, never, guess=first_on_warm_age),
}


def corpus_rows(folder: Path, settings: Settings) -> dict[str, dict[str, float]]:
    """Per schedule: median session, sessions costlier than none, worst and pooled ratio over the corpus."""
    name = corpus_name(folder)
    prices = FAMILIES[billed_at(name)]
    additions = corpus_additions(folder, name)
    ratios: dict[str, list[float]] = {schedule: [] for schedule in SCHEDULES}
    pooled = {schedule: Bills() for schedule in SCHEDULES}
    for path in session_paths(folder):
        frame = RequestFrame(opencode_frame_tokens(), session_additions(additions, path.stem).frame)
        sizes = session_sizes(load_messages(path), settings, prices, frame)
        for schedule, jumps_of in SCHEDULES.items():
            bills = running_bills(sizes, jumps_of(sizes, settings, prices), settings, prices)
            ratios[schedule].append(bills.deepmem / bills.none if bills.none else 1.0)
            pooled[schedule].deepmem += bills.deepmem
            pooled[schedule].none += bills.none
    return {
        schedule: {
            "sessions": len(values),
            "median": statistics.median(values) if values else 1.0,
            "costlier": sum(value > 1.0 for value in values),
            "worst": max(values, default=1.0),
            "pooled": pooled[schedule].deepmem / pooled[schedule].none if pooled[schedule].none else 1.0,
        }
        for schedule, values in ratios.items()
    }


def main(argv: list[str] | None = None) -> int:
    """Weigh every schedule on each corpus; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or folder (repeatable; default: every corpus)")
    args = parser.parse_args(argv)
    folders = args.corpus or list(corpora().values())
    result: dict[str, dict] = {}
    print(f"{'corpus':14} {'schedule':20} {'median':>7} {'costlier':>10} {'worst':>7} {'pooled':>7}")
    for folder in folders:
        rows = result[corpus_name(folder)] = corpus_rows(folder, Settings())
        for schedule, row in rows.items():
            costlier = f"{row['costlier']} of {row['sessions']}"
            print(f"{corpus_name(folder):14} {schedule:20} {row['median']:7.3f} {costlier:>10} {row['worst']:7.3f} {row['pooled']:7.3f}")
    write_json(result, RESULTS / "jump_gates.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
