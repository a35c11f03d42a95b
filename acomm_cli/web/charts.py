"""`acomm ui`'s charts as inline SVG, drawn on the server: traffic per minute, the unread
backlog per minute over the last hour, and the dead letters by reason. No script and no
style attribute (the page's Content-Security-Policy allows neither inline): presentation
attributes and classes only. Every label is escaped."""

from __future__ import annotations

from html import escape

from acomm_cli.engine.activity import Activity

WIDTH, HEIGHT, PAD = 640, 160, 28


def _frame(title: str, body: str, height: int = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _axis(top: int, label_max: str, label_left: str, label_right: str) -> str:
    base = HEIGHT - PAD
    return (
        f'<line class="axis" x1="{PAD}" y1="{base}" x2="{WIDTH - 4}" y2="{base}" />'
        f'<line class="axis" x1="{PAD}" y1="{top}" x2="{PAD}" y2="{base}" />'
        f'<text class="tick" x="{PAD - 4}" y="{top + 8}" text-anchor="end">'
        f"{escape(label_max)}</text>"
        f'<text class="tick" x="{PAD - 4}" y="{base}" text-anchor="end">0</text>'
        f'<text class="tick" x="{PAD}" y="{HEIGHT - 8}">{escape(label_left)}</text>'
        f'<text class="tick" x="{WIDTH - 4}" y="{HEIGHT - 8}" text-anchor="end">'
        f"{escape(label_right)}</text>"
    )


def bars(title: str, values: list[int]) -> str:
    """One bar per minute, oldest first."""
    top, base = 10, HEIGHT - PAD
    peak = max(values, default=0) or 1
    step = (WIDTH - PAD - 8) / max(len(values), 1)
    out = []
    for i, v in enumerate(values):
        h = (base - top) * v / peak
        out.append(
            f'<rect class="bar" x="{PAD + 2 + i * step:.1f}" y="{base - h:.1f}" '
            f'width="{max(step - 1, 1):.1f}" height="{h:.1f}"><title>{v}</title></rect>'
        )
    ago = f"{len(values)} min ago"
    return _frame(title, _axis(top, str(max(values, default=0)), ago, "now") + "".join(out))


def line(title: str, values: list[int]) -> str:
    """A filled line, one point per minute, oldest first."""
    top, base = 10, HEIGHT - PAD
    peak = max(values, default=0) or 1
    n = max(len(values) - 1, 1)
    span = WIDTH - PAD - 8
    points = [
        (PAD + 2 + span * i / n, base - (base - top) * v / peak) for i, v in enumerate(values)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    area = f"{PAD + 2},{base} {path} {PAD + 2 + span:.1f},{base}" if points else ""
    ago = f"{len(values)} min ago"
    return _frame(
        title,
        _axis(top, str(max(values, default=0)), ago, "now")
        + f'<polygon class="area" points="{area}" />'
        + f'<polyline class="line" points="{path}" />',
    )


def reasons(title: str, counts: dict[str, int]) -> str:
    """Horizontal bars, one per reason, the largest first."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if not rows:
        return _frame(
            title, f'<text class="empty" x="{PAD}" y="30">no dead letters</text>', height=48
        )
    peak = rows[0][1] or 1
    label_w, row_h = 170, 22
    height = row_h * len(rows) + 12
    out = []
    for i, (reason, n) in enumerate(rows):
        y = 6 + i * row_h
        w = (WIDTH - label_w - 60) * n / peak
        out.append(
            f'<text class="tick" x="{label_w - 6}" y="{y + 14}" text-anchor="end">'
            f"{escape(reason)}</text>"
            f'<rect class="bar dead" x="{label_w}" y="{y + 2}" width="{w:.1f}" '
            f'height="{row_h - 6}" />'
            f'<text class="tick" x="{label_w + w + 6:.1f}" y="{y + 14}">{n}</text>'
        )
    return _frame(title, "".join(out), height=height)


def all_charts(act: Activity) -> dict[str, str]:
    """The three charts, by name, as SVG text."""
    return {
        "traffic": bars("messages sent per minute, last hour", act.messages_per_minute),
        "backlog": line("unread backlog at each minute's end, last hour", act.unread_backlog),
        "reasons": reasons("dead letters by reason", act.dead_letters_by_reason),
    }
