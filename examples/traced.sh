#!/usr/bin/env bash
# One traced event from a mention to the agent's reply: a person @-mentions an agent in a
# thread (a `mention.created` event targeting it, with a trace id), dispatch runs the agent
# (the default trigger rules: a mention of an agent triggers it), the agent replies, and
# `acomm trace` prints the whole story. `make demo` runs this (examples/demo.sh calls it);
# alone: `bash examples/traced.sh` with acomm on PATH. ACOMM_DEMO_KEEP=1 keeps the store.
set -euo pipefail

if ! command -v acomm >/dev/null 2>&1; then
    echo "traced: acomm is not on PATH; run 'make demo' or activate .venv" >&2
    exit 1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/acomm-traced.XXXXXX")"
export ACOMM_STORE="$work/.acomm/store.acomm"
unset ACOMM_AGENT ACOMM_CONFIG ACOMM_TRACE_ID TRACEPARENT
if [[ "${ACOMM_DEMO_KEEP:-0}" == 1 ]]; then
    trap 'echo; echo "store kept: ACOMM_STORE=$ACOMM_STORE acomm trace demo-trace-1"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi
# shellcheck source=examples/show.sh
source "$here/show.sh"
fail() { echo "traced: unexpected: $*" >&2; exit 1; }

acomm init >/dev/null
cat > "$work/.acomm/config.yaml" <<EOF2
agents:
  helper:
    run: "$here/agents/helper.sh"   # no on: rules: the event's default rules decide
EOF2
say "a person and an agent in the directory; the agent's command in config.yaml"
run acomm agent register alice --kind human
run acomm agent register helper --kind agent
say "alice @-mentions helper in thread 7, comment 41, under trace demo-trace-1"
run acomm send --to helper "@helper why is test_cache flaky?" --as alice \
    --event-type mention.created --target helper --thread 7 --comment 41 \
    --action-hint must_reply --trace-id demo-trace-1
say "one tick: dispatch runs helper on the mention (it is the target, of kind agent)"
show acomm tick
acomm tick | tr ' ' '\n' | grep -v '=0$' | sed 's/^/    /' || true
say "what alice got back (the reply carries its own event: comment.replied to alice, a human)"
printf '$ %s\n' "acomm receive --as alice --jsonl | format"
acomm receive --as alice --jsonl | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    e = m["event"] or {}
    print("    #{} {} -> alice: {}  [{} {} -> {} ({}), trace {}]".format(m["id"], m["sender"],
          m["content"], e.get("event_type"), e.get("actor"), e.get("target"),
          e.get("target_kind"), m["trace_id"]))'
say "the whole trace: the mention, the run it caused, the reply"
run acomm trace demo-trace-1

# the script checks its own outcome, so that `make demo` fails loudly if it ever breaks
kinds=$(acomm trace demo-trace-1 --json | python3 -c 'import json, sys
print(" ".join(h["kind"] + ":" + h["agent"] for h in json.load(sys.stdin)["hops"]))')
[[ $kinds == "message:alice dispatch_run:helper message:helper" ]] || fail "the trace is '$kinds'"
