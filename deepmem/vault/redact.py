"""Shared files stay clean: secrets in what people read, commit and share become `[REDACTED:<kind>]`.

MEMORY.md, notes.md, checkpoint.md, history.md, archive.md, skills, the compaction log and
the bridge log pass through a `Redactor` before they are written; the detectors are in
`deepmem.vault.secret_rules` (detect-secrets' plugins, then ours). Private files (CCR originals,
raw transcripts) are never redacted: they keep their exact bytes, sealed (`deepmem.vault.sealed`).
What the model sees in the running session is not changed.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import Any

from deepmem.vault.secret_rules import (
    FIRST_RULES,
    MIN_VALUE,
    OWN_RULES,
    Rule,
    detect_secrets_rules,
    secret_span,
)

MARK = "[REDACTED:{}]"
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


@lru_cache(maxsize=1)
def default_rules() -> tuple[Rule, ...]:
    """Our rules for what detect-secrets would cut short, detect-secrets' rules, then ours for what it lacks."""
    return (*FIRST_RULES, *detect_secrets_rules(), *OWN_RULES)


def _replacer(rule: Rule):
    mark = MARK.format(rule.kind)

    def replace(match: re.Match[str], found: list[tuple[str, str]] | None) -> str:
        start, end = secret_span(match)
        if PLACEHOLDER.fullmatch(match.string[start:end]) or (rule.check is not None and not rule.check(match)):
            return match.group(0)
        if found is not None:
            found.append((rule.kind, match.string[start:end]))
        return match.string[match.start():start] + mark + match.string[end:match.end()]

    return replace


class Redactor:
    """Applies the rules (plus any extra patterns from `[security] patterns`) to text and to decoded JSON."""

    def __init__(self, enabled: bool = True, extra: tuple[str, ...] | list[str] = ()) -> None:
        self.enabled = enabled
        self.extra = [Rule("custom", re.compile(pattern)) for pattern in extra]

    @cached_property
    def table(self) -> list[tuple[tuple[str, ...], re.Pattern[str], Any]]:
        """(needles, regex, replace) per rule, built on first use."""
        return [(rule.needles, rule.regex, _replacer(rule)) for rule in (*default_rules(), *self.extra)]

    def text(self, text: str, found: list[tuple[str, str]] | None = None) -> str:
        """The text with every secret replaced by its marker; each (kind, secret) replaced is added to `found` (a text
        shorter than the shortest secret, `MIN_VALUE`, is not searched)."""
        if not self.enabled or len(text) < MIN_VALUE:
            return text
        lowered = text.lower()
        for needles, regex, replace in self.table:
            if not needles or any(needle in lowered for needle in needles):
                text = regex.sub(lambda match, replace=replace: replace(match, found), text)
        return text

    def json(self, value: Any) -> Any:
        """A copy of a decoded JSON value with every string value redacted (keys are kept)."""
        if not self.enabled:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.json(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.json(item) for item in value]
        return value
