#!/bin/sh
# fixer: run on each command from triage. It "writes a patch" and publishes it on the pubsub
# channel `code` under review.patch, where the reviewer listens. The first attempt at a crash
# fails (the build server is unreachable): exit 1 with the reason on stderr, so acomm retries
# the message after the agent's backoff (1s here); ACOMM_ATTEMPT says which attempt this is.
set -eu
msg=$(cat)
get() {
    printf '%s' "$msg" | python3 -c 'import json, sys
m = json.load(sys.stdin)
print(m[sys.argv[1]] if sys.argv[1] in m else m["metadata"].get(sys.argv[1], ""))' "$1"
}
ticket=$(get ticket)
report=$(get content)

case "$report" in
    *crash*)
        if [ "$ACOMM_ATTEMPT" = 1 ]; then
            echo "build server unreachable" >&2
            exit 1
        fi ;;
esac
acomm publish code review.patch "Patch for ticket $ticket: $report" --meta ticket="$ticket" \
    >/dev/null
echo "patch for ticket $ticket sent for review"
