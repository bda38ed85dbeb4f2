"""Benchmark B3 (Ampelmann 2-DOF roll model, digest §5 and §7.5): reference model, FMU adapters, builder."""
