#!/bin/sh
# helper: an agent with no `on:` rules, so the default trigger rules decide: it runs when it
# is the target of a mention or a reply. It answers the mention's author in the same thread;
# the reply joins the mention's trace through $ACOMM_TRACE_ID, which dispatch sets.
set -eu
msg=$(cat)
set -- $(printf '%s' "$msg" | python3 -c 'import json, sys
e = json.load(sys.stdin)["event"]
print(e["actor"], e["thread_id"], e["comment_id"])')
acomm send --to "$1" "On it: the flaky test is a race in the cache warm-up" \
    --event-type comment.replied --target "$1" --thread "$2" --parent-comment "$3" \
    --depth 2 >/dev/null
echo "replied to $1 in thread $2 (trace $ACOMM_TRACE_ID)"
