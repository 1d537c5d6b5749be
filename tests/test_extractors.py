"""Extractors on real corpus cuts: shell writes, files modified, errors, statements, progress."""

from __future__ import annotations

import re

import orjson
import pytest

from deepmem.extractors import extract
from deepmem.extractors.calls import build_timeline
from deepmem.extractors.constraints import find_constraints
from deepmem.extractors.decisions import find_decisions
from deepmem.extractors.errors import find_errors
from deepmem.extractors.files import files_modified
from deepmem.toolcalls.shell_writes import command_writes

from .conftest import FIXTURES

DJANGO = orjson.loads((FIXTURES / "sessions" / "django-15499.json").read_bytes())["messages"]
DEMO = orjson.loads((FIXTURES / "sessions" / "opencode-demo.json").read_bytes())["messages"]

# Commands quoted from swe-gemini3 sessions (MIT, see fixtures/sessions/LICENSE-swe-gemini3).
SHELL_CASES = [
    ("sed -i 's/a/b/' astropy/table/table.py", [("astropy/table/table.py", "written")]),
    ("cd /testbed && sed -i -e 's/x/y/' foo.py bar.py", [("/testbed/foo.py", "written"), ("/testbed/bar.py", "written")]),
    ('echo "AI Assistant" >> AUTHORS', [("AUTHORS", "written")]),
    ("sort -o AUTHORS AUTHORS", []),
    ("cp pylint/utils/utils.py pylint/utils/utils.py.bak", [("pylint/utils/utils.py.bak", "written")]),
    ("mv x.py y.py && rm -rf build tmp.txt 2>&1 | tee log.txt", [
        ("y.py", "written"), ("x.py", "deleted"), ("build", "deleted"),
        ("tmp.txt", "deleted"), ("log.txt", "written"),
    ]),
    ("sed -n '110,180p' sphinx/domains/python.py > parse_annotation.py\ncat parse_annotation.py",
     [("parse_annotation.py", "written")]),
    ("ln -s ../real_dir reproduce_issue/test_root/symlink_dir", [("reproduce_issue/test_root/symlink_dir", "created")]),
    ("python3 - <<'EOF'\np = 'django/db/models/query.py'\ns = open(p).read()\nwith open(p, 'w') as f:\n    f.write(s)\nEOF",
     [("django/db/models/query.py", "written")]),
    ("""python3 -c "import os; os.symlink('.', 'symlink_dir')" """, [("symlink_dir", "written")]),
    ("git apply <<'EOF'\ndiff --git a/q/r.py b/q/r.py\n--- a/q/r.py\n+++ b/q/r.py\n@@ -1 +1 @@\n-a\n+b\nEOF",
     [("q/r.py", "edited")]),
    ("grep -rn foo x.py > /dev/null 2>&1", []),
    ("sed -i '1677,1679c\\        # Don\\'t show the docstring' sphinx/ext/autodoc/__init__.py", []),
]


def written(command: str, scripts: dict[str, str]) -> list[tuple[str, str]]:
    """(path, action) of the files a command changes."""
    return [(change.path, change.action) for change in command_writes(command, scripts)]


@pytest.mark.parametrize(("command", "expected"), SHELL_CASES)
def test_shell_writes(command: str, expected: list[tuple[str, str]]) -> None:
    """Redirects, sed -i, cp, mv, rm, tee, ln, Python heredocs and git apply name their files."""
    assert written(command, {}) == expected


def test_scripts_written_earlier_are_followed() -> None:
    """A shell script or Python file written by a heredoc is followed when it runs later."""
    scripts: dict[str, str] = {}
    first = written(
        "cat <<'EOF' > reproduce_issue_isolated.sh\n#!/bin/bash\nmkdir -p reproduction\ncd reproduction\n"
        "echo 'assert False' > foobar/__init__.py\nEOF\nchmod +x reproduce_issue_isolated.sh",
        scripts,
    )
    assert first == [("reproduce_issue_isolated.sh", "written")]
    assert written("./reproduce_issue_isolated.sh", scripts) == [("reproduction/foobar/__init__.py", "written")]
    command_writes("cat <<'EOF' > patch.py\nwith open('a/b.py', 'w') as f:\n    f.write('x')\nEOF", scripts)
    assert written("python3 patch.py", scripts) == [("a/b.py", "written")]
    command_writes("cat > fix.diff <<'EOF'\n--- a/k.py\n+++ b/k.py\n@@ -1 +1 @@\n-a\n+b\nEOF", scripts)
    assert written("patch -p1 < fix.diff", scripts) == [("k.py", "edited")]


def final_diff_files(messages: list[dict]) -> set[str]:
    """Files of the session's final submitted diff."""
    outputs = [p["state"].get("output") or "" for m in messages for p in m["parts"] if p.get("type") == "tool"]
    final = next(o for o in reversed(outputs) if "diff --git" in o)
    return set(re.findall(r"(?m)^diff --git a/(\S+) b/", final))


def test_files_modified_cover_the_submitted_diff() -> None:
    """Every file of the final diff is listed, relative to the project root, with scratch files marked deleted."""
    files = {change.path: change for change in files_modified(build_timeline(DJANGO))}
    assert final_diff_files(DJANGO) <= set(files)
    assert files["reproduce_issue.py"].actions == ["written", "deleted"]
    assert files["django/db/migrations/operations/models.py"].times == 10


def test_files_modified_from_edit_tools_and_patch_parts() -> None:
    """OpenCode's edit tool names the file by absolute path; inside the root it becomes relative."""
    paths = [change.path for change in files_modified(build_timeline(DEMO))]
    assert paths == ["jsonpkg/tool.py"]


def test_errors_fixed_later_and_unresolved() -> None:
    """A failing command rerun successfully is fixed; one never rerun stays unresolved."""
    errors = {e.label: e for e in find_errors(build_timeline(DJANGO))}
    assert errors["python3 reproduce_issue.py"].fixed_step == 21
    assert errors["python3 reproduce_issue.py"].message == "SyntaxError: invalid syntax"
    unresolved = [e for e in errors.values() if not e.resolved]
    assert len(unresolved) == 1 and unresolved[0].label.startswith("sed -i '38i")


def message(role: str, *parts: dict, step_info: dict | None = None) -> dict:
    """A minimal OpenCode message."""
    return {"info": {"role": role, "id": f"msg_{role}", "sessionID": "ses_t", **(step_info or {})}, "parts": list(parts)}


def text(value: str) -> dict:
    """A text part."""
    return {"type": "text", "text": value}


def bash(command: str, exit_code: int, output: str = "") -> dict:
    """A completed bash part with its exit status."""
    state = {"status": "completed", "input": {"command": command}, "output": output, "metadata": {"exit": exit_code}}
    return {"type": "tool", "tool": "bash", "state": state}


def test_test_failure_then_pass_is_fixed_and_grep_without_match_is_no_error() -> None:
    """Same command passing later resolves it; `grep` exit 1 means no match, not an error."""
    messages = [
        message("user", text("fix the parser")),
        message("assistant", bash("pytest  tests/test_a.py", 1, "FAILED tests/test_a.py::test_x - AssertionError")),
        message("assistant", bash("grep -n nothing src/a.py", 1)),
        message("assistant", bash("pytest tests/test_a.py", 0, "1 passed")),
        message("assistant", bash("python -m mypkg", 2, "Traceback\nModuleNotFoundError: No module named 'mypkg'")),
    ]
    errors = find_errors(build_timeline(messages))
    assert [(e.label, e.resolved) for e in errors] == [("pytest tests/test_a.py", True), ("python -m mypkg", False)]
    assert errors[1].message == "ModuleNotFoundError: No module named 'mypkg'"


def test_decisions_and_constraints_in_english_and_chinese() -> None:
    """Choices and rules are found in both languages; the assistant's musings are not rules."""
    messages = [
        message("user", text("You must not modify the tests. 数据库迁移不能删除旧字段。")),
        message("assistant", text("I'll use a lookup table instead of the if chain. So this cannot be reached.")),
        message("user", text("我决定使用 orjson 来编码。好的。")),
        message("assistant", text("We must never push to main without review.")),
    ]
    timeline = build_timeline(messages)
    assert [s.text for s in find_decisions(timeline)] == [
        "I'll use a lookup table instead of the if chain.",
        "我决定使用 orjson 来编码。",
    ]
    assert [s.text for s in find_constraints(timeline)] == [
        "You must not modify the tests.",
        "数据库迁移不能删除旧字段。",
        "We must never push to main without review.",
    ]


def test_progress_reads_todos_and_the_unanswered_request() -> None:
    """The newest todo list wins; a request with no reply yet is flagged."""
    progress = extract(DEMO).progress
    assert [(t.content, t.status) for t in progress.todos] == [("Fix decoder", "in_progress")]
    messages = [*DEMO, message("user", text("now also update the docs"))]
    later = extract(messages).progress
    assert later.unanswered and later.last_request == "now also update the docs"


def test_extract_is_deterministic() -> None:
    """Same messages, same findings."""
    assert extract(DJANGO) == extract(orjson.loads(orjson.dumps(DJANGO)))


def test_a_constant_that_looks_like_a_key_is_no_code_name() -> None:
    """Go source with a long hex constant and a generated literal: the real names are kept, the tokens are not."""
    source = ('const goldenRatioSeed = 0x9E3779B97F4A7C15\n'
              'var fixtureToken = "Kq8ZpX2mW7vR4tLs9NcB"\n'
              'func ShadowBranchName(base_commit string) string { return "aB3dE9fGh2JkLm7" }\n')
    edit = {"type": "tool", "tool": "write", "state": {"status": "completed", "output": "Wrote file",
                                                          "input": {"filePath": "/repo/seed.go", "content": source}}}
    names = {name for name, _ in extract([message("user", text("add the seed")), message("assistant", edit)]).context.names}
    assert {"goldenRatioSeed", "fixtureToken", "ShadowBranchName", "base_commit"} <= names
    assert not names & {"Kq8ZpX2mW7vR4tLs9NcB", "aB3dE9fGh2JkLm7", "x9E3779B97F4A7C15", "E3779B97F4A7C15"}


def test_a_command_that_only_deletes_a_file_gives_it_no_code_names() -> None:
    """`rm -rf build` followed by a harness's marker: the marker is no code name of the deleted folder, and a
    command that writes a file still names what it writes."""
    def bash(command: str) -> dict:
        return {"type": "tool", "tool": "bash", "state": {"status": "completed", "output": "", "input": {"command": command}}}

    names = dict(extract([
        message("user", text("clean up")),
        message("assistant", bash("rm -rf reproduction\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A")),
        message("assistant", bash("cat > fix_helper.py <<'EOF'\ndef apply_shadow_fix(base_commit):\n    pass\nEOF")),
    ]).context.names)
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" not in names
    assert names.get("apply_shadow_fix") == "fix_helper.py"
