"""Hull data of the third-party ship FMU (third_party_ship.c), derived from the bundled MSS supply
vessel so that the ship swap can be checked against Ship.fmu.

The C files (third_party_ship.c, manoeuvring_ship_fmi1.c) and the FMI 3.0 ship's Python script
(tests/models/fmi3/vessel_6dof.py) carry the numbers as literal tables between the markers
``BEGIN VESSEL DATA`` and ``END VESSEL DATA`` (a vendor ships its hull data inside its FMU);
:func:`c_tables` and :func:`python_tables` write those blocks and tests/runs/test_ship_swap.py checks
that the files hold exactly these numbers, so they cannot drift apart. Regenerate with::

    python -m tests.models.c_fmu.third_party_ship_data [python]       # prints the block

What is shared with Ship.fmu is the hull only: M_RB + A_inf (Ship.fmu's radiation fit of order 4,
moved from CO to the CG), the hydrostatic coefficients about CO and the particulars. The
dynamics (Euler angles, CG reference, constant damping ratios instead of fluid memory, long-wave
Froude-Krylov excitation) and every convention at the interface are the C model's own.
"""
from __future__ import annotations

import numpy as np


def hull() -> dict:
    """Particulars, CG, mass matrix about the CG and hydrostatics about CO (SI, body x forward,
    y starboard, z down)."""
    from components.rotations import skew
    from components.vessel_data import default_vessel_path, load_vessel
    from tests.models.supply_vessel import vessel_inertia

    vessel = load_vessel(default_vessel_path())
    Ms_co = vessel_inertia(4)                              # M_RB + A_inf about CO, as Ship.fmu builds it
    r_g = np.asarray(vessel.cg, float)                     # CG relative to CO
    # nu_co = H nu_cg (velocity of CO = velocity of CG + omega x (r_co - r_cg)); M_cg = H^T M_co H
    H = np.eye(6)
    H[0:3, 3:6] = skew(r_g)
    M_cg = H.T @ Ms_co @ H
    M_cg = 0.5 * (M_cg + M_cg.T)
    p = vessel.particulars
    lpp, draught = float(p["Lpp"]), float(p["T"])
    C = vessel.restoring
    return {
        "lpp": lpp, "draught": draught,
        # AP/CL/BL coordinates of the CG: x forward of the aft perpendicular, y to port of the
        # centreline, z up from the baseline (CO is amidships, on the centreline, in the waterline)
        "cg_x_rel_ap": lpp / 2.0 + r_g[0], "cg_y_rel_cl": 0.0 - r_g[1], "cg_z_rel_bl": draught - r_g[2],
        "mass_cg": M_cg,
        "c33": float(C[2, 2]), "c35": float(0.5 * (C[2, 4] + C[4, 2])), "c44": float(C[3, 3]), "c55": float(C[4, 4]),
        "rho": float(vessel.rho), "g": float(vessel.g),
        # linear viscous damping in surge, sway, yaw (no restoring there: the lowest data frequency, as
        # Ship.fmu takes it)
        "viscous3": [float(vessel.viscous_damping[i, i, 0]) if vessel.viscous_damping is not None else 0.0
                     for i in (0, 1, 5)],
    }


def c_tables(data: dict | None = None) -> str:
    """The C block between the markers (without the marker lines)."""
    d = data or hull()
    f = lambda x: repr(float(x))
    rows = ",\n".join("    {" + ", ".join(f(x) for x in row) + "}" for row in d["mass_cg"])
    return "\n".join([
        "/* particulars [m] */",
        f"#define HULL_LPP {f(d['lpp'])}",
        f"#define HULL_DRAUGHT {f(d['draught'])}",
        "/* CG: x forward of AP, y to port of CL, z up from BL [m] */",
        f"#define HULL_CG_X_REL_AP {f(d['cg_x_rel_ap'])}",
        f"#define HULL_CG_Y_REL_CL {f(d['cg_y_rel_cl'])}",
        f"#define HULL_CG_Z_REL_BL {f(d['cg_z_rel_bl'])}",
        "/* hydrostatic restoring about the waterplane reference (amidships, CL, WL) [N/m, N, N.m/rad] */",
        f"#define HULL_C33 {f(d['c33'])}",
        f"#define HULL_C35 {f(d['c35'])}",
        f"#define HULL_C44 {f(d['c44'])}",
        f"#define HULL_C55 {f(d['c55'])}",
        f"#define WATER_DENSITY {f(d['rho'])}",
        f"#define GRAVITY {f(d['g'])}",
        "/* rigid-body mass plus infinite-frequency added mass about the CG, body axes x fwd, y stbd, z down",
        "   (surge, sway, heave, roll, pitch, yaw) [kg, kg.m, kg.m2] */",
        "static const double MASS_CG[6][6] = {",
        rows,
        "};",
    ])


def python_tables(data: dict | None = None) -> str:
    """The Python block between the markers (without the marker lines), for vessel_6dof.py."""
    d = data or hull()
    f = lambda x: repr(float(x))
    rows = ",\n".join("    [" + ", ".join(f(x) for x in row) + "]" for row in d["mass_cg"])
    return "\n".join([
        "# particulars [m]; CG: x forward of AP, y to port of CL, z up from BL [m]",
        f"LPP, DRAUGHT = {f(d['lpp'])}, {f(d['draught'])}",
        f"CG_X_REL_AP, CG_Y_REL_CL, CG_Z_REL_BL = {f(d['cg_x_rel_ap'])}, {f(d['cg_y_rel_cl'])}, {f(d['cg_z_rel_bl'])}",
        "# hydrostatic restoring about the waterplane reference (amidships, CL, WL) [N/m, N, N.m/rad]",
        f"C33, C35, C44, C55 = {f(d['c33'])}, {f(d['c35'])}, {f(d['c44'])}, {f(d['c55'])}",
        "# rigid-body mass plus infinite-frequency added mass about the CG, body axes x fwd, y stbd, z down",
        "# (surge, sway, heave, roll, pitch, yaw) [kg, kg.m, kg.m2]",
        "MASS_CG = [",
        rows,
        "]",
    ])


def manoeuvring_c_tables(data: dict | None = None) -> str:
    """The C block of the 3-DOF manoeuvring ship (manoeuvring_ship_fmi1.c): the surge, sway and yaw
    rows and columns of the mass matrix about the CG, and the CG."""
    d = data or hull()
    f = lambda x: repr(float(x))
    m = np.asarray(d["mass_cg"])[np.ix_([0, 1, 5], [0, 1, 5])]
    rows = ",\n".join("    {" + ", ".join(f(x) for x in row) + "}" for row in m)
    return "\n".join([
        "/* particulars [m]; CG: x forward of AP, y to port of CL, z up from BL [m] */",
        f"#define HULL_LPP {f(d['lpp'])}",
        f"#define HULL_CG_X_REL_AP {f(d['cg_x_rel_ap'])}",
        "/* rigid-body mass plus infinite-frequency added mass about the CG, surge, sway, yaw rows and columns",
        "   (body axes x fwd, y stbd, z down) [kg, kg.m, kg.m2] */",
        "static const double MASS3[3][3] = {",
        rows,
        "};",
        "/* linear viscous damping, surge, sway, yaw [N.s/m, N.s/m, N.m.s/rad] */",
        "static const double DAMPING3[3] = {" + ", ".join(f(x) for x in d["viscous3"]) + "};",
    ])


def extract_block(source: str) -> str:
    """The text between the BEGIN and END VESSEL DATA markers of a C or Python file."""
    begin = source.index("BEGIN VESSEL DATA")
    begin = source.index("\n", begin) + 1
    end = source.index("END VESSEL DATA", begin)
    end = source.rindex("\n", begin, end) + 1
    return source[begin:end].rstrip("\n")


def numbers(block: str) -> list[float]:
    """The numeric literals of a block (comments removed), in order: to compare the C tables with
    :func:`c_tables` to a relative tolerance (the radiation fit moves in the last digits between
    numpy/scipy builds)."""
    import re

    code = re.sub(r"/\*.*?\*/", " ", block, flags=re.S)
    code = re.sub(r"\[6\]", " ", code)
    return [float(x) for x in re.findall(r"(?<![\w.])[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?", code)]


if __name__ == "__main__":
    import sys

    print({"python": python_tables, "manoeuvring": manoeuvring_c_tables}.get(sys.argv[1] if len(sys.argv) > 1
                                                                             else "", c_tables)())
