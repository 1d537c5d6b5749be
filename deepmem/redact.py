"""Secrets never reach disk: known credential formats are replaced by `[REDACTED:<kind>]`.

One table of patterns, each naming what it finds. Where a pattern has a `secret` group,
only that group is replaced, so `password=` or `Bearer ` stays readable around the
marker. Everything deepmem writes under `.deep-memory/` (checkpoints, raw transcripts,
memories, notes, CCR originals, logs, stats) passes through a `Redactor` first; what
the model sees in the running session is not changed.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

import orjson

from deepmem.config import load_config

SECRET_WORDS = r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"

PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
    ("google-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ("stripe-key", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("bearer-token", r"(?i)\b(?:bearer|basic)\s+(?P<secret>(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,})"),
    ("url-password", r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<secret>[^\s/@]+)@"),
    ("env-line", r"(?m)^[ \t]*(?:export[ \t]+)?(?:[A-Z][A-Z0-9]*_)*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|"
                 r"CREDENTIALS?|PRIVATE|AUTH)(?:_[A-Z0-9]+)*[ \t]*=[ \t]*(?P<secret>\S[^\n]*?)[ \t]*$"),
    ("assignment", rf"(?i)\b[A-Za-z0-9_.-]*{SECRET_WORDS}(?![A-Za-z0-9_])[\"']?[ \t]*[:=][ \t]*"
                   r"(?:\"(?P<secret>[^\"\n]{4,})\"|'(?P<quoted>[^'\n]{4,})'|(?P<bare>(?![$%])[^\s\\\"'`,;(){}\[\]<>]{6,}+)(?![(\[]))"),
)
"""(kind, regex) in the order they are applied; earlier, more specific kinds win."""

MARK = "[REDACTED:{}]"
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z-]+\]")


def _replacer(kind: str):
    mark = MARK.format(kind)

    def replace(match: re.Match[str]) -> str:
        for group in ("secret", "quoted", "bare"):
            if group in match.re.groupindex and match.group(group) is not None:
                if PLACEHOLDER.fullmatch(match.group(group)):
                    return match.group(0)
                start, end = match.span(group)
                return match.string[match.start():start] + mark + match.string[end:match.end()]
        return mark

    return replace


class Redactor:
    """Applies the pattern table (plus any extra patterns) to text and to decoded JSON."""

    def __init__(self, enabled: bool = True, extra: tuple[str, ...] | list[str] = ()) -> None:
        self.enabled = enabled
        table = [(kind, re.compile(pattern)) for kind, pattern in PATTERNS]
        table += [("custom", re.compile(pattern)) for pattern in extra]
        self.table = [(regex, _replacer(kind)) for kind, regex in table]

    def text(self, text: str) -> str:
        """The text with every secret replaced by its marker."""
        if not self.enabled or not text:
            return text
        for regex, replace in self.table:
            text = regex.sub(replace, text)
        return text

    def bytes(self, data: bytes) -> bytes:
        """Like `text`, for UTF-8 bytes (lone surrogates survive the round trip)."""
        if not self.enabled:
            return data
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def document(self, text: str) -> str:
        """A stored original: a JSON document is redacted value by value (escapes hide nothing), then as text."""
        if self.enabled and text[:1] in ("{", "["):
            try:
                value = orjson.loads(text)
            except (orjson.JSONDecodeError, UnicodeError):
                pass
            else:
                clean = self.json(value)
                if clean != value:
                    text = orjson.dumps(clean).decode("utf-8")
        return self.text(text)

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


@lru_cache(maxsize=16)
def _redactor(enabled: bool, extra: tuple[str, ...]) -> Redactor:
    return Redactor(enabled, extra)


def redactor_for(root: str | os.PathLike[str] | None) -> Redactor:
    """The redactor the project's settings ask for (`[security] redact`, `patterns`)."""
    security = load_config(root).security
    return _redactor(security.redact, tuple(security.patterns))
