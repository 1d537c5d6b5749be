"""What deepmem still sends, by kind and age, and when each old whole tool output is next quoted.

Every session of a corpus is replayed as `python -m bench.replay` replays it: the registry's
`deepmem`, priced for the corpus's model, with its additions and the host's frame, stepped
through `deepmem.replay.replay_session`. Each visible part of each request is counted in
o200k tokens, as the replay's meter counts it, and put in one row: a tool part's input
(with its label) apart from its result; a result sent as recorded is *whole* (also when only
the host's system-reminder blocks were taken out of it), any other is *cut*; a whole result more than `RECENT_STEPS` steps old is split by what became of its
file since: a view of a file (a read, or a shell command printing it) edited since, shown
again since, or the latest view of its file; an edit's result or another shell run; another
tool's output. The rows
add up to the replay's message tokens, to the token, or the run stops.

An old whole result is *quoted* at a step when that step's tool inputs copy one of its lines
(a stripped line of 16+ characters found verbatim in it, as `deepmem.support` finds quotes).
Its tokens at each step that sends it are put by the next step that quotes it: the step the
request produces or one of the next `SOON_STEPS - 1`, a later one, or none.

    python -m bench.runners.composition [--corpus NAME|DIR]... [--sessions N] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import NamedTuple

from bench.contenders import Session, make_contenders
from bench.corpora import (
    add_corpus_arguments,
    billed_at,
    chosen_corpora,
    corpus_name,
    readable_sessions,
    session_paths,
)
from bench.frames import Frame, corpus_additions, session_setup
from bench.report import RESULTS, write_json
from bench.tokens_o200k import TokenCounter
from deepmem.bill.accounting import Meter
from deepmem.bill.prices import FAMILIES
from deepmem.compressors.system_blocks import BLOCK
from deepmem.history import message_steps, step_indexes
from deepmem.replay.loop import Contender, replay_session
from deepmem.replay.support import candidate_lines
from deepmem.toolcalls.kinds import tool_row
from deepmem.toolcalls.paths import file_name, same_file
from deepmem.toolcalls.touches import touches
from deepmem.transform.context import part_unit
from deepmem.types import Message, Part

RECENT_STEPS = 10
"""A result at most this many steps old is recent."""
SOON_STEPS = 13
"""A quote within this many steps (the request's own step counted first) is soon."""
HEAVIEST = 10
"""How many of the heaviest old whole results a corpus lists."""

ROWS = {
    "old_whole": f"tool outputs sent whole, older than {RECENT_STEPS} steps",
    "read_edited_since": "· views of a file edited since",
    "read_latest": "· the latest view of its file",
    "read_again_since": "· views of a file shown again since",
    "shell_views": "·· of these views, shell commands printing a file",
    "edits_and_runs": "· edit results and other shell runs (tests, builds)",
    "other_tools": "· other tools (searches, tasks, skills, …)",
    "recent_whole": f"tool outputs sent whole, last {RECENT_STEPS} steps",
    "cut": "tool outputs already cut",
    "tool_inputs": "tool inputs",
    "text": "reasoning, assistant and user text, whispers",
}
"""Row → its label; the rows not marked · add up to every message token sent."""
OLD_ROWS = ("read_edited_since", "read_latest", "read_again_since", "shell_views", "edits_and_runs", "other_tools")
VIEWS = frozenset({"read", "shell_view"})
"""The groups that show a file."""
QUOTES = {
    "soon": f"quoted again within {SOON_STEPS} steps",
    "later": f"quoted {SOON_STEPS} or more steps later",
    "never": "never quoted again",
}
"""When an old whole output is next quoted → its label."""


REMOVED_BLOCK = re.compile(r"\[… 1 system-[a-z]+ block \([\d,]+ chars\) removed · ccr:\S+ · deep_expand to restore\]\n?")
"""The marker deepmem leaves in place of a system block it took out (`compressors.system_blocks`)."""


def without_system_blocks(text: str) -> str:
    """A result's text without the host's system blocks, or the markers left in their place."""
    return REMOVED_BLOCK.sub("", BLOCK.sub("", text)).rstrip("\n")


class Result(NamedTuple):
    """What the session records of one tool result, and what became of it later."""

    text: str
    """Its output and error, as recorded."""
    bare: str
    """The same without system blocks."""
    step: int
    """The step of the message that holds it."""
    group: str
    """`read` (a read tool's view), `shell_view` (a shell command printing a file), `edit_or_run` or `other`."""
    label: str
    """What it is, for the heaviest list: the tool and its file or command."""
    edited_at: int | None = None
    """Step of the first later change to the file it shows (None: none, or not a view)."""
    read_again_at: int | None = None
    """Step of the first later view of the same file."""
    quoted_at: tuple[int, ...] = ()
    """The steps whose tool inputs quote one of its lines, in order."""


def result_text(part: Part) -> str:
    """A tool part's output and error, joined as the request shows them ('' when it has neither)."""
    state = part.get("state") or {}
    return "\n".join(value for value in (state.get("output"), state.get("error")) if isinstance(value, str))


def group_of(tool: str, shows_file: bool) -> str:
    """A result's group: a read view, a shell command's view of a file, an edit's result or
    another shell run, or another tool's output."""
    acts = tool_row(tool).touches
    if acts in ("read", "shell") and shows_file:
        return "read" if acts == "read" else "shell_view"
    return "edit_or_run" if acts in ("edit", "write", "patch", "shell") else "other"


class Event(NamedTuple):
    """A file read or changed by a tool call."""

    position: int
    step: int
    path: str
    change: bool


def file_events(parts: list[tuple[int, Part]]) -> dict[str, list[Event]]:
    """File name → every read and completed change of a file so named, in order."""
    events: dict[str, list[Event]] = {}
    known: dict[str, str] = {}
    for position, (step, part) in enumerate(parts):
        touched = touches(part, known)
        known.update(touched.texts)
        done = (part.get("state") or {}).get("status") == "completed"
        found = [(path, False) for path in touched.reads] + [(path, True) for path in touched.changed if done]
        for path, change in found:
            events.setdefault(file_name(path), []).append(Event(position, step, path, change))
    return events


def later_events(events: dict[str, list[Event]], read: Event) -> tuple[int | None, int | None]:
    """Steps of the first later change to the file a view shows, and of its first later view."""
    changed = again = None
    for event in events.get(file_name(read.path), ()):
        if event.position <= read.position or not same_file(event.path, read.path):
            continue
        if event.change and changed is None:
            changed = event.step
        if not event.change and again is None:
            again = event.step
    return changed, again


def quoting_steps(messages: list[Message], texts: list[str], indexes: list[int]) -> list[list[int]]:
    """Per result (`texts`, held by the messages at `indexes`, in order): the steps whose tool
    inputs quote one of its lines, in order."""
    starts = []
    offset = 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + 1
    everything = "\0".join(texts)
    bounds = [*starts, len(everything) + 1]
    quoted: list[list[int]] = [[] for _ in texts]
    steps = message_steps(messages)
    for index in step_indexes(messages):
        limit = bounds[bisect_left(indexes, index)]
        for line in candidate_lines(messages[index]):
            found = everything.find(line, 0, limit)
            while found >= 0:
                number = bisect_right(starts, found) - 1
                if not quoted[number] or quoted[number][-1] != steps[index]:
                    quoted[number].append(steps[index])
                found = everything.find(line, bounds[number + 1], limit)
    return quoted


def session_results(messages: list[Message]) -> dict[str, Result]:
    """Part id → what the session records of each tool result, and what became of it."""
    steps = message_steps(messages)
    places = [
        (m, part)
        for m, message in enumerate(messages)
        for part in message["parts"]
        if part.get("type") == "tool" and result_text(part)
    ]
    parts = [(steps[m], part) for m, part in places]
    events = file_events(parts)
    texts = [result_text(part) for _, part in places]
    quoted = quoting_steps(messages, texts, [m for m, _ in places])
    results = {}
    for position, ((step, part), text) in enumerate(zip(parts, texts, strict=True)):
        tool = str(part.get("tool") or "")
        touched = touches(part)
        group = group_of(tool, bool(touched.reads))
        shown = touched.reads[0] if group in VIEWS else None
        edited, again = later_events(events, Event(position, step, shown, False)) if shown else (None, None)
        label = f"{tool} {touched.command or shown or ' '.join(touched.changed)}".strip()[:100]
        bare = without_system_blocks(text)
        results[str(part.get("id") or position)] = Result(text, bare, step, group, label, edited, again, tuple(quoted[position]))
    return results


def old_row(result: Result, step: int) -> str:
    """The row of an old whole result at a step: what became of its file before that step."""
    if result.group in VIEWS:
        if result.edited_at is not None and result.edited_at < step:
            return "read_edited_since"
        if result.read_again_at is not None and result.read_again_at < step:
            return "read_again_since"
        return "read_latest"
    return "other_tools" if result.group == "other" else "edits_and_runs"


def next_quote(result: Result, step: int) -> str:
    """When an output sent at `step` is next quoted: soon, later or never."""
    index = bisect_right(result.quoted_at, step - 1)
    if index == len(result.quoted_at):
        return "never"
    return "soon" if result.quoted_at[index] - step < SOON_STEPS else "later"


def is_whole(sent: str, result: Result) -> bool:
    """True when a result is sent as recorded, or with only its system blocks taken out."""
    return sent == result.text or (result.bare != result.text and without_system_blocks(sent) == result.bare)


class Tally:
    """Tokens per row and per quote timing, and per old whole result, summed over steps."""

    def __init__(self) -> None:
        self.rows = dict.fromkeys(ROWS, 0)
        self.quotes = dict.fromkeys(QUOTES, 0)
        self.heavy: dict[tuple[str, str], list] = {}
        self.unmatched = 0
        """Tool results sent that the session does not record (counted as cut)."""

    def add_result(self, key: tuple[str, str], result: Result | None, sent: str, tokens: int, step: int) -> None:
        """Count one tool result sent at `step`."""
        if result is None or not is_whole(sent, result):
            self.unmatched += result is None
            self.rows["cut"] += tokens
        elif step - result.step <= RECENT_STEPS:
            self.rows["recent_whole"] += tokens
        else:
            self.rows["old_whole"] += tokens
            self.rows[old_row(result, step)] += tokens
            self.rows["shell_views"] += tokens if result.group == "shell_view" else 0
            self.quotes[next_quote(result, step)] += tokens
            entry = self.heavy.setdefault(key, [result.label, 0, 0, len(result.quoted_at)])
            entry[1] += tokens
            entry[2] += 1

    def merge(self, other: Tally) -> None:
        """Add another session's tally."""
        for name, tokens in other.rows.items():
            self.rows[name] += tokens
        for name, tokens in other.quotes.items():
            self.quotes[name] += tokens
        self.heavy.update(other.heavy)
        self.unmatched += other.unmatched

    @property
    def total(self) -> int:
        """Every message token counted (the rows not marked ·)."""
        return sum(tokens for name, tokens in self.rows.items() if name not in OLD_ROWS)


class Attributing:
    """A contender that sends what another sends, tallying each request's parts as it goes."""

    def __init__(self, player: Contender, results: dict[str, Result], counter: TokenCounter, session: str):
        self.player = player
        self.name = player.name
        self.frame = player.frame
        self.results = results
        self.counter = counter
        self.session = session
        self.tally = Tally()

    def messages(self, history: list[Message]) -> list[Message]:
        """What the contender sends, its parts tallied."""
        sent = self.player.messages(history)
        step = 1 + sum(message["info"]["role"] == "assistant" for message in history)
        for message in sent:
            for part in message["parts"]:
                self.count_part(message["info"]["role"], part, step)
        return sent

    def count_part(self, role: str, part: Part, step: int) -> None:
        """Tally one part of a request: its unit's tokens, a tool's split between input and result."""
        unit = part_unit(role, part)
        if not unit:
            return
        tokens = self.counter.count(unit)
        if part.get("type") != "tool":
            self.tally.rows["text"] += tokens
            return
        sent = result_text(part)
        result_tokens = min(tokens, self.counter.count(sent)) if sent else 0
        self.tally.rows["tool_inputs"] += tokens - result_tokens
        if sent:
            key = str(part.get("id") or "")
            self.tally.add_result((self.session, key), self.results.get(key), sent, result_tokens, step)


def compose_session(path: Path, messages: list[Message], counter: TokenCounter, additions: dict, price: str) -> tuple[Tally, Meter]:
    """One session replayed through deepmem as the replay replays it: the tally, and the replay's meter."""
    setup = session_setup(path, messages, Frame(), additions, counter)
    session = Session(messages, (FAMILIES[price],), setup.additions, one_hour=setup.one_hour, frame=setup.frame)
    players, _ = make_contenders(["deepmem"], session)
    player = Attributing(players[0], session_results(messages), counter, path.stem)
    meter = replay_session(messages, [player], counter, setup.frame, setup.one_hour)[player.name]
    if player.tally.total != meter.tokens:
        raise RuntimeError(f"{path.name}: the rows add up to {player.tally.total:,} tokens, the replay's meter to {meter.tokens:,}")
    return player.tally, meter


def compose_corpus(folder: Path, limit: int | None = None) -> dict:
    """Every session of a corpus composed; the rows, quote timings and heaviest results with their shares."""
    name = corpus_name(folder)
    counter = TokenCounter()
    additions = corpus_additions(folder, name, False)
    total, metered, steps, warnings = Tally(), 0, 0, []
    paths = session_paths(folder, limit)
    for number, (path, messages) in enumerate(readable_sessions(paths, warnings), 1):
        tally, meter = compose_session(path, messages, counter, additions, billed_at(name))
        total.merge(tally)
        metered += meter.tokens
        steps += meter.steps
        print(f"\r{number}/{len(paths)} sessions composed", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    heaviest = sorted(total.heavy.items(), key=lambda item: -item[1][1])[:HEAVIEST]
    return {
        "corpus": name,
        "sessions": len(paths) - len(warnings),
        "steps": steps,
        "tokens": total.total,
        "replay_tokens": metered,
        "prices": billed_at(name),
        "rows": {row: {"label": ROWS[row], "tokens": tokens, "share": share(tokens, total.total)} for row, tokens in total.rows.items()},
        "quoted": {when: {"label": QUOTES[when], "tokens": tokens, "share": share(tokens, total.total)} for when, tokens in total.quotes.items()},
        "heaviest": [
            {"session": session, "result": label, "tokens": tokens, "steps_sent": sent, "steps_quoting": quoting}
            for (session, _), (label, tokens, sent, quoting) in heaviest
        ],
        "unmatched_results": total.unmatched,
        "warnings": warnings,
    }


def share(part: int, whole: int) -> float:
    """part / whole (0 when whole is 0)."""
    return part / whole if whole else 0.0


def format_composition(result: dict) -> str:
    """The rows and quote timings of one corpus as a table."""
    lines = [
        f"{result['corpus']}: {result['sessions']} sessions, {result['steps']:,} steps, "
        f"{result['tokens']:,} message tokens sent by deepmem (the replay's meter: {result['replay_tokens']:,})",
        f"{'of deepmem’s message tokens, summed over steps':<52}{'tokens':>14}{'share':>8}",
    ]
    for table in (result["rows"], result["quoted"]):
        lines += [f"{row['label']:<52}{row['tokens']:>14,}{100 * row['share']:>7.1f}%" for row in table.values()]
    lines += ["heaviest old whole results (tokens summed over the steps that sent them):"]
    lines += [
        f"  {row['tokens']:>10,}  {row['steps_sent']:>4} steps, quoted at {row['steps_quoting']} steps  {row['result']}"
        for row in result["heaviest"]
    ]
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """Compose every corpus named (default: all), print the tables, write composition-<corpus>.json."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.composition", description=__doc__.split("\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for composition-<corpus>.json")
    args = parser.parse_args(argv)
    for folder in chosen_corpora(args):
        result = compose_corpus(folder, args.sessions)
        print(format_composition(result), end="")
        write_json(result, args.out / f"composition-{result['corpus']}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
