"""`acomm config set`: one setting changed in the config file, the rest of it left as it was.

The file is edited as text: PyYAML's composer gives the position of the setting's value (or
of its section, or of the end of the file), only that span is replaced or one line is
inserted, and the result is parsed again and accepted only if it holds exactly the old
settings with the one change, each valid as a command would read it. Comments, blank lines,
key order and unrelated keys stay byte for byte; a file that cannot be changed that way is
refused and left unchanged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from acomm_cli.cli import config
from acomm_cli.errors import ValidationFailed


def set_value(settings: config.Settings, key: str, value: str) -> tuple[str, Any]:
    """Check VALUE as the key's own parser does, then write it into the config file in use
    (the store's `config.yaml` unless --config / $ACOMM_CONFIG name another), creating it if
    needed. Returns (the file, the parsed value). Any refusal leaves the file as it was."""
    if key not in config.KEYS:
        raise ValidationFailed(
            f"config: unknown key {key!r} (`acomm config show` lists them)", field="key", value=key
        )
    parse = config.KEYS[key][1]
    parsed = parse(value, key)
    path = config.config_file(settings)
    if path is None:
        store, _ = settings.store_path(create=False)
        path = str(Path(store).parent / config.CONFIG_FILE)
    import yaml

    text = _read(path)
    old = config.flat_settings(text, path, agents=True) or {}
    scalar = _scalar(value, key, parsed)
    new_text = _edited(text, key, scalar, path)
    _check(new_text, path, {**old, key: yaml.safe_load(scalar)}, key)
    _write(path, new_text)
    settings._cache.pop("raw", None)
    settings._cache.pop("values", None)
    return path, parsed


def _read(path: str) -> str:
    return config.read_text(path) if os.path.exists(path) else ""


def _scalar(value: str, key: str, parsed: Any) -> str:
    """VALUE as YAML: as typed when YAML reads it back to the same setting (`30s`, `5000`,
    `0.2`, `~/inbox`), else double-quoted (`local[*]` stays plain; `yes`, `''`, `a # b` do
    not)."""
    import yaml

    if value and value == value.strip() and "\n" not in value and "#" not in value:
        try:
            loaded = yaml.safe_load(value)
            if not isinstance(loaded, dict | list) and config.KEYS[key][1](loaded, key) == parsed:
                return value
        except (yaml.YAMLError, ValidationFailed, TypeError, ValueError, AttributeError):
            pass
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted one


def _edited(text: str, key: str, scalar: str, path: str) -> str:
    """TEXT with KEY's value replaced by SCALAR, or the key added to its section (or the
    section to the end of the file)."""
    import yaml

    section, _, name = key.partition(".")
    root = yaml.compose(text) if text.strip() else None
    pairs = root.value if isinstance(root, yaml.MappingNode) else []
    found = [v for k, v in pairs if isinstance(k, yaml.ScalarNode) and k.value == section]
    if not found:  # a new section at the end (a file of only comments keeps them all)
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}{section}:\n  {name}: {scalar}\n"
    body = found[-1]
    if isinstance(body, yaml.ScalarNode) and body.tag.endswith(":null"):  # `store:` alone
        head, tail = text[: body.start_mark.index], text[body.end_mark.index :]  # `~`, `null`
        text = (head.rstrip(" \t") if tail[:1] in ("", "\r", "\n") else head) + tail
        end = text.find("\n", len(head.rstrip(" \t")))
        end = len(text) if end < 0 else end
        rest = text[end:] or "\n"
        return f"{text[:end]}\n  {name}: {scalar}{rest}"
    if not isinstance(body, yaml.MappingNode) or body.flow_style:
        raise _cannot(key, path, f"its section is written as {_shape(body)}")
    for k, v in body.value:
        if isinstance(k, yaml.ScalarNode) and k.value == name:
            return text[: v.start_mark.index] + scalar + text[v.end_mark.index :]
    last = body.value[-1][1]
    at = last.end_mark.index
    if at == 0 or text[at - 1] != "\n":
        nl = text.find("\n", at)
        at = len(text) if nl < 0 else nl + 1
    indent = " " * body.value[0][0].start_mark.column
    sep = "" if text[:at].endswith("\n") else "\n"
    return f"{text[:at]}{sep}{indent}{name}: {scalar}\n{text[at:]}"


def _shape(node: Any) -> str:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return "a one-line mapping"
    return "a list" if isinstance(node, yaml.SequenceNode) else "a single value"


def _cannot(key: str, path: str, why: str) -> ValidationFailed:
    return ValidationFailed(
        f"config: cannot change {key} in {path} in place ({why}); edit the file by hand",
        field=key,
        value=path,
    )


def _check(new_text: str, path: str, expected: dict[str, Any], key: str) -> None:
    """The edited text holds exactly the expected settings, each valid as loading reads it."""
    try:
        got = config.flat_settings(new_text, path, agents=True) or {}
    except ValidationFailed:
        raise _cannot(key, path, "the edit would not read back as YAML") from None
    if got != expected:
        raise _cannot(key, path, "the edit would change more than that key")
    for k, v in got.items():
        if k == config.AGENTS:
            continue
        try:
            config.KEYS[k][1](v, k)
        except (TypeError, ValueError, AttributeError):
            raise ValidationFailed(
                f"{k}: {v!r} is not a valid value (file ({path}))", field=k, value=str(v)
            ) from None
    if got.get(config.AGENTS):
        from acomm_cli.dispatch.agents import parse_agents

        parse_agents(got[config.AGENTS], Path(path).parent)


def _write(path: str, text: str) -> None:
    """Replace the file in one rename, keeping its permissions (a new one is owner-only)."""
    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o600
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
