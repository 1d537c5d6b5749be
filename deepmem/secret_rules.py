"""Where secrets are looked for: detect-secrets' plugins first, then our rules for what they lack.

detect-secrets (Yelp, on PyPI) keeps a regex plugin per credential format; every one of its
regex plugins is used except those that flag what is not a secret (public IPs) or only a
header line (private keys: `private-key` below takes the whole block). Our own rules cover
formats it has no plugin for (Anthropic, current OpenAI, Google, Hugging Face, fine-grained
GitHub, Slack tokens without digits, bare npm tokens, Heroku, Docker auth, Azure connection
strings, Discord webhooks) and values that only their name marks as secret (`password=…`,
`export X_API_KEY=…`, `Bearer …`); those go through `is_secret_value`, so code stays.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

LEFT_OUT = {"IPPublicDetector", "PrivateKeyDetector"}
"""detect-secrets plugins not used: a public IP is not a secret; the private-key plugin flags only the header line."""
VALUE_SHAPED = {"BasicAuthDetector"}
"""detect-secrets plugins whose hit is any value in a credential's place (`://user:VALUE@`): it must pass `is_secret_value`."""
MIN_VALUE = 8
DELIMITERS = " \t\r\n=:,;\"'"
PLACEHOLDER = re.compile(
    r"example|sample|test|fake|mock|dummy|insecure|placeholder|change.?me|your|redacted|secret|pass\W?word"
    r"|x{4,}|\*{3,}|\.\.\.|%[s(]|<|\{\{", re.I)
"""Words and shapes of values that stand in for a secret (in tests, docs, templates) rather than being one."""
CODE = re.compile(r"^(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:\(|\[|$)")
"""A name, a dotted name, or a call or index of one: a reference in code, not a literal."""
WORD_AND_NUMBER = re.compile(r"[A-Za-z]+[-_]?\d{0,4}")
"""`hashed123`, `admin2024`: a fixture's value, not a generated secret."""
SECRET_NAME = r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"


@dataclass(frozen=True)
class Rule:
    """One detector: the kind its marker names, a regex, the lower-case needles one of which a text
    must hold to be searched (empty: always searched), and a check every hit must pass."""

    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None


def secret_span(match: re.Match[str]) -> tuple[int, int]:
    """The part of a hit that is the secret, never its delimiters: a named group (our rules), or the
    groups when they hold `MIN_VALUE` characters or more (`://user:` stays readable), else the whole hit."""
    spans = [match.span(group) for group in range(1, (match.re.groups or 0) + 1) if match.group(group) is not None]
    start, end = (min(s for s, _ in spans), max(e for _, e in spans)) if spans else match.span()
    if end - start < MIN_VALUE and not match.re.groupindex:
        start, end = match.span()
    text = match.string
    while start < end and text[start] in DELIMITERS:
        start += 1
    while end > start and text[end - 1] in DELIMITERS:
        end -= 1
    return start, end


def _value_is_secret(match: re.Match[str]) -> bool:
    start, end = secret_span(match)
    return is_secret_value(match.string[start:end])


def _is_random(piece: str) -> bool:
    """Long enough, with letters and digits mixed: a generated string, not a name."""
    return len(piece) >= MIN_VALUE and any(c.isdigit() for c in piece) and any(c.isalpha() for c in piece)


def is_secret_value(value: str) -> bool:
    """A literal that can be a secret: not a reference in code, a template, a placeholder or a plain word.

    detect-secrets' own heuristic filters first, then: at least `MIN_VALUE` characters, no
    space, not a word and a short number, and letters mixed with digits or symbols (`username`,
    `self.token`, `'test'`, `hashed123` stay).
    """
    value = unquote(value.strip("'\""))
    filters = heuristic_filters()
    stand_in = (filters.is_templated_secret, filters.is_prefixed_with_dollar_sign, filters.is_sequential_string,
                filters.is_not_alphanumeric_string)
    if len(value) < MIN_VALUE or " " in value or PLACEHOLDER.search(value) or any(test(value) for test in stand_in):
        return False
    if WORD_AND_NUMBER.fullmatch(value) or (CODE.match(value) and not any(map(_is_random, value.split(".")))):
        return False
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    symbols = any(not c.isalnum() for c in value)
    return classes + symbols >= 2 and any(c.isdigit() or not c.isalnum() for c in value)


@lru_cache(maxsize=1)
def heuristic_filters() -> ModuleType:
    """detect-secrets' heuristic filters, imported on first use (detect-secrets takes ~50 ms to import)."""
    return importlib.import_module("detect_secrets.filters.heuristic")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def detect_secrets_rules() -> list[Rule]:
    """A rule per regex of every detect-secrets regex plugin (kind: the plugin's secret type), hits
    confirmed by the plugin itself (so its own extra checks, e.g. a JWT's shape, apply)."""
    plugins = importlib.import_module("detect_secrets.plugins")
    base = importlib.import_module("detect_secrets.plugins.base").RegexBasedDetector
    rules = []
    for module in pkgutil.iter_modules(plugins.__path__):
        loaded = importlib.import_module(f"{plugins.__name__}.{module.name}")
        for name, plugin in inspect.getmembers(loaded, inspect.isclass):
            if (issubclass(plugin, base) and plugin.__module__ == loaded.__name__
                    and not inspect.isabstract(plugin) and name not in LEFT_OUT):
                check = _confirmed_by(plugin(), name in VALUE_SHAPED)
                rules += [Rule(_slug(plugin.secret_type), regex, check=check) for regex in plugin.denylist]
    return sorted(rules, key=lambda rule: rule.kind)


def _confirmed_by(plugin: RegexBasedDetector, value_shaped: bool) -> Callable[[re.Match[str]], bool]:
    def confirmed(match: re.Match[str]) -> bool:
        if value_shaped and not is_secret_value(match.group(match.lastindex or 0)):
            return False
        return any(True for _ in plugin.analyze_string(match.group(0)))

    return confirmed


def _rule(kind: str, needles: tuple[str, ...], pattern: str, check: bool = False) -> Rule:
    return Rule(kind, re.compile(pattern), needles, _value_is_secret if check else None)


FIRST_RULES = (
    _rule("private-key", ("private key", "putty-user-key"),
          r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
          r"|PuTTY-User-Key-File-\d[\s\S]*?(?:Private-MAC: \w+|\Z)"),
    _rule("json-web-token", ("eyj",), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
"""Run before detect-secrets' rules: they take what its rules would cut short (a key block's body,
a JWT's signature, which its JWT rule leaves in clear)."""

OWN_RULES = (
    _rule("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _rule("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{32,}"),
    _rule("google-key", ("aiza",), r"\bAIza[0-9A-Za-z_-]{35}"),
    _rule("hugging-face-token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    _rule("github-token", ("github_pat_", "gh"), r"\b(?:github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,})"),
    _rule("slack-token", ("xox",), r"\bxox[abposre]-(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{10,}"),
    _rule("stripe-key", ("k_live_", "k_test_"), r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    _rule("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    _rule("heroku-key", ("heroku",),
          r"(?i)heroku\w*[\"']?[ \t]*[:=][ \t]*[\"']?(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"),
    _rule("docker-auth", ("\"auth\"",), r"\"auth\"[ \t]*:[ \t]*\"(?P<secret>[A-Za-z0-9+/]{12,}={0,2})\""),
    _rule("azure-connection-string", ("accountkey=", "sharedaccesskey=", "sharedaccesssignature="),
          r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<secret>[^;\s\"']{16,})"),
    _rule("discord-webhook", ("discord",),
          r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<secret>[A-Za-z0-9_-]{30,})"),
    _rule("bearer-token", ("bearer", "basic"),
          r"(?i)\b(?:bearer|basic)\s+(?P<secret>(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,})", check=True),
    _rule("env-line", ("key", "secret", "token", "pass", "pwd", "credential", "private", "auth"),
          r"(?m)^[ \t]*(?:export[ \t]+)?(?:[A-Z][A-Z0-9]*_)*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PWD|"
          r"CREDENTIALS?|PRIVATE|AUTH)(?:_[A-Z0-9]+)*[ \t]*=[ \t]*(?P<secret>[^\s#]+)[ \t]*$", check=True),
    _rule("assignment", ("passw", "passphrase", "pwd", "secret", "token", "key", "credential"),
          rf"(?i){SECRET_NAME}(?![A-Za-z0-9_])[\"']?[ \t]*[:=][ \t]*"
          r"(?:\"(?P<secret>[^\"\n]+)\"|'(?P<quoted>[^'\n]+)'|(?P<bare>(?![$%])[^\s\\\"'`,;(){}\[\]<>]+)(?![(\[]))",
          check=True),
)
"""Run after detect-secrets' rules, in this order: formats it has no plugin for, then values named secret."""
