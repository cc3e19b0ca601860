"""Exact models, one module per problem (the problem contract of :mod:`dmlopt.contract`)."""
