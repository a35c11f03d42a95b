"""acomm: a durable message engine for AI agents, driven from the shell."""

__version__ = "0.1.0"
