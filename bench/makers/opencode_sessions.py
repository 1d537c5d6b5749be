"""Scripted coding sessions over a demo project (our small modules + copies of stdlib packages).

Each session is a prompt and a fake-model script for tests/e2e/fake_llm.py; `$ROOT` stands
for the project folder. The sessions mix what real sessions do: big reads, paged reads,
many-match greps, globs, test runs with failures, edits of files read earlier, writes,
todo updates, a subagent task, an errored call and big command output.
"""

from __future__ import annotations

from typing import Any

Step = dict[str, Any]

STDLIB_PACKAGES = ("json", "email", "logging")

INVENTORY = '''"""Inventory records: load them from JSON, total their value, export a report."""

import json
from dataclasses import asdict, dataclass


class InventoryError(ValueError):
    """An inventory file that cannot be loaded."""


@dataclass
class Item:
    sku: str
    name: str
    quantity: int
    unit_price: float


def load_items(text):
    """Parse a JSON array of items."""
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InventoryError("bad inventory file") from exc
    return [Item(**row) for row in rows]


def total_value(items):
    """The stock value: quantity times unit price, summed."""
    total = 0
    for item in items:
        total += item.unit_price
    return round(total, 2)


def sample_items(count):
    """Deterministic sample rows for demos and tests."""
    return [
        {"sku": f"SKU-{i:05d}", "name": f"Widget {i}", "quantity": i % 7, "unit_price": round(1.5 + (i % 13) * 0.25, 2)}
        for i in range(count)
    ]


def export_rows(items):
    """Rows ready for json.dumps."""
    return [asdict(item) for item in items]
'''

TEST_INVENTORY = '''import json
import unittest

from inventory import InventoryError, load_items, sample_items, total_value


class InventoryTest(unittest.TestCase):
    def test_load_items(self):
        items = load_items(json.dumps(sample_items(3)))
        self.assertEqual([i.sku for i in items], ["SKU-00000", "SKU-00001", "SKU-00002"])

    def test_total_value_counts_quantity(self):
        items = load_items(json.dumps(sample_items(10)))
        self.assertEqual(total_value(items), 65.25)

    def test_bad_json_names_the_position(self):
        with self.assertRaisesRegex(InventoryError, "line 1 column 2"):
            load_items("[oops]")


if __name__ == "__main__":
    unittest.main()
'''

MAILER = '''"""Build and render the notification e-mails."""

from email import policy
from email.message import EmailMessage


def build_message(sender, recipients, subject, body):
    """A text e-mail ready to send."""
    message = EmailMessage(policy=policy.compat32)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Subject"] = subject
    message.set_content(body)
    return message


def render(message):
    """The wire form of a message."""
    return message.as_string()
'''

TEST_MAILER = '''import unittest
from email import message_from_string, policy

from mailer import build_message, render

SUBJECT = "Résumé of the quarterly inventory reconciliation for the northern warehouse — please review"


class MailerTest(unittest.TestCase):
    def test_long_non_ascii_subject_round_trips(self):
        wire = render(build_message("ops@example.com", ["a@example.com"], SUBJECT, "See attached."))
        parsed = message_from_string(wire, policy=policy.default)
        self.assertEqual(parsed["Subject"], SUBJECT)

    def test_lines_are_folded(self):
        wire = render(build_message("ops@example.com", ["a@example.com"], SUBJECT, "x"))
        self.assertTrue(all(len(line) <= 78 for line in wire.splitlines()))


if __name__ == "__main__":
    unittest.main()
'''

APP_LOGGING = '''"""Logging set-up for the inventory service."""

import logging
import logging.handlers

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(path, level="INFO"):
    """Log to a rotating file and to stderr."""
    root = logging.getLogger()
    root.setLevel(level)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(handler)
    root.addHandler(logging.StreamHandler())
    return root
'''

README = """# Inventory service

Loads inventory files, totals stock value and e-mails reports. `lib/` holds vendored
copies of standard-library packages we patch locally.

Run the tests with `python3 -m unittest`.
"""

PROJECT_FILES = {
    "README.md": README,
    "inventory.py": INVENTORY,
    "test_inventory.py": TEST_INVENTORY,
    "mailer.py": MAILER,
    "test_mailer.py": TEST_MAILER,
    "app_logging.py": APP_LOGGING,
}


def read(path: str, offset: int | None = None, limit: int | None = None, say: str = "") -> Step:
    """A read step (`offset`/`limit` page through the file)."""
    args: dict[str, Any] = {"filePath": f"$ROOT/{path}"}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    return {"tool": "read", "args": args, "say": say}


def bash(command: str, say: str = "") -> Step:
    """A bash step run in the project folder."""
    return {"tool": "bash", "args": {"command": command}, "say": say}


def grep(pattern: str, path: str = "", include: str | None = None, say: str = "") -> Step:
    """A grep step over the project (or a folder of it)."""
    args = {"pattern": pattern, "path": f"$ROOT/{path}".rstrip("/")}
    if include:
        args["include"] = include
    return {"tool": "grep", "args": args, "say": say}


def glob(pattern: str, say: str = "") -> Step:
    """A glob step from the project folder."""
    return {"tool": "glob", "args": {"pattern": pattern}, "say": say}


def edit(path: str, old: str, new: str, say: str = "") -> Step:
    """An edit step replacing `old` by `new` once."""
    return {"tool": "edit", "args": {"filePath": f"$ROOT/{path}", "oldString": old, "newString": new}, "say": say}


def write(path: str, content: str, say: str = "") -> Step:
    """A write step creating or replacing a whole file."""
    return {"tool": "write", "args": {"filePath": f"$ROOT/{path}", "content": content}, "say": say}


def todos(*items: tuple[str, str], say: str = "") -> Step:
    """A todowrite step: (content, status) pairs, high priority first."""
    rows = [
        {"content": content, "status": status, "priority": "high" if i == 0 else "medium"}
        for i, (content, status) in enumerate(items)
    ]
    return {"tool": "todowrite", "args": {"todos": rows}, "say": say}


def task(description: str, prompt: str, steps: list[Step], say: str = "") -> Step:
    """A subagent task step; `steps` is the subagent's own script."""
    args = {"description": description, "prompt": prompt, "subagent_type": "general"}
    return {"tool": "task", "args": args, "steps": steps, "say": say}


def text(answer: str) -> Step:
    """The final answer of a turn."""
    return {"text": answer}


RUN_INVENTORY_TESTS = "python3 -m unittest -v test_inventory 2>&1"
BIG_JSON = (
    "python3 -c 'import json, inventory; "
    "print(json.dumps(inventory.export_rows(inventory.load_items(json.dumps(inventory.sample_items(260))))))'"
)

REPORT_TOOL = '''"""Print a stock report for an inventory file: python3 tools/stock_report.py FILE."""

import json
import sys

sys.path.insert(0, ".")

from inventory import InventoryError, load_items, total_value  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print("usage: stock_report.py FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as handle:
            items = load_items(handle.read())
    except (OSError, InventoryError) as exc:
        print(f"stock_report: {exc}", file=sys.stderr)
        return 1
    low = [item for item in items if item.quantity == 0]
    print(json.dumps({"items": len(items), "value": total_value(items), "out_of_stock": [i.sku for i in low]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

INVENTORY_SESSION = [
    glob("**/*.py", say="I'll start with the project layout."),
    read("inventory.py"),
    read("test_inventory.py"),
    bash(RUN_INVENTORY_TESTS, say="Let me run the tests to see what fails."),
    todos(("Fix total_value to count quantity", "in_progress"), ("Name the position of JSON errors", "pending"),
          ("Add a stock report tool", "pending")),
    read("lib/json/__init__.py", say="Checking how json reports decode errors."),
    read("lib/json/decoder.py"),
    grep("def ", "lib/json"),
    grep("JSONDecodeError", "lib"),
    read("lib/json/decoder.py", offset=20, limit=40),
    bash(BIG_JSON, say="Let me look at what the export produces."),
    edit("inventory.py", "        total += item.unit_price\n", "        total += item.quantity * item.unit_price\n",
         say="total_value ignores the quantity; fixing."),
    bash(RUN_INVENTORY_TESTS),
    read("lib/json/scanner.py"),
    grep("raise ", "lib/json", include="*.py"),
    read("lib/json/decoder.py", say="Re-reading the decoder for the error attributes."),
    edit("inventory.py", '        raise InventoryError("bad inventory file") from exc\n',
         '        raise InventoryError(f"bad inventory file: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc\n'),
    bash(RUN_INVENTORY_TESTS),
    todos(("Fix total_value to count quantity", "completed"), ("Name the position of JSON errors", "completed"),
          ("Add a stock report tool", "in_progress")),
    read("tools/stock_report.py", say="Is there a report tool already?"),
    write("tools/stock_report.py", REPORT_TOOL),
    bash("python3 -c 'import json, inventory; print(json.dumps(inventory.sample_items(40)))' > /tmp/stock.json "
         "&& python3 tools/stock_report.py /tmp/stock.json"),
    bash("echo '[{\"sku\": 1,' > /tmp/broken.json; python3 tools/stock_report.py /tmp/broken.json; echo exit=$?"),
    read("lib/json/encoder.py", say="Checking the encoder options for the report output."),
    grep("indent", "lib/json/encoder.py"),
    read("inventory.py"),
    bash("python3 -m unittest 2>&1 | tail -30"),
    bash("git status --short && git diff --stat"),
    todos(("Fix total_value to count quantity", "completed"), ("Name the position of JSON errors", "completed"),
          ("Add a stock report tool", "completed")),
    text("Fixed `total_value` (it ignored quantities) and made JSON errors name their line and column. "
         "I decided to keep the standard json module rather than add a dependency. Added tools/stock_report.py. "
         "The mailer tests still fail: that is a separate issue."),
]

RUN_MAILER_TESTS = "python3 -m unittest -v test_mailer 2>&1"

FOLDING_SUBAGENT = [
    grep("def _fold|def fold", "lib/email", say="Searching for the folding functions."),
    read("lib/email/_policybase.py", offset=300, limit=80),
    read("lib/email/policy.py", offset=150, limit=80),
    grep("refold_source|max_line_length", "lib/email"),
    text("Folding: `Compat32._fold` in _policybase.py folds with the legacy `Header` class; "
         "`EmailPolicy._fold` in policy.py calls `header.fold(policy=self)` and refolds per `refold_source`. "
         "Only EmailPolicy instances (policy.default, policy.SMTP) have `content_manager`, which "
         "EmailMessage.set_content needs."),
]

MAILER_SESSION = [
    read("mailer.py", say="Looking at the mailer first."),
    bash(RUN_MAILER_TESTS),
    glob("lib/email/**/*.py"),
    read("lib/email/message.py", say="The traceback ends in email/message.py; reading it."),
    read("lib/email/message.py", offset=1100, limit=100),
    grep("content_manager", "lib/email"),
    grep("class .*Policy|^compat32|^default|^SMTP", "lib/email"),
    task("Find header folding code",
         "Find where lib/email folds long headers and which policies support set_content; report the functions.",
         FOLDING_SUBAGENT, say="I'll have a subagent map the folding code while I check the policies."),
    read("lib/email/policy.py"),
    todos(("Use an EmailPolicy in build_message", "in_progress"), ("Check folding of long subjects", "pending")),
    edit("mailer.py", "    message = EmailMessage(policy=policy.compat32)\n", "    message = EmailMessage(policy=policy.SMTP)\n",
         say="compat32 has no content manager; SMTP policy folds headers and uses CRLF."),
    bash(RUN_MAILER_TESTS),
    read("lib/email/header.py"),
    bash("grep -rn 'def ' lib/email | head -400"),
    bash("python3 -c 'import nonexistent_mailer_helper'"),
    read("lib/email/_header_value_parser.py", offset=2700, limit=200),
    grep("def _refold_parse_tree|def _fold_as_ew", "lib/email"),
    read("lib/email/_header_value_parser.py", offset=2800, limit=120, say="Looking at _refold_parse_tree again."),
    edit("test_mailer.py", "    def test_lines_are_folded(self):\n",
         "    def test_crlf_line_endings(self):\n"
         "        wire = render(build_message(\"ops@example.com\", [\"a@example.com\"], \"Hi\", \"x\"))\n"
         "        self.assertIn(\"\\r\\n\", wire)\n\n"
         "    def test_lines_are_folded(self):\n"),
    bash(RUN_MAILER_TESTS),
    read("mailer.py"),
    bash("python3 -c \"import mailer; print(mailer.render(mailer.build_message('ops@example.com', "
         "['a@example.com', 'b@example.com'], 'Résumé of the quarterly inventory reconciliation — please review', "
         "'Body')))\""),
    todos(("Use an EmailPolicy in build_message", "completed"), ("Check folding of long subjects", "completed")),
    bash("git diff"),
    text("The mailer used `policy.compat32`, which has no content manager, so `set_content` raised "
         "AttributeError. It now uses `policy.SMTP`: long non-ASCII subjects are RFC 2047 encoded and folded, "
         "lines end with CRLF. Added a CRLF test. We must not switch back to compat32."),
]

LOGGING_CHECK = (
    "python3 -c 'import app_logging, logging; log = app_logging.configure(\"/tmp/app.log\"); "
    "[logging.getLogger(\"inventory.sync\").info(\"synced batch %d of 300: %d rows\", i, 40 + i % 9) for i in range(300)]; "
    "logging.getLogger(\"inventory.sync\").error(\"batch failed\", exc_info=ZeroDivisionError(\"division by zero\"))' 2>&1 "
    "| sed -E 's/^[0-9-]+ [0-9:,]+ //'"
)

LOGGING_SESSION = [
    read("app_logging.py", say="Starting from our logging set-up."),
    glob("lib/logging/*.py"),
    read("lib/logging/__init__.py", say="Reading the logging core to see how handlers are flushed."),
    grep("class .*Handler", "lib/logging"),
    grep("def (emit|flush|close|shouldRollover|doRollover)", "lib/logging"),
    read("lib/logging/handlers.py", offset=1, limit=250),
    read("lib/logging/handlers.py", offset=250, limit=250),
    todos(("Stop duplicate handlers when configure() runs twice", "in_progress"), ("Add a dictConfig file", "pending"),
          ("Log timestamps in UTC", "pending")),
    bash(LOGGING_CHECK, say="Let me see what the service logs look like."),
    bash("python3 -c 'import app_logging, logging; app_logging.configure(\"/tmp/a.log\"); app_logging.configure(\"/tmp/a.log\"); "
         "logging.getLogger(\"x\").warning(\"once\")' 2>&1"),
    edit("app_logging.py", "    root.setLevel(level)\n",
         "    root.setLevel(level)\n    for old in list(root.handlers):\n        root.removeHandler(old)\n        old.close()\n",
         say="configure() adds handlers each call; clearing old ones first."),
    bash("python3 -c 'import app_logging, logging; app_logging.configure(\"/tmp/a.log\"); app_logging.configure(\"/tmp/a.log\"); "
         "logging.getLogger(\"x\").warning(\"once\")' 2>&1"),
    read("lib/logging/config.py", offset=1, limit=200),
    grep("def (configure_|dictConfig|fileConfig)", "lib/logging/config.py"),
    read("lib/logging/config.py", offset=500, limit=160),
    write("logging.json", "{\n  \"version\": 1,\n  \"formatters\": {\"plain\": {\"format\": \"%(asctime)s %(levelname)s %(name)s: %(message)s\"}},\n"
          "  \"handlers\": {\n    \"file\": {\"class\": \"logging.handlers.RotatingFileHandler\", \"filename\": \"/tmp/app.log\", "
          "\"maxBytes\": 1000000, \"backupCount\": 3, \"formatter\": \"plain\"},\n"
          "    \"stderr\": {\"class\": \"logging.StreamHandler\", \"formatter\": \"plain\"}\n  },\n"
          "  \"root\": {\"level\": \"INFO\", \"handlers\": [\"file\", \"stderr\"]}\n}\n"),
    bash("python3 -c 'import json, logging.config; logging.config.dictConfig(json.load(open(\"logging.json\"))); "
         "logging.getLogger(\"inventory\").info(\"configured\")' 2>&1 | sed -E 's/^[0-9-]+ [0-9:,]+ //'"),
    bash("python3 -c 'import json, logging.config; c = json.load(open(\"logging.json\")); c[\"handlers\"][\"file\"][\"class\"] = "
         "\"logging.handlers.NoSuchHandler\"; logging.config.dictConfig(c)' 2>&1 | tail -12"),
    todos(("Stop duplicate handlers when configure() runs twice", "completed"), ("Add a dictConfig file", "completed"),
          ("Log timestamps in UTC", "in_progress")),
    grep("converter", "lib/logging/__init__.py"),
    read("lib/logging/__init__.py", offset=540, limit=90),
    read("app_logging.py"),
    edit("app_logging.py", "    handler.setFormatter(logging.Formatter(LOG_FORMAT))\n",
         "    formatter = logging.Formatter(LOG_FORMAT)\n    formatter.converter = time.gmtime\n"
         "    handler.setFormatter(formatter)\n"),
    bash("python3 -c 'import app_logging; app_logging.configure(\"/tmp/a.log\")' 2>&1"),
    edit("app_logging.py", "import logging\nimport logging.handlers\n", "import logging\nimport logging.handlers\nimport time\n",
         say="Missing import."),
    bash(LOGGING_CHECK + " | tail -25"),
    bash("python3 -m unittest 2>&1 | tail -20"),
    bash("ls -la lib/logging && wc -l lib/logging/*.py"),
    todos(("Stop duplicate handlers when configure() runs twice", "completed"), ("Add a dictConfig file", "completed"),
          ("Log timestamps in UTC", "completed")),
    text("configure() now replaces its handlers instead of stacking them (each record was logged twice after a "
         "second call), timestamps are UTC, and logging.json holds the same set-up for dictConfig. Decision: keep "
         "RotatingFileHandler at 1 MB x 3 backups. 日志时间统一使用 UTC。"),
]

SESSIONS: dict[str, tuple[str, list[Step]]] = {
    "inventory": ("The inventory totals are wrong and JSON errors are unhelpful: fix both and add a report tool.",
                  INVENTORY_SESSION),
    "mailer": ("Notification e-mails with long non-ASCII subjects fail to build: find out why in lib/email and fix it.",
               MAILER_SESSION),
    "logging": ("Our service logs every line twice after a reload and the timestamps are local time: fix the logging set-up.",
                LOGGING_SESSION),
}
