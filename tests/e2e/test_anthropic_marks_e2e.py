"""deepmem's cache mark in the real OpenCode, against a stand-in for Anthropic's Messages API.

OpenCode 1.18.33 marks `system[0]` and the last block of each of the last two messages; a
request keeps at most 4 marks (`shared/reference/opencode-1.18.33/cache-breakpoints.md`).
deepmem joins its memory block to `system[0]` and marks, as an edit of that part, the last
assistant text of the answering model at or before the boundary the schedule jumped to.
The stand-in records each request body as OpenCode's Anthropic SDK sent it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from deepmem.bill.prices import resolve_prices
from deepmem.project.config import load_config, load_settings
from deepmem.replay.loop import session_steps
from deepmem.transform.plan import plan_transform
from tests.e2e.anthropic_llm import MODEL, AnthropicLLM, cache_marks
from tests.e2e.harness import Project

ENGINE_ENV = {"DEEPMEM_DEADLINE_MS": "20000"}
CONTEXT = 200_000
SETTINGS = f"""[compress]
tail_steps = 2
batch_steps = 3
schedule = "fixed"
context_window = {CONTEXT}
cache_mark = {{mark}}

[cost]
family = "anthropic"
"""
"""Small fixed batches so a short session jumps; Anthropic's prices, whose cache is read only at marks."""


def step(number: int) -> dict[str, Any]:
    """A step that says something of its own (a markable text) and runs a command."""
    return {"say": f"Step {number}: counting to {40 + number}.", "tool": "bash",
            "args": {"command": f"seq 1 {40 + number}", "description": f"count {number}"}}


SCRIPT = [*(step(number) for number in range(10)), {"text": "Counted every range."}]


def marked_project(opencode_project, script=SCRIPT, *, mark: bool = True, files=None, **options: Any) -> Project:
    """A project on the Anthropic stand-in with deepmem installed and the test's settings."""
    project = opencode_project(script, llm_type=AnthropicLLM, files=files, env=ENGINE_ENV, context_limit=CONTEXT,
                               model_id=MODEL, **{"provider": "anthropic", "npm": "@ai-sdk/anthropic", **options})
    done = subprocess.run([sys.executable, "-m", "deepmem", "init", "--root", str(project.root)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (project.root / ".deep-memory" / "config.toml").write_text(SETTINGS.format(mark=str(mark).lower()), encoding="utf-8")
    stored = subprocess.run([sys.executable, "-m", "deepmem", "memory", "add", "--type", "constraint", "--root",
                             str(project.root), "Count with seq, never with a loop."],
                            capture_output=True, text=True, check=False)
    assert stored.returncode == 0, stored.stderr  # a memory block to join to system[0]
    return project


def bodies(project: Project) -> list[dict[str, Any]]:
    """The main script's request bodies as OpenCode sent them."""
    return [request.raw for request in project.llm.agent_requests()]


def plans(project: Project, session_id: str) -> list[tuple[str | None, int]]:
    """Per request of the session, as deepmem's plan has it from the exported session with the
    project's settings: the text of the part it marks (None: no mark) and the boundary."""
    settings = load_settings(project.root)
    prices = load_config(project.root).cost.prices
    planned = []
    for step_ in session_steps(project.export(session_id)["messages"]):
        plan = plan_transform(step_.history, settings, prices=resolve_prices(step_.history, {}, prices))
        text = None if plan.mark is None else step_.history[plan.mark[0]]["parts"][plan.mark[1]]["text"]
        planned.append((text, plan.layout.boundary))
    return planned


def intended_marks(project: Project, session_id: str) -> list[str | None]:
    """Per request of the session: the text of the part deepmem's plan marks (None: no mark)."""
    return [text for text, _ in plans(project, session_id)]


def block(body: dict[str, Any], where: tuple[str, int, int]) -> dict[str, Any]:
    """The block a mark sits on."""
    kind, index, position = where
    return body[kind][index] if kind != "messages" else body["messages"][index]["content"][position]


def opencode_marks(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where OpenCode itself puts its marks: system[0] and the last block of the last two messages."""
    tail = [("messages", i, len(body["messages"][i]["content"]) - 1) for i in range(len(body["messages"]))][-2:]
    return [("system", 0, 0), *tail]


def assert_marked_as_planned(body: dict[str, Any], intended: str | None) -> None:
    """At most 4 marks; OpenCode's three kept; ours (if planned) on the planned text; memory in system[0]."""
    marks = cache_marks(body)
    assert len(marks) <= 4, marks
    assert set(opencode_marks(body)) <= set(marks), f"an OpenCode mark was lost: {marks}"
    ours = [where for where in marks if where not in opencode_marks(body)]
    if intended is None:
        assert ours == []
    else:
        assert len(ours) == 1 and ours[0][0] == "messages", ours
        assert body["messages"][ours[0][1]]["role"] == "assistant"
        assert block(body, ours[0]) | {"cache_control": None} == {"type": "text", "text": intended, "cache_control": None}
        assert block(body, ours[0])["cache_control"] == {"type": "ephemeral"}
    assert len(body["system"]) == 1 and "<deep-memory>" in body["system"][0]["text"]


def test_the_mark_sits_on_the_planned_text_and_opencodes_marks_survive(opencode_project) -> None:
    project = marked_project(opencode_project)
    run = project.run("count some ranges")
    assert run.ok, run.stderr[-3000:]
    sent, intended = bodies(project), intended_marks(project, run.session_id)
    print("marks per request:", [cache_marks(body) for body in sent], "planned:", intended)
    assert len(sent) == len(SCRIPT) == len(intended)
    for body, text in zip(sent, intended, strict=True):
        assert_marked_as_planned(body, text)
    assert sum(text is not None for text in intended) >= 3, f"too few marked requests: {intended}"
    assert [len(cache_marks(body)) for body in sent][-1] == 4


def without_marks(value: Any) -> Any:
    """A body with every `cache_control` taken out, and the project folder named `$ROOT`."""
    if isinstance(value, dict):
        return {key: without_marks(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [without_marks(item) for item in value]
    return value


def normalised(body: dict[str, Any], root: Path) -> Any:
    """`without_marks`, with the project's folder written `$ROOT` (two projects, one script)."""
    return json.loads(json.dumps(without_marks(body)).replace(str(root), "$ROOT"))


def test_with_the_setting_off_a_request_is_the_same_without_the_mark(opencode_project) -> None:
    on, off = marked_project(opencode_project), marked_project(opencode_project, mark=False)
    for project in (on, off):
        assert project.run("count some ranges").ok
    for marked, plain in zip(bodies(on), bodies(off), strict=True):
        assert cache_marks(plain) == opencode_marks(plain)
        assert normalised(marked, on.root) == normalised(plain, off.root)
    assert any(len(cache_marks(body)) == 4 for body in bodies(on))


def test_no_assistant_text_before_the_boundary_no_mark(opencode_project) -> None:
    script = [{key: value for key, value in step(number).items() if key != "say"} for number in range(10)]
    project = marked_project(opencode_project, [*script, {"text": "Counted every range."}])
    run = project.run("count some ranges")
    assert run.ok, run.stderr[-3000:]
    assert intended_marks(project, run.session_id) == [None] * (len(script) + 1)
    for body in bodies(project):
        assert_marked_as_planned(body, None)


def test_an_anthropic_provider_under_another_id_takes_the_mark(opencode_project) -> None:
    """OpenCode renames only the options keyed by the provider's own id to the SDK's key: the
    `anthropic` key deepmem writes reaches the Anthropic SDK of a provider named otherwise."""
    project = marked_project(opencode_project, provider="proxy")
    run = project.run("count some ranges")
    assert run.ok, run.stderr[-3000:]
    intended = intended_marks(project, run.session_id)
    for body, text in zip(bodies(project), intended, strict=True):
        assert_marked_as_planned(body, text)
    assert any(text is not None for text in intended)


def test_model_options_with_cache_control_keep_opencodes_marks_out_and_ours_in(opencode_project) -> None:
    project = marked_project(opencode_project)
    config = json.loads((project.root / "opencode.json").read_text())
    config["provider"]["anthropic"]["models"][MODEL]["options"] = {"cacheControl": {"type": "ephemeral"}}
    (project.root / "opencode.json").write_text(json.dumps(config))
    run = project.run("count some ranges")
    assert run.ok, run.stderr[-3000:]
    intended = intended_marks(project, run.session_id)
    for body, text in zip(bodies(project), intended, strict=True):
        marks = cache_marks(body)
        assert len(marks) + ("cache_control" in body) <= 4
        assert [block(body, where)["text"] for where in marks] == ([text] if text else [])
    assert any(text is not None for text in intended)


def test_a_30k_token_agents_md_keeps_one_system_block(opencode_project) -> None:
    rules = "".join(f"- Rule {n}: keep module {n} free of side effects at import time.\n" for n in range(2_500))
    project = marked_project(opencode_project, files={"AGENTS.md": rules})
    run = project.run("count some ranges")
    assert run.ok, run.stderr[-3000:]
    intended = intended_marks(project, run.session_id)
    for body, text in zip(bodies(project), intended, strict=True):
        assert_marked_as_planned(body, text)
        assert "Rule 2499" in body["system"][0]["text"]


TURN_ONE, TURN_TWO = [*(step(n) for n in range(6)), {"text": "First ranges counted."}], [
    *(step(n) for n in range(6, 10)), {"text": "Second ranges counted."}]
"""Two turns; the schedule does not jump at the first request of the second (its older messages stay)."""


def test_a_restarted_opencode_sends_the_same_prefix_whisper_and_marks_included(opencode_project) -> None:
    """Each `opencode run --session` is a new OpenCode and a new engine: the first request of the
    second turn starts with the bytes of the last request of the first (marks aside, which move),
    the first prompt's whisper as the first engine had it by then."""
    project = marked_project(opencode_project, [*TURN_ONE, *TURN_TWO])
    added = subprocess.run([sys.executable, "-m", "deepmem", "memory", "add", "--type", "fact", "--root", str(project.root),
                            "Ranges are counted with seq, one number per line, from 1 up to the limit."],
                           capture_output=True, text=True, check=False)
    assert added.returncode == 0, added.stderr
    first = project.run("count ranges with seq")
    assert first.ok, first.stderr[-3000:]
    second = project.run("count more ranges with seq", session=first.session_id)
    assert second.ok, second.stderr[-3000:]
    sent, planned = bodies(project), plans(project, first.session_id)
    assert len(sent) == len(planned) == len(TURN_ONE) + len(TURN_TWO)
    for body, (text, _) in zip(sent, planned, strict=True):
        assert_marked_as_planned(body, text)
    before, after = sent[len(TURN_ONE) - 1], sent[len(TURN_ONE)]
    prompt = sent[0]["messages"][0]["content"]
    assert len(prompt) == 2 and "seq" in prompt[1]["text"], "the first prompt got no whisper"
    assert len(before["messages"][0]["content"]) == 2, "the first prompt's whisper is the opening's: every jump reads it"
    assert planned[len(TURN_ONE) - 1] == planned[len(TURN_ONE)] and planned[len(TURN_ONE)][0] is not None, planned
    assert after["system"] == before["system"]
    assert without_marks(after["messages"][: len(before["messages"])]) == without_marks(before["messages"])


def test_a_model_switch_leaves_the_old_models_text_unmarked(opencode_project) -> None:
    project = marked_project(opencode_project, [*TURN_ONE, *TURN_TWO])
    config = json.loads((project.root / "opencode.json").read_text())
    models = config["provider"]["anthropic"]["models"]
    models["claude-haiku-4-5"] = models[MODEL]
    (project.root / "opencode.json").write_text(json.dumps(config))
    first = project.run("count ranges with seq")
    assert first.ok, first.stderr[-3000:]
    second = project.run("count more ranges", session=first.session_id, args=("--model", "anthropic/claude-haiku-4-5"))
    assert second.ok, second.stderr[-3000:]
    sent, intended = bodies(project), intended_marks(project, first.session_id)
    for body, text in zip(sent, intended, strict=True):
        assert_marked_as_planned(body, text)
    assert intended[len(TURN_ONE) - 1] is not None and intended[len(TURN_ONE)] is None
