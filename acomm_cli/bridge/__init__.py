"""The mailbox bridge (spec 003): inbox mirror files, team inboxes, response files.
Imports the engine, the store and the core; never the command line."""
