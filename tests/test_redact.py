"""The secret pattern table, one case per format, and what must be left alone."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from deepmem.bridge.server import setup_logging
from deepmem.config import memory_dir
from deepmem.redact import Redactor, redactor_for

# Built from pieces so the file itself carries no token in one piece.
FORMATS = [
    ("openai-key", "export default {{ key: '{}' }}", "sk-" + "proj-" + "Xq81RT5hwp2MSaF0cz9LQoeTbZ3nKv7"),
    ("openai-key", "OPENAI says {} is set", "sk-" + "4fKp0qZ8vN2mLx7TbW9sRc1YhJ6uEa3D"),
    ("anthropic-key", "curl -H 'x-api-key: {}'", "sk-" + "ant-api03-" + "Zk3f9Q_aVbN2-r7TsLq0PmWx4Hc8Yd1"),
    ("google-key", "maps?key={}&q=1", "AI" + "zaSyD4x9Kq2LmN7pR3sT6vW8yZ0aBcDeFgHiJ"),
    ("github-token", "git remote set-url origin https://x:{}@github.com/a/b", "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("github-token", "token {}", "github_" + "pat_" + "11AAB2CDE0abcdefghij_KLMNOPqrstuvwxyz0123"),
    ("slack-token", "SLACK: {}", "xo" + "xb-" + "2048193847-9182736450-AbCdEfGhIjKl"),
    ("slack-webhook", "post to {}", "https://hooks.slack.com/" + "services/T0001/B0002/XyZxyzXYZ123abc"),
    ("stripe-key", "stripe.api_key = {}", "sk" + "_live_" + "51HqLm2eZvKYlo2C0aBcDeFgHi"),
    ("stripe-key", "restricted {}", "rk" + "_live_" + "51HqLm2eZvKYlo2C9zYxWvUtSr"),
    ("jwt", "cookie session={}; Path=/", "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiI0MiJ9.Qx7mK2pL9sT4vW1yZ3aB5cD"),
    ("aws-access-key", "aws_access_key_id {}", "AK" + "IAQ3EGRFXM7YB2LKZT"),
    ("bearer-token", "Authorization: Bearer {}", "ya29.a0AfH6SMBx7Kq2Lm9" + "Np3Rs5Tv8Wy1Za4"),
    ("private-key", "key file:\n{}\nend", "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9Q\nq2Lm9Np3\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "cut short: {}", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"),
    ("url-password", "DATABASE_URL=postgres://app:{}@db:5432/main", "Hx7!pq2Lm9"),
    ("assignment", "password={}", "hunter2hunter2"),
    ("assignment", 'db.secret: "{}"', "Cz8 Lk2 Pq0"),
    ("assignment", "{{\"client_secret\": \"{}\"}}", "9f8e7d6c5b4a"),
    ("env-line", "X=1\nexport MY_SERVICE_API_KEY={}\nY=2", "'v3ry long value'"),
    ("env-line", "SECRET_KEY_BASE={}", "f00dfeedcafe"),
]


@pytest.mark.parametrize(("kind", "template", "secret"), FORMATS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(FORMATS)])
def test_each_format_is_redacted_and_named(kind: str, template: str, secret: str) -> None:
    text = template.format(secret)
    redacted = Redactor().text(text)
    assert secret not in redacted
    assert redacted == text.replace(secret, f"[REDACTED:{kind}]")
    assert Redactor().text(redacted) == redacted


@pytest.mark.parametrize("text", [
    '"tokens_before": 1234567, "max_tokens": 4096',
    "MONKEY_COUNT=5\nDISK_PATH=/var/lib",
    "the token estimation is basic configuration work",
    "password = os.environ.get(name)",
    "secret: $DB_SECRET",
    "task-list-management-refactor-2024 and disk-usage-report-cluster-01",
    "def check_password(user):\n    return verify(user.password_hash)",
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
    assert redactor_for(tmp_path).text("id ACME-123456 and password=hunter2hunter2") == (
        "id [REDACTED:custom] and password=[REDACTED:assignment]"
    )
    monkeypatch.setenv("DEEPMEM_SECURITY_REDACT", "0")
    assert redactor_for(tmp_path).text("password=hunter2hunter2") == "password=hunter2hunter2"


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


def test_a_json_original_is_redacted_value_by_value() -> None:
    secret = "f00dfeedcafe"
    document = json.dumps({"type": "tool", "output": f"ok\nSECRET_KEY_BASE={secret}\ndone"})
    redacted = Redactor().document(document)
    assert secret not in redacted
    assert json.loads(redacted)["output"] == "ok\nSECRET_KEY_BASE=[REDACTED:env-line]\ndone"
    assert Redactor().document('{"plain": "nothing here"}') == '{"plain": "nothing here"}'
