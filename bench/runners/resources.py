"""Resource benchmark: the engine's memory over a 1M-token session and over 100 sessions.

    python -m bench.runners.resources [--tokens 1000000] [--stride 10] [--sessions 100] [--corpus DIR]

A real `deepmem bridge` process is driven over the wire the way the plugin drives it
(incremental requests: a kept prefix with its chained digest, then only the new messages).
Part A grows one session, built by concatenating corpus sessions, to `--tokens` tokens,
feeding every `--stride`-th step. Part B feeds `--sessions` corpus sessions, each under
its own id, to one engine. After each part: the engine's RSS and peak RSS (VmHWM), and
the size of `.deep-memory/`. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.corpora import DEFAULT, corpus_folder, load_messages, session_paths
from bench.runners.bridge import build_session, step_lengths
from deepmem import __version__
from deepmem.bridge.protocol import PROTOCOL, chain_digest
from deepmem.history import history_tokens


def sha1(data: bytes) -> str:
    """The plugin's transport digest: SHA-1 hex."""
    return hashlib.sha1(data).hexdigest()


class Client:
    """One engine process and, per session, what the plugin has already sent it."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "deepmem", "bridge", "--root", str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.sent: dict[str, tuple[int, list[str], set[str]]] = {}

    def request(self, op: str, **body: Any) -> dict[str, Any]:
        """Send one request, return its reply."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write(orjson.dumps({"id": self.next_id, "op": op, **body}) + b"\n")
        self.proc.stdin.flush()
        return orjson.loads(self.proc.stdout.readline())

    def transform(self, session: str, messages: list[dict]) -> dict[str, Any]:
        """Send a grown history: the unchanged prefix is kept, known parts go by reference."""
        keep, chain, known = self.sent.get(session, (0, [], set()))
        wire = []
        for message in messages[keep:]:
            parts = []
            for part in message["parts"]:
                digest = sha1(orjson.dumps(part))
                parts.append({"id": part["id"], "d": digest} if part["id"] in known else
                             {"id": part["id"], "d": digest, "part": part})
                known.add(part["id"])
            digest = sha1(orjson.dumps(message["info"]) + b"|" + ",".join(p["d"] for p in parts).encode())
            chain = [*chain, chain_digest(chain[-1] if chain else "", digest)]
            wire.append({"d": digest, "info": message["info"], "parts": parts})
        reply = self.request("transform", session=session, messages=wire, keep=keep,
                             keep_digest=self.sent[session][1][keep - 1] if keep else "")
        if reply.get("error", {}).get("code") == "resync":
            self.sent.pop(session)
            return self.transform(session, messages)
        self.sent[session] = (len(messages), chain, known)
        return reply

    def memory_kb(self) -> tuple[int, int]:
        """(RSS, peak RSS) of the engine in kB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])

    def close(self) -> None:
        """Close stdin; the engine exits."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def folder_mb(folder: Path) -> float:
    """Bytes of every file below a folder, in MB."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def one_long_session(corpus: Path, tokens: int, stride: int) -> dict[str, Any]:
    """Part A: one session grown step by step to `tokens` tokens."""
    messages = build_session(corpus, tokens)
    lengths = step_lengths(messages, stride)
    with tempfile.TemporaryDirectory() as root:
        client = Client(Path(root))
        assert client.request("hello", version=__version__, protocol=PROTOCOL)["ok"]
        started = time.perf_counter()
        rows = []
        for index, length in enumerate(lengths):
            assert client.transform("ses_long", messages[:length]).get("ok")
            if index % max(1, len(lengths) // 5) == 0 or length == lengths[-1]:
                rows.append((history_tokens(messages[:length]), *client.memory_kb()))
        seconds = time.perf_counter() - started
        client.close()
        disk = folder_mb(Path(root) / ".deep-memory")
    return {"steps": len(lengths), "rows": rows, "seconds": seconds, "disk_mb": disk}


def many_sessions(corpus: Path, count: int, stride: int) -> dict[str, Any]:
    """Part B: `count` corpus sessions, each under its own id, fed to one engine."""
    paths = session_paths(corpus, count)
    with tempfile.TemporaryDirectory() as root:
        client = Client(Path(root))
        assert client.request("hello", version=__version__, protocol=PROTOCOL)["ok"]
        rows = []
        for number, path in enumerate(paths, 1):
            messages = load_messages(path)
            for length in step_lengths(messages, stride):
                assert client.transform(f"ses_{number:03d}", messages[:length]).get("ok")
            client.request("event", type="session.idle", session=f"ses_{number:03d}")
            if number % 10 == 0 or number == len(paths):
                rows.append((number, *client.memory_kb()))
        client.close()
        disk = folder_mb(Path(root) / ".deep-memory")
    return {"rows": rows, "disk_mb": disk}


def print_table(title: str, first: str, part: dict[str, Any]) -> None:
    """One part's rows: its measure, the engine's RSS and peak RSS, then the disk used."""
    print(title)
    print(f"{first:>15} {'RSS MB':>8} {'peak MB':>8}")
    for value, rss, peak in part["rows"]:
        print(f"{value:>15,} {rss / 1024:>8.0f} {peak / 1024:>8.0f}")
    print(f".deep-memory/ after it: {part['disk_mb']:.1f} MB\n")


def main() -> int:
    """Run both parts and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--stride", type=int, default=10, help="feed every Nth step")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    args = parser.parse_args()
    long = one_long_session(args.corpus, args.tokens, args.stride)
    print_table(f"A. one session to ~{args.tokens:,} tokens, {long['steps']} steps fed in {long['seconds']:.0f} s",
                "history tokens", long)
    many = many_sessions(args.corpus, args.sessions, args.stride)
    print_table(f"B. {args.sessions} sessions in one engine (every {args.stride}th step of each)", "sessions", many)
    print(json.dumps({"long": long, "many": many}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
