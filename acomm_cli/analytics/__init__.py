"""Export to Parquet/JSONL and the Spark audit over exports.
Imports the store and the core; pyarrow and pyspark only inside functions."""
