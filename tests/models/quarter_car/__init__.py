"""Quarter car: chassis and wheel as two pythonfmu FMUs coupled by a force/velocity power bond
(benchmarks/bench_algorithms.py, tests/test_algorithms_benchmark.py)."""
