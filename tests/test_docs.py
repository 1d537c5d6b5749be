"""The documentation's shape: short front pages, links that resolve, and names that exist.

README.md stays a front page (at most 150 lines, `deepmem init` on its first screen) and
bench/README.md a short guide (at most 80 lines). Every relative link, every repository
path written in code, and every `python -m` module named in the docs must exist, so a
file moved or a command renamed fails here instead of leaving the docs behind.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCH_README = ROOT / "bench" / "README.md"
DOC_PAGES = ("how-it-works", "configuration", "opencode", "memory", "security", "architecture", "benchmarks")
DOCS = sorted([README, BENCH_README, ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")])

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
REPO_PATH = re.compile(r"(?<![\w./~$-])((?:deepmem|compressors|extractors|tests|fixtures|bench|docs|\.ci)/[\w./*-]*)")
MODULE = re.compile(r"python3? -m ([\w.]+)")


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def code_of(path: Path) -> str:
    """Every inline code span and fenced block of a page, joined."""
    return "\n".join(CODE.findall(path.read_text(encoding="utf-8")))


def test_readme_is_a_front_page() -> None:
    text = lines(README)
    assert len(text) <= 150, f"README.md has {len(text)} lines (at most 150)"
    assert any("deepmem init" in line for line in text[:40]), "`deepmem init` must be within README's first 40 lines"
    assert any("pip install" in line for line in text[:40]), "installing with pip must be within README's first 40 lines"


def test_bench_readme_is_short() -> None:
    assert len(lines(BENCH_README)) <= 80, f"bench/README.md has {len(lines(BENCH_README))} lines (at most 80)"


def test_every_doc_page_exists_and_the_readme_links_it() -> None:
    readme = README.read_text(encoding="utf-8")
    for name in DOC_PAGES:
        assert (ROOT / "docs" / f"{name}.md").is_file(), f"docs/{name}.md is missing"
        assert f"(docs/{name}.md)" in readme, f"README.md does not link docs/{name}.md"
    assert "(CHANGELOG.md)" in readme


def test_ci_runs_the_readmes_test_command() -> None:
    """README promises that `bash .ci/run` ends with the test run it names."""
    readme = README.read_text(encoding="utf-8")
    ci = [line for line in lines(ROOT / ".ci" / "run") if line.strip() and not line.startswith("#")]
    assert "bash .ci/run" in readme
    assert ci[-1] == ".venv/bin/python -m pytest"
    assert "`.venv/bin/python -m pytest`" in readme


@pytest.mark.parametrize("page", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        resolved = (page.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: link {target} resolves to nothing"


@pytest.mark.parametrize("page", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_paths_in_code_exist(page: Path) -> None:
    for path in REPO_PATH.findall(code_of(page)):
        path = path.rstrip(".")
        if "*" in path:
            assert any(ROOT.glob(path)), f"{page.name}: `{path}` matches no file"
        else:
            assert (ROOT / path).exists(), f"{page.name}: `{path}` does not exist"


@pytest.mark.parametrize("page", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_modules_named_exist(page: Path) -> None:
    for module in MODULE.findall(page.read_text(encoding="utf-8")):
        assert importlib.util.find_spec(module) is not None, f"{page.name}: `python -m {module}` names no module"


def test_the_checks_catch_what_they_guard(tmp_path: Path) -> None:
    """The patterns find a broken link, a missing path and a missing module in a sample page."""
    page = "[x](docs/nowhere.md) `bench/nothing.py` and `python -m bench.nothing`"
    assert LINK.findall(page) == ["docs/nowhere.md"]
    assert REPO_PATH.findall("\n".join(CODE.findall(page))) == ["bench/nothing.py"]
    assert MODULE.findall(page) == ["bench.nothing"]
    assert importlib.util.find_spec("bench.nothing") is None
    assert REPO_PATH.findall("`~/.local/share/deepmem/key` `.deep-memory/ccr/`") == []
