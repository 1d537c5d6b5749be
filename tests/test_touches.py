"""What a tool call touches: one table of OpenCode tool calls and shell commands, and the facts built on it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deepmem.compressors import compressors_for
from deepmem.toolcalls.code_mode import script_inputs
from deepmem.toolcalls.kinds import tool_kind
from deepmem.toolcalls.touches import Touches, touches
from deepmem.transform.facts import FactsBuilder
from deepmem.types import Context, Settings

PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: src/new.py\n+x\n*** Delete File: old.py\n*** End Patch"
FIX_SCRIPT = "p = 'pkg/core.py'\ns = open(p).read()\nopen(p, 'w').write(s.replace('a', 'b'))\n"


def call(tool: str, **inputs: Any) -> dict[str, Any]:
    """A completed OpenCode tool part."""
    return {"id": f"prt_{tool}", "type": "tool", "tool": tool, "callID": "c", "state": {"status": "completed", "input": inputs, "output": ""}}


def bash(command: str) -> dict[str, Any]:
    """A completed `bash` part."""
    return call("bash", command=command, description="d")


def script(*commands: str, patch: str = "") -> dict[str, Any]:
    """A completed code-mode `exec` part whose JavaScript runs `commands` and applies `patch`, as Codex writes it."""
    runs = "".join(f"await tools.exec_command({{cmd: {json.dumps(command)}, workdir: \"/repo\"}});\n" for command in commands)
    return call("exec", code=runs + (f"await tools.apply_patch({json.dumps(patch)});\n" if patch else ""))


def summary(touched: Touches) -> dict[str, Any]:
    """The non-empty fields of a `Touches`, for a readable table."""
    fields = {
        "reads": touched.reads,
        "edits": touched.edits,
        "creates": touched.creates,
        "moves": touched.moves,
        "deletes": touched.deletes,
        "command": touched.command,
    }
    return {name: value for name, value in fields.items() if value}


CASES = [
    (call("read", filePath="/repo/a.py"), {"reads": ("/repo/a.py",)}),
    (call("edit", filePath="a.py", oldString="x", newString="y"), {"edits": ("a.py",)}),
    (call("multiedit", filePath="a.py", edits=[]), {"edits": ("a.py",)}),
    (call("write", filePath="b.py", content="x = 1\n"), {"edits": ("b.py",)}),
    (call("apply_patch", patchText=PATCH), {"edits": ("src/app.py",), "creates": ("src/new.py",), "deletes": ("old.py",)}),
    (call("patch", patch="--- a/k.py\n+++ b/k.py\n@@ -1 +1 @@\n-a\n+b\n"), {"edits": ("k.py",)}),
    (call("grep", pattern="x", path="src"), {}),
    (call("glob", pattern="**/*.py"), {}),
    (call("list", path="src"), {}),
    (call("todowrite", todos=[]), {}),
    (bash("cat -n src/a.py"), {"reads": ("src/a.py",), "command": "cat -n src/a.py"}),
    (bash("sed -n '10,20p' a.py"), {"reads": ("a.py",), "command": "sed -n '10,20p' a.py"}),
    (bash("grep -rn foo src"), {"command": "grep -rn foo src"}),
    (bash("echo x > out.txt"), {"edits": ("out.txt",), "command": "echo x > out.txt"}),
    (bash("echo x >> log.txt 2>&1"), {"edits": ("log.txt",), "command": "echo x >> log.txt 2>&1"}),
    (bash("sed -i '31d;40d' m.py"), {"edits": ("m.py",), "command": "sed -i '31d;40d' m.py"}),
    (bash("cd /repo && sed -i 's/a > 0/b/' m.py"), {"edits": ("/repo/m.py",), "command": "cd /repo && sed -i 's/a > 0/b/' m.py"}),
    (bash("mv a.py b.py"), {"edits": ("b.py",), "moves": (("a.py", "b.py"),), "deletes": ("a.py",), "command": "mv a.py b.py"}),
    (bash("git mv a.py b.py"), {"edits": ("b.py",), "moves": (("a.py", "b.py"),), "deletes": ("a.py",), "command": "git mv a.py b.py"}),
    (bash("rm -f a.py b.py"), {"deletes": ("a.py", "b.py"), "command": "rm -f a.py b.py"}),
    (bash("git rm --cached a.py"), {"command": "git rm --cached a.py"}),
    (bash("cp a.py a.py.bak"), {"edits": ("a.py.bak",), "command": "cp a.py a.py.bak"}),
    (bash("python t.py | tee out.log"), {"edits": ("out.log",), "command": "python t.py | tee out.log"}),
    (bash("touch new.py"), {"creates": ("new.py",), "command": "touch new.py"}),
    (bash("cat > f.py <<'EOF'\nopen('x', 'w')\nEOF"), {"edits": ("f.py",), "command": "cat > f.py <<'EOF'\nopen('x', 'w')\nEOF"}),
    (bash(f"python - <<'EOF'\n{FIX_SCRIPT}EOF"), {"edits": ("pkg/core.py",), "command": f"python - <<'EOF'\n{FIX_SCRIPT}EOF"}),
    (script("sed -n '1,80p' src/a.go"), {"reads": ("src/a.go",), "command": "sed -n '1,80p' src/a.go"}),
    (script("rg -n \"func \" src", "nl -ba src/a.go"), {"reads": ("src/a.go",), "command": "rg -n \"func \" src\nnl -ba src/a.go"}),
    (bash("git status --short\nsed -n '5,9p' a.go"), {"reads": ("a.go",), "command": "git status --short\nsed -n '5,9p' a.go"}),
    (bash("git diff -- a.go b.go"), {"reads": ("a.go",), "command": "git diff -- a.go b.go"}),
    (script(patch=PATCH), {"edits": ("src/app.py",), "creates": ("src/new.py",), "deletes": ("old.py",)}),
    (script("rm b.go", patch=PATCH), {"edits": ("src/app.py",), "creates": ("src/new.py",), "deletes": ("b.go", "old.py"), "command": "rm b.go"}),
    (call("exec", code="text(await tools.list_agents({}))"), {}),
    (bash(f"cat <<'EOF' > fix.py\n{FIX_SCRIPT}EOF\npython fix.py"), {
        "edits": ("fix.py", "pkg/core.py"), "command": f"cat <<'EOF' > fix.py\n{FIX_SCRIPT}EOF\npython fix.py",
    }),
]


@pytest.mark.parametrize(("part", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_what_a_call_touches(part: dict[str, Any], expected: dict[str, Any]) -> None:
    """Each OpenCode tool and each way a shell command writes names the files it shows and changes."""
    assert summary(touches(part)) == expected


def test_a_read_shows_its_first_line() -> None:
    """A `read` with an offset and a `sed -n` range start at their first line."""
    assert touches(call("read", filePath="a.py", offset=40)).first_line == 40
    assert touches(bash("sed -n '10,20p' a.py")).first_line == 10


def test_a_code_mode_read_is_a_view_from_its_first_line() -> None:
    """A script that prints a file with `sed -n` shows it from the range's first line, and its output is a read."""
    part = script("sed -n '120,240p' internal/sem/parser.go")
    assert touches(part).first_line == 120
    assert tool_kind(part) == "read"


def test_a_code_mode_template_literal_and_quoted_key_are_read() -> None:
    """`cmd` given as a template literal or as a quoted JSON key is read the same."""
    assert touches(call("exec", code="await tools.exec_command({cmd: `cat -n a.go`})")).reads == ("a.go",)
    assert touches(call("exec", code='await tools.exec_command({"cmd":"cat a.go"})')).reads == ("a.go",)


def test_a_script_passing_its_commands_by_name_runs_the_command_lines_it_holds() -> None:
    """`const cmds = [[label, command], …]; tools.exec_command({cmd, …})`: the command lines run, the labels do not."""
    code = (
        'const cmds=[\n  ["diff","git diff --stat 385cc7e...HEAD"],\n  ["algo","sed -n \'330,500p\' internal/sem/analyze.go"],\n'
        '  ["refs","rg -n \\"func key|BodyHash\\" internal/sem"]\n];\n'
        'const out=await Promise.all(cmds.map(([n,cmd])=>tools.exec_command({cmd,workdir:"/repo",yield_time_ms:10000})));\n'
        'for(let i=0;i<out.length;i++) text(`### ${cmds[i][0]}\\n${out[i].output}`);'
    )
    assert script_inputs(code) == {
        "command": "git diff --stat 385cc7e...HEAD\nsed -n '330,500p' internal/sem/analyze.go\nrg -n \"func key|BodyHash\" internal/sem"
    }
    touched = touches(call("exec", code=code))
    assert (touched.reads, touched.first_line) == (("internal/sem/analyze.go",), 330)
    assert script_inputs('await tools.exec_command({cmd: "go vet ./...", label: "vet it"})') == {"command": "go vet ./..."}


def test_a_diff_of_a_file_stays_beside_its_reads_in_the_working_set() -> None:
    """`git diff -- a.go` of a file being edited shows its hunks: a view of its own, which replaces an older diff
    but no read of a range."""
    edit = call("apply_patch", patchText="*** Begin Patch\n*** Update File: a.go\n@@\n-a\n+b\n*** End Patch")
    parts = [bash("sed -n '1,80p' a.go"), edit, bash("git diff -- a.go"), bash("git diff -- a.go")]
    parts = [{**part, "id": f"prt_{index}"} for index, part in enumerate(parts)]
    builder = FactsBuilder()
    for index, part in enumerate(parts):
        builder.add({"info": {"role": "assistant", "id": f"m{index}"}, "parts": [part]})
    assert builder.snapshot().working_set == {"prt_0", "prt_3"}


def test_a_script_written_earlier_is_followed_through_known_texts() -> None:
    """`python fix.py` changes what the script written by an earlier call changes."""
    written = touches(call("write", filePath="fix.py", content=FIX_SCRIPT))
    assert written.texts == (("fix.py", FIX_SCRIPT),)
    assert touches(bash("python fix.py")).changed == ()
    assert touches(bash("python fix.py"), dict(written.texts)).changed == ("pkg/core.py",)


def facts_of(*parts: dict[str, Any]) -> dict[str, int]:
    """Edited file → step, with one assistant message per part."""
    builder = FactsBuilder()
    for index, part in enumerate(parts):
        builder.add({"info": {"role": "assistant", "id": f"m{index}"}, "parts": [part]})
    return {path: step for group in builder.snapshot().edit_steps.values() for path, step in group}


def test_a_read_then_an_apply_patch_of_the_file_is_an_edit() -> None:
    """An `apply_patch` edits the files its patch names, so an earlier read of one goes stale."""
    assert facts_of(call("read", filePath="src/app.py"), call("apply_patch", patchText=PATCH)) == {
        "src/app.py": 2, "src/new.py": 2, "old.py": 2,
    }


def test_a_move_edits_both_files() -> None:
    """`mv a.py b.py` changes both a.py (gone) and b.py (replaced)."""
    assert facts_of(bash("cat a.py"), bash("mv a.py b.py")) == {"b.py": 2, "a.py": 2}


def test_a_script_the_session_wrote_edits_what_it_writes() -> None:
    """A heredoc script run later (`python3 fix.py`) edits the file it opens for writing."""
    assert facts_of(call("write", filePath="fix.py", content=FIX_SCRIPT), bash("python3 fix.py")) == {
        "fix.py": 1, "pkg/core.py": 2,
    }


def test_a_read_before_an_apply_patch_of_its_file_is_marked_stale() -> None:
    """The read compressors route a read of a file that a later `apply_patch` changed to `stale_reads`
    (a vendored file: the latest read of a project file stays in the working set, edited or not)."""
    read = call("read", filePath="/repo/vendor/app.py")
    patch = PATCH.replace("src/app.py", "vendor/app.py")
    builder = FactsBuilder()
    for index, part in enumerate((read, call("apply_patch", patchText=patch))):
        builder.add({"info": {"role": "assistant", "id": f"m{index}"}, "parts": [part]})
    context = Context(age=1, step=1, tier="low", settings=Settings(), facts=builder.snapshot())
    assert compressors_for(read, context) == ("system_blocks", "stale_reads", "long_inputs")


def test_a_scripts_string_escapes_are_undone() -> None:
    """A command's JavaScript escapes (`\\'`, `\\n`, `\\u002e`) are undone before the shell parser reads it."""
    code = "await tools.exec_command({cmd: \"sed -n \\'1,2p\\' a\\u002ego\\nrg x\"})"
    assert script_inputs(code) == {"command": "sed -n '1,2p' a.go\nrg x"}
