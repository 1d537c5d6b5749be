"""Where deepmem's own cache mark goes: the last text of the answering model at or before a boundary,
or on the opening before the first jump."""

from __future__ import annotations

from deepmem.history import message_steps
from deepmem.transform.cache_mark import MarkPlaces, carries_mark, markable_part, opening_parts, with_mark

CLAUDE = {"providerID": "anthropic", "modelID": "claude-opus"}
GPT = {"providerID": "openai", "modelID": "gpt-5"}


def user(model: dict | None = None) -> dict:
    """A user message asking for `model`."""
    info = {"role": "user", **({"model": model} if model else {})}
    return {"info": info, "parts": [{"type": "text", "text": "go on"}]}


def assistant(model: dict, *parts: dict) -> dict:
    """An assistant message from `model` with the given parts."""
    return {"info": {"role": "assistant", **model}, "parts": list(parts)}


TEXT = {"type": "text", "text": "I will read it."}
TOOL = {"type": "tool", "tool": "read", "state": {"status": "completed", "input": {}, "output": "x"}}


def places(messages: list[dict]) -> MarkPlaces:
    """The mark places of a history."""
    return MarkPlaces(messages, message_steps(messages))


def test_the_mark_sits_on_the_last_text_at_or_before_the_boundary() -> None:
    history = [user(CLAUDE), assistant(CLAUDE, TEXT, TOOL), assistant(CLAUDE, TOOL), assistant(CLAUDE, TOOL, TEXT), user()]
    found = places(history)
    assert found.place(2, 3) == (1, 1, 0)
    assert found.place(3, 3) == (3, 3, 1)
    assert found.place(0, 3) == (1, 1, 0)


def test_before_the_first_jump_the_mark_sits_on_the_opening_when_it_has_text() -> None:
    """The first answer's last text is at every boundary, 0 included; without text there is no place."""
    reasoning = {"id": "r", "type": "reasoning", "text": "think"}
    opening = [user(CLAUDE), assistant(CLAUDE, reasoning, {**TEXT, "id": "t"}, {**TOOL, "id": "c"}), assistant(CLAUDE, TOOL)]
    assert places(opening).place(0, 2) == (1, 1, 1)
    assert opening_parts(opening) == (1, frozenset({"r", "t"}))
    silent = [user(CLAUDE), assistant(CLAUDE, TOOL), assistant(CLAUDE, TEXT, TOOL)]
    assert places(silent).place(0, 2) is None and places(silent).place(2, 2) == (2, 2, 0)
    assert opening_parts(silent) == (1, frozenset())
    assert opening_parts([user(CLAUDE)]) == (1, frozenset())


def test_no_mark_without_assistant_text_or_on_another_models_text() -> None:
    """Text only from GPT before the boundary, and the session asks Claude from request 1 on: no place."""
    history = [user(GPT), assistant(GPT, TEXT, TOOL), user(CLAUDE), assistant(CLAUDE, TOOL), assistant(CLAUDE, TOOL)]
    found = places(history)
    assert found.request_models == [("openai", "gpt-5"), ("anthropic", "claude-opus"), ("anthropic", "claude-opus"), ("anthropic", "claude-opus")]
    assert found.place(1, 1) is None and found.place(3, 3) is None
    assert found.place(1, 0) == (1, 1, 0)


def test_empty_ignored_and_non_text_parts_are_not_markable() -> None:
    message = assistant(CLAUDE, TEXT, {"type": "text", "text": "  "}, {"type": "text", "text": "x", "ignored": True}, TOOL)
    assert markable_part(message) == 0
    assert markable_part(user(CLAUDE)) is None


def test_the_mark_keeps_the_rest_of_the_metadata() -> None:
    part = {"type": "text", "text": "a", "metadata": {"anthropic": {"signature": "s"}, "other": 1}}
    marked = with_mark(part)
    assert carries_mark(marked) and not carries_mark(part)
    assert marked["metadata"] == {"anthropic": {"signature": "s", "cacheControl": {"type": "ephemeral"}}, "other": 1}
    assert part["metadata"] == {"anthropic": {"signature": "s"}, "other": 1}
