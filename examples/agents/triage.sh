#!/bin/sh
# triage: an agent run by `acomm tick` (see examples/pipeline.sh) on each report posted to
# the `intake` channel. The message arrives as JSON on stdin; ACOMM_AGENT, ACOMM_MESSAGE_ID,
# ACOMM_CHANNEL, ... are set, so plain `acomm` commands act as this agent on the same store.
#   exit 0  accepted: the report becomes a command for the fixer (stdout: the ack's note)
#   exit 3  ignored:  spam (stdout: the reason)
# A query on `intake` is answered by what this script prints.
set -eu
msg=$(cat)
get() {  # a field of the message, or of its metadata
    printf '%s' "$msg" | python3 -c 'import json, sys
m = json.load(sys.stdin)
print(m[sys.argv[1]] if sys.argv[1] in m else m["metadata"].get(sys.argv[1], ""))' "$1"
}

if [ "$(get type)" = query ]; then
    acomm receipts --agent triage --json | python3 -c 'import json, sys
r = json.load(sys.stdin)["receipts"]
fwd = sum(x["status"] == "accepted" for x in r)
ign = sum(x["status"] == "ignored" for x in r)
print(f"triage so far: {fwd} reports forwarded to the fixer, {ign} ignored")'
    exit 0
fi

report=$(get content)
case "$report" in
    *cheap*|*'!!!'*) echo "looks like spam"; exit 3 ;;
esac
# the dedupe key makes a retried run harmless: the fixer gets each report once
id=$(acomm send --to fixer "$report" --type command --meta ticket="$ACOMM_MESSAGE_ID" \
        --dedupe-key "ticket-$ACOMM_MESSAGE_ID")
echo "forwarded to the fixer as message $id"
