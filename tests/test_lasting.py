"""What becomes a memory: rules on small sessions, and precision against hand labels."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.corpora import SHARED
from deepmem.extractors.calls import build_timeline
from deepmem.extractors.lasting import find_candidates
from deepmem.vault.sessionio import read_session

from .conftest import FIXTURES

LABELS = {item["text"]: item for name in ("memory_labels.json", "memory_history_labels.json")
          for item in orjson.loads((FIXTURES / name).read_bytes())["labels"]}
MIN_LASTING = 0.9
"""Measured 8 of 8 on swe-gemini3, 10 of 10 on swe-deepseek, 2 of 2 on the OpenCode fixtures."""
MIN_LASTING_HISTORY = 0.8
"""On a real project's month of sessions, where talk is richer: 10 of 12 by the labels of memory_history_labels.json."""


def said(*turns: tuple[str, str], commands: tuple[str, ...] = ()) -> list[dict]:
    """A session of (role, text) turns followed by successful bash commands."""
    messages = []
    for role, text in turns:
        messages.append({"info": {"role": role, "id": "m"}, "parts": [{"type": "text", "text": text}]})
    for command in commands:
        state = {"status": "completed", "input": {"command": command}, "output": "", "metadata": {"exit": 0}}
        messages.append({"info": {"role": "assistant", "id": "b"}, "parts": [{"type": "tool", "tool": "bash", "state": state}]})
    return messages


def texts(messages: list[dict]) -> list[str]:
    """Candidate texts of a session."""
    return [candidate.text for candidate in find_candidates(build_timeline(messages))]


@pytest.mark.parametrize(("turns", "commands", "expected"), [
    ([("user", "Fix the build. We must never edit the vendored files.")], (), ["We must never edit the vendored files."]),
    ([("user", "数据库必须使用 PostgreSQL。")], (), ["数据库必须使用 PostgreSQL。"]),
    ([("user", "Our public API must stay backwards compatible.")], (), ["Our public API must stay backwards compatible."]),
    ([("user", "Maybe we must avoid SQLite here?")], (), []),
    ([("user", "<issue>\nThe parser must not crash on empty input.\n</issue>\nPlease fix it.")], (), []),
    ([("user", "> Users must not see stack traces\nCan you look?")], (), []),
    ([("user", "Your response MUST include exactly one bash code block.")], (), []),
    ([("user", "Do not commit your changes."), ("user", "ok"), ("user", "Do not commit your changes.")], (), []),
    ([("assistant", "I'll use `sed` to replace the line.")], ("sed -i s/a/b/ x.py",), []),
    ([("assistant", "Actually, I think my approach is getting too complex.")], (), []),
    ([("assistant", "So the fix is to change the delimiter lookup.")], (), []),
    ([("assistant", "I decided to use orjson for the encoder.")], (), []),
    ([("assistant", "I decided to use orjson for the encoder.")], ("pip install orjson",),
     ["I decided to use orjson for the encoder."]),
    ([("assistant", 'The instructions say "DO NOT MODIFY: Tests".')], (), []),
    ([("assistant", "The fix is partially working.")], ("python -m pytest tests/test_fix.py",), []),
    ([("assistant", "Fixed the division by zero in the `iterlimit` calculation.")], ("sed -i s/x/y/ iterlimit.py",), []),
    ([("assistant", "Fixed by converting the datetime index to nanoseconds before `np.diff()`.")],
     ("python -c 'import datetime, numpy'",),
     ["Fixed by converting the datetime index to nanoseconds before `np.diff()`."]),
    ([("assistant", "The root cause was `GROUP BY` holding the subquery.")], ("grep -n 'GROUP BY' q.py",), []),
    ([("assistant", "`_setup_joins` will see `pk` and switch fields.")], ("grep _setup_joins q.py",), []),
    ([("assistant", "The behaviour must not change for existing tests.")], ("python -m pytest",), []),
])
def test_candidate_rules(turns: list[tuple[str, str]], commands: tuple[str, ...], expected: list[str]) -> None:
    """Firm user statements stay; hedges, pasted text, task talk, templates and unconfirmed claims go."""
    assert texts(said(*turns, commands=commands)) == expected


def precision(paths: list[Path]) -> tuple[int, int]:
    """(kept candidates labelled keep, all candidates) over the sessions; every candidate must be labelled."""
    good = total = 0
    for path in paths:
        for text in texts(read_session(str(path)).messages):
            assert text in LABELS, f"{path.name}: unlabelled candidate {text!r}"
            good += LABELS[text]["keep"]
            total += 1
    return good, total


def test_precision_on_the_opencode_fixtures() -> None:
    """Every candidate of the recorded OpenCode sessions is labelled, and the labels say keep."""
    good, total = precision(sorted((FIXTURES / "sessions").glob("*.json")))
    assert total >= 2 and good == total


@pytest.mark.parametrize(("corpus", "minimum"), [("swe-gemini3", MIN_LASTING), ("swe-deepseek", MIN_LASTING),
                                                 ("claude-entire", MIN_LASTING_HISTORY)])
def test_lasting_share_on_each_corpus(corpus: str, minimum: float) -> None:
    """Over every session of a shared corpus: every candidate labelled, lasting share at least MIN_LASTING."""
    folder = SHARED / corpus
    if not folder.is_dir():
        pytest.skip(f"the {corpus} corpus is not on this machine")
    good, total = precision(sorted(p for p in folder.glob("*.json") if p.name != "manifest.json"))
    assert total and good / total >= minimum


def test_a_confirmed_statement_names_the_file_its_edit_changed() -> None:
    """The edit that confirmed a statement gives its file, relative to the call's folder, as `(in `path`)`."""
    state = {"status": "completed", "input": {"filePath": "/repo/pkg/units.py", "oldString": "a", "newString": "b"},
             "output": "", "metadata": {}}
    messages = [
        {"info": {"role": "assistant", "id": "a"}, "parts": [
            {"type": "text", "text": "Fixed by converting `quantity_input` values to floats before comparing them."}]},
        {"info": {"role": "assistant", "id": "b", "path": {"cwd": "/repo"}},
         "parts": [{"type": "tool", "tool": "edit", "state": {**state, "input": {**state["input"],
                                                                                  "newString": "quantity_input"}}}]},
    ]
    [candidate] = find_candidates(build_timeline(messages))
    assert candidate.path == "pkg/units.py"
    assert candidate.memory_text() == f"{candidate.text} (in `{candidate.path}`)"


def test_a_statement_naming_its_file_is_not_suffixed() -> None:
    """A statement that already names the file's name, or has no file, keeps its text."""
    from deepmem.extractors.lasting import Candidate

    assert Candidate("gotcha", "Use `int64` in units.py always.", "assistant", 1, "pkg/units.py").memory_text() \
        == "Use `int64` in units.py always."
    assert Candidate("gotcha", "Use `int64` always.", "assistant", 1).memory_text() == "Use `int64` always."
