"""`acomm config set` / `get`: one key changed in config.yaml, comments and every other byte
kept; a bad value is exit 3 and the file stays byte for byte; durations shown in unit form,
and a bare one in the file noted once."""

from __future__ import annotations

import pytest

from acomm_cli.cli import config

pytestmark = pytest.mark.cli

FILE = """\
# team settings: keep these notes
store:
  busy_timeout: 5s   # long builds hold the lock
  flush: batch

# limits:
#   max_active_messages: 100000
federation:
  sla: 10m
"""


@pytest.fixture
def cfg(store):
    path = store.parent / "config.yaml"
    path.write_text(FILE)
    return path


def test_set_changes_only_the_value_keeping_comments(cli, cfg):
    r = cli.ok("config", "set", "store.busy_timeout", "1h30m")
    assert r.stdout == "store.busy_timeout: 1h30m\n"
    assert cfg.read_text() == FILE.replace("busy_timeout: 5s ", "busy_timeout: 1h30m ")


def test_set_adds_a_key_to_its_section_and_a_section_at_the_end(cli, cfg):
    cli.ok("config", "set", "store.batch_interval", "PT2S")
    cli.ok("config", "set", "spark.master", "local[2]")
    cli.ok("config", "set", "federation.retry_jitter", "0.2")
    assert (
        cfg.read_text()
        == FILE.replace("  flush: batch\n", "  flush: batch\n  batch_interval: PT2S\n").replace(
            "  sla: 10m\n", "  sla: 10m\n  retry_jitter: 0.2\n"
        )
        + "spark:\n  master: local[2]\n"
    )
    got = cli.ok("config", "show", "--json").json()["settings"]
    values = {s["key"]: s["value"] for s in got}
    assert values["store.batch_interval"] == 2000
    assert values["spark.master"] == "local[2]"
    assert values["federation.retry_jitter"] == 0.2


def test_set_under_a_section_whose_settings_are_all_commented_out(cli, store):
    path = store.parent / "config.yaml"
    path.write_text("store:\n  # busy_timeout: 5s\nbridge:\n  read_ttl: 1d\n")
    cli.ok("config", "set", "store.busy_timeout", "10s")
    assert path.read_text() == (
        "store:\n  busy_timeout: 10s\n  # busy_timeout: 5s\nbridge:\n  read_ttl: 1d\n"
    )


def test_set_under_an_explicitly_empty_section(cli, store):
    path = store.parent / "config.yaml"
    path.write_text("store: ~   # none yet\n")
    cli.ok("config", "set", "store.busy_timeout", "10s")
    assert path.read_text() == "store:    # none yet\n  busy_timeout: 10s\n"


@pytest.mark.parametrize(
    ("value", "written"),
    [("yes", '"yes"'), ("123", '"123"'), ("local[*]", "local[*]"), ("spark://h:7077", None)],
)
def test_a_value_yaml_would_misread_is_quoted(cli, cfg, value, written):
    """YAML 1.1 reads a bare yes as true and 123 as a number: those are quoted."""
    cli.ok("config", "set", "spark.master", value)
    assert cfg.read_text().endswith(f"spark:\n  master: {written or value}\n")
    assert cli.ok("config", "get", "spark.master").stdout == f"{value}\n"


def test_set_makes_the_file_when_there_is_none(cli, store):
    path = store.parent / "config.yaml"
    path.unlink()
    cli.ok("config", "set", "store.busy_timeout", "2s")
    assert path.read_text() == "store:\n  busy_timeout: 2s\n"
    assert path.stat().st_mode & 0o777 == 0o600


def test_get_round_trips_in_unit_form(cli, cfg):
    cli.ok("config", "set", "federation.sla", "P1DT2H")
    assert cli.ok("config", "get", "federation.sla").stdout == "1d2h\n"
    doc = cli.ok("config", "get", "federation.sla", "--json").json()
    assert doc == {"key": "federation.sla", "value": 93_600_000, "source": f"file ({cfg})"}
    assert cli.ok("config", "get", "store.flush").stdout == "batch\n"
    assert cli.ok("config", "get", "bridge.inbox_dir").stdout == "\n"  # unset: nothing
    env = cli("config", "get", "store.busy_timeout", env={"ACOMM_BUSY_TIMEOUT": "750"})
    assert env.stdout == "750ms\n"  # the environment wins, as for every command


def test_get_reads_the_stores_own_setting(cli, store):
    cli.ok("init", "--admin", "root")
    before = (store.parent / "config.yaml").read_bytes()
    cli.ok("config", "set", "identity.auth", "token")
    doc = cli.ok("config", "get", "identity.auth", "--json").json()
    assert doc == {
        "key": "identity.auth",
        "value": "token",
        "source": "store (config set identity.auth)",
    }
    assert (store.parent / "config.yaml").read_bytes() == before  # the store, not the file


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("store.busy_timeout", "-5s", "store.busy_timeout"),
        ("store.busy_timeout", "1x", "store.busy_timeout"),
        ("store.busy_timeout", "P1M", "store.busy_timeout"),
        ("store.busy_timeout", "365001d", "store.busy_timeout"),
        ("federation.sla", "0s", "federation.sla"),
        ("store.flush", "sometimes", "store.flush"),
        ("federation.retry_jitter", "2", "federation.retry_jitter"),
        ("store.colour", "red", "key"),
        ("nonsense", "1", "key"),
    ],
)
def test_a_bad_value_is_exit_3_and_leaves_the_file_byte_identical(cli, cfg, key, value, field):
    before = cfg.read_bytes()
    r = cli("--json", "config", "set", "--", key, value)
    assert r.exit_code == 3, r.stderr
    assert r.error["field"] == field
    assert cfg.read_bytes() == before


def test_a_file_the_commands_would_refuse_is_not_changed(cli, cfg):
    cfg.write_text(FILE + "  pull_pages: lots\n")
    before = cfg.read_bytes()
    r = cli("--json", "config", "set", "store.busy_timeout", "1s")
    assert r.exit_code == 3 and r.error["field"] == "federation.pull_pages"
    assert cfg.read_bytes() == before


def test_a_section_on_one_line_is_left_to_the_hand(cli, cfg):
    cfg.write_text("store: {flush: batch}\n")
    before = cfg.read_bytes()
    r = cli("--json", "config", "set", "store.busy_timeout", "1s")
    assert r.exit_code == 3 and r.error["field"] == "store.busy_timeout"
    assert "edit the file by hand" in r.error["message"]
    assert cfg.read_bytes() == before


def test_show_prints_durations_in_unit_form(cli, cfg):
    lines = cli.ok("config", "show").stdout.splitlines()
    assert f"store.busy_timeout\t5s\tfile ({cfg})" in lines
    assert "store.batch_interval\t5s\tdefault" in lines
    assert "bridge.read_ttl\t1d\tdefault" in lines
    json_doc = cli.ok("config", "show", "--json").json()  # JSON keeps milliseconds
    assert {s["key"]: s["value"] for s in json_doc["settings"]}["store.busy_timeout"] == 5000


def test_a_bare_duration_in_the_file_is_noted_once_and_keeps_its_meaning(cli, cfg):
    cfg.write_text("store:\n  busy_timeout: 7000\n  batch_interval: 2s\n")
    r = cli("config", "get", "store.busy_timeout")
    assert r.stdout == "7s\n"  # milliseconds, as a bare number in the file always was
    notes = [line for line in r.stderr.splitlines() if "without a unit" in line]
    assert notes == [
        f"acomm: note: {cfg}: a duration without a unit: store.busy_timeout: 7000 "
        "is milliseconds, write 7s"
    ]
    again = cli("config", "get", "store.busy_timeout")  # the same process: said once
    assert "without a unit" not in again.stderr


def test_no_note_for_durations_with_units_or_under_quiet(cli, cfg):
    assert "without a unit" not in cli.ok("config", "show").stderr
    cfg.write_text("store:\n  busy_timeout: 7000\n")
    assert cli("-q", "config", "show").stderr == ""


def test_an_agents_bare_duration_is_noted_as_seconds(cli, cfg):
    cfg.write_text("agents:\n  reviewer:\n    run: 'true'\n    timeout: 600\n")
    r = cli("config", "show")
    assert r.exit_code == 0, r.stderr
    assert "agents.reviewer.timeout: 600 is seconds, write 10m" in r.stderr
    assert "agents.reviewer.timeout\t10m\t" in r.stdout  # the file's key, in unit form
    assert cli.ok("config", "get", "agents.reviewer.timeout").stdout == "10m\n"


def test_the_default_file_names_the_duration_forms():
    assert "1h30m" in config.DEFAULT_CONFIG and "PT1H30M" in config.DEFAULT_CONFIG
