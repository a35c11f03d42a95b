"""The command line, from the top down: the generators of `make docs` (docgen, fasttree);
the `acomm` program (main: the fast path, else Typer); the Typer root and its
command registry (app); the command modules (commands, from the repository's commands/);
the command tree and shell completion (clitree, completion); and what every command runs
with (config, params, invocation, outcome, handover, stopping, the generated fastpath_tree).
Each imports only what is listed after it, and the output, worker, subsystems, engine, core."""
