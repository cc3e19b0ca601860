"""Table renderers of benchmark suites (one module per problem)."""
