/* The lumped-mass line's linearly implicit theta step (components/line.py, Line._implicit_step and
 * the parts of Line._forces and Line._jacobian_blocks it uses), for a line without bending,
 * torsion, tension-strain table or compression (a chain or a wire rope):
 *
 *   (M + theta h C + theta^2 h^2 K) dv = h (F - theta h K v),  v+ = v + dv,  x+ = x + h (v + theta dv)
 *
 * [BW98] D. Baraff & A. Witkin, "Large steps in cloth simulation", SIGGRAPH 1998; the forces
 * (axial springs-dampers, Morison drag and added mass, seabed) after [HG15] M. Hall & A. Goupee,
 * Ocean Engineering 104 (2015) 590-603, as the module docstring of components/line.py states them.
 * The block-tridiagonal matrix is solved by the banded Cholesky factorisation of LAPACK's dpbtf2 /
 * dpbtrs (upper band storage, kd = 5) written out, in the same order of operations.
 *
 * A step in which an element changes between slack and taut by more than 0.1 % of the largest
 * tension (a snap) is redone as the reference does: Newton iterations at the theta point and, if
 * they do not converge, two half steps (up to 16 pieces).  Only in waves or a current profile
 * (whose fluid at the theta point is the caller's) is a snap step left to the caller: the kernel
 * returns 1; 2: the matrix was not positive definite (the reference falls back to a dense solve).
 *
 * Context (int64 words; pointers to caller-owned float64 arrays):
 *   0 n (nodes N + 1)   1 P (parameters, LP_* below)   2 l (N)   3 c_el (N)   4 m_node (n)
 *   5 l_node (n)   6 man_l (n)   7 mat_l (n)   8 rhoA_l (n)   9 r (n x 3, in/out)   10 v (n x 3, in/out)
 *   11 U (n x 3) or 0 (then the uniform current P[LP_CUR..])   12 Af (n x 3) or 0   13 zs (n) or 0
 *   14 work (mc_line_work_size(n) doubles)   15 T (N, out: the tensions at the start of the last step)
 *   mc_line_advance's outputs (3 doubles each, or 0: not wanted): 16 force on end A   17 force on
 *   end B   18 position of end B   19 velocity of end B;   20 (4 doubles, or 0) the tensions of the
 *   end elements at A and B, the largest tension and the fraction of slack elements
 *
 * mc_line_end_loads evaluates the forces only (Line.end_loads: the nodes' forces at ends A and B,
 * the same values as Line._forces' rows 0 and N, and the tensions) at the state r, v of ctx;
 * mc_line_advance is mc_line_implicit followed by those loads at the state it ends in, written
 * where the caller publishes them (the Cable FMU's outputs: one call per macro step).
 */
#include <math.h>
#include <string.h>
#include "kernels.h"

enum {
    LP_EA, LP_G, LP_WET, LP_D, LP_KBOT, LP_CBOT, LP_MU, LP_FD, LP_KDN, LP_KDT, LP_RHOA, LP_THETA,
    LP_SEABED, LP_TROUGH, LP_FREE_B, LP_H, LP_NSTEP, LP_UA, LP_UB, LP_DLA, LP_DLB,
    LP_VA, LP_VB = LP_VA + 3, LP_TIP = LP_VB + 3, LP_CUR = LP_TIP + 3,
    /* the winch (mc_line_implicit with LP_PAYOUT != 0): Line.l0, m', Can rhoA, Cat rhoA, tip mass,
     * damping and sqrt(EA m') (Line._geometry_changed_fast) */
    LP_PAYOUT = LP_CUR + 3, LP_L0, LP_MPL, LP_CANRHOA, LP_CATRHOA, LP_TIPMASS, LP_DAMP, LP_DAMPSQ, LP_SIZE
};

#define WORK_ASSEMBLE(n) (69 * (n) + 8)   /* assemble()'s arrays (below) */
#define LOADS(n) ((n) + 5)                 /* mc_line_advance's F_A, F_B, T (at the end of work) */

int mc_line_work_size(int n)
{
    /* assemble: per node F 3, U 3, w, qh 3, lbar, kdn, un 3, unm, ma_n, ma_t, pressing, lin,
     * diag 9, Kv 3, rhs 3 (36); per element q 3, lam, T, kax, off 9 (15); band 18 per node.
     * Newton: T0 (N), M 9n, dv, x_th, v_th, res 3n each; per depth 0..4: l (N), r1, v1 (6n);
     * the step's result rn, vn (6n) */
    return WORK_ASSEMBLE(n) + (n - 1) + 21 * n + 5 * ((n - 1) + 6 * n) + 6 * n + 8 + LOADS(n);
}

/* a . b as numpy's einsum("ij,ij->i") sums a row of three (components/line.py's _dot3) */
static inline double dot3(const double *a, const double *b)
{
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1];
}

static inline void unit(const double *d, double *q, double *lam)
{
    double l = sqrt(dot3(d, d));
    double s = l > 1e-12 ? l : 1e-12;
    q[0] = d[0] / s;
    q[1] = d[1] / s;
    q[2] = d[2] / s;
    *lam = l;
}

/* LAPACK dpbtf2 (upper, kd = 5) on ab[6 * j + 5 + i - j] = A[i, j]; 0 or the failing column + 1 */
static int band_cholesky(int m, double *ab)
{
    for (int j = 0; j < m; j++) {
        double ajj = ab[6 * j + 5];
        if (ajj <= 0.0 || ajj != ajj)
            return j + 1;
        ajj = sqrt(ajj);
        ab[6 * j + 5] = ajj;
        int kn = m - 1 - j < 5 ? m - 1 - j : 5;
        if (kn > 0) {
            double s = 1.0 / ajj;
            /* row j to the right of the diagonal: ab(kd, j+1) with stride ldab - 1 = 5 */
            double *x = ab + 6 * (j + 1) + 4;
            for (int k = 0; k < kn; k++)
                x[5 * k] *= s;
            /* dsyr upper on the trailing kn x kn block (ab(kd+1, j+1), ld 5) */
            double *a = ab + 6 * (j + 1) + 5;
            for (int c = 0; c < kn; c++) {
                double xc = x[5 * c];
                if (xc != 0.0) {
                    double temp = -1.0 * xc;
                    for (int r = 0; r <= c; r++)
                        a[5 * c + r] += x[5 * r] * temp;
                }
            }
        }
    }
    return 0;
}

/* LAPACK dpbtrs (upper): U^T U x = b by two dtbsv */
static void band_solve(int m, const double *ab, double *x)
{
    for (int j = 0; j < m; j++) {            /* U^T y = b */
        double temp = x[j];
        int i0 = j - 5 > 0 ? j - 5 : 0;
        for (int i = i0; i < j; i++)
            temp -= ab[6 * j + 5 + i - j] * x[i];
        x[j] = temp / ab[6 * j + 5];
    }
    for (int j = m - 1; j >= 0; j--) {       /* U x = y */
        if (x[j] != 0.0) {
            x[j] /= ab[6 * j + 5];
            double temp = x[j];
            int i0 = j - 5 > 0 ? j - 5 : 0;
            for (int i = j - 1; i >= i0; i--)
                x[i] -= temp * ab[6 * j + 5 + i - j];
        }
    }
}

/* Line._forces (jac) and Line._jacobian_blocks(v, theta h, (theta h)^2) at (r, v) with the rest
 * lengths l, into the work arrays (F, T, diag, off, Kv, ... below); with out, only the forces:
 * out = F[0] (3), F[N] (3), T (N) */
static void assemble(const long long *ctx, const double *l, const double *r, const double *v, double h,
                     double *out)
{
    const int n = (int)ctx[0], N = n - 1;
    const double *P = (const double *)ctx[1];
    const double *c_el = (const double *)ctx[3];
    const double *m_node = (const double *)ctx[4], *l_node = (const double *)ctx[5];
    const double *man_l = (const double *)ctx[6], *mat_l = (const double *)ctx[7];
    const double *rhoA_l = (const double *)ctx[8];
    const double *Uin = (const double *)ctx[11], *Af = (const double *)ctx[12], *zs = (const double *)ctx[13];
    double *work = (double *)ctx[14];

    const double EA = P[LP_EA], g = P[LP_G], dia = P[LP_D], kBot = P[LP_KBOT], cBot = P[LP_CBOT];
    const double mu = P[LP_MU], fd = P[LP_FD], kdn0 = P[LP_KDN], kdt0 = P[LP_KDT], rhoA = P[LP_RHOA];
    const double th = P[LP_THETA], seabed = P[LP_SEABED];
    const int free_b = P[LP_FREE_B] != 0.0;

    double *F = work, *U = F + 3 * n, *w = U + 3 * n, *qh = w + n, *lbar = qh + 3 * n, *kdn = lbar + n;
    double *un = kdn + n, *unm = un + 3 * n, *ma_n = unm + n, *ma_t = ma_n + n, *press = ma_t + n;
    double *lin = press + n, *diag = lin + n, *Kv = diag + 9 * n, *rhs = Kv + 3 * n;
    double *q = rhs + 3 * n, *lam = q + 3 * N, *T = lam + N, *kax = T + N, *off = kax + N;   /* then ab */

    /* ---- forces (Line._forces) ---- */
    for (int e = 0; e < N; e++) {
        double d[3] = {r[3 * e + 3] - r[3 * e], r[3 * e + 4] - r[3 * e + 1], r[3 * e + 5] - r[3 * e + 2]};
        unit(d, q + 3 * e, lam + e);
        double dv[3] = {v[3 * e + 3] - v[3 * e], v[3 * e + 4] - v[3 * e + 1], v[3 * e + 5] - v[3 * e + 2]};
        double rate = dot3(dv, q + 3 * e);
        /* Line._axial: a cable (no table, no compression) */
        double eps = lam[e] / l[e] - 1.0;
        double f = EA * eps;
        double epsd = rate / l[e];
        if (e == 0 && P[LP_UA] != 0.0)
            epsd -= lam[e] / (l[e] * l[e]) * P[LP_UA];
        if (e == N - 1 && P[LP_UB] != 0.0)
            epsd -= lam[e] / (l[e] * l[e]) * P[LP_UB];
        double Te = f + c_el[e] * epsd;
        int taut = eps > 0.0 && Te > 0.0;
        T[e] = taut ? Te : 0.0;
        kax[e] = taut ? EA / l[e] : 0.0;
    }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            double x = i < N ? 0.0 + T[i] * q[3 * i + a] : 0.0;
            F[3 * i + a] = i > 0 ? x - T[i - 1] * q[3 * i - 3 + a] : x;
        }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            U[3 * i + a] = Uin ? Uin[3 * i + a] : P[LP_CUR + a];
    /* wet fraction (Line._wet_fraction) */
    if (P[LP_WET] == 0.0) {
        for (int i = 0; i < n; i++)
            w[i] = 0.0;
    } else {
        double zmin = r[2];
        for (int i = 1; i < n; i++)
            zmin = r[3 * i + 2] < zmin ? r[3 * i + 2] : zmin;
        if (zmin >= P[LP_TROUGH]) {
            for (int i = 0; i < n; i++)
                w[i] = 1.0;
        } else {
            double *fe = press;        /* scratch (N), overwritten below */
            int all_far = 1;
            for (int e = 0; e < N; e++) {
                double h1 = zs ? r[3 * e + 2] - zs[e] : r[3 * e + 2];
                double h2 = zs ? r[3 * e + 5] - zs[e + 1] : r[3 * e + 5];
                double span = fabs(h1) + fabs(h2);
                double fr = ((h1 > 0.0 ? h1 : 0.0) + (h2 > 0.0 ? h2 : 0.0)) / (span > 1e-300 ? span : 1e-300);
                if (!(span > dia))
                    all_far = 0;
                fe[e] = fr;
            }
            if (!all_far)
                for (int e = 0; e < N; e++) {
                    double h1 = zs ? r[3 * e + 2] - zs[e] : r[3 * e + 2];
                    double h2 = zs ? r[3 * e + 5] - zs[e + 1] : r[3 * e + 5];
                    double span = fabs(h1) + fabs(h2);
                    if (!(span > dia)) {
                        double s = 0.5 + (h1 + h2) / (2 * dia);
                        s = s > 0.0 ? s : 0.0;
                        fe[e] = s < 1.0 ? s : 1.0;
                    }
                }
            for (int i = 1; i < N; i++)
                w[i] = (fe[i - 1] * l[i - 1] + fe[i] * l[i]) / (l[i - 1] + l[i]);
            w[0] = fe[0];
            w[N] = fe[N - 1];
        }
    }
    for (int i = 0; i < n; i++)
        F[3 * i + 2] += (m_node[i] - w[i] * rhoA * l_node[i]) * g;
    /* node tangents and lengths */
    for (int i = 1; i < N; i++) {
        double d[3] = {r[3 * i + 3] - r[3 * i - 3], r[3 * i + 4] - r[3 * i - 2], r[3 * i + 5] - r[3 * i - 1]};
        double dummy;
        unit(d, qh + 3 * i, &dummy);
        lbar[i] = (lam[i - 1] + lam[i]) * 0.5;
    }
    memcpy(qh, q, 3 * sizeof(double));
    memcpy(qh + 3 * N, q + 3 * (N - 1), 3 * sizeof(double));
    lbar[0] = lam[0] * 0.5;
    lbar[N] = lam[N - 1] * 0.5;
    for (int i = 0; i < n; i++) {
        kdn[i] = kdn0 * lbar[i] * w[i];
        double u[3], ut[3], *uni = un + 3 * i, *qi = qh + 3 * i;
        for (int a = 0; a < 3; a++)
            u[a] = U[3 * i + a] - v[3 * i + a];
        double uq = dot3(u, qi);
        for (int a = 0; a < 3; a++) {
            ut[a] = uq * qi[a];
            uni[a] = u[a] - ut[a];
        }
        unm[i] = sqrt(dot3(uni, uni));
        double c = kdn[i] * unm[i];
        for (int a = 0; a < 3; a++)
            F[3 * i + a] += c * uni[a];
        if (kdt0 != 0.0) {
            double ct = kdt0 * lbar[i] * w[i] * sqrt(dot3(ut, ut));
            for (int a = 0; a < 3; a++)
                F[3 * i + a] += ct * ut[a];
        }
        ma_n[i] = man_l[i] * w[i];
        ma_t[i] = mat_l[i] * w[i];
        if (Af) {
            const double *A = Af + 3 * i;
            double aq = dot3(A, qi);
            double fk = rhoA_l[i] * w[i];
            for (int a = 0; a < 3; a++) {
                double at = aq * qi[a];
                F[3 * i + a] += (fk * A[a] + ma_n[i] * (A[a] - at)) + ma_t[i] * at;
            }
        }
    }
    /* seabed */
    for (int i = 0; i < n; i++)
        press[i] = lin[i] = 0.0;
    double zmax = r[2];
    for (int i = 1; i < n; i++)
        zmax = r[3 * i + 2] > zmax ? r[3 * i + 2] : zmax;
    int any_seabed = zmax > seabed;
    if (any_seabed)
        for (int i = 0; i < n; i++) {
            double pen = r[3 * i + 2] - seabed;
            if (!(pen > 0.0))
                continue;
            const double *vi = v + 3 * i;
            double Fn = kBot * pen + cBot * vi[2];
            press[i] = Fn > 0.0 ? 1.0 : 0.0;
            Fn = (Fn > 0.0 ? Fn : 0.0) * dia * l_node[i];
            F[3 * i + 2] -= Fn;
            double vhm = sqrt(vi[0] * vi[0] + vi[1] * vi[1]);
            int li = fd * vhm < mu * Fn;
            double fmag = li ? fd * vhm : mu * Fn;
            double c = fmag / (vhm > 1e-300 ? vhm : 1e-300);
            F[3 * i] -= c * vi[0];
            F[3 * i + 1] -= c * vi[1];
            lin[i] = li && Fn > 0.0 ? 1.0 : 0.0;
        }
    if (free_b)
        for (int a = 0; a < 3; a++)
            F[3 * N + a] += P[LP_TIP + a];
    if (out) {
        memcpy(out, F, 3 * sizeof(double));
        memcpy(out + 3, F + 3 * N, 3 * sizeof(double));
        memcpy(out + 6, T, N * sizeof(double));
        return;
    }

    /* ---- Jacobian blocks (Line._jacobian_blocks with cC = th h, cK = (th h)^2) ---- */
    const double cC = th * h, cK = (th * h) * (th * h);
    for (int i = 0; i < n; i++) {
        const double *qi = qh + 3 * i;
        double mI = m_node[i] + ma_n[i], dm = ma_t[i] - ma_n[i];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                diag[9 * i + 3 * a + b] = mI * (a == b ? 1.0 : 0.0) + dm * (qi[a] * qi[b]);
        Kv[3 * i] = Kv[3 * i + 1] = Kv[3 * i + 2] = 0.0;
    }
    for (int e = 0; e < N; e++) {
        const double *qe = q + 3 * e;
        double sT = T[e] / (lam[e] > 1e-12 ? lam[e] : 1e-12);
        double ce = T[e] > 0.0 ? c_el[e] / l[e] : 0.0;
        double Ke[9], *G = off + 9 * e;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double qq = qe[a] * qe[b];
                Ke[3 * a + b] = kax[e] * qq + sT * ((a == b ? 1.0 : 0.0) - qq);
                G[3 * a + b] = cC * (T[e] > 0.0 ? ce * qq : 0.0) + cK * Ke[3 * a + b];
            }
        double dv[3] = {v[3 * e + 3] - v[3 * e], v[3 * e + 4] - v[3 * e + 1], v[3 * e + 5] - v[3 * e + 2]};
        for (int a = 0; a < 3; a++) {
            double k = dot3(Ke + 3 * a, dv);
            Kv[3 * e + a] -= k;
            Kv[3 * e + 3 + a] += k;
        }
    }
    for (int i = 0; i < n; i++) {              /* diag[:-1] += G, then diag[1:] += G */
        for (int k = 0; k < 9; k++) {
            if (i < N)
                diag[9 * i + k] += off[9 * i + k];
        }
    }
    for (int i = 1; i < n; i++)
        for (int k = 0; k < 9; k++)
            diag[9 * i + k] += off[9 * (i - 1) + k];
    for (int i = 0; i < n; i++) {
        const double *qi = qh + 3 * i, *ui = un + 3 * i;
        double c1 = kdn[i] * unm[i], c2 = kdn[i] / (unm[i] > 1e-12 ? unm[i] : 1e-12);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                diag[9 * i + 3 * a + b] += cC * (c1 * ((a == b ? 1.0 : 0.0) - qi[a] * qi[b]) + c2 * (ui[a] * ui[b]));
    }
    if (any_seabed)
        for (int i = 0; i < n; i++) {
            double pen = r[3 * i + 2] - seabed;
            if (!(pen > 0.0))
                continue;
            double kz = press[i] != 0.0 ? kBot * dia * l_node[i] : 0.0;
            double cz = press[i] != 0.0 ? cBot * dia * l_node[i] : 0.0;
            diag[9 * i + 8] += cC * cz + cK * kz;
            Kv[3 * i + 2] += kz * v[3 * i + 2];
            double cf = lin[i] != 0.0 ? fd : 0.0;
            diag[9 * i] += cC * cf;
            diag[9 * i + 4] += cC * cf;
        }
}

/* the work arrays assemble() fills */
typedef struct {
    double *F, *qh, *ma_n, *ma_t, *diag, *Kv, *q, *lam, *T, *kax, *off, *ab;
} Arrays;

static Arrays arrays(const long long *ctx)
{
    const int n = (int)ctx[0], N = n - 1;
    double *work = (double *)ctx[14];
    Arrays A;
    A.F = work;
    A.qh = work + 7 * n;
    A.ma_n = A.qh + 3 * n + 2 * n + 3 * n + n;
    A.ma_t = A.ma_n + n;
    A.diag = A.ma_t + 3 * n;
    A.Kv = A.diag + 9 * n;
    A.q = A.Kv + 6 * n;
    A.lam = A.q + 3 * N;
    A.T = A.lam + N;
    A.kax = A.T + N;
    A.off = A.kax + N;
    A.ab = A.off + 9 * N;
    return A;
}

/* the banded solve of (diag, off) over the dynamic nodes i0 .. i0 + nd - 1 for rhs (in place) */
static int solve(const Arrays *A, int i0, int nd, double *rhs)
{
    const int m = 3 * nd;
    double *ab = A->ab;
    memset(ab, 0, 18 * nd * sizeof(double));
    for (int k = 0; k < nd; k++) {
        const double *D = A->diag + 9 * (i0 + k);
        for (int a = 0; a < 3; a++)
            for (int b = a; b < 3; b++)
                ab[6 * (3 * k + b) + 5 + a - b] = D[3 * a + b];
        if (k + 1 < nd) {
            const double *G = A->off + 9 * (i0 + k);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    ab[6 * (3 * k + 3 + b) + 2 + a - b] = -G[3 * a + b];
        }
    }
    if (band_cholesky(m, ab))
        return 2;
    band_solve(m, ab, rhs);
    return 0;
}

/* x, xd of the step's end nodes at tau into the step from r (Line._implicit_step's ends) */
static void ends(const double *P, int N, int free_b, const double *r, double tau, double *x, double *xd)
{
    for (int a = 0; a < 3; a++) {
        x[a] = r[a] + P[LP_VA + a] * tau;
        xd[a] = P[LP_VA + a];
        if (!free_b) {
            x[3 * N + a] = r[3 * N + a] + P[LP_VB + a] * tau;
            xd[3 * N + a] = P[LP_VB + a];
        }
    }
}

/* Line._implicit_step from (r, v) over h with the rest lengths l and the winch increments dl:
 * the linearly implicit step, and on a snap the Newton iterations at the theta point and, if they
 * do not converge, two half steps (depth up to 4).  Writes (rn, vn); returns 0, 1 (a snap in a
 * fluid other than a uniform current: the caller's) or 2 (not positive definite). */
static int implicit_step(const long long *ctx, const double *l, const double *r, const double *v, double h,
                         double dl0, double dl1, int depth, double *rn, double *vn)
{
    const int n = (int)ctx[0], N = n - 1;
    const double *P = (const double *)ctx[1];
    const double *m_node = (const double *)ctx[4];
    double *Tout = (double *)ctx[15];
    const double EA = P[LP_EA], g = P[LP_G], th = P[LP_THETA];
    const int free_b = P[LP_FREE_B] != 0.0;
    const int i0 = 1, nd = (free_b ? N + 1 : N) - 1;
    Arrays A = arrays(ctx);
    /* Newton's arrays after assemble's, then per depth: rest lengths and the half step's state */
    double *T0 = (double *)ctx[14] + WORK_ASSEMBLE(n), *M = T0 + N, *dv = M + 9 * n, *x_th = dv + 3 * n;
    double *v_th = x_th + 3 * n, *res = v_th + 3 * n;
    double *level = res + 3 * n + depth * (N + 6 * n), *lw = level, *r1 = lw + N, *v1 = r1 + 3 * n;

    assemble(ctx, l, r, v, h, 0);
    if (Tout && depth == 0)
        memcpy(Tout, A.T, N * sizeof(double));
    memcpy(T0, A.T, N * sizeof(double));
    for (int i = 0; i < n; i++) {           /* the mass at the start of the step, for a snap */
        const double *qi = A.qh + 3 * i;
        double mI = m_node[i] + A.ma_n[i], dm = A.ma_t[i] - A.ma_n[i];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                M[9 * i + 3 * a + b] = mI * (a == b ? 1.0 : 0.0) + dm * (qi[a] * qi[b]);
    }
    /* the winch elements' rest-length growth over the step */
    for (int s = 0; s < 2; s++) {
        double x = s == 0 ? dl0 : dl1;
        if (x == 0.0)
            continue;
        int e = s == 0 ? 0 : N - 1;
        double dT = -A.kax[e] * A.lam[e] / l[e] * x;
        for (int a = 0; a < 3; a++) {
            double dF = th * dT * A.q[3 * e + a];
            A.F[3 * e + a] += dF;
            A.F[3 * e + 3 + a] -= dF;
        }
    }
    const double thh = th * h;
    for (int k = 0; k < nd; k++)
        for (int a = 0; a < 3; a++)
            dv[3 * k + a] = h * (A.F[3 * (i0 + k) + a] - thh * A.Kv[3 * (i0 + k) + a]);
    if (solve(&A, i0, nd, dv))
        return 2;

    /* advance (rn, vn from dv) */
#define ADVANCE()                                                           \
    do {                                                                    \
        memcpy(rn, r, 3 * n * sizeof(double));                              \
        memcpy(vn, v, 3 * n * sizeof(double));                              \
        for (int k = 0; k < nd; k++)                                        \
            for (int a = 0; a < 3; a++) {                                   \
                int j = 3 * (i0 + k) + a;                                   \
                rn[j] = r[j] + h * (v[j] + th * dv[3 * k + a]);             \
                vn[j] = v[j] + dv[3 * k + a];                               \
            }                                                               \
        ends(P, N, free_b, r, h, rn, vn);                                   \
    } while (0)
    ADVANCE();

    /* the snap test */
    double jump = 0.0, Tmax = 0.0, mmax = 0.0;
    int flips = 0;
    for (int e = 0; e < N; e++) {
        double d[3] = {rn[3 * e + 3] - rn[3 * e], rn[3 * e + 4] - rn[3 * e + 1], rn[3 * e + 5] - rn[3 * e + 2]};
        double lam1 = sqrt(dot3(d, d));
        int taut1 = lam1 > l[e], taut0 = T0[e] > 0.0;
        if (taut1 != taut0) {
            double j = taut1 ? EA * (lam1 / l[e] - 1.0) : T0[e];
            jump = flips++ ? (j > jump ? j : jump) : j;
        }
        Tmax = T0[e] > Tmax || e == 0 ? T0[e] : Tmax;
    }
    if (!flips)
        return 0;
    for (int i = 0; i < n; i++)
        mmax = m_node[i] > mmax || i == 0 ? m_node[i] : mmax;
    if (jump <= 1e-3 * (Tmax > mmax * g ? Tmax : mmax * g))
        return 0;
    if (ctx[11] || ctx[12] || ctx[13])
        return 1;                       /* the fluid at the theta point is the caller's (waves, a profile) */

    /* snap: Newton at the theta point, the winch elements lengthened by theta dl */
    memcpy(lw, l, N * sizeof(double));
    lw[0] += th * dl0;                  /* (in this order: a two-element line with both winch ends) */
    lw[N - 1] += th * dl1;
    for (int it = 0; it < 8; it++) {
        memcpy(x_th, r, 3 * n * sizeof(double));
        memcpy(v_th, v, 3 * n * sizeof(double));
        for (int k = 0; k < nd; k++)
            for (int a = 0; a < 3; a++) {
                int j = 3 * (i0 + k) + a;
                x_th[j] = r[j] + th * (rn[j] - r[j]);
                v_th[j] = v[j] + th * dv[3 * k + a];
            }
        ends(P, N, free_b, r, th * h, x_th, v_th);
        assemble(ctx, lw, x_th, v_th, h, 0);
        for (int k = 0; k < nd; k++) {
            const double *Mi = M + 9 * (i0 + k), *dvk = dv + 3 * k;
            for (int a = 0; a < 3; a++)
                res[3 * k + a] = h * A.F[3 * (i0 + k) + a] - dot3(Mi + 3 * a, dvk);
        }
        if (solve(&A, i0, nd, res))
            return 2;
        double dmax = 0.0, vmax = 0.0;
        for (int k = 0; k < 3 * nd; k++) {
            dv[k] += res[k];
            dmax = fabs(res[k]) > dmax ? fabs(res[k]) : dmax;
        }
        for (int k = 0; k < 3 * nd; k++)
            vmax = fabs(dv[k]) > vmax ? fabs(dv[k]) : vmax;
        ADVANCE();
        if (dmax <= 1e-9 + 1e-6 * vmax)
            return 0;
    }
#undef ADVANCE
    int finite = 1;
    for (int k = 0; k < 3 * n; k++)
        finite &= isfinite(rn[k]) ? 1 : 0;
    if (depth >= 4 || !finite)
        return 0;
    /* not converged: two half steps (the second from the rest lengths lengthened by half of dl) */
    double hh = 0.5 * h, a0 = 0.5 * dl0, a1 = 0.5 * dl1;
    int rc = implicit_step(ctx, l, r, v, hh, a0, a1, depth + 1, r1, v1);
    if (rc)
        return rc;
    memcpy(lw, l, N * sizeof(double));
    lw[0] += 0.5 * dl0;
    lw[N - 1] += 0.5 * dl1;
    return implicit_step(ctx, lw, r1, v1, hh, a0, a1, depth + 1, rn, vn);
}

static int step(const long long *ctx, double dl0, double dl1)
{
    const int n = (int)ctx[0];
    const double *P = (const double *)ctx[1];
    double *r = (double *)ctx[9], *v = (double *)ctx[10];
    double *work = (double *)ctx[14];
    double *rn = work + WORK_ASSEMBLE(n) + (n - 1) + 21 * n + 5 * ((n - 1) + 6 * n);   /* after Newton's */
    double *vn = rn + 3 * n;
    int rc = implicit_step(ctx, (const double *)ctx[2], r, v, P[LP_H], dl0, dl1, 0, rn, vn);
    if (rc)
        return rc;
    memcpy(r, rn, 3 * n * sizeof(double));
    memcpy(v, vn, 3 * n * sizeof(double));
    return 0;
}

/* Line._payout_end after a sub-step without a split, merge or length limit: the winch elements'
 * new rest lengths lw and the node shares, masses, added-mass factors and damping that depend on
 * them (Line._geometry_changed_fast, entry by entry, the same formulas); returns 3 and changes
 * nothing if an end needs a split, a merge or the length floor (the caller's _payout then) */
static int payout(const long long *ctx, double h)
{
    const int n = (int)ctx[0], N = n - 1;
    const double *P = (const double *)ctx[1];
    double *l = (double *)ctx[2], *c_el = (double *)ctx[3], *m_node = (double *)ctx[4];
    double *l_node = (double *)ctx[5], *man_l = (double *)ctx[6], *mat_l = (double *)ctx[7];
    double *rhoA_l = (double *)ctx[8];
    const double l0 = P[LP_L0], u[2] = {P[LP_UA], P[LP_UB]};
    const int e_of[2] = {0, N - 1};
    double lw[2] = {0.0, 0.0};
    for (int s = 0; s < 2; s++) {
        if (u[s] == 0.0)
            continue;
        lw[s] = l[e_of[s]] + u[s] * h;
        if ((lw[s] < 0.4 * l0 && N > 2) || lw[s] < 0.05 * l0 || lw[s] > 1.6 * l0)
            return 3;
    }
    for (int s = 0; s < 2; s++)
        if (u[s] != 0.0)
            l[e_of[s]] = lw[s];
    for (int s = 0; s < 2; s++) {
        if (u[s] == 0.0)     /* an end without pay-out: its entries are unchanged */
            continue;
        int e = e_of[s];
        for (int i = e; i <= e + 1; i++) {
            if (i == 0)
                l_node[0] = 0.5 * l[0];
            else if (i == N)
                l_node[N] = 0.5 * l[N - 1];
            else
                l_node[i] = 0.5 * (l[i - 1] + l[i]);
            m_node[i] = P[LP_MPL] * l_node[i];
            if (P[LP_FREE_B] != 0.0 && i == N)
                m_node[i] += P[LP_TIPMASS];
            man_l[i] = P[LP_CANRHOA] * l_node[i];
            mat_l[i] = P[LP_CATRHOA] * l_node[i];
            rhoA_l[i] = P[LP_RHOA] * l_node[i];
        }
        if (P[LP_DAMP] < 0.0)
            c_el[e] = -P[LP_DAMP] * l[e] * P[LP_DAMPSQ];
    }
    return 0;
}

/* P[LP_NSTEP] steps of P[LP_H] (the ends moving at va, vb); returns 0, or 1 / 2 (above) with r, v
 * at the start of the step not taken and ctx's T of that step; *done (work[-]): steps taken.
 * With P[LP_PAYOUT] != 0 the winch pays out at P[LP_UA], P[LP_UB] as Line.step does sub-step by
 * sub-step (Line._payout_increment, the step, Line._payout): returns 3 after a step whose pay-out
 * needs a split, merge or length limit (counted in *done; the caller's _payout applies it), 4
 * before a step whose haul-in would eat the winch element (not taken); without it the increments
 * are P[LP_DLA], P[LP_DLB] and the rest lengths stay. */
int mc_line_implicit(const long long *ctx, int *done)
{
    const double *P = (const double *)ctx[1];
    const double *l = (const double *)ctx[2];
    const int nstep = (int)P[LP_NSTEP], N = (int)ctx[0] - 1;
    const int winch = P[LP_PAYOUT] != 0.0;
    const double h = P[LP_H];
    for (int s = 0; s < nstep; s++) {
        double dl0 = P[LP_DLA], dl1 = P[LP_DLB];
        if (winch) {
            dl0 = dl1 = 0.0;
            if (P[LP_UA] != 0.0) {
                double lw = l[0] + P[LP_UA] * h;
                if (lw < 0.05 * P[LP_L0]) {
                    *done = s;
                    return 4;
                }
                dl0 = lw - l[0];
            }
            if (P[LP_UB] != 0.0) {
                double lw = l[N - 1] + P[LP_UB] * h;
                if (lw < 0.05 * P[LP_L0]) {
                    *done = s;
                    return 4;
                }
                dl1 = lw - l[N - 1];
            }
        }
        int rc = step(ctx, dl0, dl1);
        if (rc) {
            *done = s;
            return rc;
        }
        if (winch && payout(ctx, h)) {
            *done = s + 1;
            return 3;
        }
    }
    *done = nstep;
    return 0;
}

/* Line.end_loads without bending: the forces on ends A and B and the element tensions at the
 * state in ctx (r, v; the fluid a uniform current): out = F_A (3), F_B (3), T (N) */
void mc_line_end_loads(const long long *ctx, double *out)
{
    assemble(ctx, (const double *)ctx[2], (const double *)ctx[9], (const double *)ctx[10], 0.0, out);
}

/* mc_line_implicit, then (when it took every step: returns 0) mc_line_end_loads at the state it
 * ended in, written where ctx[16..20] point; what the Cable FMU's update_outputs would copy out
 * of Line.end_loads, the same values (the largest tension and the slack count are exact in any
 * order: no tension is NaN or -0, assemble's T is either > 0 or +0) */
int mc_line_advance(const long long *ctx, int *done)
{
    int rc = mc_line_implicit(ctx, done);
    if (rc)
        return rc;
    const int n = (int)ctx[0], N = n - 1;
    double *out = (double *)ctx[14] + mc_line_work_size(n) - LOADS(n), *T = out + 6;
    const double *r = (const double *)ctx[9], *v = (const double *)ctx[10];
    mc_line_end_loads(ctx, out);
    double *fa = (double *)ctx[16], *fb = (double *)ctx[17], *tip = (double *)ctx[18];
    double *tipv = (double *)ctx[19], *sum = (double *)ctx[20];
    for (int a = 0; a < 3; a++) {
        if (fa)
            fa[a] = out[a];
        if (fb)
            fb[a] = out[3 + a];
        if (tip)
            tip[a] = r[3 * N + a];
        if (tipv)
            tipv[a] = v[3 * N + a];
    }
    if (sum) {
        double Tmax = T[0];
        int slack = 0;
        for (int e = 0; e < N; e++) {
            Tmax = T[e] > Tmax ? T[e] : Tmax;
            slack += T[e] <= 0.0;
        }
        sum[0] = T[0];
        sum[1] = T[N - 1];
        sum[2] = Tmax;
        sum[3] = (double)slack / (double)N;      /* count_nonzero / size: one correctly rounded division */
    }
    return 0;
}
