"""A GPT model inside the real OpenCode, against a stand-in for OpenAI's Responses API.

OpenCode 1.18.33 offers a model whose id holds `gpt-` (not `gpt-4`, not `oss`) the
`apply_patch` tool in place of `edit` and `write`, and sends its session id as the
Responses API's `prompt_cache_key`. The agent reads a file through the shell with `sed -n`,
runs long commands that deepmem cuts, and patches the file steps later, quoting the lines
it read: with deepmem installed, those lines are in the request the patch answers, and the
cache key is the session's on every request.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from deepmem.replay.support import MIN_CHARS
from tests.e2e.openai_llm import MODEL, ResponsesLLM

ENGINE_ENV = {"DEEPMEM_DEADLINE_MS": "20000"}
SETTINGS = """[compress]
tail_steps = 2
batch_steps = 3
schedule = "fixed"
context_window = 200000

[cost]
family = "openai"
"""
"""Small fixed batches so a short session jumps; OpenAI's prices."""
ORDERS = "".join(f"    total_{n} = compute_total(orders, region={n}, scale=2)\n" for n in range(1, 80))
QUOTED = ORDERS.split("\n")[40:43]
PATCH = "\n".join(
    ["*** Begin Patch", "*** Update File: app/orders.py", "@@", *(f" {line}" for line in QUOTED[:-1]), f"-{QUOTED[-1]}",
     "+    total_43 = 0", "*** End Patch"]
)
SCRIPT: list[dict[str, Any]] = [
    {"tool": "bash", "args": {"command": "sed -n '1,200p' app/orders.py", "description": "read orders"}},
    *({"tool": "bash", "args": {"command": f"seq 1 {3000 + n}", "description": f"count {n}"}} for n in range(7)),
    {"tool": "apply_patch", "args": {"patchText": PATCH}},
    {"text": "Patched the total."},
]


def test_a_gpt_model_patches_what_it_read_through_the_shell(opencode_project) -> None:
    """The plugin runs, the old counts are cut, the patch's quoted lines were in view when it was
    written, and every request carries the session id as its cache key."""
    project = opencode_project(SCRIPT, llm_type=ResponsesLLM, files={"app/orders.py": ORDERS}, env=ENGINE_ENV,
                               context_limit=200_000, model_id=MODEL, provider="openai", npm="@ai-sdk/openai")
    done = subprocess.run([sys.executable, "-m", "deepmem", "init", "--root", str(project.root)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (project.root / ".deep-memory" / "config.toml").write_text(SETTINGS, encoding="utf-8")
    run = project.run("Set the total of region 43 to zero.", export=True)
    assert run.ok, run.stderr[-3000:]
    requests = project.llm.agent_requests()
    assert project.llm.steps_played() == len(SCRIPT)
    offered = {tool.get("name") for tool in requests[0].raw.get("tools", [])}
    assert "apply_patch" in offered and not offered & {"edit", "write"}
    patching = next(request for request in requests if request.step == len(SCRIPT) - 2)
    assert all(len(line.strip()) >= MIN_CHARS and line in patching.text() for line in QUOTED)
    assert "deep_expand to restore" in patching.text() and "\n1500\n" not in patching.text()
    assert {request.raw.get("prompt_cache_key") for request in requests} == {run.session_id}
    assert (project.root / "app" / "orders.py").read_text().count("total_43 = 0") == 1
