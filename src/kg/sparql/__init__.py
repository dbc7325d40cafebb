"""SPARQL over the graph: the engine, the query guard, labels, the worker pool and the endpoint."""
