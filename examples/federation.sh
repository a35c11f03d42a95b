#!/usr/bin/env bash
# acomm federation: two nodes on 127.0.0.1, each its own store and its own gateway, deliver to
# each other's agents (docs/FEDERATION.md).
#
#   node-a   a seed: its gateway holds the state room; alice asks a question here
#   node-b   a second seed: it joins node-a's room with an invite, and node-a joins its room
#            back, so the room lives on both (either may go down); it owns the agent `oracle`
#            (examples/agents/oracle.sh, run by `acomm tick` on node-b; its stdout answers)
#
# The query goes from node-a's outbox to node-b (`fed pull` / `tick` there), is accepted,
# answered by oracle's turn, and the answer comes back to alice's inbox on node-a as a
# `response` with the query's correlation id. Then builder, another agent node-b owns,
# publishes a capability (docs/CAPABILITIES.md): node-a sees it in the room's catalog, alice on node-a
# answers its skill-distribution task, and alice delegates a task through the capability:
# it goes to builder on node-b, who accepts it with an ETA, reports progress and completes
# it within the capability's output schema; `task show` on both nodes agrees. Both gateways
# are then stopped (SIGTERM).
# Every wait has a deadline; nothing sleeps for a fixed time to synchronise.
# `make demo` runs this (examples/demo.sh calls it); alone: `bash examples/federation.sh` with
# acomm (and its `federation` extra) on PATH. ACOMM_DEMO_KEEP=1 keeps the stores.
set -euo pipefail

if ! command -v acomm >/dev/null 2>&1; then
    echo "federation: acomm is not on PATH; run 'make demo' or activate .venv" >&2
    exit 1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/acomm-federation.XXXXXX")"
unset ACOMM_STORE ACOMM_AGENT ACOMM_CONFIG  # every command names its store and its agent
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    if [[ "${ACOMM_DEMO_KEEP:-0}" == 1 ]]; then
        echo; echo "stores kept: $work/a/store.acomm and $work/b/store.acomm"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
cd "$work"
mkdir a b
A=a/store.acomm
B=b/store.acomm

# shellcheck source=examples/show.sh
source "$here/show.sh"
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

# wait_for WHAT SECONDS COMMAND...: run COMMAND until it succeeds, at most SECONDS.
wait_for() {
    local what=$1 deadline=$((SECONDS + $2))
    shift 2
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            echo "federation: timed out waiting for $what" >&2
            tail -n 20 a/gateway.log b/gateway.log >&2 || true
            exit 1
        fi
        sleep 0.2
    done
}
synced() {  # the gateway of store $1 listens and has its room
    acomm --store "$1" --json gateway status | json 'd["listen"] and d["room_synced"] or exit(1)'
}
owner_seen() {  # node-a's copy of the room says node-b owns oracle
    acomm --store "$A" --json agent where oracle | json 'd["owner_node"] == "node-b" or exit(1)'
}
oracle_ran() {  # a tick on node-b pulls node-a's outbox, then runs oracle on what came in
    acomm --store "$B" tick >/dev/null
    acomm --store "$B" --json receipts --agent oracle | json 'd["receipts"] or exit(1)'
}
answer_back() {  # node-a pulls node-b's outbox until alice has the answer
    acomm --store "$A" fed pull >/dev/null
    acomm --store "$A" --json receive --as alice --peek | json 'd["messages"] or exit(1)'
}
owner_seen_builder() {
    acomm --store "$A" --json agent where builder | json 'd["owner_node"] == "node-b" or exit(1)'
}
owner_seen_alice() {  # node-b's copy of the room says node-a owns alice
    acomm --store "$B" --json agent where alice | json 'd["owner_node"] == "node-a" or exit(1)'
}
capability_on_a() {  # node-a's copy of the room's catalog has release-checks
    acomm --store "$A" --json capability list \
        | json '[c["id"] for c in d["capabilities"]] == ["release-checks"] or exit(1)'
}
install_task_on_a() {  # node-a pulls until alice has her skill_distribution task; prints it
    acomm --store "$A" fed pull >/dev/null
    acomm --store "$A" --json task list --as alice | json '[t["global_id"] for t in d["tasks"]
        if t["task_type"] == "skill_distribution"][0]'
}
installed_on_b() {  # node-b pulls until capability show lists alice's install
    acomm --store "$B" fed pull >/dev/null
    acomm --store "$B" --json capability show release-checks | json '[i["status"]
        for i in d["installs"] if i["agent"] == "alice"] == ["installed"] or exit(1)'
}
task_on_b() {  # node-b pulls node-a's outbox until it has the task
    acomm --store "$B" fed pull >/dev/null
    acomm --store "$B" --json task show "$task" >/dev/null
}
task_on_a() {  # task_on_a CHECK: node-a pulls node-b's outbox until its copy passes CHECK
    acomm --store "$A" fed pull >/dev/null
    acomm --store "$A" --json task show "$task" | json "d$1 or exit(1)"
}
# stop NAME PID: SIGTERM, then wait (bounded) until the gateway has exited
stop() {
    local deadline=$((SECONDS + 15))
    kill -TERM "$2"
    while kill -0 "$2" 2>/dev/null; do
        if ((SECONDS >= deadline)); then kill -KILL "$2"; break; fi
        sleep 0.1
    done
    wait "$2" 2>/dev/null || true
    say "$1's gateway stopped"
}

section "1. Two nodes, both seeds: each store gets a node identity (an Ed25519 key of its own)"
run acomm --store "$A" node init --id node-a --seed
run acomm --store "$B" node init --id node-b --seed
run acomm --store "$A" agent register alice             # each node's directory: its own agents
run acomm --store "$B" agent register oracle builder

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
seeds_known() {  # both seeds in node $1's copy of the room, as seeds
    acomm --store "$1" --json peers | json 'd["room"]["seeds"] == ["node-a", "node-b"] or exit(1)'
}
port_a=$(free_port)
port_b=$(free_port)
url_a="http://127.0.0.1:$port_a"
url_b="http://127.0.0.1:$port_b"

section "2. node-a's gateway: a seed, holding the room; its --join names the other seed"
show_raw "acomm --store $A gateway serve --listen 127.0.0.1:$port_a --join $url_b &"
acomm --store "$A" gateway serve --listen "127.0.0.1:$port_a" --join "$url_b" \
    >a/gateway.log 2>&1 &
pids+=($!)
pid_a=$!
wait_for "node-a's gateway" 20 synced "$A"
run acomm --store "$A" gateway status

section "3. node-b, the second seed, joins with a one-time invite (only its hash is kept)"
show_raw "token=\$(acomm --store $A --json invite create --expect node-b --ttl 10m | ...)"
token=$(acomm --store "$A" --json invite create --expect node-b --ttl 10m \
    | json 'd["invite_token"]')
show_raw "acomm --store $B gateway serve --listen 127.0.0.1:$port_b --join $url_a --invite \$token &"
acomm --store "$B" gateway serve --listen "127.0.0.1:$port_b" --join "$url_a" --invite "$token" \
    >b/gateway.log 2>&1 &
pids+=($!)
pid_b=$!
wait_for "node-b's gateway" 20 synced "$B"
wait_for "both seeds in each room" 30 seeds_known "$A"
wait_for "both seeds in node-b's room" 30 seeds_known "$B"
say "each seed keeps its own copy of the room and joins the other: either one may go down"
run acomm --store "$B" gateway status
run acomm --store "$A" peers

section "4. node-b owns the agent oracle (a dispatch agent in its config.yaml); node-a sees it"
cat > b/config.yaml <<YAML
agents:
  oracle:
    run: $here/agents/oracle.sh
YAML
say "b/config.yaml beside node-b's store:"
sed 's/^/    /' b/config.yaml
run acomm --store "$B" agent own oracle
wait_for "node-a to see oracle's owner" 20 owner_seen
run acomm --store "$A" agent where oracle

section "5. alice on node-a asks oracle a question: it goes to node-a's outbox for node-b"
run acomm --store "$A" send --to oracle --type query --correlation-id q-1 \
    "What is the meaning of life?" --as alice

section "6. node-b: tick pulls node-a's outbox (and acks it accepted), then runs oracle"
wait_for "oracle's turn on node-b" 20 oracle_ran
run acomm --store "$B" receipts --agent oracle

section "7. node-a: fed pull reads node-b's outbox: accepted, the reply, processed"
wait_for "the answer on node-a" 20 answer_back
acomm --store "$A" --json receive --as alice --peek | json '[(m["type"], m["correlation_id"],
    m["content"]) for m in d["messages"]] == [("response", "q-1", "42")] or exit(1)' >/dev/null || {
    echo "federation: alice did not get oracle's answer to q-1" >&2
    exit 1
}
run acomm --store "$A" receive --as alice

section "8. builder on node-b publishes a capability; node-a sees it in the room's catalog"
run acomm --store "$A" agent own alice
run acomm --store "$B" agent own builder
wait_for "node-a to see builder's owner" 20 owner_seen_builder
wait_for "node-b to see alice's owner" 20 owner_seen_alice
cat > b/release.json <<'JSON'
{"type": "object", "required": ["verdict"],
 "properties": {"verdict": {"enum": ["pass", "fail"]}, "checks": {"type": "integer"}}}
JSON
say "the output contract, b/release.json (a JSON Schema):"
sed 's/^/    /' b/release.json
run acomm --store "$B" capability host builder skills/release-exec@1.0
run acomm --store "$B" capability publish release-checks --owner builder \
    --delegation-skill skills/release-request@1.0 --executor-skill skills/release-exec@1.0 \
    --schema b/release.json --eta 15m
wait_for "the capability in node-a's catalog" 20 capability_on_a
run acomm --store "$A" capability list

section "9. The fan-out reached alice on node-a: she installs the delegation skill"
install=""
deadline=$((SECONDS + 20))
until install=$(install_task_on_a 2>/dev/null); do
    ((SECONDS < deadline)) || { echo "federation: no distribution task for alice" >&2; exit 1; }
    sleep 0.2
done
run acomm --store "$A" task accept "$install" --as alice
run acomm --store "$A" task complete "$install" \
    "{\"status\": \"installed\", \"version\": \"1.0\", \"at\": \"$(date -u +%FT%TZ)\"}" --as alice
wait_for "alice's install on node-b" 20 installed_on_b
say "node-b: who installed which version (oracle has not answered)"
run acomm --store "$B" capability show release-checks

section "10. alice delegates a task through the capability, with an ETA required"
show acomm --store "$A" --json task create --capability release-checks --eta-required \
    "Run the release checks" --as alice
task=$(acomm --store "$A" --json task create --capability release-checks --eta-required \
    "Run the release checks" --as alice | json 'd["global_id"]')
say "task $task: routed to builder on node-b (the catalog's owner), a task_create event"
wait_for "the task on node-b" 20 task_on_b

section "11. builder on node-b accepts it with an ETA and reports progress"
run acomm --store "$B" task accept "$task" --eta 10m --plan "unit tests, then the build" \
    --as builder
run acomm --store "$B" task update "$task" --progress 40 --note "unit tests pass" --as builder
wait_for "the progress on node-a" 20 task_on_a '["state"] == "updated" and d["progress"] == 40'
say "node-a, after fed pull: the ETA and the progress came back"
run acomm --store "$A" task show "$task"

section "12. builder completes it within the schema; both nodes agree; alice has the result"
run acomm --store "$B" task complete "$task" '{"verdict": "pass", "checks": 12}' --as builder
wait_for "the completion on node-a" 20 task_on_a '["state"] == "completed"'
say "node-a:"
run acomm --store "$A" task show "$task"
say "node-b:"
run acomm --store "$B" task show "$task"
alike="$(python3 - "$A" "$B" "$task" <<'PY'
import json, subprocess, sys
def doc(store):
    out = subprocess.run(["acomm", "--store", store, "--json", "task", "show", sys.argv[3]],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return (d["state"], d["eta_at"], d["progress"],
            [(e["event"], e["at"], e["event_id"]) for e in d["history"]])
print(doc(sys.argv[1]) == doc(sys.argv[2]))
PY
)"
[[ "$alike" == True ]] || { echo "federation: the two nodes' task show differ" >&2; exit 1; }
say "the same state, ETA, progress and history on both nodes"
run acomm --store "$A" receive --as alice

section "13. Both gateways stopped cleanly (SIGTERM, waited for)"
stop node-b "$pid_b"
stop node-a "$pid_a"
pids=()
run acomm --store "$A" gateway status || true   # exit 7: no gateway runs now
