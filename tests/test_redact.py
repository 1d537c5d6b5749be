"""The shared-file redactor: one case per credential format, and ordinary code left alone."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deepmem.bridge.server import setup_logging
from deepmem.checkpoints.api import compact, resume_block
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.vault.redact import Redactor

from .secret_formats import FORMATS, LOWER_HEX, chars


def pieces(secret: str, width: int = 12) -> set[str]:
    """Every `width`-character piece of a secret."""
    return {secret[start:start + width] for start in range(max(1, len(secret) - width + 1))}


@pytest.mark.parametrize(("name", "kind", "secret", "line"), FORMATS, ids=[row[0] for row in FORMATS])
def test_each_format_is_redacted_and_named(name: str, kind: str, secret: str, line: str) -> None:
    text = line.format(secret)
    found: list[tuple[str, str]] = []
    redacted = Redactor().text(text, found)
    assert f"[REDACTED:{kind}]" in redacted
    assert not [piece for piece in pieces(secret) if piece in redacted], "a piece of the secret is left in clear"
    assert kind in {found_kind for found_kind, _ in found}
    assert Redactor().text(redacted) == redacted


@pytest.mark.parametrize("text", [
    "session 2026-01-19-c2b51eb0-d0e9-43cf-b431-42c05d49450b.json was exported",
    "see the heroku docs\nrequest id c2b51eb0-d0e9-43cf-b431-42c05d49450b",
    "deploy with vercel from the branch namedsomethinglonger",
    "git log 0123456789abcdef0123456789abcdef01234567 circleci",
])
def test_a_service_shaped_value_without_its_service_on_the_line_stays(text: str) -> None:
    """The id of a session, a value on another line than the service's name, a plain word: not a credential. (A
    commit hash beside `circleci` is: the line names the service, as a keyword rule would take it.)"""
    redacted = Redactor().text(text)
    assert (redacted == text) == ("circleci" not in text)


def test_a_credential_named_by_its_service_in_a_request_never_reaches_the_checkpoint(tmp_path: Path) -> None:
    """The request quoted in checkpoint.md and the resume block holds the key it named, in clear before."""
    key = "-".join(chars("heroku-request", n, LOWER_HEX) for n in (8, 4, 4, 4, 12))
    request = f"Deploy it to our staging app. heroku login worked, the token is {key} if you need it again."
    messages = [{"info": {"role": "user", "id": "m1"}, "parts": [{"type": "text", "text": request}]},
                {"info": {"role": "assistant", "id": "m2", "path": {"root": str(tmp_path), "cwd": str(tmp_path)}},
                 "parts": [{"type": "text", "text": "Deploying."}]}]
    result = compact(Project.load(tmp_path), "ses_heroku", messages)
    assert not result.get("error") and "staging app" in result["prompt"]
    written = [Path(path).read_text(encoding="utf-8") for path in result["written"] if path.endswith(".md")]
    assert written and all(key not in text and "[REDACTED:heroku-key]" in text for text in written)
    block = resume_block(tmp_path)
    assert block is not None and key not in block and "[REDACTED:heroku-key]" in block


def test_the_table_covers_at_least_thirty_formats() -> None:
    assert len(FORMATS) >= 30 and len({row[0] for row in FORMATS}) == len(FORMATS)


@pytest.mark.parametrize("text", [
    '"tokens_before": 1234567, "max_tokens": 4096',
    "MONKEY_COUNT=5\nDISK_PATH=/var/lib",
    "the token estimation is basic configuration work",
    "password = os.environ.get(name)",
    "secret: $DB_SECRET",
    "task-list-management-refactor-2024 and disk-usage-report-cluster-01",
    "def check_password(user):\n    return verify(user.password_hash)",
    "this.token = token;",
    "this.typeToken = typeToken;",
    "SECRET_KEY='test',",
    "SECRET_KEY = 'django-insecure-abc123def456ghi789'",
    "login(username='admin', password=username)",
    "password = 'hashed123'",
    "KEY = settings.SECRET_KEY",
    "api_key = config.api_key",
    "url = 'http://user%40name:pass%40word@host:8080'",
    "TOKEN=${GITHUB_TOKEN}",
    "password: <your-password-here>",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_json_values_are_redacted_and_keys_kept() -> None:
    secret = "gh" + "o_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    value = {"info": {"id": "m1"}, "parts": [{"text": f"token {secret}", "n": 3, "ok": True}]}
    out = Redactor().json(value)
    assert out == {"info": {"id": "m1"}, "parts": [{"text": "token [REDACTED:github-token]", "n": 3, "ok": True}]}


def test_settings_turn_redaction_off_or_add_patterns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = memory_dir(tmp_path)
    folder.mkdir()
    (folder / "config.toml").write_text('[security]\npatterns = ["ACME-[0-9]{6}"]\n')
    assert Project.load(tmp_path).redactor.text("id ACME-123456 and password=hunter2hunter2") == (
        "id [REDACTED:custom] and password=[REDACTED:assignment]"
    )
    monkeypatch.setenv("DEEPMEM_SECURITY_REDACT", "0")
    assert Project.load(tmp_path).redactor.text("password=hunter2hunter2") == "password=hunter2hunter2"


def test_the_bridge_log_is_redacted_and_private(tmp_path: Path) -> None:
    secret = "AK" + "IAQ3EGRFXM7YB2LKZT"
    setup_logging(str(tmp_path))
    try:
        logging.getLogger("deepmem.bridge").warning("request failed with key %s", secret)
        try:
            raise ValueError(f"bad key {secret}")
        except ValueError:
            logging.getLogger("deepmem.bridge").exception("traceback follows")
    finally:
        for handler in logging.getLogger("deepmem").handlers:
            handler.close()
        logging.getLogger("deepmem").handlers[:] = []
    path = memory_dir(tmp_path) / "logs" / "bridge.log"
    text = path.read_text()
    assert "request failed with key [REDACTED:aws-access-key]" in text and "ValueError" in text
    assert secret not in text
    assert path.stat().st_mode & 0o777 == 0o600
