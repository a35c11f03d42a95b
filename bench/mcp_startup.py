"""`acomm mcp` start-up: from spawning the stdio server to its first `tools/list` answer.

    .venv/bin/python bench/mcp_startup.py              # rewrites its section of docs/BENCHMARKS.md
    .venv/bin/python bench/mcp_startup.py --no-write   # prints only
    .venv/bin/python bench/mcp_startup.py --runs 15    # more runs (default 9)

Each run spawns `acomm mcp --as bench` on a small store, as an MCP client does, writes
`initialize`, `notifications/initialized` and `tools/list` on its stdin and times the answers.
The server's CPU time (user + system, from /proc) is read when the `tools/list` answer
arrives: on a machine shared with other work the wall time grows, the CPU time much less.
Then where the time goes, each part in a fresh interpreter: Python itself, the command line
up to the command body (`--print-config`, which loads no SDK), the import of the server and
the SDK, and that import by package (`python -X importtime`, self times summed). Two
baselines in the same run: `python -c 'import mcp'`, and a bare SDK server with one tool
timed to its first `tools/list` answer as acomm's is (what any server on this SDK costs).

Target: the first `tools/list` answer in under 1.5 s. This script owns the section
"## MCP start-up" of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import DOC, duration, machine, median, spread, write_section

SECTION = "## MCP start-up"
ACOMM = str(Path(sys.executable).parent / "acomm")
PYTHON = sys.executable
TARGET_S = 1.5
IMPORT = "import acomm_cli.mcpserver.server, acomm_cli.mcpserver.toolset"
TICK = os.sysconf("SC_CLK_TCK")
# the baseline: the SDK's own server, one tool, over stdio
BARE = """
from mcp.server import MCPServer
server = MCPServer("bare")
@server.tool()
def echo(text: str) -> str:
    return text
server.run()
"""

# packages only the SDK's HTTP transports, its client and its OAuth support use: the SDK's
# server modules import them whatever the transport
HTTP = (
    "starlette",
    "uvicorn",
    "sse_starlette",
    "httpx2",
    "httpx",
    "httpcore",
    "h11",
    "cryptography",
    "ssl",
    "_ssl",
    "jwt",
    "multipart",
    "python_multipart",
    "email",
    "http",
    "idna",
    "certifi",
    "opentelemetry",
)
HTTP_MCP = (
    "mcp.client",
    "mcp.server.auth",
    "mcp.server.sse",
    "mcp.server.streamable_http",
    "mcp.server._streamable_http_modern",
    "mcp.server._otel",
    "mcp.server.transport_security",
)
GROUPS = (
    "mcp_types (the protocol's pydantic models)",
    "mcp server core",
    "pydantic",
    "anyio and asyncio",
    "HTTP transports, client, auth (unused on stdio)",
    "rich (the SDK's log handler)",
    "acomm_cli",
    "typer",
    "the rest (standard library...)",
)


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def one_run(
    env: dict[str, str], stderr: int | None = None, argv: list[str] | None = None
) -> tuple[float, float, float]:
    """Seconds to the initialize answer, to the tools/list answer, and the server's CPU
    seconds by then (of `acomm mcp`, or of the server `argv` starts)."""
    t0 = perf_counter()
    p = subprocess.Popen(
        argv or [ACOMM, "mcp", "--as", "bench"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=env,
    )
    assert p.stdin is not None and p.stdout is not None

    def send(doc: dict[str, object]) -> None:
        assert p.stdin is not None
        p.stdin.write(json.dumps(doc) + "\n")
        p.stdin.flush()

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
        )
        first = json.loads(p.stdout.readline())
        t1 = perf_counter()
        assert "result" in first, first
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = json.loads(p.stdout.readline())
        t2 = perf_counter()
        cpu = _cpu_s(p.pid)
        assert listed["result"]["tools"], listed
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    return t1 - t0, t2 - t0, cpu


def wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return perf_counter() - t0


def import_seconds(env: dict[str, str]) -> float:
    code = f"from time import perf_counter as c; t = c(); {IMPORT}; print(c() - t)"
    out = subprocess.run(
        [PYTHON, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    return float(out)


def _group(name: str) -> str:
    top = name.split(".")[0]
    if top in HTTP or name.startswith(HTTP_MCP):
        return GROUPS[4]
    if top == "mcp_types":
        return GROUPS[0]
    if top == "mcp":
        return GROUPS[1]
    if top in ("pydantic", "pydantic_core", "annotated_types", "typing_inspection"):
        return GROUPS[2]
    if top in ("anyio", "asyncio", "_asyncio", "sniffio", "selectors", "concurrent"):
        return GROUPS[3]
    if top in ("rich", "pygments", "markdown_it", "mdurl"):
        return GROUPS[5]
    if top == "acomm_cli":
        return GROUPS[6]
    if top in ("typer", "click", "shellingham", "annotated_doc"):
        return GROUPS[7]
    return GROUPS[8]


def import_breakdown(env: dict[str, str]) -> Counter[str]:
    """Self import time (s) by group, of one server up to its first tools/list answer."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as fh:
        one_run({**env, "PYTHONPROFILEIMPORTTIME": "1"}, stderr=fh.fileno())
        fh.seek(0)
        err = fh.read()
    out: Counter[str] = Counter()
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.split(":", 1)[1].split("|")
        out[_group(name.strip())] += int(self_us) / 1e6
    return out


def measure(runs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="acomm-mcp-bench-") as work:
        env = {**os.environ, "ACOMM_STORE": str(Path(work) / "store.acomm")}
        env.pop("PYTHONPROFILEIMPORTTIME", None)
        subprocess.run([ACOMM, "init"], env=env, check=True, stdout=subprocess.DEVNULL)
        one_run(env)  # warm the page cache and the bytecode
        samples = [one_run(env) for _ in range(runs)]
        python = [wall([PYTHON, "-c", "pass"], env) for _ in range(runs)]
        cli = [
            wall([ACOMM, "mcp", "--as", "bench", "--print-config", "json"], env)
            for _ in range(runs)
        ]
        imports = [import_seconds(env) for _ in range(runs)]
        import_mcp = [wall([PYTHON, "-c", "import mcp"], env) for _ in range(runs)]
        bare = [one_run(env, argv=[PYTHON, "-c", BARE]) for _ in range(runs)]
        tools = _tool_count(env)
        breakdown = import_breakdown(env)
    return {
        "initialize": [s[0] for s in samples],
        "tools_list": [s[1] for s in samples],
        "cpu": [s[2] for s in samples],
        "python": python,
        "cli": cli,
        "imports": imports,
        "import_mcp": import_mcp,
        "bare_tools_list": [b[1] for b in bare],
        "bare_cpu": [b[2] for b in bare],
        "tools": tools,
        "breakdown": breakdown,
    }


def _tool_count(env: dict[str, str]) -> int:
    code = (
        "from acomm_cli.mcpserver import toolset; "
        "print(len(toolset.tools(None, None)))"  # only declares them
    )
    out = subprocess.run([PYTHON, "-c", code], env=env, check=True, capture_output=True, text=True)
    return int(out.stdout)


def report(m: dict[str, object], runs: int, info: dict[str, str]) -> tuple[str, str]:
    tl: list[float] = m["tools_list"]  # type: ignore[assignment]
    cpu: list[float] = m["cpu"]  # type: ignore[assignment]
    verdict = "PASS" if median(tl) < TARGET_S else "FAIL"
    bare: list[float] = m["bare_tools_list"]  # type: ignore[assignment]
    rows = [
        (
            f"first tools/list answer (wall, {m['tools']} tools)",
            spread(tl),
            f"< {duration(TARGET_S)}: {verdict}",
        ),
        ("server CPU time by then (user + system)", spread(cpu), ""),
        (
            "baseline: a bare SDK server with one tool, first tools/list answer (wall)",
            spread(bare),
            f"acomm: {median(tl) - median(bare):+.3f} s",
        ),
        (
            "baseline: its CPU time by then",
            spread(m["bare_cpu"]),  # type: ignore[arg-type]
            f"acomm: {median(cpu) - median(m['bare_cpu']):+.3f} s",  # type: ignore[arg-type]
        ),
        ("baseline: `python -c 'import mcp'`", spread(m["import_mcp"]), ""),  # type: ignore[arg-type]
        ("initialize answer (wall)", spread(m["initialize"]), ""),  # type: ignore[arg-type]
        ("`python -c pass`", spread(m["python"]), ""),  # type: ignore[arg-type]
        ("command line to the body (`--print-config json`)", spread(m["cli"]), ""),  # type: ignore[arg-type]
        ("import of the server and the SDK", spread(m["imports"]), ""),  # type: ignore[arg-type]
    ]
    breakdown: Counter[str] = m["breakdown"]  # type: ignore[assignment]
    total = sum(breakdown.values())
    parts = [(g, breakdown[g]) for g in GROUPS if breakdown[g]]
    width = max(len(r[0]) for r in rows)
    text = [f"{name.ljust(width)}  {value}  {target}".rstrip() for name, value, target in rows]
    text.append("")
    text.append("import self time by package (python -X importtime, one run):")
    text += [f"  {g.ljust(48)} {duration(s):>10}  {s / total:4.0%}" for g, s in parts]
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    md = [
        SECTION,
        "",
        f"Generated by `bench/mcp_startup.py` ({runs} runs, {now}); do not edit by hand. Each "
        "run spawns `acomm mcp --as bench` (stdio) on a fresh store, as an MCP client does, "
        "and times its answers to `initialize` and then `tools/list`; the server's CPU time "
        "is read from /proc when the `tools/list` answer arrives (wall time grows on a "
        "shared machine, CPU time much less). The baselines run in the same run: a bare "
        "server on the same SDK with one tool, timed the same way, and `python -c 'import "
        "mcp'`. The other rows are the parts, each in a fresh interpreter. Target: the first "
        "`tools/list` answer in under 1.5 s.",
        "",
        "| | median [p10, p90] | target |",
        "|---|---|---|",
    ]
    md += [f"| {name} | {value} | {target} |" for name, value, target in rows]
    md += [
        "",
        "Where the import goes (self time by package, `python -X importtime`, which adds "
        "its own overhead; one run):",
        "",
        "| package | self time | share |",
        "|---|---|---|",
    ]
    md += [f"| {g} | {duration(s)} | {s / total:.0%} |" for g, s in parts]
    md += ["", "Machine: " + "; ".join(f"{k}: {v}" for k, v in info.items()), ""]
    return "\n".join(text), "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    info = machine()
    m = measure(args.runs)
    text, md = report(m, args.runs, info)
    print(text)
    if not args.no_write:
        write_section(SECTION, md)
        print(f"wrote {SECTION!r} in {DOC}")
    return 0 if median(m["tools_list"]) < TARGET_S else 1  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
