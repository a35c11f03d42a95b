"""The mailbox bridge (docs/BRIDGE.md): inbox mirror files, team inboxes, response files.
Imports the engine, the store and the core; never the command line."""
