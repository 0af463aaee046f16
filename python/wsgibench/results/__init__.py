"""What a run leaves: the store, summaries and statistics, the typed engine result, diagnosis, compare."""
