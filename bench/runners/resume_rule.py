"""How often the resume rule is right: does the first request show that a session continues the checkpoint before it?

    python -m bench.runners.resume_rule [--corpus NAME ...]

Each corpus with a manifest is taken per repository in start order (`memory_history.histories`).
For each session after a repository's first, the checkpoint of the session before it (the
project's latest, as the next session finds it) is set against the session: it continued
that work when its tool calls touch one of the checkpoint's changed files or use one of
their code names that no earlier checkpoint shows (`deepmem.transform.additions.specific_names`:
`reproduce_issue.py` or `ValueError` name every session's work). The rule sees only the
first request: it predicts a continuation when that request names at least `least` of them. Printed per corpus
and `least`: sessions, continuations, right, precision and recall; then `least` chosen
leaving each corpus out in turn (the most right on the others), with the held-out corpus's
share right; writes `results/resume_rule.json`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.corpora import corpora, corpus_folder
from bench.report import RESULTS, write_json
from bench.runners.memory_history import Seen, histories, matches, what_it_does
from deepmem.checkpoints.render import render_checkpoint
from deepmem.extractors import extract
from deepmem.transform.additions import named_in, specific_names
from deepmem.vault.sessionio import read_session

LEAST = (0, 1, 2, 3, 4)
"""How many of the checkpoint's names the first request must hold, swept (0: every new session resumes)."""


def continued(names: dict[str, str], seen: Seen) -> bool:
    """True when the session's tool calls touch one of the files or use one of the code names in `names`."""
    return any(any(matches(path, spelling) for path in seen.files) or spelling.lower() in seen.inputs for spelling in names)


def corpus_pairs(folder: Path) -> list[tuple[int, bool]]:
    """Per session with a checkpoint before it: how many of the names only that checkpoint shows its first request
    holds, and whether its tool calls touched one of them."""
    pairs = []
    for paths in histories(folder).values():
        checkpoints: list[str] = []
        for path in paths:
            messages = read_session(str(path)).messages
            if checkpoints:
                seen = what_it_does(messages)
                names = specific_names(checkpoints[-1], checkpoints[:-1])
                pairs.append((len(named_in(names, seen.first_request)), continued(names, seen)))
            if messages:
                checkpoints.append(render_checkpoint(extract(messages), path.stem))
    return pairs


def scores(pairs: list[tuple[int, bool]], least: int) -> dict[str, Any]:
    """Right, precision and recall of the rule at `least` names over the pairs."""
    predicted = [(named >= least, truth) for named, truth in pairs]
    hits = sum(guess and truth for guess, truth in predicted)
    guessed, actual = sum(guess for guess, _ in predicted), sum(truth for _, truth in predicted)
    right = sum(guess == truth for guess, truth in predicted)
    return {"least": least, "sessions": len(pairs), "continued": actual, "right": right,
            "right_share": round(right / len(pairs), 3) if pairs else None,
            "precision": round(hits / guessed, 3) if guessed else None,
            "recall": round(hits / actual, 3) if actual else None}


def left_out_choices(pairs: dict[str, list[tuple[int, bool]]]) -> dict[str, dict[str, Any]]:
    """Per corpus: `least` chosen on the other corpora (most right, the smallest on a tie), and its share right here."""
    choices = {}
    for held in pairs:
        others = [pair for name, group in pairs.items() if name != held for pair in group]
        least = max(LEAST, key=lambda value: (scores(others, value)["right"], -value))
        choices[held] = {"least": least, "right_share": scores(pairs[held], least)["right_share"]}
    return choices


def main(argv: list[str] | None = None) -> int:
    """Measure the rule on each corpus, choose its threshold leaving each out, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or folder (repeatable)")
    args = parser.parse_args(argv)
    folders = args.corpus or list(corpora().values())
    pairs = {folder.name: corpus_pairs(folder) for folder in folders if (folder / "manifest.json").is_file()}
    pairs = {name: group for name, group in pairs.items() if group}
    rows = [{"corpus": name, **scores(group, least)} for name, group in pairs.items() for least in LEAST]
    for row in rows:
        print(json.dumps(row))
    choices = left_out_choices(pairs)
    print(json.dumps({"left_out": choices}))
    write_json({"rows": rows, "left_out": choices}, RESULTS / "resume_rule.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
