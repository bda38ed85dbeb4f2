/* 6-DOF ship seakeeping: the derivative of components/ship.py (Ship.derivative) and its RK4
 * sub-step, which are the reference (the same operations in the same order; the 6x6 products and
 * the LU solve may round differently from numpy's BLAS and LAPACK, so results agree to rounding).
 *
 * Cummins equation with fluid-memory states, linear hydrostatics, first-order wave excitation
 * (given per stage: the caller computes it, components/waves.py), viscous and quadratic roll
 * damping, station keeping, hardpoint loads and an attached mechanism's articulated inertia I_A
 * and bias p_A at hardpoint 1 (ship_crane_digest Sec. 1.3-1.10 and 7.4; Fossen 2011 ch. 5-6):
 *   p' = R(q) v,  q' = 1/2 q (x) [0, omega],  chi' = A_r chi + B_r nu,
 *   (M0 + J^T I_A J) nu' = tau - J^T I_A Rb c - Qb J^T p_A,
 *   eta_lf' = ([north, east] - eta_lf[0:2]) / T_lf,  remainder(psi - psi_lf, 2 pi) / T_lf
 * (components/ship.py's module docstring has every term).
 *
 * P (parameters): n_rad, T_lf, roll quadratic damping, has B_inf, has viscous, has station keeping,
 *   has hardpoint 1, MRB (36), M0 (36), M0^-1 (36), B_inf (36), viscous (6), station stiffness (3)
 *   and damping (3), hardpoint 1 (3), G[i][2], G[i][3], G[i][4] for i = 0..5 (18), then
 *   C_r (6 x n_rad), A_r (n_rad x n_rad), B_r (n_rad x 6).
 * L (loads): hardpoint loads present, articulated, force sum (3, NED), moment sum (3, NED),
 *   A = sum f_k r_k^T (9), current (3, NED), I_A (36), p_A (6), station-keeping reference north,
 *   east and heading.
 * y: p (3), q (4), nu (6), eta_lf (3), chi (n_rad).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

enum { P_NRAD = 0, P_TLF, P_ROLLQ, P_HASBINF, P_HASVISC, P_HASSTATION, P_HASR1, P_MRB = 7, P_M0 = 43, P_MINV = 79,
       P_BINF = 115, P_VISC = 151, P_KS = 157, P_CS = 160, P_R1 = 163, P_G = 166, P_CR = 184 };
enum { L_LOADED = 0, L_ART, L_F = 2, L_M = 5, L_A = 8, L_CUR = 17, L_IA = 20, L_PA = 56, L_REF = 62 };

#define TWO_PI 6.283185307179586

static void matvec6(const double *M, const double *x, double *y) {
    for (int i = 0; i < 6; i++) {
        const double *m = M + 6 * i;
        y[i] = m[0] * x[0] + m[1] * x[1] + m[2] * x[2] + m[3] * x[3] + m[4] * x[4] + m[5] * x[5];
    }
}

/* x = A^-1 b for a 6x6 A (mc_solve_dense on copies); returns -1 if A is singular */
static int solve6(const double *A, const double *b, double *x) {
    double M[36];
    memcpy(M, A, sizeof M);
    memcpy(x, b, 6 * sizeof *x);
    return mc_solve_dense(6, M, x);
}

/* Q = R_psi^T R, the roll-pitch tilt of the body (components/ship.py, seakeeping_tilt) */
static void tilt(const double *R, double *T) {
    const double psi = atan2(R[3], R[0]), c = cos(psi), s = sin(psi);
    for (int j = 0; j < 3; j++) {
        T[j] = c * R[j] + s * R[3 + j];
        T[3 + j] = c * R[3 + j] - s * R[j];
        T[6 + j] = R[6 + j];
    }
}

/* dy at y under the loads and the wave excitation (NULL: none); R (9) and the Euler angles (3)
   of y into R and euler. Returns -1 if the mass matrix is singular. */
static int derivative(const double *P, const double *L, const double *y, const double *wave, double *dy, double *R,
                      double *euler) {
    const int nrad = (int)P[P_NRAD];
    const double *Cr = P + P_CR, *Ar = Cr + 6 * nrad, *Br = Ar + nrad * nrad;
    const double qw = y[3], qx = y[4], qy = y[5], qz = y[6];
    const double k = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz);
    const double r00 = 1.0 - k * (qy * qy + qz * qz), r01 = k * (qx * qy - qw * qz), r02 = k * (qx * qz + qw * qy);
    const double r10 = k * (qx * qy + qw * qz), r11 = 1.0 - k * (qx * qx + qz * qz), r12 = k * (qy * qz - qw * qx);
    const double r20 = k * (qx * qz - qw * qy), r21 = k * (qy * qz + qw * qx), r22 = 1.0 - k * (qx * qx + qy * qy);
    R[0] = r00; R[1] = r01; R[2] = r02; R[3] = r10; R[4] = r11; R[5] = r12; R[6] = r20; R[7] = r21; R[8] = r22;
    const double phi = atan2(r21, r22);
    const double theta = -asin(fmax(-1.0, fmin(1.0, r20)));
    const double psi = atan2(r10, r00);
    euler[0] = phi;
    euler[1] = theta;
    euler[2] = psi;
    const double *nu = y + 7;
    const double u = nu[0], v = nu[1], w = nu[2], p = nu[3], q = nu[4], r = nu[5];
    double h[6];
    matvec6(P + P_MRB, nu, h);
    const double px = h[0], py = h[1], pz = h[2], hx = h[3], hy = h[4], hz = h[5];
    /* rigid-body Coriolis-centripetal, Kirchhoff form */
    double f[6] = {-(q * pz - r * py), -(r * px - p * pz), -(p * py - q * px),
                   -(q * hz - r * hy) - (v * pz - w * py), -(r * hx - p * hz) - (w * px - u * pz),
                   -(p * hy - q * hx) - (u * py - v * px)};
    /* hydrostatics about the ship-alone equilibrium, body axes */
    const double *G = P + P_G, z = y[2];
    for (int i = 0; i < 6; i++)
        f[i] += -(G[3 * i] * z + G[3 * i + 1] * phi + G[3 * i + 2] * theta);
    double T[9];
    tilt(R, T);
    if (L[L_LOADED] != 0.0) {
        /* hardpoint forces and moments NED -> body, then into the seakeeping axes */
        const double *F = L + L_F, *Mh = L + L_M, *A = L + L_A;
        double b[6], a[9];
        b[0] = r00 * F[0] + r10 * F[1] + r20 * F[2];
        b[1] = r01 * F[0] + r11 * F[1] + r21 * F[2];
        b[2] = r02 * F[0] + r12 * F[1] + r22 * F[2];
        for (int j = 0; j < 3; j++) {
            a[j] = r00 * A[j] + r10 * A[3 + j] + r20 * A[6 + j];
            a[3 + j] = r01 * A[j] + r11 * A[3 + j] + r21 * A[6 + j];
            a[6 + j] = r02 * A[j] + r12 * A[3 + j] + r22 * A[6 + j];
        }
        b[3] = r00 * Mh[0] + r10 * Mh[1] + r20 * Mh[2] + a[7] - a[5];
        b[4] = r01 * Mh[0] + r11 * Mh[1] + r21 * Mh[2] + a[2] - a[6];
        b[5] = r02 * Mh[0] + r12 * Mh[1] + r22 * Mh[2] + a[3] - a[1];
        for (int i = 0; i < 3; i++) {
            f[i] += T[3 * i] * b[0] + T[3 * i + 1] * b[1] + T[3 * i + 2] * b[2];
            f[3 + i] += T[3 * i] * b[3] + T[3 * i + 1] * b[4] + T[3 * i + 2] * b[5];
        }
    }
    if (P[P_HASVISC] != 0.0) {      /* linear viscous damping on the velocity relative to the current */
        const double *c = L + L_CUR, *bv = P + P_VISC;
        const double rel[6] = {u - (r00 * c[0] + r10 * c[1] + r20 * c[2]), v - (r01 * c[0] + r11 * c[1] + r21 * c[2]),
                               w - (r02 * c[0] + r12 * c[1] + r22 * c[2]), p, q, r};
        for (int i = 0; i < 6; i++)
            f[i] -= bv[i] * rel[i];
    }
    f[3] -= P[P_ROLLQ] * fabs(p) * p;
    if (P[P_HASSTATION] != 0.0) {   /* station keeping in the horizontal plane, body axes */
        const double dn = y[0] - L[L_REF], de = y[1] - L[L_REF + 1];
        const double dx = r00 * dn + r10 * de, dyb = r01 * dn + r11 * de;
        const double dpsi = remainder(psi - L[L_REF + 2], TWO_PI);
        const double *ks = P + P_KS, *cs = P + P_CS;
        f[0] -= ks[0] * dx + cs[0] * u;
        f[1] -= ks[1] * dyb + cs[1] * v;
        f[5] -= ks[2] * dpsi + cs[2] * r;
    }
    double tau[6], t6[6];
    memcpy(tau, f, sizeof tau);
    if (P[P_HASBINF] != 0.0) {
        matvec6(P + P_BINF, nu, t6);
        for (int i = 0; i < 6; i++)
            tau[i] -= t6[i];
    }
    if (nrad) {
        const double *chi = y + 16;
        for (int i = 0; i < 6; i++) {
            double s = 0.0;
            for (int j = 0; j < nrad; j++)
                s += Cr[nrad * i + j] * chi[j];
            tau[i] -= s;
        }
    }
    if (wave)
        for (int i = 0; i < 6; i++)
            tau[i] += wave[i];
    double *nu_dot = dy + 7;
    if (L[L_ART] != 0.0 && P[P_HASR1] != 0.0) {
        /* J = Rb X(r1) (body nu' -> NED [a; alpha] at hardpoint 1), a_c = Rb c, Lm = Qb J^T */
        const double *r1 = P + P_R1, *IA = L + L_IA, *pA = L + L_PA;
        const double rx = r1[0], ry = r1[1], rz = r1[2];
        const double ax = q * rz - r * ry, ay = r * rx - p * rz, az = p * ry - q * rx;
        const double cb[3] = {(q * w - r * v) + (q * az - r * ay), (r * u - p * w) + (r * ax - p * az),
                              (p * v - q * u) + (p * ay - q * ax)};
        /* X(r1) = [[1, -S(r1)], [0, 1]]: J = [[R, -R S(r1)], [0, R]] */
        double J[36] = {0}, S[9] = {0, rz, -ry, -rz, 0, rx, ry, -rx, 0};   /* -S(r1) */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                J[6 * i + j] = R[3 * i + j];
                J[6 * (3 + i) + 3 + j] = R[3 * i + j];
                J[6 * i + 3 + j] = R[3 * i] * S[j] + R[3 * i + 1] * S[3 + j] + R[3 * i + 2] * S[6 + j];
            }
        double ac[6];
        for (int i = 0; i < 3; i++) {
            ac[i] = R[3 * i] * cb[0] + R[3 * i + 1] * cb[1] + R[3 * i + 2] * cb[2];
            ac[3 + i] = 0.0;
        }
        /* M = M0 + J^T I_A J */
        double IJ[36], M[36];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double s = 0.0;
                for (int m = 0; m < 6; m++)
                    s += IA[6 * i + m] * J[6 * m + j];
                IJ[6 * i + j] = s;
            }
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double s = 0.0;
                for (int m = 0; m < 6; m++)
                    s += J[6 * m + i] * IJ[6 * m + j];
                M[6 * i + j] = P[P_M0 + 6 * i + j] + s;
            }
        /* tau - J^T (I_A a_c) - Qb J^T p_A */
        double Ia[6], Jp[6], rhs[6];
        matvec6(IA, ac, Ia);
        for (int i = 0; i < 6; i++) {
            double s = 0.0, t = 0.0;
            for (int m = 0; m < 6; m++) {
                s += J[6 * m + i] * Ia[m];
                t += J[6 * m + i] * pA[m];
            }
            rhs[i] = tau[i] - s;
            Jp[i] = t;
        }
        for (int i = 0; i < 3; i++) {
            rhs[i] -= T[3 * i] * Jp[0] + T[3 * i + 1] * Jp[1] + T[3 * i + 2] * Jp[2];
            rhs[3 + i] -= T[3 * i] * Jp[3] + T[3 * i + 1] * Jp[4] + T[3 * i + 2] * Jp[5];
        }
        if (solve6(M, rhs, nu_dot))
            return -1;
    } else {
        matvec6(P + P_MINV, tau, nu_dot);
    }
    /* kinematic rates */
    dy[0] = r00 * u + r01 * v + r02 * w;
    dy[1] = r10 * u + r11 * v + r12 * w;
    dy[2] = r20 * u + r21 * v + r22 * w;
    dy[3] = 0.5 * (-qx * p - qy * q - qz * r);
    dy[4] = 0.5 * (qw * p + qy * r - qz * q);
    dy[5] = 0.5 * (qw * q - qx * r + qz * p);
    dy[6] = 0.5 * (qw * r + qx * q - qy * p);
    const double Tlf = P[P_TLF];
    dy[13] = (y[0] - y[13]) / Tlf;
    dy[14] = (y[1] - y[14]) / Tlf;
    dy[15] = remainder(psi - y[15], TWO_PI) / Tlf;
    if (nrad) {
        const double *chi = y + 16;
        for (int i = 0; i < nrad; i++) {
            double s = 0.0, t = 0.0;
            for (int j = 0; j < nrad; j++)
                s += Ar[nrad * i + j] * chi[j];
            for (int j = 0; j < 6; j++)
                t += Br[6 * i + j] * nu[j];
            dy[16 + i] = s + t;
        }
    }
    return 0;
}

/* The cosines and sines of one stage's phases (Sea.excitation, _ExcitationPlan.cos_sin):
 *   theta_j = t w3[j][0] + (w3[j][1] N + w3[j][2] E)
 * into o (2n): for each of the groups of n / groups components, their cosines, then their sines. */
static void stage_cos_sin(const double *w3, int n, int groups, double N, double E, double t, double *o) {
    const int g = n / groups;
    for (int m = 0; m < groups; m++)
        for (int j = 0; j < g; j++) {
            const double *c = w3 + 3 * (m * g + j);
            const double th = t * c[0] + (c[1] * N + c[2] * E);
            o[2 * g * m + j] = cos(th);
            o[2 * g * m + g + j] = sin(th);
        }
}

/* tau_c = sum_k cs_k p[k][c] (c = 0..5) for p (n2 x 6, row-major): row ``row`` (0, 1, 2) of the
 * excitation's sum (cs @ p) as OpenBLAS's Haswell-family dgemm forms numpy's (3, n2) @ (n2, 6) up to
 * n2 = 256 (one block of k): fused multiply-adds from +0 in the order of k (as row_times_transpose
 * below), except for the last row's first four columns, which its 4x1 micro-tile sums in four
 * lanes (k mod 4) over the blocks of 8 k, the rest into lane 0, then (l0 + l1) + (l2 + l3)
 * (measured against numpy: the same bits for n2 = 1..240). components/kernels/ship.py checks the
 * bits against numpy's once per process and shape, and lets numpy sum where they differ. */
static void excitation_sum(const double *cs, const double *p, int n2, int row, double *tau) {
    for (int c = 0; c < 6; c++) {
        if (row == 2 && c < 4) {
            double l[4] = {0.0, 0.0, 0.0, 0.0};
            const int blocks = n2 - n2 % 8;
            for (int k = 0; k < blocks; k++)
                l[k % 4] = fma(cs[k], p[6 * k + c], l[k % 4]);
            for (int k = blocks; k < n2; k++)
                l[0] = fma(cs[k], p[6 * k + c], l[0]);
            tau[c] = (l[0] + l[1]) + (l[2] + l[3]);
            continue;
        }
        double s = 0.0;
        for (int k = 0; k < n2; k++)
            s = fma(cs[k], p[6 * k + c], s);
        tau[c] = s;
    }
}

/* The outputs of one state written where the caller's output arrays are (Ship.bind_outputs): the
 * addresses in ``to`` receive CO's position, velocity and acceleration, omega and omega' (NED), the
 * quaternion, the Euler angles, then point ``k``'s position, quaternion, velocity, omega,
 * acceleration and omega' (fmus/ship.py's update_outputs: the same values, copied). kin is
 * mc_ship_points' out for K points, the first of them CO. */
static void scatter_outputs(const long long *to, int k, int K, const double *kin, const double *y,
                            const double *euler) {
    const double *pos = kin, *vel = kin + 3 * K, *acc = kin + 6 * K, *w = kin + 9 * K, *wd = w + 3;
    const double *from[13] = {pos, vel, acc, w, wd, y + 3, euler, pos + 3 * k, y + 3, vel + 3 * k, w,
                              acc + 3 * k, wd};
    static const int size[13] = {3, 3, 3, 3, 3, 4, 3, 3, 4, 3, 3, 3, 3};
    for (int i = 0; i < 13; i++)
        memcpy((double *)(intptr_t)to[i], from[i], size[i] * sizeof(double));
}

/* ctx: the addresses of P, L, y (in place), the three stage excitations (18: at t, t + h/2, t + h;
   or 0: no waves), k1 (or 0: computed), and out (dy (16 + n_rad), R (9), Euler angles (3)); h as
   the double at ctx[6] reinterpreted; for mode 2 also the addresses of K body points (K x 3) and of
   their kinematics (9 K + 6, mc_ship_points' out), and K; for mode 3 the addresses of an excitation
   plan's w3 (n x 3) and p (2n x 6), n and its groups (integers), the address of [N, E, t + h/2, t + h]
   and of a scratch of 2n doubles; for mode 2 at ctx[16] the address of 13 output addresses (or 0)
   and at ctx[17] the point whose kinematics go to the last six (scatter_outputs). mode 0: one RK4
   sub-step of h on y; mode 1: the derivative at y with the first excitation into out; mode 2:
   mode 1, then the body points' kinematics at y with that nu' and R (Ship.points_kinematics after
   Ship._current: the outputs of one state in one call), and those outputs into the caller's
   arrays where bound; mode 3: the excitations at t + h/2 and t + h from the plan into the stage excitations'
   second and third rows (the first is the caller's), then mode 0 (Ship.step's sub-step in one
   call). Returns 0, -1 if the mass matrix is singular, -2 if the groups do not divide n. */
int mc_ship(const long long *ctx, int mode) {
    const double *P = (const double *)(intptr_t)ctx[0], *L = (const double *)(intptr_t)ctx[1];
    double *y = (double *)(intptr_t)ctx[2];
    const double *waves = (const double *)(intptr_t)ctx[3], *k1 = (const double *)(intptr_t)ctx[4];
    double *out = (double *)(intptr_t)ctx[5];
    double h;
    memcpy(&h, ctx + 6, sizeof h);
    const int m = 16 + (int)P[P_NRAD];
    if (m > 16 + MC_SHIP_MAX_RAD)
        return -1;
    if (mode == 1)
        return derivative(P, L, y, waves, out, out + m, out + m + 9);
    if (mode == 2) {
        if (derivative(P, L, y, waves, out, out + m, out + m + 9))
            return -1;
        /* mc_ship_points' in: p, v, omega, R, v', omega' */
        double in[24];
        memcpy(in, y, 3 * sizeof *in);
        memcpy(in + 3, y + 7, 6 * sizeof *in);
        memcpy(in + 9, out + m, 9 * sizeof *in);
        memcpy(in + 18, out + 7, 6 * sizeof *in);
        const int K = (int)ctx[9];
        double *kin = (double *)(intptr_t)ctx[8];
        mc_ship_points(in, (const double *)(intptr_t)ctx[7], K, kin);
        if (ctx[16])
            scatter_outputs((const long long *)(intptr_t)ctx[16], (int)ctx[17], K, kin, y, out + m + 9);
        return 0;
    }
    if (mode == 3) {
        const double *w3 = (const double *)(intptr_t)ctx[10], *p = (const double *)(intptr_t)ctx[11];
        const double *at = (const double *)(intptr_t)ctx[14];
        double *cs = (double *)(intptr_t)ctx[15], *stages = (double *)(intptr_t)ctx[3];
        const int n = (int)ctx[12], groups = (int)ctx[13];
        if (groups < 1 || n % groups || !stages)
            return -2;
        for (int r = 1; r < 3; r++) {
            stage_cos_sin(w3, n, groups, at[0], at[1], at[1 + r], cs);
            excitation_sum(cs, p, 2 * n, r, stages + 6 * r);
        }
    } else if (mode != 0) {
        return -2;
    }
    double K1[16 + MC_SHIP_MAX_RAD], K2[16 + MC_SHIP_MAX_RAD], K3[16 + MC_SHIP_MAX_RAD], K4[16 + MC_SHIP_MAX_RAD],
           Y[16 + MC_SHIP_MAX_RAD], R[9], e[3];
    const double *w1 = waves, *w2 = waves ? waves + 6 : NULL, *w3 = waves ? waves + 12 : NULL;
    const double *k = k1;
    if (!k) {
        if (derivative(P, L, y, w1, K1, R, e))
            return -1;
        k = K1;
    }
    for (int j = 0; j < m; j++)
        Y[j] = y[j] + 0.5 * h * k[j];
    if (derivative(P, L, Y, w2, K2, R, e))
        return -1;
    for (int j = 0; j < m; j++)
        Y[j] = y[j] + 0.5 * h * K2[j];
    if (derivative(P, L, Y, w2, K3, R, e))
        return -1;
    for (int j = 0; j < m; j++)
        Y[j] = y[j] + h * K3[j];
    if (derivative(P, L, Y, w3, K4, R, e))
        return -1;
    for (int j = 0; j < m; j++)
        y[j] = y[j] + (h / 6.0) * (k[j] + 2 * K2[j] + 2 * K3[j] + K4[j]);
    const double n = sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] + y[6] * y[6]);
    for (int j = 3; j < 7; j++)
        y[j] /= n;
    return 0;
}

/* The sea's phases and their cosines (and sines) for the ship's outputs and its stage excitations:
 * the first half of components/waves.py's Sea.elevation and Sea.excitation, which are the reference,
 * with their operations in their order, so that the phases are the same bits; cos and sin are the C
 * library's, which numpy's loops call where they have no SIMD versions of their own (x86-64 without
 * AVX-512: the same bits there, to rounding elsewhere). The sums over the components stay numpy's
 * (their order is the BLAS's).
 *   zeta(t, N, E) = sum_i Z_i cos(theta_i),  theta_i = w_i t + eps_i - k_i (N cos chi_i + E sin chi_i)
 *   tau = [cos theta, sin theta] @ P     ([S4] eqs. 61 and 71; Tysse & Egeland, NTNU)
 * ctx: the addresses of coef, at and out, then K, n, groups (integers).
 * mode 0 (elevation): coef = [w (n), eps (n), k cos chi (n), k sin chi (n)], at = K points (N, E);
 *   out (K x n): cos(((t w_j + eps_j) - N_k kx_j) - E_k ky_j), t = at[2 K], for the points from
 *   number ctx[5] up to (not including) number ctx[6] (the other rows kept: the caller's points and
 *   time unchanged there, or their elevations not asked for).
 * mode 1 (excitation): coef = the plan's w3 (n x 3: w, -k cos chi, -k sin chi), at = [N, E, t_0 .. t_K-1];
 *   theta_kj = t_k w3[j][0] + (w3[j][1] N + w3[j][2] E), out (K x 2n): for each of the groups of
 *   n / groups components, their cosines, then their sines (_ExcitationPlan.cos_sin).
 * mode 2 (K = 3): mode 1, then the sums (K x 6) with the plan's p (2n x 6) at the address ctx[6], as
 *   mc_ship's mode 3 forms them (for the check of their bits against numpy's). */
int mc_ship_waves(const long long *ctx, int mode) {
    const double *coef = (const double *)(intptr_t)ctx[0], *at = (const double *)(intptr_t)ctx[1];
    double *out = (double *)(intptr_t)ctx[2];
    const int K = (int)ctx[3], n = (int)ctx[4], groups = (int)ctx[5];
    if (mode == 0) {
        const double *w = coef, *eps = coef + n, *kx = coef + 2 * n, *ky = coef + 3 * n, t = at[2 * K];
        const int end = ctx[6] < K ? (int)ctx[6] : K;
        for (int k = groups < 0 ? 0 : groups; k < end; k++) {
            const double N = at[2 * k], E = at[2 * k + 1];
            double *o = out + (long)n * k;
            for (int j = 0; j < n; j++)
                o[j] = cos(((t * w[j] + eps[j]) - N * kx[j]) - E * ky[j]);
        }
        return 0;
    }
    if (mode == 1 || mode == 2) {
        if (groups < 1 || n % groups)
            return -1;
        for (int k = 0; k < K; k++)
            stage_cos_sin(coef, n, groups, at[0], at[1], at[2 + k], out + 2L * n * k);
        if (mode == 2)      /* the sums too (plan p at ctx[6]), after the cosines and sines */
            for (int k = 0; k < K; k++)
                excitation_sum(out + 2L * n * k, (const double *)(intptr_t)ctx[6], 2 * n, k, out + 2L * n * K + 6 * k);
        return 0;
    }
    return -1;
}

/* (A B^T)[j] for a 3-row A's row a and a 3x3 B, as OpenBLAS's Haswell-family dgemm forms it (what numpy's
 * A @ B.T of a (K, 3) and a (3, 3) calls): a chain of fused multiply-adds from +0, k = 0, 1, 2 */
static inline void row_times_transpose(const double *a, const double *B, double *out) {
    for (int j = 0; j < 3; j++)
        out[j] = fma(a[2], B[3 * j + 2], fma(a[1], B[3 * j + 1], fma(a[0], B[3 * j], 0.0)));
}

/* (R x)_i for a 3x3 row-major R, as OpenBLAS's Haswell-family dgemv forms it (numpy's R @ x): its
 * three-element tail, fused, added to the zeroed y */
static inline double row_dot(const double *a, const double *x) {
    return fma(a[2], x[2], fma(a[0], x[0], a[1] * x[1])) + 0.0;
}

/* The positions, velocities and accelerations (NED) of K body points (components/ship.py,
 * Ship.points_kinematics, the reference; Fossen 2011 eq. 2.40-2.42):
 *   p_k = p + R r_k,  v_k = R (v + omega x r_k),  a_k = R (v' + omega x v + omega' x r_k + omega x (omega x r_k))
 * and omega, omega' in NED (R omega, R omega'), with the reference's products in its order: its
 * matrix products (K, 3) @ (3, 3).T as row_times_transpose, R @ x as row_dot, its sums element by
 * element. in: p (3), v (3), omega (3), R (9, row-major), v' (3), omega' (3); r (K x 3); out:
 * positions, velocities, accelerations (3 x K x 3), then R omega (3), R omega' (3). */
void mc_ship_points(const double *in, const double *r, int K, double *out) {
    const double *p = in, *v = in + 3, *w = in + 6, *R = in + 9, *vd = in + 18, *wd = in + 21;
    const double Sw[9] = {0.0, -w[2], w[1], w[2], 0.0, -w[0], -w[1], w[0], 0.0};
    const double Swd[9] = {0.0, -wd[2], wd[1], wd[2], 0.0, -wd[0], -wd[1], wd[0], 0.0};
    const double cwv[3] = {w[1] * v[2] - w[2] * v[1], w[2] * v[0] - w[0] * v[2], w[0] * v[1] - w[1] * v[0]};
    for (int k = 0; k < K; k++) {
        const double *rk = r + 3 * k;
        double wxr[3], velb[3], wwr[3], t[3], accb[3];
        double *pos = out + 3 * k, *vel = out + 3 * (K + k), *acc = out + 3 * (2 * K + k);
        row_times_transpose(rk, Sw, wxr);
        for (int j = 0; j < 3; j++)
            velb[j] = v[j] + wxr[j];
        row_times_transpose(wxr, Sw, wwr);
        row_times_transpose(rk, R, t);
        for (int j = 0; j < 3; j++)
            pos[j] = p[j] + t[j];
        row_times_transpose(velb, R, vel);
        row_times_transpose(rk, Swd, t);
        for (int j = 0; j < 3; j++)
            accb[j] = ((vd[j] + cwv[j]) + t[j]) + wwr[j];
        row_times_transpose(accb, R, acc);
    }
    for (int i = 0; i < 3; i++) {
        out[9 * K + i] = row_dot(R + 3 * i, w);
        out[9 * K + 3 + i] = row_dot(R + 3 * i, wd);
    }
}
