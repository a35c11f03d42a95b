"""`acomm config show`: every setting's effective value and where it came from."""

from __future__ import annotations

import os
from pathlib import Path

from acomm_cli.cli import config
from acomm_cli.clock import format_duration
from acomm_cli.errors import StoreUnavailable, ValidationFailed
from acomm_cli.lite.records import replace  # the hot path's classes are records

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from dataclasses import dataclass, field
    from typing import Any
else:  # `config get` runs on the fast path: no dataclasses (with inspect) at its start-up
    from acomm_cli.lite.records import dataclass, field


@dataclass(frozen=True)
class ConfigEntry:
    key: str
    value: Any  # a duration in milliseconds (JSON keeps them)
    source: str
    duration: bool = False

    @property
    def shown(self) -> Any:
        """What people read: a duration in its unit form (`5s`, `1h30m`)."""
        if self.duration and isinstance(self.value, int) and not isinstance(self.value, bool):
            return format_duration(self.value)
        return self.value


def is_duration(key: str) -> bool:
    """A setting (config.KEYS) whose value is a duration."""
    return key in config.KEYS and config.KEYS[key][1] in config.DURATIONS


@dataclass(frozen=True)
class ConfigReport:
    settings: list[ConfigEntry]
    store: ConfigEntry
    config_file: ConfigEntry
    agents: list[ConfigEntry] = field(default_factory=list)  # one row per agent setting
    agents_doc: dict[str, Any] = field(default_factory=dict)  # agent -> settings, source


def _store_entry(settings: config.Settings) -> tuple[config.Settings, ConfigEntry]:
    if settings.store:
        return settings, ConfigEntry(
            "store", str(Path(settings.store).expanduser()), "flag (--store)"
        )
    if os.environ.get("ACOMM_STORE"):
        return settings, ConfigEntry(
            "store", str(Path(os.environ["ACOMM_STORE"]).expanduser()), "environment (ACOMM_STORE)"
        )
    try:
        path, _ = settings.store_path(create=False)
        return settings, ConfigEntry("store", str(path), "found (nearest .acomm/ upwards)")
    except StoreUnavailable:
        # No store yet: name where one would be made, and look for a config file there
        # without announcing a store that nobody is creating.
        default = Path.cwd() / config.STORE_DIR / config.STORE_FILE
        return (
            replace(settings, store=str(default), _cache={}),
            ConfigEntry("store", str(default), "default (not created yet)"),
        )


def _config_entry(settings: config.Settings, located: config.Settings) -> ConfigEntry:
    if settings.config:
        return ConfigEntry("config", str(Path(settings.config).expanduser()), "flag (--config)")
    if os.environ.get("ACOMM_CONFIG"):
        return ConfigEntry(
            "config",
            str(Path(os.environ["ACOMM_CONFIG"]).expanduser()),
            "environment (ACOMM_CONFIG)",
        )
    path = config.config_file(located)
    if path is None:
        return ConfigEntry("config", None, "none (no config.yaml beside the store)")
    return ConfigEntry("config", str(path), "beside the store")


def show_config(settings: config.Settings) -> ConfigReport:
    """Every setting's effective value and where it came from (flag > environment > file >
    default); a bad file is refused (exit 3 naming the key), as every command would."""
    located, store = _store_entry(settings)
    cfg = _config_entry(settings, located)
    values = _stores_own(store.value, config.load(located))
    specs, source = config.load_agents(located)
    if specs:
        _check_kinds(store.value, specs)
    docs = {name: spec.doc() for name, spec in specs.items()}
    return ConfigReport(
        settings=[ConfigEntry(key, *values[key], is_duration(key)) for key in config.KEYS],
        store=store,
        config_file=cfg,
        agents=[  # a duration under the file's own key (timeout, not timeout_ms)
            ConfigEntry(f"agents.{name}.{k.removesuffix('_ms')}", v, source, k.endswith("_ms"))
            for name, doc in docs.items()
            for k, v in doc.items()
        ],
        agents_doc={name: {**doc, "source": source} for name, doc in docs.items()},
    )


def get_value(settings: config.Settings, key: str) -> ConfigEntry:
    """`config get KEY`: one setting's effective value and where it came from, read as
    `config show` reads them all (a bad file is refused the same way); the store's own
    identity settings come from the store, agents' settings as `agents.NAME.FIELD`."""
    report = show_config(settings)
    for entry in (*report.settings, *report.agents, report.store, report.config_file):
        if entry.key == key:
            return entry
    raise ValidationFailed(
        f"config: unknown key {key!r} (`acomm config show` lists them)", field="key", value=key
    )


def _stores_own(path: str, values: dict[str, tuple[Any, str]]) -> dict[str, tuple[Any, str]]:
    """The two identity settings the store itself holds, as every command reads them: its
    identity.auth (`config set identity.auth` writes it there; on, it binds whatever a file
    or the environment says) and, when nothing configures identity.directory, the store's
    own default (strict, or open for a store made before the directory)."""
    if not os.path.exists(path):
        return values
    from acomm_cli.engine import credentials, directory, opening

    try:
        conn = opening.connect(path, create=False, read_only=True)
    except StoreUnavailable:
        return values
    try:
        out = dict(values)
        if credentials.mode(conn) == "token":
            out["identity.auth"] = ("token", "store (config set identity.auth)")
        if values["identity.directory"][1] == "default":
            out["identity.directory"] = (directory.mode(conn), "store (its own default)")
        return out
    finally:
        conn.close()


def _check_kinds(path: str, specs: dict[str, Any]) -> None:
    """A `run:` for an agent registered as a human is refused here as `dispatch` and `tick`
    refuse it (exit 3 naming the agent and its kind). Without a store (or one that cannot be
    opened now) nothing is registered to check against."""
    if not os.path.exists(path):
        return
    from acomm_cli.dispatch import dispatcher
    from acomm_cli.engine import opening

    try:
        conn = opening.connect(path, create=False, read_only=True)
    except StoreUnavailable:
        return
    try:
        dispatcher.check_kinds(conn, specs)
    finally:
        conn.close()
