#!/bin/sh
# reviewer: run on each review.# event on the `code` channel. It approves the patch and tells
# the reporter directly; its stdout becomes the receipt's reason.
set -eu
msg=$(cat)
ticket=$(printf '%s' "$msg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["ticket"])')
acomm send --to reporter "Ticket $ticket: fix reviewed and merged" --type notification >/dev/null
echo "approved the patch for ticket $ticket"
