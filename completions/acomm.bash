# bash completion for acomm                                     -*- shell-script -*-
# Generated from acomm's command tree by `make docs` (python -m acomm_cli.cli.docgen); do not edit.
# Load it with `source completions/acomm.bash`, or `eval "$(acomm completions bash)"`
# in ~/.bashrc; bash-completion also finds it installed as
# $PREFIX/share/bash-completion/completions/acomm.

_acomm_subcommands() {
    case $1 in
        '') echo 'init status config channel send publish subscribe unsubscribe subscriptions receive ack nack extend query respond thread trace task capability incident messages show attachment cursor schedule cancel deadletter tick dispatch receipts flush compact stats doctor completions export audit bridge node invite agent peers fed gateway token mcp ui web' ;;
        'config') echo 'show set get' ;;
        'channel') echo 'create join leave list show pause resume drain close admin update delete' ;;
        'task') echo 'create accept update complete fail list show' ;;
        'capability') echo 'host publish unpublish list show' ;;
        'incident') echo 'list show resolve' ;;
        'attachment') echo 'list get' ;;
        'cursor') echo 'create list show seek delete' ;;
        'schedule') echo 'create list show pause resume delete' ;;
        'deadletter') echo 'list show replay discard purge' ;;
        'dispatch') echo 'rules' ;;
        'bridge') echo 'sync' ;;
        'node') echo 'init' ;;
        'invite') echo 'create list revoke' ;;
        'agent') echo 'register list show update retire own disown where token contacts' ;;
        'peers') echo 'add' ;;
        'fed') echo 'pull status migrate' ;;
        'gateway') echo 'serve status' ;;
        'token') echo 'create list revoke' ;;
    esac
}

_acomm_options() {
    local global='--file --store --config --json --jsonl --csv --tsv --no-headers -q --quiet -v --verbose --no-color --token-file -V --version -h --help'
    case $1 in
        'init') echo "$global --admin" ;;
        'status') echo "$global" ;;
        'config') echo "$global" ;;
        'config show') echo "$global" ;;
        'config set') echo "$global" ;;
        'config get') echo "$global" ;;
        'channel') echo "$global" ;;
        'channel create') echo "$global -t --type --as --delivery --max-message-size --ack-timeout --max-retries --retry-backoff --retry-jitter --echo --no-echo --priority-ordering --no-priority-ordering --max-pending --dedupe-window --retention-count --retention-age --lease --message-ttl --retry-failed --no-retry-failed --ack-clock --ack-notify --if-not-exists" ;;
        'channel join') echo "$global --role --as" ;;
        'channel leave') echo "$global --as" ;;
        'channel list') echo "$global" ;;
        'channel show') echo "$global" ;;
        'channel pause') echo "$global --as" ;;
        'channel resume') echo "$global --as" ;;
        'channel drain') echo "$global --as" ;;
        'channel close') echo "$global --as" ;;
        'channel admin') echo "$global --revoke --as" ;;
        'channel update') echo "$global --as --max-message-size --ack-timeout --max-retries --retry-backoff --retry-jitter --echo --no-echo --priority-ordering --no-priority-ordering --max-pending --dedupe-window --retention-count --retention-age --lease --message-ttl --retry-failed --no-retry-failed --ack-clock --ack-notify --index-meta --drop-index-meta" ;;
        'channel delete') echo "$global --force --as" ;;
        'send') echo "$global --as --from --sender --to --batch -t --type -p --priority --topic --correlation-id --dedupe-key --meta --delay --deliver-at --ttl --format --subject --attach --trace-id --event-type --actor --target --thread --comment --parent-comment --depth --language --action-hint --occurred-at --event-id --group-key" ;;
        'publish') echo "$global --as --from --sender -t --type -p --priority --correlation-id --dedupe-key --meta --delay --deliver-at --ttl --trace-id --event-type --actor --target --thread --comment --parent-comment --depth --language --action-hint --occurred-at --event-id --group-key --require-recipient" ;;
        'subscribe') echo "$global --as --group" ;;
        'unsubscribe') echo "$global --as --group --delete" ;;
        'subscriptions') echo "$global" ;;
        'receive') echo "$global --as --recipient -c --channel --since --until -t --type --from --topic --status --grep --priority-min --sort --order --limit --offset --peek --body --wait --ack -f --follow --event-type --thread --actor --meta --cursor" ;;
        'ack') echo "$global --as --status --note" ;;
        'nack') echo "$global --as --requeue --delay --reason" ;;
        'extend') echo "$global --by --as" ;;
        'query') echo "$global --to --as --timeout --wait -p --priority --topic --meta" ;;
        'respond') echo "$global --as -p --priority" ;;
        'thread') echo "$global" ;;
        'trace') echo "$global --otlp-endpoint" ;;
        'task') echo "$global" ;;
        'task create') echo "$global --to --capability --eta-required --as" ;;
        'task accept') echo "$global --eta --plan --as" ;;
        'task update') echo "$global --progress --note --as" ;;
        'task complete') echo "$global --as" ;;
        'task fail') echo "$global --reason --as" ;;
        'task list') echo "$global --as --state --limit --offset" ;;
        'task show') echo "$global" ;;
        'capability') echo "$global" ;;
        'capability host') echo "$global --remove" ;;
        'capability publish') echo "$global --owner --delegation-skill --executor-skill --schema --eta" ;;
        'capability unpublish') echo "$global" ;;
        'capability list') echo "$global --state" ;;
        'capability show') echo "$global" ;;
        'incident') echo "$global" ;;
        'incident list') echo "$global --state --capability" ;;
        'incident show') echo "$global" ;;
        'incident resolve') echo "$global --note --as" ;;
        'messages') echo "$global -c --channel --since --until -t --type --from --topic --event-type --thread --actor --meta --status --grep --search --priority-min --sort --order --limit --offset -f --follow --correlation-id --recipient --state --trace" ;;
        'show') echo "$global" ;;
        'attachment') echo "$global" ;;
        'attachment list') echo "$global --as" ;;
        'attachment get') echo "$global -o --output --force --no-force --as" ;;
        'cursor') echo "$global" ;;
        'cursor create') echo "$global -c --channel --from-start --from-now --from-id --from-time --meta -t --type --from --topic --event-type --as" ;;
        'cursor list') echo "$global" ;;
        'cursor show') echo "$global" ;;
        'cursor seek') echo "$global --from-start --from-now --from-id --from-time" ;;
        'cursor delete') echo "$global" ;;
        'schedule') echo "$global" ;;
        'schedule create') echo "$global --every --cron --start --until --max-runs --catch-up --topic --priority --meta --as" ;;
        'schedule list') echo "$global -c --channel" ;;
        'schedule show') echo "$global" ;;
        'schedule pause') echo "$global --as" ;;
        'schedule resume') echo "$global --as" ;;
        'schedule delete') echo "$global --as" ;;
        'cancel') echo "$global --as" ;;
        'deadletter') echo "$global" ;;
        'deadletter list') echo "$global -c --channel --recipient --reason --limit --offset" ;;
        'deadletter show') echo "$global --recipient" ;;
        'deadletter replay') echo "$global --recipient --all -c --channel --reason --since --dry-run" ;;
        'deadletter discard') echo "$global --recipient" ;;
        'deadletter purge') echo "$global --older-than" ;;
        'tick') echo "$global --every --max-seconds --no-dispatch --max" ;;
        'dispatch') echo "$global --agent --max --dry-run" ;;
        'dispatch rules') echo "$global" ;;
        'receipts') echo "$global --agent --message --status --limit --offset" ;;
        'flush') echo "$global" ;;
        'compact') echo "$global --older-than --dead-letters-older-than --vacuum --dry-run" ;;
        'stats') echo "$global --as" ;;
        'doctor') echo "$global --quick --rebuild-search" ;;
        'completions') echo "$global" ;;
        'export') echo "$global --since --until --incremental --format" ;;
        'audit') echo "$global --master --out --executor-wait --html --conf" ;;
        'bridge') echo "$global" ;;
        'bridge sync') echo "$global --inbox-dir --outbox-dir --teams-dir --default-channel" ;;
        'node') echo "$global" ;;
        'node init') echo "$global --id --transport --seed --replicas --nats-creds --production" ;;
        'invite') echo "$global" ;;
        'invite create') echo "$global --expect --ttl --pin-key" ;;
        'invite list') echo "$global" ;;
        'invite revoke') echo "$global" ;;
        'agent') echo "$global" ;;
        'agent register') echo "$global --kind --display-name --description --team --update --issue-token" ;;
        'agent list') echo "$global --kind --active --all" ;;
        'agent show') echo "$global" ;;
        'agent update') echo "$global --kind --display-name --description --team --accept --admin --no-admin" ;;
        'agent retire') echo "$global" ;;
        'agent own') echo "$global --fallback" ;;
        'agent disown') echo "$global" ;;
        'agent where') echo "$global" ;;
        'agent token') echo "$global --rotate --revoke" ;;
        'agent contacts') echo "$global" ;;
        'peers') echo "$global" ;;
        'peers add') echo "$global --url" ;;
        'fed') echo "$global" ;;
        'fed pull') echo "$global --peer --max-pages --wait" ;;
        'fed status') echo "$global --latest" ;;
        'fed migrate') echo "$global --to --nats-creds" ;;
        'gateway') echo "$global" ;;
        'gateway serve') echo "$global --listen --seed --join --invite --public-url --pull --no-pull --pull-every --tls-cert --tls-key --insecure-listen --push" ;;
        'gateway status') echo "$global" ;;
        'token') echo "$global" ;;
        'token create') echo "$global --agent --ttl --scope" ;;
        'token list') echo "$global" ;;
        'token revoke') echo "$global" ;;
        'mcp') echo "$global --as --print-config --http --token" ;;
        'ui') echo "$global --as --read-only --stale" ;;
        'web') echo "$global --listen --as --read-only --tls-cert --tls-key --login --stale" ;;
        *) echo "$global" ;;
    esac
}

# The kind of value an option takes; fails for flags.
_acomm_value_kind() {
    case "$1 $2" in
        *" --file"|*" --store") echo 'file' ;;
        *" --config") echo 'file' ;;
        *" --token-file") echo 'file' ;;
        'init --admin') echo 'agent' ;;
        'channel create -t'|'channel create --type') echo 'choice:direct group broadcast pubsub queue' ;;
        'channel create --as') echo 'agent' ;;
        'channel create --delivery') echo 'choice:at-most-once at-least-once exactly-once' ;;
        'channel create --max-message-size') echo 'value' ;;
        'channel create --ack-timeout') echo 'value' ;;
        'channel create --max-retries') echo 'value' ;;
        'channel create --retry-backoff') echo 'value' ;;
        'channel create --retry-jitter') echo 'value' ;;
        'channel create --max-pending') echo 'value' ;;
        'channel create --dedupe-window') echo 'value' ;;
        'channel create --retention-count') echo 'value' ;;
        'channel create --retention-age') echo 'value' ;;
        'channel create --lease') echo 'value' ;;
        'channel create --message-ttl') echo 'value' ;;
        'channel create --ack-clock') echo 'choice:sent read' ;;
        'channel create --ack-notify') echo 'choice:all failures none' ;;
        'channel join --role') echo 'choice:member observer' ;;
        'channel join --as') echo 'agent' ;;
        'channel leave --as') echo 'agent' ;;
        'channel pause --as') echo 'agent' ;;
        'channel resume --as') echo 'agent' ;;
        'channel drain --as') echo 'agent' ;;
        'channel close --as') echo 'agent' ;;
        'channel admin --as') echo 'agent' ;;
        'channel update --as') echo 'agent' ;;
        'channel update --max-message-size') echo 'value' ;;
        'channel update --ack-timeout') echo 'value' ;;
        'channel update --max-retries') echo 'value' ;;
        'channel update --retry-backoff') echo 'value' ;;
        'channel update --retry-jitter') echo 'value' ;;
        'channel update --max-pending') echo 'value' ;;
        'channel update --dedupe-window') echo 'value' ;;
        'channel update --retention-count') echo 'value' ;;
        'channel update --retention-age') echo 'value' ;;
        'channel update --lease') echo 'value' ;;
        'channel update --message-ttl') echo 'value' ;;
        'channel update --ack-clock') echo 'choice:sent read' ;;
        'channel update --ack-notify') echo 'choice:all failures none' ;;
        'channel update --index-meta') echo 'value' ;;
        'channel update --drop-index-meta') echo 'value' ;;
        'channel delete --as') echo 'agent' ;;
        'send --as'|'send --from'|'send --sender') echo 'agent' ;;
        'send --to') echo 'agent' ;;
        'send --batch') echo 'file' ;;
        'send -t'|'send --type') echo 'choice:text command query response acknowledgment notification broadcast error' ;;
        'send -p'|'send --priority') echo 'choice:low normal high urgent critical' ;;
        'send --topic') echo 'value' ;;
        'send --correlation-id') echo 'value' ;;
        'send --dedupe-key') echo 'value' ;;
        'send --meta') echo 'value' ;;
        'send --delay') echo 'value' ;;
        'send --deliver-at') echo 'value' ;;
        'send --ttl') echo 'value' ;;
        'send --format') echo 'choice:text markdown' ;;
        'send --subject') echo 'value' ;;
        'send --attach') echo 'file' ;;
        'send --trace-id') echo 'value' ;;
        'send --event-type') echo 'value' ;;
        'send --actor') echo 'agent' ;;
        'send --target') echo 'agent' ;;
        'send --thread') echo 'value' ;;
        'send --comment') echo 'value' ;;
        'send --parent-comment') echo 'value' ;;
        'send --depth') echo 'value' ;;
        'send --language') echo 'value' ;;
        'send --action-hint') echo 'value' ;;
        'send --occurred-at') echo 'value' ;;
        'send --event-id') echo 'value' ;;
        'send --group-key') echo 'value' ;;
        'publish --as'|'publish --from'|'publish --sender') echo 'agent' ;;
        'publish -t'|'publish --type') echo 'choice:text command query response acknowledgment notification broadcast error' ;;
        'publish -p'|'publish --priority') echo 'choice:low normal high urgent critical' ;;
        'publish --correlation-id') echo 'value' ;;
        'publish --dedupe-key') echo 'value' ;;
        'publish --meta') echo 'value' ;;
        'publish --delay') echo 'value' ;;
        'publish --deliver-at') echo 'value' ;;
        'publish --ttl') echo 'value' ;;
        'publish --trace-id') echo 'value' ;;
        'publish --event-type') echo 'value' ;;
        'publish --actor') echo 'agent' ;;
        'publish --target') echo 'agent' ;;
        'publish --thread') echo 'value' ;;
        'publish --comment') echo 'value' ;;
        'publish --parent-comment') echo 'value' ;;
        'publish --depth') echo 'value' ;;
        'publish --language') echo 'value' ;;
        'publish --action-hint') echo 'value' ;;
        'publish --occurred-at') echo 'value' ;;
        'publish --event-id') echo 'value' ;;
        'publish --group-key') echo 'value' ;;
        'subscribe --as') echo 'agent' ;;
        'subscribe --group') echo 'value' ;;
        'unsubscribe --as') echo 'agent' ;;
        'unsubscribe --group') echo 'value' ;;
        'receive --as'|'receive --recipient') echo 'agent' ;;
        'receive -c'|'receive --channel') echo 'channel' ;;
        'receive --since') echo 'value' ;;
        'receive --until') echo 'value' ;;
        'receive -t'|'receive --type') echo 'choice:text command query response acknowledgment notification broadcast error' ;;
        'receive --from') echo 'agent' ;;
        'receive --topic') echo 'value' ;;
        'receive --status') echo 'choice:sent delivered acknowledged dead_letter in_progress' ;;
        'receive --grep') echo 'value' ;;
        'receive --priority-min') echo 'choice:low normal high urgent critical' ;;
        'receive --sort') echo 'choice:created priority id' ;;
        'receive --order') echo 'choice:asc desc' ;;
        'receive --limit') echo 'value' ;;
        'receive --offset') echo 'value' ;;
        'receive --wait') echo 'value' ;;
        'receive --ack') echo 'choice:received in_progress completed failed' ;;
        'receive --event-type') echo 'value' ;;
        'receive --thread') echo 'value' ;;
        'receive --actor') echo 'agent' ;;
        'receive --meta') echo 'value' ;;
        'receive --cursor') echo 'value' ;;
        'ack --as') echo 'agent' ;;
        'ack --status') echo 'choice:received in_progress completed failed' ;;
        'ack --note') echo 'value' ;;
        'nack --as') echo 'agent' ;;
        'nack --delay') echo 'value' ;;
        'nack --reason') echo 'value' ;;
        'extend --by') echo 'value' ;;
        'extend --as') echo 'agent' ;;
        'query --to') echo 'agent' ;;
        'query --as') echo 'agent' ;;
        'query --timeout') echo 'value' ;;
        'query --wait') echo 'value' ;;
        'query -p'|'query --priority') echo 'choice:low normal high urgent critical' ;;
        'query --topic') echo 'value' ;;
        'query --meta') echo 'value' ;;
        'respond --as') echo 'agent' ;;
        'respond -p'|'respond --priority') echo 'choice:low normal high urgent critical' ;;
        'trace --otlp-endpoint') echo 'value' ;;
        'task create --to') echo 'agent' ;;
        'task create --capability') echo 'value' ;;
        'task create --as') echo 'agent' ;;
        'task accept --eta') echo 'value' ;;
        'task accept --plan') echo 'value' ;;
        'task accept --as') echo 'agent' ;;
        'task update --progress') echo 'value' ;;
        'task update --note') echo 'value' ;;
        'task update --as') echo 'agent' ;;
        'task complete --as') echo 'agent' ;;
        'task fail --reason') echo 'value' ;;
        'task fail --as') echo 'agent' ;;
        'task list --as') echo 'agent' ;;
        'task list --state') echo 'choice:created accepted updated completed failed overdue incident' ;;
        'task list --limit') echo 'value' ;;
        'task list --offset') echo 'value' ;;
        'capability publish --owner') echo 'agent' ;;
        'capability publish --delegation-skill') echo 'value' ;;
        'capability publish --executor-skill') echo 'value' ;;
        'capability publish --schema') echo 'value' ;;
        'capability publish --eta') echo 'value' ;;
        'capability list --state') echo 'choice:published unpublished' ;;
        'incident list --state') echo 'choice:open resolved' ;;
        'incident list --capability') echo 'value' ;;
        'incident resolve --note') echo 'value' ;;
        'incident resolve --as') echo 'agent' ;;
        'messages -c'|'messages --channel') echo 'channel' ;;
        'messages --since') echo 'value' ;;
        'messages --until') echo 'value' ;;
        'messages -t'|'messages --type') echo 'choice:text command query response acknowledgment notification broadcast error' ;;
        'messages --from') echo 'agent' ;;
        'messages --topic') echo 'value' ;;
        'messages --event-type') echo 'value' ;;
        'messages --thread') echo 'value' ;;
        'messages --actor') echo 'agent' ;;
        'messages --meta') echo 'value' ;;
        'messages --status') echo 'choice:sent delivered acknowledged dead_letter in_progress' ;;
        'messages --grep') echo 'value' ;;
        'messages --search') echo 'value' ;;
        'messages --priority-min') echo 'choice:low normal high urgent critical' ;;
        'messages --sort') echo 'choice:created priority id rank' ;;
        'messages --order') echo 'choice:asc desc' ;;
        'messages --limit') echo 'value' ;;
        'messages --offset') echo 'value' ;;
        'messages --correlation-id') echo 'value' ;;
        'messages --recipient') echo 'agent' ;;
        'messages --state') echo 'choice:queued waiting unread read acked dead' ;;
        'messages --trace') echo 'value' ;;
        'attachment list --as') echo 'agent' ;;
        'attachment get -o'|'attachment get --output') echo 'file' ;;
        'attachment get --as') echo 'agent' ;;
        'cursor create -c'|'cursor create --channel') echo 'channel' ;;
        'cursor create --from-id') echo 'value' ;;
        'cursor create --from-time') echo 'value' ;;
        'cursor create --meta') echo 'value' ;;
        'cursor create -t'|'cursor create --type') echo 'choice:text command query response acknowledgment notification broadcast error' ;;
        'cursor create --from') echo 'agent' ;;
        'cursor create --topic') echo 'value' ;;
        'cursor create --event-type') echo 'value' ;;
        'cursor create --as') echo 'agent' ;;
        'cursor seek --from-id') echo 'value' ;;
        'cursor seek --from-time') echo 'value' ;;
        'schedule create --every') echo 'value' ;;
        'schedule create --cron') echo 'value' ;;
        'schedule create --start') echo 'value' ;;
        'schedule create --until') echo 'value' ;;
        'schedule create --max-runs') echo 'value' ;;
        'schedule create --catch-up') echo 'value' ;;
        'schedule create --topic') echo 'value' ;;
        'schedule create --priority') echo 'choice:low normal high urgent critical' ;;
        'schedule create --meta') echo 'value' ;;
        'schedule create --as') echo 'agent' ;;
        'schedule list -c'|'schedule list --channel') echo 'channel' ;;
        'schedule pause --as') echo 'agent' ;;
        'schedule resume --as') echo 'agent' ;;
        'schedule delete --as') echo 'agent' ;;
        'cancel --as') echo 'agent' ;;
        'deadletter list -c'|'deadletter list --channel') echo 'channel' ;;
        'deadletter list --recipient') echo 'agent' ;;
        'deadletter list --reason') echo 'choice:max_retries_exceeded expired recipient_left dispatch_failed no_owner owner_offline federation_max_attempts nacked channel_deleted cancelled pool_deleted' ;;
        'deadletter list --limit') echo 'value' ;;
        'deadletter list --offset') echo 'value' ;;
        'deadletter show --recipient') echo 'agent' ;;
        'deadletter replay --recipient') echo 'agent' ;;
        'deadletter replay -c'|'deadletter replay --channel') echo 'channel' ;;
        'deadletter replay --reason') echo 'choice:max_retries_exceeded expired recipient_left dispatch_failed no_owner owner_offline federation_max_attempts nacked channel_deleted cancelled pool_deleted' ;;
        'deadletter replay --since') echo 'value' ;;
        'deadletter discard --recipient') echo 'agent' ;;
        'deadletter purge --older-than') echo 'value' ;;
        'tick --every') echo 'value' ;;
        'tick --max-seconds') echo 'value' ;;
        'tick --max') echo 'value' ;;
        'dispatch --agent') echo 'agent' ;;
        'dispatch --max') echo 'value' ;;
        'receipts --agent') echo 'agent' ;;
        'receipts --message') echo 'value' ;;
        'receipts --status') echo 'choice:running accepted ignored failed' ;;
        'receipts --limit') echo 'value' ;;
        'receipts --offset') echo 'value' ;;
        'compact --older-than') echo 'value' ;;
        'compact --dead-letters-older-than') echo 'value' ;;
        'stats --as') echo 'agent' ;;
        'export --since') echo 'value' ;;
        'export --until') echo 'value' ;;
        'export --format') echo 'choice:parquet jsonl' ;;
        'audit --master') echo 'value' ;;
        'audit --out') echo 'dir' ;;
        'audit --executor-wait') echo 'value' ;;
        'audit --conf') echo 'value' ;;
        'bridge sync --inbox-dir') echo 'dir' ;;
        'bridge sync --outbox-dir') echo 'dir' ;;
        'bridge sync --teams-dir') echo 'dir' ;;
        'bridge sync --default-channel') echo 'channel' ;;
        'node init --id') echo 'value' ;;
        'node init --transport') echo 'value' ;;
        'node init --replicas') echo 'value' ;;
        'node init --nats-creds') echo 'value' ;;
        'invite create --expect') echo 'value' ;;
        'invite create --ttl') echo 'value' ;;
        'invite create --pin-key') echo 'value' ;;
        'agent register --kind') echo 'choice:agent human service' ;;
        'agent register --display-name') echo 'value' ;;
        'agent register --description') echo 'value' ;;
        'agent register --team') echo 'value' ;;
        'agent list --kind') echo 'choice:agent human service' ;;
        'agent list --active') echo 'value' ;;
        'agent update --kind') echo 'choice:agent human service' ;;
        'agent update --display-name') echo 'value' ;;
        'agent update --description') echo 'value' ;;
        'agent update --team') echo 'value' ;;
        'agent update --accept') echo 'choice:anyone team contacts nobody' ;;
        'agent own --fallback') echo 'value' ;;
        'peers add --url') echo 'value' ;;
        'fed pull --peer') echo 'value' ;;
        'fed pull --max-pages') echo 'value' ;;
        'fed pull --wait') echo 'value' ;;
        'fed status --latest') echo 'value' ;;
        'fed migrate --to') echo 'value' ;;
        'fed migrate --nats-creds') echo 'value' ;;
        'gateway serve --listen') echo 'value' ;;
        'gateway serve --join') echo 'value' ;;
        'gateway serve --invite') echo 'value' ;;
        'gateway serve --public-url') echo 'value' ;;
        'gateway serve --pull-every') echo 'value' ;;
        'gateway serve --tls-cert') echo 'value' ;;
        'gateway serve --tls-key') echo 'value' ;;
        'token create --agent') echo 'agent' ;;
        'token create --ttl') echo 'value' ;;
        'token create --scope') echo 'value' ;;
        'mcp --as') echo 'agent' ;;
        'mcp --print-config') echo 'choice:claude json' ;;
        'mcp --http') echo 'value' ;;
        'mcp --token') echo 'value' ;;
        'ui --as') echo 'agent' ;;
        'ui --stale') echo 'value' ;;
        'web --listen') echo 'value' ;;
        'web --as') echo 'agent' ;;
        'web --tls-cert') echo 'value' ;;
        'web --tls-key') echo 'value' ;;
        'web --stale') echo 'value' ;;
        *) return 1 ;;
    esac
}

# The kind of the Nth (from 0) argument of a command.
_acomm_positional() {
    case "$1 $2" in
        'init 0') echo 'dir' ;;
        'config set 0') echo 'value' ;;
        'config set 1') echo 'value' ;;
        'config get 0') echo 'value' ;;
        'channel create 0') echo 'value' ;;
        'channel join 0') echo 'channel' ;;
        'channel join 1') echo 'agent' ;;
        'channel leave 0') echo 'channel' ;;
        'channel leave 1') echo 'agent' ;;
        'channel show 0') echo 'channel' ;;
        'channel pause 0') echo 'channel' ;;
        'channel resume 0') echo 'channel' ;;
        'channel drain 0') echo 'channel' ;;
        'channel close 0') echo 'channel' ;;
        'channel admin 0') echo 'channel' ;;
        'channel admin 1') echo 'agent' ;;
        'channel update 0') echo 'channel' ;;
        'channel delete 0') echo 'channel' ;;
        'send 0') echo 'channel' ;;
        'send 1') echo 'value' ;;
        'publish 0') echo 'channel' ;;
        'publish 1') echo 'value' ;;
        'publish 2') echo 'value' ;;
        'subscribe 0') echo 'channel' ;;
        'subscribe 1') echo 'value' ;;
        'unsubscribe 0') echo 'channel' ;;
        'unsubscribe 1') echo 'value' ;;
        'subscriptions 0') echo 'channel' ;;
        'receive 0') echo 'channel' ;;
        'ack '*) echo 'value' ;;
        'nack 0') echo 'value' ;;
        'extend 0') echo 'value' ;;
        'query 0') echo 'channel' ;;
        'query 1') echo 'value' ;;
        'respond 0') echo 'value' ;;
        'respond 1') echo 'value' ;;
        'thread 0') echo 'value' ;;
        'trace 0') echo 'value' ;;
        'task create 0') echo 'value' ;;
        'task accept 0') echo 'value' ;;
        'task update 0') echo 'value' ;;
        'task complete 0') echo 'value' ;;
        'task complete 1') echo 'value' ;;
        'task fail 0') echo 'value' ;;
        'task show 0') echo 'value' ;;
        'capability host 0') echo 'agent' ;;
        'capability host 1') echo 'value' ;;
        'capability publish 0') echo 'value' ;;
        'capability unpublish 0') echo 'value' ;;
        'capability show 0') echo 'value' ;;
        'incident show 0') echo 'value' ;;
        'incident resolve 0') echo 'value' ;;
        'show 0') echo 'value' ;;
        'attachment list 0') echo 'value' ;;
        'attachment get 0') echo 'value' ;;
        'attachment get 1') echo 'value' ;;
        'cursor create 0') echo 'value' ;;
        'cursor show 0') echo 'value' ;;
        'cursor seek 0') echo 'value' ;;
        'cursor delete 0') echo 'value' ;;
        'schedule create 0') echo 'channel' ;;
        'schedule create 1') echo 'value' ;;
        'schedule show 0') echo 'value' ;;
        'schedule pause 0') echo 'value' ;;
        'schedule resume 0') echo 'value' ;;
        'schedule delete 0') echo 'value' ;;
        'cancel 0') echo 'value' ;;
        'deadletter show 0') echo 'value' ;;
        'deadletter replay 0') echo 'value' ;;
        'deadletter discard 0') echo 'value' ;;
        'completions 0') echo 'choice:bash zsh fish' ;;
        'export 0') echo 'dir' ;;
        'audit '*) echo 'dir' ;;
        'invite revoke 0') echo 'value' ;;
        'agent register '*) echo 'agent' ;;
        'agent show 0') echo 'agent' ;;
        'agent update 0') echo 'agent' ;;
        'agent retire 0') echo 'agent' ;;
        'agent own 0') echo 'agent' ;;
        'agent disown 0') echo 'agent' ;;
        'agent where 0') echo 'agent' ;;
        'agent token 0') echo 'agent' ;;
        'agent contacts 0') echo 'agent' ;;
        'agent contacts 1') echo 'choice:add remove' ;;
        'agent contacts 2') echo 'agent' ;;
        'peers add 0') echo 'value' ;;
        'token revoke 0') echo 'value' ;;
        *) return 1 ;;
    esac
}

# Channel names and agent ids from the store (with the line's --store, if any).
_acomm_words() {
    command acomm "${_acomm_store[@]}" __complete "$1" 2>/dev/null
}

_acomm_complete_kind() {
    local kind=$1 cur=$2
    case $kind in
        channel|agent)
            mapfile -t COMPREPLY < <(compgen -W "$(_acomm_words "${kind}s")" -- "$cur") ;;
        file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        choice:*) mapfile -t COMPREPLY < <(compgen -W "${kind#choice:}" -- "$cur") ;;
    esac
}

_acomm() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local path="" npos=0 i w kind subs
    local -a _acomm_store=()
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            dead-letters) w=deadletter ;;
        esac
        if [[ $w == -* ]]; then
            if [[ ${COMP_WORDS[i+1]} == = ]]; then  # --opt=value, split by COMP_WORDBREAKS
                [[ $w == --store || $w == --file ]] && _acomm_store=(--store "${COMP_WORDS[i+2]}")
                ((i += 2))
            elif _acomm_value_kind "$path" "$w" >/dev/null; then
                [[ $w == --store || $w == --file ]] && _acomm_store=(--store "${COMP_WORDS[i+1]}")
                ((i++))
            fi
            continue
        fi
        subs=" $(_acomm_subcommands "$path") "
        if [[ $npos == 0 && $subs == *" $w "* ]]; then
            path=${path:+$path }$w
        else
            ((npos++))
        fi
    done
    if [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    if [[ $prev == -* ]] && kind=$(_acomm_value_kind "$path" "$prev"); then
        _acomm_complete_kind "$kind" "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_acomm_options "$path")" -- "$cur")
        return 0
    fi
    subs=$(_acomm_subcommands "$path")
    if [[ -n $subs ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
        return 0
    fi
    if kind=$(_acomm_positional "$path" "$npos"); then
        _acomm_complete_kind "$kind" "$cur"
    fi
    return 0
}

complete -F _acomm acomm
