"""The corpora the benchmarks replay: each folder under `../shared/corpus/` and the OpenCode
fixtures, by name, or any folder of exported sessions by path; sessions loaded in a fixed order."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from deepmem.types import InputError, Message
from deepmem.vault.sessionio import read_session

REPOSITORY = Path(__file__).resolve().parent.parent
SHARED = REPOSITORY.parent / "shared" / "corpus"
"""The shared corpora, beside the repository."""
FIXTURES = REPOSITORY / "fixtures" / "sessions"
"""Sessions recorded from the real OpenCode (and one shared session), kept in the repository."""
DEFAULT = "swe-gemini3"
"""The corpus a benchmark that reads one replays when none is named."""
BILLED_AT = {"codex-graph": "openai"}
"""The price model a corpus is billed at when none is named: Codex sessions at OpenAI's prices,
every other corpus at Anthropic's (`billed_at`)."""


def corpora() -> dict[str, Path]:
    """Name → folder: every folder under the shared corpora, by name, then `fixtures`."""
    shared = sorted(path for path in SHARED.iterdir() if path.is_dir()) if SHARED.is_dir() else []
    return {**{path.name: path for path in shared}, "fixtures": FIXTURES}


def corpus_folder(text: str) -> Path:
    """The folder of a corpus named or given by path (an argparse error naming the known ones when neither)."""
    known = corpora()
    if text in known:
        return known[text]
    if Path(text).is_dir():
        return Path(text)
    raise argparse.ArgumentTypeError(f"no corpus {text!r}: not a folder, and not one of {', '.join(known)}")


def corpus_name(folder: Path) -> str:
    """The name the registry knows a folder by, else the folder's own name."""
    return next((name for name, known in corpora().items() if known.resolve() == folder.resolve()), folder.name)


def billed_at(name: str) -> str:
    """The price model a corpus is billed at when none is named (`BILLED_AT`, else Anthropic's)."""
    return BILLED_AT.get(name, "anthropic")


def session_paths(folder: Path, limit: int | None = None) -> list[Path]:
    """Session files of a corpus folder, sorted by name, the first `limit` of them."""
    paths = sorted(p for p in folder.glob("*.json") if p.name != "manifest.json")
    return paths[:limit] if limit else paths


def load_messages(path: Path) -> list[Message]:
    """The messages of one exported session."""
    return read_session(str(path)).messages


def readable_sessions(paths: list[Path], warnings: list[str]) -> Iterator[tuple[Path, list[Message]]]:
    """Each session that reads, with its messages, in order; the one-line error of each that does not goes to `warnings`."""
    for path in paths:
        try:
            messages = load_messages(path)
        except InputError as exc:
            warnings.append(str(exc))
            continue
        yield path, messages


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """--corpus (repeatable; every corpus when not given) and --sessions."""
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or a folder of exports (repeatable; default: every corpus)")
    parser.add_argument("--sessions", type=int, help="only the first N sessions (by name) of each corpus")


def chosen_corpora(args: argparse.Namespace) -> list[Path]:
    """The corpora `--corpus` names, or every corpus."""
    return args.corpus or list(corpora().values())
