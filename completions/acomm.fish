# fish completion for acomm.
# Generated from acomm's command tree by `make docs` (python -m acomm_cli.cli.docgen); do not edit.
# Install it as ~/.config/fish/completions/acomm.fish, or load it with
# `acomm completions fish | source`.

function __acomm_subcommands
    switch "$argv[1]"
        case ''
            echo init status config channel send publish subscribe unsubscribe subscriptions receive ack nack extend query respond thread trace task capability incident messages show attachment cursor schedule cancel deadletter tick dispatch receipts flush compact stats doctor completions export audit bridge node invite agent peers fed gateway token mcp ui web
        case 'config'
            echo show set get
        case 'channel'
            echo create join leave list show pause resume drain close admin update delete
        case 'task'
            echo create accept update complete fail list show
        case 'capability'
            echo host publish unpublish list show
        case 'incident'
            echo list show resolve
        case 'attachment'
            echo list get
        case 'cursor'
            echo create list show seek delete
        case 'schedule'
            echo create list show pause resume delete
        case 'deadletter'
            echo list show replay discard purge
        case 'dispatch'
            echo rules
        case 'bridge'
            echo sync
        case 'node'
            echo init
        case 'invite'
            echo create list revoke
        case 'agent'
            echo register list show update retire own disown where token contacts
        case 'peers'
            echo add
        case 'fed'
            echo pull status migrate
        case 'gateway'
            echo serve status
        case 'token'
            echo create list revoke
    end
end

# Options that take a value (their value is not an argument).
function __acomm_valued
    echo --file --store --config --token-file
    switch "$argv[1]"
        case 'init'
            echo --admin
        case 'channel create'
            echo -t --type --as --delivery --max-message-size --ack-timeout --max-retries --retry-backoff --retry-jitter --max-pending --dedupe-window --retention-count --retention-age --lease --message-ttl --ack-clock --ack-notify
        case 'channel join'
            echo --role --as
        case 'channel leave'
            echo --as
        case 'channel pause'
            echo --as
        case 'channel resume'
            echo --as
        case 'channel drain'
            echo --as
        case 'channel close'
            echo --as
        case 'channel admin'
            echo --as
        case 'channel update'
            echo --as --max-message-size --ack-timeout --max-retries --retry-backoff --retry-jitter --max-pending --dedupe-window --retention-count --retention-age --lease --message-ttl --ack-clock --ack-notify --index-meta --drop-index-meta
        case 'channel delete'
            echo --as
        case 'send'
            echo --as --from --sender --to --batch -t --type -p --priority --topic --correlation-id --dedupe-key --meta --delay --deliver-at --ttl --format --subject --attach --trace-id --event-type --actor --target --thread --comment --parent-comment --depth --language --action-hint --occurred-at --event-id --group-key
        case 'publish'
            echo --as --from --sender -t --type -p --priority --correlation-id --dedupe-key --meta --delay --deliver-at --ttl --trace-id --event-type --actor --target --thread --comment --parent-comment --depth --language --action-hint --occurred-at --event-id --group-key
        case 'subscribe'
            echo --as --group
        case 'unsubscribe'
            echo --as --group
        case 'receive'
            echo --as --recipient -c --channel --since --until -t --type --from --topic --status --grep --priority-min --sort --order --limit --offset --wait --ack --event-type --thread --actor --meta --cursor
        case 'ack'
            echo --as --status --note
        case 'nack'
            echo --as --delay --reason
        case 'extend'
            echo --by --as
        case 'query'
            echo --to --as --timeout --wait -p --priority --topic --meta
        case 'respond'
            echo --as -p --priority
        case 'trace'
            echo --otlp-endpoint
        case 'task create'
            echo --to --capability --as
        case 'task accept'
            echo --eta --plan --as
        case 'task update'
            echo --progress --note --as
        case 'task complete'
            echo --as
        case 'task fail'
            echo --reason --as
        case 'task list'
            echo --as --state --limit --offset
        case 'capability publish'
            echo --owner --delegation-skill --executor-skill --schema --eta
        case 'capability list'
            echo --state
        case 'incident list'
            echo --state --capability
        case 'incident resolve'
            echo --note --as
        case 'messages'
            echo -c --channel --since --until -t --type --from --topic --event-type --thread --actor --meta --status --grep --search --priority-min --sort --order --limit --offset --correlation-id --recipient --state --trace
        case 'attachment list'
            echo --as
        case 'attachment get'
            echo -o --output --as
        case 'cursor create'
            echo -c --channel --from-id --from-time --meta -t --type --from --topic --event-type --as
        case 'cursor seek'
            echo --from-id --from-time
        case 'schedule create'
            echo --every --cron --start --until --max-runs --catch-up --topic --priority --meta --as
        case 'schedule list'
            echo -c --channel
        case 'schedule pause'
            echo --as
        case 'schedule resume'
            echo --as
        case 'schedule delete'
            echo --as
        case 'cancel'
            echo --as
        case 'deadletter list'
            echo -c --channel --recipient --reason --limit --offset
        case 'deadletter show'
            echo --recipient
        case 'deadletter replay'
            echo --recipient -c --channel --reason --since
        case 'deadletter discard'
            echo --recipient
        case 'deadletter purge'
            echo --older-than
        case 'tick'
            echo --every --max-seconds --max
        case 'dispatch'
            echo --agent --max
        case 'receipts'
            echo --agent --message --status --limit --offset
        case 'compact'
            echo --older-than --dead-letters-older-than
        case 'stats'
            echo --as
        case 'export'
            echo --since --until --format
        case 'audit'
            echo --master --out --executor-wait --conf
        case 'bridge sync'
            echo --inbox-dir --outbox-dir --teams-dir --default-channel
        case 'node init'
            echo --id --transport --replicas --nats-creds
        case 'invite create'
            echo --expect --ttl --pin-key
        case 'agent register'
            echo --kind --display-name --description --team
        case 'agent list'
            echo --kind --active
        case 'agent update'
            echo --kind --display-name --description --team --accept
        case 'agent own'
            echo --fallback
        case 'peers add'
            echo --url
        case 'fed pull'
            echo --peer --max-pages --wait
        case 'fed status'
            echo --latest
        case 'fed migrate'
            echo --to --nats-creds
        case 'gateway serve'
            echo --listen --join --invite --public-url --pull-every --tls-cert --tls-key
        case 'token create'
            echo --agent --ttl --scope
        case 'mcp'
            echo --as --print-config --http --token
        case 'ui'
            echo --as --stale
        case 'web'
            echo --listen --as --tls-cert --tls-key --stale
    end
end

# The command path and argument count of the command line being completed.
function __acomm_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path
    set -l npos 0
    set -l skip 0
    for w in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case dead-letters
                set w deadletter
        end
        if string match -q -- '-*' $w
            if not string match -q -- '*=*' $w
                and contains -- $w (string split ' ' -- (__acomm_valued (string join ' ' -- $path)))
                set skip 1
            end
            continue
        end
        set -l subs (string split ' ' -- (__acomm_subcommands (string join ' ' -- $path)))
        if test $npos = 0; and contains -- $w $subs
            set -a path $w
        else
            set npos (math $npos + 1)
        end
    end
    echo (string join ' ' -- $path)
    echo $npos
end

function __acomm_is --description 'is the command line at this command path?'
    set -l state (__acomm_state)
    test "$state[1]" = "$argv[1]"
end

function __acomm_at --description 'is the next argument of this command the Nth (N+: or later)?'
    set -l state (__acomm_state)
    test "$state[1]" = "$argv[1]"; or return 1
    if string match -q -- '*+' $argv[2]
        test $state[2] -ge (string trim -r -c + -- $argv[2])
    else
        test $state[2] -eq $argv[2]
    end
end

# Channel names and agent ids from the store (a --store given on the line is passed on).
function __acomm_words
    set -l tokens (commandline -opc)
    set -l store
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --store --file
                set store --store $tokens[(math $i + 1)]
            case '--store=*' '--file=*'
                set store --store (string replace -r '^[^=]*=' '' -- $tokens[$i])
        end
    end
    command acomm $store __complete $argv[1] 2>/dev/null
end

complete -c acomm -f

# Global options, accepted after any subcommand too.
complete -c acomm -l file -l store -r -F
complete -c acomm -l file -l store -r -F -d 'The store file (default: $ACOMM_STORE, then the nearest .acomm/stor...'
complete -c acomm -l config -r -F
complete -c acomm -l config -r -F -d 'Config file (default: $ACOMM_CONFIG, then config.yaml beside the st...'
complete -c acomm -l json -d 'Print one JSON document'
complete -c acomm -l jsonl -d 'A listing: one JSON object a row'
complete -c acomm -l csv -d 'A listing: comma-separated values, with a header row'
complete -c acomm -l tsv -d 'A listing: tab-separated values, with a header row'
complete -c acomm -l no-headers -d '--csv or --tsv without the header row'
complete -c acomm -s q -l quiet -d 'No `acomm: note:` lines on stderr (warnings and errors stay)'
complete -c acomm -s v -l verbose -d 'Also say on stderr which store and config file were used, and how l...'
complete -c acomm -l no-color -d 'No colour'
complete -c acomm -l token-file -r -F
complete -c acomm -l token-file -r -F -d 'The acting agent\'s secret, in a file only its owner may read (ident...'
complete -c acomm -s V -l version -d 'Print the version (with -v: also Python\'s, SQLite\'s and the extras\')'
complete -c acomm -s h -l help -d 'Show help'

# acomm
complete -c acomm -f -n '__acomm_is \'\'' -a 'init' -d 'Create a store and a commented config.yaml beside it'
complete -c acomm -f -n '__acomm_is \'\'' -a 'status' -d 'Show the store\'s path, schema version, counts, size and flush policy'
complete -c acomm -f -n '__acomm_is \'\'' -a 'config' -d 'Inspect and change the configuration'
complete -c acomm -f -n '__acomm_is \'\'' -a 'channel' -d 'Create and manage channels'
complete -c acomm -f -n '__acomm_is \'\'' -a 'send' -d 'Send a message; prints its id'
complete -c acomm -f -n '__acomm_is \'\'' -a 'publish' -d 'Publish on a pubsub channel to every matching subscription; prints...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'subscribe' -d 'Receive messages whose topic matches PATTERN (joins the channel if...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'unsubscribe' -d 'Remove a subscription (repeating it changes nothing)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'subscriptions' -d 'List a pubsub channel\'s subscriptions'
complete -c acomm -f -n '__acomm_is \'\'' -a 'receive' -d 'Unread messages for an agent, oldest first; marks them read unless...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'ack' -d 'Acknowledge messages: stops their retries and tells each sender'
complete -c acomm -f -n '__acomm_is \'\'' -a 'nack' -d 'Give a message back: requeue it, or dead-letter it now'
complete -c acomm -f -n '__acomm_is \'\'' -a 'extend' -d 'Renew the lease on a message you hold; prints when it ends'
complete -c acomm -f -n '__acomm_is \'\'' -a 'query' -d 'Ask a question; prints its correlation id (or, with --wait, the fir...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'respond' -d 'Answer a query, to its asker; counts as your ack; prints the id'
complete -c acomm -f -n '__acomm_is \'\'' -a 'thread' -d 'A query (or command) and everything correlated with it, in order'
complete -c acomm -f -n '__acomm_is \'\'' -a 'trace' -d 'A trace as a tree: each hop under its cause, with its latency'
complete -c acomm -f -n '__acomm_is \'\'' -a 'task' -d 'Tasks: work one agent delegates to another, with an ETA and progress'
complete -c acomm -f -n '__acomm_is \'\'' -a 'capability' -d 'Capabilities: what an agent can be asked to do, under a contract'
complete -c acomm -f -n '__acomm_is \'\'' -a 'incident' -d 'Review incidents: misfires of published capabilities'
complete -c acomm -f -n '__acomm_is \'\'' -a 'messages' -d 'Message history, newest first (changes nothing)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'show' -d 'One message with the delivery state of every recipient'
complete -c acomm -f -n '__acomm_is \'\'' -a 'attachment' -d 'The files messages carry (`send --attach FILE`)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'cursor' -d 'Durable replay cursors over a channel\'s history'
complete -c acomm -f -n '__acomm_is \'\'' -a 'schedule' -d 'Recurring sends: every DURATION or on a cron expression (UTC)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'cancel' -d 'Withdraw a --delay/--deliver-at message that has not been delivered...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'deadletter' -d 'Inspect and recover dead letters'
complete -c acomm -f -n '__acomm_is \'\'' -a 'tick' -d 'Advance timers: deliver, retry, dead-letter; then run configured ag...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'dispatch' -d 'Run configured agents\' commands on their due messages, one receipt...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'receipts' -d 'List agent dispatch receipts (one per run), newest first'
complete -c acomm -f -n '__acomm_is \'\'' -a 'flush' -d 'Checkpoint the WAL into the database file and truncate it'
complete -c acomm -f -n '__acomm_is \'\'' -a 'compact' -d 'Remove messages that are done with, and their deliveries, in one tr...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'stats' -d 'Counts per agent and channel, tasks, incidents, and the store\'s size'
complete -c acomm -f -n '__acomm_is \'\'' -a 'doctor' -d 'Check the store\'s integrity, schema and delivery invariants'
complete -c acomm -f -n '__acomm_is \'\'' -a 'completions' -d 'Print the completion script for a shell: bash, zsh or fish'
complete -c acomm -f -n '__acomm_is \'\'' -a 'export' -d 'Export the history as Parquet (or JSON Lines) datasets, the input o...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'audit' -d 'Audit exports on Apache Spark: volume, latency, retries, dead lette...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'bridge' -d 'The mailbox bridge: inbox files, team inboxes, response files'
complete -c acomm -f -n '__acomm_is \'\'' -a 'node' -d 'This store\'s federation node identity'
complete -c acomm -f -n '__acomm_is \'\'' -a 'invite' -d 'Invite other nodes to join this one (a seed)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'agent' -d 'The agent directory, and which node owns an agent (federation)'
complete -c acomm -f -n '__acomm_is \'\'' -a 'peers' -d 'The other federation nodes this node knows'
complete -c acomm -f -n '__acomm_is \'\'' -a 'fed' -d 'Federation: exchange with the other nodes'
complete -c acomm -f -n '__acomm_is \'\'' -a 'gateway' -d 'This node\'s gateway: the exchange, the state room, the outbox'
complete -c acomm -f -n '__acomm_is \'\'' -a 'token' -d 'Session tokens for external agents at this node\'s gateway'
complete -c acomm -f -n '__acomm_is \'\'' -a 'mcp' -d 'Serve the store to an MCP client (Claude Code, Codex...) as one agent'
complete -c acomm -f -n '__acomm_is \'\'' -a 'ui' -d 'A live dashboard of the store in the terminal (Textual; the `ui` ex...'
complete -c acomm -f -n '__acomm_is \'\'' -a 'web' -d 'Serve the operator\'s web console on the store (the `web` extra)'

# acomm init
complete -c acomm -n '__acomm_is \'init\'' -l admin -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'init\'' -l admin -r -f -d 'Register this agent as the store\'s first admin and print its secret...'
complete -c acomm -n '__acomm_at \'init\' 0' -f -a '(__fish_complete_directories (commandline -ct) "")'

# acomm status

# acomm config
complete -c acomm -f -n '__acomm_is \'config\'' -a 'show' -d 'Print every setting\'s effective value and where it came from'
complete -c acomm -f -n '__acomm_is \'config\'' -a 'set' -d 'Set KEY to VALUE in the config file'
complete -c acomm -f -n '__acomm_is \'config\'' -a 'get' -d 'Print KEY\'s effective value (flag > environment > config file > def...'

# acomm config show

# acomm config set

# acomm config get

# acomm channel
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'create' -d 'Create a channel owned by --as; prints its id'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'join' -d 'Add an agent to a channel (joining twice changes nothing)'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'leave' -d 'Remove an agent; what still waited for it is dead-lettered (recipie...'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'list' -d 'List channels'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'show' -d 'Show a channel: type, state, owner, configuration, participants'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'pause' -d 'Pause sends (recipients can still read)'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'resume' -d 'Make a paused or draining channel active again'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'drain' -d 'Stop new sends while recipients read what is left'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'close' -d 'Close for good: no sends or receives; history stays'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'admin' -d 'Make a participant an admin, or no longer one (the owner only)'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'update' -d 'Change a channel\'s settings (its owner or an admin only)'
complete -c acomm -f -n '__acomm_is \'channel\'' -a 'delete' -d 'Delete a channel (its owner only); its name is free again'

# acomm channel create
complete -c acomm -n '__acomm_is \'channel create\'' -s t -l type -r -f -a 'direct group broadcast pubsub queue'
complete -c acomm -n '__acomm_is \'channel create\'' -s t -l type -r -f -d 'direct, group, broadcast, pubsub or queue (each message to one memb...'
complete -c acomm -n '__acomm_is \'channel create\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel create\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'channel create\'' -l delivery -r -f -a 'at-most-once at-least-once exactly-once'
complete -c acomm -n '__acomm_is \'channel create\'' -l delivery -r -f -d 'at-most-once, at-least-once or exactly-once'
complete -c acomm -n '__acomm_is \'channel create\'' -l max-message-size -r -f -d 'e.g'
complete -c acomm -n '__acomm_is \'channel create\'' -l ack-timeout -r -f -d 'How long a delivery waits for its ack before it is redelivered'
complete -c acomm -n '__acomm_is \'channel create\'' -l max-retries -r -f -d 'Redeliveries before a dead letter'
complete -c acomm -n '__acomm_is \'channel create\'' -l retry-backoff -r -f -d 'Base back-off'
complete -c acomm -n '__acomm_is \'channel create\'' -l retry-jitter -r -f -d 'A fraction, e.g'
complete -c acomm -n '__acomm_is \'channel create\'' -l echo -l no-echo -d 'Senders receive their own messages'
complete -c acomm -n '__acomm_is \'channel create\'' -l priority-ordering -l no-priority-ordering -d 'Receive by priority first'
complete -c acomm -n '__acomm_is \'channel create\'' -l max-pending -r -f -d '0 = unlimited'
complete -c acomm -n '__acomm_is \'channel create\'' -l dedupe-window -r -f -d 'How long a --dedupe-key is remembered'
complete -c acomm -n '__acomm_is \'channel create\'' -l retention-count -r -f -d '`compact` keeps at most this many finished messages (0 = no limit)'
complete -c acomm -n '__acomm_is \'channel create\'' -l retention-age -r -f -d '`compact` removes finished messages older than this'
complete -c acomm -n '__acomm_is \'channel create\'' -l lease -r -f -d 'How long a received or in_progress ack holds a delivery before it i...'
complete -c acomm -n '__acomm_is \'channel create\'' -l message-ttl -r -f -d 'Messages not read within this are dead-lettered `expired` (send --t...'
complete -c acomm -n '__acomm_is \'channel create\'' -l retry-failed -l no-retry-failed -d 'A `failed` ack gives the delivery back for a retry (up to --max-ret...'
complete -c acomm -n '__acomm_is \'channel create\'' -l ack-clock -r -f -a 'sent read'
complete -c acomm -n '__acomm_is \'channel create\'' -l ack-clock -r -f -d 'When the ack timeout starts: `sent` (at delivery, the default) or `...'
complete -c acomm -n '__acomm_is \'channel create\'' -l ack-notify -r -f -a 'all failures none'
complete -c acomm -n '__acomm_is \'channel create\'' -l ack-notify -r -f -d 'Which acks also become an acknowledgment message to the sender: `al...'
complete -c acomm -n '__acomm_is \'channel create\'' -l if-not-exists -d 'Succeed if it exists with the same type'

# acomm channel join
complete -c acomm -n '__acomm_is \'channel join\'' -l role -r -f -a 'member observer'
complete -c acomm -n '__acomm_is \'channel join\'' -l role -r -f -d 'member or observer'
complete -c acomm -n '__acomm_is \'channel join\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel join\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel join\' 0' -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_at \'channel join\' 1' -f -a '(__acomm_words agents)'

# acomm channel leave
complete -c acomm -n '__acomm_is \'channel leave\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel leave\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel leave\' 0' -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_at \'channel leave\' 1' -f -a '(__acomm_words agents)'

# acomm channel list

# acomm channel show
complete -c acomm -n '__acomm_at \'channel show\' 0' -f -a '(__acomm_words channels)'

# acomm channel pause
complete -c acomm -n '__acomm_is \'channel pause\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel pause\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel pause\' 0' -f -a '(__acomm_words channels)'

# acomm channel resume
complete -c acomm -n '__acomm_is \'channel resume\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel resume\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel resume\' 0' -f -a '(__acomm_words channels)'

# acomm channel drain
complete -c acomm -n '__acomm_is \'channel drain\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel drain\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel drain\' 0' -f -a '(__acomm_words channels)'

# acomm channel close
complete -c acomm -n '__acomm_is \'channel close\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel close\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel close\' 0' -f -a '(__acomm_words channels)'

# acomm channel admin
complete -c acomm -n '__acomm_is \'channel admin\'' -l revoke -d 'Take the admin rights back'
complete -c acomm -n '__acomm_is \'channel admin\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel admin\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel admin\' 0' -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_at \'channel admin\' 1' -f -a '(__acomm_words agents)'

# acomm channel update
complete -c acomm -n '__acomm_is \'channel update\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel update\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'channel update\'' -l max-message-size -r -f -d 'e.g'
complete -c acomm -n '__acomm_is \'channel update\'' -l ack-timeout -r -f -d 'How long a delivery waits for its ack before it is redelivered'
complete -c acomm -n '__acomm_is \'channel update\'' -l max-retries -r -f -d 'Redeliveries before a dead letter'
complete -c acomm -n '__acomm_is \'channel update\'' -l retry-backoff -r -f -d 'Base back-off'
complete -c acomm -n '__acomm_is \'channel update\'' -l retry-jitter -r -f -d 'A fraction, e.g'
complete -c acomm -n '__acomm_is \'channel update\'' -l echo -l no-echo -d 'Senders receive their own messages'
complete -c acomm -n '__acomm_is \'channel update\'' -l priority-ordering -l no-priority-ordering -d 'Receive by priority first'
complete -c acomm -n '__acomm_is \'channel update\'' -l max-pending -r -f -d '0 = unlimited'
complete -c acomm -n '__acomm_is \'channel update\'' -l dedupe-window -r -f -d 'How long a --dedupe-key is remembered'
complete -c acomm -n '__acomm_is \'channel update\'' -l retention-count -r -f -d '`compact` keeps at most this many finished messages (0 = no limit)'
complete -c acomm -n '__acomm_is \'channel update\'' -l retention-age -r -f -d '`compact` removes finished messages older than this'
complete -c acomm -n '__acomm_is \'channel update\'' -l lease -r -f -d 'How long a received or in_progress ack holds a delivery before it i...'
complete -c acomm -n '__acomm_is \'channel update\'' -l message-ttl -r -f -d 'Messages not read within this are dead-lettered `expired` (send --t...'
complete -c acomm -n '__acomm_is \'channel update\'' -l retry-failed -l no-retry-failed -d 'A `failed` ack gives the delivery back for a retry (up to --max-ret...'
complete -c acomm -n '__acomm_is \'channel update\'' -l ack-clock -r -f -a 'sent read'
complete -c acomm -n '__acomm_is \'channel update\'' -l ack-clock -r -f -d 'When the ack timeout starts: `sent` (at delivery, the default) or `...'
complete -c acomm -n '__acomm_is \'channel update\'' -l ack-notify -r -f -a 'all failures none'
complete -c acomm -n '__acomm_is \'channel update\'' -l ack-notify -r -f -d 'Which acks also become an acknowledgment message to the sender: `al...'
complete -c acomm -n '__acomm_is \'channel update\'' -l index-meta -r -f -d 'Build an index on this metadata key over the channel\'s messages, fo...'
complete -c acomm -n '__acomm_is \'channel update\'' -l drop-index-meta -r -f -d 'Drop that index (repeatable)'
complete -c acomm -n '__acomm_at \'channel update\' 0' -f -a '(__acomm_words channels)'

# acomm channel delete
complete -c acomm -n '__acomm_is \'channel delete\'' -l force -d 'Dead-letter what is still in flight (reason channel_deleted) and de...'
complete -c acomm -n '__acomm_is \'channel delete\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'channel delete\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'channel delete\' 0' -f -a '(__acomm_words channels)'

# acomm send
complete -c acomm -n '__acomm_is \'send\'' -l as -l from -l sender -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'send\'' -l as -l from -l sender -r -f -d 'The sending agent'
complete -c acomm -n '__acomm_is \'send\'' -l to -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'send\'' -l to -r -f -d 'Direct message to these agents (comma-separated) instead of a channel'
complete -c acomm -n '__acomm_is \'send\'' -l batch -r -F
complete -c acomm -n '__acomm_is \'send\'' -l batch -r -F -d 'Send every JSON Lines object of FILE (\'-\' for stdin) in one transac...'
complete -c acomm -n '__acomm_is \'send\'' -s t -l type -r -f -a 'text command query response acknowledgment notification broadcast error'
complete -c acomm -n '__acomm_is \'send\'' -s t -l type -r -f -d 'text, command, query, response, acknowledgment (ack), notification,...'
complete -c acomm -n '__acomm_is \'send\'' -s p -l priority -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'send\'' -s p -l priority -r -f -d 'low, normal, high, urgent, critical or 0-4'
complete -c acomm -n '__acomm_is \'send\'' -l topic -r -f -d 'Topic (needed on pubsub channels)'
complete -c acomm -n '__acomm_is \'send\'' -l correlation-id -r -f -d 'Thread / request id'
complete -c acomm -n '__acomm_is \'send\'' -l dedupe-key -r -f -d 'Idempotency key: a repeat inside the channel\'s window sends nothing...'
complete -c acomm -n '__acomm_is \'send\'' -l meta -r -f -d 'k=v metadata (repeatable)'
complete -c acomm -n '__acomm_is \'send\'' -l delay -r -f -d 'Deliver after this long'
complete -c acomm -n '__acomm_is \'send\'' -l deliver-at -r -f -d 'Deliver at this time'
complete -c acomm -n '__acomm_is \'send\'' -l ttl -r -f -d 'Time to live: not read within this (from delivery), the message is...'
complete -c acomm -n '__acomm_is \'send\'' -l format -r -f -a 'text markdown'
complete -c acomm -n '__acomm_is \'send\'' -l format -r -f -d 'How the body reads: text (the default) or markdown (`show` renders...'
complete -c acomm -n '__acomm_is \'send\'' -l subject -r -f -d 'A subject line (at most 256 characters)'
complete -c acomm -n '__acomm_is \'send\'' -l attach -r -F
complete -c acomm -n '__acomm_is \'send\'' -l attach -r -F -d 'Attach this file (repeatable); `acomm attachment get MSG NAME` fetc...'
complete -c acomm -n '__acomm_is \'send\'' -l trace-id -r -f -d 'The trace the message joins: 1-64 characters of A-Z a-z 0-9 _ - (de...'
complete -c acomm -n '__acomm_is \'send\'' -l event-type -r -f -d 'The event the message carries: comment.created, comment.replied, me...'
complete -c acomm -n '__acomm_is \'send\'' -l actor -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'send\'' -l actor -r -f -d 'The event\'s actor (default: the sender)'
complete -c acomm -n '__acomm_is \'send\'' -l target -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'send\'' -l target -r -f -d 'The agent the event is for (its kind is recorded)'
complete -c acomm -n '__acomm_is \'send\'' -l thread -r -f -d 'The event\'s thread id'
complete -c acomm -n '__acomm_is \'send\'' -l comment -r -f -d 'The event\'s comment id'
complete -c acomm -n '__acomm_is \'send\'' -l parent-comment -r -f -d 'The comment it replies to (its id)'
complete -c acomm -n '__acomm_is \'send\'' -l depth -r -f -d 'The comment\'s depth (comment events only)'
complete -c acomm -n '__acomm_is \'send\'' -l language -r -f -d 'The content\'s language: zh, en, or a BCP 47 tag'
complete -c acomm -n '__acomm_is \'send\'' -l action-hint -r -f -d 'What the target should do: notify_only, consider_reply, must_reply'
complete -c acomm -n '__acomm_is \'send\'' -l occurred-at -r -f -d 'When the event occurred (default: now)'
complete -c acomm -n '__acomm_is \'send\'' -l event-id -r -f -d 'The event\'s unique id: a repeat on the channel sends nothing again'
complete -c acomm -n '__acomm_is \'send\'' -l group-key -r -f -d 'FIFO group (a work queue or a pubsub channel\'s worker pool): messag...'
complete -c acomm -n '__acomm_at \'send\' 0' -f -a '(__acomm_words channels)'

# acomm publish
complete -c acomm -n '__acomm_is \'publish\'' -l as -l from -l sender -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'publish\'' -l as -l from -l sender -r -f -d 'The sending agent'
complete -c acomm -n '__acomm_is \'publish\'' -s t -l type -r -f -a 'text command query response acknowledgment notification broadcast error'
complete -c acomm -n '__acomm_is \'publish\'' -s t -l type -r -f -d 'text, command, query, response, acknowledgment (ack), notification,...'
complete -c acomm -n '__acomm_is \'publish\'' -s p -l priority -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'publish\'' -s p -l priority -r -f -d 'low, normal, high, urgent, critical or 0-4'
complete -c acomm -n '__acomm_is \'publish\'' -l correlation-id -r -f -d 'Thread / request id'
complete -c acomm -n '__acomm_is \'publish\'' -l dedupe-key -r -f -d 'Idempotency key: a repeat inside the channel\'s window sends nothing...'
complete -c acomm -n '__acomm_is \'publish\'' -l meta -r -f -d 'k=v metadata (repeatable)'
complete -c acomm -n '__acomm_is \'publish\'' -l delay -r -f -d 'Deliver after this long'
complete -c acomm -n '__acomm_is \'publish\'' -l deliver-at -r -f -d 'Deliver at this time'
complete -c acomm -n '__acomm_is \'publish\'' -l ttl -r -f -d 'Time to live: not read within this (from delivery), the message is...'
complete -c acomm -n '__acomm_is \'publish\'' -l trace-id -r -f -d 'The trace the message joins: 1-64 characters of A-Z a-z 0-9 _ - (de...'
complete -c acomm -n '__acomm_is \'publish\'' -l event-type -r -f -d 'The event the message carries: comment.created, comment.replied, me...'
complete -c acomm -n '__acomm_is \'publish\'' -l actor -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'publish\'' -l actor -r -f -d 'The event\'s actor (default: the sender)'
complete -c acomm -n '__acomm_is \'publish\'' -l target -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'publish\'' -l target -r -f -d 'The agent the event is for (its kind is recorded)'
complete -c acomm -n '__acomm_is \'publish\'' -l thread -r -f -d 'The event\'s thread id'
complete -c acomm -n '__acomm_is \'publish\'' -l comment -r -f -d 'The event\'s comment id'
complete -c acomm -n '__acomm_is \'publish\'' -l parent-comment -r -f -d 'The comment it replies to (its id)'
complete -c acomm -n '__acomm_is \'publish\'' -l depth -r -f -d 'The comment\'s depth (comment events only)'
complete -c acomm -n '__acomm_is \'publish\'' -l language -r -f -d 'The content\'s language: zh, en, or a BCP 47 tag'
complete -c acomm -n '__acomm_is \'publish\'' -l action-hint -r -f -d 'What the target should do: notify_only, consider_reply, must_reply'
complete -c acomm -n '__acomm_is \'publish\'' -l occurred-at -r -f -d 'When the event occurred (default: now)'
complete -c acomm -n '__acomm_is \'publish\'' -l event-id -r -f -d 'The event\'s unique id: a repeat on the channel sends nothing again'
complete -c acomm -n '__acomm_is \'publish\'' -l group-key -r -f -d 'FIFO group (a work queue or a pubsub channel\'s worker pool): messag...'
complete -c acomm -n '__acomm_is \'publish\'' -l require-recipient -d 'Refuse (exit 5, nothing stored) a message no subscription matches;...'
complete -c acomm -n '__acomm_at \'publish\' 0' -f -a '(__acomm_words channels)'

# acomm subscribe
complete -c acomm -n '__acomm_is \'subscribe\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'subscribe\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'subscribe\'' -l group -r -f -d 'Serve the worker pool NAME: the pool gets one copy of each matching...'
complete -c acomm -n '__acomm_at \'subscribe\' 0' -f -a '(__acomm_words channels)'

# acomm unsubscribe
complete -c acomm -n '__acomm_is \'unsubscribe\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'unsubscribe\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'unsubscribe\'' -l group -r -f -d 'With --delete: the worker pool to delete'
complete -c acomm -n '__acomm_is \'unsubscribe\'' -l delete -d 'Delete the worker pool --group NAME, which has no member left: it s...'
complete -c acomm -n '__acomm_at \'unsubscribe\' 0' -f -a '(__acomm_words channels)'

# acomm subscriptions
complete -c acomm -n '__acomm_at \'subscriptions\' 0' -f -a '(__acomm_words channels)'

# acomm receive
complete -c acomm -n '__acomm_is \'receive\'' -l as -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'receive\'' -l as -l recipient -r -f -d 'The receiving agent'
complete -c acomm -n '__acomm_is \'receive\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'receive\'' -s c -l channel -r -f -d 'Only this channel'
complete -c acomm -n '__acomm_is \'receive\'' -l since -r -f -d 'From this time'
complete -c acomm -n '__acomm_is \'receive\'' -l until -r -f -d 'Up to this time'
complete -c acomm -n '__acomm_is \'receive\'' -s t -l type -r -f -a 'text command query response acknowledgment notification broadcast error'
complete -c acomm -n '__acomm_is \'receive\'' -s t -l type -r -f -d 'Message type (repeatable)'
complete -c acomm -n '__acomm_is \'receive\'' -l from -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'receive\'' -l from -r -f -d 'Only messages from this agent'
complete -c acomm -n '__acomm_is \'receive\'' -l topic -r -f -d 'Topic pattern (* one segment, # any)'
complete -c acomm -n '__acomm_is \'receive\'' -l status -r -f -a 'sent delivered acknowledged dead_letter in_progress'
complete -c acomm -n '__acomm_is \'receive\'' -l status -r -f -d 'Message status: sent, delivered, acknowledged, dead_letter (repeata...'
complete -c acomm -n '__acomm_is \'receive\'' -l grep -r -f -d 'Regular expression the content must match'
complete -c acomm -n '__acomm_is \'receive\'' -l priority-min -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'receive\'' -l priority-min -r -f -d 'Lowest priority (name or 0-4)'
complete -c acomm -n '__acomm_is \'receive\'' -l sort -r -f -a 'created priority id'
complete -c acomm -n '__acomm_is \'receive\'' -l sort -r -f -d 'created, priority or id'
complete -c acomm -n '__acomm_is \'receive\'' -l order -r -f -a 'asc desc'
complete -c acomm -n '__acomm_is \'receive\'' -l order -r -f -d 'asc or desc'
complete -c acomm -n '__acomm_is \'receive\'' -l limit -r -f -d 'At most this many messages'
complete -c acomm -n '__acomm_is \'receive\'' -l offset -r -f -d 'Skip this many first'
complete -c acomm -n '__acomm_is \'receive\'' -l peek -d 'Leave them unread'
complete -c acomm -n '__acomm_is \'receive\'' -l body -d 'Print only the bodies'
complete -c acomm -n '__acomm_is \'receive\'' -l wait -r -f -d 'Block up to this long until something arrives (exit 124 if nothing)'
complete -c acomm -n '__acomm_is \'receive\'' -l ack -r -f -a 'received in_progress completed failed'
complete -c acomm -n '__acomm_is \'receive\'' -l ack -r -f -d 'Also acknowledge what is received with this status, in the same tra...'
complete -c acomm -n '__acomm_is \'receive\'' -s f -l follow -d 'Keep printing messages as they arrive, until interrupted (rich on a...'
complete -c acomm -n '__acomm_is \'receive\'' -l event-type -r -f -d 'Only messages carrying an event of this type'
complete -c acomm -n '__acomm_is \'receive\'' -l thread -r -f -d 'Only messages whose event is in this thread'
complete -c acomm -n '__acomm_is \'receive\'' -l actor -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'receive\'' -l actor -r -f -d 'Only messages whose event this agent did'
complete -c acomm -n '__acomm_is \'receive\'' -l meta -r -f -d 'Only messages whose metadata has KEY=VALUE, KEY!=VALUE (or no KEY),...'
complete -c acomm -n '__acomm_is \'receive\'' -l cursor -r -f -d 'Read the channel\'s history forward from this cursor (`acomm cursor`...'
complete -c acomm -n '__acomm_at \'receive\' 0' -f -a '(__acomm_words channels)'

# acomm ack
complete -c acomm -n '__acomm_is \'ack\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'ack\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'ack\'' -l status -r -f -a 'received in_progress completed failed'
complete -c acomm -n '__acomm_is \'ack\'' -l status -r -f -d 'received, in_progress, completed or failed (forward only)'
complete -c acomm -n '__acomm_is \'ack\'' -l note -r -f -d 'Details for the sender'

# acomm nack
complete -c acomm -n '__acomm_is \'nack\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'nack\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'nack\'' -l requeue -d 'Give it back to be delivered again (counts as a retry; past --max-r...'
complete -c acomm -n '__acomm_is \'nack\'' -l delay -r -f -d 'Deliver it again after this long (implies --requeue)'
complete -c acomm -n '__acomm_is \'nack\'' -l reason -r -f -d 'Why: kept as the delivery\'s last_error (and the dead letter\'s)'

# acomm extend
complete -c acomm -n '__acomm_is \'extend\'' -l by -r -f -d 'Hold it this long from now (a lease never shrinks)'
complete -c acomm -n '__acomm_is \'extend\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'extend\'' -l as -r -f -d 'The acting agent'

# acomm query
complete -c acomm -n '__acomm_is \'query\'' -l to -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'query\'' -l to -r -f -d 'Ask one agent, on your direct channel with it (an agent another nod...'
complete -c acomm -n '__acomm_is \'query\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'query\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'query\'' -l timeout -r -f -d 'Recipients that have not read it by then get it dead-lettered (expi...'
complete -c acomm -n '__acomm_is \'query\'' -l wait -r -f -d 'Wait this long for the first response and print it (exit 124 if non...'
complete -c acomm -n '__acomm_is \'query\'' -s p -l priority -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'query\'' -s p -l priority -r -f -d 'low, normal, high, urgent, critical or 0-4'
complete -c acomm -n '__acomm_is \'query\'' -l topic -r -f -d 'Topic (needed on pubsub channels)'
complete -c acomm -n '__acomm_is \'query\'' -l meta -r -f -d 'With --wait: wait for an answer whose metadata has KEY=VALUE, KEY!=...'
complete -c acomm -n '__acomm_at \'query\' 0' -f -a '(__acomm_words channels)'

# acomm respond
complete -c acomm -n '__acomm_is \'respond\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'respond\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'respond\'' -s p -l priority -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'respond\'' -s p -l priority -r -f -d 'low, normal, high, urgent, critical or 0-4'

# acomm thread

# acomm trace
complete -c acomm -n '__acomm_is \'trace\'' -l otlp-endpoint -r -f -d 'Also send each hop as an OpenTelemetry span to this OTLP/HTTP endpo...'

# acomm task
complete -c acomm -f -n '__acomm_is \'task\'' -a 'create' -d 'Delegate a task to an agent; prints its id'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'accept' -d 'Take a task on (its owner only), with an ETA'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'update' -d 'Report progress on an accepted task (its owner only)'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'complete' -d 'Finish a task (its owner only): the result goes to the creator as a...'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'fail' -d 'Give a task up, or decline it (its owner only); acknowledges it failed'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'list' -d 'Tasks, newest first'
complete -c acomm -f -n '__acomm_is \'task\'' -a 'show' -d 'One task and its history'

# acomm task create
complete -c acomm -n '__acomm_is \'task create\'' -l to -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task create\'' -l to -r -f -d 'The agent that owns the task (with --capability: its owner, or omit...'
complete -c acomm -n '__acomm_is \'task create\'' -l capability -r -f -d 'A published capability: the task goes to its owner, with its defaul...'
complete -c acomm -n '__acomm_is \'task create\'' -l eta-required -d 'The owner must accept with an ETA (--eta)'
complete -c acomm -n '__acomm_is \'task create\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task create\'' -l as -r -f -d 'The acting agent'

# acomm task accept
complete -c acomm -n '__acomm_is \'task accept\'' -l eta -r -f -d 'When it will be done: a duration from now or a time'
complete -c acomm -n '__acomm_is \'task accept\'' -l plan -r -f -d 'How, in a sentence, for the creator'
complete -c acomm -n '__acomm_is \'task accept\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task accept\'' -l as -r -f -d 'The acting agent'

# acomm task update
complete -c acomm -n '__acomm_is \'task update\'' -l progress -r -f -d 'Percent done, 0-100'
complete -c acomm -n '__acomm_is \'task update\'' -l note -r -f -d 'What happened, for the creator'
complete -c acomm -n '__acomm_is \'task update\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task update\'' -l as -r -f -d 'The acting agent'

# acomm task complete
complete -c acomm -n '__acomm_is \'task complete\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task complete\'' -l as -r -f -d 'The acting agent'

# acomm task fail
complete -c acomm -n '__acomm_is \'task fail\'' -l reason -r -f -d 'Why, for the creator (required)'
complete -c acomm -n '__acomm_is \'task fail\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task fail\'' -l as -r -f -d 'The acting agent'

# acomm task list
complete -c acomm -n '__acomm_is \'task list\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'task list\'' -l as -r -f -d 'Only tasks this agent created or owns (not read from ACOMM_AGENT)'
complete -c acomm -n '__acomm_is \'task list\'' -l state -r -f -a 'created accepted updated completed failed overdue incident'
complete -c acomm -n '__acomm_is \'task list\'' -l state -r -f -d 'Only tasks in this state'
complete -c acomm -n '__acomm_is \'task list\'' -l limit -r -f -d 'At most this many tasks'
complete -c acomm -n '__acomm_is \'task list\'' -l offset -r -f -d 'Skip this many first'

# acomm task show

# acomm capability
complete -c acomm -f -n '__acomm_is \'capability\'' -a 'host' -d 'Register that AGENT hosts an executor skill (what publish checks)'
complete -c acomm -f -n '__acomm_is \'capability\'' -a 'publish' -d 'Publish a capability: tasks for it go to its owner'
complete -c acomm -f -n '__acomm_is \'capability\'' -a 'unpublish' -d 'Unpublish a capability: tasks for it are refused (exit 5) from now on'
complete -c acomm -f -n '__acomm_is \'capability\'' -a 'list' -d 'The catalog: this store\'s capabilities, then (on a node) the room\'s'
complete -c acomm -f -n '__acomm_is \'capability\'' -a 'show' -d 'One capability: its contract, and who installed which delegation skill'

# acomm capability host
complete -c acomm -n '__acomm_is \'capability host\'' -l remove -d 'The agent no longer hosts the skill'
complete -c acomm -n '__acomm_at \'capability host\' 0' -f -a '(__acomm_words agents)'

# acomm capability publish
complete -c acomm -n '__acomm_is \'capability publish\'' -l owner -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'capability publish\'' -l owner -r -f -d 'The agent that executes it (required)'
complete -c acomm -n '__acomm_is \'capability publish\'' -l delegation-skill -r -f -d 'The skill requesters install to delegate (required)'
complete -c acomm -n '__acomm_is \'capability publish\'' -l executor-skill -r -f -d 'The skill the owner runs; the owner must host it (required)'
complete -c acomm -n '__acomm_is \'capability publish\'' -l schema -r -f -d 'The output contract, a JSON Schema file (required)'
complete -c acomm -n '__acomm_is \'capability publish\'' -l eta -r -f -d 'The default ETA of its tasks'

# acomm capability unpublish

# acomm capability list
complete -c acomm -n '__acomm_is \'capability list\'' -l state -r -f -a 'published unpublished'
complete -c acomm -n '__acomm_is \'capability list\'' -l state -r -f -d 'Only capabilities in this state'

# acomm capability show

# acomm incident
complete -c acomm -f -n '__acomm_is \'incident\'' -a 'list' -d 'Incidents, oldest first'
complete -c acomm -f -n '__acomm_is \'incident\'' -a 'show' -d 'One incident'
complete -c acomm -f -n '__acomm_is \'incident\'' -a 'resolve' -d 'Mark an incident resolved (resolving it again changes nothing)'

# acomm incident list
complete -c acomm -n '__acomm_is \'incident list\'' -l state -r -f -a 'open resolved'
complete -c acomm -n '__acomm_is \'incident list\'' -l state -r -f -d 'Only incidents in this state'
complete -c acomm -n '__acomm_is \'incident list\'' -l capability -r -f -d 'Only incidents of this capability'

# acomm incident show

# acomm incident resolve
complete -c acomm -n '__acomm_is \'incident resolve\'' -l note -r -f -d 'What was done about it'
complete -c acomm -n '__acomm_is \'incident resolve\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'incident resolve\'' -l as -r -f -d 'Who resolved it (recorded)'

# acomm messages
complete -c acomm -n '__acomm_is \'messages\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'messages\'' -s c -l channel -r -f -d 'Only this channel'
complete -c acomm -n '__acomm_is \'messages\'' -l since -r -f -d 'From this time'
complete -c acomm -n '__acomm_is \'messages\'' -l until -r -f -d 'Up to this time'
complete -c acomm -n '__acomm_is \'messages\'' -s t -l type -r -f -a 'text command query response acknowledgment notification broadcast error'
complete -c acomm -n '__acomm_is \'messages\'' -s t -l type -r -f -d 'Message type (repeatable)'
complete -c acomm -n '__acomm_is \'messages\'' -l from -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'messages\'' -l from -r -f -d 'Only messages from this agent'
complete -c acomm -n '__acomm_is \'messages\'' -l topic -r -f -d 'Topic pattern (* one segment, # any)'
complete -c acomm -n '__acomm_is \'messages\'' -l event-type -r -f -d 'Only messages carrying an event of this type'
complete -c acomm -n '__acomm_is \'messages\'' -l thread -r -f -d 'Only messages whose event is in this thread'
complete -c acomm -n '__acomm_is \'messages\'' -l actor -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'messages\'' -l actor -r -f -d 'Only messages whose event this agent did'
complete -c acomm -n '__acomm_is \'messages\'' -l meta -r -f -d 'Only messages whose metadata has KEY=VALUE, KEY!=VALUE (or no KEY),...'
complete -c acomm -n '__acomm_is \'messages\'' -l status -r -f -a 'sent delivered acknowledged dead_letter in_progress'
complete -c acomm -n '__acomm_is \'messages\'' -l status -r -f -d 'Message status: sent, delivered, acknowledged, dead_letter (repeata...'
complete -c acomm -n '__acomm_is \'messages\'' -l grep -r -f -d 'Regular expression the content must match'
complete -c acomm -n '__acomm_is \'messages\'' -l search -r -f -d 'Full-text search of content, subject and the event\'s thread, actor...'
complete -c acomm -n '__acomm_is \'messages\'' -l priority-min -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'messages\'' -l priority-min -r -f -d 'Lowest priority (name or 0-4)'
complete -c acomm -n '__acomm_is \'messages\'' -l sort -r -f -a 'created priority id rank'
complete -c acomm -n '__acomm_is \'messages\'' -l sort -r -f -d 'created, priority, id, or rank (with --search, its default)'
complete -c acomm -n '__acomm_is \'messages\'' -l order -r -f -a 'asc desc'
complete -c acomm -n '__acomm_is \'messages\'' -l order -r -f -d 'asc or desc'
complete -c acomm -n '__acomm_is \'messages\'' -l limit -r -f -d 'At most this many messages'
complete -c acomm -n '__acomm_is \'messages\'' -l offset -r -f -d 'Skip this many first'
complete -c acomm -n '__acomm_is \'messages\'' -s f -l follow -d 'Print the newest --limit matches oldest first, then each new one as...'
complete -c acomm -n '__acomm_is \'messages\'' -l correlation-id -r -f -d 'Only messages with this correlation id (a query, its responses and...'
complete -c acomm -n '__acomm_is \'messages\'' -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'messages\'' -l recipient -r -f -d 'Only messages delivered to this agent (with --state: whose delivery...'
complete -c acomm -n '__acomm_is \'messages\'' -l state -r -f -a 'queued waiting unread read acked dead'
complete -c acomm -n '__acomm_is \'messages\'' -l state -r -f -d 'Only messages with a delivery in this state: queued, waiting, unrea...'
complete -c acomm -n '__acomm_is \'messages\'' -l trace -r -f -d 'Only the messages of this trace (`acomm trace ID` shows its tree)'

# acomm show

# acomm attachment
complete -c acomm -f -n '__acomm_is \'attachment\'' -a 'list' -d 'The files a message carries, by name'
complete -c acomm -f -n '__acomm_is \'attachment\'' -a 'get' -d 'Write one file of a message to stdout or FILE'

# acomm attachment list
complete -c acomm -n '__acomm_is \'attachment list\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'attachment list\'' -l as -r -f -d 'The acting agent'

# acomm attachment get
complete -c acomm -n '__acomm_is \'attachment get\'' -s o -l output -r -F
complete -c acomm -n '__acomm_is \'attachment get\'' -s o -l output -r -F -d 'Write the file here (mode 0600) instead of to stdout'
complete -c acomm -n '__acomm_is \'attachment get\'' -l force -l no-force -d 'Replace FILE if it exists'
complete -c acomm -n '__acomm_is \'attachment get\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'attachment get\'' -l as -r -f -d 'The acting agent'

# acomm cursor
complete -c acomm -f -n '__acomm_is \'cursor\'' -a 'create' -d 'Create a cursor on a channel\'s history; it reads only what its filt...'
complete -c acomm -f -n '__acomm_is \'cursor\'' -a 'list' -d 'Every cursor, with its position and what lies past it'
complete -c acomm -f -n '__acomm_is \'cursor\'' -a 'show' -d 'One cursor, with its filter and whether compaction passed it'
complete -c acomm -f -n '__acomm_is \'cursor\'' -a 'seek' -d 'Move a cursor: back to replay, forward to skip'
complete -c acomm -f -n '__acomm_is \'cursor\'' -a 'delete' -d 'Delete a cursor (the history it read stays)'

# acomm cursor create
complete -c acomm -n '__acomm_is \'cursor create\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'cursor create\'' -s c -l channel -r -f -d 'Its channel'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from-start -d 'Before the channel\'s first message'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from-now -d 'After the channel\'s newest message (the default)'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from-id -r -f -d 'Message N is the next one read'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from-time -r -f -d 'The first message created at or after this time is the next one rea...'
complete -c acomm -n '__acomm_is \'cursor create\'' -l meta -r -f -d 'Only messages whose metadata has KEY=VALUE, KEY!=VALUE (or no KEY),...'
complete -c acomm -n '__acomm_is \'cursor create\'' -s t -l type -r -f -a 'text command query response acknowledgment notification broadcast error'
complete -c acomm -n '__acomm_is \'cursor create\'' -s t -l type -r -f -d 'Message type (repeatable)'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'cursor create\'' -l from -r -f -d 'Only messages from this agent'
complete -c acomm -n '__acomm_is \'cursor create\'' -l topic -r -f -d 'Topic pattern (* one segment, # any)'
complete -c acomm -n '__acomm_is \'cursor create\'' -l event-type -r -f -d 'Only messages carrying an event of this type'
complete -c acomm -n '__acomm_is \'cursor create\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'cursor create\'' -l as -r -f -d 'The acting agent'

# acomm cursor list

# acomm cursor show

# acomm cursor seek
complete -c acomm -n '__acomm_is \'cursor seek\'' -l from-start -d 'Before the channel\'s first message'
complete -c acomm -n '__acomm_is \'cursor seek\'' -l from-now -d 'After the channel\'s newest message (the default)'
complete -c acomm -n '__acomm_is \'cursor seek\'' -l from-id -r -f -d 'Message N is the next one read'
complete -c acomm -n '__acomm_is \'cursor seek\'' -l from-time -r -f -d 'The first message created at or after this time is the next one rea...'

# acomm cursor delete

# acomm schedule
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'create' -d 'Create a schedule that sends BODY to CHANNEL as the acting agent'
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'list' -d 'Every schedule, with its next occurrence and how many it has sent'
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'show' -d 'One schedule: what it sends, when next, and its last error'
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'pause' -d 'Pause a schedule (its sender only): no occurrence is sent until it...'
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'resume' -d 'Resume a paused schedule from its next occurrence after now'
complete -c acomm -f -n '__acomm_is \'schedule\'' -a 'delete' -d 'Delete a schedule (its sender only); the messages it sent stay'

# acomm schedule create
complete -c acomm -n '__acomm_is \'schedule create\'' -l every -r -f -d 'Send every DURATION, e.g'
complete -c acomm -n '__acomm_is \'schedule create\'' -l cron -r -f -d 'Send when this cron expression matches (five fields, UTC)'
complete -c acomm -n '__acomm_is \'schedule create\'' -l start -r -f -d 'The first occurrence (default: one --every from now, or the cron\'s...'
complete -c acomm -n '__acomm_is \'schedule create\'' -l until -r -f -d 'No occurrence after this time'
complete -c acomm -n '__acomm_is \'schedule create\'' -l max-runs -r -f -d 'Stop after N occurrences'
complete -c acomm -n '__acomm_is \'schedule create\'' -l catch-up -r -f -d 'After a late tick: send every missed occurrence once (all), or the...'
complete -c acomm -n '__acomm_is \'schedule create\'' -l topic -r -f -d 'The topic (pub/sub channels)'
complete -c acomm -n '__acomm_is \'schedule create\'' -l priority -r -f -a 'low normal high urgent critical'
complete -c acomm -n '__acomm_is \'schedule create\'' -l priority -r -f -d 'The messages\' priority'
complete -c acomm -n '__acomm_is \'schedule create\'' -l meta -r -f -d 'k=v metadata (repeatable)'
complete -c acomm -n '__acomm_is \'schedule create\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'schedule create\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_at \'schedule create\' 0' -f -a '(__acomm_words channels)'

# acomm schedule list
complete -c acomm -n '__acomm_is \'schedule list\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'schedule list\'' -s c -l channel -r -f -d 'Only this channel'

# acomm schedule show

# acomm schedule pause
complete -c acomm -n '__acomm_is \'schedule pause\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'schedule pause\'' -l as -r -f -d 'The acting agent'

# acomm schedule resume
complete -c acomm -n '__acomm_is \'schedule resume\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'schedule resume\'' -l as -r -f -d 'The acting agent'

# acomm schedule delete
complete -c acomm -n '__acomm_is \'schedule delete\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'schedule delete\'' -l as -r -f -d 'The acting agent'

# acomm cancel
complete -c acomm -n '__acomm_is \'cancel\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'cancel\'' -l as -r -f -d 'The acting agent'

# acomm deadletter
complete -c acomm -f -n '__acomm_is \'deadletter\'' -a 'list' -d 'List dead letters, oldest first'
complete -c acomm -f -n '__acomm_is \'deadletter\'' -a 'show' -d 'Show a message\'s dead letters whole, with each delivery attempt'
complete -c acomm -f -n '__acomm_is \'deadletter\'' -a 'replay' -d 'Deliver dead letters again (same id, fresh retry budget)'
complete -c acomm -f -n '__acomm_is \'deadletter\'' -a 'discard' -d 'Remove a dead letter for good'
complete -c acomm -f -n '__acomm_is \'deadletter\'' -a 'purge' -d 'Remove dead letters older than a duration'

# acomm deadletter list
complete -c acomm -n '__acomm_is \'deadletter list\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'deadletter list\'' -s c -l channel -r -f -d 'Only this channel'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l recipient -r -f -d 'Only this recipient\'s dead letter'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l reason -r -f -a 'max_retries_exceeded expired recipient_left dispatch_failed no_owner owner_offline federation_max_attempts nacked channel_deleted cancelled pool_deleted'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l reason -r -f -d 'max_retries_exceeded, expired, recipient_left, dispatch_failed, no_...'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l limit -r -f -d 'At most this many'
complete -c acomm -n '__acomm_is \'deadletter list\'' -l offset -r -f -d 'Skip this many first'

# acomm deadletter show
complete -c acomm -n '__acomm_is \'deadletter show\'' -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'deadletter show\'' -l recipient -r -f -d 'Only this recipient\'s dead letter'

# acomm deadletter replay
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l recipient -r -f -d 'Only this recipient\'s dead letter'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l all -d 'Every dead letter the filters match, in one transaction'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -s c -l channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -s c -l channel -r -f -d 'With --all: only this channel'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l reason -r -f -a 'max_retries_exceeded expired recipient_left dispatch_failed no_owner owner_offline federation_max_attempts nacked channel_deleted cancelled pool_deleted'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l reason -r -f -d 'With --all: only this reason'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l since -r -f -d 'With --all: dead-lettered at or after this time'
complete -c acomm -n '__acomm_is \'deadletter replay\'' -l dry-run -d 'With --all: count what would be replayed, change nothing'

# acomm deadletter discard
complete -c acomm -n '__acomm_is \'deadletter discard\'' -l recipient -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'deadletter discard\'' -l recipient -r -f -d 'Only this recipient\'s dead letter'

# acomm deadletter purge
complete -c acomm -n '__acomm_is \'deadletter purge\'' -l older-than -r -f -d 'Older than this'

# acomm tick
complete -c acomm -n '__acomm_is \'tick\'' -l every -r -f -d 'Keep running, ticking at this interval (at least 100ms) until SIGIN...'
complete -c acomm -n '__acomm_is \'tick\'' -l max-seconds -r -f -d 'With --every: stop after this long'
complete -c acomm -n '__acomm_is \'tick\'' -l no-dispatch -d 'Do not run configured agents (see `acomm dispatch`)'
complete -c acomm -n '__acomm_is \'tick\'' -l max -r -f -d 'Dispatch at most this many deliveries per pass'

# acomm dispatch
complete -c acomm -f -n '__acomm_is \'dispatch\'' -a 'rules' -d 'List the trigger rules: the defaults, and each configured agent\'s own'

# acomm dispatch rules

# acomm receipts
complete -c acomm -n '__acomm_is \'receipts\'' -l agent -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'receipts\'' -l agent -r -f -d 'Only this agent\'s runs'
complete -c acomm -n '__acomm_is \'receipts\'' -l message -r -f -d 'Only runs on this message id'
complete -c acomm -n '__acomm_is \'receipts\'' -l status -r -f -a 'running accepted ignored failed'
complete -c acomm -n '__acomm_is \'receipts\'' -l status -r -f -d 'running, accepted, ignored or failed'
complete -c acomm -n '__acomm_is \'receipts\'' -l limit -r -f -d 'At most this many'
complete -c acomm -n '__acomm_is \'receipts\'' -l offset -r -f -d 'Skip this many first'

# acomm flush

# acomm compact
complete -c acomm -n '__acomm_is \'compact\'' -l older-than -r -f -d 'Only messages created longer ago than this (default: any age)'
complete -c acomm -n '__acomm_is \'compact\'' -l dead-letters-older-than -r -f -d 'Also purge dead letters older than this, which lets their messages go'
complete -c acomm -n '__acomm_is \'compact\'' -l vacuum -d 'Then rewrite the file to give the freed space back (slow on big sto...'
complete -c acomm -n '__acomm_is \'compact\'' -l dry-run -d 'Count what would go; change nothing'

# acomm stats
complete -c acomm -n '__acomm_is \'stats\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'stats\'' -l as -r -f -d 'Only this agent, and the channels it takes part in (not read from $...'

# acomm doctor
complete -c acomm -n '__acomm_is \'doctor\'' -l quick -d 'PRAGMA quick_check instead of the full integrity_check (faster on b...'
complete -c acomm -n '__acomm_is \'doctor\'' -l rebuild-search -d 'First write the full-text search index (of `messages --search`) aga...'

# acomm completions
complete -c acomm -n '__acomm_at \'completions\' 0' -f -a 'bash zsh fish'

# acomm export
complete -c acomm -n '__acomm_is \'export\'' -l since -r -f -d 'Only messages created at or after this'
complete -c acomm -n '__acomm_is \'export\'' -l until -r -f -d 'Only messages created before this'
complete -c acomm -n '__acomm_is \'export\'' -l incremental -d 'Continue after the last message exported to OUT (the watermark kept...'
complete -c acomm -n '__acomm_is \'export\'' -l format -r -f -a 'parquet jsonl'
complete -c acomm -n '__acomm_is \'export\'' -l format -r -f -d 'parquet or jsonl'
complete -c acomm -n '__acomm_at \'export\' 0' -f -a '(__fish_complete_directories (commandline -ct) "")'

# acomm audit
complete -c acomm -n '__acomm_is \'audit\'' -l master -r -f -d 'Spark master: local[*] (default), local[2], spark://host:7077, yarn, '
complete -c acomm -n '__acomm_is \'audit\'' -l out -r -f -a '(__fish_complete_directories (commandline -ct) "")'
complete -c acomm -n '__acomm_is \'audit\'' -l out -r -f -d 'Where the result tables go, as Parquet (default: beside the first e...'
complete -c acomm -n '__acomm_is \'audit\'' -l executor-wait -r -f -d 'On a cluster, how long to wait for the first executor before giving...'
complete -c acomm -n '__acomm_is \'audit\'' -l html -d 'Print the path of report.html (the tables and charts as one page, w...'
complete -c acomm -n '__acomm_is \'audit\'' -l conf -r -f -d 'Extra Spark setting KEY=VALUE (repeatable), e.g'
complete -c acomm -n '__acomm_at \'audit\' 0+' -f -a '(__fish_complete_directories (commandline -ct) "")'

# acomm bridge
complete -c acomm -f -n '__acomm_is \'bridge\'' -a 'sync' -d 'Reconcile the mailbox bridge\'s directories with the store, once'

# acomm bridge sync
complete -c acomm -n '__acomm_is \'bridge sync\'' -l inbox-dir -r -f -a '(__fish_complete_directories (commandline -ct) "")'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l inbox-dir -r -f -d 'Mirror unread deliveries as INBOX_DIR/AGENT/ID.json (default: bridg...'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l outbox-dir -r -f -a '(__fish_complete_directories (commandline -ct) "")'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l outbox-dir -r -f -d 'Ingest response files OUTBOX_DIR/AGENT/*.json (default: bridge.outb...'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l teams-dir -r -f -a '(__fish_complete_directories (commandline -ct) "")'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l teams-dir -r -f -d 'Claude Code team inboxes TEAMS_DIR/TEAM/inboxes/AGENT.json for agen...'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l default-channel -r -f -a '(__acomm_words channels)'
complete -c acomm -n '__acomm_is \'bridge sync\'' -l default-channel -r -f -d 'Send response objects that name no target to CHANNEL (default: brid...'

# acomm node
complete -c acomm -f -n '__acomm_is \'node\'' -a 'init' -d 'Make this store a node: its id and an Ed25519 key pair'

# acomm node init
complete -c acomm -n '__acomm_is \'node init\'' -l id -r -f -d 'The node id: 1-64 characters of A-Z a-z 0-9 '
complete -c acomm -n '__acomm_is \'node init\'' -l transport -r -f -d 'Carry this node\'s outbox on NATS JetStream: nats://HOST:PORT, or a...'
complete -c acomm -n '__acomm_is \'node init\'' -l seed -d 'This node serves the state room: its gateway runs as a seed (severa...'
complete -c acomm -n '__acomm_is \'node init\'' -l replicas -r -f -d 'Replicas of this node\'s stream in a JetStream cluster: 1-5, at most...'
complete -c acomm -n '__acomm_is \'node init\'' -l nats-creds -r -f -d 'A NATS credentials file for --transport ($ACOMM_NATS_CREDS wins whe...'
complete -c acomm -n '__acomm_is \'node init\'' -l production -d 'The production profile, recorded in the store: a node proof at ever...'

# acomm invite
complete -c acomm -f -n '__acomm_is \'invite\'' -a 'create' -d 'Create a single-use invite for another node to join this one'
complete -c acomm -f -n '__acomm_is \'invite\'' -a 'list' -d 'List invites and their state, never their tokens'
complete -c acomm -f -n '__acomm_is \'invite\'' -a 'revoke' -d 'Revoke an invite that was not used yet; its token is refused from n...'

# acomm invite create
complete -c acomm -n '__acomm_is \'invite create\'' -l expect -r -f -d 'Only this node id may use the invite'
complete -c acomm -n '__acomm_is \'invite create\'' -l ttl -r -f -d 'How long the invite stays valid (at most 7d)'
complete -c acomm -n '__acomm_is \'invite create\'' -l pin-key -r -f -d 'The joining node\'s public key (PASERK k4.public...): it must prove...'

# acomm invite list

# acomm invite revoke

# acomm agent
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'register' -d 'Register each NAME in the directory (kind agent unless --kind says...'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'list' -d 'List the registered agents, by name (retired ones only with --all)'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'show' -d 'Show one agent: its kind, team, channels, unread count and last seen'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'update' -d 'Change a registered agent: what is given is set, the rest kept'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'retire' -d 'Retire NAME: it receives nothing new, and its history stays'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'own' -d 'This node owns AGENT: other nodes route its messages here'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'disown' -d 'This node gives AGENT up (only its owner may)'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'where' -d 'Where a message to AGENT would go now'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'token' -d 'Issue AGENT\'s secret, printed this once: the store keeps only its S...'
complete -c acomm -f -n '__acomm_is \'agent\'' -a 'contacts' -d 'List, add or remove the agents whose direct messages AGENT accepts'

# acomm agent register
complete -c acomm -n '__acomm_is \'agent register\'' -l kind -r -f -a 'agent human service'
complete -c acomm -n '__acomm_is \'agent register\'' -l kind -r -f -d 'agent (a program), human (a person; never dispatched) or service'
complete -c acomm -n '__acomm_is \'agent register\'' -l display-name -r -f -d 'How people call it (1-128 characters)'
complete -c acomm -n '__acomm_is \'agent register\'' -l description -r -f -d 'What it does (up to 4096 characters)'
complete -c acomm -n '__acomm_is \'agent register\'' -l team -r -f -d 'Its team (A-Z a-z 0-9 _ -)'
complete -c acomm -n '__acomm_is \'agent register\'' -l update -d 'A registered name: set what is given instead'
complete -c acomm -n '__acomm_is \'agent register\'' -l issue-token -d 'Also issue each agent\'s secret, printed this once'
complete -c acomm -n '__acomm_at \'agent register\' 0+' -f -a '(__acomm_words agents)'

# acomm agent list
complete -c acomm -n '__acomm_is \'agent list\'' -l kind -r -f -a 'agent human service'
complete -c acomm -n '__acomm_is \'agent list\'' -l kind -r -f -d 'Only this kind'
complete -c acomm -n '__acomm_is \'agent list\'' -l active -r -f -d 'Only those seen within DURATION'
complete -c acomm -n '__acomm_is \'agent list\'' -l all -d 'Retired agents too'

# acomm agent show
complete -c acomm -n '__acomm_at \'agent show\' 0' -f -a '(__acomm_words agents)'

# acomm agent update
complete -c acomm -n '__acomm_is \'agent update\'' -l kind -r -f -a 'agent human service'
complete -c acomm -n '__acomm_is \'agent update\'' -l kind -r -f -d 'agent (a program), human (a person; never dispatched) or service'
complete -c acomm -n '__acomm_is \'agent update\'' -l display-name -r -f -d 'How people call it (1-128 characters)'
complete -c acomm -n '__acomm_is \'agent update\'' -l description -r -f -d 'What it does (up to 4096 characters)'
complete -c acomm -n '__acomm_is \'agent update\'' -l team -r -f -d 'Its team (A-Z a-z 0-9 _ -)'
complete -c acomm -n '__acomm_is \'agent update\'' -l accept -r -f -a 'anyone team contacts nobody'
complete -c acomm -n '__acomm_is \'agent update\'' -l accept -r -f -d 'Whose direct messages and tasks reach it: anyone, team, contacts, n...'
complete -c acomm -n '__acomm_is \'agent update\'' -l admin -l no-admin -d 'Grant or take away the admin role'
complete -c acomm -n '__acomm_at \'agent update\' 0' -f -a '(__acomm_words agents)'

# acomm agent retire
complete -c acomm -n '__acomm_at \'agent retire\' 0' -f -a '(__acomm_words agents)'

# acomm agent own
complete -c acomm -n '__acomm_is \'agent own\'' -l fallback -r -f -d 'A node that takes the agent\'s messages while this one is offline (r...'
complete -c acomm -n '__acomm_at \'agent own\' 0' -f -a '(__acomm_words agents)'

# acomm agent disown
complete -c acomm -n '__acomm_at \'agent disown\' 0' -f -a '(__acomm_words agents)'

# acomm agent where
complete -c acomm -n '__acomm_at \'agent where\' 0' -f -a '(__acomm_words agents)'

# acomm agent token
complete -c acomm -n '__acomm_is \'agent token\'' -l rotate -d 'Revoke its secrets and issue a new one'
complete -c acomm -n '__acomm_is \'agent token\'' -l revoke -d 'Revoke its secrets (its dispatch runs\' too)'
complete -c acomm -n '__acomm_at \'agent token\' 0' -f -a '(__acomm_words agents)'

# acomm agent contacts
complete -c acomm -n '__acomm_at \'agent contacts\' 0' -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_at \'agent contacts\' 1' -f -a 'add remove'
complete -c acomm -n '__acomm_at \'agent contacts\' 2' -f -a '(__acomm_words agents)'

# acomm peers
complete -c acomm -f -n '__acomm_is \'peers\'' -a 'add' -d 'Register a peer node in this node\'s copy of the room by hand'

# acomm peers add
complete -c acomm -n '__acomm_is \'peers add\'' -l url -r -f -d 'How to reach it: store:PATH for a store on this machine'

# acomm fed
complete -c acomm -f -n '__acomm_is \'fed\'' -a 'pull' -d 'Read the peers\' outboxes after this node\'s cursors and deliver'
complete -c acomm -f -n '__acomm_is \'fed\'' -a 'status' -d 'How each peer\'s last pull went, and the events refused from peers'
complete -c acomm -f -n '__acomm_is \'fed\'' -a 'migrate' -d 'Move this node\'s outbox onto NATS JetStream, losing no event'

# acomm fed pull
complete -c acomm -n '__acomm_is \'fed pull\'' -l peer -r -f -d 'Only this peer (an unreachable one is then exit 7)'
complete -c acomm -n '__acomm_is \'fed pull\'' -l max-pages -r -f -d 'Pages read per peer at most (at least 1)'
complete -c acomm -n '__acomm_is \'fed pull\'' -l wait -r -f -d 'Long-poll an http peer that has nothing new, up to this long (at mo...'

# acomm fed status
complete -c acomm -n '__acomm_is \'fed status\'' -l latest -r -f -d 'Refused events listed at most (0 to 1000)'

# acomm fed migrate
complete -c acomm -n '__acomm_is \'fed migrate\'' -l to -r -f -d 'The NATS server: nats://HOST:PORT (or tls://...)'
complete -c acomm -n '__acomm_is \'fed migrate\'' -l nats-creds -r -f -d 'A NATS credentials file ($ACOMM_NATS_CREDS wins when set)'

# acomm gateway
complete -c acomm -f -n '__acomm_is \'gateway\'' -a 'serve' -d 'Run the gateway until SIGINT or SIGTERM'
complete -c acomm -f -n '__acomm_is \'gateway\'' -a 'status' -d 'Show this node\'s gateway: {node_id, running, listen, room_synced, p...'

# acomm gateway serve
complete -c acomm -n '__acomm_is \'gateway serve\'' -l listen -r -f -d 'Where to listen (port 0: any free port; `gateway status` shows it);...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l seed -d 'Host the state room and keep it across restarts (for good: as `node...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l join -r -f -d 'The seeds\' gateway urls (http://HOST:PORT), comma-separated: a node...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l invite -r -f -d 'The invite token for a first join; without it, rejoin by node proof'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l public-url -r -f -d 'How peers reach this gateway (default: http(s)://HOST:PORT of --lis...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l pull -l no-pull -d 'Pull the peers\' outboxes continuously, by long polls (default: gate...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l pull-every -r -f -d 'Pull the peers\' outboxes in one pass this often instead of continuo...'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l tls-cert -r -f -d 'Serve HTTPS with this certificate chain (PEM); with --tls-key'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l tls-key -r -f -d 'The private key (PEM) of --tls-cert'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l insecure-listen -d 'Listen beyond loopback in plain HTTP (without it: refused, exit 3)'
complete -c acomm -n '__acomm_is \'gateway serve\'' -l push -d 'On a NATS node: publish the outbox and read the peers\' streams as e...'

# acomm gateway status

# acomm token
complete -c acomm -f -n '__acomm_is \'token\'' -a 'create' -d 'Create a session token for an agent hosted by this node'
complete -c acomm -f -n '__acomm_is \'token\'' -a 'list' -d 'List session tokens and their state, never the tokens themselves'
complete -c acomm -f -n '__acomm_is \'token\'' -a 'revoke' -d 'Revoke a session token: the gateway refuses it from its next reques...'

# acomm token create
complete -c acomm -n '__acomm_is \'token create\'' -l agent -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'token create\'' -l agent -r -f -d 'The agent the token acts as (hosted here)'
complete -c acomm -n '__acomm_is \'token create\'' -l ttl -r -f -d 'How long the token stays valid (at most 30d)'
complete -c acomm -n '__acomm_is \'token create\'' -l scope -r -f -d 'What it may do, comma-separated: send (send, respond), receive (rec...'

# acomm token list

# acomm token revoke

# acomm mcp
complete -c acomm -n '__acomm_is \'mcp\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'mcp\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'mcp\'' -l print-config -r -f -a 'claude json'
complete -c acomm -n '__acomm_is \'mcp\'' -l print-config -r -f -d 'Print how to register this server and exit: `claude` (the `claude m...'
complete -c acomm -n '__acomm_is \'mcp\'' -l http -r -f -d 'Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (por...'
complete -c acomm -n '__acomm_is \'mcp\'' -l token -r -f -d 'With --http: require `Authorization: Bearer TOKEN` (needed on a hos...'

# acomm ui
complete -c acomm -n '__acomm_is \'ui\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'ui\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'ui\'' -l read-only -d 'Show, never change: every action is refused (automatic on a store t...'
complete -c acomm -n '__acomm_is \'ui\'' -l stale -r -f -d 'Highlight an agent whose oldest unread message is older than this'

# acomm web
complete -c acomm -n '__acomm_is \'web\'' -l listen -r -f -d 'Where to listen (port 0: any free port, printed at start)'
complete -c acomm -n '__acomm_is \'web\'' -l as -r -f -a '(__acomm_words agents)'
complete -c acomm -n '__acomm_is \'web\'' -l as -r -f -d 'The acting agent'
complete -c acomm -n '__acomm_is \'web\'' -l read-only -d 'Show, never change: every action is refused (automatic on a store t...'
complete -c acomm -n '__acomm_is \'web\'' -l tls-cert -r -f -d 'The TLS certificate chain (PEM)'
complete -c acomm -n '__acomm_is \'web\'' -l tls-key -r -f -d 'The TLS private key (PEM)'
complete -c acomm -n '__acomm_is \'web\'' -l login -d 'Require the login on loopback too (any other address always does);...'
complete -c acomm -n '__acomm_is \'web\'' -l stale -r -f -d 'Show an agent in red when its oldest unread message is older than this'
