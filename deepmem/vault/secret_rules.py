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
PLUGIN_NEEDLES = {
    "IbmCosHmacDetector": ("secret",),
    "IbmCloudIamDetector": ("key", "pwd", "pass", "token"),
    "SoftlayerDetector": ("key", "pwd", "pass", "token", "softlayer"),
    "CloudantDetector": ("key", "pwd", "pw", "pass", "token", "cloudant"),
    "ArtifactoryDetector": ("akc", "ap"),
    "AWSKeyDetector": ("a3t", "abia", "acca", "akia", "asia", "aws"),
}
"""Words one of which a text must hold for a detect-secrets plugin's regexes to match (each regex names them), so
texts without them are not searched: these plugins' regexes try several optional prefixes at every position."""
VALUE_SHAPED = {"BasicAuthDetector"}
"""detect-secrets plugins whose hit is any value in a credential's place (`://user:VALUE@`): it must pass `is_secret_value`."""
MIN_VALUE = 8
GENERATED_RUN = 16
NAME_PIECES = re.compile(r"[A-Z]+s?(?![a-z])|[A-Z]?[a-z]+")
"""The words a name is made of (`Shadow`, `branch`, `HTTP`, `IDs`); digits and underscores part them."""
LETTERS_PER_PIECE = 4
"""A name made by a person has about a word per this many characters or fewer (`ShadowBranchName`: 3 in 16)."""
ID_PREFIXES = ("ses_", "msg_", "prt_", "call_", "toolu_", "fc_", "rs_", "resp_", "chatcmpl-", "ccr_")
"""Prefixes of the ids OpenCode and the providers give sessions, messages, parts and tool calls: random, not secret."""
DELIMITERS = " \t\r\n=:,;\"'"
PLACEHOLDER = re.compile(
    r"example|sample|test|fake|mock|dummy|insecure|placeholder|change.?me|your|redacted|secret|pass\W?word"
    r"|x{4,}|\*{3,}|\.\.\.|%[s(]|<|\{\{", re.I)
"""Words and shapes of values that stand in for a secret (in tests, docs, templates) rather than being one."""
CODE = re.compile(r"^(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:\(|\[|$)")
"""A name, a dotted name, or a call or index of one: a reference in code, not a literal."""
WORD_AND_NUMBER = re.compile(r"[A-Za-z]+[-_]?\d{0,4}")
"""`hashed123`, `admin2024`: a fixture's value, not a generated secret."""
SECRET_NAME = (r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key(?:[_-]?id)?"
               r"|credentials?)")


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


def has_word_structure(name: str) -> bool:
    """True for a name made of words (`base_commit`, `TestHTTPServer2`), False for a generated token (`wJalrXUtnFEMI`,
    `aB3dE9fGh2Jk`): too many words for its length, or as many one-letter words as longer ones."""
    pieces = NAME_PIECES.findall(name)
    single = sum(1 for piece in pieces if len(piece) == 1)
    return len(pieces) <= 1 + len(name) / LETTERS_PER_PIECE and not (len(pieces) >= 3 and 2 * single >= len(pieces))


def _is_generated_token(match: re.Match[str]) -> bool:
    token = match.group("secret")
    return (not token.startswith(ID_PREFIXES) and is_generated(token) and not has_word_structure(token))


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
    if len(value) < MIN_VALUE or " " in value or any(test(value) for test in stand_in):
        return False
    if PLACEHOLDER.search(value) and not is_generated(PLACEHOLDER.sub("", value)):
        return False
    if WORD_AND_NUMBER.fullmatch(value) or (CODE.match(value) and not any(map(_is_random, value.split(".")))):
        return False
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    symbols = any(not c.isalnum() for c in value)
    return classes + symbols >= 2 and any(c.isdigit() or not c.isalnum() for c in value)


def is_generated(value: str) -> bool:
    """A run of `GENERATED_RUN` characters or more with both cases and digits: what is left of a real key once a
    word like EXAMPLE is taken out of it (AWS's documented example key is flagged by every scanner all the same)."""
    return any(len(run) >= GENERATED_RUN and all(any(test(c) for c in run) for test in (str.islower, str.isupper, str.isdigit))
               for run in re.findall(r"[A-Za-z0-9+/_~.-]+", value))


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
                needles = PLUGIN_NEEDLES.get(name, ())
                rules += [Rule(_slug(plugin.secret_type), regex, needles, check) for regex in plugin.denylist]
    return sorted(rules, key=lambda rule: rule.kind)


def _confirmed_by(plugin: RegexBasedDetector, value_shaped: bool) -> Callable[[re.Match[str]], bool]:
    def confirmed(match: re.Match[str]) -> bool:
        if value_shaped and not is_secret_value(match.group(match.lastindex or 0)):
            return False
        return any(True for _ in plugin.analyze_string(match.group(0)))

    return confirmed


def _rule(kind: str, needles: tuple[str, ...], pattern: str, check: bool = False) -> Rule:
    return Rule(kind, re.compile(pattern), needles, _value_is_secret if check else None)


UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
SERVICES = (
    ("heroku", ("heroku",), UUID),
    ("snyk", ("snyk",), UUID),
    ("codecov", ("codecov",), UUID),
    ("newrelic", ("newrelic", "new_relic", "nrak"), r"NRAK-[A-Z0-9]{27}"),
    ("datadog", ("datadog", "dd_api_key", "dd_app_key", "dd_application_key"), r"[0-9a-f]{32}|[0-9a-f]{40}"),
    ("algolia", ("algolia",), r"[0-9a-f]{32}"),
    ("circleci", ("circleci", "circle_token"), r"[0-9a-f]{40}"),
    ("sentry", ("sentry",), r"[0-9a-f]{64}"),
    ("linode", ("linode",), r"[0-9a-f]{64}"),
    ("cloudflare", ("cloudflare", "cf_api_token", "cf_api_key"), r"[A-Za-z0-9_-]{40}|[0-9a-f]{37}"),
    ("fastly", ("fastly",), r"[A-Za-z0-9_-]{32}"),
    ("vercel", ("vercel",), r"[A-Za-z0-9]{24}"),
    ("netlify", ("netlify",), r"[A-Za-z0-9_-]{43,45}"),
    ("okta", ("okta",), r"00[A-Za-z0-9_-]{40}"),
    ("pagerduty", ("pagerduty",), r"[A-Za-z0-9_+-]{20}"),
    ("mailgun", ("mailgun",), r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}"),
)
"""(service, the words that name it on a line, its name or its variables' names, in lower case; the shape of its
keys): a value in that shape standing alone, letters mixed with digits, on a line that names the service is its
credential, wherever the name stands on the line (`heroku auth:token` then the key, `HEROKU_API_KEY=`, the key then
`# heroku`), as keyword rules of secret scanners do."""


def service_rules() -> tuple[Rule, ...]:
    """A rule per service of SERVICES: a value of the service's shape, standing alone, on a line that names it."""
    return tuple(Rule(f"{service}-key", re.compile(rf"(?<![\w+/.-])(?P<secret>{shape})(?![\w+/=-])"), words,
                      _on_a_line_naming(words)) for service, words, shape in SERVICES)


def _on_a_line_naming(words: tuple[str, ...]) -> Callable[[re.Match[str]], bool]:
    named = re.compile(rf"(?i)(?<![a-z])(?:{'|'.join(map(re.escape, words))})(?![a-z])")

    def on_the_line(match: re.Match[str]) -> bool:
        text = match.string
        start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
        line = text[start:] if end < 0 else text[start:end]
        value = match.group("secret")
        return named.search(line.replace(value, " ")) is not None and _is_random(value)

    return on_the_line


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
    *service_rules(),
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
    _rule("vendor-token", ("dckr_pat_", "rubygems_", "oy2", "_v1_", "ltai", "xapp-", "shp", "hvs.", "age-secret-key-",
                           "dapi", "lin_api_", "pul-", "sbp_", "key-", "gldt-", "glpat-"),
          r"\b(?:dckr_pat_[A-Za-z0-9_-]{20,}|rubygems_[0-9a-f]{48}|oy2[a-z0-9]{43}|do[por]_v1_[0-9a-f]{64}"
          r"|LTAI[A-Za-z0-9]{12,30}|xapp-\d-[A-Z0-9]+-\d+-[0-9a-f]{32,}|shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}"
          r"|hvs\.[A-Za-z0-9_-]{24,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|dapi[0-9a-f]{32}|lin_api_[A-Za-z0-9]{40}"
          r"|pul-[0-9a-f]{40}|sbp_[0-9a-f]{40}|key-[0-9a-f]{32}|gl(?:dt|pat)-[A-Za-z0-9_-]{20,})\b"),
    _rule("webhook-url", ("webhook", "hooks.zapier", "ifttt"),
          r"https://[\w.-]*(?:webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook"
          r"|hooks\.zapier\.com/hooks/catch|maker\.ifttt\.com/trigger/[\w-]+/with/key)/(?P<secret>[^\s\"'<>`]+)"),
    _rule("url-credentials", ("://",), r"://(?:[^\s/:@\[\]]*:)?(?P<secret>[^\s/:@\"'`\[\]]{8,})@[\w.-]", check=True),
    _rule("url-secret-parameter", ("sig", "token", "key", "secret", "password", "auth", "credential"),
          r"(?i)[?&;](?:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|access_token|token|api_?key"
          r"|key|secret|client_secret|password|auth)=(?P<secret>[^&\s#\"'`<>]{8,})", check=True),
    _rule("command-line-secret", ("--",),
          r"--(?i:password|passwd|pass|token|api-?key|secret|access-key|secret-key|auth-token|with-token"
          r"|client-secret)(?:=|[ \t]+)[\"']?(?P<secret>[^\s\"'`]+)", check=True),
    _rule("command-line-secret", ("mysql", "mariadb", "sshpass", "login", "curl"),
          r"(?:(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t]-p"
          r"|(?:sshpass|docker[ \t]+login|podman[ \t]+login|helm[ \t]+registry[ \t]+login)\b[^\n]*?[ \t]-p[ \t]*"
          r"|curl\b[^\n]*?[ \t](?:-u|--user)[ \t]+[^\s:]+:)[\"']?(?P<secret>[^\s\"'`]+)", check=True),
    _rule("spoken-password", ("password", "passwd"), r"(?i)\b(?:password|passwd)[ \t]+(?P<secret>(?=[^\s\\\"'`,;]*\d)[^\s\\\"'`,;]+)",
          check=True),
    _rule("assignment", ("passw", "passphrase", "pwd", "secret", "token", "key", "credential"),
          rf"(?i){SECRET_NAME}(?![A-Za-z0-9_])[\"']?[ \t]*[:=][ \t]*(?:\n[ \t]*)?"
          r"(?:\"(?P<secret>[^\"\n]+)\"|'(?P<quoted>[^'\n]+)'|(?P<bare>(?![$%])[^\s\\\"'`,;(){}\[\]<>]+)(?![(\[]))",
          check=True),
    Rule("generated-token", re.compile(r"(?<![\w+/=-])(?P<secret>[A-Za-z0-9_+/=-]{16,})(?![\w+/=-])"),
         check=_is_generated_token),
)
"""Run after detect-secrets' rules, in this order: formats it has no plugin for, values named secret, then a token
with no word structure standing alone (the value of a credential whose name went into another line or message)."""
