"""A real compaction in the `opencode` binary: what the compaction request holds, and what the first
request after it holds, when the model's own summary keeps nothing of the work."""

from __future__ import annotations

import subprocess
import sys

from tests.e2e.fake_llm import DEFAULT_SUMMARY
from tests.e2e.test_plugin_e2e import ENGINE_ENV, FILES, bash, reads

REQUEST = "rename alpha_step_0 to alpha_step_zero and run the checks"
FACTS = ("rename alpha_step_0 to alpha_step_zero", "pkg/alpha.py", "alpha_step_zero", "pkg/beta.py", "python3 -c")
"""The open request, the file changed, its code name, a file only read, and the command that worked."""


def test_the_continuation_after_a_compaction_starts_from_the_checkpoint(opencode_project) -> None:
    script = [
        *reads(["alpha", "beta"]),
        {"tool": "edit", "args": {"filePath": "$ROOT/pkg/alpha.py", "oldString": "def alpha_step_0(value):",
                                  "newString": "def alpha_step_zero(value):"}},
        {**bash("python3 -c 'import pkg' && echo checked"), "ptok": 11000},
        bash("echo after"),
        {"text": "Finished after compaction."},
    ]
    project = opencode_project(script, files=FILES, env=ENGINE_ENV, auto_compaction=True, context_limit=12000)
    done = subprocess.run([sys.executable, "-m", "deepmem", "init", "--root", str(project.root)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    run = project.run(REQUEST)
    assert run.ok, run.stderr[-3000:]
    assert project.llm.steps_played() == len(script)

    order = [r.kind for r in project.llm.requests if r.kind != "title"]
    cut = order.index("compaction")
    assert order == ["agent"] * cut + ["compaction", "agent", "agent"]
    compaction = next(r for r in project.llm.requests if r.kind == "compaction")
    agents = project.llm.agent_requests()
    before, after = agents[:cut], agents[cut:]

    # The compaction request: deepmem's prompt with the checkpoint, no stable block.
    assert "## Task overview" in compaction.text() and "<deepmem-checkpoint>" in compaction.text()
    checkpoint = (project.root / ".deep-memory" / "checkpoint.md").read_text(encoding="utf-8")
    assert [fact for fact in FACTS if fact not in compaction.text()] == [], checkpoint
    assert "<deep-memory" not in compaction.system_text()

    # The model's summary kept none of it; the first request after the compaction has every fact.
    assert not any(fact in DEFAULT_SUMMARY for fact in FACTS)
    first = after[0]
    assert DEFAULT_SUMMARY in first.text()
    assert "This session was compacted" in first.system_text()
    assert [fact for fact in FACTS if fact not in first.system_text()] == [], first.system_text()
    assert not any("This session was compacted" in r.system_text() for r in before)
    # Frozen anew once: the next request carries the same bytes, and the block keeps its budget.
    assert after[1].system_text() == first.system_text()
    block = first.system_text()[first.system_text().index("<deepmem-resume>"):]
    assert len(block) < 6_000
