"""DSL internals: graph nodes, naming, repartition insertion and the DSL's processors."""
