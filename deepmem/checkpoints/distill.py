"""`/distill`: recurring command sequences across checkpointed sessions → skill candidates.

Each bash command is reduced to its shape (`pytest`, `python <script>`, `sed -i`, `git diff`);
a run of SEQUENCE shapes seen in at least MIN_SESSIONS sessions becomes a candidate
`.opencode/skills/<name>/SKILL.md` (where OpenCode 1.18 finds project skills: it scans
`{skill,skills}/**/SKILL.md` under `.opencode/`), with the first real commands as its example.
The digest of each file written is kept in `.deep-memory/skills.json`: a SKILL.md whose bytes
differ from it (the user edited it), or that deepmem did not write, is never overwritten.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import xxhash

from deepmem.checkpoints.store import RAW, session_files
from deepmem.extractors.calls import build_timeline
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.toolcalls.shell import first_program
from deepmem.vault.sealed import SealError, read_sealed
from deepmem.vault.writer import write_shared, write_shared_json

SEQUENCE = 3
MIN_SESSIONS = 3
MAX_SKILLS = 5
WRITTEN = "skills.json"
SUBCOMMAND_PROGRAMS = frozenset({"git", "npm", "pnpm", "yarn", "pip", "cargo", "go", "make", "docker", "uv"})
INSPECTION = frozenset({"cat", "ls", "head", "tail", "grep", "rg", "find", "sed -n", "nl", "wc", "echo"})
"""Looking around is not a workflow: these shapes never start or end a candidate."""


def command_shape(command: str) -> str:
    """A command reduced to what repeats across sessions: program, subcommand or `-i`, `<script>`."""
    program = first_program(command)
    words = command.split()
    rest = words[words.index(program) + 1 :] if program in words else []
    if program in SUBCOMMAND_PROGRAMS and rest and not rest[0].startswith("-"):
        return f"{program} {rest[0]}"
    if program in ("cat", "echo", "printf") and ">" in command:
        return f"{program} > file"
    if program == "sed":
        return "sed -i" if any(w.startswith("-i") for w in rest) else "sed -n"
    if re.match(r"python[\d.]*$", program):
        if rest[:1] == ["-m"] and len(rest) > 1:
            return f"python -m {rest[1]}"
        return "python <script>" if rest and rest[0].endswith(".py") else "python"
    return program


def session_shapes(root: str | os.PathLike[str]) -> list[list[tuple[str, str]]]:
    """Per checkpointed session, its bash calls as (shape, command), oldest session first."""
    sessions = []
    for path in session_files(root, RAW):
        try:
            messages = orjson.loads(read_sealed(path))
        except (OSError, orjson.JSONDecodeError, SealError):
            continue
        calls = build_timeline(messages).calls if isinstance(messages, list) else ()
        sessions.append([(command_shape(c.command), c.command) for c in calls if c.command])
    return sessions


def recurring_sequences(sessions: list[list[tuple[str, str]]]) -> list[tuple[tuple[str, ...], int, list[str]]]:
    """(shapes, sessions seen in, first example commands), most widespread first."""
    seen: dict[tuple[str, ...], set[int]] = {}
    examples: dict[tuple[str, ...], list[str]] = {}
    for number, calls in enumerate(sessions):
        for start in range(len(calls) - SEQUENCE + 1):
            window = calls[start : start + SEQUENCE]
            shapes = tuple(shape for shape, _ in window)
            if shapes[0] in INSPECTION or shapes[-1] in INSPECTION or len(set(shapes)) == 1:
                continue
            seen.setdefault(shapes, set()).add(number)
            examples.setdefault(shapes, [command for _, command in window])
    ranked = sorted(
        ((shapes, len(numbers)) for shapes, numbers in seen.items() if len(numbers) >= MIN_SESSIONS),
        key=lambda item: (-item[1], item[0]),
    )
    return [(shapes, count, examples[shapes]) for shapes, count in ranked[:MAX_SKILLS]]


def skill_name(shapes: tuple[str, ...]) -> str:
    """A skill name (also its folder): its shapes, slugged, at most 64 characters as OpenCode wants."""
    return re.sub(r"[^a-z0-9]+", "-", "-then-".join(shapes).lower())[:64].strip("-")


def render_skill(shapes: tuple[str, ...], count: int, example: list[str]) -> str:
    """SKILL.md of one candidate: frontmatter, the steps, one real example."""
    steps = "\n".join(f"{i}. `{shape}`" for i, shape in enumerate(shapes, 1))
    commands = "\n".join(" ".join(command.split())[:300] for command in example)
    return (
        f"---\nname: {skill_name(shapes)}\ndescription: Candidate skill from deepmem (review it before relying on it): "
        f"recurring workflow seen in {count} sessions, {' then '.join(shapes)}\nstatus: candidate\n---\n\n"
        f"## Steps\n{steps}\n\n## Example\n```bash\n{commands}\n```\n"
    )


def skills_dir(root: str | os.PathLike[str]) -> Path:
    """The project's OpenCode skill folder."""
    return Path(root) / ".opencode" / "skills"


def written_digests(root: str | os.PathLike[str]) -> dict[str, str]:
    """{skill name: digest of the SKILL.md deepmem last wrote}; empty when missing or unreadable."""
    try:
        value = orjson.loads((memory_dir(root) / WRITTEN).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def distill(root: Project) -> dict[str, Any]:
    """Write one SKILL.md per recurring sequence (skipping skills the user wrote or edited)."""
    written: list[str] = []
    kept: list[str] = []
    digests = written_digests(root)
    redactor = root.redactor
    for shapes, count, example in recurring_sequences(session_shapes(root)):
        name = skill_name(shapes)
        path = skills_dir(root) / name / "SKILL.md"
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            current = None
        if current is not None and xxhash.xxh3_64_hexdigest(current) != digests.get(name):
            kept.append(name)
            continue
        # Raw transcripts hold the exact commands: redacted before rendering clips them.
        text = write_shared(path, render_skill(shapes, count, [redactor.text(command) for command in example]), redactor)
        data = text.encode("utf-8")
        digests[name] = xxhash.xxh3_64_hexdigest(data)
        written.append(name)
    if written:
        write_shared_json(memory_dir(root) / WRITTEN, digests, redactor, orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    return {"skills": written, "kept": kept}


def describe_distill(summary: dict[str, Any]) -> str:
    """One line for the model."""
    skills, kept = summary["skills"], summary.get("kept", [])
    left = f"; left alone (edited or not written by deepmem): {', '.join(kept)}" if kept else ""
    if not skills:
        return f"distill: no new skill candidates (a workflow must recur in {MIN_SESSIONS} sessions){left}"
    return f"distill: {len(skills)} skill candidates in .opencode/skills/: {', '.join(skills)}{left}"
