/* The NMPC's prediction model (components/nmpc.py, ShipPlatformModel and NMPC._simulate): the
 * derivative of the coupled ship + platform, its classical RK4 step, the platform's inertial heave,
 * roll and pitch, and the rollouts of a Gauss-Newton cost batch, each row of a batch on its own.
 * The numpy code is the reference; this computes the same equations in the same order, so results
 * agree to rounding.
 *
 * W.A. de Zeeuw, MSc thesis (TU Delft 2012) 4-62 without waves and radiation: Kane's method in the
 * ship's body axes with generalised speeds u = [nu (6); x' (3)],
 *   v_g = A_v u,  omega_p = A_w u,
 *   A_v = [1, -S(r_g), e_z, e_x x rho, E_2 x rho],  A_w = [0, 1, 0, e_x, E_2],
 *   M(x) = blkdiag(M_s, 0) + m A_v^T A_v + A_w^T I_g A_w,
 *   M u' = [tau_hs - C_RB(nu) nu; J^T f] + A_v^T (m g R^T e_z - m a_bias)
 *          - A_w^T (I_g (E' + omega x omega_p) + omega_p x I_g omega_p),
 * p' = R(Theta) v, Theta' = T(Theta) omega (zyx Euler angles); J = d ell / d x by three-point
 * differences of the Sarrus linkages' inverse kinematics (thesis 4-6 to 4-10, components/platform.py
 * _linkage). Integrated by RK4 (thesis 4-75).
 *
 * params (175): M_s (36), M_RB (36), G (36), hardpoint (3), platform mass, CG in P (3), inertia about
 *   the CG in P axes (9), gravity, linkage: a (9), b1 (9), b2 (9), u (9), side (9), |d1|, |d2|^2,
 *   alpha, the Jacobian's difference step, 0.5 / step
 * states (B, 18): p NED of CO, Theta (roll, pitch, yaw), nu (v, omega body), x (z, phi, theta), x'
 * forces (B, 3): leg forces in N
 */
#include <math.h>

#include "kernels.h"

#define MC_NMPC_STATE 18
#define MC_NMPC_PARAMS 175

void mc_nmpc_derivative(const double *P, int B, const double *s, const double *f, double *ds);
void mc_nmpc_rk4(const double *P, int B, const double *s, const double *f, double dt, double *out);
void mc_nmpc_hrp(const double *P, int B, const double *s, double *hrp);
void mc_nmpc_simulate(const double *P, int N, int B, const double *s0, const double *u, double dt,
                      double *hrp, double *work);
int mc_nmpc_params(void);

enum { P_MS = 0, P_MRB = 36, P_G = 72, P_HP = 108, P_MASS = 111, P_CG = 112, P_ICG = 115, P_GRAV = 124,
       P_A = 125, P_B1 = 134, P_B2 = 143, P_U = 152, P_SIDE = 161, P_L1 = 170, P_L2SQ = 171, P_ALPHA = 172,
       P_DX = 173, P_HALF_DX = 174 };

int mc_nmpc_params(void) { return MC_NMPC_PARAMS; }

static void cross(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The leg lengths of one pose (_linkage's arithmetic). R a is formed with fused multiply-adds in k
 * order, as numpy's matmul does through OpenBLAS on CPUs with FMA: the Jacobian's three-point
 * differences at 1e-6 turn one ulp of a leg length into 4e-10 of J, so the lengths must be numpy's
 * to the bit for the derivative to agree to rounding. */
static void leg_lengths(const double *P, const double *x, double *ell) {
    const double cp = cos(x[1]), sp = sin(x[1]), ct = cos(x[2]), st = sin(x[2]);
    const double R[9] = {ct, 0.0, st, sp * st, cp, -sp * ct, -cp * st, sp, cp * ct};
    const double L1 = P[P_L1], alpha = P[P_ALPHA];
    for (int k = 0; k < 3; k++) {
        const double *a = P + P_A + 3 * k, *b1 = P + P_B1 + 3 * k, *b2 = P + P_B2 + 3 * k;
        const double *u = P + P_U + 3 * k, *side = P + P_SIDE + 3 * k;
        double A[3], g[3], knee[3], d[3];
        for (int i = 0; i < 3; i++)
            A[i] = fma(R[3 * i + 2], a[2], fma(R[3 * i + 1], a[1], R[3 * i] * a[0]));
        A[2] += x[0];
        for (int i = 0; i < 3; i++)
            g[i] = A[i] - b1[i];
        const double rho = g[0] * u[0] + g[1] * u[1] + g[2] * u[2];
        const double h = -g[2];
        const double s = g[0] * side[0] + g[1] * side[1] + g[2] * side[2];
        double L2sq = P[P_L2SQ] - s * s;
        L2sq = L2sq < 0.0 ? 0.0 : L2sq;             /* np.maximum(., 0): NaN passes */
        const double dsq = rho * rho + h * h;
        const double dist = sqrt(dsq);
        const double den = dist > 1e-12 || dist != dist ? dist : 1e-12;
        double cos_b = (dsq + L1 * L1 - L2sq) / (2.0 * L1 * den);
        cos_b = cos_b < -1.0 ? -1.0 : (cos_b > 1.0 ? 1.0 : cos_b);
        const double ang = atan2(rho, h) - acos(cos_b);
        const double kr = L1 * sin(ang), kh = L1 * cos(ang);
        for (int i = 0; i < 3; i++)
            knee[i] = b1[i] + kr * u[i];
        knee[2] -= kh;
        for (int i = 0; i < 3; i++)
            d[i] = A[i] + alpha * (knee[i] - A[i]) - b2[i];
        ell[k] = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
}

/* J[k][j] = d ell_k / d x_j by central differences (platform.leg_jacobian, order 2): the poses
 * x + h e_j and x - h e_j, the other coordinates plus +0.0 and -0.0 as numpy's perturbation rows */
static void leg_jacobian(const double *P, const double *x, double J[3][3]) {
    const double h = P[P_DX];
    double plus[3][3], minus[3][3];
    for (int j = 0; j < 3; j++) {
        double xp[3], xm[3];
        for (int i = 0; i < 3; i++) {
            xp[i] = x[i] + (i == j ? h : 0.0);
            xm[i] = x[i] + (i == j ? -h : -0.0);
        }
        leg_lengths(P, xp, plus[j]);
        leg_lengths(P, xm, minus[j]);
    }
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            J[k][j] = (plus[j][k] - minus[j][k]) * P[P_HALF_DX];
}

/* M y = b for the 9x9 M (overwritten), the solution in b (mc_solve_dense); a singular M (never a
 * mass matrix) gives NaN, as numpy's solve would fail */
static void solve9(double *M, double *b) {
    if (mc_solve_dense(9, M, b))
        for (int i = 0; i < 9; i++)
            b[i] = NAN;
}

/* s' of one state under leg forces f (ShipPlatformModel.derivative) */
static void derivative(const double *P, const double *s, const double *f, double *ds) {
    const double *Th = s + 3, *v = s + 6, *w = s + 9, *x = s + 12, *xd = s + 15;
    const double m = P[P_MASS];
    const double cf = cos(Th[0]), sf = sin(Th[0]), ct = cos(Th[1]), st = sin(Th[1]);
    const double cps = cos(Th[2]), sps = sin(Th[2]);
    /* R = Rz(psi) Ry(theta) Rx(phi) (euler_matrix) */
    const double R[9] = {cps * ct, cps * st * sf - sps * cf, cps * st * cf + sps * sf,
                         sps * ct, sps * st * sf + cps * cf, sps * st * cf - cps * sf,
                         -st, ct * sf, ct * cf};
    /* R_BP = R_X(phi) R_Y(theta) (platform.rotation) */
    const double cphi = cos(x[1]), sphi = sin(x[1]), cth = cos(x[2]), sth = sin(x[2]);
    const double Rp[9] = {cth, 0.0, sth, sphi * sth, cphi, -sphi * cth, -cphi * sth, sphi, cphi * cth};
    const double *cg = P + P_CG, *hp = P + P_HP;
    double rho[3], rg[3];
    for (int i = 0; i < 3; i++) {
        rho[i] = Rp[3 * i] * cg[0] + Rp[3 * i + 1] * cg[1] + Rp[3 * i + 2] * cg[2];
        rg[i] = rho[i] + hp[i];
    }
    rg[2] += x[0];
    const double E2[3] = {0.0, cphi, sphi};
    double E2xrho[3];
    cross(E2, rho, E2xrho);
    /* A_v, A_w (3 x 9, row major) */
    double Av[27] = {0.0}, Aw[27] = {0.0};
    Av[0] = Av[9 + 1] = Av[18 + 2] = Av[18 + 6] = 1.0;
    Av[4] = rg[2];
    Av[5] = -rg[1];
    Av[9 + 3] = -rg[2];
    Av[9 + 5] = rg[0];
    Av[18 + 3] = rg[1];
    Av[18 + 4] = -rg[0];
    Av[9 + 7] = -rho[2];
    Av[18 + 7] = rho[1];
    for (int i = 0; i < 3; i++)
        Av[9 * i + 8] = E2xrho[i];
    Aw[3] = Aw[9 + 4] = Aw[18 + 5] = Aw[7] = 1.0;
    for (int i = 0; i < 3; i++)
        Aw[9 * i + 8] = E2[i];
    /* velocities and the velocity-dependent accelerations */
    double w_rel[3] = {E2[0] * xd[2], E2[1] * xd[2], E2[2] * xd[2]};
    w_rel[0] += xd[1];
    double v_rel[3], t1[3], t2[3], t3[3], v_g[3], w_p[3];
    cross(w_rel, rho, v_rel);
    v_rel[2] += xd[0];
    cross(w, rg, t1);
    for (int i = 0; i < 3; i++) {
        v_g[i] = v[i] + t1[i] + v_rel[i];
        w_p[i] = w[i] + w_rel[i];
    }
    const double Edot[3] = {0.0, -sphi * xd[1] * xd[2], cphi * xd[1] * xd[2]};
    double a_bias[3], t4[3];
    cross(w, v_rel, t1);
    cross(Edot, rho, t2);
    cross(w_rel, rho, t3);
    cross(w_rel, t3, t4);
    cross(w, v_g, t3);
    for (int i = 0; i < 3; i++)
        a_bias[i] = t1[i] + t2[i] + t4[i] + t3[i];
    /* I_g = R_BP I_cg R_BP^T */
    const double *Ic = P + P_ICG;
    double RI[9], Ig[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            RI[3 * i + j] = Rp[3 * i] * Ic[j] + Rp[3 * i + 1] * Ic[3 + j] + Rp[3 * i + 2] * Ic[6 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Ig[3 * i + j] = RI[3 * i] * Rp[3 * j] + RI[3 * i + 1] * Rp[3 * j + 1] + RI[3 * i + 2] * Rp[3 * j + 2];
    /* M = m A_v^T A_v + A_w^T I_g A_w + blkdiag(M_s, 0) */
    double IAw[27], M[81];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 9; c++)
            IAw[9 * i + c] = Ig[3 * i] * Aw[c] + Ig[3 * i + 1] * Aw[9 + c] + Ig[3 * i + 2] * Aw[18 + c];
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++)
            M[9 * r + c] = m * (Av[r] * Av[c] + Av[9 + r] * Av[9 + c] + Av[18 + r] * Av[18 + c])
                           + (Aw[r] * IAw[c] + Aw[9 + r] * IAw[9 + c] + Aw[18 + r] * IAw[18 + c]);
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            M[9 * r + c] += P[P_MS + 6 * r + c];
    /* ship: hydrostatics and the rigid-body Coriolis term */
    const double *G = P + P_G, *MRB = P + P_MRB;
    double tau[9], pm[6];
    for (int i = 0; i < 6; i++) {
        tau[i] = -(s[2] * G[6 * i + 2] + Th[0] * G[6 * i + 3] + Th[1] * G[6 * i + 4]);
        double acc = 0.0;
        for (int j = 0; j < 6; j++)
            acc += s[6 + j] * MRB[6 * i + j];
        pm[i] = acc;
    }
    tau[6] = tau[7] = tau[8] = 0.0;
    cross(w, pm, t1);
    cross(w, pm + 3, t2);
    cross(v, pm, t3);
    for (int i = 0; i < 3; i++) {
        tau[i] -= t1[i];
        tau[3 + i] -= t2[i] + t3[i];
    }
    /* legs: J^T f */
    double J[3][3];
    leg_jacobian(P, x, J);
    for (int j = 0; j < 3; j++)
        tau[6 + j] += J[0][j] * f[0] + J[1][j] * f[1] + J[2][j] * f[2];
    /* platform: gravity (m g R^T e_z) and the velocity terms */
    double lin[3], al_bias[3], Iw[3], ang[3];
    for (int i = 0; i < 3; i++)
        lin[i] = m * (P[P_GRAV] * R[6 + i] - a_bias[i]);
    cross(w, w_p, t1);
    for (int i = 0; i < 3; i++)
        al_bias[i] = Edot[i] + t1[i];
    for (int i = 0; i < 3; i++)
        Iw[i] = Ig[3 * i] * w_p[0] + Ig[3 * i + 1] * w_p[1] + Ig[3 * i + 2] * w_p[2];
    cross(w_p, Iw, t2);
    for (int i = 0; i < 3; i++)
        ang[i] = Ig[3 * i] * al_bias[0] + Ig[3 * i + 1] * al_bias[1] + Ig[3 * i + 2] * al_bias[2] + t2[i];
    for (int c = 0; c < 9; c++)
        tau[c] += (Av[c] * lin[0] + Av[9 + c] * lin[1] + Av[18 + c] * lin[2])
                  - (Aw[c] * ang[0] + Aw[9 + c] * ang[1] + Aw[18 + c] * ang[2]);
    solve9(M, tau);
    /* kinematics */
    for (int i = 0; i < 3; i++)
        ds[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    const double tt = tan(Th[1]);
    ds[3] = w[0] + sf * tt * w[1] + cf * tt * w[2];
    ds[4] = cf * w[1] - sf * w[2];
    ds[5] = (sf * w[1] + cf * w[2]) / ct;
    for (int i = 0; i < 6; i++)
        ds[6 + i] = tau[i];
    for (int i = 0; i < 3; i++) {
        ds[12 + i] = xd[i];
        ds[15 + i] = tau[6 + i];
    }
}

/* one classical RK4 step of dt from s into out (ShipPlatformModel.rk4; out may be s) */
static void rk4(const double *P, const double *s, const double *f, double dt, double *out) {
    double k1[MC_NMPC_STATE], k2[MC_NMPC_STATE], k3[MC_NMPC_STATE], k4[MC_NMPC_STATE], t[MC_NMPC_STATE];
    const double hh = 0.5 * dt, h6 = dt / 6.0;
    derivative(P, s, f, k1);
    for (int j = 0; j < MC_NMPC_STATE; j++)
        t[j] = s[j] + hh * k1[j];
    derivative(P, t, f, k2);
    for (int j = 0; j < MC_NMPC_STATE; j++)
        t[j] = s[j] + hh * k2[j];
    derivative(P, t, f, k3);
    for (int j = 0; j < MC_NMPC_STATE; j++)
        t[j] = s[j] + dt * k3[j];
    derivative(P, t, f, k4);
    for (int j = 0; j < MC_NMPC_STATE; j++)
        out[j] = s[j] + h6 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
}

/* the platform's inertial heave (NED down of its origin), roll and pitch (zyx of R R_BP): platform_hrp */
static void hrp(const double *P, const double *s, double *out) {
    const double *Th = s + 3, *x = s + 12, *hp = P + P_HP;
    const double cf = cos(Th[0]), sf = sin(Th[0]), ct = cos(Th[1]), st = sin(Th[1]);
    const double R2[3] = {-st, ct * sf, ct * cf};           /* the third row of R is all it needs */
    const double cphi = cos(x[1]), sphi = sin(x[1]), cth = cos(x[2]), sth = sin(x[2]);
    const double Rp[9] = {cth, 0.0, sth, sphi * sth, cphi, -sphi * cth, -cphi * sth, sphi, cphi * cth};
    const double c[3] = {hp[0] + x[0] * 0.0, hp[1] + x[0] * 0.0, hp[2] + x[0] * 1.0};
    out[0] = s[2] + (R2[0] * c[0] + R2[1] * c[1] + R2[2] * c[2]);
    double Rn[3];
    for (int j = 0; j < 3; j++)
        Rn[j] = R2[0] * Rp[j] + R2[1] * Rp[3 + j] + R2[2] * Rp[6 + j];
    out[1] = atan2(Rn[1], Rn[2]);
    const double r = Rn[0] < -1.0 ? -1.0 : (Rn[0] > 1.0 ? 1.0 : Rn[0]);
    out[2] = -asin(r);
}

void mc_nmpc_derivative(const double *P, int B, const double *s, const double *f, double *ds) {
    for (int b = 0; b < B; b++)
        derivative(P, s + MC_NMPC_STATE * b, f + 3 * b, ds + MC_NMPC_STATE * b);
}

void mc_nmpc_rk4(const double *P, int B, const double *s, const double *f, double dt, double *out) {
    for (int b = 0; b < B; b++)
        rk4(P, s + MC_NMPC_STATE * b, f + 3 * b, dt, out + MC_NMPC_STATE * b);
}

void mc_nmpc_hrp(const double *P, int B, const double *s, double *out) {
    for (int b = 0; b < B; b++)
        hrp(P, s + MC_NMPC_STATE * b, out + 3 * b);
}

/* NMPC._simulate: B trajectories of N RK4 steps of dt from s0 (18) under forces u (B, N, 3) held over
 * each step; the HRP at the end of each step into hrp (B, N, 3). Row 0 is simulated first and its
 * states kept in work (N * 18); a row whose forces equal row 0's up to step j (a Jacobian batch's
 * perturbation of step j) takes row 0's results for the steps before j and starts from its state:
 * the same numbers, every row being computed on its own. */
void mc_nmpc_simulate(const double *P, int N, int B, const double *s0, const double *u, double dt,
                      double *out, double *work) {
    for (int i = 0; i < N; i++) {
        rk4(P, i ? work + MC_NMPC_STATE * (i - 1) : s0, u + 3 * i, dt, work + MC_NMPC_STATE * i);
        hrp(P, work + MC_NMPC_STATE * i, out + 3 * i);
    }
    for (int b = 1; b < B; b++) {
        const double *ub = u + 3 * N * b;
        double *ob = out + 3 * N * b;
        int j = 0;
        while (j < N && ub[3 * j] == u[3 * j] && ub[3 * j + 1] == u[3 * j + 1] && ub[3 * j + 2] == u[3 * j + 2]) {
            ob[3 * j] = out[3 * j];
            ob[3 * j + 1] = out[3 * j + 1];
            ob[3 * j + 2] = out[3 * j + 2];
            j++;
        }
        double st[MC_NMPC_STATE];
        const double *from = j ? work + MC_NMPC_STATE * (j - 1) : s0;
        for (int k = 0; k < MC_NMPC_STATE; k++)
            st[k] = from[k];
        for (; j < N; j++) {
            rk4(P, st, ub + 3 * j, dt, st);
            hrp(P, st, ob + 3 * j);
        }
    }
}
