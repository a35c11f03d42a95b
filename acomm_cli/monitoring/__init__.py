"""Monitoring: what a scraper such as Prometheus reads from a store (`metrics.py`). It reads
what several subsystems own (the engine's counts, federation's peers), so it sits beside
`worker` and `ui`; a server mounts it by being handed `metrics_payload`."""
