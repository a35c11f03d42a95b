#!/usr/bin/env bash
# acomm demo: three agents cooperate through one store file, driven only from the shell.
#
#   planner   decides what to do and sends commands
#   executor  carries commands out and deploys
#   ci        builds, tests and publishes events
#
# It shows, on a fresh temporary store (your own stores are never touched):
#   1. a direct command planner -> executor, its id captured with id=$(acomm send ...)
#   2. a group channel for all three, with priorities, priority ordering and metadata
#   3. pub/sub events with wildcard patterns (build.*.success, deploy.#, *.failure):
#      who got each event, and who did not
#   4. send --batch: several messages (channel, direct, pubsub) in one all-or-none transaction
#   5. safe retries with --dedupe-key, and exit codes a script can branch on
#   6. the history with `acomm messages`
#   7. agent dispatch: three agent scripts hand work to each other, driven by `acomm tick`
#      alone (examples/pipeline.sh, on a store of its own)
#   8. one traced event: a person @-mentions an agent (a mention.created event), dispatch runs
#      the agent by the default trigger rules, it replies, and `acomm trace` shows it all
#      (examples/traced.sh, on a store of its own)
#   9. an export of the store (partitioned Parquet) and the Spark audit over it (needs Java 17+)
#  10. federation: two nodes on 127.0.0.1, both seeds of the room (the second joins the first
#      by invite, and each joins the other: either may go down), a query
#      on one answered by an agent the other owns, a capability published on one and a task
#      delegated through it from the other, then both gateways stopped
#      (examples/federation.sh, on stores of its own)
#
# Run it with `make demo`, or `bash examples/demo.sh` with acomm on PATH.
# "| format" in the output stands for a few lines of Python (FORMAT_PY below) that print
# JSON Lines readably. Set ACOMM_DEMO_KEEP=1 to keep the store afterwards for your own poking around.
set -euo pipefail

if ! command -v acomm >/dev/null 2>&1; then
    echo "demo: acomm is not on PATH; run 'make demo' (it sets up .venv) or activate .venv" >&2
    exit 1
fi

demo_dir="$(mktemp -d "${TMPDIR:-/tmp}/acomm-demo.XXXXXX")"
export ACOMM_STORE="$demo_dir/demo.acomm"
unset ACOMM_AGENT ACOMM_CONFIG      # every command below names its agent with --as
if [[ "${ACOMM_DEMO_KEEP:-0}" == 1 ]]; then
    trap 'echo; echo "store kept: ACOMM_STORE=$ACOMM_STORE acomm messages"' EXIT
else
    trap 'rm -rf "$demo_dir"' EXIT
fi

# --- helpers -----------------------------------------------------------------------------

# shellcheck source=examples/show.sh
source "$(dirname "${BASH_SOURCE[0]}")/show.sh"

# Read one field of a JSON document on stdin (no jq needed); lists print comma-separated.
field() {
    python3 -c 'import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
print(", ".join(map(str, v)) if isinstance(v, list) else v if isinstance(v, str) else json.dumps(v))' "$1"
}

# Format JSON Lines from `receive --jsonl` / `messages --jsonl` as one readable line each.
FORMAT_PY=$(cat <<'PY'
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    extra = [m['priority']] if m['priority'] != 'normal' else []
    if m['topic']:
        extra.append('topic ' + m['topic'])
    if m['metadata']:
        extra.append(' '.join(f'{k}={v}' for k, v in m['metadata'].items()))
    tail = f"  [{'; '.join(extra)}]" if extra else ''
    print(f"    #{m['id']:<3} {m['channel']:<21} {m['sender']:<8} {m['type']:<12}  {m['content']}{tail}")
    if 'deliveries' in m:
        got = ', '.join(f"{d['recipient']}:{d['state']}" for d in m['deliveries'])
        print(f"    {'':<39}-> {got or 'nobody'}")
PY
)
# An agent's unread messages (marks them read), formatted by FORMAT_PY ("| format" below).
inbox() {
    local agent=$1; shift
    printf '$ %s | format\n' "$(show acomm receive "$@" --as "$agent" --jsonl | cut -c3-)"
    local out
    out=$(acomm receive "$@" --as "$agent" --jsonl)
    if [[ -z $out ]]; then say "(nothing for $agent)"; else python3 -c "$FORMAT_PY" <<<"$out"; fi
}

# Publish and report who the routing picked.
publish() {
    local ch=$1 topic=$2 body=$3 as=$4 out
    out=$(acomm publish "$ch" "$topic" "$body" --as "$as" --json)
    local got
    got=$(field recipients <<<"$out")
    printf '    %-24s -> %s\n' "$topic" "${got:-nobody (no pattern matches; stored as sent)}"
}

# --- setup, 1. a direct command -----------------------------------------------------------

section "Setup: a fresh store (ACOMM_STORE points at a temporary file)"
run acomm init
run acomm agent register planner executor ci   # a new store refuses names it does not know

section "1. Direct command: planner -> executor"
show_raw 'id=$(acomm send --to executor "Apply migration 0042 on staging" --type command --priority high --as planner)'
id=$(acomm send --to executor "Apply migration 0042 on staging" \
        --type command --priority high --as planner)
say "planner's command is message $id"
show_raw "acomm show $id --json | python3 -c '...[\"correlation_id\"]'"
corr=$(acomm show "$id" --json | field correlation_id)
say "commands get a correlation id automatically: $corr"
run acomm receive --as executor --body
say "executor reports back on the same thread (same correlation id):"
show acomm send --to planner "Migration 0042 applied: 12 tables" --type notification \
    --correlation-id "$corr" --as executor
acomm send --to planner "Migration 0042 applied: 12 tables" --type notification \
    --correlation-id "$corr" --as executor >/dev/null
inbox planner

# --- 2. a group discussion ---------------------------------------------------------------

section "2. Group channel 'release' for all three (priority ordering, metadata)"
run acomm channel create release --type group --priority-ordering --as planner
say "channel create prints the new channel's id, send the new message's id"
run acomm channel join release executor --as planner
run acomm channel join release ci --as planner
show_raw 'acomm channel show release | grep participants'
acomm channel show release | grep participants
run acomm send release "Goal today: release 1.4 to staging" --meta release=1.4 --as planner
run acomm send release "FYI: nightly build took 14 min" --priority low --as ci
run acomm send release "Blocked: staging DB credentials expired" --priority urgent \
    --meta ticket=OPS-112 --as executor
say "planner reads: the urgent message comes first although it is the newest"
inbox planner release
inbox executor release

# --- 3. pub/sub with wildcards -----------------------------------------------------------

section "3. Pub/sub channel 'ci-events' with wildcard subscriptions"
run acomm channel create ci-events --type pubsub --as ci
run acomm subscribe ci-events 'build.*.success' --as executor   # deploy what passed
run acomm subscribe ci-events '*.failure' --as planner          # two-segment failures
run acomm subscribe ci-events 'deploy.#' --as planner           # every deploy event
run acomm subscribe ci-events 'deploy.#' --as ci                # smoke-test after deploys
run acomm subscriptions ci-events
say "ci and executor publish; recipients follow the patterns ('*' = one segment, '#' = any)."
show_raw "acomm publish ci-events TOPIC BODY --as AGENT --json   # each line below: TOPIC -> .recipients"
publish ci-events build.frontend.success "847 tests passed" ci
publish ci-events build.backend.success "1203 tests passed" ci
publish ci-events lint.failure "3 style errors in api/" ci
publish ci-events build.docs.failure "broken link in guide" ci
publish ci-events deploy "deploy queue opened" executor
say "build.docs.failure has three segments: '*.failure' does not match it."
say "deploy matches deploy.# ('#' matches zero segments); the publisher never gets its own."
inbox executor ci-events
inbox planner ci-events

# --- 4. a batch --------------------------------------------------------------------------

section "4. send --batch: three messages, one transaction (all or none)"
show_raw 'acomm send --batch - <<EOF   # JSON Lines: channel or to, from, content, ...'
acomm send --batch - <<EOF
{"channel": "ci-events", "from": "executor", "topic": "deploy.staging.success", "type": "notification", "content": "1.4 is live on staging"}
{"channel": "release", "from": "executor", "content": "Deployed 1.4 to staging", "metadata": {"release": "1.4", "env": "staging"}}
{"to": "planner", "from": "executor", "type": "notification", "content": "All done: migration applied, 1.4 deployed", "correlation_id": "$corr"}
EOF
say "(one id per line, in order)"
before=$(acomm status --json | field messages)
say "a batch with one bad line (an empty topic segment) stores nothing:"
rc=0
err=$(acomm send --batch - 2>&1 >/dev/null <<'EOF'
{"channel": "release", "from": "ci", "content": "this one is fine"}
{"channel": "ci-events", "from": "ci", "topic": "build..success", "content": "bad topic"}
EOF
) || rc=$?
say "exit $rc: $err"
say "messages in the store before: $before, after: $(acomm status --json | field messages)"
inbox ci ci-events

# --- 5. scripting: safe retries and exit codes -------------------------------------------

section "5. Scripting: safe retries with --dedupe-key, exit codes"
run acomm send release "Nightly 2026-11-22 is green" --dedupe-key nightly-2026-11-22 --as ci
say "ci is not sure the send went through (say it timed out), so it sends again, same key:"
show acomm send release "Nightly 2026-11-22 is green" --dedupe-key nightly-2026-11-22 --as ci --json
out=$(acomm send release "Nightly 2026-11-22 is green" --dedupe-key nightly-2026-11-22 \
        --as ci --json)
say "same id $(field id <<<"$out"), deduplicated=$(field deduplicated <<<"$out"), exit 0: nothing sent twice"
rc=0; err=$(acomm send release "let me in" --as intruder 2>&1) || rc=$?
say "a non-participant sends:    exit $rc  ($err)"
rc=0; err=$(acomm send --to planer "typo" --as ci 2>&1) || rc=$?
say "a misspelt recipient:       exit $rc  ($err)"
rc=0; err=$(acomm show 999 2>&1) || rc=$?
say "show a missing message:     exit $rc  ($err)"
rc=0; err=$(acomm send release "" --as ci 2>&1) || rc=$?
say "an empty body:              exit $rc  ($err)"

# --- 6. history --------------------------------------------------------------------------

section "6. History: acomm messages (newest first, read-only), with each recipient's state"
show_raw 'acomm messages --jsonl | format'
acomm messages --jsonl | python3 -c "$FORMAT_PY"
say "filtered, in the plain tab-separated form (id, from, topic, content cut out):"
show_raw "acomm messages --channel ci-events --topic 'deploy.#' | cut -f1,3,6,9"
acomm messages --channel ci-events --topic 'deploy.#' | cut -f1,3,6,9
section "Store"
run acomm status

# --- 7. agent dispatch ------------------------------------------------------------------

section "7. Agent dispatch: triage -> fixer -> reviewer, driven by nothing but acomm tick"
say "(examples/pipeline.sh, on a store of its own; agents in config.yaml run on their messages)"
bash "$(dirname "${BASH_SOURCE[0]}")/pipeline.sh"

# --- 8. a traced event -------------------------------------------------------------------

section "8. One traced event: a mention, the agent's run, its reply (acomm trace)"
say "(examples/traced.sh, on a store of its own)"
bash "$(dirname "${BASH_SOURCE[0]}")/traced.sh"

# --- 9. export and audit -----------------------------------------------------------------

section "9. Export the store as Parquet, and audit it on Spark (local[*])"
say "export: datasets partitioned by UTC day, plus manifest.json (row counts, sha256 of each file)"
run acomm export "$demo_dir/export"
say "audit: Spark SQL over the export (tables written as Parquet to $demo_dir/audit/)"
if command -v java >/dev/null 2>&1 || [[ -n ${JAVA_HOME:-} ]]; then
    run acomm audit "$demo_dir/export"
else
    say "(skipped: acomm audit runs Apache Spark, which needs Java 17+; none is installed)"
fi

# --- 10. federation ----------------------------------------------------------------------

section "10. Federation: two seeds, a query on node-a answered by an agent node-b owns"
say "(examples/federation.sh, two stores and two seed gateways of its own on 127.0.0.1)"
bash "$(dirname "${BASH_SOURCE[0]}")/federation.sh"
printf '\nDemo finished.\n'
