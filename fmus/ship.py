"""Ship FMU: 6-DOF seakeeping (components.ship) in a seeded sea (components.waves), with vessel data
(components.vessel_data; default: the MSS supply vessel bundled in resources) and a fluid-memory
state space identified at initialisation (components.radiation).

Ports: ``hardpoint<k>`` (k = 1..4) take a force and a moment on the ship (NED, the moment about the
hardpoint) and give position, orientation, velocity, angular velocity, acceleration and angular
acceleration (NED) -- what a crane base or a winch needs. Hardpoint 1 also takes an attached
articulated inertia and bias wrench (strong coupling). Every variable is in docs/interfaces.md.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from components.radiation import fit_radiation
from components.rotations import quat_from_euler_zyx
from components.ship import Ship as ShipModel, ShipParameters
from components.vessel_data import default_vessel_path, load_vessel, validate_vessel
from components.stability import MIN_SUBSTEP, jacobian_eigenvalues, step_limit
from components.waves import ForceRAO
from fmus._base import Fmi2Slave
from fmus._sea import build_sea, check_sea, declare_sea

FMU_RESOURCES = ("components/data/vessels/supply.nc", "components/data/vessels/LICENSE-MSS.txt")
N_HARDPOINTS = 4
SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")
LOAD_INPUTS = tuple(f"hardpoint{k}.{w}" for k in range(1, N_HARDPOINTS + 1) for w in ("force", "moment")) + (
    "hardpoint1.inertia_linear", "hardpoint1.inertia_coupling", "hardpoint1.inertia_angular",
    "hardpoint1.bias_force", "hardpoint1.bias_moment", "current.velocity")


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """The same values bit for bit (cheaper than np.array_equal on small arrays); local rather than
    imported from components.ship so that this adapter also runs against an older components
    package (in-process FMUs share the first-imported one)."""
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# I_A (6x6) from its 21 inputs as they lie in the loads (linear 6, coupling 9, angular 6): the
# index of each entry, so that one fancy index forms it. The symmetric blocks' inputs are entries
# 0,0 1,1 2,2 0,1 0,2 1,2 (SYM), the coupling block's row-major (FULL); the lower-left block is the
# coupling block transposed.
_S = ((0, 3, 4), (3, 1, 5), (4, 5, 2))
_IA_ENTRIES = np.array([[_S[i][j] for j in range(3)] + [6 + 3 * i + j for j in range(3)] for i in range(3)]
                       + [[6 + 3 * j + i for j in range(3)] + [15 + _S[i][j] for j in range(3)] for i in range(3)])


HARDPOINT_WAVE = {k: f"hardpoint{k}.wave_elevation" for k in range(1, N_HARDPOINTS + 1)}
# The wave outputs are lazy in two groups, each computing only its own elevations of the points CO,
# hardpoints 1-4 and the probe (in that order): a master reads the probe's (a payload's water level)
# and a recorder CO's every step, the hardpoints' rarely.
WAVE_OUTPUTS = ("wave.elevation", "wave_probe.elevation", "wave.excitation_force", "wave.excitation_moment")
HARDPOINT_WAVE_OUTPUTS = tuple(HARDPOINT_WAVE.values())
WAVE_ROWS = {"update_wave_outputs": (0, N_HARDPOINTS + 1), "update_hardpoint_waves": tuple(range(1, N_HARDPOINTS + 1))}
# Outputs computed on first read: hardpoint 1 (the crane's port) and CO are what masters read every
# step, the rest (CG, the other hardpoints, body-frame velocities, power) is written on demand.
KINEMATIC_OUTPUTS = ("hardpoint1.power", "velocity_body", "angular_velocity_body", "cg.position", "cg.velocity",
                     "cg.acceleration",
                     *(f"hardpoint{k}.{w}" for k in range(2, N_HARDPOINTS + 1)
                       for w in ("position", "quaternion", "velocity", "angular_velocity", "acceleration",
                                 "angular_acceleration", "power")))

SAFETY = 0.8          # sub-steps at most this fraction of the RK4 stability limit


class Ship(Fmi2Slave):

    lazy_outputs = {**{group: "update_wave_outputs" for group in WAVE_OUTPUTS},
                    **{group: "update_hardpoint_waves" for group in HARDPOINT_WAVE_OUTPUTS},
                    **{group: "update_other_outputs" for group in KINEMATIC_OUTPUTS}}
    description = ("6-DOF ship seakeeping: Cummins equation with fluid-memory state space, linear hydrostatics, "
                   "force-RAO wave loads in a seeded JONSWAP/PM/regular sea, station keeping, 4 hardpoints")
    default_stop_time = 100.0
    default_step_size = 0.05

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.ship = None
        P, I, O = "parameter", "input", "output"
        self.string("vessel_file", P, "", "Vessel data file (.nc neutral format or MSS .mat); empty: the bundled "
                                          "MSS supply vessel")
        self.integer("radiation.max_order", P, 4, "Largest order of each fitted retardation transfer function",
                     minimum=1, maximum=10)
        # sea
        declare_sea(self)
        # initial state and damping
        self.real("initial.position", P, [0.0, 0.0, 0.0], "m",
                  "Initial position of the vessel origin CO (equilibrium: down = 0)", frame="NED", size=3)
        self.real("initial.euler", P, [0.0, 0.0, 0.0], "rad",
                  "Initial roll, pitch, yaw (zyx) of the body frame relative to NED", size=3)
        self.real("damping.viscous_scale", P, 1.0, "1", "Factor on the vessel data's linear viscous damping",
                  minimum=0.0)
        self.real("damping.roll_quadratic", P, 0.0, "N.m.s2/rad2", "Quadratic roll damping", minimum=0.0)
        self.real("station_keeping.period", P, [120.0, 120.0, 120.0], "s",
                  "Natural periods of the station-keeping spring in surge, sway, yaw (0: free)", size=3, minimum=0.0)
        self.real("station_keeping.damping_ratio", P, 0.7, "1", "Damping ratio of the station keeping", minimum=0.0)
        self.real("max_substep", P, 0.05, "s", "Largest internal RK4 sub-step (shorter ones are taken where the "
                                                "ship's fastest mode needs them for stability)", minimum=MIN_SUBSTEP)
        for k in range(1, N_HARDPOINTS + 1):
            start = [[-30.0, 0.0, -8.0], [25.0, 0.0, -8.0], [-38.0, 0.0, -8.0], [0.0, 7.0, -8.0]][k - 1]
            self.real(f"hardpoint{k}.location", P, start, "m", f"Location of hardpoint {k} relative to CO",
                      frame="body", size=3)
        # inputs
        for k in range(1, N_HARDPOINTS + 1):
            self.real(f"hardpoint{k}.force", I, [0.0] * 3, "N", f"Force on the ship at hardpoint {k}",
                      frame="NED", size=3)
            self.real(f"hardpoint{k}.moment", I, [0.0] * 3, "N.m",
                      f"Moment on the ship about hardpoint {k}", frame="NED", size=3)
        self.real("hardpoint1.inertia_linear", I, [0.0] * 6, "kg",
                  "Articulated inertia of a mechanism on hardpoint 1, force/linear-acceleration block "
                  "(symmetric; entries 0,0 1,1 2,2 0,1 0,2 1,2), NED axes at the hardpoint", size=6, labels=SYM)
        self.real("hardpoint1.inertia_coupling", I, [0.0] * 9, "kg.m",
                  "Articulated inertia, force/angular-acceleration block (row-major), NED axes at the hardpoint",
                  size=9, labels=FULL)
        self.real("hardpoint1.inertia_angular", I, [0.0] * 6, "kg.m2",
                  "Articulated inertia, moment/angular-acceleration block (symmetric), NED axes at the hardpoint",
                  size=6, labels=SYM)
        self.real("hardpoint1.bias_force", I, [0.0] * 3, "N", "Bias force of the articulated mechanism: the force "
                  "it needs at zero hardpoint acceleration", frame="NED", size=3)
        self.real("hardpoint1.bias_moment", I, [0.0] * 3, "N.m", "Bias moment of the articulated mechanism",
                  frame="NED", size=3)
        self.real("current.velocity", I, [0.0] * 3, "m/s", "Current velocity", frame="NED", size=3)
        self.real("wave_probe.position", I, [0.0, 0.0], "m", "Horizontal position of a wave probe", frame="NED",
                  size=2)
        # outputs
        deps = LOAD_INPUTS
        self.real("position", O, None, "m", "Position of the vessel origin CO", frame="NED", size=3)
        self.real("quaternion", O, None, "1", "Attitude quaternion (w, x, y, z), body to NED", size=4)
        self.real("euler", O, None, "rad", "Roll, pitch, yaw (zyx), for people", size=3)
        self.real("velocity", O, None, "m/s", "Velocity of CO", frame="NED", size=3)
        self.real("angular_velocity", O, None, "rad/s", "Angular velocity", frame="NED", size=3)
        self.real("acceleration", O, None, "m/s2", "Acceleration of CO", frame="NED", size=3, depends_on=deps)
        self.real("angular_acceleration", O, None, "rad/s2", "Angular acceleration", frame="NED", size=3,
                  depends_on=deps)
        self.real("velocity_body", O, None, "m/s", "Velocity of CO (u, v, w)", frame="body", size=3)
        self.real("angular_velocity_body", O, None, "rad/s", "Angular velocity (p, q, r)", frame="body", size=3)
        self.real("cg.position", O, None, "m", "Position of the CG", frame="NED", size=3)
        self.real("cg.velocity", O, None, "m/s", "Velocity of the CG", frame="NED", size=3)
        self.real("cg.acceleration", O, None, "m/s2", "Acceleration of the CG", frame="NED", size=3, depends_on=deps)
        for k in range(1, N_HARDPOINTS + 1):
            hp = f"hardpoint{k}"
            self.real(f"{hp}.position", O, None, "m", f"Position of hardpoint {k}", frame="NED", size=3)
            self.real(f"{hp}.quaternion", O, None, "1", f"Orientation of hardpoint {k} (w, x, y, z), body to NED",
                      size=4)
            self.real(f"{hp}.velocity", O, None, "m/s", f"Velocity of hardpoint {k}", frame="NED", size=3)
            self.real(f"{hp}.angular_velocity", O, None, "rad/s", f"Angular velocity at hardpoint {k}",
                      frame="NED", size=3)
            self.real(f"{hp}.acceleration", O, None, "m/s2", f"Acceleration of hardpoint {k}", frame="NED", size=3,
                      depends_on=deps)
            self.real(f"{hp}.angular_acceleration", O, None, "rad/s2", f"Angular acceleration at hardpoint {k}",
                      frame="NED", size=3, depends_on=deps)
            self.real(f"{hp}.wave_elevation", O, None, "m", f"Wave elevation (up) at hardpoint {k}'s north/east")
            self.real(f"{hp}.power", O, None, "W", f"Power delivered to the ship at hardpoint {k} (F.v + M.omega)",
                      depends_on=(f"{hp}.force", f"{hp}.moment"))
        self.real("wave.elevation", O, None, "m", "Wave elevation (up) at CO's north/east")
        self.real("wave_probe.elevation", O, None, "m", "Wave elevation (up) at the wave probe",
                  depends_on=("wave_probe.position",))
        self.real("wave.excitation_force", O, None, "N", "First-order wave excitation force", frame="body", size=3)
        self.real("wave.excitation_moment", O, None, "N.m", "First-order wave excitation moment about CO",
                  frame="body", size=3)

    # ------------------------------------------------------------------ build

    def _vessel_path(self) -> Path:
        name = self.v["vessel_file"]
        if not name:
            # this instance's own copy: the components package in sys.modules may come from another
            # instance's unpacked FMU, deleted when that instance was freed
            own = Path(self.resources) / "components" / "data" / "vessels" / "supply.nc" if self.resources else None
            return own if own is not None and own.is_file() else default_vessel_path()
        path = Path(name)
        if not path.is_absolute() and self.resources:
            candidate = Path(self.resources) / name
            path = candidate if candidate.exists() else path
        return path

    def check_parameters(self):
        problems = []
        path = self._vessel_path()
        if not path.is_file():
            problems.append(("vessel_file", str(path), "file not found"))
            return problems
        try:
            self._vessel_key = (str(path.resolve()), path.stat().st_mtime_ns)
            self._vessel = _vessel(self._vessel_key)
        except Exception as exc:
            problems.append(("vessel_file", str(path), f"cannot be read: {exc}"))
            return problems
        problems += [(f"vessel_file:{field}", value, reason) for field, value, reason in validate_vessel(self._vessel)]
        problems += check_sea(self.v)
        return problems

    def _bind_outputs(self) -> None:
        """Look up the hardpoint output arrays (a restored FMU state replaces the arrays in self.v)
        and forget what was applied and computed for the arrays before."""
        v = self.v
        self._hp_outputs = [tuple(v[f"hardpoint{k}.{w}"] for w in ("position", "quaternion", "velocity",
                                                                   "angular_velocity", "acceleration",
                                                                   "angular_acceleration"))
                            + (f"hardpoint{k}.power", f"hardpoint{k}.force", f"hardpoint{k}.moment")
                            for k in range(1, N_HARDPOINTS + 1)]
        if self.ship is not None and hasattr(self.ship, "bind_outputs"):
            # the kernel that takes the outputs' derivative writes CO's and hardpoint 1's outputs
            # straight into their arrays (update_outputs)
            hp = self._hp_outputs[0]
            self.ship.bind_outputs(self._points, (v["position"], v["velocity"], v["acceleration"],
                                                  v["angular_velocity"], v["angular_acceleration"], v["quaternion"],
                                                  v["euler"], hp[0], hp[1], hp[2], hp[3], hp[4], hp[5]), 2)
        self._applied_version = None
        self._applied = None
        self._wave_keys = {}          # lazy wave method -> (time, state, probe) of its values
        self._kinematics = None       # (time, y, pos, vel, acc, w, wd) of the last update_outputs

    def initialize_model(self) -> None:
        v, vessel = self.v, self._vessel
        radiation = _radiation(self._vessel_key, vessel, int(v["radiation.max_order"]))
        M = vessel.MRB + radiation.A_inf
        viscous = np.zeros(6)
        if vessel.viscous_damping is not None:
            viscous = v["damping.viscous_scale"] * _viscous_diagonal(vessel, M)
        k_sk, c_sk = np.zeros(3), np.zeros(3)
        for n, dof in enumerate((0, 1, 5)):
            period = v["station_keeping.period"][n]
            if period > 0.0:
                wn = 2 * math.pi / period
                k_sk[n] = M[dof, dof] * wn * wn
                c_sk[n] = 2.0 * v["station_keeping.damping_ratio"] * M[dof, dof] * wn
        params = ShipParameters(
            MRB=vessel.MRB, A_inf=radiation.A_inf, B_inf=radiation.B_inf, Ar=radiation.Ar, Br=radiation.Br,
            Cr=radiation.Cr, G=vessel.restoring, cg=vessel.cg,
            hardpoints=np.array([v[f"hardpoint{k}.location"] for k in range(1, N_HARDPOINTS + 1)]),
            viscous=viscous, roll_quadratic=v["damping.roll_quadratic"], station_stiffness=k_sk,
            station_damping=c_sk)
        sea = build_sea(v)
        rao = ForceRAO(omega=vessel.omega, heading=vessel.rao_headings, amplitude=vessel.force_rao_amp,
                       phase=vessel.force_rao_phase, convention=vessel.reference)
        q = quat_from_euler_zyx(*v["initial.euler"])
        self.ship = ShipModel(params, sea=sea, rao=rao, position=v["initial.position"].copy(), quaternion=q,
                         time=self.time)
        # CO, CG and the hardpoints, the body points whose kinematics are outputs
        self._points = np.vstack([np.zeros(3), params.cg, params.hardpoints])
        self._bind_outputs()
        self._apply_inputs()
        if getattr(self, "_limit", None) is None:
            # the modes of the linearised seakeeping at the start (hydrostatics, damping, station
            # keeping, the fluid-memory poles): the RK4 sub-step they allow; parameters are fixed,
            # so a restored state keeps it
            self._limit = step_limit(jacobian_eigenvalues(lambda y: self.ship.derivative(self.time, y),
                                                          self.ship.y.copy()), "rk4")
            if SAFETY * self._limit < MIN_SUBSTEP:
                raise ValueError(f"the ship's fastest mode needs RK4 sub-steps below {self._limit:.3g} s: lower "
                                 "radiation.max_order (fast fluid-memory poles) or lengthen station_keeping.period")
        self._substep = self.stable_substep(v["max_substep"], self._limit, SAFETY, "the ship's fastest mode (RK4)")

    # ------------------------------------------------------------------ stepping and outputs

    def _apply_inputs(self) -> None:
        if getattr(self, "_applied_version", None) == self.input_version:
            return    # nothing was set since the loads were last handed to the ship
        self._applied_version = self.input_version
        v = self.v
        # a master sets every input before each step and again in a feedthrough refresh, mostly
        # to the same values: compare the values (their bytes, one string: cheaper than arrays),
        # hand the ship only what changed
        loads = np.concatenate([v[name] for name in LOAD_INPUTS])
        new = loads.tobytes()
        previous = self._applied
        if previous is not None and new == previous[1]:
            return
        self._applied = (loads, new)
        s = self.ship
        n = 6 * N_HARDPOINTS
        held = previous is not None and new[:8 * n] == previous[1][:8 * n] and new[-24:] == previous[1][-24:]
        articulated = any(loads[n:n + 27].tolist())    # np.any's test, without its wrapping
        IA = bias = None
        if articulated:
            if held and s._articulated and new[8 * n:8 * (n + 21)] == previous[1][8 * n:8 * (n + 21)]:
                IA = s.IA       # only the bias changed
            else:
                IA = loads[n:n + 21][_IA_ENTRIES]
            # a view: the loads applied are never written to (the next inputs are a new array)
            bias = loads[n + 21:n + 27]
            if held and hasattr(s, "set_articulated"):
                # a crane's refresh: only its articulated inertia and bias are new (set_loads would
                # find the hardpoint loads and the current the ship's own)
                s.set_articulated(IA, bias)
                return
        if held:
            forces, moments, current = s.hp_force, s.hp_moment, s.current
        else:
            forces = np.array([v[f"hardpoint{k}.force"] for k in range(1, N_HARDPOINTS + 1)])
            moments = np.array([v[f"hardpoint{k}.moment"] for k in range(1, N_HARDPOINTS + 1)])
            current = v["current.velocity"].copy()
        s.set_loads(forces, moments, current, IA, bias)

    def step_model(self, t: float, h: float) -> None:
        self._apply_inputs()
        self.ship.step(h, self._substep)

    def update_outputs(self) -> None:
        """CO and hardpoint 1; after a feedthrough refresh (same state, new loads) only their
        accelerations change."""
        s, v = self.ship, self.v
        self._apply_inputs()
        pos, vel, acc, w, wd = s.points_kinematics(self._points)
        y = s.y
        if getattr(s, "outputs_written", False):
            # the kernel wrote them all (bound in _bind_outputs): the same values as below
            self._kinematics = (s.time, y, pos, vel, acc, w, wd)
            return
        hp_pos, hp_q, hp_vel, hp_w, hp_acc, hp_wd = self._hp_outputs[0][:6]
        kept = self._kinematics
        if kept is None or kept[0] != s.time or kept[1] is not y:
            q = y[3:7]
            v["position"][:], v["velocity"][:] = pos[0], vel[0]
            v["angular_velocity"][:] = w
            v["quaternion"][:] = q
            v["euler"][:] = s.euler
            hp_pos[:], hp_q[:], hp_vel[:], hp_w[:] = pos[2], q, vel[2], w
        v["acceleration"][:], v["angular_acceleration"][:] = acc[0], wd
        hp_acc[:], hp_wd[:] = acc[2], wd
        self._kinematics = (s.time, y, pos, vel, acc, w, wd)

    def update_other_outputs(self) -> None:
        """CG, hardpoints 2-4, body-frame velocities and hardpoint power (lazy)."""
        if self._kinematics is None or self._inputs_changed:
            self._inputs_changed = False
            self.update_outputs()
        v, y = self.v, self.ship.y
        _, _, pos, vel, acc, w, wd = self._kinematics
        q = y[3:7]
        v["velocity_body"][:], v["angular_velocity_body"][:] = y[7:10], y[10:13]
        v["cg.position"][:], v["cg.velocity"][:], v["cg.acceleration"][:] = pos[1], vel[1], acc[1]
        for n, (hp_pos, hp_q, hp_vel, hp_w, hp_acc, hp_wd, power, force, moment) in enumerate(self._hp_outputs, 2):
            if n > 2:
                hp_pos[:] = pos[n]
                hp_q[:] = q
                hp_vel[:] = vel[n]
                hp_w[:] = w
                hp_acc[:] = acc[n]
                hp_wd[:] = wd
            v[power] = float(v[force] @ vel[n] + v[moment] @ w)

    def _elevations(self, method: str) -> list | None:
        """The wave elevations at CO, the hardpoints and the probe (their north and east), of the
        lazy ``method``'s points (WAVE_ROWS) at least; None if its values are there already (the
        same time, state and probe position)."""
        s = self.ship
        probe = self.v["wave_probe.position"].tolist()
        key = (s.time, s.y, *probe)
        kept = self._wave_keys.get(method)
        if kept is not None and kept[0] == key[0] and kept[1] is key[1] and kept[2:] == key[2:]:
            return None
        self._wave_keys[method] = key
        if self._kinematics is None or self._inputs_changed:
            self._inputs_changed = False
            self.update_outputs()
        # north and east of CO, the hardpoints and the probe; one call with all of them, so that
        # each value is the same whichever other points are asked with it
        pos = self._kinematics[2]
        xy = np.empty((len(pos), 2))
        xy[0] = pos[0, 0:2]
        xy[1:-1] = pos[2:, 0:2]
        xy[-1] = probe
        if getattr(s, "wave_elevation_rows", False):
            elevation = s.wave_elevations(xy, WAVE_ROWS[method])
        elif hasattr(s, "wave_elevations"):
            elevation = s.wave_elevations(xy)
        else:       # an older components package (see _same)
            elevation = np.atleast_1d(s.sea.elevation(s.time, xy[:, 0], xy[:, 1])) if s.sea is not None \
                else np.zeros(len(xy))
        return elevation.tolist()

    def update_wave_outputs(self) -> None:
        """Wave elevations at CO and the probe, and the excitation (lazy: only computed when one of
        them is read)."""
        values = self._elevations("update_wave_outputs")
        if values is None:
            return    # same time, state and probe: the values are there already
        v = self.v
        v["wave.elevation"] = values[0]
        v["wave_probe.elevation"] = values[-1]
        tau = self.ship.wave_excitation()
        v["wave.excitation_force"][:] = tau[0:3]
        v["wave.excitation_moment"][:] = tau[3:6]

    def update_hardpoint_waves(self) -> None:
        """Wave elevations at the hardpoints' north and east (lazy)."""
        values = self._elevations("update_hardpoint_waves")
        if values is not None:
            v = self.v
            for k in range(1, N_HARDPOINTS + 1):
                v[HARDPOINT_WAVE[k]] = values[k]

    def get_model_state(self) -> dict:
        return {} if self.ship is None else {"ship": self.ship.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "ship" in state:
            if self.ship is None or not hasattr(self, "_vessel"):
                self.check_parameters()
            if self.ship is None or not self.same_parameters:
                self.initialize_model()     # rebuilt from the restored parameters
            else:
                self._bind_outputs()
            self.ship.set_state(state["ship"])
            # the ship now holds the state's loads, not the ones initialize_model handed it from the
            # restored inputs: compare the next inputs with nothing, so that they are handed over
            # whole (an input equal to the one applied at initialize_model would otherwise be
            # skipped, and the ship stepped with the state's older loads)
            self._applied_version = None
            self._applied = None
        else:
            self.ship = None


# Identification takes ~0.5 s; a restored state or a second instance must not pay it again.
_VESSELS: dict = {}
_RADIATION: dict = {}


def _vessel(key):
    if key not in _VESSELS:
        _VESSELS[key] = load_vessel(Path(key[0]))
    return _VESSELS[key]


def _radiation(key, vessel, max_order: int):
    if (key, max_order) not in _RADIATION:
        _RADIATION[(key, max_order)] = fit_radiation(vessel.omega, vessel.added_mass, vessel.damping,
                                                     max_order=max_order)
    return _RADIATION[(key, max_order)]


def _viscous_diagonal(vessel, M: np.ndarray) -> np.ndarray:
    """Linear viscous damping per DOF from the vessel data: each diagonal of B_v(w) taken at the
    undamped natural frequency of that DOF where it has restoring (heave, roll, pitch), else at the
    lowest data frequency."""
    out = np.zeros(6)
    for i in range(6):
        bv = vessel.viscous_damping[i, i, :]
        if vessel.restoring[i, i] > 0.0:
            wn = math.sqrt(vessel.restoring[i, i] / M[i, i])
            out[i] = float(np.interp(wn, vessel.omega, bv))
        else:
            out[i] = float(bv[0])
    return out
