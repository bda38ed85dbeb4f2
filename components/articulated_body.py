"""Forward and inverse dynamics of a serial crane on a moving base: Featherstone's articulated-body
algorithm (ABA) and recursive Newton-Euler algorithm (RNEA).

Sources: R. Featherstone (2008), "Rigid Body Dynamics Algorithms" (RBDA), Table 7.1 (ABA),
Table 5.1 (RNEA), Table 6.2 (CRBA), Sec. 2 (spatial algebra, components/spatial.py); the SMS API
report CR 2010-256 Sec. 2.4 for the crane model (components/mechanism.py); the ship-crane digest
Sec. 7.2/7.4 for the base outputs (articulated inertia I_A and bias p_A at the hard point).

Frames and conventions
----------------------
* **World**: NED (x north, y east, z down) by default; ``gravity`` is a free vector in world
  axes, default (0, 0, 9.81). Any right-handed inertial frame works if gravity is given in it
  (the SMS tests use the report's z-up earth frame with gravity (0, 0, -9.81)).
* **Base** B: the crane's mounting point on the ship. ``base_R`` maps B vectors to world,
  ``base_p`` is B's origin in world. ``base_v``, ``base_w``: classical velocity of B's origin and
  angular velocity (world axes). ``base_a``: **classical** acceleration of B's origin, d2 p/dt2
  (world axes); ``base_alpha``: angular acceleration (world axes). Frame 0 = B * base_offset.
* **Joint-moved proximal frame J_i** is link i's body frame (its CG and inertia are given in it),
  **distal DH frame F_i** is the "link frame" of the public API: link_poses, point_kinematics and
  link-wrench points refer to it (components/mechanism.py).
* **Gravity** enters by the a_base - g trick (RBDA Sec. 5.3): the base gets the fictitious
  acceleration -g, so no per-link gravity forces are formed. Returned accelerations
  (point_kinematics) are true accelerations; the trick is undone there.
* **External link wrenches**: ``link_wrenches`` = list of (link index, point (3) in F_link,
  force (3, world), moment (3, world)); the moment is a free moment added to point x force.
* **Spatial vectors** inside the algorithm are Featherstone's [angular; linear] in J_i coordinates.
  The base outputs use the marine ordering **[linear; angular], world axes, moments about the
  base origin**:
    - ``base_wrench`` = [F; M]: the force and moment the crane exerts ON the base (the ship).
    - ``articulated_inertia`` I_A (6x6) and ``bias`` p_A (6) with
          -base_wrench = I_A @ [base_a; base_alpha] + bias
      for any base acceleration, with q, qd, tau, link wrenches, base pose and velocity fixed.
      Featherstone's relation at the base is f_0 = I^A_0 a_0 + p^A_0 with the spatial
      acceleration a_0 = [alpha; a - w x v - g]; the w x v and g terms are moved into ``bias``.

Performance: the per-link constants (spatial inertias, tree transforms, the joint-transform
templates) are precomputed; the Plucker transforms of all joints are formed in one batched
matmul, the velocity-product and bias terms of all links in a few batched operations, and the
three sequential passes use 6x6 numpy products only. Base outputs, poses and energies are
computed lazily when the AbaResult attribute is first read, and so is pass 3 (qdd): a
co-simulation output that needs only I_A and p_A does not pay for it.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from components.mechanism import Mechanism, validate_mechanism
from components.spatial import crm, homogeneous, mcI, plux

GRAVITY_NED = (0.0, 0.0, 9.81)

LinkWrench = tuple  # (link index, point (3) in F_link, force (3, world), moment (3, world))

_I3 = np.eye(3)
_I4 = np.eye(4)
_Z3 = np.zeros(3)


def _crm_basis() -> np.ndarray:
    """G (6 x 36) with crm(v).ravel() = v @ G (crm is linear in v)."""
    return np.array([crm(e).ravel() for e in np.eye(6)])


_G = _crm_basis()


def _cross(a: Sequence[float], b: Sequence[float]) -> list[float]:
    ax, ay, az = a
    bx, by, bz = b
    return [ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx]


class AbaResult:
    """Result of ArticulatedBody.forward_dynamics. Passes 1 and 2 are done when it is made; pass 3
    (``qdd``, the link accelerations) and everything else on first access (see the module
    docstring for frames and signs)."""

    # the motion of the points a compiled crane evaluation formed with it (CompiledCraneStep.bind_points:
    # per point link, r, position, velocity, v_P, the values of point_motion), or None
    points: np.ndarray | None = None
    # whether that evaluation wrote an adapter's outputs where it keeps them (CompiledCraneStep.bind_outputs)
    outputs_written: bool = False

    def __init__(self, body: "ArticulatedBody", q: np.ndarray, V: np.ndarray, H: np.ndarray,
                 c: np.ndarray, MB: np.ndarray, base: tuple, pass1: tuple, tau: list, pass2: tuple,
                 a0: np.ndarray) -> None:
        self.body = body
        self.q = q
        self._V = V          # spatial velocities v_i (n, 6), J_i coordinates, [ang; lin]
        self._H = H          # I_i v_i, flattened (6n)
        self._c = c          # velocity-product accelerations c_i (n, 6)
        self._MB = MB        # 7x7 [[I^A_B, p^A_B], ...] at the base, B coordinates, [ang; lin]
        self._base = base    # (R, p, v, w, a, alpha, g) as arrays
        self._pass1 = pass1  # (Y, Yl, pv, Ic, RJ): what ArticulatedBody.reevaluate reuses
        self._tau = tau
        self._pass2 = pass2  # (Ut, D) for pass 3
        self._a0 = a0        # [a_base - g (spatial, B coordinates); 1]

    @cached_property
    def _pass3(self) -> tuple:
        return self.body._acceleration_pass(self._pass1[1], *self._pass2, self._a0)

    @cached_property
    def qdd(self) -> np.ndarray:
        """Joint accelerations (n), pass 3 of the ABA."""
        return self._pass3[0]

    @cached_property
    def _Abar(self) -> np.ndarray:
        """a_i - c_i (7-vectors, gravity trick included), J_i coordinates."""
        return self._pass3[1]

    @cached_property
    def _Rs(self) -> np.ndarray:
        """[[0, R], [R, 0]]: B [ang; lin] -> world [lin; ang]."""
        R = self._base[0]
        Rs = np.zeros((6, 6))
        Rs[:3, 3:] = R
        Rs[3:, :3] = R
        return Rs

    @cached_property
    def articulated_inertia(self) -> np.ndarray:
        """I_A (6x6), world axes, at the base origin, [linear; angular] (see module docstring)."""
        Rs = self._Rs
        return Rs.dot(self._MB[:6, :6]).dot(Rs.T)

    @cached_property
    def bias(self) -> np.ndarray:
        """p_A (6), world axes, at the base origin, [force; moment]: -base_wrench = I_A [a; alpha] + p_A."""
        _, _, v, w, _, _, g = self._base
        lin = -np.asarray(_cross(w.tolist(), v.tolist())) - g   # a_spatial = a - w x v; gravity trick -g
        return self._Rs.dot(self._MB[:6, 6]) + self.articulated_inertia[:, :3].dot(lin)

    def inertia_and_bias(self) -> tuple[np.ndarray, np.ndarray]:
        """(I_A row-major as 36 numbers, p_A): the strong-coupling outputs in one call (the compiled
        result reads them where the kernel wrote them)."""
        return self.articulated_inertia.ravel(), self.bias

    @cached_property
    def base_wrench(self) -> np.ndarray:
        """[F; M] (6), world axes: force and moment (about the base origin) the crane exerts on the base."""
        a, alpha = self._base[4], self._base[5]
        return -(self.articulated_inertia.dot(np.concatenate((a, alpha))) + self.bias)

    @cached_property
    def spatial_accelerations(self) -> np.ndarray:
        """True spatial accelerations a_i (n, 6) of the links, J_i coordinates, [ang; lin]
        (RBDA Sec. 2.11; the gravity trick undone: a_i + [0; R_Ji^T g])."""
        return np.array([self._spatial_acceleration(i) for i in range(self.body.n)])

    def _spatial_acceleration(self, i: int) -> np.ndarray:
        """Row i of spatial_accelerations, alone (the attachment outputs need two or three links)."""
        A = self._Abar[i][:6] + self._c[i]
        A[3:] += self.joint_frames[i][:3, :3].T.dot(self._base[6])
        return A

    @cached_property
    def joint_frames(self) -> list[np.ndarray]:
        """World 4x4 poses of the joint-moved proximal frames J_i (the bodies' frames)."""
        return self.body.joint_frames(self.q, self._base[0], self._base[1])

    @cached_property
    def link_poses(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(R, p) of each distal DH frame F_i in world: x_world = R x_link + p."""
        out = []
        for T, C in zip(self.joint_frames, self.body._C):
            F = T.dot(C)
            out.append((F[:3, :3], F[:3, 3]))
        return out

    def point_kinematics(self, link: int, point: ArrayLike = (0.0, 0.0, 0.0)
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, acceleration) in world of a point fixed in link ``link``, given in
        its distal DH frame F_link. Classical (not spatial) velocity and acceleration:
            v_P = v_O + w x r,   a_P = a^s_O + wdot x r + w x v_P,
        with a^s_O the linear part of the spatial acceleration at J_link's origin O (RBDA Sec. 2.11)."""
        r = self.body.point_in_joint_frame(link, point)
        pos, vel, vP = self._point_motion(link, r)
        return pos, vel, self._point_acceleration(link, r, vP)

    def point_motion(self, link: int, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
        """(position, velocity, v_P in J_link axes) of the point r given in J_link coordinates
        (ArticulatedBody.point_in_joint_frame); the same numbers as point_kinematics."""
        return self._point_motion(link, r)

    def point_acceleration(self, link: int, r: np.ndarray, vP: list) -> np.ndarray:
        """World acceleration of the point r (J_link coordinates) with v_P from point_motion: only
        this changes when only the base acceleration or the loads changed (reevaluate)."""
        return self._point_acceleration(link, r, vP)

    def _frame(self, link: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, p): world rotation and origin of the joint-moved frame J_link."""
        T = self.joint_frames[link]
        return T[:3, :3], T[:3, 3]

    def _point_motion(self, link, r):
        RJ, pJ = self._frame(link)
        V = self._V[link]
        w, vO = V[:3].tolist(), V[3:]
        rl = r.tolist()
        vP = vO + np.asarray(_cross(w, rl))
        return pJ + RJ.dot(r), RJ.dot(vP), vP

    def _point_acceleration(self, link, r, vP):
        A = self._spatial_acceleration(link)
        wd, aO = A[:3], A[3:]
        w = self._V[link, :3].tolist()
        aP = aO + np.asarray(_cross(wd.tolist(), r.tolist())) + np.asarray(_cross(w, vP.tolist()))
        return self._frame(link)[0].dot(aP)

    @cached_property
    def kinetic_energy(self) -> float:
        """Kinetic energy of the links in the inertial frame, 1/2 sum v_i . I_i v_i (J)."""
        return 0.5 * float(self._V.ravel().dot(self._H))

    def potential_energy(self, gravity: Optional[ArrayLike] = None) -> float:
        """Gravitational potential energy -sum m_i g . c_i (J), c_i the world CG positions; zero
        where the CGs sum to the world origin. Default gravity: the one used for this result."""
        g = self._base[6] if gravity is None else np.asarray(gravity, dtype=float)
        return -float(g.dot(self.body.mass_moment_world(self.joint_frames)))


class RneaResult:
    """Result of ArticulatedBody.inverse_dynamics: joint forces ``tau`` (n) and ``base_wrench``
    ([F; M], world axes, about the base origin, exerted by the crane ON the base)."""

    def __init__(self, tau: np.ndarray, base_wrench: np.ndarray) -> None:
        self.tau = tau
        self.base_wrench = base_wrench


class ArticulatedBody:
    """Dynamics of a Mechanism (components/mechanism.py) on a moving base.

    forward_dynamics -> AbaResult (ABA, RBDA Table 7.1), inverse_dynamics -> RneaResult (RNEA,
    RBDA Table 5.1), mass_matrix (CRBA, RBDA Table 6.2), kinetic/potential energy, joint frames
    and the SMS joint-limit torques. Raises ValueError if validate_mechanism finds problems.
    An instance keeps a small scratch buffer for the joint transforms: use one per thread.
    """

    def __init__(self, mechanism: Mechanism, compiled: Optional[bool] = None) -> None:
        problems = validate_mechanism(mechanism)
        if problems:
            raise ValueError(f"invalid mechanism {getattr(mechanism, 'name', '?')!r}: {problems}")
        self.mechanism = mechanism
        links = mechanism.links
        n = self.n = len(links)
        self._rev = [l.joint == "revolute" for l in links]
        # index of the joint axis S_i in [ang; lin]: revolute about z -> 2, prismatic along z -> 5
        self._k = [2 if r else 5 for r in self._rev]
        self._ar = np.arange(n)
        self._kk = np.array(self._k)
        self._th0 = np.array([float(l.theta) for l in links])
        self._d0 = np.array([float(l.d) for l in links])
        self._th0l, self._d0l = self._th0.tolist(), self._d0.tolist()
        self._mass = np.array([float(l.mass) for l in links])
        self._cg = np.array([np.asarray(l.cg, dtype=float) for l in links])
        # C_i: J_i -> F_i (constant); T_tree_i: J_{i-1} -> F_{i-1}, with J_{-1} = B, F_{-1} = frame 0
        self._C = [l.distal_transform() for l in links]
        self._Ttree = [mechanism.base_offset_matrix()] + self._C[:-1]
        # spatial inertia of each link about the J_i origin, J_i axes (RBDA eq. 2.63), constant
        self._I = np.array([mcI(l.mass, np.asarray(l.cg, dtype=float), l.inertia_in_joint_frame())
                            for l in links])
        # Plucker transforms Xup_i = XJ(q_i) Xtree_i = K0 + cos(th0+q) K1 + sin(th0+q) K2 + (d0+q) K3
        #   revolute:  XJ = rotz(th0+q) = Z + c Cc + s Cs ; prismatic: XJ = xlt([0,0,d0+q]) = 1 + l L
        # They are formed embedded in 7x7 matrices Y_i = [[Xup_i, *], [0, 1]] (see forward_dynamics),
        # for all links in one product with the block-diagonal template Kbd (4n x 49n).
        Z = np.diag([0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
        Cc = np.diag([1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
        Cs = np.zeros((6, 6))
        Cs[0, 1] = Cs[3, 4] = 1.0
        Cs[1, 0] = Cs[4, 3] = -1.0
        L = np.zeros((6, 6))
        L[3, 1], L[4, 0] = 1.0, -1.0            # -S(e_z) in the lower-left block
        Kbd = np.zeros((4 * n, 49 * n))
        for i, T in enumerate(self._Ttree):
            Xt = plux(T[:3, :3].T, T[:3, 3])
            parts = [Z @ Xt, Cc @ Xt, Cs @ Xt, np.zeros((6, 6))] if self._rev[i] else \
                [Xt, np.zeros((6, 6)), np.zeros((6, 6)), L @ Xt]
            for r, P in enumerate(parts):
                Y = np.zeros((7, 7))
                Y[:6, :6] = P
                if r == 0:
                    Y[6, 6] = 1.0
                Kbd[4 * i + r, 49 * i:49 * (i + 1)] = Y.ravel()
        self._Kbd = Kbd
        self._W = np.ones((n, 4))                # [1, cos, sin, length] per link; column 0 stays 1
        self._r_cache: dict = {}                 # (link, point bytes) -> the load point in J_link
        # block-diagonal constants for the batched velocity terms (6n x 6n)
        self._Ibd = np.zeros((6 * n, 6 * n))
        self._Sbd = np.zeros((6 * n, 6 * n))     # -crm(S_i): c_i = v_i x S_i qd_i = -crm(S_i) v_i qd_i
        for i in range(n):
            sl = slice(6 * i, 6 * i + 6)
            self._Ibd[sl, sl] = self._I[i]
            S = np.zeros(6)
            S[self._k[i]] = 1.0
            self._Sbd[sl, sl] = -crm(S)
        # crf as a bilinear map: (v x* h)_j = sum_ab Tf[6a + b, j] v_a h_b
        self._Tf = np.array([(-crm(ea).T).T for ea in np.eye(6)]).reshape(36, 6)
        self._M7 = np.zeros((n, 7, 7))
        self._M7[:, :6, :6] = self._I
        lim = [l.limits for l in links]
        self._lo = np.array([x.lower if x else -math.inf for x in lim])
        self._hi = np.array([x.upper if x else math.inf for x in lim])
        self._Kl = np.array([x.stiffness if x else 0.0 for x in lim])
        self._Dl = np.array([x.damping if x else 0.0 for x in lim])
        self._compiled = self._compiled_kernel(compiled)
        if self._compiled is not None:
            # the kernel's methods bound in place of these two: one Python call less per evaluation
            self.forward_dynamics = self._compiled.forward_dynamics
            self.reevaluate = self._compiled.reevaluate

    def _compiled_kernel(self, compiled: Optional[bool]):
        """The compiled kernel (components/kernels/aba.c) for forward_dynamics and reevaluate:
        compiled=None takes it if it can be had, True requires it (RuntimeError if not), False
        keeps the numpy code of this module, which is the reference."""
        if compiled is False:
            return None
        from components import kernels
        from components.kernels.aba import MAX_LINKS, CompiledAba

        lib = kernels.library()
        if lib is None or self.n > MAX_LINKS:
            if compiled:
                raise RuntimeError(f"no compiled articulated-body kernel: {kernels.status()}"
                                   if lib is None else f"the compiled kernel takes up to {MAX_LINKS} links")
            return None
        return CompiledAba(self, lib)

    @property
    def compiled(self) -> bool:
        """True if forward_dynamics and reevaluate run the compiled kernel."""
        return self._compiled is not None

    # ------------------------------------------------------------------------------------------
    # helpers

    def _ymats(self, q: np.ndarray) -> np.ndarray:
        """Y_i = [[Xup_i, 0], [0, 1]] (n, 7, 7); Xup_i = XJ(q_i) Xtree_i is the Plucker transform
        parent (J_{i-1}, or B for link 0) -> J_i coordinates (RBDA Table 7.1: Xup_i = XJ XT_i)."""
        W = self._W
        phi = self._th0 + q
        np.cos(phi, out=W[:, 1])
        np.sin(phi, out=W[:, 2])
        np.add(self._d0, q, out=W[:, 3])
        return W.ravel().dot(self._Kbd).reshape(self.n, 7, 7)

    def _xup(self, q: np.ndarray) -> list[np.ndarray]:
        """Xup_i (6x6 views) for all links."""
        return [Y[:6, :6] for Y in self._ymats(q)]

    def point_in_joint_frame(self, link: int, point: ArrayLike) -> np.ndarray:
        """A point given in the distal DH frame F_link, in J_link coordinates: C_link point."""
        C = self._C[link]
        return C[:3, :3].dot(np.asarray(point, dtype=float)) + C[:3, 3]

    @staticmethod
    def _base_motion(base_R, base_v, base_w, base_a, base_alpha, gravity):
        """Base motion as arrays (R, v, w, a, alpha, g), plus v0 = [R^T w; R^T v; 0] and the
        gravity-trick spatial acceleration a0 = [R^T alpha; R^T (a - w x v - g); 1], both in
        B coordinates, [ang; lin], padded to 7 for the 7x7 bookkeeping of forward_dynamics."""
        g = np.asarray(gravity, dtype=float)
        if base_R is None and base_v is None and base_w is None and base_a is None and base_alpha is None:
            a0 = np.zeros(7)                       # fixed base at the origin: the common fast path
            a0[3:6] = -g
            a0[6] = 1.0
            return _I3, _Z3, _Z3, _Z3, _Z3, g, np.zeros(7), a0
        R = _I3 if base_R is None else np.asarray(base_R, dtype=float)
        v = _Z3 if base_v is None else np.asarray(base_v, dtype=float)
        w = _Z3 if base_w is None else np.asarray(base_w, dtype=float)
        a = _Z3 if base_a is None else np.asarray(base_a, dtype=float)
        al = _Z3 if base_alpha is None else np.asarray(base_alpha, dtype=float)
        wl, vl, al_l = w.tolist(), v.tolist(), al.tolist()
        wxv = _cross(wl, vl)
        acc = (a - g).tolist()
        B = np.array([wl, vl, al_l, [acc[0] - wxv[0], acc[1] - wxv[1], acc[2] - wxv[2]]]).dot(R)
        va = np.zeros((2, 7))
        va[:, :6] = B.reshape(2, 6)
        va[1, 6] = 1.0
        return R, v, w, a, al, g, va[0], va[1]

    def _external_forces(self, R: np.ndarray, Y: np.ndarray, link_wrenches, RJ: Optional[list] = None
                         ) -> np.ndarray:
        """Featherstone forces f^x_i = [n; f] (n, 6), J_i coordinates, about J_i's origin, of the
        link wrenches (link, point in F_link, force world, moment world). ``RJ``: a list to keep
        the world rotations R_{J_i} in (and take them from) across calls with the same pose."""
        fx = np.zeros((self.n, 6))
        last = max(int(w[0]) for w in link_wrenches)
        if RJ is None:
            RJ = []
        Rp = RJ[-1] if RJ else R
        for i in range(len(RJ), last + 1):         # R_{J_i} = R_{J_{i-1}} E_i^T
            Rp = Rp.dot(Y[i][:3, :3].T)
            RJ.append(Rp)
        for (i, point, force, moment) in link_wrenches:
            i = int(i)
            point = np.asarray(point, dtype=float)
            key = (i, point.tobytes())
            r = self._r_cache.get(key)
            if r is None:                              # the point in J_i (constant for a load point)
                if len(self._r_cache) > 64:            # points that keep changing: stay small
                    self._r_cache.clear()
                r = self._r_cache[key] = self.point_in_joint_frame(i, point).tolist()
            RJt = RJ[i].T
            f = RJt.dot(np.asarray(force, dtype=float))
            nmo = RJt.dot(np.asarray(moment, dtype=float)) + np.asarray(_cross(r, f.tolist()))
            fx[i] += np.concatenate((nmo, f))
        return fx

    # ------------------------------------------------------------------------------------------
    # forward dynamics

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                         base_R: Optional[ArrayLike] = None, base_p: Optional[ArrayLike] = None,
                         base_v: Optional[ArrayLike] = None, base_w: Optional[ArrayLike] = None,
                         base_a: Optional[ArrayLike] = None, base_alpha: Optional[ArrayLike] = None,
                         gravity: ArrayLike = GRAVITY_NED,
                         link_wrenches: Optional[Sequence[LinkWrench]] = None) -> AbaResult:
        """Joint accelerations by the articulated-body algorithm (RBDA Table 7.1), and the base
        outputs. Base arguments default to a base at rest at the world origin with base_R = 1.

        q, qd, tau: joint positions (rad or m), rates, forces (N m or N), length n.
        Returns an AbaResult; see the module docstring for frames and sign conventions.

        Bookkeeping (the equations are exactly those of Table 7.1): the articulated inertia and
        bias of link i are carried as one symmetric 7x7 matrix
            M_i = [[I^A_i, p^A_i + I^A_i c_i], [(p^A_i + I^A_i c_i)^T, *]]
        and the transforms as Y_i = [[Xup_i, Xup_i c_{i-1}], [0, 1]] (c_{-1} = 0), so that
        Y_i^T M^a_i Y_i adds both Xup^T I^a Xup and Xup^T p^a to the parent in one congruence,
        and Y_i [a_{i-1} - c_{i-1}; 1] = [Xup_i a_{i-1}; 1] in pass 3. The scalar entries (*) are
        never used. The compiled kernel, when present (``compiled``), gives the same results to
        rounding.
        """
        if self._compiled is not None:
            return self._compiled.forward_dynamics(q, qd, tau, base_R, base_p, base_v, base_w, base_a, base_alpha,
                                                   gravity, link_wrenches)
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        taul = np.asarray(tau, dtype=float).tolist()
        R, v, w, a, al, g, v0, a0 = self._base_motion(base_R, base_v, base_w, base_a, base_alpha, gravity)
        p = _Z3 if base_p is None else np.asarray(base_p, dtype=float)
        pass1 = self._velocity_pass(q, qd, v0)
        V, H, c = pass1[5:]
        pass1 = pass1[:5]
        fx = self._external_forces(R, pass1[0], link_wrenches, pass1[4]) if link_wrenches else None
        Ut, D, MB = self._inertia_pass(pass1, taul, fx)
        # pass 3 (_acceleration_pass) when qdd or an acceleration is first read
        return AbaResult(self, q, V, H, c, MB, (R, p, v, w, a, al, g), pass1, taul, (Ut, D), a0)

    def reevaluate(self, result: AbaResult, base_a: Optional[ArrayLike] = None,
                   base_alpha: Optional[ArrayLike] = None,
                   link_wrenches: Optional[Sequence[LinkWrench]] = None) -> AbaResult:
        """forward_dynamics again for the state, joint forces, base pose and base velocity of
        ``result`` and a new base acceleration and new link wrenches: pass 1 (velocities, velocity
        products, Plucker transforms) and the world poses are reused, passes 2 and 3 are redone.
        Gives the same numbers, bit for bit, as a fresh forward_dynamics call (the same operations
        in the same order), e.g. for a co-simulation master's feedthrough refresh, where only the
        ship's acceleration and the cable's force change."""
        if self._compiled is not None:
            return self._compiled.reevaluate(result, base_a, base_alpha, link_wrenches)
        R, p, v, w, _, _, g = result._base
        _, _, _, a, al, _, _, a0 = self._base_motion(R, v, w, base_a, base_alpha, g)
        pass1 = result._pass1
        fx = self._external_forces(R, pass1[0], link_wrenches, pass1[4]) if link_wrenches else None
        Ut, D, MB = self._inertia_pass(pass1, result._tau, fx)
        out = AbaResult(self, result.q, result._V, result._H, result._c, MB, (R, p, v, w, a, al, g),
                        pass1, result._tau, (Ut, D), a0)
        if "joint_frames" in result.__dict__:          # pose unchanged: so are the J_i frames
            out.joint_frames = result.joint_frames
        return out

    def _velocity_pass(self, q: np.ndarray, qd: np.ndarray, v0: np.ndarray) -> tuple:
        """Pass 1, base to tip (RBDA Table 7.1, first loop):
             v_i = Xup_i v_{i-1} + S_i qd_i;   c_i = c_J + v_i x v_J  (c_J = 0, v_J = S_i qd_i);
             I^A_i = I_i;   p^A_i = v_i x* I_i v_i - X*_i f^x_i  (the f^x_i term: _inertia_pass).
        Returns (Y, Yl, pv, Ic, RJ, V, H, c): the transforms Y_i (with Xup_i c_{i-1} in column 7,
        see forward_dynamics), the same as a list, pv_i = v_i x* I_i v_i (n, 6), Ic = I_i c_i
        (6n), an empty list for the world rotations of the J_i (_external_forces fills it), the
        velocities V (n, 6), H = I_i v_i (6n) and c (n, 6)."""
        n = self.n
        k = self._k
        qdl = qd.tolist()
        Y = self._ymats(q)
        Yl = list(Y)
        V7 = np.empty((n, 7))
        dot = np.dot
        vp = v0
        for i in range(n):
            vi = V7[i]
            dot(Yl[i], vp, out=vi)
            vi[k[i]] += qdl[i]
            vp = vi
        V = V7[:, :6]
        Vf = V.ravel()
        H = self._Ibd.dot(Vf)                                        # I_i v_i
        c = (self._Sbd.dot(Vf).reshape(n, 6)) * qd[:, None]         # c_i = v_i x S_i qd_i
        pv = (V[:, :, None] * H.reshape(n, 1, 6)).reshape(n, 36).dot(self._Tf)   # v_i x* I_i v_i
        Ic = self._Ibd.dot(c.ravel())                                # I^A_i c_i (I^A_i = I_i)
        Y[1:, :6, 6] = (Y[1:, :6, :6] @ c[:-1, :, None])[:, :, 0]   # Xup_i c_{i-1}
        return Y, Yl, pv, Ic, [], V, H, c

    def _inertia_pass(self, pass1: tuple, taul: list, fx: Optional[np.ndarray]) -> tuple:
        """Pass 2, tip to base (RBDA Table 7.1, second loop):
             U_i = I^A_i S_i;  D_i = S_i^T U_i;  u_i = tau_i - S_i^T p^A_i;
             I^a_i = I^A_i - U_i U_i^T / D_i;   p^a_i = p^A_i + I^a_i c_i + U_i u_i / D_i;
             I^A_parent += Xup_i^T I^a_i Xup_i;   p^A_parent += Xup_i^T p^a_i.
        In 7x7 form: Ut_i = [U_i; -(u_i - U_i^T c_i)] (column k of M_i, last entry minus tau_i)
        and M^a_i = M_i - Ut_i Ut_i^T / D_i = [[I^a_i, p^a_i], ...]. The base B is the parent of
        link 0: M_B = [[I^A_B, p^A_B], ...] is the crane's articulated inertia and bias seen from
        the base (ship-crane digest Sec. 7.2). Returns (Ut, D, M_B)."""
        n = self.n
        k = self._k
        _, Yl, pv, Ic, _ = pass1
        pA = pv - fx if fx is not None else pv                       # p^A_i = v_i x* I_i v_i - f^x_i
        pc = pA.ravel() + Ic                                         # p^A_i + I^A_i c_i
        M = self._M7.copy()
        M[:, :6, 6] = pc.reshape(n, 6)
        M[:, 6, :6] = M[:, :6, 6]
        Ut = [None] * n
        D = [0.0] * n
        MB = None
        Ml = list(M)
        for i in range(n - 1, -1, -1):
            Mi, ki = Ml[i], k[i]
            Ui = Mi[:, ki].copy()
            Ui[6] -= taul[i]
            Di = Ui.item(ki)
            Ut[i], D[i] = Ui, Di
            Mi -= Ui[:, None].dot(Ui[None, :] * (1.0 / Di))          # M^a_i = M_i - Ut_i Ut_i^T / D_i
            Yi = Yl[i]
            if i:
                Ml[i - 1] += Yi.T.dot(Mi).dot(Yi)
            else:
                MB = Yi.T.dot(Mi).dot(Yi)
        return Ut, D, MB

    def _acceleration_pass(self, Yl: list, Ut: list, D: list, a0: np.ndarray) -> tuple:
        """Pass 3, base to tip (RBDA Table 7.1, third loop), a_0 = a_base - g (gravity trick):
             a'_i = Xup_i a_{i-1} + c_i;   qdd_i = (u_i - U_i^T a'_i) / D_i;   a_i = a'_i + S_i qdd_i.
        In 7-vector form ab_i = [a_i - c_i; 1]: Y_i ab_{i-1} = [Xup_i a_{i-1}; 1] and
        qdd_i = -Ut_i . Y_i ab_{i-1} / D_i. Returns (qdd, ab (n, 7))."""
        k = self._k
        qdd = [0.0] * self.n
        Ab = np.empty((self.n, 7))
        dot = np.dot
        ap = a0
        for i in range(self.n):
            ai = Ab[i]
            dot(Yl[i], ap, out=ai)
            qi = -Ut[i].dot(ai) / D[i]
            ai[k[i]] += qi
            qdd[i] = qi
            ap = ai
        return np.array(qdd), Ab

    # ------------------------------------------------------------------------------------------
    # inverse dynamics

    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                         base_R: Optional[ArrayLike] = None, base_p: Optional[ArrayLike] = None,
                         base_v: Optional[ArrayLike] = None, base_w: Optional[ArrayLike] = None,
                         base_a: Optional[ArrayLike] = None, base_alpha: Optional[ArrayLike] = None,
                         gravity: ArrayLike = GRAVITY_NED,
                         link_wrenches: Optional[Sequence[LinkWrench]] = None) -> RneaResult:
        """Joint forces for given accelerations by the recursive Newton-Euler algorithm
        (RBDA Table 5.1), same arguments and conventions as forward_dynamics:

            v_i = Xup_i v_{i-1} + S_i qd_i,   a_i = Xup_i a_{i-1} + S_i qdd_i + v_i x S_i qd_i,
            f_i = I_i a_i + v_i x* I_i v_i - f^x_i,   tau_i = S_i^T f_i,   f_{i-1} += Xup_i^T f_i,
        with a_0 = a_base - g. base_wrench = -f_base (world axes, [F; M])."""
        n = self.n
        q = np.asarray(q, dtype=float)
        qdl = np.asarray(qd, dtype=float).tolist()
        qddl = np.asarray(qdd, dtype=float).tolist()
        R, v, w, a, al, g, v0, a0 = self._base_motion(base_R, base_v, base_w, base_a, base_alpha, gravity)
        k = self._k
        Y = self._ymats(q)
        fx = self._external_forces(R, Y, link_wrenches) if link_wrenches else None
        f = np.empty((n, 6))
        vp, ap = v0[:6], a0[:6]
        for i in range(n):
            X = Y[i][:6, :6]
            vi = X.dot(vp)
            vi[k[i]] += qdl[i]
            Cv = crm(vi)
            ai = X.dot(ap) + Cv[:, k[i]] * qdl[i]
            ai[k[i]] += qddl[i]
            Ii = self._I[i]
            f[i] = Ii.dot(ai) - Cv.T.dot(Ii.dot(vi))
            vp, ap = vi, ai
        if fx is not None:
            f -= fx
        tau = np.empty(n)
        fb = None
        for i in range(n - 1, -1, -1):
            tau[i] = f[i, k[i]]
            fp = Y[i][:6, :6].T.dot(f[i])
            if i:
                f[i - 1] += fp
            else:
                fb = fp
        Rs = np.zeros((6, 6))
        Rs[:3, 3:] = R
        Rs[3:, :3] = R
        return RneaResult(tau, -Rs.dot(fb))

    def mass_matrix(self, q: ArrayLike) -> np.ndarray:
        """Joint-space inertia matrix H(q) by the composite-rigid-body algorithm (RBDA Table 6.2)
        for a base at rest: I^c_i = I_i + sum_children X^T I^c X, H_ij = S_i^T X_{i<-j}^T ... ."""
        n = self.n
        Xup = self._xup(np.asarray(q, dtype=float))
        Ic = self._I.copy()
        for i in range(n - 1, 0, -1):
            Ic[i - 1] += Xup[i].T.dot(Ic[i]).dot(Xup[i])
        Hm = np.zeros((n, n))
        for i in range(n):
            F = Ic[i][:, self._k[i]]
            Hm[i, i] = F[self._k[i]]
            j = i
            while j > 0:
                F = Xup[j].T.dot(F)
                j -= 1
                Hm[i, j] = Hm[j, i] = F[self._k[j]]
        return Hm

    # ------------------------------------------------------------------------------------------
    # kinematics, energies, limits

    def joint_frames(self, q: ArrayLike, base_R: Optional[ArrayLike] = None,
                     base_p: Optional[ArrayLike] = None) -> list[np.ndarray]:
        """World 4x4 poses of the joint-moved proximal frames J_i: J_i = J_{i-1} T_tree_i XJ(q_i)."""
        T = homogeneous(_I3 if base_R is None else base_R, _Z3 if base_p is None else base_p)
        out = []
        th0, d0 = self._th0l, self._d0l
        for i, qi in enumerate(np.asarray(q, dtype=float).tolist()):
            T = T.dot(self._Ttree[i])                  # (ndarray.dot: the same products as @, cheaper)
            J = _I4.copy()
            if self._rev[i]:                           # homogeneous(rz(th0 + q), 0)
                c, s = math.cos(th0[i] + qi), math.sin(th0[i] + qi)
                J[0, 0] = J[1, 1] = c
                J[0, 1] = -s
                J[1, 0] = s
            else:                                      # homogeneous(1, (0, 0, d0 + q))
                J[2, 3] = d0[i] + qi
            T = T.dot(J)
            out.append(T)
        return out

    def link_poses(self, q: ArrayLike, base_R: Optional[ArrayLike] = None,
                   base_p: Optional[ArrayLike] = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """(R, p) in world of each distal DH frame F_i (x_world = R x_link + p)."""
        out = []
        for T, C in zip(self.joint_frames(q, base_R, base_p), self._C):
            F = T @ C
            out.append((F[:3, :3], F[:3, 3]))
        return out

    def mass_moment_world(self, joint_frames: list[np.ndarray]) -> np.ndarray:
        """sum_i m_i c_i (world), c_i the CG positions, from the J_i poses."""
        s = np.zeros(3)
        for T, m, cg in zip(joint_frames, self._mass, self._cg):
            s += m * (T[:3, :3] @ cg + T[:3, 3])
        return s

    def kinetic_energy(self, q: ArrayLike, qd: ArrayLike, base_R: Optional[ArrayLike] = None,
                       base_v: Optional[ArrayLike] = None, base_w: Optional[ArrayLike] = None) -> float:
        """1/2 sum_i v_i . I_i v_i (J), inertial-frame link velocities for the given base motion."""
        R, v, w, *_ , v0, _a0 = self._base_motion(base_R, base_v, base_w, None, None, GRAVITY_NED)
        Xup = self._xup(np.asarray(q, dtype=float))
        e = 0.0
        vp = v0[:6]
        for i, qdi in enumerate(np.asarray(qd, dtype=float).tolist()):
            vi = Xup[i].dot(vp)
            vi[self._k[i]] += qdi
            e += float(vi.dot(self._I[i]).dot(vi))
            vp = vi
        return 0.5 * e

    def potential_energy(self, q: ArrayLike, gravity: ArrayLike = GRAVITY_NED,
                         base_R: Optional[ArrayLike] = None, base_p: Optional[ArrayLike] = None) -> float:
        """-sum_i m_i g . c_i (J), c_i the world CG positions."""
        return -float(np.asarray(gravity, dtype=float) @ self.mass_moment_world(self.joint_frames(q, base_R, base_p)))

    def joint_limit_torques(self, q: ArrayLike, qd: ArrayLike) -> np.ndarray:
        """SMS penalty end stops (report eqs. 71-72, upper-stop sign corrected to be restoring):
        tau = -K (q - lower) - D qd below the lower limit, -K (q - upper) - D qd above the upper
        limit, 0 in between. Joints without limits give 0. Not applied by forward_dynamics: add
        it to tau."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        lo = q < self._lo
        hi = q > self._hi
        ref = np.where(lo, self._lo, np.where(hi, self._hi, q))
        active = lo | hi
        return np.where(active, -self._Kl * (q - ref) - self._Dl * qd, 0.0)
