"""Feedthrough3: FMI 3.0 co-simulation, every input copied to its output (Float64, Int32, Int64, UInt64,
Boolean, String), made with pythonfmu3 (tests/models/fmi3/build.py)."""
from pythonfmu3 import Boolean, Float64, Fmi3Causality, Fmi3Slave, Fmi3Variability, Int32, Int64, String, UInt64

TYPES = {"Float64": (Float64, 0.0), "Int32": (Int32, 0), "Int64": (Int64, 0), "UInt64": (UInt64, 0),
         "Boolean": (Boolean, False), "String": (String, "")}


class Feedthrough3(Fmi3Slave):

    author = "marine-cosim tests"
    description = "Every input copied to its output, one of each FMI 3.0 type pythonfmu3 offers"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        for kind, (cls, start) in TYPES.items():
            setattr(self, f"{kind}_in", start)
            setattr(self, f"{kind}_out", start)
            variability = Fmi3Variability.continuous if kind == "Float64" else Fmi3Variability.discrete
            self.register_variable(cls(f"{kind}_in", causality=Fmi3Causality.input, variability=variability,
                                       start=start))
            self.register_variable(cls(f"{kind}_out", causality=Fmi3Causality.output, variability=variability,
                                       getter=lambda k=kind: getattr(self, f"{k}_in")))
            # outputs are read at once after their input is set: a direct feedthrough

    def do_step(self, current_time, step_size):
        return True
