#!/bin/sh
# oracle: an agent owned by node B in examples/federation.sh. It is run by `acomm tick` on B
# for each query that came from another node; its stdout is the answer, which acomm sends
# back to the asker's node as a `reply` (and an `ack processed`).
set -eu
question=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["content"])')
case "$question" in
    *meaning*) echo "42" ;;
    *) echo "I do not know yet: $question" ;;
esac
