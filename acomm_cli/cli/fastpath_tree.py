# ruff: noqa: E501
"""Generated from acomm's Typer app by `make docs` (python -m acomm_cli.cli.docgen); do
not edit. The command tree `acomm_cli.cli.main` interprets (see cli/fasttree.py)."""

# the global options
ROOT = [
    {'name': 'store', 'argument': False, 'opts': ['--store', '--file'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'config', 'argument': False, 'opts': ['--config'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'json_', 'argument': False, 'opts': ['--json'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'jsonl', 'argument': False, 'opts': ['--jsonl'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'csv', 'argument': False, 'opts': ['--csv'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'tsv', 'argument': False, 'opts': ['--tsv'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'no_headers', 'argument': False, 'opts': ['--no-headers'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'quiet', 'argument': False, 'opts': ['--quiet', '-q'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'verbose', 'argument': False, 'opts': ['--verbose', '-v'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'no_color', 'argument': False, 'opts': ['--no-color'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
    {'name': 'token_file', 'argument': False, 'opts': ['--token-file'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT_TOKEN_FILE', 'typer_only': False},
    {'name': 'version', 'argument': False, 'opts': ['--version'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': True},
]

# command -> the body that runs it (module:function) and its parameters, in order
COMMANDS = {
    'send': {
        'body': 'acomm_cli.cli.commands.send_run:send',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--from', '--sender'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'typer_only': False},
            {'name': 'to', 'argument': False, 'opts': ['--to'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'batch', 'argument': False, 'opts': ['--batch'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': 'text', 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'correlation_id', 'argument': False, 'opts': ['--correlation-id'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'dedupe_key', 'argument': False, 'opts': ['--dedupe-key'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'typer_only': None},
            {'name': 'delay', 'argument': False, 'opts': ['--delay'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'deliver_at', 'argument': False, 'opts': ['--deliver-at'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'format_', 'argument': False, 'opts': ['--format'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'subject', 'argument': False, 'opts': ['--subject'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'attach', 'argument': False, 'opts': ['--attach'], 'flag': False, 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'typer_only': None},
            {'name': 'trace_id', 'argument': False, 'opts': ['--trace-id'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_TRACE_ID', 'typer_only': False},
        ],
    },
    'publish': {
        'body': 'acomm_cli.cli.commands.send_run:publish',
        'listing': False,
        'params': [
            {'name': 'channel', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'typer_only': False},
            {'name': 'topic', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'typer_only': False},
            {'name': 'body', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--from', '--sender'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': 'notification', 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'priority', 'argument': False, 'opts': ['--priority', '-p'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': 'normal', 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'correlation_id', 'argument': False, 'opts': ['--correlation-id'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'dedupe_key', 'argument': False, 'opts': ['--dedupe-key'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'meta', 'argument': False, 'opts': ['--meta'], 'flag': False, 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'typer_only': None},
            {'name': 'delay', 'argument': False, 'opts': ['--delay'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'deliver_at', 'argument': False, 'opts': ['--deliver-at'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'ttl', 'argument': False, 'opts': ['--ttl'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'trace_id', 'argument': False, 'opts': ['--trace-id'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_TRACE_ID', 'typer_only': False},
        ],
    },
    'receive': {
        'body': 'acomm_cli.cli.commands.receive_run:receive',
        'listing': True,
        'params': [
            {'name': 'channel_arg', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'as_', 'argument': False, 'opts': ['--as', '--recipient'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': 'ACOMM_AGENT', 'typer_only': False},
            {'name': 'channel', 'argument': False, 'opts': ['--channel', '-c'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'since', 'argument': False, 'opts': ['--since'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'until', 'argument': False, 'opts': ['--until'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'type_', 'argument': False, 'opts': ['--type', '-t'], 'flag': False, 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'typer_only': None},
            {'name': 'from_', 'argument': False, 'opts': ['--from'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'topic', 'argument': False, 'opts': ['--topic'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'status', 'argument': False, 'opts': ['--status'], 'flag': False, 'kind': 'str', 'multiple': True, 'default': None, 'required': False, 'envvar': None, 'typer_only': None},
            {'name': 'grep', 'argument': False, 'opts': ['--grep'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'priority_min', 'argument': False, 'opts': ['--priority-min'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'sort', 'argument': False, 'opts': ['--sort'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'order', 'argument': False, 'opts': ['--order'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'limit', 'argument': False, 'opts': ['--limit'], 'flag': False, 'kind': 'int', 'multiple': False, 'default': 100, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'offset', 'argument': False, 'opts': ['--offset'], 'flag': False, 'kind': 'int', 'multiple': False, 'default': 0, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'peek', 'argument': False, 'opts': ['--peek'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'body', 'argument': False, 'opts': ['--body'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'wait', 'argument': False, 'opts': ['--wait'], 'flag': False, 'kind': 'float', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'ack', 'argument': False, 'opts': ['--ack'], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': False, 'envvar': None, 'typer_only': False},
            {'name': 'follow', 'argument': False, 'opts': ['--follow', '-f'], 'flag': True, 'kind': 'bool', 'multiple': False, 'default': False, 'required': False, 'envvar': None, 'typer_only': False},
        ],
    },
    '__complete': {
        'body': 'acomm_cli.cli.commands.completions_run:complete',
        'listing': False,
        'params': [
            {'name': 'kind', 'argument': True, 'opts': [], 'flag': False, 'kind': 'str', 'multiple': False, 'default': None, 'required': True, 'envvar': None, 'typer_only': False},
        ],
    },
}
