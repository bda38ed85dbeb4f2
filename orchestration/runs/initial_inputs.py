"""Start values for the connected inputs: the system's consistent initial point, for other masters.

Our master sets every connected input from its source's output before the FMUs leave
initialisation, and repeats until the inputs settle (orchestration/master/execution.py,
``initialize``); libcosim propagates initial values too. A master that sets no input before
initialisation -- FMPy's ``fmpy.ssp.simulate_ssp`` -- leaves each input at its FMU's declared start,
which need not fit the system: the Cable's declared end positions are 403 m apart on a 14.5 m wire
in the offshore lift, and it refuses to initialise. :func:`with_initial_inputs` gives every
connected Real input, as a start value, the value our master gave it at the end of initialisation,
so that such a master initialises every FMU in the same state as ours (``marine-cosim convert
--initial-inputs``).
"""
from __future__ import annotations

import copy

from orchestration.system.fmu_info import component_info
from orchestration.system.model import System


def with_initial_inputs(system: System) -> System:
    """A copy of ``system`` whose connected Real inputs have as start values the values they have
    after our master's initialisation (run without the system's scenario); start values already
    given are replaced."""
    from orchestration.runs.api import simulate

    plain = copy.deepcopy(system)
    plain.scenario = None                    # the inputs of the system itself, not of a scenario's first event
    infos = {name: component_info(comp) for name, comp in plain.components.items()}
    inputs = list(dict.fromkeys(f"{c.target[0]}.{c.target[1]}" for c in plain.connections
                                if infos[c.target[0]].variables[c.target[1]].type == "Real"))
    if not inputs:
        return plain
    step = plain.base_step or 1e-3
    results = simulate(plain, plain.start_time + step, step, variables=inputs)
    out = copy.deepcopy(system)
    for name in inputs:
        component, variable = name.split(".", 1)
        out.components[component].parameters[variable] = float(results[name][0])
    return out
