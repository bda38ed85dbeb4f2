"""Reference models shared by tests and benchmarks: B3, B4, plain-C FMUs, the ship swap, the quarter car, the deck
landing."""
