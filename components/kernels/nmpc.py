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


class _Buffers:
    """Caller-owned arrays of one batch shape and their addresses, kept between calls: numpy's
    ``.ctypes.data`` costs several microseconds, as much as the kernel's work on a few rows."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]) -> None:
        self.arrays = {name: np.zeros(shape) for name, shape in shapes.items()}
        self.addresses = {name: kernels.address(a) for name, a in self.arrays.items()}


class CompiledShipPlatform:
    """The kernel bound to one ShipPlatformModel (its constants packed once). Not shared between
    threads: the batches' arrays are kept for the next call of the same shape."""

    def __init__(self, lib: ctypes.CDLL, model) -> None:
        declare(lib)
        if lib.mc_nmpc_params() != N_PARAMS:
            raise RuntimeError(f"nmpc.c packs {lib.mc_nmpc_params()} parameters, this binding {N_PARAMS}")
        self._lib = lib
        self._P = self.pack(model)
        self._address = kernels.address(self._P)
        self._buffers: dict[tuple, _Buffers] = {}

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

    def _batch(self, key: tuple, shapes: dict[str, tuple[int, ...]]) -> _Buffers:
        buffers = self._buffers.get(key)
        if buffers is None:
            if len(self._buffers) > 64:          # batch shapes are few; a caller of many sizes starts over
                self._buffers.clear()
            buffers = self._buffers[key] = _Buffers(shapes)
        return buffers

    def _rows(self, s: np.ndarray, f: np.ndarray | None = None) -> tuple[_Buffers, int]:
        """The buffers of len(s) rows, with s (and f) copied in."""
        B = len(s)
        buf = self._batch(("rows", B), {"s": (B, N_STATE), "f": (B, 3), "out": (B, N_STATE), "hrp": (B, 3)})
        buf.arrays["s"][...] = s
        if f is not None:
            buf.arrays["f"][...] = f
        return buf, B

    def derivative(self, s: np.ndarray, f: np.ndarray) -> np.ndarray:
        """s' (B, 18) for states s (B, 18) and leg forces f (B, 3) in N."""
        buf, B = self._rows(s, f)
        a = buf.addresses
        self._lib.mc_nmpc_derivative(self._address, B, a["s"], a["f"], a["out"])
        return buf.arrays["out"].copy()

    def rk4(self, s: np.ndarray, f: np.ndarray, dt: float) -> np.ndarray:
        """One classical RK4 step of dt for each row."""
        buf, B = self._rows(s, f)
        a = buf.addresses
        self._lib.mc_nmpc_rk4(self._address, B, a["s"], a["f"], float(dt), a["out"])
        return buf.arrays["out"].copy()

    def hrp(self, s: np.ndarray) -> np.ndarray:
        """The platform's inertial heave, roll and pitch (B, 3) of states s (B, 18)."""
        buf, B = self._rows(s)
        self._lib.mc_nmpc_hrp(self._address, B, buf.addresses["s"], buf.addresses["hrp"])
        return buf.arrays["hrp"].copy()

    def simulate(self, s0: np.ndarray, u: np.ndarray, dt: float) -> np.ndarray:
        """The HRP (B, N, 3) at the end of each step of B trajectories from s0 (18) under forces u (B, N, 3)
        in N, each held over its RK4 step of dt."""
        B, N = u.shape[:2]
        buf = self._batch(("simulate", B, N), {"s0": (N_STATE,), "u": (B, N, 3), "out": (B, N, 3),
                                               "work": (N, N_STATE)})
        buf.arrays["s0"][...] = s0
        buf.arrays["u"][...] = u
        a = buf.addresses
        self._lib.mc_nmpc_simulate(self._address, N, B, a["s0"], a["u"], float(dt), a["out"], a["work"])
        return buf.arrays["out"].copy()
