"""The engine: channels, sending, the inbox, delivery timers and acks, dead letters, tasks,
store operations. Imports only the store and the core (model, errors, clock, topics); its
modules import one another one way only (an import-linter contract keeps them acyclic)."""
