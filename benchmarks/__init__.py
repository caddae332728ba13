"""The course's benchmark (``make benchmark``), run from the repository root as
``python -m benchmarks.<name>``; its results are in benchmarks/RESULTS.md."""
