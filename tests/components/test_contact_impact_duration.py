"""The contact stiffness of SMS API 4.5.1 that sms_api_digest.md section 8 derives ("Contact"): the
Kelvin-Voigt-Winkler volumetric law (report eqs. 83-89) with E = 950 MPa on the 5 x 5 m face of the
25 t box, bed depths h_A + h_B = 30.6 m (the equivalent-sphere radii), gives k = E A / (h_A + h_B)
= 7.8e8 N/m; on 25 t that is omega = 176 rad/s and an impact lasting pi / omega, "about 18 ms".

The interference volume of a face landing flat grows linearly with the depth, so the undamped
contact (B = 1 Pa s) is a linear spring.  Without gravity the box leaves the ground after half a
period, pi / omega; with gravity it oscillates about the static depth d_s = m g / k with the
amplitude A = sqrt(d_s^2 + (v0 / omega)^2) and stays in contact for (pi + 2 asin(d_s / A)) / omega.
Run through components/contact.py (ContactPair) with the velocity Verlet integrator of
tests/fmus/test_contact.py at 2e-5 s steps.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.contact import ContactMaterial, ContactPair
from components.convex import Box
from tests.fmus.test_contact import G, I3, translate

VALIDATION_COMPONENT = "contact"
SOURCE = "sms_api_digest.md 8 (contact: k = 7.8e8 N/m, 176 rad/s, about 18 ms) and 4.5.1"
M, H = 25e3, 2e-5


def time_in_contact(gravity: float, v0: float) -> tuple[float, float, float]:
    """(time in contact, impact speed, k): the box released 5 mm above the ground (its top face at
    z 1.1 m, NED) at v0 downwards."""
    pair = ContactPair(Box([2.5, 2.5, 0.5]), Box([50.0, 50.0, 5.0]), ContactMaterial(950e6, 1.0),
                       ContactMaterial(950e6, 1.0))
    rows = []
    translate(pair, M, np.array([0.0, 0.0, 0.595]), np.array([0.0, 0.0, v0]), np.array([0.0, 0.0, 6.1]), I3,
              t_end=0.06, h_contact=H, h_free=H, g=np.array([0.0, 0.0, gravity]),
              record=lambda t, x, v, r: rows.append((t, r.volume > 0.0, v[2])))
    t = np.array([r[0] for r in rows])
    inside = np.array([r[1] for r in rows])
    first, last = int(np.argmax(inside)), len(inside) - 1 - int(np.argmax(inside[::-1]))
    assert inside[first] and not inside[-1]                   # one impact, over by the end
    return float(t[last] - t[first]), float(rows[first - 1][2]), pair.E_eff * 25.0


def test_sms_4_5_1_contact_stiffness_and_impact_duration(validation):
    duration, v_impact, k = time_in_contact(0.0, 0.3)
    omega = math.sqrt(k / M)
    # the stiffness and the frequency to their printed digits
    validation.record(case="SMS 4.5.1 contact stiffness E A / (h_A + h_B) of the 25 t box on the ground",
                      reference=7.8e8, ours=k, tolerance=0.05e8 + 1e-3, tol_kind="abs", unit="N/m", source=SOURCE)
    validation.record(case="SMS 4.5.1 contact frequency sqrt(k / m)", reference=176.0, ours=omega,
                      tolerance=0.5 + 1e-9, tol_kind="abs", unit="rad/s", source=SOURCE)
    # the first and the last step in contact bound the time in contact: two steps of 2e-5 s
    validation.record(case="SMS 4.5.1 undamped impact of the 25 t box, no gravity: time in contact vs pi / omega",
                      reference=math.pi / omega, ours=duration, tolerance=2 * H, tol_kind="abs", unit="s",
                      source=SOURCE)
    validation.record(case="SMS 4.5.1 undamped impact of the 25 t box, no gravity: time in contact vs 'about 18 ms'",
                      reference=0.018, ours=duration, tolerance=5e-4, tol_kind="abs", unit="s", source=SOURCE)
    assert abs(k - 7.8e8) <= 0.05e8
    assert abs(omega - 176.0) <= 0.5
    assert duration == pytest.approx(math.pi / omega, abs=2 * H)
    assert abs(duration - 0.018) <= 5e-4


def test_sms_4_5_1_impact_duration_under_gravity(validation):
    duration, v_impact, k = time_in_contact(G, 0.0)
    omega = math.sqrt(k / M)
    ds = M * G / k
    amplitude = math.hypot(ds, v_impact / omega)
    reference = (math.pi + 2.0 * math.asin(ds / amplitude)) / omega
    validation.record(case="SMS 4.5.1 undamped impact of the 25 t box from 5 mm: time in contact vs "
                           "(pi + 2 asin(d_s / A)) / omega", reference=reference, ours=duration, tolerance=2 * H,
                      tol_kind="abs", unit="s", source=SOURCE + " (linear spring under gravity)")
    assert duration == pytest.approx(reference, abs=2 * H)
