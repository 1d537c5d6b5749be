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

PATTERNS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("private-key", ("private key",),
     r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
    ("google-key", ("aiza",), r"\bAIza[0-9A-Za-z_-]{35}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("slack-token", ("xox",), r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack-webhook", ("hooks.slack.com",), r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ("stripe-key", ("k_live_", "k_test_"), r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("aws-access-key", ("akia", "asia", "abia", "acca"), r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("bearer-token", ("bearer", "basic"),
     r"(?i)\b(?:bearer|basic)\s+(?P<secret>(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,})"),
    ("url-password", ("://",), r"://[^\s/:@]+:(?P<secret>[^\s/@]+)@"),
    ("env-line", ("key", "secret", "token", "pass", "pwd", "credential", "private", "auth"),
     r"(?m)^[ \t]*(?:export[ \t]+)?(?:[A-Z][A-Z0-9]*_)*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|"
     r"CREDENTIALS?|PRIVATE|AUTH)(?:_[A-Z0-9]+)*[ \t]*=[ \t]*(?P<secret>\S[^\n]*?)[ \t]*$"),
    ("assignment", ("passw", "passphrase", "pwd", "secret", "token", "key", "credential"),
     rf"(?i){SECRET_WORDS}(?![A-Za-z0-9_])[\"']?[ \t]*[:=][ \t]*"
     r"(?:\"(?P<secret>[^\"\n]{4,})\"|'(?P<quoted>[^'\n]{4,})'|(?P<bare>(?![$%])[^\s\\\"'`,;(){}\[\]<>]{6,}+)(?![(\[]))"),
)
"""(kind, needles, regex) in the order they are applied; earlier, more specific kinds win. A
regex runs only on a text whose lower-cased form holds one of its needles (most hold none)."""

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
        table = [(kind, needles, re.compile(pattern)) for kind, needles, pattern in PATTERNS]
        table += [("custom", (), re.compile(pattern)) for pattern in extra]
        self.table = [(needles, regex, _replacer(kind)) for kind, needles, regex in table]

    def _candidates(self, text: str) -> list[tuple[re.Pattern[str], Any]]:
        lowered = text.lower()
        return [(regex, replace) for needles, regex, replace in self.table
                if not needles or any(needle in lowered for needle in needles)]

    def text(self, text: str) -> str:
        """The text with every secret replaced by its marker."""
        if not self.enabled or not text:
            return text
        for regex, replace in self._candidates(text):
            text = regex.sub(replace, text)
        return text

    def document(self, text: str) -> str:
        """A stored original: a JSON document is redacted value by value (escapes hide nothing), then as text."""
        if self.enabled and text[:1] in ("{", "[") and self._candidates(text):
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
