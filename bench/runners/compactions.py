"""Real compactions and long requests: does a text handed over at a split hold what the continuation went on to need?

    python -m bench.runners.compactions [CORPUS] [--out FILE]

A session the agent compacted is split in the corpus (`…-c1.json`, `-c2`, …); the later
segment starts with the summary the agent's model wrote, as its first user message. For each
pair (earlier segment E, continuation C) four texts are scored against what C does:

- `checkpoint.md`: `deepmem.checkpoints.api.compact` run on E, the file it writes;
- the resume block: `resume_block` of that folder, as a new session would get it;
- the LLM summary: the first user message of C;
- trivial: E's last 3 requests and the files E's tool calls changed, one per line.

"Visible" means present somewhere in E's text (prose, tool inputs and outputs), so a text
written at the compaction could have known it. Matches are plain word matches in the text.
The categories:

- files, full path: files C reads, changes or names as a search path (path relative to the
  project root), visible in E by that path; a hit is the path written in the text;
- files in C's first 30 steps, by name: the same for the first 30 steps, visible and matched by
  file name alone;
- commands: a command is a simple command's program with its first plain word (`go test`,
  `make lint`, `git status`; `cd` left out); those C runs that E had run; a hit is the
  command written in the text;
- task: content words (letters, 4 or more, not a stop word; CJK as character pairs) of E's
  last 3 requests that C's prose or tool inputs use again; a hit is the word in the text;
- identifiers: code names (camelCase, CamelCase with a lower-case letter before a capital, or
  snake_case; 8 characters or more) in C's edits, writes and patches that were visible in E;
- files named that are used (a precision): of the file paths the text names, the share that
  C reads, changes or searches (the same file by its path's end).

A request is a user-typed text that is not the compaction summary and not one of the
wrappers the agent writes into a user message (`<command-name>`, `<local-command-stdout>`, a background
task's `<task-notification>`, Codex's `<permissions instructions>`: `deepmem.extractors.requests.WRAPPERS`).
Split points after long requests: real compactions after a long request are few, long requests
are not. Every session of the corpus (each segment of a compacted one too) is also split just
after each user request of more than `SPLIT_WORDS` words (a CJK character counts as a word):
E is the session up to and with that request, C the rest of the session (the split is skipped
when C holds no tool call or reply). There is no model summary there: checkpoint.md, the resume
block and trivial are scored with the same rules.

Pooled figures sum hits and totals over every compaction (and apart, every split point); the task score is also given apart for
short and long requests (a long one leaves more than 40 content words for the continuation to
use: a pasted plan, a review, a bug report). Tokens are o200k. Writes one row
per compaction and per split point, with the misses, to `bench/results/compactions-<corpus>.json`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from collections.abc import Iterable
from itertools import takewhile
from pathlib import Path
from typing import Any

import orjson

from bench.corpora import corpus_folder, corpus_name, load_messages, session_paths
from bench.report import RESULTS
from bench.tokens_o200k import TokenCounter
from deepmem.checkpoints.api import compact, resume_block
from deepmem.extractors.calls import Timeline, build_timeline
from deepmem.extractors.files import calls_touching, project_path
from deepmem.extractors.requests import WRAPPERS
from deepmem.history import visible_text
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.toolcalls.paths import file_name, same_file
from deepmem.toolcalls.shell import SEPARATORS, heredoc_lines, shell_tokens, strip_prefixes
from deepmem.toolcalls.touches import call_touches
from deepmem.types import Message

SEGMENT = re.compile(r"^(?P<base>.+?)-c(?P<n>\d+)\.json$")
FIRST_STEPS = 30
LAST_REQUESTS = 3
TAG = re.compile(r"</?[\w-]+>")
SUMMARY_OPENING = "This session is being continued from a previous conversation"
WORD = re.compile(r"[^\W\d_][\w'-]*")
CJK = re.compile(r"[\u3400-\u9fff]+")
STOP_WORDS = frozenset(
    "about above after again also because been before being both came can't come could didn't does doesn't doing done "
    "down each even every from further have haven't having here here's how's into it's just know let's like made make "
    "many more most much must need only other over really same should some still such sure take than that that's "
    "their them then there these they thing things think this those through under until very want wants was were "
    "what what's when where which while will with would you'll your yours yeah okay please thanks".split()
)
CODE_NAME = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[a-z0-9][A-Z]|_[A-Za-z0-9])[A-Za-z0-9_]*\b")
MIN_CODE_NAME = 8
PLAIN_WORD = re.compile(r"[a-z][a-z0-9-]*")
COMMAND_SEPARATORS = frozenset({"&&", "||", ";", "&", "(", ")", ";;"})
"""Operators after which a new command starts (a pipe feeds a filter instead)."""
PATH = re.compile(r"(?<![\w/.@-])(?:~?\.{0,2}/)?(?:[\w.@-]+/)*[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/(])")
"""File paths a text names: a word with an extension (`cleanup.go`, `cmd/x/cleanup_test.go`)."""
NOT_FILES = re.compile(r"^(?:[\w-]+\.)+(?:com|org|io|dev|net|md5|sha)$|^[A-Z]?[a-z]+\.[A-Z]\w*$|^e\.g$|^i\.e$")
"""Words with a dot that are no file: host names, `pkg.Func`, `e.g`."""
CATEGORIES = ("files_full_path", "files_first_steps_by_name", "commands", "task", "identifiers", "files_named_used")
TEXTS = ("checkpoint", "resume", "llm_summary", "trivial")
LONG_REQUEST_WORDS = 40
"""A compaction whose task holds more than this many content words follows a long request."""
TASK_SPLIT = {"task_short_requests": False, "task_long_requests": True}
SPLIT_WORDS = 100
"""A user request of more than this many words is followed by a split point."""
SPLIT_TEXTS = ("checkpoint", "resume", "trivial")
"""The texts scored at a split point: there is no model summary there."""


def compaction_pairs(folder: Path) -> list[tuple[Path, Path]]:
    """(earlier segment, continuation) for every segment whose predecessor is in the corpus."""
    pairs = []
    for path in sorted(folder.glob("*-c*.json")):
        match = SEGMENT.match(path.name)
        if not match:
            continue
        number = int(match["n"])
        earlier = folder / (f"{match['base']}.json" if number == 1 else f"{match['base']}-c{number - 1}.json")
        if earlier.is_file():
            pairs.append((earlier, path))
    return pairs


def requests(messages: list[Message]) -> list[str]:
    """The user's own requests, oldest first (wrappers and the compaction summary left out)."""
    return [text for message in messages for text in message_requests(message)]


def message_requests(message: Message) -> list[str]:
    """The requests one message holds (none but in a user message)."""
    if message["info"].get("role") != "user":
        return []
    found = []
    for part in message.get("parts") or ():
        if part.get("type") != "text" or part.get("synthetic") or not isinstance(part.get("text"), str):
            continue
        text = TAG.sub(" ", WRAPPERS.sub(" ", part["text"])).strip()
        if text and not text.startswith(SUMMARY_OPENING) and not text.startswith("[Request interrupted"):
            found.append(text)
    return found


def word_count(text: str) -> int:
    """Words of a text: whitespace-separated words, each CJK character one word."""
    return len(CJK.sub(" ", text).split()) + sum(len(run) for run in CJK.findall(text))


def split_points(messages: list[Message]) -> list[int]:
    """Indexes of the user messages holding a request of more than SPLIT_WORDS words that something follows:
    the session is split just after each."""
    return [i for i, message in enumerate(messages)
            if any(word_count(text) > SPLIT_WORDS for text in message_requests(message))
            and any(m["info"].get("role") == "assistant" and m.get("parts") for m in messages[i + 1:])]


def content_words(text: str) -> set[str]:
    """Lower-cased words of 4 letters or more that are not stop words, and CJK character pairs."""
    words = {w for w in (m.lower().strip("'-") for m in WORD.findall(text)) if len(w) >= 4 and w not in STOP_WORDS}
    words = {w for w in words if not CJK.search(w)}
    for run in CJK.findall(text):
        words.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return words


def segment_text(messages: list[Message]) -> str:
    """Everything of a segment the model saw: prose, reasoning, tool inputs and outputs."""
    return "\n".join(visible_text(part) for message in messages for part in message.get("parts") or ())


def files_used(timeline: Timeline, first_steps: int | None = None) -> list[str]:
    """Files the calls read, change or search in (project-relative), in order of first use."""
    found: dict[str, None] = {}
    known: dict[str, str] = {}
    for call in timeline.calls:
        if call.status == "error" or (first_steps is not None and call.step > first_steps):
            continue
        touched = call_touches(call.tool, call.input, known)
        known.update(touched.texts)
        paths = [*touched.reads, *touched.changed]
        search_path = call.input.get("path")
        if isinstance(search_path, str) and PATH.fullmatch(search_path):
            paths.append(search_path)
        for path in paths:
            found.setdefault(project_path(path, call.cwd, timeline.root))
    return list(found)


def command_keys(timeline: Timeline) -> set[str]:
    """Program and first plain word of each command the shell calls ran: the first simple command
    of every pipeline (the filters a pipe feeds, `head` or `grep`, are not commands run); `cd` left out."""
    keys = set()
    for call in timeline.calls:
        for line, _ in heredoc_lines(call.command) if call.command else ():
            try:
                tokens = shell_tokens(line)
            except ValueError:
                continue
            starts = [0] + [i + 1 for i, token in enumerate(tokens) if token in COMMAND_SEPARATORS]
            for start in starts:
                words = strip_prefixes(list(takewhile(lambda t: t not in SEPARATORS, tokens[start:])))
                if not words or words[0] == "cd":
                    continue
                program = words[0].rsplit("/", 1)[-1]
                plain = next((w for w in words[1:] if not w.startswith("-")), "")
                keys.add(f"{program} {plain}" if PLAIN_WORD.fullmatch(plain) else program)
    return keys


def edited_names(timeline: Timeline) -> set[str]:
    """Code names in the text the calls edit, write or patch."""
    names: set[str] = set()
    for call in timeline.calls:
        for field in ("oldString", "newString", "content", "patchText", "patch"):
            value = call.input.get(field)
            if isinstance(value, str):
                names.update(name for name in CODE_NAME.findall(value) if len(name) >= MIN_CODE_NAME)
        for edit in call.input.get("edits") or ():
            if isinstance(edit, dict):
                names.update(n for v in edit.values() if isinstance(v, str) for n in CODE_NAME.findall(v) if len(n) >= MIN_CODE_NAME)
    return names


def has_word(text: str, word: str) -> bool:
    """The word (a path, a name or a command) in the text, not as part of a longer word."""
    return re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text) is not None


def named_files(text: str) -> set[str]:
    """File paths the text names."""
    return {p.removeprefix("./") for p in PATH.findall(text) if not NOT_FILES.match(p.rsplit("/", 1)[-1])}


class Need:
    """What a continuation needs, each item visible in the earlier segment, by category."""

    def __init__(self, earlier: list[Message], later: list[Message]) -> None:
        """`later` is the continuation without the summary handed over (if any)."""
        before = segment_text(earlier)
        before_timeline = build_timeline(earlier)
        timeline = build_timeline(later)
        self.used = files_used(timeline)
        self.files = [f for f in self.used if f in before or has_word(before, f)]
        self.first = sorted({file_name(f) for f in files_used(timeline, FIRST_STEPS) if has_word(before, file_name(f))})
        self.commands = sorted(command_keys(timeline) & command_keys(before_timeline))
        later_words = content_words(segment_text([m for m in later if m["info"].get("role") == "user"]) + "\n"
                                    + "\n".join(p.text for p in timeline.prose) + "\n"
                                    + "\n".join(orjson.dumps(c.input).decode() for c in timeline.calls))
        asked = content_words("\n".join(requests(earlier)[-LAST_REQUESTS:]))
        self.task = sorted(asked & later_words)
        self.identifiers = sorted(n for n in edited_names(timeline) if has_word(before, n))

    def score(self, text: str) -> dict[str, dict[str, Any]]:
        """Hits, totals and misses of a text, by category."""
        lowered_words = content_words(text)
        named = named_files(text)
        used = [n for n in sorted(named) if any(same_file(n, f) for f in self.used)]
        return {
            "files_full_path": tally(self.files, lambda f: has_word(text, f)),
            "files_first_steps_by_name": tally(self.first, lambda f: has_word(text, f)),
            "commands": tally(self.commands, lambda c: has_word(" ".join(text.split()), c)),
            "task": tally(self.task, lambda w: w in lowered_words),
            "identifiers": tally(self.identifiers, lambda n: has_word(text, n)),
            "files_named_used": {"hits": len(used), "total": len(named),
                                 "missed": sorted(named - set(used))},
        }


def tally(items: Iterable[str], found: Any) -> dict[str, Any]:
    """Hits and total of the items the text holds, and the ones it misses."""
    items = list(items)
    missed = [item for item in items if not found(item)]
    return {"hits": len(items) - len(missed), "total": len(items), "missed": missed}


def texts_at(name: str, earlier_messages: list[Message]) -> dict[str, str]:
    """checkpoint.md, the resume block and trivial, handed over after the earlier messages."""
    with tempfile.TemporaryDirectory() as root:
        result = compact(Project.load(root), name, earlier_messages)
        if result.get("error"):
            raise SystemExit(f"{name}: compact failed: {result['error']}")
        checkpoint = (memory_dir(root) / "checkpoint.md").read_text(encoding="utf-8")
        resume = resume_block(root) or ""
    timeline = build_timeline(earlier_messages)
    changed = [f for f in files_used(timeline) if f in changed_files(timeline)]
    trivial = "\n\n".join(requests(earlier_messages)[-LAST_REQUESTS:]) + "\n\nFiles edited:\n" + "\n".join(changed)
    return {"checkpoint": checkpoint, "resume": resume, "trivial": trivial}


def summary_of(later: list[Message]) -> str:
    """The summary the agent's model wrote: the continuation's first user text."""
    return next((p.get("text", "") for p in later[0].get("parts") or () if p.get("type") == "text"), "")


def changed_files(timeline: Timeline) -> set[str]:
    """Project-relative files the calls changed."""
    changed: set[str] = set()
    for call, touched in calls_touching(timeline):
        changed.update(project_path(p, call.cwd, timeline.root) for p in touched.changed)
    return changed


def measure(folder: Path) -> list[dict[str, Any]]:
    """One row per compaction: the o200k tokens of E's newest request, and for each text its scores and its
    o200k tokens."""
    counter = TokenCounter()
    rows = []
    for earlier, later_path in compaction_pairs(folder):
        earlier_messages, later = load_messages(earlier), load_messages(later_path)
        texts = {**texts_at(earlier.stem, earlier_messages), "llm_summary": summary_of(later)}
        rows.append({"earlier": earlier.name, "later": later_path.name,
                     **scored(counter, earlier_messages, later[1:], texts)})
    return rows


def measure_splits(folder: Path) -> list[dict[str, Any]]:
    """One row per split point after a long request, of every session of the corpus, scored as `measure` does."""
    counter = TokenCounter()
    rows = []
    for path in session_paths(folder):
        messages = load_messages(path)
        for index in split_points(messages):
            earlier = messages[: index + 1]
            rows.append({"session": path.name, "split_after_message": index,
                         **scored(counter, earlier, messages[index + 1:], texts_at(path.stem, earlier))})
    return rows


def scored(counter: TokenCounter, earlier: list[Message], later: list[Message], texts: dict[str, str]) -> dict[str, Any]:
    """The o200k tokens of the earlier part's newest request, and each text's tokens and scores against the need
    of the later part."""
    need = Need(earlier, later)
    asked = requests(earlier)
    return {"newest_request_tokens": counter.count(asked[-1]) if asked else 0,
            "texts": {name: {"tokens": counter.count(text), **need.score(text)} for name, text in texts.items()}}


def pooled(rows: list[dict[str, Any]], texts: Iterable[str] = TEXTS) -> dict[str, dict[str, float]]:
    """Per text: each category's hits over totals, summed over the rows, the task score apart for short and
    long requests; median and largest tokens."""
    table: dict[str, dict[str, float]] = {}
    for name in texts:
        scores = [row["texts"][name] for row in rows]
        table[name] = {category: share(scores, category) for category in CATEGORIES}
        for split, long in TASK_SPLIT.items():
            table[name][split] = share([s for s in scores if is_long(s) == long], "task")
        table[name]["tokens_median"] = statistics.median(s["tokens"] for s in scores) if scores else 0
        table[name]["tokens_max"] = max((s["tokens"] for s in scores), default=0)
    return table


def share(scores: list[dict[str, Any]], category: str) -> float:
    """Hits over totals of one category, summed over the scores (0 when there is nothing to find)."""
    return sum(s[category]["hits"] for s in scores) / max(sum(s[category]["total"] for s in scores), 1)


def is_long(score: dict[str, Any]) -> bool:
    """True when the compaction followed a long request: more than LONG_REQUEST_WORDS task words to find."""
    return score["task"]["total"] > LONG_REQUEST_WORDS


def print_table(table: dict[str, dict[str, float]], rows: list[dict[str, Any]], title: str) -> None:
    """The pooled figures, one line per category, then the task score for short and long requests."""
    texts = list(table)
    print(f"{title}: {len(rows)}, pooled")
    print(f"{'':28}" + "".join(f"{name:>14}" for name in texts))
    longs = sum(is_long(row["texts"]["checkpoint"]) for row in rows)
    counts = {"task_short_requests": len(rows) - longs, "task_long_requests": longs}
    for category in CATEGORIES:
        print(f"{category:28}" + "".join(f"{table[name][category]:14.2f}" for name in texts))
    for split, count in counts.items():
        print(f"{f'{split} ({count})':28}" + "".join(f"{table[name][split]:14.2f}" for name in texts))
    for key in ("tokens_median", "tokens_max"):
        print(f"{key:28}" + "".join(f"{table[name][key]:14,.0f}" for name in texts))
    sizes = sorted(row["newest_request_tokens"] for row in rows)
    if sizes:
        print(f"newest request, tokens: median {statistics.median(sizes):,.0f}, "
              f"90th percentile {sizes[len(sizes) * 9 // 10]:,}, largest {sizes[-1]:,}")


def main(argv: list[str] | None = None) -> None:
    """Score every compaction of the corpus, print the pooled table, write the rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default="claude-entire", type=corpus_folder)
    parser.add_argument("--out", type=Path, default=None, help="where the rows go (default bench/results/compactions-CORPUS.json)")
    args = parser.parse_args(argv)
    name = corpus_name(args.corpus)
    rows, splits = measure(args.corpus), measure_splits(args.corpus)
    table, split_table = pooled(rows), pooled(splits, SPLIT_TEXTS)
    if rows:
        print_table(table, rows, f"{name}: real compactions")
    print_table(split_table, splits, f"{name}: split points after requests of more than {SPLIT_WORDS} words")
    out = args.out or RESULTS / f"compactions-{name}.json"
    out.write_bytes(orjson.dumps({"corpus": name, "compactions": len(rows), "pooled": table, "rows": rows,
                                  "split_points": len(splits), "split_pooled": split_table, "split_rows": splits},
                                 option=orjson.OPT_INDENT_2))
    print(f"rows: {out}")


if __name__ == "__main__":
    main()
