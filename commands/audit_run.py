"""What `acomm audit` does, without typer: `commands/audit.py` declares it (options, help) and runs
this; the fast path (`acomm_cli.cli.main`) runs it directly."""

from __future__ import annotations

from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import render_analytics


def audit(
    inv: Invocation,
    exports: list[str],
    master: str | None,
    out: str | None,
    executor_wait: str,
    html: bool,
    conf: list[str] | None,
) -> None:
    from acomm_cli import clock
    from acomm_cli.analytics import audit as rules
    from acomm_cli.analytics import installed

    installed.require("audit")
    extra = {}
    for item in conf or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--conf {item!r}: use KEY=VALUE", field="conf")
        extra[key.strip()] = value
    chosen = master or inv.settings.value("spark.master")
    wait_s = clock.parse_duration(executor_wait, "executor_wait") / 1000
    result = rules.run(exports, out=out, master=chosen, conf=extra, executor_wait=wait_s)
    if html:
        render_analytics.audit_report(inv.output(), result)
    else:
        render_analytics.audit_summary(inv.output(), result)
    rules.require_clean(result)
