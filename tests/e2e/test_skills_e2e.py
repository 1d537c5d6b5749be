"""/distill's skill candidates are found by the real `opencode` binary in the project's skill folder."""

from __future__ import annotations

import json

from deepmem.checkpoints.api import compact
from deepmem.checkpoints.distill import distill
from deepmem.project.folder import Project
from tests.test_dream import session


def test_opencode_lists_a_distilled_skill_candidate(opencode_project) -> None:
    """Three sessions with the same edit-run-diff loop give a SKILL.md that OpenCode offers the model."""
    project = opencode_project([{"text": "Nothing to do."}])
    loop = ("sed -i 's/a/b/' src/x.py", "python3 reproduce.py", "git diff")
    folder = Project.load(project.root)
    for name in ("ses_a", "ses_b", "ses_c"):
        compact(folder, name, session(commands=loop))
    written = distill(folder)["skills"]
    assert written == ["sed-i-then-python-script-then-git-diff"]
    run = project.run("hello")
    assert run.ok, run.stderr[-3000:]
    request = json.dumps(project.llm.agent_requests()[0].body)
    assert "sed-i-then-python-script-then-git-diff" in request
    assert "Candidate skill from deepmem" in request
