"""One module per subcommand group, installed as `acomm_cli.cli.commands`. Thin: parse, call one
pipeline function, render."""
