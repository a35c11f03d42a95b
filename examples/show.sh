# Helpers the example scripts share (sourced, not run): print each command the way you would
# type it, then run it.

section()  { printf '\n=== %s\n' "$*"; }
say()      { printf '    # %s\n' "$*"; }
show() {
    local a words=()
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9._,=/:@+-]+$ ]]; then words+=("$a"); else words+=("'$a'"); fi
    done
    printf '$ %s\n' "${words[*]}"
}
run()      { show "$@"; "$@"; }
show_raw() { printf '$ %s\n' "$*"; }   # a command line written out by hand
