"""Stair3: FMI 3.0 co-simulation, an Int32 counter of whole seconds from 1 that ends the simulation at
t = 9 s through doStep's terminateSimulation (as the Reference FMU Stair), made with pythonfmu3."""
import math

from pythonfmu3 import Float64, Fmi3Causality, Fmi3Slave, Fmi3Variability, Int32
from pythonfmu3.fmi3slave import Fmi3StepResult


class Stair3(Fmi3Slave):

    author = "marine-cosim tests"
    description = "A counter of whole seconds that ends the simulation at 9 s"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.counter = 1
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Int32("counter", causality=Fmi3Causality.output, variability=Fmi3Variability.discrete))

    def do_step(self, current_time, step_size):
        end = current_time + step_size
        if end > 9.0 - 1e-9:
            self.counter = 9
            return Fmi3StepResult(terminateSimulation=True)
        self.counter = 1 + math.floor(end + 1e-9)
        return True
