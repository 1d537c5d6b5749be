"""The harness drives a real OpenCode session through every common tool on a small project."""

from __future__ import annotations

import json

import pytest

from tests.e2e import harness

CALC = '''"""Tiny calculator."""


def add(a, b):
    return a + b


def mean(values):
    return sum(values) / len(values) + 1
'''

TEST_CALC = '''import unittest

from calc import add, mean


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)


if __name__ == "__main__":
    unittest.main()
'''

TODOS = [{"content": "Fix mean()", "status": "in_progress", "priority": "high"}]

SCRIPT = [
    {"say": "Let me look at the code.", "tool": "read", "args": {"filePath": "$ROOT/calc.py"}},
    {"tool": "bash", "args": {"command": "python3 -m unittest test_calc 2>&1", "description": "Run the tests"}},
    {"tool": "grep", "args": {"pattern": "def ", "path": "$ROOT"}},
    {"tool": "glob", "args": {"pattern": "**/*.py"}},
    {"tool": "todowrite", "args": {"todos": TODOS}},
    {"tool": "edit", "args": {"filePath": "$ROOT/calc.py", "oldString": "len(values) + 1", "newString": "len(values)"}},
    {"tool": "read", "args": {"filePath": "$ROOT/calc.py", "offset": 8, "limit": 2}},
    {"tool": "bash", "args": {"command": "python3 -m unittest test_calc 2>&1", "description": "Run the tests again"}},
    {"text": "Fixed mean(): it added 1 to the average."},
]


def test_scripted_session_runs_every_tool_and_results_reach_the_model(opencode_project):
    project = opencode_project(SCRIPT, files={"calc.py": CALC, "test_calc.py": TEST_CALC})
    run = project.run("fix the failing test", export=True)

    assert run.ok, run.stderr[-3000:]
    llm = project.llm
    assert llm.steps_played() == len(SCRIPT)
    last = llm.agent_requests()[-1]
    results = last.tool_results()
    output = [results[llm.call_id("main", step)] for step in range(len(SCRIPT) - 1)]
    assert "<path>" + project.path("calc.py") + "</path>" in output[0]
    assert "9:     return sum(values) / len(values) + 1" in output[0]
    assert "FAIL: test_mean" in output[1] and "FAILED (failures=1)" in output[1]
    assert "calc.py" in output[2] and "Line 4: def add(a, b):" in output[2]
    assert project.path("test_calc.py") in output[3]
    assert json.loads(output[4])[0]["content"] == "Fix mean()"
    assert "Edit applied successfully." in output[5]
    assert "9:     return sum(values) / len(values)" in output[6] and "1: " not in output[6]
    assert output[7].rstrip().endswith("OK")
    assert (project.root / "calc.py").read_text().endswith("return sum(values) / len(values)\n")

    tools = [(p["tool"], p["state"]["status"]) for p in run.tool_parts()]
    assert tools == [(s["tool"], "completed") for s in SCRIPT[:-1]]


def test_second_turn_continues_the_session_after_the_first_turns_steps(opencode_project):
    script = [
        {"tool": "bash", "args": {"command": "echo first-turn", "description": "Say first"}},
        {"text": "First turn done."},
        {"tool": "bash", "args": {"command": "echo second-turn", "description": "Say second"}},
        {"text": "Second turn done."},
    ]
    project = opencode_project(script)
    first = project.run("turn one")
    second = project.run("turn two", session=first.session_id, export=True)

    assert first.ok and second.ok, second.stderr[-3000:]
    assert second.session_id == first.session_id
    assert [r.step for r in second.requests if r.kind == "agent"] == [2, 3]
    user_texts = [p["text"] for m in second.session["messages"] for p in m["parts"] if p["type"] == "text"]
    assert "Second turn done." in user_texts and "turn one" in "".join(user_texts)


def test_reported_prompt_tokens_make_opencode_compact_and_the_session_goes_on(opencode_project):
    script = [
        {"tool": "bash", "args": {"command": "seq 1 2000"}, "ptok": 500},
        {"tool": "bash", "args": {"command": "echo two"}, "ptok": 11000},
        {"tool": "bash", "args": {"command": "echo three"}, "ptok": 3000},
        {"text": "Finished after compaction."},
    ]
    project = opencode_project(script, auto_compaction=True, context_limit=12000)
    run = project.run("count", export=True)

    assert run.ok, run.stderr[-3000:]
    kinds = [r.kind for r in project.llm.requests if r.kind != "title"]
    assert kinds == ["agent", "agent", "compaction", "agent", "agent"]
    compaction = next(r for r in project.llm.requests if r.kind == "compaction")
    assert "<conversation>" in compaction.text() and "seq 1 2000" in compaction.text()
    summaries = [m for m in run.session["messages"] if m["info"].get("summary") is True]
    assert [p["text"] for p in summaries[0]["parts"] if p["type"] == "text"] == [project.llm.summary]
    assert project.llm.steps_played() == len(script)


def test_a_missing_opencode_fails_with_the_install_command(monkeypatch, tmp_path, opencode_project):
    monkeypatch.setattr(harness, "OPENCODE_CACHE", tmp_path / "empty-cache")
    with pytest.raises(harness.OpenCodeNotInstalled, match=r"not installed in .*empty-cache: run \.ci/run"):
        opencode_project([{"text": "never played"}])
