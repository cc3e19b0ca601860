"""Heuristics, one module per problem: ``HEURISTICS`` maps a name to a function."""
