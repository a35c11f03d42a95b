"""`python -m acomm_cli`: the same program as the `acomm` command."""

from acomm_cli.cli.main import main

main()
