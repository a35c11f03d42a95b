"""Generate man/, completions/, docs/cli.md and cli/fastpath_tree.py from the command
tree, or check them.

    python -m acomm_cli.cli.docgen [DIR]          write them under DIR (default: here)
    python -m acomm_cli.cli.docgen --check [DIR]  list what differs from a fresh render; exit 1

`make docs` runs the first; tests/test_docs.py does the second, so the checked-in copies can
never drift from the code's --help. Commands registered later in `app.COMMANDS` are picked up
without any change here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from acomm_cli import __version__, errors
from acomm_cli.cli import clitree, completion, fasttree
from acomm_cli.cli.clitree import Cmd, Param

REFRESH = "make docs"  # the command that regenerates everything, named by every failure
NOTICE = (
    "Generated from acomm's command tree by `make docs` (python -m acomm_cli.cli.docgen); "
    "do not edit."
)

_EXIT_MEANINGS = {
    0: "success",
    1: "internal error (a bug)",
    2: "usage error",
    3: "validation failed; the message names the field",
    4: "not found",
    5: "state or permission conflict: not a participant, channel not active, duplicate, "
    "backwards ack",
    6: "capacity",
    7: "store unavailable: locked past the busy timeout, corrupt, newer schema, no store",
    8: "audit: Spark failed or cannot run here (no Java 17+, no cluster, a job that failed)",
    124: "--wait ended with nothing",
    141: "receive (or query --wait) could not write its output: a closed pipe, a closed or "
    "failing stdout, or a reader that stalled; what it was handed stays unread",
}
_ENVIRONMENT = [
    ("ACOMM_STORE", "The store file, unless --store is given."),
    (
        "ACOMM_CONFIG",
        "The config file, unless --config is given (default: config.yaml beside the store).",
    ),
    ("ACOMM_AGENT", "The acting agent where a command takes --as (or --from, --recipient)."),
    ("NO_COLOR", "When set and not empty, no colour (as --no-color)."),
    (
        "FORCE_COLOR",
        "When set and not empty, colour even where acomm would not use it (e.g. "
        "TERM=dumb); output piped to another program stays plain text.",
    ),
    ("TERM", "dumb: no colour."),
]


# ---------------------------------------------------------------- what is generated


def tree() -> Cmd:
    """The app's whole command tree."""
    import typer

    from acomm_cli.cli.app import app

    return clitree.tree(typer.main.get_command(app))


def render_all(root: Cmd | None = None) -> dict[str, str]:
    """Every generated file: path relative to the repository -> content."""
    root = root or tree()
    files = {
        f"completions/{name}": completion.script(shell, root)
        for shell, name in completion.FILES.items()
    }
    files["man/acomm.1"] = man_root(root)
    files[fasttree.PATH] = fasttree.render()
    for cmd in root.subcommands:
        files[f"man/{_page(cmd)}.1"] = man_command(cmd)
    files["docs/cli.md"] = markdown(root)
    return files


def _page(cmd: Cmd) -> str:
    return "-".join(("acomm", *cmd.path))


def _stale(out: Path, files: dict[str, str]) -> list[Path]:
    """Generated files left over from commands that no longer exist."""
    return [p for p in sorted((out / "man").glob("acomm*.1")) if f"man/{p.name}" not in files]


def write(out: Path, files: dict[str, str] | None = None) -> list[str]:
    """Write everything under `out`; returns the paths that changed."""
    files = files if files is not None else render_all()
    changed = []
    for rel, text in files.items():
        path = out / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(rel)
    for path in _stale(out, files):
        path.unlink()
        changed.append(str(path.relative_to(out)))
    return changed


def drift(repo: Path, files: dict[str, str] | None = None) -> list[str]:
    """Paths under `repo` that differ from a fresh render (missing, changed or stale)."""
    files = files if files is not None else render_all()
    bad = [
        rel
        for rel, text in files.items()
        if not (repo / rel).is_file() or (repo / rel).read_text(encoding="utf-8") != text
    ]
    return bad + [str(p.relative_to(repo)) for p in _stale(repo, files)]


# ---------------------------------------------------------------- roff


def _roff(text: str) -> str:
    """Running text for roff: backslashes and hyphens escaped, `code` in bold."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)


def _line(text: str) -> str:
    """A line that cannot be mistaken for a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def _para(text: str) -> list[str]:
    return [".PP", _line(_roff(text))]


def _opt_names(p: Param) -> str:
    names = ", ".join(f"\\fB{_roff(n)}\\fR" for n in (*p.opts, *p.secondary))
    return names + (f" \\fI{p.metavar}\\fR" if p.takes_value else "")


def _param_doc(p: Param) -> str:
    text = p.help
    if p.choices and not all(c in text for c in p.choices):
        text += (
            ("" if not text or text.endswith(".") else ".")
            + " One of: "
            + ", ".join(p.choices)
            + "."
        )
    extra = []
    if p.default is not None:
        extra.append(f"default: {p.default}")
    if p.envvar:
        extra.append(f"environment: {p.envvar}")
    if p.multiple and not p.argument:
        extra.append("repeatable")
    if p.required and not p.argument:
        extra.append("required")
    return _roff(text + (f" [{'; '.join(extra)}]" if extra else ""))


def _synopsis(cmd: Cmd) -> str:
    args = []
    for a in cmd.arguments:
        word = f"\\fI{a.metavar}\\fR" + ("..." if a.multiple else "")
        args.append(word if a.required else f"[{word}]")
    return " ".join([f".B {cmd.name}", "[\\fIOPTIONS\\fR]", *args])


def _examples(cmd: Cmd) -> list[str]:
    out = []
    for caption, example in cmd.examples:
        if caption:
            out += [".PP", _line(_roff(caption[:1].upper() + caption[1:] + ":"))]
        out += [".PP", ".RS 4", ".nf", _line(_roff(example)), ".fi", ".RE"]
    return out


def _params(cmd: Cmd) -> list[str]:
    out = []
    for p in cmd.arguments:
        out += [".TP", f"\\fI{p.metavar}\\fR" + ("..." if p.multiple else ""), _line(_param_doc(p))]
    for p in cmd.options:
        out += [".TP", _opt_names(p), _line(_param_doc(p))]
    return out


def _header(name: str, summary: str) -> list[str]:
    return [
        f'.\\" {NOTICE}',
        f'.TH "{name.upper()}" "1" "" "acomm {__version__}" "acomm manual"',
        ".nh",
        ".ad l",
        ".SH NAME",
        f"{_roff(name)} \\- {_roff(summary)}",
    ]


def man_command(cmd: Cmd) -> str:
    """The page of one top-level command; a group's page covers each of its subcommands."""
    out = _header(_page(cmd), cmd.summary)
    leaves = list(cmd.subcommands) or [cmd]
    out += [".SH SYNOPSIS"]
    for i, leaf in enumerate(leaves):
        out += ([".br"] if i else []) + [_synopsis(leaf)]
    out += [".SH DESCRIPTION", _line(_roff(cmd.summary))]
    for p in cmd.description:
        out += _para(p)
    if cmd.subcommands:
        out += [".SH COMMANDS"]
        for leaf in leaves:
            out += [f".SS {leaf.name}", _synopsis(leaf), ".PP", _line(_roff(leaf.summary))]
            for p in leaf.description:
                out += _para(p)
            params = _params(leaf)
            if params:
                out += [".PP", "Options:", ".RS 4", *params, ".RE"]
            if leaf.examples:
                out += [
                    ".PP",
                    "Examples:" if len(leaf.examples) > 1 else "Example:",
                    *_examples(leaf),
                ]
    else:
        params = _params(cmd)
        if params:
            out += [".SH OPTIONS", *params]
        if cmd.examples:
            out += [".SH EXAMPLES", *_examples(cmd)]
    out += [
        ".SH GLOBAL OPTIONS",
        ".PP",
        "\\fB\\-\\-store\\fR, \\fB\\-\\-config\\fR, \\fB\\-\\-json\\fR and "
        "\\fB\\-\\-no\\-color\\fR may come before or after the command; see",
        ".BR acomm (1).",
        ".SH SEE ALSO",
        ".BR acomm (1)",
    ]
    return "\n".join(out) + "\n"


def man_root(root: Cmd) -> str:
    from acomm_cli.cli.config import KEYS

    out = _header("acomm", root.summary)
    out += [
        ".SH SYNOPSIS",
        ".B acomm",
        "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
        _line(_roff(root.summary)),
    ]
    for p in root.description:
        out += _para(p)
    out += _para(
        "Every command is a short-lived process: it opens the store (one SQLite file), "
        "does its work in one transaction and exits. Data goes to stdout, diagnostics "
        "to stderr. Each command prints its own help with `--help`; its man page is "
        "acomm-COMMAND(1)."
    )
    out += [".SH GLOBAL OPTIONS", *_params(root)]
    out += [".SH COMMANDS"]
    for cmd in root.subcommands:
        out += [
            ".TP",
            f"\\fB{_roff(' '.join(cmd.path))}\\fR",
            _line(_roff(cmd.summary)) + f" See \\fB{_page(cmd)}\\fR(1).",
        ]
    if root.examples:
        out += [".SH EXAMPLES", *_examples(root)]
    out += [".SH ENVIRONMENT"]
    for name, text in _ENVIRONMENT:
        out += [".TP", f"\\fB{name}\\fR", _line(_roff(text))]
    for key, (default, _parser, env) in KEYS.items():
        shown = "unset" if default is None else default
        out += [
            ".TP",
            f"\\fB{env}\\fR",
            _line(_roff(f"The setting {key} (default: {shown}); see `acomm config show`.")),
        ]
    out += [
        ".SH FILES",
        ".TP",
        "\\fI.acomm/store.acomm\\fR",
        _line(
            _roff(
                "The store found by walking up from the working directory, when "
                "neither --store nor ACOMM_STORE says otherwise."
            )
        ),
        ".TP",
        "\\fI.acomm/config.yaml\\fR",
        _line(
            _roff(
                "The config file beside the store (precedence: flag > environment > "
                "config file > default)."
            )
        ),
    ]
    out += [".SH EXIT STATUS"]
    codes: dict[int, list[str]] = {}
    for cls in _error_classes():
        codes.setdefault(cls.exit_status, []).append(cls.code)
    for status, meaning in _EXIT_MEANINGS.items():
        names = sorted(set(codes.get(status, ())) - {"internal"})
        suffix = f" ({', '.join(names)})" if names else ""
        out += [".TP", f"\\fB{status}\\fR", _line(_roff(meaning + suffix))]
    out += [".SH SEE ALSO", ",\n".join(f".BR {_page(c)} (1)" for c in root.subcommands)]
    return "\n".join(out) + "\n"


def _error_classes() -> list[type[errors.CommError]]:
    found, todo = [], [errors.CommError]
    while todo:
        cls = todo.pop(0)
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in found if c.__module__ == errors.__name__]


# ---------------------------------------------------------------- markdown


def _anchor(cmd: Cmd) -> str:
    return cmd.name.replace(" ", "-")


def markdown(root: Cmd) -> str:
    out = [
        "# Command reference",
        "",
        f"<!-- {NOTICE} -->",
        "",
        "Every section below is the command's own `--help`. The same text is in the man "
        "pages (`man acomm`, `man acomm-send`, ...) and the shell completions in "
        "`completions/`.",
        "",
    ]
    for cmd in root.walk():
        depth = "  " * max(len(cmd.path) - 1, 0)
        out.append(f"{depth}- [`{cmd.name}`](#{_anchor(cmd)}) — {cmd.summary}")
    out.append("")
    for cmd in root.walk():
        out += [
            f"## {cmd.name}",
            "",
            "```text",
            f"$ {cmd.name} --help",
            cmd.help_text.rstrip("\n"),
            "```",
            "",
        ]
    return "\n".join(out)


# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    out = Path(rest[0] if rest else ".")
    files = render_all()
    if check:
        bad = drift(out, files)
        for rel in bad:
            print(f"out of date: {rel}", file=sys.stderr)
        if bad:
            print(f"generated files differ from the code; run `{REFRESH}`", file=sys.stderr)
        return 1 if bad else 0
    for rel in write(out, files):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
