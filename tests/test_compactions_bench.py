"""bench.runners.compactions on one made-up compaction: what the continuation needs, and how a text scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.runners.compactions import (
    CATEGORIES,
    SPLIT_TEXTS,
    TEXTS,
    Need,
    compaction_pairs,
    measure,
    measure_splits,
    pooled,
    requests,
    split_points,
    word_count,
)
from bench.runners.compactions_avoided import joined_session
from bench.runners.compactions_avoided import main as compactions_avoided_main

from .conftest import FIXTURES

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
    need = Need(EARLIER, LATER[1:])
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
    need = Need(EARLIER, LATER[1:])
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


LONG = " ".join(f"word{n} of the plan for the parser" for n in range(20))


def test_a_split_point_follows_each_request_of_more_than_100_words() -> None:
    messages = [user("short one"), assistant(tool("read", filePath=f"{ROOT}/cmd/parse.go")), user(LONG),
                assistant(tool("read", filePath=f"{ROOT}/cmd/lex.go")), user(LONG + " again"), user("和" * 101),
                assistant({"type": "text", "text": "ok"}), user(LONG)]
    assert word_count("解析器 parser") == 4 and word_count(LONG) == 140
    assert split_points(messages) == [2, 4, 5], "none after the last request: nothing follows it"


def test_a_split_point_inside_a_tool_call_that_never_returned(tmp_path: Path) -> None:
    running = {"type": "tool", "tool": "bash", "state": {"status": "running", "input": {"command": "go test ./..."}}}
    messages = [user("Make the parser accept comments"), assistant(running), user(LONG),
                assistant(tool("read", filePath=f"{ROOT}/cmd/parse.go")),
                assistant(tool("bash", command="go test ./cmd/...")), assistant({"type": "text", "text": "parser plan"})]
    (tmp_path / "s.json").write_text(json.dumps({"info": {"id": "s"}, "messages": messages}))
    rows = measure_splits(tmp_path)
    assert [row["split_after_message"] for row in rows] == [2]
    assert set(rows[0]["texts"]) == set(SPLIT_TEXTS)
    checkpoint = rows[0]["texts"]["checkpoint"]
    assert checkpoint["task"]["hits"] == checkpoint["task"]["total"] > 0, "the long request is quoted"


def test_a_compaction_with_no_request_since_the_last_one(tmp_path: Path) -> None:
    later = [LATER[0], assistant(tool("read", filePath=f"{ROOT}/cmd/lex.go"))]
    for name, messages in (("s.json", EARLIER), ("s-c1.json", LATER), ("s-c2.json", later)):
        (tmp_path / name).write_text(json.dumps({"info": {"id": name}, "messages": messages}))
    rows = measure(tmp_path)
    assert [row["later"] for row in rows] == ["s-c1.json", "s-c2.json"]
    assert rows[1]["texts"]["checkpoint"]["task"]["total"] == 0 and rows[1]["newest_request_tokens"] == 0


def split_fixture(folder: Path) -> int:
    """A fixture session split in two at its middle user or assistant message, the continuation opened by
    a summary, as a corpus holds a compaction; the number of the earlier segment's messages."""
    export = json.loads((FIXTURES / "sessions" / "django-15499.json").read_text())
    messages = export["messages"]
    cut = len(messages) // 2
    summary = {"info": {**messages[0]["info"], "id": "msg_summary"},
               "parts": [{"type": "text", "text": "This session is being continued from a previous conversation. Summary."}]}
    (folder / "s.json").write_text(json.dumps({**export, "messages": messages[:cut]}))
    (folder / "s-c1.json").write_text(json.dumps({**export, "messages": [summary, *messages[cut:]]}))
    return cut


def test_a_joined_compaction_drops_the_summary_and_keeps_both_segments() -> None:
    joined = joined_session(EARLIER, LATER)
    assert joined == [*EARLIER, *LATER[1:]]


def test_compactions_avoided_counts_what_the_window_allows(tmp_path: Path) -> None:
    """A 1M window: neither deepmem nor the recorded session reaches it. A window smaller than OpenCode's
    reserve: every request reaches it at once, so the compaction comes."""
    split_fixture(tmp_path)
    for name, limits, expected in (
        ("roomy", ["--context", "1000000"], "avoided"),
        ("tiny", ["--context", "20000", "--output", "0"], "comes"),
    ):
        out = tmp_path / f"{name}.json"
        assert compactions_avoided_main([str(tmp_path), *limits, "--out", str(out)]) == 0
        result = json.loads(out.read_text())
        assert result["summary"]["compactions"] == 1
        row = result["rows"][0]
        assert row["outcome"] == {"deepmem": expected, "priced_only": expected}
        assert row["continuation_steps"] > 0 and row["compacted_at_step"] + row["continuation_steps"] == row["steps"]
        at = row["at_compaction"]
        assert at["deepmem"]["estimate"] <= at["none"]["estimate"] + 5_000, "deepmem adds its frame, and cuts"
    assert json.loads((tmp_path / "tiny.json").read_text())["rows"][0]["first_reach"]["deepmem"] == 1


def test_compactions_avoided_names_an_unknown_corpus_in_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        compactions_avoided_main(["no-such-corpus"])
    assert exit_.value.code == 2
    assert "no corpus 'no-such-corpus'" in capsys.readouterr().err
