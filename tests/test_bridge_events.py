"""The default trigger rules' `write notification` in the mailbox bridge: an event that
writes no notification to a recipient (a self-action, an event type whose line says no)
leaves no inbox file for them; the message is still delivered and read by `receive`."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.cli


@pytest.fixture
def inbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_channel) -> Path:
    d = tmp_path / "inbox"
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(d))
    make_channel("team", "alice", "bob", "carol")
    return d


def send(cli, *args: str) -> int:
    return int(cli.ok("send", "team", "x", "--as", "alice", *args).stdout)


def mirrored(inbox: Path, mid: int) -> set[str]:
    return {p.parent.name for p in inbox.glob(f"*/{mid}.json")}


def test_an_event_that_notifies_is_mirrored_to_every_recipient(cli, inbox: Path):
    mid = send(cli, "--event-type", "mention.created", "--actor", "alice", "--target", "bob")
    assert mirrored(inbox, mid) == {"bob", "carol"}


def test_a_self_action_is_mirrored_to_nobody(cli, inbox: Path):
    mid = send(cli, "--event-type", "mention.created", "--actor", "bob", "--target", "bob")
    assert mirrored(inbox, mid) == set()
    cli.ok("bridge", "sync")  # a full sync does not write it either
    assert mirrored(inbox, mid) == set()
    got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
    assert [m["id"] for m in got] == [mid]  # still delivered


def test_the_actor_gets_no_notification_of_its_own_action(cli, inbox: Path):
    mid = send(cli, "--event-type", "comment.replied", "--actor", "carol", "--target", "bob")
    assert mirrored(inbox, mid) == {"bob"}


def test_an_event_type_that_writes_no_notification_is_not_mirrored(cli, inbox: Path):
    mid = send(cli, "--event-type", "thread.created", "--thread", "t1")
    cli.ok("bridge", "sync")
    assert mirrored(inbox, mid) == set()
    plain = send(cli)  # a message without an event: mirrored as before
    assert mirrored(inbox, plain) == {"bob", "carol"}
