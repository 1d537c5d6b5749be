"""A threshold chosen leaving each corpus out in turn, from replays at each of its values.

    python -m bench.runners.leave_one_out --setting NAME --value V=FOLDER [--value V=FOLDER ...]

Each FOLDER holds the `replay-<corpus>.json` of `python -m bench.replay --setting NAME=V` (the
corpora the folders share are used). For each corpus in turn, the value is chosen on the others
alone, by each of two rules (a smaller cap trims more when an output is first seen, so it is
cheaper, and keeps fewer lines):

- lines: the smallest value whose quoted lines in view on every other corpus stay within
  `TOLERANCE` of the most that any value keeps there;
- reread: the value of the lowest mean cost over the other corpora, each quoted line out of
  view paid for by reading its output again (`cost_recovered`).

The corpus left out is then reported at each rule's value: quoted lines, steps supported,
pooled cost and median session, beside the same at every value. Prints the table and writes
`bench/results/leave_one_out-<NAME>.json`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.report import RESULTS, write_json

TOLERANCE = 0.001
"""Quoted lines in view a value may lose on a corpus against the best value there (0.1 point)."""
FIGURES = ("support", "steps_supported", "cost_warm", "cost_recovered")


def parse_value(text: str) -> tuple[float, Path]:
    """'350=/tmp/caps/350' → (350, that folder)."""
    value, given, folder = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = None
    if not given or number is None or not Path(folder).is_dir():
        raise argparse.ArgumentTypeError(f"expected VALUE=FOLDER of replay results, got {text!r}")
    return number, Path(folder)


def corpus_figures(folder: Path) -> dict[str, dict[str, float]]:
    """Corpus → deepmem's pooled figures and median session in one folder of replay results."""
    found = {}
    for path in sorted(folder.glob("replay-*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        if not result.get("sessions"):
            continue
        model = result["price_models"][0]["name"]
        totals = result["totals"]["ratios"][model][f"deepmem@{model}"]
        found[result["corpus"]] = {
            **{name: totals[name] for name in FIGURES},
            "median": result["spread"][model][f"deepmem@{model}"]["median"],
        }
    return found


def chosen_value(figures: dict[float, dict[str, dict[str, float]]], corpora: list[str]) -> float:
    """The smallest value keeping, on each of `corpora`, quoted lines within TOLERANCE of the best value there."""
    best = {corpus: max(by_corpus[corpus]["support"] for by_corpus in figures.values()) for corpus in corpora}
    keeping = [
        value
        for value, by_corpus in figures.items()
        if all(by_corpus[corpus]["support"] >= best[corpus] - TOLERANCE for corpus in corpora)
    ]
    return min(keeping)


def cheapest_value(figures: dict[float, dict[str, dict[str, float]]], corpora: list[str]) -> float:
    """The value of the lowest mean cost over `corpora`, lines out of view read again."""
    return min(figures, key=lambda value: (sum(figures[value][corpus]["cost_recovered"] for corpus in corpora), value))


RULES = {"lines": chosen_value, "reread": cheapest_value}


def leave_one_out(figures: dict[float, dict[str, dict[str, float]]]) -> dict[str, dict]:
    """Per corpus: the value each rule chooses without it, its figures there, and at every value."""
    corpora = sorted(set.intersection(*(set(by_corpus) for by_corpus in figures.values())))
    rows = {}
    for corpus in corpora:
        others = [other for other in corpora if other != corpus]
        chosen = {rule: choose(figures, others) for rule, choose in RULES.items()}
        rows[corpus] = {
            "chosen": chosen,
            "held_out": {rule: figures[value][corpus] for rule, value in chosen.items()},
            "every": {str(each): by_corpus[corpus] for each, by_corpus in sorted(figures.items())},
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    """Choose the value leaving each corpus out; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setting", required=True, help="the [compress] setting the folders were replayed at")
    parser.add_argument("--value", type=parse_value, action="append", required=True, help="VALUE=FOLDER (repeatable)")
    args = parser.parse_args(argv)
    figures = {value: corpus_figures(folder) for value, folder in args.value}
    if len(figures) < 2 or not all(figures.values()):
        parser.error("give at least two values, each a folder of replay results")
    rows = leave_one_out(figures)
    print(f"{args.setting}: chosen leaving the corpus out, then that corpus at the value chosen")
    print(f"{'corpus':14} {'rule':7} {'chosen':>7} {'lines':>7} {'steps':>7} {'cost':>7} {'median':>7}")
    for corpus, row in rows.items():
        for rule, held in row["held_out"].items():
            print(f"{corpus:14} {rule:7} {row['chosen'][rule]:7g} {held['support']:7.1%} {held['steps_supported']:7.1%} "
                  f"{held['cost_warm']:7.3f} {held['median']:7.3f}")
    write_json({"setting": args.setting, "tolerance": TOLERANCE, "corpora": rows}, RESULTS / f"leave_one_out-{args.setting}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
