/* Featherstone's articulated-body algorithm for a serial chain of revolute-z and prismatic-z
 * joints on a moving base: the compiled kernel of components/articulated_body.py, which is the
 * reference (same equations, same frames; results agree to rounding).
 *
 * R. Featherstone (2008), "Rigid Body Dynamics Algorithms" (RBDA), Table 7.1:
 *   pass 1, base to tip:  v_i = X_i v_{i-1} + S_i qd_i,  c_i = v_i x S_i qd_i,
 *                         p^A_i = v_i x* I_i v_i - f^x_i,  I^A_i = I_i
 *   pass 2, tip to base:  U_i = I^A_i S_i,  D_i = S_i^T U_i,  u_i = tau_i - S_i^T p^A_i,
 *                         I^a = I^A_i - U_i U_i^T / D_i,  p^a = p^A_i + I^a c_i + U_i u_i / D_i,
 *                         I^A_{i-1} += X_i^T I^a X_i,  p^A_{i-1} += X_i^T p^a
 *   pass 3, base to tip:  a'_i = X_i a_{i-1} + c_i,  qdd_i = (u_i - U_i^T a'_i) / D_i,
 *                         a_i = a'_i + S_i qdd_i,   a_0 = a_base - g (gravity trick, Sec. 5.3)
 * Spatial vectors are [angular; linear] in the joint-moved frame J_i of each link. A Plucker
 * transform X = plux(E, r) = [[E, 0], [-E S(r), E]] (RBDA eq. 2.28) is kept as (R = E^T, r): the
 * rotation of J_i's axes and the position of its origin in the parent's coordinates; so
 *   X m     = [R^T w; R^T (v - r x w)]                    (motion, parent -> child)
 *   X^T f   = [R n + r x (R f); R f]                      (force, child -> parent)
 *   X^T M X = [[A' - B' S + S B'^T - S C' S, B' + S C'], [., C']],  A' = R A R^T etc., S = S(r)
 * for a symmetric M = [[A, B], [B^T, C]] (RBDA Sec. 2.8-2.9 written out in 3x3 blocks).
 *
 * Arrays (float64, row-major 3x3):
 *   model, MC_ABA_LINK per link: kind (0 revolute, 1 prismatic), theta0, d0, I_i (36, about
 *     J_i's origin, J_i axes), R_tree (9), p_tree (3) (the constant transform J_{i-1} -> F_{i-1},
 *     F_{i-1} being the frame the joint moves from).
 *   in: moving, the number of link wrenches, R (9, base -> world), p, v, w, a, alpha (world;
 *     classical acceleration), g, then q, qd, tau (n each), then per wrench: link, r (3, J_link
 *     coordinates), force (3, world), moment (3, world). moving = 0: a base at rest at the origin
 *     (R, p, v, w, a, alpha are not read).
 *   work: see mc_aba_work_size and the offsets below (components/kernels/aba.py reads them).
 * The calls take a context of four integers: n and the addresses of model, in and work.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

int mc_kernels_abi(void) { return MC_KERNELS_ABI; }

/* offsets in work, as multiples of n plus a constant (components/kernels/aba.py has the same) */
#define O_QDD(n) 0
#define O_V(n) (n)
#define O_C(n) (7 * (n))
#define O_PV(n) (13 * (n))
#define O_T(n) (19 * (n))
#define O_X(n) (31 * (n))
#define O_KE(n) (43 * (n))
#define O_TAU(n) (43 * (n) + 1)
#define P1(n) (44 * (n) + 1)          /* pass 1's results (and tau) end here; reevaluation keeps them */
#define O_U(n) (P1(n))
#define O_D(n) (P1(n) + 6 * (n))
#define O_UU(n) (P1(n) + 7 * (n))
#define O_A(n) (P1(n) + 8 * (n))
#define O_MB(n) (P1(n) + 14 * (n))
#define O_PB(n) (O_MB(n) + 36)
#define O_IAW(n) (O_MB(n) + 42)
#define O_BIAS(n) (O_MB(n) + 78)
#define O_WR(n) (O_MB(n) + 84)

enum { IN_MOVING = 0, IN_NW = 1, IN_R = 2, IN_P = 11, IN_V = 14, IN_W = 17, IN_A = 20, IN_AL = 23, IN_G = 26 };

int mc_aba_work_size(int n) { return O_MB(n) + 90; }

/* the base's articulated inertia in world axes (36, row-major [linear; angular]) and, after it, its
   bias wrench (6), in a full evaluation's work */
const double *mc_aba_base_inertia(int n, const double *work) { return work + O_IAW(n); }

static inline void cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static inline void mul(const double *M, const double *x, double *y) {        /* y = M x */
    y[0] = M[0] * x[0] + M[1] * x[1] + M[2] * x[2];
    y[1] = M[3] * x[0] + M[4] * x[1] + M[5] * x[2];
    y[2] = M[6] * x[0] + M[7] * x[1] + M[8] * x[2];
}

static inline void tmul(const double *M, const double *x, double *y) {       /* y = M^T x */
    y[0] = M[0] * x[0] + M[3] * x[1] + M[6] * x[2];
    y[1] = M[1] * x[0] + M[4] * x[1] + M[7] * x[2];
    y[2] = M[2] * x[0] + M[5] * x[1] + M[8] * x[2];
}

static inline void matmul(const double *A, const double *B, double *C) {     /* C = A B */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* out = R M R^T */
static void sandwich(const double *R, const double *M, double *out) {
    double RM[9];
    matmul(R, M, RM);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = RM[3 * i] * R[3 * j] + RM[3 * i + 1] * R[3 * j + 1] + RM[3 * i + 2] * R[3 * j + 2];
}

/* X v for a motion vector v = [w; v] (parent coordinates) into the child's: (R, r) as above */
static inline void motion(const double *X, const double *v, double *out) {
    const double *R = X, *r = X + 9;
    double rw[3], d[3];
    cross(r, v, rw);
    d[0] = v[3] - rw[0];
    d[1] = v[4] - rw[1];
    d[2] = v[5] - rw[2];
    tmul(R, v, out);
    tmul(R, d, out + 3);
}

/* out += X^T f for a force vector f = [n; f] of the child, into the parent's coordinates */
static inline void force_add(const double *X, const double *f, double *out) {
    const double *R = X, *r = X + 9;
    double Rn[3], Rf[3], rf[3];
    mul(R, f, Rn);
    mul(R, f + 3, Rf);
    cross(r, Rf, rf);
    for (int k = 0; k < 3; k++) {
        out[k] += Rn[k] + rf[k];
        out[3 + k] += Rf[k];
    }
}

/* out (6x6, added to if add) = X^T M X for a symmetric 6x6 M (child), in the parent's coordinates */
static void congruence(const double *X, const double *M, double *out, int add) {
    const double *R = X, *r = X + 9;
    double A[9], B[9], C[9], Ap[9], Bp[9], Cp[9], H[9], BS[9], HS[9], G[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            A[3 * i + j] = M[6 * i + j];
            B[3 * i + j] = M[6 * i + 3 + j];
            C[3 * i + j] = M[6 * (3 + i) + 3 + j];
        }
    sandwich(R, A, Ap);
    sandwich(R, B, Bp);
    sandwich(R, C, Cp);
    /* H = S C' (columns r x C'[:, j]); B'S (rows B'[i, :] x r); H S (rows H[i, :] x r) */
    for (int j = 0; j < 3; j++) {
        double col[3] = {Cp[j], Cp[3 + j], Cp[6 + j]}, rc[3];
        cross(r, col, rc);
        H[j] = rc[0];
        H[3 + j] = rc[1];
        H[6 + j] = rc[2];
    }
    for (int i = 0; i < 3; i++) {
        cross(Bp + 3 * i, r, BS + 3 * i);
        cross(H + 3 * i, r, HS + 3 * i);
    }
    for (int k = 0; k < 9; k++)
        G[k] = Bp[k] + H[k];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* ang-ang: A' - B'S - (B'S)^T - S C' S   (S B'^T = -(B'S)^T) */
            double aa = Ap[3 * i + j] - BS[3 * i + j] - BS[3 * j + i] - HS[3 * i + j];
            double al = G[3 * i + j], ll = Cp[3 * i + j];
            double *o = out;
            if (add) {
                o[6 * i + j] += aa;
                o[6 * i + 3 + j] += al;
                o[6 * (3 + j) + i] += al;
                o[6 * (3 + i) + 3 + j] += ll;
            } else {
                o[6 * i + j] = aa;
                o[6 * i + 3 + j] = al;
                o[6 * (3 + j) + i] = al;
                o[6 * (3 + i) + 3 + j] = ll;
            }
        }
}

/* pass 1: joint transforms, world poses of the J_i, velocities, velocity products, v x* I v */
static void velocity_pass(int n, const double *model, const double *in, double *work) {
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const int moving = in[0] != 0.0;
    const double *Rb = moving ? in + IN_R : I3;
    const double zero[3] = {0, 0, 0};
    const double *pb = moving ? in + IN_P : zero;
    const double *q = in + MC_ABA_IN_HEAD, *qd = q + n;
    double vp[6] = {0, 0, 0, 0, 0, 0};
    if (moving) {                       /* [R^T w; R^T v] */
        tmul(Rb, in + IN_W, vp);
        tmul(Rb, in + IN_V, vp + 3);
    }
    const double *Rprev = Rb, *pprev = pb;
    double ke = 0.0;
    for (int i = 0; i < n; i++) {
        const double *L = model + i * MC_ABA_LINK;
        const double *I = L + 3, *Rt = L + 39, *pt = L + 48;
        double *X = work + O_X(n) + 12 * i, *T = work + O_T(n) + 12 * i;
        double *v = work + O_V(n) + 6 * i, *c = work + O_C(n) + 6 * i, *pv = work + O_PV(n) + 6 * i;
        const int revolute = L[0] == 0.0;
        if (revolute) {                 /* R = R_tree Rz(theta0 + q), r = p_tree */
            double phi = L[1] + q[i], cs = cos(phi), sn = sin(phi);
            double Rz[9] = {cs, -sn, 0, sn, cs, 0, 0, 0, 1};
            matmul(Rt, Rz, X);
            X[9] = pt[0];
            X[10] = pt[1];
            X[11] = pt[2];
        } else {                        /* R = R_tree, r = p_tree + R_tree (d0 + q) e_z */
            double d = L[2] + q[i];
            memcpy(X, Rt, 9 * sizeof(double));
            X[9] = pt[0] + Rt[2] * d;
            X[10] = pt[1] + Rt[5] * d;
            X[11] = pt[2] + Rt[8] * d;
        }
        /* world pose of J_i: R_J = R_{J,i-1} R, p_J = p_{J,i-1} + R_{J,i-1} r */
        double Rr[3];
        matmul(Rprev, X, T);
        mul(Rprev, X + 9, Rr);
        T[9] = pprev[0] + Rr[0];
        T[10] = pprev[1] + Rr[1];
        T[11] = pprev[2] + Rr[2];
        Rprev = T;
        pprev = T + 9;
        /* v_i = X v_{i-1} + S qd;  c_i = v_i x S qd (S = e_z angular or linear) */
        motion(X, vp, v);
        const double s = qd[i];
        if (revolute) {
            v[2] += s;
            c[0] = v[1] * s; c[1] = -v[0] * s; c[2] = 0.0;
            c[3] = v[4] * s; c[4] = -v[3] * s; c[5] = 0.0;
        } else {
            v[5] += s;
            c[0] = c[1] = c[2] = 0.0;
            c[3] = v[1] * s; c[4] = -v[0] * s; c[5] = 0.0;
        }
        /* h = I v;  v x* h = [w x h_a + v_l x h_l; w x h_l] */
        double h[6], t1[3], t2[3];
        for (int r = 0; r < 6; r++)
            h[r] = I[6 * r] * v[0] + I[6 * r + 1] * v[1] + I[6 * r + 2] * v[2] + I[6 * r + 3] * v[3]
                   + I[6 * r + 4] * v[4] + I[6 * r + 5] * v[5];
        cross(v, h, t1);
        cross(v + 3, h + 3, t2);
        pv[0] = t1[0] + t2[0];
        pv[1] = t1[1] + t2[1];
        pv[2] = t1[2] + t2[2];
        cross(v, h + 3, pv + 3);
        ke += v[0] * h[0] + v[1] * h[1] + v[2] * h[2] + v[3] * h[3] + v[4] * h[4] + v[5] * h[5];
        memcpy(vp, v, sizeof vp);
    }
    work[O_KE(n)] = 0.5 * ke;
}

/* passes 2 and 3 and (if outputs) the base outputs and the true link accelerations, from pass 1's
   results in work */
static void inertia_and_acceleration_passes(int n, const double *model, const double *in, double *work,
                                            int outputs) {
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const int moving = in[0] != 0.0;
    const double *Rb = moving ? in + IN_R : I3;
    const double *g = in + IN_G;
    const int nw = (int)in[IN_NW];
    const double *tau = work + O_TAU(n), *wrenches = in + MC_ABA_IN_HEAD + 3 * n;
    double IA[MC_ABA_MAX_LINKS * 36], pA[MC_ABA_MAX_LINKS * 6];
    for (int i = 0; i < n; i++) {
        memcpy(IA + 36 * i, model + i * MC_ABA_LINK + 3, 36 * sizeof(double));
        memcpy(pA + 6 * i, work + O_PV(n) + 6 * i, 6 * sizeof(double));
    }
    /* p^A_i -= f^x_i: the link wrenches in J_i coordinates, moments about J_i's origin */
    for (int k = 0; k < nw; k++) {
        const double *wr = wrenches + 10 * k;
        int i = (int)wr[0];
        if (i < 0 || i >= n)
            continue;
        const double *RJ = work + O_T(n) + 12 * i;
        double f[3], m[3], rf[3];
        tmul(RJ, wr + 4, f);
        tmul(RJ, wr + 7, m);
        cross(wr + 1, f, rf);
        for (int j = 0; j < 3; j++) {
            pA[6 * i + j] -= m[j] + rf[j];
            pA[6 * i + 3 + j] -= f[j];
        }
    }
    double *MB = work + O_MB(n), *pB = work + O_PB(n);
    for (int i = n - 1; i >= 0; i--) {
        const int k = model[i * MC_ABA_LINK] == 0.0 ? 2 : 5;
        double *M = IA + 36 * i, *p = pA + 6 * i;
        double *U = work + O_U(n) + 6 * i;
        const double *c = work + O_C(n) + 6 * i, *X = work + O_X(n) + 12 * i;
        for (int r = 0; r < 6; r++)
            U[r] = M[6 * r + k];
        const double D = U[k], u = tau[i] - p[k];
        work[O_D(n) + i] = D;
        work[O_UU(n) + i] = u;
        const double Dinv = 1.0 / D, uD = u * Dinv;
        /* I^a = I^A - U U^T / D (in place);  p^a = p^A + I^a c + U u / D */
        for (int r = 0; r < 6; r++) {
            const double Ur = U[r] * Dinv;
            for (int s = 0; s < 6; s++)
                M[6 * r + s] -= Ur * U[s];
        }
        double pa[6];
        for (int r = 0; r < 6; r++)
            pa[r] = p[r] + (M[6 * r] * c[0] + M[6 * r + 1] * c[1] + M[6 * r + 2] * c[2] + M[6 * r + 3] * c[3]
                            + M[6 * r + 4] * c[4] + M[6 * r + 5] * c[5]) + U[r] * uD;
        if (i > 0) {
            congruence(X, M, IA + 36 * (i - 1), 1);
            force_add(X, pa, pA + 6 * (i - 1));
        } else {
            congruence(X, M, MB, 0);
            memset(pB, 0, 6 * sizeof(double));
            force_add(X, pa, pB);
        }
    }
    /* pass 3 from a_0 = [R^T alpha; R^T (a - w x v - g)] */
    double ap[6] = {0, 0, 0, -g[0], -g[1], -g[2]};
    double wxv[3] = {0, 0, 0};
    if (moving) {
        const double *v = in + IN_V, *w = in + IN_W, *a = in + IN_A, *al = in + IN_AL;
        double lin[3];
        cross(w, v, wxv);
        lin[0] = a[0] - g[0] - wxv[0];
        lin[1] = a[1] - g[1] - wxv[1];
        lin[2] = a[2] - g[2] - wxv[2];
        tmul(Rb, al, ap);
        tmul(Rb, lin, ap + 3);
    }
    for (int i = 0; i < n; i++) {
        const int k = model[i * MC_ABA_LINK] == 0.0 ? 2 : 5;
        const double *X = work + O_X(n) + 12 * i, *c = work + O_C(n) + 6 * i, *U = work + O_U(n) + 6 * i;
        double a[6];
        motion(X, ap, a);
        for (int r = 0; r < 6; r++)
            a[r] += c[r];
        const double qdd = (work[O_UU(n) + i] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3]
                                                  + U[4] * a[4] + U[5] * a[5])) / work[O_D(n) + i];
        a[k] += qdd;
        work[O_QDD(n) + i] = qdd;
        memcpy(ap, a, sizeof ap);
        if (!outputs)
            continue;
        /* the true spatial acceleration: the gravity trick undone, a_i + [0; R_J^T g] */
        double *A = work + O_A(n) + 6 * i, gl[3];
        tmul(work + O_T(n) + 12 * i, g, gl);
        for (int r = 0; r < 6; r++)
            A[r] = a[r];
        A[3] += gl[0];
        A[4] += gl[1];
        A[5] += gl[2];
    }
    if (!outputs)
        return;
    /* base outputs in world axes, [linear; angular], about the base origin:
       I_A = [[R C R^T, R B^T R^T], [R B R^T, R A R^T]] for M_B = [[A, B], [B^T, C]] ([ang; lin]) */
    double A[9], B[9], Bt[9], C[9], o[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            A[3 * i + j] = MB[6 * i + j];
            B[3 * i + j] = MB[6 * i + 3 + j];
            Bt[3 * j + i] = MB[6 * i + 3 + j];
            C[3 * i + j] = MB[6 * (3 + i) + 3 + j];
        }
    double *IAw = work + O_IAW(n);
    const double *blocks[4] = {C, Bt, B, A};
    for (int b = 0; b < 4; b++) {
        sandwich(Rb, blocks[b], o);
        const int r0 = (b / 2) * 3, c0 = (b % 2) * 3;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                IAw[6 * (r0 + i) + c0 + j] = o[3 * i + j];
    }
    /* bias = [R p_lin; R p_ang] + I_A[:, :3] (-(w x v) - g);  base wrench = -(I_A [a; alpha] + bias) */
    double *bias = work + O_BIAS(n), *wr = work + O_WR(n);
    double lin[3] = {-wxv[0] - g[0], -wxv[1] - g[1], -wxv[2] - g[2]};
    mul(Rb, pB + 3, bias);
    mul(Rb, pB, bias + 3);
    for (int r = 0; r < 6; r++)
        bias[r] += IAw[6 * r] * lin[0] + IAw[6 * r + 1] * lin[1] + IAw[6 * r + 2] * lin[2];
    double acc[6] = {0, 0, 0, 0, 0, 0};
    if (moving)
        for (int k = 0; k < 3; k++) {
            acc[k] = in[IN_A + k];
            acc[3 + k] = in[IN_AL + k];
        }
    for (int r = 0; r < 6; r++) {
        double s = 0.0;
        for (int k = 0; k < 6; k++)
            s += IAw[6 * r + k] * acc[k];
        wr[r] = -(s + bias[r]);
    }
}

typedef long long ctx_t;       /* n, then the addresses of model, in, work */

/* The whole algorithm. Returns 0, or -1 if n is out of range. */
int mc_aba(const ctx_t *ctx) {
    const int n = (int)ctx[0];
    const double *model = (const double *)(intptr_t)ctx[1], *in = (const double *)(intptr_t)ctx[2];
    double *work = (double *)(intptr_t)ctx[3];
    if (n < 1 || n > MC_ABA_MAX_LINKS)
        return -1;
    memcpy(work + O_TAU(n), in + MC_ABA_IN_HEAD + 2 * n, n * sizeof(double));
    velocity_pass(n, model, in, work);
    inertia_and_acceleration_passes(n, model, in, work, 1);
    return 0;
}

/* Passes 2 and 3 and the base outputs for a new base acceleration and new link wrenches, on pass 1's
   results (and tau) already in work; the base pose, velocity and gravity in `in` must be those of
   pass 1. Returns 0, or -1 if n is out of range. */
int mc_aba_reevaluate(const ctx_t *ctx) {
    const int n = (int)ctx[0];
    const double *model = (const double *)(intptr_t)ctx[1], *in = (const double *)(intptr_t)ctx[2];
    double *work = (double *)(intptr_t)ctx[3];
    if (n < 1 || n > MC_ABA_MAX_LINKS)
        return -1;
    inertia_and_acceleration_passes(n, model, in, work, 1);
    return 0;
}

/* (R x)_i for a 3x3 row-major R, as OpenBLAS's Haswell-family dgemv forms numpy's R.dot(x): its
 * three-element tail, fused, added to the zeroed y (rigid_body.c's and ship.c's row_dot); the
 * binding checks once per process that this gives numpy's bits here, else numpy forms them */
static inline double row_dot(const double *a, const double *x) {
    return fma(a[2], x[2], fma(a[0], x[0], a[1] * x[1])) + 0.0;
}

/* The motion of m points fixed to links (AbaResult.point_motion, components/articulated_body.py)
 * from a full evaluation's work: per point MC_ABA_POINT doubles, link and r (3, J_link
 * coordinates) in, then out the position p_J + R_J r (world), the velocity R_J v_P (world) and
 * v_P = v_O + w x r (J_link axes), with (w, v_O) the link's spatial velocity (RBDA eq. 2.21: the
 * velocity of a point of a body moving with spatial velocity [w; v_O] at the origin). */
void mc_aba_points(int n, const double *work, double *points, int m) {
    for (int k = 0; k < m; k++) {
        double *pt = points + MC_ABA_POINT * k, *pos = pt + 4, *vel = pt + 7, *vP = pt + 10;
        const int i = (int)pt[0];
        const double *r = pt + 1;
        if (i < 0 || i >= n)
            continue;
        const double *RJ = work + O_T(n) + 12 * i, *pJ = RJ + 9, *V = work + O_V(n) + 6 * i;
        double wr[3];
        cross(V, r, wr);                /* components/articulated_body.py's _cross: the same products */
        for (int j = 0; j < 3; j++)
            vP[j] = V[3 + j] + wr[j];
        for (int j = 0; j < 3; j++) {
            pos[j] = pJ[j] + row_dot(RJ + 3 * j, r);
            vel[j] = row_dot(RJ + 3 * j, vP);
        }
    }
}

/* Joint accelerations only (into work's qdd), for the stages of an integrator (crane.c): tau and q,
   qd in `in`. */
void mc_aba_qdd(int n, const double *model, const double *in, double *work) {
    memcpy(work + O_TAU(n), in + MC_ABA_IN_HEAD + 2 * n, n * sizeof(double));
    velocity_pass(n, model, in, work);
    inertia_and_acceleration_passes(n, model, in, work, 0);
}
