"""The engine: channels, sending, the inbox, delivery timers and acks, dead letters,
store operations. Imports only the store and the core (model, errors, clock, topics)."""
