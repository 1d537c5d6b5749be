"""Runs the plugin's own unit tests (`node --test tests/plugin/`) as part of the pytest run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from .conftest import REPO


def test_plugin_unit_tests_pass_under_node() -> None:
    """The plugin against the real engine under Node; the node runner's report shows on failure."""
    node = shutil.which("node")
    assert node, "node is needed to test the OpenCode plugin"
    done = subprocess.run(
        [node, "--test", "--test-concurrency=1", "tests/plugin/"],
        cwd=REPO,
        env={**os.environ, "DEEPMEM_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    assert "# fail 0" in report
