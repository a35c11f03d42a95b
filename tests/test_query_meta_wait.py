"""`query --wait --meta`: the asker, a separate process, prints the first answer whose
metadata matches, while an earlier answer that does not stays unread."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import ACOMM, query, run, wait_for

pytestmark = pytest.mark.process


def test_query_wait_prints_the_first_answer_meeting_its_meta_filter(team):
    asker = subprocess.Popen(
        [ACOMM, "query", "team", "deploy?", "--as", "alice", "--wait", "20", "--meta",
         "verdict=final"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: query(team, "SELECT count(*) FROM messages WHERE type = 'query'")[0][0])
        [(corr,)] = query(team, "SELECT correlation_id FROM messages WHERE type = 'query'")
        for verdict in ("draft", "final"):
            r = run(
                "send", "team", f"{verdict} answer", "--type", "response", "--correlation-id",
                corr, "--meta", f"verdict={verdict}", "--as", "bob",
            )  # fmt: skip
            assert r.returncode == 0, r.stderr
        out, err = asker.communicate(timeout=20)
    finally:
        if asker.poll() is None:
            asker.kill()
            asker.wait()
    assert asker.returncode == 0, err
    assert out == "final answer\n"
    left = json.loads(run("receive", "--as", "alice", "--json").stdout)["messages"]
    assert [m["content"] for m in left] == ["draft answer"]
