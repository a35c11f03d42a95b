"""`acomm config show`: effective values and their sources; bad files refused naming the key."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from acomm_cli.cli.config import KEYS

pytestmark = pytest.mark.cli


def _settings(doc: dict) -> dict[str, tuple]:
    return {s["key"]: (s["value"], s["source"]) for s in doc["settings"]}


def test_defaults_for_every_key(cli, store, monkeypatch):
    monkeypatch.delenv("ACOMM_IDENTITY_DIRECTORY")  # the tests' own settings
    monkeypatch.delenv("ACOMM_GATEWAY_PULL")
    doc = cli.ok("config", "show", "--json").json()
    got = _settings(doc)
    assert list(got) == list(KEYS)
    for key, (default, _parse, _env) in KEYS.items():
        if key != "identity.directory":
            assert got[key] == (default, "default"), key
    # unconfigured: the store's own default, as every command reads it
    c = sqlite3.connect(store)
    (own,) = c.execute(
        "SELECT value FROM store_meta WHERE key = 'identity.directory_default'"
    ).fetchone()
    c.close()
    assert got["identity.directory"] == (own, "store (its own default)")
    assert doc["store"] == {"path": str(store), "source": "environment (ACOMM_STORE)"}
    # `acomm init` writes a commented file: it is used, and changes nothing
    assert doc["config_file"] == {
        "path": str(store.parent / "config.yaml"),
        "source": "beside the store",
    }


def test_the_stores_own_identity_settings_are_shown(cli, store, monkeypatch):
    """What every command obeys: the store's identity.auth (written by `config set`) and,
    unconfigured, the store's own directory default (open on a store older than it)."""
    monkeypatch.delenv("ACOMM_IDENTITY_DIRECTORY")
    cli.ok("init", "--admin", "root")
    cli.ok("config", "set", "identity.auth", "token")
    c = sqlite3.connect(store)
    c.execute("UPDATE store_meta SET value = 'open' WHERE key = 'identity.directory_default'")
    c.commit()
    c.close()
    got = _settings(cli.ok("config", "show", "--json").json())
    assert got["identity.auth"] == ("token", "store (config set identity.auth)")
    assert got["identity.directory"] == ("open", "store (its own default)")
    got = _settings(
        cli("config", "show", "--json", env={"ACOMM_IDENTITY_DIRECTORY": "strict"}).json()
    )
    assert got["identity.directory"] == ("strict", "environment (ACOMM_IDENTITY_DIRECTORY)")


def test_precedence_environment_over_file_over_default(cli, store):
    cfg = store.parent / "config.yaml"
    cfg.write_text(
        "store:\n  flush: manual\n  busy_timeout: 2s\nlimits:\n  max_store_bytes: 1GiB\n"
    )
    got = _settings(
        cli("config", "show", "--json", strict=True, env={"ACOMM_FLUSH": "immediate"}).json()
    )
    assert got["store.flush"] == ("immediate", "environment (ACOMM_FLUSH)")
    assert got["store.busy_timeout"] == (2000, f"file ({cfg})")
    assert got["limits.max_store_bytes"] == (1024**3, f"file ({cfg})")
    assert got["store.batch_messages"] == (100, "default")


def test_config_flag_over_environment_over_the_file_beside_the_store(cli, store, tmp_path):
    (store.parent / "config.yaml").write_text("store:\n  flush: manual\n")
    env_file = tmp_path / "env.yaml"
    env_file.write_text("store:\n  flush: batch\n  batch_messages: 7\n")
    flag_file = tmp_path / "flag.yaml"
    flag_file.write_text("store:\n  flush: immediate\n")
    doc = cli("config", "show", "--json", strict=True, env={"ACOMM_CONFIG": str(env_file)}).json()
    assert doc["config_file"] == {"path": str(env_file), "source": "environment (ACOMM_CONFIG)"}
    assert _settings(doc)["store.batch_messages"] == (7, f"file ({env_file})")
    doc = cli(
        "--config",
        str(flag_file),
        "config",
        "show",
        "--json",
        strict=True,
        env={"ACOMM_CONFIG": str(env_file)},
    ).json()
    assert doc["config_file"] == {"path": str(flag_file), "source": "flag (--config)"}
    assert _settings(doc)["store.flush"] == ("immediate", f"file ({flag_file})")
    assert _settings(doc)["store.batch_messages"] == (100, "default")
    # and the environment still beats whichever file is chosen
    doc = cli(
        "config",
        "show",
        "--json",
        "--config",
        str(flag_file),
        strict=True,
        env={"ACOMM_FLUSH": "manual"},
    ).json()
    assert _settings(doc)["store.flush"] == ("manual", "environment (ACOMM_FLUSH)")


def test_store_flag_over_environment(cli, store, tmp_path):
    other = tmp_path / "other" / "store.acomm"
    doc = cli.ok("--store", str(other), "config", "show", "--json").json()
    assert doc["store"] == {"path": str(other), "source": "flag (--store)"}
    assert doc["config_file"]["path"] is None
    assert not other.exists()


@pytest.mark.parametrize(
    "text, key",
    [
        ("store:\n  flsuh: manual\n", "store.flsuh"),
        ("limits:\n  max_active_messages: 10\n  bogus: 1\n", "limits.bogus"),
        ("stroe: 1\n", "stroe"),
    ],
)
def test_an_unknown_key_is_exit_3_naming_it(cli, store, text, key):
    (store.parent / "config.yaml").write_text(text)
    r = cli("config", "show", "--json")
    assert r.exit_code == 3
    assert r.error["code"] == "validation_failed" and r.error["field"] == key
    assert key in r.error["message"]
    plain = cli("config", "show")
    assert plain.exit_code == 3 and key in plain.stderr
    # every other command refuses the file the same way
    assert cli("stats").exit_code == 3


@pytest.mark.parametrize(
    "text, key",
    [
        ("store:\n  flush: sometimes\n", "store.flush"),
        ("store:\n  busy_timeout: forever\n", "store.busy_timeout"),
        ("limits:\n  max_store_bytes: lots\n", "limits.max_store_bytes"),
        ("store:\n  busy_timeout: [1]\n", "store.busy_timeout"),
        ("store:\n  busy_timeout: -5\n", "store.busy_timeout"),
        ("store:\n  batch_interval: -1\n", "store.batch_interval"),
        ("store:\n  batch_messages: 1.7\n", "store.batch_messages"),
        ("limits:\n  max_active_messages: 1.7\n", "limits.max_active_messages"),
        ("limits:\n  max_active_messages: true\n", "limits.max_active_messages"),
        ("limits:\n  max_active_messages: {a: 1}\n", "limits.max_active_messages"),
        ("limits:\n  max_store_bytes: 50MiB\n", "limits.max_store_bytes"),
        ("limits:\n  max_store_bytes: [1]\n", "limits.max_store_bytes"),
        ("bridge:\n  read_ttl: true\n", "bridge.read_ttl"),
        ("bridge:\n  read_ttl: 0s\n", "bridge.read_ttl"),
        ("bridge:\n  inbox_dir: 5\n", "bridge.inbox_dir"),
        ("spark:\n  master: ''\n", "spark.master"),
    ],
)
def test_a_bad_value_is_exit_3_naming_the_key(cli, store, text, key):
    (store.parent / "config.yaml").write_text(text)
    r = cli("config", "show", "--json")
    assert r.exit_code == 3 and r.error["field"] == key, r.stderr
    assert r.error["code"] == "validation_failed" and key in r.error["message"]


def test_empty_sections_and_millisecond_numbers_are_accepted(cli, store):
    (store.parent / "config.yaml").write_text(
        "store:\nlimits:\n  max_store_bytes: 0\nbridge:\n  read_ttl: 1500\n"
    )
    got = _settings(
        cli("config", "show", "--json", strict=True, env={"ACOMM_BUSY_TIMEOUT": "2500"}).json()
    )
    assert got["store.busy_timeout"][0] == 2500  # milliseconds, as in the file
    assert got["limits.max_store_bytes"][0] == 0  # no limit
    assert got["bridge.read_ttl"][0] == 1500


def test_a_bad_environment_value_is_exit_3(cli, store):
    r = cli("config", "show", "--json", env={"ACOMM_MAX_ACTIVE_MESSAGES": "many"})
    assert r.exit_code == 3 and r.error["field"] == "limits.max_active_messages"


def test_a_missing_config_file_is_exit_3(cli, store, tmp_path):
    r = cli("--config", str(tmp_path / "nope.yaml"), "config", "show", "--json")
    assert r.exit_code == 3 and r.error["field"] == "config"


def test_no_store_anywhere_creates_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ACOMM_STORE")
    here = tmp_path / "empty"
    here.mkdir()
    monkeypatch.chdir(here)
    r = cli("config", "show", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    doc = r.json()
    assert doc["store"] == {
        "path": str(here / ".acomm" / "store.acomm"),
        "source": "default (not created yet)",
    }
    assert not (here / ".acomm").exists()


def test_a_store_found_upwards(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ACOMM_STORE")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    cli.ok("init")
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    doc = cli.ok("config", "show", "--json").json()
    assert doc["store"]["path"] == str(project / ".acomm" / "store.acomm")
    assert doc["store"]["source"].startswith("found")
    assert Path(doc["config_file"]["path"]) == project / ".acomm" / "config.yaml"


def test_human_output_lists_store_config_and_every_key(cli, store):
    lines = cli.ok("config", "show").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["store", "config", *KEYS]
    assert "store.flush\tbatch\tdefault" in lines
