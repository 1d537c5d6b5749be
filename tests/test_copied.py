"""Copied lines: the input lines an agent pasted from earlier outputs, and what long inputs keep of them."""

from __future__ import annotations

from deepmem.compressors import REGISTRY
from deepmem.transform.copied import copied_lines, output_lines
from deepmem.transform.outcomes import message_digest
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import Context, Facts, Message, Settings

GREP = (
    "django/db/models/fields/__init__.py:1690:    def deconstruct(self):\n"
    "django/db/models/fields/__init__.py-1691-        name, path, args, kwargs = super().deconstruct()\n"
    "django/db/models/fields/__init__.py-1692-        if self.match is not None:\n"
    "django/db/models/fields/__init__.py-1693-            kwargs['match'] = self.match"
)
SCRIPT_BODY = [
    "import django",
    "def check_deconstruct_of_the_field():",
    "    name, path, args, kwargs = super().deconstruct()",
    "    print('written by the agent itself, nowhere before')",
    "    if self.match is not None:",
    "-            kwargs['match'] = self.match",
    "    print('a line only a later output shows')",
]


def tool_message(index: int, command: str, output: str) -> Message:
    """An assistant message with one completed bash call."""
    state = {"status": "completed", "input": {"command": command}, "output": output, "title": "t", "metadata": {}}
    part = {"id": f"prt_{index}", "type": "tool", "tool": "bash", "callID": f"call_{index}", "state": state}
    return {"info": {"id": f"msg_{index}", "role": "assistant"}, "parts": [part]}


def history() -> list[Message]:
    """A grep, a script pasting three of its lines, then an output naming one more line of the script."""
    script = "cat <<'EOF' > check.py\n" + "\n".join(SCRIPT_BODY) + "\nEOF"
    return [
        tool_message(0, "grep -n -A3 'def deconstruct' django/db/models/fields/__init__.py", GREP),
        tool_message(1, script, ""),
        tool_message(2, "python check.py", "    print('a line only a later output shows')"),
    ]


def test_output_lines_also_drop_a_search_or_listing_location() -> None:
    lines = output_lines("a.py-12-    if self.required_flag:  \n  7\tdef load_all(self):\r\nshort\n   x   y\n")
    assert sorted(lines) == [
        "7\tdef load_all(self):",
        "a.py-12-    if self.required_flag:",
        "def load_all(self):",
        "if self.required_flag:",
    ]


def test_a_script_line_is_copied_only_from_outputs_before_it() -> None:
    messages = history()
    folded = copied_lines(messages, [message_digest(m) for m in messages], None)
    assert folded.copied[1] == {
        "name, path, args, kwargs = super().deconstruct()",
        "if self.match is not None:",
        "-            kwargs['match'] = self.match",
    }
    assert folded.copied[0] == folded.copied[2] == frozenset()


def test_the_fold_is_extended_while_the_history_agrees_and_redone_when_it_does_not() -> None:
    messages = history()
    digests = [message_digest(m) for m in messages]
    first = copied_lines(messages[:2], digests[:2], None)
    assert copied_lines(messages, digests, first) is first and len(first.copied) == 3
    assert copied_lines(messages[:1], digests[:1], first) is first
    changed = [messages[0], tool_message(1, "cat <<'EOF' > other.py\nif self.match is not None:\nEOF", "")]
    redone = copied_lines(changed, [message_digest(m) for m in changed], first)
    assert redone is not first and redone.copied[1] == {"if self.match is not None:"}


def test_an_old_script_keeps_the_lines_it_copied() -> None:
    script = "cat <<'EOF' > check.py\n" + "\n".join([*SCRIPT_BODY, *(f"print({n})" for n in range(60))]) + "\nEOF"
    part = history()[1]["parts"][0]
    part = {**part, "state": {**part["state"], "input": {"command": script}}}
    copied = frozenset({"if self.match is not None:", "-            kwargs['match'] = self.match"})
    context = Context(age=1, step=2, tier="high", settings=Settings(), facts=Facts(), copied=copied)
    command = REGISTRY["long_inputs"].compress(part, context).part["state"]["input"]["command"]
    assert "    if self.match is not None:" in command and "-            kwargs['match'] = self.match" in command
    assert "written by the agent itself" not in command
    uncopied = Context(age=1, step=2, tier="high", settings=Settings(), facts=Facts())
    assert "if self.match" not in REGISTRY["long_inputs"].compress(part, uncopied).part["state"]["input"]["command"]


def test_a_line_pasted_again_in_the_same_batch_stays_in_the_newest_paste_only() -> None:
    again = "cat <<'EOF' > check2.py\n    if self.match is not None:\nEOF"
    messages = [*history(), tool_message(3, again, "")]
    folded = copied_lines(messages, [message_digest(m) for m in messages], None)
    assert folded.copied[3] == {"if self.match is not None:"}
    kept = folded.kept(0, 4)
    assert "if self.match is not None:" not in kept[1] and kept[3] == {"if self.match is not None:"}
    assert "name, path, args, kwargs = super().deconstruct()" in kept[1]
    assert folded.kept(0, 2)[1] == folded.copied[1] and folded.kept(0, 4) is kept


def test_a_new_long_script_is_trimmed_when_first_seen_and_keeps_what_it_copied() -> None:
    prints = [f"print('step {n} of the check, written by the agent itself', {n})" for n in range(150)]
    script = "cat <<'EOF' > check.py\n" + "\n".join([*SCRIPT_BODY, *prints]) + "\nEOF"
    first, _, third = history()
    long_script = tool_message(1, script, "")
    messages = [first, long_script]

    def command_seen(history: list[Message], settings: Settings) -> str:
        shown = apply_transform(history, plan_transform(history, settings))
        return next(m for m in shown if m["info"]["id"] == "msg_1")["parts"][0]["state"]["input"]["command"]

    trimmed = command_seen(messages, Settings())
    assert "    if self.match is not None:" in trimmed and "-            kwargs['match'] = self.match" in trimmed
    assert "step 75 of the check" not in trimmed and "deep_expand" in trimmed
    assert command_seen([*messages, third], Settings()) == trimmed
    assert command_seen(messages, Settings(capture_input_cap_tokens=100_000)) == script


def test_a_history_without_digests_is_folded_anew_and_odd_inputs_copy_nothing() -> None:
    messages = history()
    undigested = [None] * len(messages)
    first = copied_lines(messages, undigested, None)
    again = copied_lines(messages, undigested, first)
    assert again is not first and again.copied == first.copied
    odd = tool_message(4, "", "")
    odd["parts"][0]["state"]["input"] = "not a dict"
    assert copied_lines([*messages, odd], [None] * 4, None).copied[3] == frozenset()
