"""OpenCode 1.18's own prune (`compaction.prune: true`), as a contender.

The rule, from OpenCode's documented behaviour: when a user turn has finished, walk the
history from the newest message back, skipping the last two user turns; sum the
estimated tokens (characters / 4) of completed tool outputs (the `skill` tool's
excepted); once the sum passes 40,000, every older output is a candidate; stop at a
compaction summary or at an output pruned before. If the candidates hold more than
20,000 tokens, they are pruned: from then on the model sees "[Old tool result content
cleared]" in their place. Pruning is stored with the part, so it stays.

`every_step=True` runs the same rule before every step instead of at the end of a user
turn (not something OpenCode does; it shows what the rule would give if it did).
"""

from __future__ import annotations

from bench.contenders.masking import with_outputs
from deepmem.types import Message

PRUNED = "[Old tool result content cleared]"
PROTECT_TOKENS = 40_000
MINIMUM_TOKENS = 20_000
PROTECTED_TOOLS = frozenset({"skill"})
PROTECTED_TURNS = 2


def estimate(text: str) -> int:
    """OpenCode's token estimate: characters / 4, rounded."""
    return round(len(text) / 4)


def prune_candidates(history: list[Message], pruned: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The tool outputs the rule would clear now (empty when fewer than MINIMUM_TOKENS would go)."""
    turns, total, freed, candidates = 0, 0, 0, []
    for m in range(len(history) - 1, -1, -1):
        info = history[m]["info"]
        if info.get("role") == "user":
            turns += 1
        if turns < PROTECTED_TURNS:
            continue
        if info.get("role") == "assistant" and info.get("summary") is True:
            break
        parts = history[m]["parts"]
        for p in range(len(parts) - 1, -1, -1):
            part = parts[p]
            state = part.get("state") or {}
            if part.get("type") != "tool" or state.get("status") != "completed" or part.get("tool") in PROTECTED_TOOLS:
                continue
            if (m, p) in pruned:
                return candidates if freed > MINIMUM_TOKENS else []
            tokens = estimate(str(state.get("output") or ""))
            total += tokens
            if total > PROTECT_TOKENS:
                freed += tokens
                candidates.append((m, p))
    return candidates if freed > MINIMUM_TOKENS else []


class OpenCodePrune:
    """OpenCode's prune, run when a user turn ends (or before every step)."""

    frame = 0
    """Tokens it adds before the messages of a request: none."""

    def __init__(self, every_step: bool = False):
        self.name = "opencode-prune-each-step" if every_step else "opencode-prune"
        self.every_step = every_step
        self.pruned: set[tuple[int, int]] = set()
        self.turns_seen = 0

    def messages(self, history: list[Message]) -> list[Message]:
        """The history with every output pruned so far cleared."""
        users = [m for m, message in enumerate(history) if message["info"].get("role") == "user"]
        if self.every_step:
            self.pruned.update(prune_candidates(history, self.pruned))
        elif len(users) > self.turns_seen:
            if self.turns_seen:  # the turn before the newest user message has finished
                self.pruned.update(prune_candidates(history[: users[-1]], self.pruned))
            self.turns_seen = len(users)
        return with_outputs(history, dict.fromkeys(self.pruned, PRUNED))
