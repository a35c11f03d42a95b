#!/usr/bin/env bash
# acomm agent dispatch: three agent scripts hand work to each other through one store, driven
# by nothing but `acomm tick` (what cron would run every minute).
#
#   reporter   a person: posts bug reports on the `intake` channel, later asks for a status
#   triage     examples/agents/triage.sh:   ignores spam, forwards real bugs to the fixer
#   fixer      examples/agents/fixer.sh:    "fixes" a bug, publishes the patch for review;
#              its first attempt at a crash fails, and acomm retries it after a back-off
#   reviewer   examples/agents/reviewer.sh: approves each patch and tells the reporter
#
# The agents and their trigger rules are in config.yaml beside the store (written below).
# Each tick runs every agent's command on the messages that were due when it started; what a
# command sends is handled by the next tick. `make demo` runs this (examples/demo.sh calls it);
# alone: `bash examples/pipeline.sh` with acomm on PATH. ACOMM_DEMO_KEEP=1 keeps the store.
set -euo pipefail

if ! command -v acomm >/dev/null 2>&1; then
    echo "pipeline: acomm is not on PATH; run 'make demo' or activate .venv" >&2
    exit 1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/acomm-pipeline.XXXXXX")"
export ACOMM_STORE="$work/.acomm/store.acomm"
unset ACOMM_AGENT ACOMM_CONFIG
if [[ "${ACOMM_DEMO_KEEP:-0}" == 1 ]]; then
    trap 'echo; echo "store kept: ACOMM_STORE=$ACOMM_STORE acomm receipts"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi

# shellcheck source=examples/show.sh
source "$here/show.sh"
# One cron tick: the counters that are not 0, then what it said on stderr (failed runs).
tick() {
    show acomm tick
    local out
    out=$(acomm tick 2>"$work/tick.err")
    tr ' ' '\n' <<<"$out" | grep -v '=0$' | sed 's/^/    /' || true
    sed 's/^/    stderr: /' "$work/tick.err"
}
fail() { echo "pipeline: unexpected: $*" >&2; exit 1; }

acomm init >/dev/null
cat > "$work/.acomm/config.yaml" <<EOF
agents:
  triage:
    run: "$here/agents/triage.sh"
    on: {channels: [intake], types: [command, query]}
  fixer:
    run: "$here/agents/fixer.sh"
    on: {types: [command], from: [triage]}
    backoff: 0s    # due again at the next tick; in real life e.g. 30s, doubling each time
    jitter: 0
    max_attempts: 3
  reviewer:
    run: "$here/agents/reviewer.sh"
    on: {channels: [code], topics: ["review.#"]}
    timeout: 1m
EOF
say "config.yaml beside the store (acomm config show lists it):"
sed 's/^/    /' "$work/.acomm/config.yaml"

say "channels: intake (acks come back to the reporter), code (pub/sub, the reviewer listens)"
acomm channel create intake --type group --delivery at-least-once --as reporter >/dev/null
acomm channel join intake triage --as reporter
acomm channel create code --type pubsub --as fixer >/dev/null
acomm subscribe code 'review.#' --as reviewer

say "the reporter posts three reports"
run acomm send intake "Login page crashes on an empty password" --type command --as reporter
run acomm send intake "Buy cheap watches!!!" --type command --as reporter
run acomm send intake "Typo in README: recieve" --type command --as reporter

say "cron, minute 1: triage reads the reports (spam ignored, two bugs forwarded)"
tick
say "minute 2: the fixer works; its first attempt at the crash fails and is retried later"
tick
say "minute 3: the fixer's retry succeeds; the reviewer approves the first patch"
tick
say "minute 4: the reviewer approves the second patch"
tick
say "the reporter asks triage for a status: a query, answered by the script's stdout"
printf '$ %s\n' 'corr=$(acomm query intake "status?" --as reporter)'
corr=$(acomm query intake "status?" --as reporter)
tick

say "what the reporter got back: acks from triage (in_progress as each run starts, then the"
say "outcome), notifications from the reviewer, the answer"
printf '$ %s\n' "acomm receive --as reporter --jsonl | format"
acomm receive --as reporter --jsonl | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    print("    #{:<3} {:<9} {:<15} {}".format(m["id"], m["sender"], m["type"], m["content"]))'
say "every run has a receipt (newest first): accepted, ignored, failed with its retry time"
say "(message, agent, status, exit, attempt, reason)"
printf '$ %s\n' "acomm receipts | cut -f2-6,9"
acomm receipts | cut -f2-6,9 | sed 's/^/    /'

# the pipeline checks its own outcome, so that `make demo` fails loudly if it ever breaks
summary=$(acomm receipts --json | python3 -c 'import json, sys
r = json.load(sys.stdin)["receipts"]
print(" ".join(f"{a}:{s}" for a, s in sorted((x["agent"], x["status"]) for x in r)))')
expected="fixer:accepted fixer:accepted fixer:failed reviewer:accepted reviewer:accepted"
expected+=" triage:accepted triage:accepted triage:accepted triage:ignored"
[[ $summary == "$expected" ]] || fail "receipts are '$summary'"
answer=$(acomm thread "$corr" --json | python3 -c 'import json, sys
print(json.load(sys.stdin)["messages"][-1]["content"])')
[[ $answer == "triage so far: 2 reports forwarded to the fixer, 1 ignored" ]] \
    || fail "the status answer is '$answer'"
say "nothing was dead-lettered: every message was handled"
[[ $(acomm deadletter list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["total_count"])') == 0 ]] \
    || fail "dead letters"
