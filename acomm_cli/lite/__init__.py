"""Light stand-ins for standard-library modules whose import costs the hot commands' start-up
(issue 17): `records` builds the hot path's dataclasses without importing `dataclasses`. Below
everything but the error tree; imports nothing of acomm's."""
