"""The transform: old parts through their compressors, originals into CCR, edits out.

Pure except for the optional CCR store: the same messages and settings always give the
same bytes. A compressor that raises is counted and its part passes through unchanged.
"""

from __future__ import annotations

import logging

import msgspec
import orjson

from deepmem.compressors import REGISTRY, compressors_for
from deepmem.facts import compute_facts
from deepmem.history import Layout, history_tokens, is_user_typed, layout, tier_for, visible_text
from deepmem.tokens import estimate_tokens
from deepmem.types import Context, Message, Original, Part, Settings, Tier, cache_key

log = logging.getLogger("deepmem.pipeline")

PART_KEY = "part"
"""Compressor name under which whole original parts are stored, for session restore."""


class Edit(msgspec.Struct, frozen=True):
    """Replace one part: addressed by position (files) and by ids (the bridge)."""

    message_index: int
    part_index: int
    message_id: str
    part_id: str
    part: Part


class KindStats(msgspec.Struct):
    """Characters and estimated tokens before and after, for one kind of part."""

    parts: int = 0
    compressed: int = 0
    chars_before: int = 0
    chars_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


class Plan(msgspec.Struct):
    """The outcome of one transform."""

    layout: Layout
    tier: Tier
    edits: list[Edit]
    originals: list[Original]
    stats: dict[str, KindStats]
    failures: int = 0


def stats_kind(message: Message, part: Part) -> str:
    """The row a part is counted under in `--stats`."""
    if is_user_typed(message, part):
        return "user text"
    if part.get("type") == "tool":
        return f"tool:{part.get('tool')}"
    return str(part.get("type"))


def compress_part(part: Part, ctx: Context) -> tuple[Part, list[Original], list[str], int]:
    """Run a part through its compressors in order; return (part, originals, names, failures)."""
    current, originals, names, failures = part, [], [], 0
    for name in compressors_for(part):
        try:
            result = REGISTRY[name].compress(current, ctx)
        except Exception:  # noqa: BLE001 — fail open: the part passes through this compressor
            log.warning("compressor %s failed on part %s", name, part.get("id"), exc_info=True)
            failures += 1
            continue
        if result is not None:
            current = result.part
            originals.extend(result.originals)
            names.append(name)
    return current, originals, names, failures


def mark_restorable(original: Part, compressed: Part, names: list[str]) -> tuple[Part, Original]:
    """Record in `metadata.deepmem` the CCR key of the whole original part."""
    text = orjson.dumps(original).decode()
    key = cache_key(text, PART_KEY)
    metadata = dict(compressed.get("metadata") or {})
    metadata["deepmem"] = {"part": key, "by": names}
    return {**compressed, "metadata": metadata}, Original(key, text)


def plan_transform(messages: list[Message], settings: Settings, tier: Tier | None = None) -> Plan:
    """Decide every edit for a history seen at its last step."""
    shape = layout(messages, settings)
    old_messages = messages[: shape.first_young]
    # Tier and facts come from the history up to the boundary, so old content only
    # changes when the boundary jumps (prompt-cache stability).
    chosen = tier or tier_for(history_tokens(old_messages), settings)
    facts = compute_facts(old_messages)
    edits: list[Edit] = []
    originals: list[Original] = []
    stats: dict[str, KindStats] = {}
    failures = 0
    for index, message in enumerate(messages):
        old = index < shape.first_young
        step = shape.message_steps[index]
        for part_index, part in enumerate(message["parts"]):
            row = stats.setdefault(stats_kind(message, part), KindStats())
            before = visible_text(part)
            after = before
            if old and not is_user_typed(message, part) and "deepmem" not in (part.get("metadata") or {}):
                ctx = Context(age=shape.boundary - step, step=step, tier=chosen, settings=settings, facts=facts)
                new, cut, names, failed = compress_part(part, ctx)
                failures += failed
                if names:
                    new, whole = mark_restorable(part, new, names)
                    edits.append(
                        Edit(index, part_index, str(message["info"].get("id", "")), str(part.get("id", "")), new)
                    )
                    originals.extend(cut)
                    originals.append(whole)
                    after = visible_text(new)
                    row.compressed += 1
            row.parts += 1
            row.chars_before += len(before)
            row.chars_after += len(after)
            row.tokens_before += estimate_tokens(before)
            row.tokens_after += estimate_tokens(after)
    return Plan(shape, chosen, edits, originals, stats, failures)


def apply_edits(messages: list[Message], edits: list[Edit]) -> list[Message]:
    """New messages with each edited part replaced (inputs are not mutated)."""
    by_message: dict[int, dict[int, Part]] = {}
    for edit in edits:
        by_message.setdefault(edit.message_index, {})[edit.part_index] = edit.part
    result = list(messages)
    for index, replaced in by_message.items():
        message = messages[index]
        parts = [replaced.get(i, part) for i, part in enumerate(message["parts"])]
        result[index] = {**message, "parts": parts}
    return result


def apply_transform(messages: list[Message], plan: Plan) -> list[Message]:
    """The messages as the model should see them after this plan."""
    return apply_edits(messages, plan.edits)
