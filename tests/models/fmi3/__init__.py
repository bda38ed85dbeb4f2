"""FMI 3.0 co-simulation test FMUs made with pythonfmu3 (a tool chain other than ours): every scalar type
pythonfmu3 offers, fed through, and a counter that ends the simulation, after the Reference FMUs."""
