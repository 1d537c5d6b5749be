"""Next-step support inside the real OpenCode: what an edit quotes is in the request that wrote it.

A long scripted session over a small project with a vendored library: the agent reads the
project files it will edit (one named by the user), reads big vendored files, pages
through command output and re-runs the tests, then edits the project files many steps
after reading them. The same script runs once with the plugin and once without it; the
fake model records every request.
"""

from __future__ import annotations

import json
import subprocess
import sys

from deepmem.replay.support import MIN_CHARS
from deepmem.tokens import estimate_tokens
from tests.e2e.fake_llm import FakeLLM

ENGINE_ENV = {"DEEPMEM_DEADLINE_MS": "20000"}
"""Default compression settings; a deadline that a loaded CI machine always meets."""
CONTEXT_LIMIT = 64_000


def numbered_module(name: str, functions: int) -> str:
    """A Python module of distinct functions, every line unique."""
    blocks = [f'"""The {name} module."""\n\nimport os\n']
    for index in range(functions):
        blocks.append(
            f"\n\ndef {name}_handler_{index}(request, retries={index}):\n"
            f'    """Handle {name} request kind {index}."""\n'
            f"    payload = request.body_for_{name}_{index}()\n"
            f"    for attempt in range(retries + {index % 5}):\n"
            f"        payload = payload.strip_{index}(attempt)\n"
            f"    return payload or os.sep * {index}\n"
        )
    return "".join(blocks)


UPLOADS = "".join(
    [
        '"""Upload handling: size limits, names, storage keys."""\n',
        "\n",
        "MAX_UPLOAD_BYTES = 10 * 1024 * 1024\n",
        'ALLOWED_SUFFIXES = (".png", ".jpg", ".pdf")\n',
        "\n",
        "\n",
        "def check_size(upload_size_in_bytes):\n",
        '    """Reject uploads over the limit."""\n',
        "    if upload_size_in_bytes > MAX_UPLOAD_BYTES:\n",
        '        raise ValueError("upload too large")\n',
        "    return upload_size_in_bytes\n",
        "\n",
        "\n",
        "def clean_name(original_file_name):\n",
        '    """A safe file name: no directories, lower-case suffix."""\n',
        '    base_name = original_file_name.rsplit("/", 1)[-1]\n',
        '    stem, _, suffix = base_name.rpartition(".")\n',
        '    return f"{stem}.{suffix.lower()}"\n',
        "\n",
        "\n",
        "def storage_key(user_identifier, cleaned_name):\n",
        '    """Where an upload is stored."""\n',
        '    return f"uploads/{user_identifier}/{cleaned_name}"\n',
        "\n",
        "\n",
        "def accept(upload_size_in_bytes, original_file_name, user_identifier):\n",
        '    """Check an upload and return its storage key."""\n',
        "    check_size(upload_size_in_bytes)\n",
        "    cleaned = clean_name(original_file_name)\n",
        "    if not cleaned.endswith(ALLOWED_SUFFIXES):\n",
        '        raise ValueError("file type not allowed")\n',
        "    return storage_key(user_identifier, cleaned)\n",
    ]
)
FILES = {
    "app/__init__.py": "",
    "app/uploads.py": UPLOADS,
    "app/storage.py": numbered_module("storage", 24),
    "app/report.py": numbered_module("report", 80),
    "app/billing.py": numbered_module("billing", 120),
    "tests/test_uploads.py": (
        "import unittest\n\nfrom app.uploads import accept\n\n\n"
        "class UploadsTest(unittest.TestCase):\n"
        "    def test_accept(self):\n"
        '        self.assertEqual(accept(10, "a/B.PNG", "u1"), "uploads/u1/B.png")\n'
    ),
    **{f"vendor/httpkit/{name}.py": numbered_module(name, 90) for name in ("client", "pool", "retry", "auth", "cookies")},
}


def lines_of(text: str, first: int, count: int) -> str:
    """`count` lines of a file from line `first` (1-based), joined as an edit quotes them."""
    return "".join(text.splitlines(keepends=True)[first - 1 : first - 1 + count]).rstrip("\n")


def read(path: str, **window: int) -> dict:
    return {"tool": "read", "args": {"filePath": f"$ROOT/{path}", **window}}


def bash(command: str) -> dict:
    return {"tool": "bash", "args": {"command": command, "description": "Run a command"}}


def edit(path: str, old: str, new: str) -> dict:
    return {"tool": "edit", "args": {"filePath": f"$ROOT/{path}", "oldString": old, "newString": new}}


TESTS = bash("python3 -m unittest discover -s tests -t . 2>&1 | tail -5")
NOISE = [
    read("vendor/httpkit/client.py"),
    bash("seq 1 2500"),
    read("vendor/httpkit/pool.py"),
    bash("grep -rn 'payload = payload' vendor | head -300"),
    read("vendor/httpkit/retry.py"),
    bash("seq 3000 5500"),
    read("vendor/httpkit/auth.py"),
    bash("ls -la app vendor/httpkit tests"),
    read("vendor/httpkit/cookies.py"),
    bash("seq 6000 8500"),
]
UPLOADS_OLD = lines_of(UPLOADS, 14, 5)
STORAGE_OLD = lines_of(FILES["app/storage.py"], 40, 6)
REPORT_OLD = lines_of(FILES["app/report.py"], 212, 5)
UPLOADS_AGAIN_OLD = lines_of(UPLOADS, 26, 7)


def session_script() -> list[dict]:
    """Thirty-nine steps: reads of project files, noise, tests, then edits quoting old reads."""
    return [
        read("app/uploads.py"),
        *NOISE[:3],
        read("app/storage.py"),
        *NOISE[3:6],
        TESTS,
        read("app/report.py", offset=200, limit=40),
        *NOISE[6:],
        TESTS,
        edit("app/uploads.py", UPLOADS_OLD, UPLOADS_OLD.replace("base_name", "leaf_name")),
        *NOISE[:4],
        TESTS,
        edit("app/storage.py", STORAGE_OLD, STORAGE_OLD.replace("payload", "body")),
        *NOISE[4:8],
        read("app/uploads.py"),
        *NOISE[8:],
        edit("app/report.py", REPORT_OLD, REPORT_OLD.replace("payload", "content")),
        TESTS,
        *NOISE[:5],
        edit("app/uploads.py", UPLOADS_AGAIN_OLD, UPLOADS_AGAIN_OLD.replace("cleaned", "safe_name")),
        TESTS,
        {"text": "Uploads, storage and report are updated; the tests pass."},
    ]


PROMPT = "Clean up app/uploads.py and the storage and report helpers it relies on."


def quoted(old: str) -> list[str]:
    """The lines of an edit's oldString that next-step support counts."""
    return [line.strip() for line in old.split("\n") if len(line.strip()) >= MIN_CHARS]


def request_tokens(llm: FakeLLM) -> int:
    """Estimated tokens of every agent request's messages, summed."""
    return sum(estimate_tokens(json.dumps(request.messages)) for request in llm.agent_requests())


def prefix_stability(llm: FakeLLM) -> float:
    """Share of each request's serialized messages that the next request starts with, over the session."""
    shared = total = 0
    requests = [json.dumps(request.messages) for request in llm.agent_requests()]
    for before, after in zip(requests, requests[1:], strict=False):
        prefix = 0
        for message_before, message_after in zip(before, after, strict=False):
            if message_before != message_after:
                break
            prefix += 1
        shared += prefix
        total += len(before)
    return shared / total


def run_both(opencode_project, script: list[dict], env: dict[str, str], **options):
    """The script played without the plugin, then with it (`deepmem init`): both projects, and the run with it."""
    plain = opencode_project(script, files=FILES, **options)
    assert plain.run(PROMPT).ok
    project = opencode_project(script, files=FILES, env=env, **options)
    done = subprocess.run(
        [sys.executable, "-m", "deepmem", "init", "--root", str(project.root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    run = project.run(PROMPT)
    assert run.ok, run.stderr[-3000:]
    assert project.llm.steps_played() == len(script)
    return plain, project, run


def test_each_edit_sees_the_lines_it_quotes_and_the_session_costs_half(opencode_project) -> None:
    script = session_script()
    plain, project, _ = run_both(opencode_project, script, ENGINE_ENV, context_limit=CONTEXT_LIMIT)
    llm = project.llm
    edits = [(index, step["args"]["oldString"]) for index, step in enumerate(script) if step.get("tool") == "edit"]
    requests = {request.step: request for request in llm.agent_requests()}
    for index, old in edits:
        seen = requests[index].text()
        missing = [line for line in quoted(old) if line not in seen]
        assert not missing, f"step {index}: the edit quotes lines its request did not show: {missing}"
    for step in script:
        if step.get("tool") == "edit":
            path = step["args"]["filePath"].replace("$ROOT/", "")
            assert step["args"]["newString"] in (project.root / path).read_text(), f"the edit of {path} was applied"
    with_plugin, without = request_tokens(llm), request_tokens(plain.llm)
    assert with_plugin <= 0.5 * without, f"{with_plugin:,} tokens with deepmem, {without:,} without"
    print(f"tokens with deepmem {with_plugin:,}, without {without:,}; prefix stability {prefix_stability(llm):.3f}")


BILLING = FILES["app/billing.py"]
BILLING_EDITS = [lines_of(BILLING, first, 4) for first in (20, 430, 300, 655)]
"""What the edits of a whole-file read quote: near its head, then from its middle and tail."""


def test_a_whole_file_read_keeps_the_lines_later_edits_quote(opencode_project) -> None:
    """A whole file is read once, then edited again and again many steps later (as real agents
    do): every edit's request shows the lines it quotes from that one read."""
    script = [read("app/billing.py"), edit("app/billing.py", BILLING_EDITS[0], BILLING_EDITS[0].replace("payload", "bill"))]
    for noise, old in zip((NOISE[:4], NOISE[4:8], NOISE[8:] + NOISE[:2]), BILLING_EDITS[1:], strict=True):
        script += [*noise, TESTS, edit("app/billing.py", old, old.replace("payload", "bill"))]
    script.append({"text": "Billing is updated."})
    assert estimate_tokens(BILLING) > 4_000
    _, project, _ = run_both(opencode_project, script, ENGINE_ENV, context_limit=CONTEXT_LIMIT)
    requests = {request.step: request for request in project.llm.agent_requests()}
    for index, step in enumerate(script):
        if step.get("tool") == "edit":
            missing = [line for line in quoted(step["args"]["oldString"]) if line not in requests[index].text()]
            assert not missing, f"step {index}: the edit quotes lines its request did not show: {missing}"
    assert all(old.replace("payload", "bill") in (project.root / "app/billing.py").read_text() for old in BILLING_EDITS)
