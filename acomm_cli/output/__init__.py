"""What the command line prints: the renderers (render*.py: text, --json, --jsonl, --csv,
--tsv), the listings' columns and the Rich views for a terminal. The only place that prints;
below the command line, above the worker, subsystems and engine whose results it renders."""
