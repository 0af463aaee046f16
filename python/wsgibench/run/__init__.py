"""Running a study: the loop over cells, one cell's life, the engine driver, serving and checking a server."""
