"""A compaction that never comes: the real `opencode` binary compacts a long session without deepmem, and not with it.

The model has a 200K window and a 64K output limit, as a Claude model does: OpenCode compacts
once a step's tokens reach 200K less 32K. The fake model reports, for each request, a third of
its messages' characters, so a request counts what it carries, and more tokens than deepmem's
estimate, as Claude's tokenizer does. Every step reads another long module. Without deepmem the session crosses the host's point and OpenCode summarises it;
with deepmem the pressure jump cuts the old views first. deepmem's former rule (a jump once
its estimate of the messages passed 75% of the window) let this session compact.

Reads cost nothing in `[cost]`, so no jump would ever pay for itself here: every jump the
session makes is forced by the window (or by the cold cache of its first request).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

from deepmem.transform.window import ModelLimits, usable_tokens
from tests.e2e.fake_llm import FakeLLM
from tests.e2e.test_plugin_e2e import module_source, reads

CONTEXT, OUTPUT = 200_000, 64_000
USABLE = usable_tokens(ModelLimits(context=CONTEXT, output=OUTPUT))
MODULES = 60
FUNCTIONS = 150
ENGINE_ENV = {
    "DEEPMEM_DEADLINE_MS": "20000",
    "DEEPMEM_TAIL_STEPS": "2",
    "DEEPMEM_COST_INPUT": "1.0",
    "DEEPMEM_COST_CACHE_READ": "0.0",
    "DEEPMEM_COST_CACHE_WRITE": "1.0",
}
"""A short tail, and prices under which no jump pays (reads are free): only the window forces one."""
PROMPT = "read every module under pkg/ and tell me which handlers share a limit"
FILES = {f"pkg/module_{number}.py": module_source(f"module_{number}", FUNCTIONS) for number in range(MODULES)}


@dataclass
class ClaudeLikeLLM(FakeLLM):
    """The fake model counting a token per 3 characters of its request's messages."""

    chars_per_token: float = 3


def session_script() -> list[dict]:
    """A read of every module, then a final answer."""
    return [*reads([f"module_{number}" for number in range(MODULES)]), {"text": "No two handlers share a limit."}]


def play(opencode_project, with_deepmem: bool):
    """The session in a fresh project, with deepmem installed or without any plugin."""
    script = session_script()
    project = opencode_project(
        script,
        files=FILES,
        env=ENGINE_ENV,
        llm_type=ClaudeLikeLLM,
        auto_compaction=True,
        context_limit=CONTEXT,
        output_limit=OUTPUT,
    )
    if with_deepmem:
        done = subprocess.run(
            [sys.executable, "-m", "deepmem", "init", "--root", str(project.root)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    run = project.run(PROMPT)
    assert run.ok, run.stderr[-3000:]
    assert project.llm.steps_played() == len(script)
    return project


def test_a_session_that_compacts_without_deepmem_does_not_compact_with_it(opencode_project) -> None:
    plain = play(opencode_project, with_deepmem=False)
    kinds = [request.kind for request in plain.llm.requests if request.kind != "title"]
    assert "compaction" in kinds, "the session must reach the host's point without deepmem"
    plain_sizes = [plain.llm.prompt_tokens(request) for request in plain.llm.agent_requests()]
    assert max(plain_sizes) >= USABLE

    project = play(opencode_project, with_deepmem=True)
    kinds = [request.kind for request in project.llm.requests if request.kind != "title"]
    assert "compaction" not in kinds
    sizes = [project.llm.prompt_tokens(request) for request in project.llm.agent_requests()]
    assert len(sizes) == MODULES + 1
    assert max(sizes) < USABLE, max(sizes)
