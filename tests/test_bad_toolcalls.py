"""Tool calls that go wrong or change shape, replayed step by step as the agent saw them: a patch
that fails and is retried, a patch of a file never read, a read of a file a patch deletes, a
search over a monorepo printing more than 1 MB, a session moving from a Claude model to a GPT model.

Each session goes through the transform at every step: no failure, every line a step quotes
from earlier output still in view, and every cut restored exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deepmem.bill.prices import family_of_messages
from deepmem.replay.loop import Deepmem, session_steps
from deepmem.replay.support import quoted_lines
from deepmem.transform.context import context_units
from deepmem.transform.facts import FactsBuilder
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import Message, Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages

CODE = "\n".join(f"    total_{n} = compute_total(orders, region={n}, scale=2)" for n in range(1, 400))
"""A file of 399 distinct lines, each long enough to count as quoted."""
CLAUDE = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
GPT = {"providerID": "openai", "modelID": "gpt-5"}


def tool(index: int, name: str, output: str, status: str = "completed", **inputs: object) -> dict:
    """A tool part; a failed one carries its output as the error."""
    state = {"status": status, "input": inputs, "title": "", "metadata": {}}
    state["output" if status == "completed" else "error"] = output
    return {"id": f"prt_{index:04d}", "type": "tool", "tool": name, "callID": f"call_{index}", "state": state}


def sed_read(index: int, path: str, text: str = CODE) -> dict:
    """A `sed -n` read of a file through the shell."""
    return tool(index, "bash", text, command=f"sed -n '1,400p' {path}", description="read")


def patch(index: int, path: str, context: list[str], status: str = "completed", output: str = "Success") -> dict:
    """An `apply_patch` of `path` whose hunk quotes `context` and replaces its last line."""
    body = "\n".join([*(f" {line}" for line in context[:-1]), f"-{context[-1]}", "+    total = 0"])
    text = f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}\n*** End Patch"
    return tool(index, "apply_patch", output, status=status, patchText=text)


def session(parts: list[dict], models: list[dict] | None = None, steps: int = 40) -> list[Message]:
    """A user prompt, one assistant message per part, then small commands up to `steps` steps."""
    filler = [tool(1000 + n, "bash", f"ok {n}", command=f"echo step {n}") for n in range(steps - len(parts))]
    messages: list[Message] = [{"info": {"id": "msg_000", "role": "user"}, "parts": [{"id": "prt_u", "type": "text", "text": "fix it"}]}]
    for index, part in enumerate([*parts, *filler]):
        model = (models or [CLAUDE])[min(index, len(models or [CLAUDE]) - 1)]
        messages.append({"info": {"id": f"msg_{index + 1:03d}", "role": "assistant", **model}, "parts": [part]})
    return messages


def replayed(messages: list[Message], tmp_path: Path) -> tuple[int, int]:
    """(quoted lines in view, quoted lines) over every step, checking no failure and exact restores."""
    player = Deepmem(Settings())
    store = CCRStore(tmp_path)
    seen = quoted = 0
    for step in session_steps(messages):
        sent = player.messages(step.history)
        lines = quoted_lines(step.history, step.message)
        visible = "\n".join(context_units(sent))
        seen += sum(line in visible for line in lines)
        quoted += len(lines)
        history, plan = player.last or ([], None)
        if plan is not None:
            store.put_all(plan.originals)
            assert restore_messages(apply_transform(history, plan), store) == history
    assert player.failures == 0
    return seen, quoted


def edited(messages: list[Message]) -> dict[str, int]:
    """Edited file → the step of its last edit."""
    builder = FactsBuilder()
    for message in messages:
        builder.add(message)
    return {path: step for group in builder.snapshot().edit_steps.values() for path, step in group}


def working_set(messages: list[Message]) -> frozenset[str]:
    """Part ids of the working set after the whole history."""
    builder = FactsBuilder()
    for message in messages:
        builder.add(message)
    return builder.snapshot().working_set


LINES = CODE.split("\n")


def test_a_patch_that_fails_then_is_retried_edits_once_and_quotes_what_is_in_view(tmp_path: Path) -> None:
    """The failed patch changed nothing (no edit at its step); the retry sees every line it quotes, and so do later ones."""
    parts = [
        sed_read(1, "app/orders.py"),
        patch(2, "app/orders.py", LINES[40:43], status="error", output="apply_patch verification failed: context not found"),
        patch(3, "app/orders.py", LINES[40:44]),
        *(tool(10 + n, "bash", f"ok {n}", command=f"go test ./... -run T{n}") for n in range(8)),
        patch(30, "app/orders.py", LINES[300:303]),
    ]
    messages = session(parts)
    assert edited(messages[:3]) == {}
    assert edited(messages[:4]) == {"app/orders.py": 3}
    seen, quoted = replayed(messages, tmp_path)
    assert quoted == 10
    assert seen == quoted


def test_a_patch_of_a_file_never_read_quotes_nothing_and_edits_it(tmp_path: Path) -> None:
    """A patch whose context no output showed quotes no line; the file is edited all the same."""
    messages = session([sed_read(1, "app/orders.py"), patch(2, "app/unseen.py", ["    never shown by any tool output", "    nor this line either"])])
    assert edited(messages) == {"app/unseen.py": 2}
    assert replayed(messages, tmp_path) == (0, 0)


def test_a_read_of_a_file_a_later_patch_deletes_stays_for_the_file_written_again(tmp_path: Path) -> None:
    """An agent that deletes a file it read may write it again from the view (a reproduction script
    recreated): the view stays, and the heredoc that writes the file back quotes lines still in view."""
    delete = tool(2, "apply_patch", "Success", patchText="*** Begin Patch\n*** Delete File: app/orders.py\n*** End Patch")
    rewrite = "cat > app/orders.py <<'EOF'\n" + "\n".join(LINES[:6]) + "\nEOF"
    parts = [sed_read(1, "app/orders.py"), delete, *(tool(10 + n, "bash", f"ok {n}", command=f"make t{n}") for n in range(6)),
             tool(20, "bash", "", command=rewrite)]
    messages = session(parts)
    assert edited(messages[:3]) == {"app/orders.py": 2}
    assert "prt_0001" in working_set(messages[:3])
    assert replayed(messages, tmp_path) == (6, 6)


MONOREPO_SEARCHES = {
    "many lines": "\n".join(
        f"packages/pkg{n // 50}/src/module{n}.ts:{n % 300 + 1}:  const value{n} = computeTotal(orders, {n});" for n in range(16_000)
    ),
    "a few minified lines": "\n".join(
        f"packages/pkg{n}/dist/index.min.js:1:" + f"var v{n}=computeTotal(o,{n});" * 12_000 for n in range(4)
    ),
}


@pytest.mark.parametrize("output", MONOREPO_SEARCHES.values(), ids=MONOREPO_SEARCHES.keys())
def test_a_search_over_a_monorepo_printing_more_than_a_megabyte_is_cut_and_restored(output: str, tmp_path: Path) -> None:
    """`rg` over every package: cut once on entry, the same bytes at every later step, cut again when old (the fixed
    schedule makes it old), the original back."""
    assert len(output) > 1_000_000
    messages = session([tool(1, "bash", output, command="rg -n computeTotal .")], steps=30)
    replayed(messages, tmp_path)
    first = plan_transform(messages[:20], Settings())
    again = plan_transform(messages[:20], Settings())
    assert first.edits == again.edits
    for plan in (first, plan_transform(messages, Settings(schedule="fixed"))):
        shown = next(edit.part for edit in plan.edits if edit.part_id == "prt_0001")["state"]["output"]
        assert len(shown) < 20_000


def test_a_session_that_moves_from_claude_to_gpt_keeps_what_the_gpt_patch_quotes(tmp_path: Path) -> None:
    """Claude reads a file and edits it; GPT, billed at OpenAI's prices from then on, patches it with
    `apply_patch` eight steps later, quoting the view Claude read."""
    parts = [
        sed_read(1, "app/orders.py"),
        tool(2, "edit", "ok", filePath="app/orders.py", oldString=LINES[10], newString="    total = 0"),
        *(tool(10 + n, "bash", f"ok {n}", command=f"go vet ./pkg{n}") for n in range(7)),
        patch(30, "app/orders.py", LINES[200:204]),
    ]
    messages = session(parts, [CLAUDE] * 9 + [GPT])
    assert family_of_messages(messages).name == "openai"
    seen, quoted = replayed(messages, tmp_path)
    assert quoted == 5
    assert seen == quoted
