"""content_preview: the body's first N characters, cut back to a grapheme boundary so that a
preview never ends in half of an accented letter, an emoji sequence or a flag; and the event
fields' checks that need no store."""

from __future__ import annotations

import pytest

from acomm_cli.engine.events import check, preview
from acomm_cli.errors import ValidationFailed

pytestmark = pytest.mark.unit

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl: one grapheme
N = 280


def test_a_short_body_is_its_own_preview():
    assert preview("hello", N) == "hello"
    assert preview("x" * N, N) == "x" * N


def test_a_long_body_is_cut_at_n():
    assert preview("x" * (N + 50), N) == "x" * N


def test_a_combining_accent_straddling_n_goes_with_its_letter():
    body = "a" * (N - 1) + "e\u0301" + "tail"  # e + combining acute: N-th and N+1-th
    assert preview(body, N) == "a" * (N - 1)


def test_a_zwj_emoji_sequence_straddling_n_is_left_out_whole():
    for offset in range(1, len(FAMILY)):
        body = "a" * (N - offset) + FAMILY + "tail"
        assert preview(body, N) == "a" * (N - offset), offset


def test_an_emoji_sequence_ending_at_n_is_kept_whole():
    body = "a" * (N - len(FAMILY)) + FAMILY + "tail"
    assert preview(body, N) == "a" * (N - len(FAMILY)) + FAMILY


def test_a_skin_tone_modifier_stays_with_its_emoji():
    body = "a" * (N - 1) + "\U0001f44d\U0001f3fd" + "tail"  # thumbs up, medium skin tone
    assert preview(body, N) == "a" * (N - 1)


def test_a_flag_is_never_split_into_its_regional_indicators():
    flag = "\U0001f1ef\U0001f1f5"  # JP
    assert preview("a" * (N - 1) + flag + "x", N) == "a" * (N - 1)
    assert preview("a" * (N - 2) + flag + "x", N) == "a" * (N - 2) + flag
    two = "a" * (N - 3) + flag + flag  # the cut falls inside the second flag
    assert preview(two, N) == "a" * (N - 3) + flag


def test_a_variation_selector_and_crlf_stay_whole():
    assert preview("a" * (N - 1) + "\u2764\ufe0f!", N) == "a" * (N - 1)
    assert preview("a" * (N - 1) + "\r\n", N) == "a" * (N - 1)


def test_cjk_text_is_cut_at_n_characters():
    body = "中" * 400
    assert preview(body, N) == "中" * N


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "event"),
        ({"event_type": "comment.created", "preview": "x"}, "preview"),
        ({"event_type": "comment.created", "content_preview": "x"}, "content_preview"),
        ({"event_type": "comment.created", "depth": True}, "depth"),
        ({"event_type": "comment.created", "thread_id": 1.5}, "thread_id"),
        ({"event_type": "comment.created", "occurred_at": 9e99}, "occurred_at"),
        ({"event_type": "comment.created", "actor": 7}, "actor"),
        ({"event_type": "comment.created", "language": "e"}, "language"),
        ({"event_type": "comment.created", "language": "en-"}, "language"),
    ],
)
def test_the_checks_name_the_field(raw, field):
    with pytest.raises(ValidationFailed) as exc:
        check(raw, "alice", 0)
    assert exc.value.field == field
    assert exc.value.exit_status == 3


def test_the_defaults_and_forms_accepted():
    ev = check(
        {"event_type": "comment.created", "depth": "3", "language": "zh-Hans", "thread_id": 101},
        "alice",
        1_000,
    )
    assert (ev.actor, ev.occurred_at, ev.depth, ev.language, ev.thread_id) == (
        "alice",
        1_000,
        3,
        "zh-hans",
        "101",
    )
    assert (
        check({"event_type": "like.created", "occurred_at": "500"}, "a", 1_000).occurred_at == 500
    )
