# ruff: noqa: E501
"""Generated from acomm's Typer app by `make docs` (python -m acomm_cli.cli.docgen); do
not edit. The command tree `acomm_cli.cli.main` interprets (see cli/fasttree.py)."""

# the global options
ROOT = [
    {'name': 'store', 'argument': False, 'opts': ['--store', '--file'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'config', 'argument': False, 'opts': ['--config'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'json_', 'argument': False, 'opts': ['--json'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'jsonl', 'argument': False, 'opts': ['--jsonl'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'csv', 'argument': False, 'opts': ['--csv'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'tsv', 'argument': False, 'opts': ['--tsv'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'no_headers', 'argument': False, 'opts': ['--no-headers'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'quiet', 'argument': False, 'opts': ['--quiet', '-q'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'verbose', 'argument': False, 'opts': ['--verbose', '-v'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'no_color', 'argument': False, 'opts': ['--no-color'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
    {'name': 'token_file', 'argument': False, 'opts': ['--token-file'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT_TOKEN_FILE', 'variadic': False, 'typer_only': False},
    {'name': 'version', 'argument': False, 'opts': ['--version', '-V'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': True},
]

# command -> the body that runs it (module:function) and its parameters, in order
COMMANDS = {
    'init': {
        'body': 'acomm_cli.cli.commands.init_run:init',
        'listing': False,
        'params': [
            {'name': 'directory', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'admin', 'argument': False, 'opts': ['--admin'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'status': {
        'body': 'acomm_cli.cli.commands.init_run:status',
        'listing': False,
        'params': [
        ],
    },
    'config show': {
        'body': 'acomm_cli.cli.commands.config_run:show',
        'listing': True,
        'params': [
        ],
    },
    'config set': {
        'body': 'acomm_cli.cli.commands.config_run:set_',
        'listing': False,
        'params': [
            {'name': 'key', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'value', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'config get': {
        'body': 'acomm_cli.cli.commands.config_run:get',
        'listing': False,
        'params': [
            {'name': 'key', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'channel create': {
        'body': 'acomm_cli.cli.commands.channel_run:create',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'group', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'delivery', 'argument': False, 'opts': ['--delivery'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_message_size', 'argument': False, 'opts': ['--max-message-size'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_timeout', 'argument': False, 'opts': ['--ack-timeout'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_retries', 'argument': False, 'opts': ['--max-retries'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_backoff', 'argument': False, 'opts': ['--retry-backoff'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_jitter', 'argument': False, 'opts': ['--retry-jitter'], 'flag': False, 'off': [], 'kind': 'float', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'echo', 'argument': False, 'opts': ['--echo'], 'flag': True, 'off': ['--no-echo'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority_ordering', 'argument': False, 'opts': ['--priority-ordering'], 'flag': True, 'off': ['--no-priority-ordering'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_pending', 'argument': False, 'opts': ['--max-pending'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dedupe_window', 'argument': False, 'opts': ['--dedupe-window'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retention_count', 'argument': False, 'opts': ['--retention-count'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retention_age', 'argument': False, 'opts': ['--retention-age'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'lease', 'argument': False, 'opts': ['--lease'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'message_ttl', 'argument': False, 'opts': ['--message-ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_failed', 'argument': False, 'opts': ['--retry-failed'], 'flag': True, 'off': ['--no-retry-failed'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_clock', 'argument': False, 'opts': ['--ack-clock'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_notify', 'argument': False, 'opts': ['--ack-notify'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'if_not_exists', 'argument': False, 'opts': ['--if-not-exists'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'channel join': {
        'body': 'acomm_cli.cli.commands.channel_run:join',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'role', 'argument': False, 'opts': ['--role'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'member', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel leave': {
        'body': 'acomm_cli.cli.commands.channel_run:leave',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel list': {
        'body': 'acomm_cli.cli.commands.channel_run:list_',
        'listing': True,
        'params': [
        ],
    },
    'channel show': {
        'body': 'acomm_cli.cli.commands.channel_run:show',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'channel pause': {
        'body': 'acomm_cli.cli.commands.channel_run:pause',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel resume': {
        'body': 'acomm_cli.cli.commands.channel_run:resume',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel drain': {
        'body': 'acomm_cli.cli.commands.channel_run:drain',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel close': {
        'body': 'acomm_cli.cli.commands.channel_run:close',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel admin': {
        'body': 'acomm_cli.cli.commands.channel_run:admin',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'revoke', 'argument': False, 'opts': ['--revoke'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'channel update': {
        'body': 'acomm_cli.cli.commands.channel_run:update',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'max_message_size', 'argument': False, 'opts': ['--max-message-size'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_timeout', 'argument': False, 'opts': ['--ack-timeout'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_retries', 'argument': False, 'opts': ['--max-retries'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_backoff', 'argument': False, 'opts': ['--retry-backoff'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_jitter', 'argument': False, 'opts': ['--retry-jitter'], 'flag': False, 'off': [], 'kind': 'float', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'echo', 'argument': False, 'opts': ['--echo'], 'flag': True, 'off': ['--no-echo'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority_ordering', 'argument': False, 'opts': ['--priority-ordering'], 'flag': True, 'off': ['--no-priority-ordering'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_pending', 'argument': False, 'opts': ['--max-pending'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dedupe_window', 'argument': False, 'opts': ['--dedupe-window'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retention_count', 'argument': False, 'opts': ['--retention-count'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retention_age', 'argument': False, 'opts': ['--retention-age'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'lease', 'argument': False, 'opts': ['--lease'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'message_ttl', 'argument': False, 'opts': ['--message-ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'retry_failed', 'argument': False, 'opts': ['--retry-failed'], 'flag': True, 'off': ['--no-retry-failed'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_clock', 'argument': False, 'opts': ['--ack-clock'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack_notify', 'argument': False, 'opts': ['--ack-notify'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'index_meta', 'argument': False, 'opts': ['--index-meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'drop_index_meta', 'argument': False, 'opts': ['--drop-index-meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
        ],
    },
    'channel delete': {
        'body': 'acomm_cli.cli.commands.channel_run:delete',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'force', 'argument': False, 'opts': ['--force'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'send': {
        'body': 'acomm_cli.cli.commands.send_run:send',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--from', '--sender'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'to', 'argument': False, 'opts': ['--to'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'batch', 'argument': False, 'opts': ['--batch'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'text', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'correlation_id', 'argument': False, 'opts': ['--correlation-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dedupe_key', 'argument': False, 'opts': ['--dedupe-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'delay', 'argument': False, 'opts': ['--delay'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'deliver_at', 'argument': False, 'opts': ['--deliver-at'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'format_', 'argument': False, 'opts': ['--format'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'subject', 'argument': False, 'opts': ['--subject'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'attach', 'argument': False, 'opts': ['--attach'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'trace_id', 'argument': False, 'opts': ['--trace-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_TRACE_ID', 'variadic': False, 'typer_only': False},
            {'name': 'event_type', 'argument': False, 'opts': ['--event-type'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'actor', 'argument': False, 'opts': ['--actor'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'target', 'argument': False, 'opts': ['--target'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'thread', 'argument': False, 'opts': ['--thread'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'comment', 'argument': False, 'opts': ['--comment'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'parent_comment', 'argument': False, 'opts': ['--parent-comment'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'depth', 'argument': False, 'opts': ['--depth'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'language', 'argument': False, 'opts': ['--language'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'action_hint', 'argument': False, 'opts': ['--action-hint'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'occurred_at', 'argument': False, 'opts': ['--occurred-at'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'event_id', 'argument': False, 'opts': ['--event-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'group_key', 'argument': False, 'opts': ['--group-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'publish': {
        'body': 'acomm_cli.cli.commands.send_run:publish',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--from', '--sender'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'notification', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'correlation_id', 'argument': False, 'opts': ['--correlation-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dedupe_key', 'argument': False, 'opts': ['--dedupe-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'delay', 'argument': False, 'opts': ['--delay'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'deliver_at', 'argument': False, 'opts': ['--deliver-at'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'trace_id', 'argument': False, 'opts': ['--trace-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_TRACE_ID', 'variadic': False, 'typer_only': False},
            {'name': 'event_type', 'argument': False, 'opts': ['--event-type'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'actor', 'argument': False, 'opts': ['--actor'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'target', 'argument': False, 'opts': ['--target'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'thread', 'argument': False, 'opts': ['--thread'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'comment', 'argument': False, 'opts': ['--comment'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'parent_comment', 'argument': False, 'opts': ['--parent-comment'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'depth', 'argument': False, 'opts': ['--depth'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'language', 'argument': False, 'opts': ['--language'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'action_hint', 'argument': False, 'opts': ['--action-hint'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'occurred_at', 'argument': False, 'opts': ['--occurred-at'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'event_id', 'argument': False, 'opts': ['--event-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'group_key', 'argument': False, 'opts': ['--group-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'require_recipient', 'argument': False, 'opts': ['--require-recipient'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'subscribe': {
        'body': 'acomm_cli.cli.commands.subscribe_run:subscribe',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'pattern', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'group', 'argument': False, 'opts': ['--group'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'unsubscribe': {
        'body': 'acomm_cli.cli.commands.subscribe_run:unsubscribe',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'pattern', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'group', 'argument': False, 'opts': ['--group'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'delete', 'argument': False, 'opts': ['--delete'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'subscriptions': {
        'body': 'acomm_cli.cli.commands.subscribe_run:subscriptions',
        'listing': True,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'receive': {
        'body': 'acomm_cli.cli.commands.receive_run:receive',
        'listing': True,
        'params': [
            {'name': 'channel_arg', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'since', 'argument': False, 'opts': ['--since'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'until', 'argument': False, 'opts': ['--until'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'from_', 'argument': False, 'opts': ['--from'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'status', 'argument': False, 'opts': ['--status'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'grep', 'argument': False, 'opts': ['--grep'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority_min', 'argument': False, 'opts': ['--priority-min'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'sort', 'argument': False, 'opts': ['--sort'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'order', 'argument': False, 'opts': ['--order'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'peek', 'argument': False, 'opts': ['--peek'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': False, 'opts': ['--body'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'wait', 'argument': False, 'opts': ['--wait'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ack', 'argument': False, 'opts': ['--ack'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'follow', 'argument': False, 'opts': ['--follow', '-f'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'event_type', 'argument': False, 'opts': ['--event-type'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'thread', 'argument': False, 'opts': ['--thread'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'actor', 'argument': False, 'opts': ['--actor'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'cursor', 'argument': False, 'opts': ['--cursor'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'ack': {
        'body': 'acomm_cli.cli.commands.ack_run:ack',
        'listing': False,
        'params': [
            {'name': 'message_ids', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': True, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'status', 'argument': False, 'opts': ['--status'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'completed', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'note', 'argument': False, 'opts': ['--note'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'nack': {
        'body': 'acomm_cli.cli.commands.nack_run:nack',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'requeue', 'argument': False, 'opts': ['--requeue'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'delay', 'argument': False, 'opts': ['--delay'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'reason', 'argument': False, 'opts': ['--reason'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'extend': {
        'body': 'acomm_cli.cli.commands.nack_run:extend',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'by', 'argument': False, 'opts': ['--by'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'query': {
        'body': 'acomm_cli.cli.commands.query_run:query',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'to', 'argument': False, 'opts': ['--to'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'timeout', 'argument': False, 'opts': ['--timeout'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'wait_for', 'argument': False, 'opts': ['--wait'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
        ],
    },
    'respond': {
        'body': 'acomm_cli.cli.commands.query_run:respond',
        'listing': False,
        'params': [
            {'name': 'correlation_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'thread': {
        'body': 'acomm_cli.cli.commands.query_run:thread',
        'listing': True,
        'params': [
            {'name': 'correlation_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'trace': {
        'body': 'acomm_cli.cli.commands.trace_run:trace',
        'listing': False,
        'params': [
            {'name': 'trace_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'otlp_endpoint', 'argument': False, 'opts': ['--otlp-endpoint'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'OTEL_EXPORTER_OTLP_ENDPOINT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task create': {
        'body': 'acomm_cli.cli.commands.task_run:create',
        'listing': False,
        'params': [
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'to', 'argument': False, 'opts': ['--to'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'capability', 'argument': False, 'opts': ['--capability'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'eta_required', 'argument': False, 'opts': ['--eta-required'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task accept': {
        'body': 'acomm_cli.cli.commands.task_run:accept',
        'listing': False,
        'params': [
            {'name': 'task_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'eta', 'argument': False, 'opts': ['--eta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'plan', 'argument': False, 'opts': ['--plan'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task update': {
        'body': 'acomm_cli.cli.commands.task_run:update',
        'listing': False,
        'params': [
            {'name': 'task_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'progress', 'argument': False, 'opts': ['--progress'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'note', 'argument': False, 'opts': ['--note'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task complete': {
        'body': 'acomm_cli.cli.commands.task_run:complete',
        'listing': False,
        'params': [
            {'name': 'task_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task fail': {
        'body': 'acomm_cli.cli.commands.task_run:fail',
        'listing': False,
        'params': [
            {'name': 'task_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'reason', 'argument': False, 'opts': ['--reason'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'task list': {
        'body': 'acomm_cli.cli.commands.task_run:list_',
        'listing': True,
        'params': [
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'state', 'argument': False, 'opts': ['--state'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'task show': {
        'body': 'acomm_cli.cli.commands.task_run:show',
        'listing': False,
        'params': [
            {'name': 'task_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'capability host': {
        'body': 'acomm_cli.cli.commands.capability_run:host',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'skill', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'remove', 'argument': False, 'opts': ['--remove'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'capability publish': {
        'body': 'acomm_cli.cli.commands.capability_run:publish',
        'listing': False,
        'params': [
            {'name': 'cap_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'owner', 'argument': False, 'opts': ['--owner'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'delegation_skill', 'argument': False, 'opts': ['--delegation-skill'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'executor_skill', 'argument': False, 'opts': ['--executor-skill'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'schema', 'argument': False, 'opts': ['--schema'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'eta', 'argument': False, 'opts': ['--eta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '10m', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'capability unpublish': {
        'body': 'acomm_cli.cli.commands.capability_run:unpublish',
        'listing': False,
        'params': [
            {'name': 'cap_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'capability list': {
        'body': 'acomm_cli.cli.commands.capability_run:list_',
        'listing': True,
        'params': [
            {'name': 'state', 'argument': False, 'opts': ['--state'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'capability show': {
        'body': 'acomm_cli.cli.commands.capability_run:show',
        'listing': False,
        'params': [
            {'name': 'cap_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'incident list': {
        'body': 'acomm_cli.cli.commands.incident_run:list_',
        'listing': True,
        'params': [
            {'name': 'state', 'argument': False, 'opts': ['--state'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'capability', 'argument': False, 'opts': ['--capability'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'incident show': {
        'body': 'acomm_cli.cli.commands.incident_run:show',
        'listing': False,
        'params': [
            {'name': 'incident_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'incident resolve': {
        'body': 'acomm_cli.cli.commands.incident_run:resolve',
        'listing': False,
        'params': [
            {'name': 'incident_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'note', 'argument': False, 'opts': ['--note'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'messages': {
        'body': 'acomm_cli.cli.commands.messages_run:messages',
        'listing': True,
        'params': [
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'since', 'argument': False, 'opts': ['--since'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'until', 'argument': False, 'opts': ['--until'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'from_', 'argument': False, 'opts': ['--from'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'event_type', 'argument': False, 'opts': ['--event-type'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'thread', 'argument': False, 'opts': ['--thread'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'actor', 'argument': False, 'opts': ['--actor'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'status', 'argument': False, 'opts': ['--status'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'grep', 'argument': False, 'opts': ['--grep'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'search', 'argument': False, 'opts': ['--search'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority_min', 'argument': False, 'opts': ['--priority-min'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'sort', 'argument': False, 'opts': ['--sort'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'order', 'argument': False, 'opts': ['--order'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'follow', 'argument': False, 'opts': ['--follow', '-f'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'correlation_id', 'argument': False, 'opts': ['--correlation-id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'recipient', 'argument': False, 'opts': ['--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'state', 'argument': False, 'opts': ['--state'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'trace', 'argument': False, 'opts': ['--trace'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'show': {
        'body': 'acomm_cli.cli.commands.messages_run:show',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'attachment list': {
        'body': 'acomm_cli.cli.commands.attachment_run:list_',
        'listing': True,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'attachment get': {
        'body': 'acomm_cli.cli.commands.attachment_run:get',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'output', 'argument': False, 'opts': ['--output', '-o'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'force', 'argument': False, 'opts': ['--force'], 'flag': True, 'off': ['--no-force'], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'cursor create': {
        'body': 'acomm_cli.cli.commands.cursor_run:create',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_start', 'argument': False, 'opts': ['--from-start'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_now', 'argument': False, 'opts': ['--from-now'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_id', 'argument': False, 'opts': ['--from-id'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_time', 'argument': False, 'opts': ['--from-time'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'from_', 'argument': False, 'opts': ['--from'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'event_type', 'argument': False, 'opts': ['--event-type'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'cursor list': {
        'body': 'acomm_cli.cli.commands.cursor_run:list_',
        'listing': True,
        'params': [
        ],
    },
    'cursor show': {
        'body': 'acomm_cli.cli.commands.cursor_run:show',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'cursor seek': {
        'body': 'acomm_cli.cli.commands.cursor_run:seek',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_start', 'argument': False, 'opts': ['--from-start'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_now', 'argument': False, 'opts': ['--from-now'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_id', 'argument': False, 'opts': ['--from-id'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'from_time', 'argument': False, 'opts': ['--from-time'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'cursor delete': {
        'body': 'acomm_cli.cli.commands.cursor_run:delete',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule create': {
        'body': 'acomm_cli.cli.commands.schedule_run:create',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'every', 'argument': False, 'opts': ['--every'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'cron', 'argument': False, 'opts': ['--cron'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'start', 'argument': False, 'opts': ['--start'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'until', 'argument': False, 'opts': ['--until'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_runs', 'argument': False, 'opts': ['--max-runs'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'catch_up', 'argument': False, 'opts': ['--catch-up'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'all', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule list': {
        'body': 'acomm_cli.cli.commands.schedule_run:list_',
        'listing': True,
        'params': [
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule show': {
        'body': 'acomm_cli.cli.commands.schedule_run:show',
        'listing': False,
        'params': [
            {'name': 'schedule_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule pause': {
        'body': 'acomm_cli.cli.commands.schedule_run:pause',
        'listing': False,
        'params': [
            {'name': 'schedule_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule resume': {
        'body': 'acomm_cli.cli.commands.schedule_run:resume',
        'listing': False,
        'params': [
            {'name': 'schedule_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'schedule delete': {
        'body': 'acomm_cli.cli.commands.schedule_run:delete',
        'listing': False,
        'params': [
            {'name': 'schedule_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'cancel': {
        'body': 'acomm_cli.cli.commands.cancel_run:cancel',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
        ],
    },
    'deadletter list': {
        'body': 'acomm_cli.cli.commands.deadletter_run:list_',
        'listing': True,
        'params': [
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'recipient', 'argument': False, 'opts': ['--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'reason', 'argument': False, 'opts': ['--reason'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'deadletter show': {
        'body': 'acomm_cli.cli.commands.deadletter_run:show',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'recipient', 'argument': False, 'opts': ['--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'deadletter replay': {
        'body': 'acomm_cli.cli.commands.deadletter_run:replay',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'recipient', 'argument': False, 'opts': ['--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'all_', 'argument': False, 'opts': ['--all'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'reason', 'argument': False, 'opts': ['--reason'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'since', 'argument': False, 'opts': ['--since'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dry_run', 'argument': False, 'opts': ['--dry-run'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'deadletter discard': {
        'body': 'acomm_cli.cli.commands.deadletter_run:discard',
        'listing': False,
        'params': [
            {'name': 'message_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'recipient', 'argument': False, 'opts': ['--recipient'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'deadletter purge': {
        'body': 'acomm_cli.cli.commands.deadletter_run:purge',
        'listing': False,
        'params': [
            {'name': 'older_than', 'argument': False, 'opts': ['--older-than'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'tick': {
        'body': 'acomm_cli.cli.commands.tick_run:tick',
        'listing': False,
        'params': [
            {'name': 'every', 'argument': False, 'opts': ['--every'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_time', 'argument': False, 'opts': ['--max-seconds'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'no_dispatch', 'argument': False, 'opts': ['--no-dispatch'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_', 'argument': False, 'opts': ['--max'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'dispatch': {
        'body': 'acomm_cli.cli.commands.dispatch_run:dispatch',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': False, 'opts': ['--agent'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_', 'argument': False, 'opts': ['--max'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dry_run', 'argument': False, 'opts': ['--dry-run'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'dispatch rules': {
        'body': 'acomm_cli.cli.commands.dispatch_run:rules',
        'listing': False,
        'params': [
        ],
    },
    'receipts': {
        'body': 'acomm_cli.cli.commands.receipts_run:receipts',
        'listing': True,
        'params': [
            {'name': 'agent', 'argument': False, 'opts': ['--agent'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'message', 'argument': False, 'opts': ['--message'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'status', 'argument': False, 'opts': ['--status'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'flush': {
        'body': 'acomm_cli.cli.commands.compact_run:flush',
        'listing': False,
        'params': [
        ],
    },
    'compact': {
        'body': 'acomm_cli.cli.commands.compact_run:compact',
        'listing': False,
        'params': [
            {'name': 'older_than', 'argument': False, 'opts': ['--older-than'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dead_letters_older_than', 'argument': False, 'opts': ['--dead-letters-older-than'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'vacuum', 'argument': False, 'opts': ['--vacuum'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'dry_run', 'argument': False, 'opts': ['--dry-run'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'stats': {
        'body': 'acomm_cli.cli.commands.stats_run:stats',
        'listing': True,
        'params': [
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'doctor': {
        'body': 'acomm_cli.cli.commands.doctor_run:doctor',
        'listing': True,
        'params': [
            {'name': 'quick', 'argument': False, 'opts': ['--quick'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'rebuild_search', 'argument': False, 'opts': ['--rebuild-search'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    '__complete': {
        'body': 'acomm_cli.cli.commands.completions_run:complete',
        'listing': False,
        'params': [
            {'name': 'kind', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'export': {
        'body': 'acomm_cli.cli.commands.export_run:export',
        'listing': False,
        'params': [
            {'name': 'out', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'since', 'argument': False, 'opts': ['--since'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'until', 'argument': False, 'opts': ['--until'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'incremental', 'argument': False, 'opts': ['--incremental'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'format_', 'argument': False, 'opts': ['--format'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'parquet', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'audit': {
        'body': 'acomm_cli.cli.commands.audit_run:audit',
        'listing': True,
        'params': [
            {'name': 'exports', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': True, 'typer_only': False},
            {'name': 'master', 'argument': False, 'opts': ['--master'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'out', 'argument': False, 'opts': ['--out'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'executor_wait', 'argument': False, 'opts': ['--executor-wait'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '60s', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'html', 'argument': False, 'opts': ['--html'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'conf', 'argument': False, 'opts': ['--conf'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
        ],
    },
    'bridge sync': {
        'body': 'acomm_cli.cli.commands.bridge_run:sync',
        'listing': False,
        'params': [
            {'name': 'inbox_dir', 'argument': False, 'opts': ['--inbox-dir'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'outbox_dir', 'argument': False, 'opts': ['--outbox-dir'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'teams_dir', 'argument': False, 'opts': ['--teams-dir'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'default_channel', 'argument': False, 'opts': ['--default-channel'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'node init': {
        'body': 'acomm_cli.cli.commands.node_run:init',
        'listing': False,
        'params': [
            {'name': 'id_', 'argument': False, 'opts': ['--id'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'transport', 'argument': False, 'opts': ['--transport'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'seed', 'argument': False, 'opts': ['--seed'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'replicas', 'argument': False, 'opts': ['--replicas'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 1, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'nats_creds', 'argument': False, 'opts': ['--nats-creds'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'production', 'argument': False, 'opts': ['--production'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'invite create': {
        'body': 'acomm_cli.cli.commands.invite_run:create',
        'listing': False,
        'params': [
            {'name': 'expect', 'argument': False, 'opts': ['--expect'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '10m', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'pin_key', 'argument': False, 'opts': ['--pin-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'invite list': {
        'body': 'acomm_cli.cli.commands.invite_run:list_',
        'listing': True,
        'params': [
        ],
    },
    'invite revoke': {
        'body': 'acomm_cli.cli.commands.invite_run:revoke',
        'listing': False,
        'params': [
            {'name': 'invite_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent register': {
        'body': 'acomm_cli.cli.commands.agent_run:register',
        'listing': False,
        'params': [
            {'name': 'names', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': True, 'typer_only': False},
            {'name': 'kind', 'argument': False, 'opts': ['--kind'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'display_name', 'argument': False, 'opts': ['--display-name'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'description', 'argument': False, 'opts': ['--description'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'team', 'argument': False, 'opts': ['--team'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'update', 'argument': False, 'opts': ['--update'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'issue_token', 'argument': False, 'opts': ['--issue-token'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent list': {
        'body': 'acomm_cli.cli.commands.agent_run:list_',
        'listing': True,
        'params': [
            {'name': 'kind', 'argument': False, 'opts': ['--kind'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'active', 'argument': False, 'opts': ['--active'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'all_', 'argument': False, 'opts': ['--all'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent show': {
        'body': 'acomm_cli.cli.commands.agent_run:show',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent update': {
        'body': 'acomm_cli.cli.commands.agent_run:update',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'kind', 'argument': False, 'opts': ['--kind'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'display_name', 'argument': False, 'opts': ['--display-name'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'description', 'argument': False, 'opts': ['--description'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'team', 'argument': False, 'opts': ['--team'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'accept', 'argument': False, 'opts': ['--accept'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'admin', 'argument': False, 'opts': ['--admin'], 'flag': True, 'off': ['--no-admin'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent retire': {
        'body': 'acomm_cli.cli.commands.agent_run:retire',
        'listing': False,
        'params': [
            {'name': 'name', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent own': {
        'body': 'acomm_cli.cli.commands.agent_run:own',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'fallback', 'argument': False, 'opts': ['--fallback'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': None},
        ],
    },
    'agent disown': {
        'body': 'acomm_cli.cli.commands.agent_run:disown',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent where': {
        'body': 'acomm_cli.cli.commands.agent_run:where',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent token': {
        'body': 'acomm_cli.cli.commands.agent_run:token',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'rotate', 'argument': False, 'opts': ['--rotate'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'revoke', 'argument': False, 'opts': ['--revoke'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'agent contacts': {
        'body': 'acomm_cli.cli.commands.agent_run:contacts',
        'listing': True,
        'params': [
            {'name': 'agent', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'action', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'other', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'peers': {
        'body': 'acomm_cli.cli.commands.peers_run:peers',
        'listing': True,
        'params': [
        ],
    },
    'peers add': {
        'body': 'acomm_cli.cli.commands.peers_run:add',
        'listing': False,
        'params': [
            {'name': 'node', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'url', 'argument': False, 'opts': ['--url'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'fed pull': {
        'body': 'acomm_cli.cli.commands.fed_run:pull',
        'listing': False,
        'params': [
            {'name': 'peer', 'argument': False, 'opts': ['--peer'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'max_pages', 'argument': False, 'opts': ['--max-pages'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 10, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'wait', 'argument': False, 'opts': ['--wait'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '0s', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'fed status': {
        'body': 'acomm_cli.cli.commands.fed_run:status',
        'listing': True,
        'params': [
            {'name': 'latest', 'argument': False, 'opts': ['--latest'], 'flag': False, 'off': [], 'kind': 'int', 'multiple': False, 'default': 5, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'fed migrate': {
        'body': 'acomm_cli.cli.commands.fed_run:migrate',
        'listing': False,
        'params': [
            {'name': 'to', 'argument': False, 'opts': ['--to'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'nats_creds', 'argument': False, 'opts': ['--nats-creds'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'gateway serve': {
        'body': 'acomm_cli.cli.commands.gateway_run:serve',
        'listing': False,
        'params': [
            {'name': 'listen', 'argument': False, 'opts': ['--listen'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'seed', 'argument': False, 'opts': ['--seed'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'join', 'argument': False, 'opts': ['--join'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'invite', 'argument': False, 'opts': ['--invite'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'public_url', 'argument': False, 'opts': ['--public-url'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'pull', 'argument': False, 'opts': ['--pull'], 'flag': True, 'off': ['--no-pull'], 'kind': 'bool', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'pull_every', 'argument': False, 'opts': ['--pull-every'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'tls_cert', 'argument': False, 'opts': ['--tls-cert'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'tls_key', 'argument': False, 'opts': ['--tls-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'insecure_listen', 'argument': False, 'opts': ['--insecure-listen'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'push', 'argument': False, 'opts': ['--push'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'gateway status': {
        'body': 'acomm_cli.cli.commands.gateway_run:status',
        'listing': False,
        'params': [
        ],
    },
    'token create': {
        'body': 'acomm_cli.cli.commands.token_run:create',
        'listing': False,
        'params': [
            {'name': 'agent', 'argument': False, 'opts': ['--agent'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '1h', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'scope', 'argument': False, 'opts': ['--scope'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': 'send,receive', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'token list': {
        'body': 'acomm_cli.cli.commands.token_run:list_',
        'listing': True,
        'params': [
        ],
    },
    'token revoke': {
        'body': 'acomm_cli.cli.commands.token_run:revoke',
        'listing': False,
        'params': [
            {'name': 'token_id', 'argument': True, 'opts': [], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'mcp': {
        'body': 'acomm_cli.cli.commands.mcp_run:mcp',
        'listing': False,
        'params': [
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'print_config', 'argument': False, 'opts': ['--print-config'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'http', 'argument': False, 'opts': ['--http'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'token', 'argument': False, 'opts': ['--token'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_MCP_TOKEN', 'variadic': False, 'typer_only': False},
        ],
    },
    'ui': {
        'body': 'acomm_cli.cli.commands.ui_run:ui',
        'listing': False,
        'params': [
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'read_only', 'argument': False, 'opts': ['--read-only'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'stale', 'argument': False, 'opts': ['--stale'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '5m', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
    'web': {
        'body': 'acomm_cli.cli.commands.web_run:web',
        'listing': False,
        'params': [
            {'name': 'listen', 'argument': False, 'opts': ['--listen'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '127.0.0.1:8321', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'variadic': False, 'typer_only': False},
            {'name': 'read_only', 'argument': False, 'opts': ['--read-only'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'tls_cert', 'argument': False, 'opts': ['--tls-cert'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'tls_key', 'argument': False, 'opts': ['--tls-key'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'login', 'argument': False, 'opts': ['--login'], 'flag': True, 'off': [], 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
            {'name': 'stale', 'argument': False, 'opts': ['--stale'], 'flag': False, 'off': [], 'kind': 'str', 'multiple': False, 'default': '5m', 'required': False, 'envvar': None, 'variadic': False, 'typer_only': False},
        ],
    },
}
