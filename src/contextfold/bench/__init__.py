"""The harnesses that measure strategies: replay, live runs, the benchmarks and their reports."""
