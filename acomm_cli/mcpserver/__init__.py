"""`acomm mcp`: the store as MCP tools and resources for one agent.

`tools.py` is the work (engine calls, one transaction each, the JSON documents the commands
print with --json) and imports no MCP; `toolset.py` declares the tools, `server.py` puts them
behind the official SDK (`mcp`, the `mcp` extra), `watch.py` tells when the agent's inbox
changed, `clientconfig.py` prints the client configuration. Only `commands/mcp_run.py` imports this
package, inside the command, so `acomm send` never loads the SDK.
"""
