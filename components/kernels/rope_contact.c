/* The rope contact's detection and loads (components/rope_contact.py; binding
 * components/kernels/rope_contact.py): the depth of rope segments inside a convex body and the
 * tensions, node forces and body wrenches of all ropes at once.  The numpy code is the reference;
 * this computes the same equations in the same order.  The 3-term products of a matrix product are
 * fused multiply-adds in k order (x0 a0, then fma x1 a1, then fma x2 a2), as numpy's matmul does
 * through OpenBLAS on CPUs with FMA (as nmpc.c); the row dot products of einsum("ij,ij->i") are
 * (x0 y0 + x2 y2) + x1 y1, as numpy's einsum sums a row of three.
 *
 * H.-W. Lee, PhD thesis, Seoul National University, 2020, sections 2.2.1 (eq. 43) and 2.3.1
 * (detection) and eq. 64 (node forces).
 *
 * Segment depth (Liang-Barsky; rope_contact.segment_depths): with num_f = n_f . p0 + d_f and
 * den_f = n_f . (p1 - p0), the segment is inside the body on [t0, t1] = [max(0, -num_f / den_f |
 * den_f < 0), min(1, -num_f / den_f | den_f > 0)]; the depth of the midpoint of that piece,
 * -max_f (n_f . xm + d_f); -1 if the piece is empty; -num_f if parallel to a face it is outside of.
 *
 * Loads (RopeContact._loads): T_j = EA max(0, l_j / max(ds_j, 1e-9) - 1) (+ c de/dt on taut
 * segments of a damped rope, de/dt = sum_j u_j . (V_{j+1} - V_j) / L0), the pull T_j u_j of segment j
 * on its start node, F on every node, and the sums of forces and moments about the body origin per
 * body.
 */
#include <math.h>

#include "kernels.h"

void mc_rope_segment_depths(int m, const double *p0, const double *p1, int F, const double *H, double *out);
void mc_rope_body_depths(int m, const double *X0, const double *X1, const double *pose, int F, const double *H,
                         double *out);
int mc_rope_loads(int nr, const int *counts, const double *X, const double *sig, const double *rope,
                  const int *body_of, int nb, const double *bodies, int has_field, const double *endv,
                  double *T, double *node_f, double *body_force, double *body_moment, double *work);

#define MIN_DS 1e-9   /* rope_contact._MIN_SEGMENT * 1e-3 */

/* numpy's minimum / maximum: NaN propagates, the first argument kept on a tie */
static inline double np_min(double a, double b) { return (a <= b || a != a) ? a : b; }
static inline double np_max(double a, double b) { return (a >= b || a != a) ? a : b; }

/* (x @ A)[c] for a 3-vector x and a 3x3 row-major A: k-ordered fused multiply-adds */
static inline double mv(const double *x, const double *A, int c, int stride) {
    return fma(x[2], A[2 * stride + c], fma(x[1], A[stride + c], x[0] * A[c]));
}

/* one segment's depth (segment_depths' arithmetic); H rows (n, d) */
static double depth(const double *p0, const double *p1, int F, const double *H) {
    const double dp[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double t0 = 0.0, t1 = 1.0, away = 0.0;
    for (int f = 0; f < F; f++) {
        const double *h = H + 4 * f;
        const double num = fma(p0[2], h[2], fma(p0[1], h[1], p0[0] * h[0])) + h[3];
        const double den = fma(dp[2], h[2], fma(dp[1], h[1], dp[0] * h[0]));
        const int parallel = fabs(den) < 1e-300;
        const double t = parallel ? 0.0 : -num / den;
        if (den > 0.0)
            t1 = np_min(t1, t);
        if (den < 0.0)
            t0 = np_max(t0, t);
        if (parallel && num > 0.0)
            away = np_max(away, num);
    }
    if (away > 0.0)
        return -away;
    if (t0 > t1)
        return -1.0;
    const double a = 0.5 * (t0 + t1);
    const double xm[3] = {p0[0] + a * dp[0], p0[1] + a * dp[1], p0[2] + a * dp[2]};
    double worst = 0.0;
    for (int f = 0; f < F; f++) {
        const double *h = H + 4 * f;
        const double v = fma(xm[2], h[2], fma(xm[1], h[1], xm[0] * h[0])) + h[3];
        worst = f ? np_max(worst, v) : v;
    }
    return -worst;
}

/* segment_depths: p0, p1 (m, 3) in the body frame; H (F, 4); F = 0: -1 everywhere */
void mc_rope_segment_depths(int m, const double *p0, const double *p1, int F, const double *H, double *out) {
    for (int i = 0; i < m; i++)
        out[i] = F ? depth(p0 + 3 * i, p1 + 3 * i, F, H) : -1.0;
}

/* RopeContact._body_depths of one body: the segments X0[i] - X1[i] (NED) taken into the body frame,
 * ((X - p) @ R), then their depths; pose = (p (3), R (9, row major, body -> NED)) */
void mc_rope_body_depths(int m, const double *X0, const double *X1, const double *pose, int F, const double *H,
                         double *out) {
    const double *p = pose, *R = pose + 3;
    for (int i = 0; i < m; i++) {
        const double a[3] = {X0[3 * i] - p[0], X0[3 * i + 1] - p[1], X0[3 * i + 2] - p[2]};
        const double b[3] = {X1[3 * i] - p[0], X1[3 * i + 1] - p[1], X1[3 * i + 2] - p[2]};
        const double q0[3] = {mv(a, R, 0, 3), mv(a, R, 1, 3), mv(a, R, 2, 3)};
        const double q1[3] = {mv(b, R, 0, 3), mv(b, R, 1, 3), mv(b, R, 2, 3)};
        out[i] = F ? depth(q0, q1, F, H) : -1.0;
    }
}

static inline double edot(const double *a, const double *b) {
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1];
}

/* RopeContact._loads.  nr ropes with counts[r] segments each, their nodes stacked rope after rope
 * (N = sum counts + nr): X (N, 3) NED, sig (N) material coordinates (0, sigma_j, L0 per rope);
 * rope (nr, 3): EA, damping c, length L0; body_of (N): the body a node moves with (-1: a
 * world-point end); bodies (nb, 15): the origin p (3), v (3) and W^T (9, row major, skew(w)^T);
 * has_field: whether the bodies' velocities are given; endv (nr, 2, 4): (given, velocity) of the
 * world-point ends A and B.  Out: T (sum counts), node_f (N, 3), body_force and body_moment
 * (nb, 3).  work: N * 3 + nr doubles.  Returns 1 if a rope was damped. */
int mc_rope_loads(int nr, const int *counts, const double *X, const double *sig, const double *rope,
                  const int *body_of, int nb, const double *bodies, int has_field, const double *endv,
                  double *T, double *node_f, double *body_force, double *body_moment, double *work) {
    int any_damped = 0;
    double *V = work, *rate = work;
    /* tensions, rope by rope, and whether each rope is damped (c > 0 and a taut segment) */
    for (int r = 0, s = 0, a = 0; r < nr; a += counts[r] + 1, r++) {
        double top = 0.0;
        for (int k = 0; k < counts[r]; k++, s++) {
            const double *x0 = X + 3 * (a + k), *x1 = x0 + 3;
            const double d[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
            const double l = sqrt(edot(d, d));
            const double ds = sig[a + k + 1] - sig[a + k];
            T[s] = rope[3 * r] * np_max(0.0, l / np_max(ds, MIN_DS) - 1.0);
            top = k ? np_max(top, T[s]) : T[s];
        }
        if (rope[3 * r + 1] > 0.0 && top > 0.0)
            any_damped = 1;
    }
    int N = 0;
    for (int r = 0; r < nr; r++)
        N += counts[r] + 1;
    if (any_damped) {
        V = work;
        rate = work + 3 * N;
        for (int i = 0; i < 3 * N; i++)
            V[i] = 0.0;
        if (has_field)
            for (int i = 0; i < N; i++) {
                const int b = body_of[i];
                if (b < 0)
                    continue;
                const double *B = bodies + 15 * b;
                const double arm[3] = {X[3 * i] - B[0], X[3 * i + 1] - B[1], X[3 * i + 2] - B[2]};
                for (int c = 0; c < 3; c++)
                    V[3 * i + c] = B[3 + c] + mv(arm, B + 6, c, 3);
            }
        for (int r = 0, a = 0; r < nr; a += counts[r] + 1, r++)
            for (int e = 0; e < 2; e++) {
                const double *ev = endv + 8 * r + 4 * e;
                const int at = e ? a + counts[r] : a;
                if (body_of[at] < 0 && ev[0] != 0.0)
                    for (int c = 0; c < 3; c++)
                        V[3 * at + c] = ev[1 + c];
            }
    }
    for (int r = 0, s = 0, a = 0; r < nr; a += counts[r] + 1, r++) {
        const double c = rope[3 * r + 1];
        double top = 0.0, sum = 0.0;
        for (int k = 0; k < counts[r]; k++)
            top = k ? np_max(top, T[s + k]) : T[s + k];
        const int damped = c > 0.0 && top > 0.0;
        if (damped) {
            for (int k = 0; k < counts[r]; k++) {
                const double *x0 = X + 3 * (a + k), *x1 = x0 + 3, *v0 = V + 3 * (a + k), *v1 = v0 + 3;
                const double d[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
                const double l = sqrt(edot(d, d)), w = l > 0 ? l : 1.0;
                const double u[3] = {d[0] / w, d[1] / w, d[2] / w};
                const double dv[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
                const double p = edot(u, dv);
                sum = k ? sum + p : p;
            }
            rate[r] = sum / rope[3 * r + 2];
        }
        const double cr = damped ? c * rate[r] : 0.0;
        for (int k = 0; k < counts[r]; k++, s++) {
            if (any_damped)
                T[s] = T[s] > 0.0 ? np_max(0.0, T[s] + cr) : 0.0;
        }
    }
    /* node forces: + the pull of the segment starting at the node, - that of the one ending there.
     * A node gets at most one of each (nodes are not shared between ropes), so taking them segment
     * by segment gives 0 + f - g = 0 - g + f, the reference's bits in either order */
    for (int i = 0; i < 3 * N; i++)
        node_f[i] = 0.0;
    for (int r = 0, s = 0, a = 0; r < nr; a += counts[r] + 1, r++)
        for (int k = 0; k < counts[r]; k++, s++) {
            const double *x0 = X + 3 * (a + k), *x1 = x0 + 3;
            const double d[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
            const double l = sqrt(edot(d, d)), w = l > 0 ? l : 1.0;
            for (int c = 0; c < 3; c++) {
                const double f = T[s] * (d[c] / w);
                node_f[3 * (a + k) + c] += f;
                node_f[3 * (a + k + 1) + c] -= f;
            }
        }
    /* sums per body in node order (numpy's sum over the first axis: the first row, then the others added) */
    for (int i = 0; i < 3 * nb; i++)
        body_force[i] = body_moment[i] = 0.0;
    for (int b = 0; b < nb; b++) {
        int first = 1;
        double *F = body_force + 3 * b, *M = body_moment + 3 * b;
        const double *p = bodies + 15 * b;
        for (int i = 0; i < N; i++) {
            if (body_of[i] != b)
                continue;
            const double *f = node_f + 3 * i;
            const double arm[3] = {X[3 * i] - p[0], X[3 * i + 1] - p[1], X[3 * i + 2] - p[2]};
            const double m[3] = {arm[1] * f[2] - arm[2] * f[1], arm[2] * f[0] - arm[0] * f[2],
                                 arm[0] * f[1] - arm[1] * f[0]};
            for (int c = 0; c < 3; c++) {
                F[c] = first ? f[c] : F[c] + f[c];
                M[c] = first ? m[c] : M[c] + m[c];
            }
            first = 0;
        }
    }
    return any_damped;
}
