"""Shell completion: bash, zsh and fish scripts generated from the command tree, and the words
(channel names, agent ids) they look up in the store.

The scripts are static data plus a small walker, so completing a command or an option runs no
Python at all; only channel and agent values call `acomm __complete channels|agents`, which
opens the store read-only and runs on the fast path, without Typer (its words:
`commands/completions_run.py`). Nothing here is imported by ordinary commands.
"""

from __future__ import annotations

from collections.abc import Iterable

from acomm_cli.cli.clitree import Cmd, Param
from acomm_cli.cli.params import SHELLS, Kind
from acomm_cli.errors import UsageError

AGENT, CHANNEL, CHOICE, DIR, FILE = Kind.AGENT, Kind.CHANNEL, Kind.CHOICE, Kind.DIR, Kind.FILE
FILES = {"bash": "acomm.bash", "zsh": "_acomm", "fish": "acomm.fish"}

_HEADER = (
    "Generated from acomm's command tree by `make docs` (python -m acomm_cli.cli.docgen); "
    "do not edit."
)


def script(shell: str, root: Cmd) -> str:
    """The completion script for `shell`."""
    render = {"bash": bash, "zsh": zsh, "fish": fish}.get(shell)
    if render is None:
        raise UsageError(
            f"shell: {shell!r} is not one of {', '.join(SHELLS)}", field="shell", value=shell
        )
    return render(root)


# ---------------------------------------------------------------- what the scripts know


def _kind(p: Param) -> str:
    """A value's completion as the scripts spell it: channel, agent, file, dir, `choice:a b`
    or `value` (free text: nothing to offer)."""
    if p.kind == CHOICE:
        return "choice:" + " ".join(p.choices)
    return p.kind if p.kind in (CHANNEL, AGENT, FILE, DIR) else "value"


def _aliases(root: Cmd) -> dict[str, str]:
    return dict(root.aliases)


def _names(p: Param) -> list[str]:
    return [*p.opts, *p.secondary]


def _commands(root: Cmd) -> list[Cmd]:
    return list(root.walk())


def _key(c: Cmd) -> str:
    return " ".join(c.path)


def _valued(root: Cmd) -> list[tuple[str, list[str], str]]:
    """(path, option names, kind) of every option taking a value; global options first, with
    path '*' (they are accepted after any subcommand)."""
    rows: list[tuple[str, list[str], str]] = [
        ("*", _names(p), _kind(p)) for p in root.options if p.takes_value
    ]
    for c in _commands(root)[1:]:
        rows += [(_key(c), _names(p), _kind(p)) for p in c.options if p.takes_value]
    return rows


def _positionals(c: Cmd) -> list[tuple[str, str]]:
    """(index pattern, kind) of a command's arguments: '0', '1', ... and, for an argument
    taking several values, 'N+'."""
    out = []
    for i, a in enumerate(c.arguments):
        out.append((f"{i}+" if a.multiple else str(i), _kind(a)))
    return out


def _first_line(text: str, limit: int = 70) -> str:
    text = text.split(". ")[0].rstrip(".")
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _sq(text: str) -> str:
    """Single-quoted for bash and zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------- bash


def bash(root: Cmd) -> str:
    cmds = _commands(root)
    out = [
        "# bash completion for acomm" + " " * 37 + "-*- shell-script -*-",
        f"# {_HEADER}",
        '# Load it with `source completions/acomm.bash`, or `eval "$(acomm completions bash)"`',
        "# in ~/.bashrc; bash-completion also finds it installed as",
        "# $PREFIX/share/bash-completion/completions/acomm.",
        "",
        "_acomm_subcommands() {",
        "    case $1 in",
    ]
    for c in cmds:
        if c.subcommands:
            subs = " ".join(s.path[-1] for s in c.subcommands)
            out.append(f"        {_sq(_key(c))}) echo {_sq(subs)} ;;")
    out += [
        "    esac",
        "}",
        "",
        "_acomm_options() {",
        "    local global="
        + _sq(" ".join(n for p in root.options for n in _names(p)) + " -h --help"),
        "    case $1 in",
    ]
    for c in cmds[1:]:
        own = "".join(f" {n}" for p in c.options for n in _names(p))
        out.append(f'        {_sq(_key(c))}) echo "$global{own}" ;;')
    out += [
        '        *) echo "$global" ;;',
        "    esac",
        "}",
        "",
        "# The kind of value an option takes; fails for flags.",
        "_acomm_value_kind() {",
        '    case "$1 $2" in',
    ]
    for path, names, kind in _valued(root):
        pats = "|".join(f'*" {n}"' if path == "*" else _sq(f"{path} {n}") for n in names)
        out.append(f"        {pats}) echo {_sq(kind)} ;;")
    out += [
        "        *) return 1 ;;",
        "    esac",
        "}",
        "",
        "# The kind of the Nth (from 0) argument of a command.",
        "_acomm_positional() {",
        '    case "$1 $2" in',
    ]
    for c in cmds[1:]:
        for idx, kind in _positionals(c):
            pat = _sq(f"{_key(c)} ") + "*" if idx.endswith("+") else _sq(f"{_key(c)} {idx}")
            out.append(f"        {pat}) echo {_sq(kind)} ;;")
    out += ["        *) return 1 ;;", "    esac", "}", ""]
    aliases = "".join(f"            {a}) w={t} ;;\n" for a, t in _aliases(root).items())
    out.append(_BASH_MAIN.replace("@ALIASES@\n", aliases))
    return "\n".join(out)


_BASH_MAIN = r"""# Channel names and agent ids from the store (with the line's --store, if any).
_acomm_words() {
    command acomm "${_acomm_store[@]}" __complete "$1" 2>/dev/null
}

_acomm_complete_kind() {
    local kind=$1 cur=$2
    case $kind in
        channel|agent)
            mapfile -t COMPREPLY < <(compgen -W "$(_acomm_words "${kind}s")" -- "$cur") ;;
        file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        choice:*) mapfile -t COMPREPLY < <(compgen -W "${kind#choice:}" -- "$cur") ;;
    esac
}

_acomm() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local path="" npos=0 i w kind subs
    local -a _acomm_store=()
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
@ALIASES@
        esac
        if [[ $w == -* ]]; then
            if [[ ${COMP_WORDS[i+1]} == = ]]; then  # --opt=value, split by COMP_WORDBREAKS
                [[ $w == --store || $w == --file ]] && _acomm_store=(--store "${COMP_WORDS[i+2]}")
                ((i += 2))
            elif _acomm_value_kind "$path" "$w" >/dev/null; then
                [[ $w == --store || $w == --file ]] && _acomm_store=(--store "${COMP_WORDS[i+1]}")
                ((i++))
            fi
            continue
        fi
        subs=" $(_acomm_subcommands "$path") "
        if [[ $npos == 0 && $subs == *" $w "* ]]; then
            path=${path:+$path }$w
        else
            ((npos++))
        fi
    done
    if [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    if [[ $prev == -* ]] && kind=$(_acomm_value_kind "$path" "$prev"); then
        _acomm_complete_kind "$kind" "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_acomm_options "$path")" -- "$cur")
        return 0
    fi
    subs=$(_acomm_subcommands "$path")
    if [[ -n $subs ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
        return 0
    fi
    if kind=$(_acomm_positional "$path" "$npos"); then
        _acomm_complete_kind "$kind" "$cur"
    fi
    return 0
}

complete -F _acomm acomm
"""


# ---------------------------------------------------------------- zsh


def _zdesc(name: str, text: str) -> str:
    return _sq(f"{name}:{_first_line(text)}" if text else name)


def zsh(root: Cmd) -> str:
    cmds = _commands(root)
    out = [
        "#compdef acomm",
        "# zsh completion for acomm.",
        f"# {_HEADER}",
        "# Install it as _acomm in a directory of $fpath (before `compinit` runs), or load it",
        "# with `source <(acomm completions zsh)` after `compinit` in ~/.zshrc.",
        "",
        "_acomm_subcommands() {",
        "    case $1 in",
    ]
    for c in cmds:
        if c.subcommands:
            items = " ".join(_zdesc(s.path[-1], s.summary) for s in c.subcommands)
            out.append(f"        {_sq(_key(c))}) reply=({items}) ;;")
    out += [
        "        *) reply=() ;;",
        "    esac",
        "}",
        "",
        "_acomm_options() {",
        "    local -a global",
        "    global=("
        + " ".join(_zdesc(n, p.help) for p in root.options for n in _names(p))
        + " '-h:Show help' '--help:Show help')",
        "    case $1 in",
    ]
    for c in cmds[1:]:
        items = " ".join(_zdesc(n, p.help) for p in c.options for n in _names(p))
        out.append(f"        {_sq(_key(c))}) reply=($global {items}) ;;")
    out += [
        "        *) reply=($global) ;;",
        "    esac",
        "}",
        "",
        "# The kind of value an option takes (in REPLY); fails for flags.",
        "_acomm_value_kind() {",
        '    case "$1 $2" in',
    ]
    for path, names, kind in _valued(root):
        pats = "|".join(f'*" {n}"' if path == "*" else _sq(f"{path} {n}") for n in names)
        out.append(f"        ({pats}) REPLY={_sq(kind)} ;;")
    out += [
        "        (*) return 1 ;;",
        "    esac",
        "}",
        "",
        "# The kind of the Nth (from 0) argument of a command (in REPLY).",
        "_acomm_positional() {",
        '    case "$1 $2" in',
    ]
    for c in cmds[1:]:
        for idx, kind in _positionals(c):
            pat = _sq(f"{_key(c)} ") + "*" if idx.endswith("+") else _sq(f"{_key(c)} {idx}")
            out.append(f"        ({pat}) REPLY={_sq(kind)} ;;")
    out += ["        (*) return 1 ;;", "    esac", "}", ""]
    aliases = "".join(f"            ({a}) w={t} ;;\n" for a, t in _aliases(root).items())
    out.append(_ZSH_MAIN.replace("@ALIASES@\n", aliases))
    return "\n".join(out)


_ZSH_MAIN = r"""# Where the command line stands: the command path, how many arguments it has, and
# a --store given on it (for `acomm __complete`). Apart from _acomm so tests can call it.
_acomm_state() {
    local i w
    local -a names
    _acomm_path="" _acomm_npos=0 _acomm_store=""
    for (( i = 2; i < CURRENT; i++ )); do
        w=${words[i]}
        case $w in
@ALIASES@
        esac
        if [[ $w == -* ]]; then
            if [[ $w == *=* ]]; then
                [[ $w == --store=* || $w == --file=* ]] && _acomm_store=${w#*=}
            elif _acomm_value_kind "$_acomm_path" "$w"; then
                [[ $w == --store || $w == --file ]] && _acomm_store=${words[i+1]}
                (( i++ ))
            fi
            continue
        fi
        _acomm_subcommands "$_acomm_path"
        names=(${reply%%:*})
        if (( _acomm_npos == 0 && ${names[(Ie)$w]} )); then
            _acomm_path=${_acomm_path:+$_acomm_path }$w
        else
            (( _acomm_npos++ ))
        fi
    done
}

_acomm_complete_kind() {
    local -a found
    case $1 in
        (channel|agent)
            local store=${_acomm_store:+--store ${(q)_acomm_store}}
            found=(${(f)"$(_call_program $1s acomm $store __complete $1s 2>/dev/null)"})
            compadd -a found ;;
        (file) _files ;;
        (dir) _files -/ ;;
        (choice:*) compadd -- ${=1#choice:} ;;
    esac
}

_acomm() {
    local _acomm_path _acomm_store REPLY
    local -i _acomm_npos
    local -a reply
    _acomm_state
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
    if [[ $prev == -* && $prev != *=* ]] && _acomm_value_kind "$_acomm_path" "$prev"; then
        _acomm_complete_kind "$REPLY"
        return
    fi
    if [[ $cur == --*=* ]] && _acomm_value_kind "$_acomm_path" "${cur%%=*}"; then
        compset -P '*='
        _acomm_complete_kind "$REPLY"
        return
    fi
    if [[ $cur == -* ]]; then
        _acomm_options "$_acomm_path"
        _describe -t options option reply
        return
    fi
    _acomm_subcommands "$_acomm_path"
    if (( ${#reply} )); then
        _describe -t commands command reply
        return
    fi
    _acomm_positional "$_acomm_path" $_acomm_npos && _acomm_complete_kind "$REPLY"
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _acomm "$@"
else
    compdef _acomm acomm
fi
"""


# ---------------------------------------------------------------- fish


def _fq(text: str) -> str:
    """Single-quoted for fish."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_value(kind: str) -> str:
    if kind in (CHANNEL, AGENT):
        return f" -f -a {_fq(f'(__acomm_words {kind}s)')}"
    if kind == FILE:
        return " -F"
    if kind == DIR:
        return " -f -a '(__fish_complete_directories (commandline -ct) \"\")'"
    if kind.startswith("choice:"):
        return " -f -a " + _fq(kind[len("choice:") :])
    return " -f"


def _fish_option(cond: str, p: Param, names: Iterable[str]) -> str:
    """The option's line(s): its values first, then its description on a line of its own
    (fish would otherwise repeat the option's description beside every value)."""
    flags = "".join(f" -s {n[1:]}" if len(n) == 2 else f" -l {n[2:]}" for n in names)
    desc = f" -d {_fq(_first_line(p.help))}" if p.help else ""
    if not p.takes_value:
        return f"complete -c acomm{cond}{flags}{desc}"
    kind = _kind(p)
    values = _fish_value(kind)
    line = f"complete -c acomm{cond}{flags} -r{' -F' if kind == FILE else ' -f'}{desc}"
    if kind == "value":
        return line
    return f"complete -c acomm{cond}{flags} -r{values}\n{line}"


def fish(root: Cmd) -> str:
    cmds = _commands(root)
    valued = _valued(root)
    out = [
        "# fish completion for acomm.",
        f"# {_HEADER}",
        "# Install it as ~/.config/fish/completions/acomm.fish, or load it with",
        "# `acomm completions fish | source`.",
        "",
        "function __acomm_subcommands",
        '    switch "$argv[1]"',
    ]
    for c in cmds:
        if c.subcommands:
            out += [
                f"        case {_fq(_key(c))}",
                "            echo " + " ".join(s.path[-1] for s in c.subcommands),
            ]
    out += [
        "    end",
        "end",
        "",
        "# Options that take a value (their value is not an argument).",
        "function __acomm_valued",
        "    echo " + " ".join(n for path, names, _ in valued if path == "*" for n in names),
        '    switch "$argv[1]"',
    ]
    by_path: dict[str, list[str]] = {}
    for path, names, _ in valued:
        if path != "*":
            by_path.setdefault(path, []).extend(names)
    for path, names in by_path.items():
        out += [f"        case {_fq(path)}", "            echo " + " ".join(names)]
    out += ["    end", "end", ""]
    aliases = "".join(
        f"            case {a}\n                set w {t}\n" for a, t in _aliases(root).items()
    )
    out.append(_FISH_MAIN.replace("@ALIASES@\n", aliases))
    out.append("# Global options, accepted after any subcommand too.")
    out += [_fish_option("", p, _names(p)) for p in root.options]
    out.append("complete -c acomm -s h -l help -d 'Show help'")
    for c in cmds:
        cond = f" -n {_fq('__acomm_is ' + _fq(_key(c)))}"
        if c.subcommands:
            out.append("")
            out.append(f"# {c.name}")
            out += [
                f"complete -c acomm -f{cond} -a {_fq(s.path[-1])} -d {_fq(_first_line(s.summary))}"
                for s in c.subcommands
            ]
            continue
        out += ["", f"# {c.name}"]
        out += [_fish_option(cond, p, _names(p)) for p in c.options]
        for idx, kind in _positionals(c):
            if kind == "value":
                continue
            pos = _fq(f"__acomm_at {_fq(_key(c))} {idx}")
            out.append(f"complete -c acomm -n {pos}{_fish_value(kind)}")
    return "\n".join(out) + "\n"


_FISH_MAIN = r"""# The command path and argument count of the command line being completed.
function __acomm_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path
    set -l npos 0
    set -l skip 0
    for w in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
@ALIASES@
        end
        if string match -q -- '-*' $w
            if not string match -q -- '*=*' $w
                and contains -- $w (string split ' ' -- (__acomm_valued (string join ' ' -- $path)))
                set skip 1
            end
            continue
        end
        set -l subs (string split ' ' -- (__acomm_subcommands (string join ' ' -- $path)))
        if test $npos = 0; and contains -- $w $subs
            set -a path $w
        else
            set npos (math $npos + 1)
        end
    end
    echo (string join ' ' -- $path)
    echo $npos
end

function __acomm_is --description 'is the command line at this command path?'
    set -l state (__acomm_state)
    test "$state[1]" = "$argv[1]"
end

function __acomm_at --description 'is the next argument of this command the Nth (N+: or later)?'
    set -l state (__acomm_state)
    test "$state[1]" = "$argv[1]"; or return 1
    if string match -q -- '*+' $argv[2]
        test $state[2] -ge (string trim -r -c + -- $argv[2])
    else
        test $state[2] -eq $argv[2]
    end
end

# Channel names and agent ids from the store (a --store given on the line is passed on).
function __acomm_words
    set -l tokens (commandline -opc)
    set -l store
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --store --file
                set store --store $tokens[(math $i + 1)]
            case '--store=*' '--file=*'
                set store --store (string replace -r '^[^=]*=' '' -- $tokens[$i])
        end
    end
    command acomm $store __complete $argv[1] 2>/dev/null
end

complete -c acomm -f
"""
