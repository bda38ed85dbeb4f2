"""Vessel hydrodynamic data: MSS reader, neutral NetCDF format, Capytaine import, checks.

One container, :class:`VesselData`, holds what a linear seakeeping / Cummins vessel
model needs at zero speed: rigid-body mass, frequency-dependent added mass A(w) and
potential damping B(w), hydrostatic restoring C, optional viscous damping, and the
first-order wave force RAOs (optionally the motion RAOs). Pure numpy/scipy; xarray
is needed only to open a Capytaine NetCDF file by path.

Frames, reference point and units (all SI)
------------------------------------------
* Body frame x forward, y starboard, z down ("FSD", Fossen 2021, ch. 2).
  DOF order: surge, sway, heave, roll, pitch, yaw (1..6, index 0..5).
* Every 6x6 matrix and every RAO refers to one reference origin CO (fixed in the
  body). ``cg`` is the centre of gravity relative to CO in body axes, and

      MRB = [[m I3, -m S(r_g)], [m S(r_g), I_CO]],   S(r) a = r x a

  (Fossen 2021, eq. 3.44), so r_g can be recovered from the -m S(r_g) block.
  Which point CO is (for MSS/VERES data: midships, centreline, calm waterline) is
  stated in ``VesselData.reference``.
* Equation of motion at zero speed, frequency domain (Fossen 2021, eq. 5.3; the
  digest ship_crane_digest.md section 1.2):

      [-w^2 (MRB + A(w)) + i w (B(w) + Bv(w)) + C] x(w) = F(w) zeta_a

* Waves: deep-water regular wave of amplitude a, angular frequency w,
  k = w^2 / g,

      zeta(x, y, t) = a cos(w t - k (x cos(beta) + y sin(beta)))      (x, y rel. to CO)

  beta (``rao_headings``) is the relative wave heading: the direction the waves
  travel *to*, measured from body +x towards +y (starboard). beta = 0 following
  sea, beta = pi/2 waves travelling to starboard (coming from port), beta = pi head
  sea. This is the MSS convention ("beta_wave: 0 following sea, pi head sea",
  MSS waveForceRAO.m; "propagation angle from FSD +x toward +y", MSS-Capytaine
  output_coordinates.py) and was checked on supply.mat: at low frequency the surge
  force leads the wave by +90 deg for beta = 0 and the sway force by +90 deg for
  beta = 90 deg, as the Froude-Krylov force of a wave travelling along +x / +y must.
* Phases: a response with amplitude |H| and phase p (``*_rao_amp``,
  ``*_rao_phase``) is  x_i(t) = a |H_i| cos(w t + p_i)  when zeta(CO, t) = a cos(w t),
  i.e. H = |H| exp(i p) with the exp(+i w t) time convention, phase = lead over
  the wave crest at CO (MSS waveForceRAO.m: tau = sum |F| A cos(w t + angle(F) + eps)).
  Phases are stored wrapped to (-pi, pi].
* Units: force RAO N/m (surge, sway, heave) and N m/m (roll, pitch, yaw) per metre
  of wave amplitude; motion RAO m/m and rad/m. (MSS stores rotational motion RAOs
  in rad/m; its plotTF.m multiplies them by 180/pi for plotting in deg.)
  MRB/A: kg, kg m, kg m^2 by block; B, Bv: N s/m, N s, N m s by block;
  C: N/m, N, N m by block.

MSS files (``read_mss``)
------------------------
MSS ``vessel`` structs (Fossen, MSS, MIT licence; loaded with
``scipy.io.loadmat(path, squeeze_me=True, struct_as_record=False)['vessel']``).
The ShipX/VERES files supply.mat and s175.mat are the legacy ("CO") MSS import
(MSS read_veres_ABC.m: MRB, A, B, C moved with Hmtrx([-LCG, 0, 0]) from the VERES
point above the CG to CO = midships, centreline, waterline). Their force and
motion RAOs were *not* moved: they refer to the VERES point P = (x_g, 0, 0) (moment
reference and wave-phase reference). ``read_mss`` moves them to CO so that every
quantity refers to CO:

    F_CO[4:6] = F_P[4:6] + r_P x F_P[1:3]          (moments)
    x_CO[1:3] = x_P[1:3] + r_P x x_P[4:6]          (translations; rotations unchanged)
    H_CO = H_P exp(-i k (x_P cos(beta) + y_P sin(beta)))    (phase reference P -> CO)

Check (tests/test_vessel_data.py): with the moved RAOs, the equation of motion
above reproduces the file's motion RAOs (supply: heave within 0.003 m/m, pitch
within 0.004 k; s175: 1e-6); taken as if about CO, the supply errors are 0.27 m/m
and 1.9 k.
For several speeds (s175) ``velocity_index`` picks one; index 0 is 0 m/s.
MSS fields not carried over: roll (VERES Ikeda roll damping), driftfrc.
The CG is derived from MRB, not from main.CG (in the legacy files main.CG[2] is
the height above the keel, 7.3 m for supply, not a body-frame coordinate).

Neutral format (``write_netcdf`` / ``read_netcdf``), "marine-cosim vessel 1.0"
--------------------------------------------------------------------------------
NetCDF-3 classic (CDF-1) written with ``scipy.io.netcdf_file``: readable by
xarray, netCDF4, MATLAB ``ncread``. Dimensions: ``omega`` (Nw), ``heading`` (Nb),
``dof`` (6), ``dof_j`` (6), ``xyz`` (3). All variables float64 with ``units`` and
``long_name`` attributes. Index order as in Python/C (MATLAB ncread returns the
dimensions reversed):

    omega(omega)                          rad s-1   wave angular frequency, increasing
    heading(heading)                      rad       relative wave heading beta
    mass()                                kg
    cg(xyz)                               m         CG rel. to CO, body axes
    MRB(dof, dof_j)                                 rigid-body mass matrix about CO
    added_mass(dof, dof_j, omega)                   A(w) about CO
    radiation_damping(dof, dof_j, omega)            potential damping B(w) about CO
    restoring(dof, dof_j)                           hydrostatic C about CO
    viscous_damping(dof, dof_j, omega)              optional
    force_rao_amplitude(dof, omega, heading)        N m-1 | N m m-1
    force_rao_phase(dof, omega, heading)  rad
    motion_rao_amplitude(dof, omega, heading)       optional, m m-1 | rad m-1
    motion_rao_phase(dof, omega, heading) rad       optional

Element [i, j] of a 6x6 matrix is the force in DOF i due to motion in DOF j.
Global attributes: ``conventions`` = "marine-cosim vessel 1.0", ``name``, ``rho``
[kg m-3], ``g`` [m s-2], ``reference`` (CO, frames, phase and heading conventions,
as text), ``source`` (origin and licence), ``dof_order``, and one
``particular_<name>`` float attribute per entry of ``particulars``. Text is UTF-8.
``read_netcdf(write_netcdf(v))`` reproduces every array bit for bit.
See docs/vessel_format.md.

Capytaine (``from_capytaine``)
------------------------------
Capytaine (``assemble_dataset`` / ``BEMSolver.fill_dataset``) gives an xarray
Dataset with coords ``omega``, ``radiating_dof``, ``influenced_dof`` (names
'Surge', 'Sway', 'Heave', 'Roll', 'Pitch', 'Yaw'), ``wave_direction`` [rad] and data
variables ``added_mass(omega, radiating_dof, influenced_dof)``,
``radiation_damping(...)``, ``excitation_force(omega, wave_direction,
influenced_dof)`` (complex, or re/im along a ``complex`` dimension after
``separate_complex_values``; or ``Froude_Krylov_force + diffraction_force``), and
possibly ``hydrostatic_stiffness`` and ``inertia_matrix`` (influenced_dof,
radiating_dof). Capytaine conventions (docs/user_manual/conventions.rst):
x(t) = Re(X exp(-i w t)); incoming wave potential
Phi_0 = -i g/w exp(kz) exp(i k (x cos(beta) + y sin(beta))), i.e. elevation
Re(exp(i(k.x - w t))): crest at the mesh origin at t = 0, beta = direction of
propagation from +x towards +y; z up. Conversion to this module:

    H = T conj(X)      (exp(-i w t) -> cos(w t + phase) convention; same wave reference)
    A_ours[i, j] = T_i T_j A_cpt[radiating=j, influenced=i], same for B, C, MRB
    T = diag(1, -1, -1, 1, -1, -1), beta = -beta_cpt (mod 2 pi)   mesh x fwd, y port, z up
    T = diag(-1, 1, -1, -1, 1, -1), beta = pi - beta_cpt          mesh x aft, y stbd, z up
                                                                   (the MSS-Capytaine mesh)

and, if the rotation centre (= our CO) is not at the mesh origin horizontally,
H_CO = H_origin exp(i k (x_c cos(beta) + y_c sin(beta))) in mesh coordinates.
Checked once with Capytaine 3.0.0 (40 x 10 x 4 m box, outside the test suite): the
converted phases have the supply.mat signatures listed above, our equation of
motion reproduces Capytaine's rao() to 1e-15, and both mesh axes give the same data.

References: T. I. Fossen, Handbook of Marine Craft Hydrodynamics and Motion Control,
2nd ed., Wiley 2021; MSS (github.com/cybergalactic/MSS: HYDRO/veres2vessel.m,
utils/readdata/read_veres_ABC.m, read_veres_TF.m, plotTF.m, waveForceRAO.m);
MSS-Capytaine (src/output_coordinates.py, src/capytaine_vessel.py); Capytaine
(capytaine/io/xarray.py, docs/user_manual/conventions.rst).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from components.rotations import skew  # S(v) a = v x a, shared by every module

DOF_NAMES: tuple[str, ...] = ("surge", "sway", "heave", "roll", "pitch", "yaw")
CONVENTIONS = "marine-cosim vessel 1.0"

#: Text for ``VesselData.reference`` common to every source (CO is described separately).
CONVENTION_TEXT = (
    "Body frame x forward, y starboard, z down; DOF order surge, sway, heave, roll, pitch, yaw. "
    "All 6x6 matrices and RAOs are about the reference origin CO; cg is relative to CO. "
    "Wave: zeta(x,y,t) = a cos(w t - k (x cos(beta) + y sin(beta))), x, y relative to CO, "
    "k = w^2/g (deep water). beta (heading) = relative wave heading, direction of wave "
    "propagation measured from body +x towards +y: 0 following sea, pi/2 waves travelling "
    "to starboard (from port), pi head sea. RAO: response x_i(t) = a |H_i| cos(w t + phase_i) "
    "for zeta(CO,t) = a cos(w t) (exp(+i w t) convention, phase = lead, wrapped to (-pi, pi]). "
    "Units: force RAO N/m and N m/m; motion RAO m/m and rad/m."
)


@dataclass(eq=False)
class VesselData:
    """Zero-speed linear hydrodynamic data of one vessel (see the module docstring).

    Shapes: Nw frequencies, Nb headings. All arrays float64, SI units, body frame
    x forward / y starboard / z down, about the reference origin CO.
    """

    name: str
    rho: float                        # water density [kg/m^3]
    g: float                          # gravity [m/s^2]
    mass: float                       # [kg]
    cg: np.ndarray                    # (3,) CG relative to CO, body axes [m]
    MRB: np.ndarray                   # (6,6) rigid-body mass matrix about CO
    omega: np.ndarray                 # (Nw,) wave angular frequencies [rad/s], increasing
    added_mass: np.ndarray            # (6,6,Nw) A(w)
    damping: np.ndarray               # (6,6,Nw) potential (radiation) damping B(w)
    restoring: np.ndarray             # (6,6) hydrostatic restoring C
    viscous_damping: np.ndarray | None  # (6,6,Nw) or None
    rao_headings: np.ndarray          # (Nb,) relative wave heading beta [rad]
    force_rao_amp: np.ndarray         # (6,Nw,Nb) [N/m, N m/m]
    force_rao_phase: np.ndarray       # (6,Nw,Nb) [rad]
    motion_rao_amp: np.ndarray | None = None    # (6,Nw,Nb) [m/m, rad/m]
    motion_rao_phase: np.ndarray | None = None  # (6,Nw,Nb) [rad]
    particulars: dict[str, float] = field(default_factory=dict)  # Lpp, B, T, nabla, GM_T, ...
    reference: str = ""               # what CO is + phase/heading conventions
    source: str = ""                  # provenance and licence

    def force_rao(self) -> np.ndarray:
        """Complex force RAO H = amp exp(i phase), shape (6, Nw, Nb)."""
        return self.force_rao_amp * np.exp(1j * self.force_rao_phase)

    def motion_rao(self) -> np.ndarray | None:
        """Complex motion RAO, shape (6, Nw, Nb), or None."""
        if self.motion_rao_amp is None or self.motion_rao_phase is None:
            return None
        return self.motion_rao_amp * np.exp(1j * self.motion_rao_phase)


# ----------------------------------------------------------------------------- helpers

def cg_from_mrb(MRB: np.ndarray) -> np.ndarray:
    """r_g from MRB = [[m I, -m S(r_g)], [m S(r_g), I_CO]] (mean of both off-diagonal blocks)."""
    M = np.asarray(MRB, dtype=float)
    m = M[0, 0]
    S = 0.5 * (-M[0:3, 3:6] + M[3:6, 0:3]) / m
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


def _to_complex(amp: np.ndarray, phase: np.ndarray) -> np.ndarray:
    return np.asarray(amp, dtype=float) * np.exp(1j * np.asarray(phase, dtype=float))


def _split(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.abs(h).astype(float), np.angle(h).astype(float)


def _move_raos(force: np.ndarray, motion: np.ndarray | None, r_p: np.ndarray,
               omega: np.ndarray, headings: np.ndarray, g: float):
    """Move complex RAOs (6,Nw,Nb) referenced at point P (r_p rel. CO) to CO (module docstring)."""
    S = skew(r_p)
    k = omega**2 / g
    shift = np.exp(-1j * k[:, None] * (r_p[0] * np.cos(headings) + r_p[1] * np.sin(headings))[None, :])
    f = force.copy()
    f[3:6] = force[3:6] + np.einsum("ij,jwb->iwb", S, force[0:3])
    f = f * shift[None]
    x = None
    if motion is not None:
        x = motion.copy()
        x[0:3] = motion[0:3] + np.einsum("ij,jwb->iwb", S, motion[3:6])
        x = x * shift[None]
    return f, x


# ----------------------------------------------------------------------------- MSS

def _mss_rao(rao: Any, velocity_index: int) -> np.ndarray:
    """MSS forceRAO/motionRAO struct -> complex (6, Nw, Nb) for one speed."""
    out = []
    for d in range(6):
        a = np.asarray(rao.amp[d], dtype=float)
        p = np.asarray(rao.phase[d], dtype=float)
        if a.ndim == 3:
            a, p = a[:, :, velocity_index], p[:, :, velocity_index]
        out.append(_to_complex(a, p))
    return np.stack(out)


def _speed_slice(a: np.ndarray, nd: int, velocity_index: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    return a[..., velocity_index] if a.ndim == nd + 1 else a


def read_mss(path: str | Path, velocity_index: int = 0,
             rao_origin: Sequence[float] | str = "auto") -> VesselData:
    """Read an MSS ``vessel`` .mat file (ShipX/VERES or WAMIT import) into :class:`VesselData`.

    ``velocity_index`` selects the speed (index 0 is 0 m/s in the MSS files; this
    container is meant for zero speed). ``rao_origin`` is the point, relative to CO
    in body axes, to which the file's RAOs refer; "auto" uses (x_g, 0, 0) for
    VERES-made files (those with ``roll.veres``), as found for supply.mat and
    s175.mat, and (0, 0, 0) otherwise. The RAOs are moved to CO (module docstring).
    """
    import scipy.io

    path = Path(path)
    v = scipy.io.loadmat(str(path), squeeze_me=True, struct_as_record=False)["vessel"]
    main = v.main
    g = float(main.g)
    rho = float(main.rho)
    MRB = np.asarray(v.MRB, dtype=float)
    mass = float(MRB[0, 0])
    cg = cg_from_mrb(MRB)

    velocities = np.atleast_1d(np.asarray(v.velocities, dtype=float))
    if not 0 <= velocity_index < len(velocities):
        raise ValueError(f"velocity_index {velocity_index} out of range for velocities {velocities}")
    speed = float(velocities[velocity_index])

    omega = np.asarray(v.freqs, dtype=float).ravel()
    A = _speed_slice(v.A, 3, velocity_index)
    B = _speed_slice(v.B, 3, velocity_index)
    C = _speed_slice(v.C, 3, velocity_index)[:, :, 0]
    Bv = _speed_slice(v.Bv, 3, velocity_index) if hasattr(v, "Bv") else None

    headings = np.asarray(v.headings, dtype=float).ravel()
    w_force = np.asarray(v.forceRAO.w, dtype=float).ravel()
    if w_force.shape != omega.shape or not np.allclose(w_force, omega, rtol=1e-9, atol=0):
        raise ValueError("forceRAO.w differs from freqs; only a common frequency grid is supported")
    force = _mss_rao(v.forceRAO, velocity_index)
    motion = None
    notes = []
    if hasattr(v, "motionRAO"):
        w_motion = np.asarray(v.motionRAO.w, dtype=float).ravel()
        if w_motion.shape == omega.shape and np.allclose(w_motion, omega, rtol=1e-9, atol=0):
            motion = _mss_rao(v.motionRAO, velocity_index)
        else:
            notes.append("motionRAO dropped: its frequency grid differs from freqs")

    is_veres = hasattr(v, "roll") and hasattr(v.roll, "_fieldnames") and "veres" in v.roll._fieldnames
    if isinstance(rao_origin, str):
        if rao_origin != "auto":
            raise ValueError("rao_origin must be 'auto' or a 3-vector")
        r_p = np.array([cg[0], 0.0, 0.0]) if is_veres else np.zeros(3)
    else:
        r_p = np.asarray(rao_origin, dtype=float).reshape(3)
    force, motion = _move_raos(force, motion, r_p, omega, headings, g)
    f_amp, f_phase = _split(force)
    m_amp, m_phase = _split(motion) if motion is not None else (None, None)

    particulars: dict[str, float] = {}
    for key in ("Lpp", "B", "T", "Lwl", "S", "C_B", "nabla", "GM_T", "GM_L", "k44", "k55", "k66"):
        if hasattr(main, key):
            particulars[key] = float(getattr(main, key))
    particulars["speed"] = speed

    co = ("midships (Lpp/2), centreline, calm waterline (legacy MSS ShipX/VERES import, "
          "read_veres_ABC.m: Hmtrx([-LCG,0,0]))" if is_veres else "the MSS vessel origin CO")
    reference = (
        f"CO: {co}. MRB, A, B, Bv, C about CO; cg derived from MRB. "
        f"RAOs moved from the file's reference point P = ({r_p[0]:.6g}, {r_p[1]:.6g}, {r_p[2]:.6g}) m "
        "(moments and wave phase) to CO. " + CONVENTION_TEXT
    )
    mss_cg = np.atleast_1d(np.asarray(getattr(main, "CG", np.full(3, np.nan)), dtype=float))
    source = (
        f"MSS Marine Systems Simulator (T. I. Fossen, github.com/cybergalactic/MSS, MIT licence: "
        f"see LICENSE-MSS.txt) vessel file {path.name}"
        f"{' (ShipX/VERES strip theory via veres2vessel)' if is_veres else ''}; main.name "
        f"'{getattr(main, 'name', '')}'; main.CG as stored {np.array2string(mss_cg, precision=4)}; "
        f"speed index {velocity_index} of velocities {np.array2string(velocities, precision=4)} m/s; "
        "read by marine-cosim components/vessel_data.read_mss"
        + ("; " + "; ".join(notes) if notes else "")
    )
    return VesselData(
        name=path.stem, rho=rho, g=g, mass=mass, cg=cg, MRB=MRB, omega=omega,
        added_mass=np.array(A, dtype=float), damping=np.array(B, dtype=float),
        restoring=np.array(C, dtype=float),
        viscous_damping=None if Bv is None else np.array(Bv, dtype=float),
        rao_headings=headings, force_rao_amp=f_amp, force_rao_phase=f_phase,
        motion_rao_amp=m_amp, motion_rao_phase=m_phase,
        particulars=particulars, reference=reference, source=source,
    )


# ----------------------------------------------------------------------------- NetCDF

_MATRIX_UNITS = "block-wise SI: see long_name"
_VARS: dict[str, tuple[tuple[str, ...], str, str]] = {
    # name: (dims, units, long_name)
    "omega": (("omega",), "rad s-1", "wave angular frequency"),
    "heading": (("heading",), "rad",
                "relative wave heading beta: direction of wave propagation from body +x towards +y "
                "(0 following sea, pi head sea)"),
    "mass": ((), "kg", "vessel mass"),
    "cg": (("xyz",), "m", "centre of gravity relative to CO, body axes x fwd, y stbd, z down"),
    "MRB": (("dof", "dof_j"), _MATRIX_UNITS,
            "rigid-body mass matrix about CO [kg | kg m | kg m2]"),
    "added_mass": (("dof", "dof_j", "omega"), _MATRIX_UNITS,
                   "added mass A(omega) about CO [kg | kg m | kg m2]"),
    "radiation_damping": (("dof", "dof_j", "omega"), _MATRIX_UNITS,
                          "potential (radiation) damping B(omega) about CO [N s m-1 | N s | N m s]"),
    "restoring": (("dof", "dof_j"), _MATRIX_UNITS,
                  "hydrostatic restoring matrix C about CO [N m-1 | N | N m]"),
    "viscous_damping": (("dof", "dof_j", "omega"), _MATRIX_UNITS,
                        "viscous damping Bv(omega) about CO [N s m-1 | N s | N m s]"),
    "force_rao_amplitude": (("dof", "omega", "heading"), "N m-1 | N m m-1",
                            "first-order wave excitation force/moment about CO per unit wave amplitude"),
    "force_rao_phase": (("dof", "omega", "heading"), "rad",
                        "phase p of the force RAO: F(t) = a |F| cos(omega t + p), zeta(CO,t) = a cos(omega t)"),
    "motion_rao_amplitude": (("dof", "omega", "heading"), "m m-1 | rad m-1",
                             "motion of CO per unit wave amplitude (translations, rotations)"),
    "motion_rao_phase": (("dof", "omega", "heading"), "rad",
                         "phase p of the motion RAO: x(t) = a |H| cos(omega t + p), zeta(CO,t) = a cos(omega t)"),
}
_FIELD_OF_VAR = {
    "omega": "omega", "heading": "rao_headings", "mass": "mass", "cg": "cg", "MRB": "MRB",
    "added_mass": "added_mass", "radiation_damping": "damping", "restoring": "restoring",
    "viscous_damping": "viscous_damping", "force_rao_amplitude": "force_rao_amp",
    "force_rao_phase": "force_rao_phase", "motion_rao_amplitude": "motion_rao_amp",
    "motion_rao_phase": "motion_rao_phase",
}
_OPTIONAL_VARS = ("viscous_damping", "motion_rao_amplitude", "motion_rao_phase")


def write_netcdf(vessel: VesselData, path: str | Path) -> Path:
    """Write ``vessel`` in the neutral NetCDF-3 format (module docstring, docs/vessel_format.md)."""
    from scipy.io import netcdf_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nw, nb = len(vessel.omega), len(vessel.rao_headings)
    with netcdf_file(str(path), "w", version=1) as f:
        f.conventions = CONVENTIONS.encode()
        f.name = vessel.name.encode("utf-8")
        f.rho = np.float64(vessel.rho)
        f.g = np.float64(vessel.g)
        f.reference = vessel.reference.encode("utf-8")
        f.source = vessel.source.encode("utf-8")
        f.dof_order = " ".join(DOF_NAMES).encode()
        for key, value in vessel.particulars.items():
            if not key.replace("_", "").isalnum():
                raise ValueError(f"particular name {key!r} is not a valid attribute name")
            setattr(f, f"particular_{key}", np.float64(value))
        f.createDimension("omega", nw)
        f.createDimension("heading", nb)
        f.createDimension("dof", 6)
        f.createDimension("dof_j", 6)
        f.createDimension("xyz", 3)
        for var, (dims, units, long_name) in _VARS.items():
            value = getattr(vessel, _FIELD_OF_VAR[var])
            if value is None:
                if var in _OPTIONAL_VARS:
                    continue
                raise ValueError(f"{_FIELD_OF_VAR[var]} is required")
            data = np.asarray(value, dtype=np.float64)
            expected = tuple(f.dimensions[d] for d in dims)
            if data.shape != expected:
                raise ValueError(f"{_FIELD_OF_VAR[var]}: shape {data.shape}, expected {expected}")
            nc_var = f.createVariable(var, "d", dims)
            nc_var.data[...] = data
            nc_var.units = units.encode()
            nc_var.long_name = long_name.encode()
    return path


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def read_netcdf(path: str | Path) -> VesselData:
    """Read a file written by :func:`write_netcdf` ("marine-cosim vessel 1.x")."""
    from scipy.io import netcdf_file

    path = Path(path)
    with netcdf_file(str(path), "r", mmap=False) as f:
        attrs = dict(f._attributes)
        conventions = _text(attrs.get("conventions", b""))
        if not conventions.startswith("marine-cosim vessel 1."):
            raise ValueError(f"{path}: not a marine-cosim vessel file (conventions={conventions!r})")
        arrays: dict[str, np.ndarray | None] = {}
        for var in _VARS:
            if var in f.variables:
                arrays[_FIELD_OF_VAR[var]] = np.array(f.variables[var].data, dtype=np.float64)
            elif var in _OPTIONAL_VARS:
                arrays[_FIELD_OF_VAR[var]] = None
            else:
                raise ValueError(f"{path}: variable {var!r} missing")
    particulars = {k[len("particular_"):]: float(np.asarray(v).reshape(-1)[0])
                   for k, v in attrs.items() if k.startswith("particular_")}
    return VesselData(
        name=_text(attrs.get("name", b"")),
        rho=float(np.asarray(attrs["rho"]).reshape(-1)[0]),
        g=float(np.asarray(attrs["g"]).reshape(-1)[0]),
        mass=float(arrays.pop("mass")),
        particulars=particulars,
        reference=_text(attrs.get("reference", b"")),
        source=_text(attrs.get("source", b"")),
        **arrays,
    )


# ----------------------------------------------------------------------------- Capytaine

_CPT_DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
_AXES = {
    # mesh axes -> (DOF signs T, heading map beta = a + s * beta_cpt)
    "forward-port-up": (np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0]), 0.0, -1.0),
    "aft-starboard-up": (np.array([-1.0, 1.0, -1.0, -1.0, 1.0, -1.0]), math.pi, -1.0),
}


def _labels(ds: Any, coord: str) -> list[str]:
    return [(x.decode() if isinstance(x, bytes) else str(x)).strip().lower()
            for x in np.asarray(ds.coords[coord].values).ravel()]


def _dof_index(ds: Any, coord: str) -> list[int]:
    labels = _labels(ds, coord)
    try:
        return [labels.index(n) for n in _CPT_DOFS]
    except ValueError:
        raise ValueError(f"Capytaine dataset: coordinate {coord!r} must contain "
                         f"Surge..Yaw, has {labels}") from None


def _capy_array(ds: Any, var: str, want: Sequence[str], freq_dim: str | None) -> np.ndarray:
    """ds[var] as an array with axes ordered as ``want`` (complex merged, singleton dims dropped)."""
    da = ds[var]
    dims = list(da.dims)
    values = np.asarray(da.values)
    if "complex" in dims:
        ax = dims.index("complex")
        labels = _labels(ds, "complex") if "complex" in ds.coords else ["re", "im"]
        re = np.take(values, labels.index("re"), axis=ax)
        im = np.take(values, labels.index("im"), axis=ax)
        values = re + 1j * im
        dims.pop(ax)
    want = [freq_dim if (w == "omega" and freq_dim) else w for w in want]
    for d in list(dims):
        if d not in want:
            ax = dims.index(d)
            if values.shape[ax] != 1:
                raise ValueError(f"Capytaine dataset: {var} has extra dimension {d!r} of size "
                                 f"{values.shape[ax]}; select one value first")
            values = np.take(values, 0, axis=ax)
            dims.pop(ax)
    missing = [w for w in want if w not in dims]
    if missing:
        raise ValueError(f"Capytaine dataset: {var} lacks dimension(s) {missing} (has {dims})")
    return np.transpose(values, [dims.index(w) for w in want])


def _scalar_coord(ds: Any, name: str, default: float) -> float:
    try:
        return float(np.asarray(ds.coords[name].values).reshape(-1)[0])
    except (KeyError, AttributeError, IndexError):
        return default


def _matrix66(value: Any) -> np.ndarray:
    """6x6 matrix [influenced i, radiating j] from an array or a labelled DataArray."""
    dims = list(getattr(value, "dims", ()))
    values = np.asarray(getattr(value, "values", value))
    if {"influenced_dof", "radiating_dof"} <= set(dims):
        values = np.transpose(values, [dims.index("influenced_dof"), dims.index("radiating_dof")])
        ii = _dof_index(value, "influenced_dof") if "influenced_dof" in getattr(value, "coords", {}) \
            else list(range(6))
        jj = _dof_index(value, "radiating_dof") if "radiating_dof" in getattr(value, "coords", {}) \
            else list(range(6))
        values = values[np.ix_(ii, jj)]
    values = np.asarray(values, dtype=float)
    if values.shape != (6, 6):
        raise ValueError(f"expected a 6x6 matrix, got shape {values.shape}")
    return values


def from_capytaine(dataset: Any, mass: float, cg: Sequence[float],
                   inertia_matrix: Any = None, restoring: Any = None, *,
                   rotation_center: Sequence[float] = (0.0, 0.0, 0.0),
                   axes: str = "forward-port-up", name: str | None = None,
                   rho: float | None = None, g: float | None = None,
                   particulars: Mapping[str, float] | None = None,
                   source: str = "") -> VesselData:
    """Build :class:`VesselData` from a Capytaine result dataset (conventions in the module docstring).

    ``dataset``: an xarray.Dataset from ``assemble_dataset``/``fill_dataset`` or any
    object with ``.coords[...]`` and ``[var].dims/.values``; or a path to a NetCDF
    file written by Capytaine (then xarray is required). Only one body, one water
    depth, zero forward speed. Frequencies that are not finite and positive (the
    omega = 0 and omega = inf limits) are dropped.

    ``cg``, ``rotation_center``, ``inertia_matrix`` and ``restoring`` are in the
    Capytaine mesh frame (``axes``: "forward-port-up", Capytaine's usual x forward,
    z up; or "aft-starboard-up", the MSS-Capytaine mesh), matrices about the
    rotation centre of the rigid-body DOFs, which becomes CO. ``inertia_matrix`` and
    ``restoring`` default to the dataset's ``inertia_matrix`` and
    ``hydrostatic_stiffness``. rho and g default to the dataset's coordinates.
    """
    if isinstance(dataset, (str, Path)):
        try:
            import xarray as xr
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("from_capytaine(path) needs xarray: pip install xarray "
                              "(or pass an already opened dataset)") from exc
        path = Path(dataset)
        with xr.open_dataset(path) as opened:
            dataset = opened.load()
        source = source or f"Capytaine NetCDF file {path.name}"
    if axes not in _AXES:
        raise ValueError(f"axes must be one of {sorted(_AXES)}")
    T, h0, hs = _AXES[axes]
    T3 = T[0:3]
    ds = dataset

    # Frequency axis: omega may be a non-dimension coordinate (period/wavenumber dims).
    omega_all = np.asarray(ds.coords["omega"].values, dtype=float).ravel()
    freq_dim = None
    dims_of_omega = tuple(getattr(ds.coords["omega"], "dims", ("omega",)))
    if dims_of_omega and dims_of_omega[0] != "omega":
        freq_dim = dims_of_omega[0]
    keep = np.isfinite(omega_all) & (omega_all > 0)
    order = np.argsort(omega_all[keep], kind="stable")
    omega = omega_all[keep][order]
    if np.any(np.diff(omega) <= 0):
        raise ValueError("Capytaine dataset: repeated omega values")

    def freq_select(a: np.ndarray, axis: int) -> np.ndarray:
        return np.take(np.compress(keep, a, axis=axis), order, axis=axis)

    rad = _dof_index(ds, "radiating_dof")
    inf = _dof_index(ds, "influenced_dof")
    TT = T[:, None] * T[None, :]

    def radiation(var: str) -> np.ndarray:
        a = _capy_array(ds, var, ("omega", "radiating_dof", "influenced_dof"), freq_dim).real
        a = freq_select(a, 0)[:, rad][:, :, inf]            # (Nw, j, i)
        return np.transpose(a, (2, 1, 0)) * TT[:, :, None]   # (i, j, Nw)

    A = radiation("added_mass")
    B = radiation("radiation_damping")

    names = set(ds.data_vars) if hasattr(ds, "data_vars") else set(ds.keys())
    if "excitation_force" in names:
        X = _capy_array(ds, "excitation_force", ("omega", "wave_direction", "influenced_dof"), freq_dim)
    elif {"Froude_Krylov_force", "diffraction_force"} <= names:
        want = ("omega", "wave_direction", "influenced_dof")
        X = (_capy_array(ds, "Froude_Krylov_force", want, freq_dim)
             + _capy_array(ds, "diffraction_force", want, freq_dim))
    else:
        raise ValueError("Capytaine dataset: no excitation_force (or Froude_Krylov_force + "
                         "diffraction_force)")
    beta_cpt = np.asarray(ds.coords["wave_direction"].values, dtype=float).ravel()
    beta = np.mod(h0 + hs * beta_cpt, 2 * math.pi)
    beta[np.isclose(beta, 2 * math.pi, rtol=0, atol=1e-9)] = 0.0
    horder = np.argsort(beta, kind="stable")
    beta = beta[horder]
    if np.any(np.diff(beta) <= 1e-12):
        raise ValueError("Capytaine dataset: repeated wave directions after mapping to [0, 2 pi)")

    rc = np.asarray(rotation_center, dtype=float).reshape(3)
    g_val = float(g) if g is not None else _scalar_coord(ds, "g", 9.81)
    rho_val = float(rho) if rho is not None else _scalar_coord(ds, "rho", 1025.0)
    k = omega**2 / g_val
    # phase reference: mesh origin -> rotation centre (mesh frame, Capytaine heading)
    b_cpt = beta_cpt[horder]
    shift = np.exp(1j * k[:, None] * (rc[0] * np.cos(b_cpt) + rc[1] * np.sin(b_cpt))[None, :])

    def excitation(Xc: np.ndarray, dof_idx: list[int]) -> np.ndarray:
        Xc = freq_select(Xc, 0)[:, horder][:, :, dof_idx]      # (Nw, Nb, 6)
        H = np.conj(np.transpose(Xc, (2, 0, 1))) * T[:, None, None]
        return H * shift[None]

    F = excitation(X, inf)
    motion = None
    for var in ("motion_rao", "RAO", "rao"):
        if var in names:
            R = _capy_array(ds, var, ("omega", "wave_direction", "radiating_dof"), freq_dim)
            motion = excitation(R, rad)
            break

    if inertia_matrix is None:
        if "inertia_matrix" not in names:
            raise ValueError("no inertia_matrix given and none in the dataset")
        inertia_matrix = ds["inertia_matrix"]
    if restoring is None:
        if "hydrostatic_stiffness" not in names:
            raise ValueError("no restoring given and no hydrostatic_stiffness in the dataset")
        restoring = ds["hydrostatic_stiffness"]
    M = _matrix66(inertia_matrix)
    C = _matrix66(restoring)
    f_amp, f_phase = _split(F)
    m_amp, m_phase = _split(motion) if motion is not None else (None, None)
    cg_body = T3 * (np.asarray(cg, dtype=float).reshape(3) - rc)
    if name is None:
        name = str(getattr(ds, "attrs", {}).get("body_name", "")) or "capytaine_vessel"
    parts = dict(particulars or {})
    parts.setdefault("speed", 0.0)
    reference = (f"CO: the Capytaine rotation centre {tuple(float(c) for c in rc)} m in mesh axes "
                 f"'{axes}'. " + CONVENTION_TEXT)
    return VesselData(
        name=name, rho=rho_val, g=g_val, mass=float(mass), cg=cg_body, MRB=M * TT,
        omega=omega, added_mass=A, damping=B, restoring=C * TT, viscous_damping=None,
        rao_headings=beta, force_rao_amp=f_amp, force_rao_phase=f_phase,
        motion_rao_amp=m_amp, motion_rao_phase=m_phase, particulars=parts,
        reference=reference,
        source=(source or "Capytaine dataset") + "; converted by marine-cosim "
               "components/vessel_data.from_capytaine",
    )


# ----------------------------------------------------------------------------- loading

def load_vessel(path: str | Path) -> VesselData:
    """Load by extension: ``.mat`` (MSS, :func:`read_mss`) or ``.nc`` (neutral, :func:`read_netcdf`)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".mat":
        return read_mss(path)
    if suffix in (".nc", ".nc3", ".cdf"):
        return read_netcdf(path)
    raise ValueError(f"{path}: unknown vessel file type {suffix!r} (expected .mat or .nc)")


def default_vessel_path() -> Path:
    """The bundled MSS supply vessel in the neutral format (components/data/vessels/supply.nc)."""
    return Path(__file__).resolve().parent / "data" / "vessels" / "supply.nc"


# ----------------------------------------------------------------------------- validation

def _first_bad(a: np.ndarray) -> tuple[int, ...] | None:
    bad = np.argwhere(~np.isfinite(a))
    return tuple(int(i) for i in bad[0]) if len(bad) else None


def validate_vessel(v: VesselData, sym_tol: float = 0.1) -> list[tuple[str, object, str]]:
    """Check ``v``; return a list of (field, value, reason), empty if all is well. Never raises.

    Checks: types and shapes; finiteness; rho, g, mass > 0; MRB symmetric (1e-9),
    positive definite, m I3 block = mass, off-diagonal blocks = -/+ m S(cg); omega > 0
    and strictly increasing; A(w), B(w), C, Bv(w) symmetric-ish:
    |M_ij - M_ji| <= sym_tol sqrt(max_w |M_ii| max_w |M_jj|) (max |M| where a diagonal
    entry is 0; the default 0.1 passes a coarse Capytaine box mesh, up to 0.05, and
    catches a sign error in a coupling, 2 |M_ij| / scale); diag B >= 0, diag Bv >= 0;
    C33, C44, C55 > 0; headings strictly increasing; RAO amplitudes >= 0; motion
    amplitude and phase both or neither; particulars finite floats; name, reference
    and source non-empty strings.
    """
    issues: list[tuple[str, object, str]] = []

    def check(fieldname: str, fn) -> None:
        try:
            fn()
        except Exception as exc:  # validation must never raise
            issues.append((fieldname, None, f"check failed: {type(exc).__name__}: {exc}"))

    def arr(fieldname: str, shape: tuple[int, ...] | None, optional: bool = False):
        a = getattr(v, fieldname, None)
        if a is None:
            if not optional:
                issues.append((fieldname, None, "missing"))
            return None
        a = np.asarray(a)
        if not np.issubdtype(a.dtype, np.number):
            issues.append((fieldname, a.dtype, "not numeric"))
            return None
        if shape is not None and a.shape != shape:
            issues.append((fieldname, a.shape, f"shape {a.shape}, expected {shape}"))
            return None
        bad = _first_bad(a)
        if bad is not None:
            issues.append((fieldname, bad, f"non-finite value (NaN/inf) at index {bad}"))
            return None
        return a.astype(float)

    def positive_scalar(fieldname: str) -> None:
        x = getattr(v, fieldname, None)
        if not isinstance(x, (int, float, np.floating, np.integer)) or not math.isfinite(float(x)) \
                or float(x) <= 0:
            issues.append((fieldname, x, "must be a finite number > 0"))

    def symmetric(fieldname: str, a: np.ndarray, tol: float = sym_tol) -> None:
        mats = a if a.ndim == 3 else a[:, :, None]
        # unit-consistent scale of entry (i, j): sqrt(|M_ii| |M_jj|), diagonal taken at its
        # largest over the frequencies (BEM noise where B(w) -> 0 is not an asymmetry)
        d = np.max(np.abs(np.diagonal(mats, axis1=0, axis2=1)), axis=0)
        scale = np.sqrt(np.outer(d, d))
        scale[scale == 0] = np.max(np.abs(mats))
        if not np.any(scale > 0):
            return
        for n in range(mats.shape[2]):
            m = mats[:, :, n]
            rel = np.abs(m - m.T) / np.where(scale > 0, scale, 1.0)
            if rel.max() > tol:
                i, j = (int(x) for x in np.unravel_index(np.argmax(rel), rel.shape))
                where = "" if a.ndim == 2 else f" at omega index {n}"
                issues.append((fieldname, float(rel.max()),
                               f"not symmetric{where}: |M[{i},{j}] - M[{j},{i}]| / "
                               f"sqrt(max|M[{i},{i}]| max|M[{j},{j}]|) = {rel.max():.3g}"))
                return

    for name in ("name", "reference", "source"):
        check(name, lambda name=name: None if isinstance(getattr(v, name, None), str)
              and getattr(v, name) else issues.append((name, getattr(v, name, None),
                                                       "must be a non-empty string")))
    for name in ("rho", "g", "mass"):
        check(name, lambda name=name: positive_scalar(name))

    omega = None
    nw = nb = None

    def c_omega() -> None:
        nonlocal omega, nw
        o = arr("omega", None)
        if o is None:
            return
        if o.ndim != 1 or len(o) < 1:
            issues.append(("omega", o.shape, "must be a non-empty 1-D array"))
            return
        nw = len(o)
        if np.any(o <= 0):
            issues.append(("omega", float(o.min()), "frequencies must be > 0"))
        d = np.diff(o)
        if np.any(d <= 0):
            i = int(np.argmax(d <= 0))
            issues.append(("omega", (float(o[i]), float(o[i + 1])),
                           f"not strictly increasing at index {i}"))
        omega = o
    check("omega", c_omega)

    def c_headings() -> None:
        nonlocal nb
        h = arr("rao_headings", None)
        if h is None:
            return
        if h.ndim != 1 or len(h) < 1:
            issues.append(("rao_headings", h.shape, "must be a non-empty 1-D array"))
            return
        nb = len(h)
        d = np.diff(h)
        if np.any(d <= 0):
            i = int(np.argmax(d <= 0))
            issues.append(("rao_headings", (float(h[i]), float(h[i + 1])),
                           f"not strictly increasing at index {i}"))
    check("rao_headings", c_headings)

    def c_cg() -> None:
        arr("cg", (3,))
    check("cg", c_cg)

    def c_mrb() -> None:
        M = arr("MRB", (6, 6))
        if M is None:
            return
        symmetric("MRB", M, tol=1e-9)
        if np.allclose(M, M.T, rtol=0, atol=1e-9 * np.max(np.abs(M))):
            eig = np.linalg.eigvalsh(0.5 * (M + M.T))
            if eig.min() <= 0:
                issues.append(("MRB", float(eig.min()), "not positive definite (min eigenvalue)"))
        try:
            m = float(v.mass)
            if not np.allclose(M[0:3, 0:3], m * np.eye(3), rtol=0, atol=1e-6 * m):
                issues.append(("MRB", M[0:3, 0:3].diagonal().tolist(), "upper-left block != mass * I3"))
            cg = np.asarray(v.cg, dtype=float).reshape(3)
            ref = m * skew(cg)
            err = max(np.max(np.abs(-M[0:3, 3:6] - ref)), np.max(np.abs(M[3:6, 0:3] - ref)))
            if err > 1e-6 * m * max(1.0, float(np.max(np.abs(cg)))):
                issues.append(("MRB", float(err), "off-diagonal blocks inconsistent with cg "
                               "(expected -m S(cg) / m S(cg))"))
        except Exception:
            pass
    check("MRB", c_mrb)

    def c_freq_mats() -> None:
        for name, optional in (("added_mass", False), ("damping", False), ("viscous_damping", True)):
            a = arr(name, (6, 6, nw) if nw else None, optional=optional)
            if a is None:
                continue
            if a.ndim != 3 or a.shape[:2] != (6, 6):
                issues.append((name, a.shape, "expected shape (6, 6, Nw)"))
                continue
            symmetric(name, a)
            if name != "added_mass":
                dmin = float(np.min(np.diagonal(a, axis1=0, axis2=1)))
                scale = float(np.max(np.abs(a))) or 1.0
                if dmin < -sym_tol * scale:
                    issues.append((name, dmin, "negative diagonal damping"))
    check("added_mass", c_freq_mats)

    def c_restoring() -> None:
        C = arr("restoring", (6, 6))
        if C is None:
            return
        symmetric("restoring", C)
        for i in (2, 3, 4):
            if C[i, i] <= 0:
                issues.append(("restoring", (i, i, float(C[i, i])),
                               f"C{i + 1}{i + 1} must be > 0 (hydrostatic stability)"))
    check("restoring", c_restoring)

    def c_raos() -> None:
        shape = (6, nw, nb) if nw and nb else None
        for amp_name, ph_name, optional in (("force_rao_amp", "force_rao_phase", False),
                                            ("motion_rao_amp", "motion_rao_phase", True)):
            if optional and (getattr(v, amp_name, None) is None) != (getattr(v, ph_name, None) is None):
                issues.append((amp_name, None, f"{amp_name} and {ph_name} must both be set or both None"))
                continue
            a = arr(amp_name, shape, optional)
            arr(ph_name, shape, optional)
            if a is not None and np.any(a < 0):
                issues.append((amp_name, float(a.min()), "negative amplitude"))
    check("force_rao_amp", c_raos)

    def c_particulars() -> None:
        p = getattr(v, "particulars", None)
        if not isinstance(p, Mapping):
            issues.append(("particulars", type(p).__name__, "must be a dict[str, float]"))
            return
        for key, value in p.items():
            if not isinstance(key, str) or not key.replace("_", "").isalnum():
                issues.append(("particulars", key, "key must be an identifier-like string"))
            try:
                ok = math.isfinite(float(value))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                issues.append(("particulars", (key, value), "value must be a finite number"))
    check("particulars", c_particulars)
    return issues
