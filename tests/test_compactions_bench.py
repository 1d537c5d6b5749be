"""bench.runners.compactions on one made-up compaction: what the continuation needs, and how a text scores."""

from __future__ import annotations

import json
from pathlib import Path

from bench.runners.compactions import CATEGORIES, TEXTS, Need, compaction_pairs, measure, pooled, requests

ROOT = "/repo"


def tool(name: str, **inputs: object) -> dict:
    """A completed tool part."""
    return {"type": "tool", "tool": name, "state": {"status": "completed", "input": inputs, "output": "ok",
                                                    "metadata": {"exit": 0}}}


def user(text: str) -> dict:
    """A user message."""
    return {"info": {"role": "user"}, "parts": [{"type": "text", "text": text}]}


def assistant(*parts: dict) -> dict:
    """An assistant message in the project root."""
    return {"info": {"role": "assistant", "path": {"root": ROOT, "cwd": ROOT}}, "parts": list(parts)}


EARLIER = [
    user("Make the config parser accept comments"),
    assistant(tool("read", filePath=f"{ROOT}/cmd/parse.go"), tool("read", filePath=f"{ROOT}/cmd/lex.go")),
    assistant(tool("edit", filePath=f"{ROOT}/cmd/parse.go", oldString="func parseLine(", newString="func parseLine(")),
    user("<command-name>/clear</command-name>"),
    user("Also report parser errors with line numbers"),
    assistant(tool("bash", command="go test ./cmd/... | head -20 && git status")),
]
LATER = [
    user("This session is being continued from a previous conversation. Summary: parser comments."),
    assistant(tool("edit", filePath=f"{ROOT}/cmd/lex.go", oldString="x", newString="lineNumber := parseLine(x)")),
    assistant({"type": "text", "text": "Parser errors now report line numbers."}),
    assistant(tool("bash", command="go test ./cmd/... | grep FAIL")),
]


def test_the_need_is_what_the_continuation_uses_that_was_visible_before() -> None:
    need = Need(EARLIER, LATER)
    assert need.files == ["cmd/lex.go"]
    assert need.first == ["lex.go"]
    assert need.commands == ["go test"], "a filter after a pipe is no command run, and git status is not rerun"
    assert need.identifiers == ["parseLine"], "lineNumber was never visible before"
    assert {"parser", "errors", "line", "numbers", "report"} <= set(need.task)
    assert "comments" not in need.task, "only words the continuation uses again"


def test_requests_leave_out_command_wrappers_and_the_summary() -> None:
    assert requests(LATER + EARLIER) == ["Make the config parser accept comments",
                                         "Also report parser errors with line numbers"]


def test_a_text_scores_its_hits_and_names_its_misses() -> None:
    need = Need(EARLIER, LATER)
    scores = need.score("Next: report parser errors in `cmd/lex.go` (`parseLine`); run `go test ./cmd/...`; see util.go")
    assert scores["files_full_path"] == {"hits": 1, "total": 1, "missed": []}
    assert scores["commands"]["hits"] == 1 and scores["identifiers"]["hits"] == 1
    assert scores["files_named_used"] == {"hits": 1, "total": 2, "missed": ["util.go"]}
    assert 0 < scores["task"]["hits"] < scores["task"]["total"]


def test_every_segment_with_its_predecessor_in_the_corpus_is_one_compaction(tmp_path: Path) -> None:
    for name, messages in (("s.json", EARLIER), ("s-c1.json", LATER), ("t-c2.json", LATER)):
        (tmp_path / name).write_text(json.dumps({"info": {"id": name}, "messages": messages}))
    assert [(a.name, b.name) for a, b in compaction_pairs(tmp_path)] == [("s.json", "s-c1.json")]
    row = measure(tmp_path)[0]
    assert set(row["texts"]) == {"checkpoint", "resume", "llm_summary", "trivial"}
    assert row["texts"]["trivial"]["task"]["hits"] == row["texts"]["trivial"]["task"]["total"] > 0
    assert row["texts"]["checkpoint"]["files_full_path"]["total"] == 1
    assert 0 < row["newest_request_tokens"] < 20, "the newest request: 'Also report parser errors with line numbers'"


def test_the_task_score_is_split_between_short_and_long_requests() -> None:
    def row(hits: int, total: int) -> dict:
        score = {category: {"hits": 0, "total": 0, "missed": []} for category in CATEGORIES}
        return {"texts": {name: {**score, "task": {"hits": hits, "total": total, "missed": []}, "tokens": 10}
                          for name in TEXTS}}
    table = pooled([row(9, 10), row(20, 41), row(30, 60)])["checkpoint"]
    assert table["task"] == 59 / 111
    assert table["task_short_requests"] == 9 / 10 and table["task_long_requests"] == 50 / 101
