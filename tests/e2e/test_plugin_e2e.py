"""The plugin inside the real `opencode` binary, installed by `deepmem init`, against a scripted model.

What reaches the fake model is the evidence: old tool outputs arrive compressed with
markers, `deep_expand` gives an original back, and a session whose engine is killed midway
still completes and is compressed again once the engine has restarted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from tests.e2e.harness import Project

MARKER = re.compile(r"ccr:([0-9a-f]{16}) · deep_expand to restore")
STARTED = "engine started in"
ENGINE_ENV = {
    # Small batches so the boundary moves within a short scripted session, and a deadline
    # that a loaded CI machine always meets (a late answer would only delay compression).
    "DEEPMEM_TAIL_STEPS": "2",
    "DEEPMEM_BATCH_STEPS": "3",
    "DEEPMEM_DEADLINE_MS": "20000",
}


def module_source(name: str, functions: int) -> str:
    """A Python file long enough for the file-read compressor to cut."""
    blocks = [f'"""Module {name}."""\n\nimport os\n']
    for index in range(functions):
        blocks.append(
            f"\n\ndef {name}_step_{index}(value):\n"
            f'    """Step {index} of {name}."""\n'
            f"    total = value * {index} + len(os.sep)\n"
            f"    for item in range({index}):\n"
            f"        total += item\n"
            f"    return total\n"
        )
    return "".join(blocks)


FILES = {f"pkg/{name}.py": module_source(name, 40) for name in ("alpha", "beta", "gamma", "delta")}


def reads(names: list[str]) -> list[dict]:
    return [{"tool": "read", "args": {"filePath": f"$ROOT/pkg/{name}.py"}, "say": f"Reading {name}."} for name in names]


def bash(command: str) -> dict:
    return {"tool": "bash", "args": {"command": command, "description": "Run a command"}}


def session_steps() -> list[dict]:
    """Seventeen tool steps over the project, then a final answer."""
    return [
        *reads(["alpha", "beta"]),
        bash("seq 1 400"),
        *reads(["gamma", "delta"]),
        bash("ls -la pkg"),
        *reads(["alpha", "gamma"]),
        bash("seq 1000 1400"),
        *reads(["beta", "delta"]),
        bash("wc -l pkg/*.py"),
        *reads(["alpha", "beta", "gamma", "delta"]),
        bash("echo done"),
        {"text": "All modules read."},
    ]


def installed_project(opencode_project: Callable[..., Project], script: list[dict]) -> Project:
    """A project wired to the fake model, with the plugin installed by `deepmem init`."""
    project = opencode_project(script, files=FILES, env=ENGINE_ENV)
    done = subprocess.run(
        [sys.executable, "-m", "deepmem", "init", "--root", str(project.root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return project


def engine_starts(project: Project) -> int:
    log = project.root / ".deep-memory" / "logs" / "bridge.log"
    return log.read_text(encoding="utf-8").count(STARTED) if log.exists() else 0


def test_old_outputs_arrive_compressed_and_deep_expand_restores_them(opencode_project) -> None:
    project = installed_project(opencode_project, session_steps())
    llm = project.llm
    run = project.run("read every module of pkg")
    assert run.ok, run.stderr[-3000:]
    assert llm.steps_played() == len(llm.script)
    last = llm.agent_requests()[-1]
    keys = MARKER.findall(last.text())
    assert keys, "old tool outputs should carry markers"
    # The newest outputs are protected; the first read is old and cut.
    first_read = last.tool_results()[llm.call_id("main", 0)]
    assert MARKER.search(first_read)
    assert "def alpha_step_39" not in first_read or len(first_read) < len(FILES["pkg/alpha.py"])
    # A second turn asks for one original back through the plugin's tool.
    key = MARKER.search(first_read).group(1)
    # (The fake model resumes at the first step without answered calls: the final answer's.)
    expand_step = len(llm.script) - 1
    llm.script[expand_step:] = [{"tool": "deep_expand", "args": {"key": f"ccr:{key}"}}, {"text": "Restored."}]
    second = project.run("show me the original", continue_last=True)
    assert second.ok, second.stderr[-3000:]
    restored = llm.agent_requests()[-1].tool_results()[llm.call_id("main", expand_step)]
    expected = subprocess.run(
        [sys.executable, "-m", "deepmem", "expand", key, "--root", str(project.root)],
        capture_output=True, text=True, check=True, env=project.env(),  # the engine's key is in the project's HOME
    ).stdout
    assert restored.strip() == expected.strip() and expected.strip()
    assert "alpha_step_" in restored


def test_a_killed_engine_fails_open_and_compression_resumes(opencode_project) -> None:
    steps = session_steps()
    # Step 6 kills the engine by the pid it logged; the session must go on regardless.
    kill = bash("kill -9 $(grep -o 'pid [0-9]*' .deep-memory/logs/bridge.log | tail -1 | cut -d' ' -f2)")
    project = installed_project(opencode_project, [*steps[:6], kill, *steps[6:]])
    llm = project.llm
    run = project.run("read every module of pkg")
    assert run.ok, run.stderr[-3000:]
    assert llm.steps_played() == len(llm.script)
    assert engine_starts(project) >= 2, "the plugin restarted the engine"
    last = llm.agent_requests()[-1].tool_results()
    # An output produced after the kill became old and was cut by the restarted engine.
    after_kill = [last[llm.call_id("main", index)] for index in range(8, 12)]
    assert any(MARKER.search(text) for text in after_kill)


def test_memory_block_is_frozen_per_session_and_kept_out_of_title_requests(opencode_project) -> None:
    script = [
        {"tool": "memory_store", "args": {"text": "Releases ship from the main branch.", "type": "decision"}},
        bash("echo ok"),
        {"text": "Stored."},
    ]
    project = installed_project(opencode_project, script)
    memory = subprocess.run(
        [sys.executable, "-m", "deepmem", "memory", "add", "--type", "constraint", "--root", str(project.root),
         "Never call eval() on user input."],
        capture_output=True, text=True, check=False,
    )
    assert memory.returncode == 0, memory.stderr
    run = project.run("remember how we release")
    assert run.ok, run.stderr[-3000:]
    agent = project.llm.agent_requests()
    systems = [[m for m in request.messages if m.get("role") == "system"] for request in agent]
    assert len(agent) == len(script) and all(system == systems[0] for system in systems)
    assert "Never call eval() on user input." in str(systems[0])
    assert "Releases ship from the main branch." not in str(systems[0])  # stored mid-session: not injected
    stored = agent[1].tool_results()[project.llm.call_id("main", 0)]
    assert not stored.startswith("deepmem:"), stored
    assert "Releases ship from the main branch." in (project.root / ".deep-memory" / "MEMORY.md").read_text()
    titles = [request for request in project.llm.requests if request.kind == "title"]
    assert titles and all("<deep-memory>" not in request.text() for request in titles)


def test_checkpoint_command_does_its_work_before_its_llm_turn(opencode_project) -> None:
    script = [*reads(["alpha"]), bash("echo ok"), {"text": "Done reading."}, {"text": "Checkpoint noted."}]
    project = installed_project(opencode_project, script)
    first = project.run("read alpha")
    assert first.ok, first.stderr[-3000:]
    # The fake model resumes at the first step without answered calls (the final answer):
    # move it on so the command's turn gets its own answer.
    del project.llm.script[2]
    command = project.run("before the refactor", args=("--command", "checkpoint"), continue_last=True)
    assert command.ok, command.stderr[-3000:]
    turn = project.llm.agent_requests()[-1]
    last_user = [m for m in turn.messages if m.get("role") == "user"][-1]
    text = str(last_user.get("content"))
    assert "deepmem /checkpoint:" in text and "The command already ran." in text
    assert (project.root / ".deep-memory" / "checkpoint.md").is_file()


def test_compaction_writes_a_checkpoint_and_gets_no_memory_block(opencode_project) -> None:
    script = [
        *reads(["alpha", "beta"]),
        {"tool": "edit", "args": {"filePath": "$ROOT/pkg/alpha.py", "oldString": '"""Module alpha."""',
                                  "newString": '"""Module alpha, edited."""'}},
        {"tool": "bash", "args": {"command": "echo two", "description": "Run a command"}, "ptok": 11000},
        bash("echo three"),
        {"text": "Finished after compaction."},
    ]
    project = opencode_project(script, files=FILES, env=ENGINE_ENV, auto_compaction=True, context_limit=12000)
    done = subprocess.run(
        [sys.executable, "-m", "deepmem", "init", "--root", str(project.root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    run = project.run("read alpha and beta")
    assert run.ok, run.stderr[-3000:]
    compactions = [r for r in project.llm.requests if r.kind == "compaction"]
    assert len(compactions) == 1
    summary = compactions[0]
    assert not any("<deep-memory>" in r.text() for r in project.llm.agent_requests())  # an empty memory adds no block
    assert "<deep-memory" not in summary.text()  # no stable block, whisper or nudge in it
    checkpoint = (project.root / ".deep-memory" / "checkpoint.md").read_text(encoding="utf-8")
    assert '"read alpha and beta"' in checkpoint  # written from the session's own history
    assert "## Task overview" in summary.text()  # deepmem's structured prompt replaced OpenCode's
    assert project.llm.steps_played() == len(script)

    # The session had no checkpoint before its compaction; its continuation starts from it.
    before = project.llm.requests[: project.llm.requests.index(summary)]
    assert not any("<deepmem-resume>" in r.system_text() for r in before if r.kind == "agent")
    assert "This session was compacted" in project.llm.agent_requests()[-1].system_text()

    # A new session whose first request names a file the checkpoint changed starts from it, the same bytes at
    # every step.
    follow_up = "carry on with alpha.py where we stopped"
    project.llm.add_session_script(follow_up, [bash("echo four"), {"text": "Carried on."}])
    second = project.run(follow_up)
    assert second.ok, second.stderr[-3000:]
    assert second.session_id != run.session_id
    resumed = project.llm.agent_requests(follow_up)
    assert len(resumed) == 2
    blocks = [r.system_text() for r in resumed]
    assert "<deepmem-resume>" in blocks[0] and '"read alpha and beta"' in blocks[0]
    assert blocks[0] == blocks[1]
