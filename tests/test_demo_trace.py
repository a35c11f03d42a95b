"""examples/traced.sh, part of `make demo`: one traced event from a mention to the agent's
reply, run as a user runs it (bash, acomm on PATH); the script checks its own trace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import VENV_BIN

pytestmark = pytest.mark.process


def test_the_demo_shows_a_mention_traced_to_the_agents_reply(tmp_path):
    script = Path(__file__).parent.parent / "examples" / "traced.sh"
    env = {
        **{k: v for k, v in os.environ.items() if k != "ACOMM_IDENTITY_DIRECTORY"},  # strict
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),
        "TRACEPARENT": "00-" + "a" * 32 + "-" + "b" * 16 + "-01",  # the script's own id wins
    }
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "trace demo-trace-1: 3 hops" in p.stdout
    assert "[comment.replied helper -> alice (human), trace demo-trace-1]" in p.stdout
    assert list(tmp_path.iterdir()) == []  # its temporary store is gone
