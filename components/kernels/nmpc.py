"""The compiled prediction model of the NMPC (nmpc.c) behind components.nmpc.ShipPlatformModel and
NMPC._simulate.

The model's constants are packed into one float64 array in the layout nmpc.c documents; ``derivative``,
``rk4``, ``hrp`` and ``simulate`` then reproduce ShipPlatformModel.derivative, .rk4, platform_hrp and
NMPC._simulate to rounding (tests/components/test_nmpc_kernel.py states by how much). A Gauss-Newton
cost batch is one call: its 3N + 1 trajectories over the horizon, 4 derivatives per RK4 step.
"""
from __future__ import annotations

import ctypes

import numpy as np

from components import kernels

N_PARAMS = 175
N_STATE = 18


def declare(lib: ctypes.CDLL) -> None:
    """The ctypes signatures of nmpc.c's functions (kept here, beside the kernel, not in the shared list)."""
    ptr, integer, real = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
    lib.mc_nmpc_params.argtypes = []
    lib.mc_nmpc_params.restype = integer
    lib.mc_nmpc_derivative.argtypes = [ptr, integer, ptr, ptr, ptr]
    lib.mc_nmpc_derivative.restype = None
    lib.mc_nmpc_rk4.argtypes = [ptr, integer, ptr, ptr, real, ptr]
    lib.mc_nmpc_rk4.restype = None
    lib.mc_nmpc_hrp.argtypes = [ptr, integer, ptr, ptr]
    lib.mc_nmpc_hrp.restype = None
    lib.mc_nmpc_simulate.argtypes = [ptr, integer, integer, ptr, ptr, real, ptr, ptr]
    lib.mc_nmpc_simulate.restype = None


def _rows(a: np.ndarray, width: int) -> np.ndarray:
    """a as a C-contiguous float64 (B, width) array (a copy only if it is not one already)."""
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64).reshape(-1, width))


class CompiledShipPlatform:
    """The kernel bound to one ShipPlatformModel (its constants packed once; stateless per call)."""

    def __init__(self, lib: ctypes.CDLL, model) -> None:
        declare(lib)
        if lib.mc_nmpc_params() != N_PARAMS:
            raise RuntimeError(f"nmpc.c packs {lib.mc_nmpc_params()} parameters, this binding {N_PARAMS}")
        self._lib = lib
        self._P = self.pack(model)
        self._address = kernels.address(self._P)

    @staticmethod
    def pack(model) -> np.ndarray:
        """The model's constants in nmpc.c's order."""
        from components.platform import _DX

        geo = model.geometry
        P = np.concatenate([np.asarray(model.M_ship, float).ravel(), np.asarray(model.MRB, float).ravel(),
                            np.asarray(model.G, float).ravel(), model.hardpoint, [model.m], model.cgP,
                            model.IcgP.ravel(), [model.gravity], geo.a.ravel(), geo.b1.ravel(), geo.b2.ravel(),
                            geo.u.ravel(), geo.side.ravel(),
                            # the reference's own floats: |d2|^2 as Python's **, 0.5 / h as _differences'
                            [geo.arm_lower, geo.arm_upper ** 2, geo.alpha, _DX, 0.5 / _DX]])
        if P.shape != (N_PARAMS,):
            raise ValueError(f"the NMPC model packs into {P.shape} parameters, not ({N_PARAMS},)")
        return np.ascontiguousarray(P)

    def derivative(self, s: np.ndarray, f: np.ndarray) -> np.ndarray:
        """s' (B, 18) for states s (B, 18) and leg forces f (B, 3) in N."""
        s, f = _rows(s, N_STATE), _rows(f, 3)
        ds = np.empty_like(s)
        self._lib.mc_nmpc_derivative(self._address, len(s), s.ctypes.data, f.ctypes.data, ds.ctypes.data)
        return ds

    def rk4(self, s: np.ndarray, f: np.ndarray, dt: float) -> np.ndarray:
        """One classical RK4 step of dt for each row."""
        s, f = _rows(s, N_STATE), _rows(f, 3)
        out = np.empty_like(s)
        self._lib.mc_nmpc_rk4(self._address, len(s), s.ctypes.data, f.ctypes.data, float(dt), out.ctypes.data)
        return out

    def hrp(self, s: np.ndarray) -> np.ndarray:
        """The platform's inertial heave, roll and pitch (B, 3) of states s (B, 18)."""
        s = _rows(s, N_STATE)
        out = np.empty((len(s), 3))
        self._lib.mc_nmpc_hrp(self._address, len(s), s.ctypes.data, out.ctypes.data)
        return out

    def simulate(self, s0: np.ndarray, u: np.ndarray, dt: float) -> np.ndarray:
        """The HRP (B, N, 3) at the end of each step of B trajectories from s0 (18) under forces u (B, N, 3)
        in N, each held over its RK4 step of dt."""
        s0 = _rows(s0, N_STATE)
        u = np.ascontiguousarray(u, dtype=np.float64)
        B, N = u.shape[:2]
        out = np.empty((B, N, 3))
        work = np.empty((N, N_STATE))
        self._lib.mc_nmpc_simulate(self._address, N, B, s0.ctypes.data, u.ctypes.data, float(dt), out.ctypes.data,
                                   work.ctypes.data)
        return out
