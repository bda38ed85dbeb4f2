/* Volumetric contact of two boxes (components/contact.py, ContactPair._normal_loads with the
 * "volume" model; components/convex.py and components/interference.py for the geometry).
 *
 * Apart: GJK on the two boxes, operation for operation as _gjk_core with Box._core_support_fn
 * (the same distance, bit for bit).  Overlapping: the penetration depth and normal by the
 * separating axes of two boxes (the 3 + 3 face normals and the 9 edge-edge cross products: the
 * facet normals of the Minkowski difference among them, so their smallest support value is EPA's
 * depth, to rounding); the interference polyhedron by clipping box A's faces with box B's six
 * planes (its volume and centroid by signed tetrahedra from an interior point [SMS eqs. 94-95]);
 * the footprint quadrature of contact.footprint on the polyhedron's faces that face +n (each face
 * cut into a fan of triangles, each triangle into 9), and the dashpots over it.  The volume, the
 * centroid, the normal and the springs' force equal the reference's to rounding; the dashpots'
 * quadrature equals it to rounding where the dashpots' bound (the spring at the same point) does
 * not bind inside a triangle: the reference cuts the faces into qhull's triangles, this a fan.
 *
 * Near the interference's zero-volume tolerance (the Chebyshev radius against min_radius: not
 * decided by the inscribed radius at the centroid, a lower bound, nor by 3 V / S, an upper bound)
 * and apart within the zero-distance tolerance, the call returns MC_CONTACT_REFERENCE and the
 * numpy reference decides.
 *
 * in  (46): half extents A (3), p_A (3), R_A (9, row-major, body -> world), half extents B (3),
 *           p_B (3), R_B (9), v_A (3), w_A (3), v_B (3), w_B (3), E_eff, B_eff, tolerance,
 *           min_radius
 * out (18): distance, state, point (3), n (3), f_n, f_d, damping moment on A (3), on B (3),
 *           volume, 1 if the dashpots act
 */
#include <math.h>
#include "kernels.h"

#define MAXV 32          /* vertices of one face of the clipped box */
#define MAXF 16          /* faces: 6 of A, up to 6 caps from B's planes */

typedef struct { int n; double v[MAXV][3]; double m[3]; double e; } Face;   /* m.x + e = 0, m outward */

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* ------------------------------------------------------------------ GJK (convex.py, bit for bit) */

typedef struct { double u[3][3]; double p[3]; } Support;      /* Box._core_support_fn's closure */

static void support_init(Support *s, const double *half, const double *p, const double *R)
{
    for (int i = 0; i < 3; i++) {
        s->u[0][i] = R[3 * i + 0] * half[0];
        s->u[1][i] = R[3 * i + 1] * half[1];
        s->u[2][i] = R[3 * i + 2] * half[2];
        s->p[i] = p[i];
    }
}

static void support(const Support *s, const double *d, double *out)
{
    double x = s->p[0], y = s->p[1], z = s->p[2];
    for (int k = 0; k < 3; k++) {
        const double *u = s->u[k];
        if (u[0] * d[0] + u[1] * d[1] + u[2] * d[2] >= 0.0) {
            x = x + u[0]; y = y + u[1]; z = z + u[2];
        } else {
            x = x - u[0]; y = y - u[1]; z = z - u[2];
        }
    }
    out[0] = x; out[1] = y; out[2] = z;
}

static int same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

static void comb(const double *lam, const double (*pts)[3], int n, double *out)
{
    double x = 0.0, y = 0.0, z = 0.0;
    for (int i = 0; i < n; i++) {
        x += lam[i] * pts[i][0];
        y += lam[i] * pts[i][1];
        z += lam[i] * pts[i][2];
    }
    out[0] = x; out[1] = y; out[2] = z;
}

static void s1d(const double *a, const double *b, double *lam, double *v)
{
    double t[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double tt = dot(t, t);
    double u = tt > 0.0 ? -dot(a, t) / tt : 0.0;
    if (u <= 0.0) {
        lam[0] = 1.0; lam[1] = 0.0; v[0] = a[0]; v[1] = a[1]; v[2] = a[2];
        return;
    }
    if (u >= 1.0) {
        lam[0] = 0.0; lam[1] = 1.0; v[0] = b[0]; v[1] = b[1]; v[2] = b[2];
        return;
    }
    lam[0] = 1.0 - u; lam[1] = u;
    v[0] = a[0] + u * t[0]; v[1] = a[1] + u * t[1]; v[2] = a[2] + u * t[2];
}

static void s2d(const double *a, const double *b, const double *c, double *lam, double *v)
{
    double ba[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ca[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3], C[3] = {0.0, 0.0, 0.0}, mu = 0.0;
    cross(ba, ca, n);
    double nn = dot(n, n);
    const double *pts[3] = {a, b, c};
    if (nn > 0.0) {
        int J = 0;                                   /* max(range(3), key=abs): the first largest */
        for (int i = 1; i < 3; i++)
            if (fabs(n[i]) > fabs(n[J])) J = i;
        int k = (J + 1) % 3, l = (J + 2) % 3;
        mu = n[J];
        double s = dot(a, n) / nn;
        double p0[3] = {n[0] * s, n[1] * s, n[2] * s};
        for (int j = 0; j < 3; j++) {
            const double *u = pts[(j + 1) % 3], *w = pts[(j + 2) % 3];
            C[j] = (u[k] - p0[k]) * (w[l] - p0[l]) - (u[l] - p0[l]) * (w[k] - p0[k]);
        }
        if (same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2])) {
            double tot = C[0] + C[1] + C[2];
            lam[0] = C[0] / tot; lam[1] = C[1] / tot; lam[2] = C[2] / tot;
            double P[3][3];
            for (int i = 0; i < 3; i++) { P[i][0] = pts[i][0]; P[i][1] = pts[i][1]; P[i][2] = pts[i][2]; }
            comb(lam, (const double (*)[3])P, 3, v);
            return;
        }
    }
    int found = 0;
    double best = 0.0;
    for (int j = 0; j < 3; j++) {
        if (same_sign(mu, C[j])) continue;
        int i1 = (j + 1) % 3, i2 = (j + 2) % 3;
        double l2[2], w[3];
        s1d(pts[i1], pts[i2], l2, w);
        double d = dot(w, w);
        if (!found || d < best) {
            found = 1; best = d;
            lam[0] = lam[1] = lam[2] = 0.0;
            lam[i1] = l2[0]; lam[i2] = l2[1];
            v[0] = w[0]; v[1] = w[1]; v[2] = w[2];
        }
    }
}

static double det3(const double *a, const double *b, const double *c)
{
    double bc[3];
    cross(b, c, bc);
    return dot(a, bc);
}

static void s3d(const double (*P)[3], double *lam, double *v)
{
    double C[4] = {-det3(P[1], P[2], P[3]), det3(P[0], P[2], P[3]), -det3(P[0], P[1], P[3]), det3(P[0], P[1], P[2])};
    double detM = C[0] + C[1] + C[2] + C[3];
    if (same_sign(detM, C[0]) && same_sign(detM, C[1]) && same_sign(detM, C[2]) && same_sign(detM, C[3])) {
        for (int j = 0; j < 4; j++) lam[j] = C[j] / detM;
        v[0] = v[1] = v[2] = 0.0;
        return;
    }
    int found = 0;
    double best = 0.0;
    for (int j = 0; j < 4; j++) {
        if (same_sign(detM, C[j])) continue;
        int idx[3], m = 0;
        for (int i = 0; i < 4; i++)
            if (i != j) idx[m++] = i;
        double l3[3], w[3];
        s2d(P[idx[0]], P[idx[1]], P[idx[2]], l3, w);
        double dd = dot(w, w);
        if (!found || dd < best) {
            found = 1; best = dd;
            lam[0] = lam[1] = lam[2] = lam[3] = 0.0;
            for (int i = 0; i < 3; i++) lam[idx[i]] = l3[i];
            v[0] = w[0]; v[1] = w[1]; v[2] = w[2];
        }
    }
}

/* _gjk_core(fa, fb, v0, rel_tol, max_iter): 1 if the cores intersect, else 0 and *distance */
static int gjk(const Support *A, const Support *B, const double *v0, double rel_tol, int max_iter, double *distance)
{
    double v[3] = {v0[0], v0[1], v0[2]};
    if (!(dot(v0, v0) > 0.0)) { v[0] = 1.0; v[1] = 0.0; v[2] = 0.0; }
    double vv = dot(v, v), scale2 = 0.0;
    double W[4][3];
    int nW = 0;
    for (int it = 0; it < max_iter; it++) {
        double mv[3] = {-v[0], -v[1], -v[2]}, a[3], b[3], w[3];
        support(A, mv, a);
        support(B, v, b);
        w[0] = a[0] - b[0]; w[1] = a[1] - b[1]; w[2] = a[2] - b[2];
        double ww = dot(w, w);
        if (ww > scale2) scale2 = ww;                 /* max(scale2, ww) */
        if (nW) {
            if (vv - dot(v, w) <= rel_tol * sqrt(scale2 * vv)) break;
            int repeated = 0;
            for (int i = 0; i < nW; i++)
                if (W[i][0] == w[0] && W[i][1] == w[1] && W[i][2] == w[2]) repeated = 1;
            if (repeated) break;
        }
        double nWp[4][3], lam[4], nv[3];
        for (int i = 0; i < nW; i++) { nWp[i][0] = W[i][0]; nWp[i][1] = W[i][1]; nWp[i][2] = W[i][2]; }
        nWp[nW][0] = w[0]; nWp[nW][1] = w[1]; nWp[nW][2] = w[2];
        int m = nW + 1;
        if (m == 1) { lam[0] = 1.0; nv[0] = w[0]; nv[1] = w[1]; nv[2] = w[2]; }
        else if (m == 2) s1d(nWp[0], nWp[1], lam, nv);
        else if (m == 3) s2d(nWp[0], nWp[1], nWp[2], lam, nv);
        else s3d((const double (*)[3])nWp, lam, nv);
        double nvv = dot(nv, nv);
        if (nW && nvv >= vv) break;                   /* no progress: round-off floor reached */
        nW = 0;
        for (int i = 0; i < m; i++)
            if (lam[i] > 0.0) { W[nW][0] = nWp[i][0]; W[nW][1] = nWp[i][1]; W[nW][2] = nWp[i][2]; nW++; }
        v[0] = nv[0]; v[1] = nv[1]; v[2] = nv[2];
        vv = nvv;
        if (nW == 4 || vv <= 1e-26 * scale2) return 1;
    }
    *distance = sqrt(vv);
    return 0;
}

/* ------------------------------------------------------------------ the interference polyhedron */

/* the six face planes of a box (unit outward normals R e_i, offsets) */
static void box_planes(const double *half, const double *p, const double *R, double (*H)[4])
{
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 2; s++) {
            double *h = H[2 * i + s], sg = s ? -1.0 : 1.0;
            h[0] = sg * R[i]; h[1] = sg * R[3 + i]; h[2] = sg * R[6 + i];
            h[3] = -dot(h, p) - half[i];
        }
}

static void corner(const double *half, const double *p, const double *R, const double *sg, double *x)
{
    for (int r = 0; r < 3; r++)
        x[r] = p[r] + (sg[0] * half[0] * R[3 * r] + sg[1] * half[1] * R[3 * r + 1] + sg[2] * half[2] * R[3 * r + 2]);
}

/* box A's faces (polygons, cyclic order) */
static int box_faces(const double *half, const double *p, const double *R, const double (*H)[4], Face *F)
{
    static const double cyc[4][2] = {{1.0, 1.0}, {-1.0, 1.0}, {-1.0, -1.0}, {1.0, -1.0}};
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 2; s++) {
            Face *f = &F[2 * i + s];
            int j = (i + 1) % 3, k = (i + 2) % 3;
            for (int c = 0; c < 4; c++) {
                double sg[3];
                sg[i] = s ? -1.0 : 1.0; sg[j] = cyc[c][0]; sg[k] = cyc[c][1];
                corner(half, p, R, sg, f->v[c]);
            }
            f->n = 4;
            f->m[0] = H[2 * i + s][0]; f->m[1] = H[2 * i + s][1]; f->m[2] = H[2 * i + s][2];
            f->e = H[2 * i + s][3];
        }
    return 6;
}

/* cut the polyhedron (faces F[0..nf)) by m.x + e <= 0; returns the new face count (0: empty) */
static int clip(Face *F, int nf, const double *h)
{
    double cap[2 * MAXF * MAXV][3];
    int nc = 0, any_out = 0, any_in = 0;
    for (int f = 0; f < nf; f++)
        for (int i = 0; i < F[f].n; i++) {
            double s = dot(h, F[f].v[i]) + h[3];
            if (s > 0.0) any_out = 1; else any_in = 1;
        }
    if (!any_out) return nf;
    if (!any_in) return 0;
    int out = 0, flush = 0;
    for (int f = 0; f < nf; f++) {
        Face g = F[f];
        double s[MAXV];
        int on = 0;
        for (int i = 0; i < g.n; i++) {
            s[i] = dot(h, g.v[i]) + h[3];
            on += s[i] == 0.0;
        }
        flush = flush || on == g.n;     /* a face in the plane already: no cap */
        Face r = g;
        r.n = 0;
        for (int i = 0; i < g.n; i++) {
            int j = (i + 1) % g.n;
            if (s[i] <= 0.0) {
                if (r.n >= MAXV) return -1;
                r.v[r.n][0] = g.v[i][0]; r.v[r.n][1] = g.v[i][1]; r.v[r.n][2] = g.v[i][2]; r.n++;
                if (s[i] == 0.0 && nc < 2 * MAXF * MAXV) {
                    cap[nc][0] = g.v[i][0]; cap[nc][1] = g.v[i][1]; cap[nc][2] = g.v[i][2]; nc++;
                }
            }
            if ((s[i] < 0.0 && s[j] > 0.0) || (s[i] > 0.0 && s[j] < 0.0)) {
                /* from the inside point to the outside one: the two faces of an edge agree */
                const double *P = s[i] < 0.0 ? g.v[i] : g.v[j], *Q = s[i] < 0.0 ? g.v[j] : g.v[i];
                double sp = s[i] < 0.0 ? s[i] : s[j], sq = s[i] < 0.0 ? s[j] : s[i];
                double t = sp / (sp - sq), X[3];
                for (int c = 0; c < 3; c++) X[c] = P[c] + t * (Q[c] - P[c]);
                if (r.n >= MAXV) return -1;
                r.v[r.n][0] = X[0]; r.v[r.n][1] = X[1]; r.v[r.n][2] = X[2]; r.n++;
                if (nc < 2 * MAXF * MAXV) { cap[nc][0] = X[0]; cap[nc][1] = X[1]; cap[nc][2] = X[2]; nc++; }
            }
        }
        if (r.n >= 3) F[out++] = r;
    }
    /* the cap: the distinct points on the plane, in angular order about their mean */
    int nu = 0;
    for (int i = 0; i < nc; i++) {
        int dup = 0;
        for (int j = 0; j < nu; j++)
            if (cap[j][0] == cap[i][0] && cap[j][1] == cap[i][1] && cap[j][2] == cap[i][2]) { dup = 1; break; }
        if (!dup) { cap[nu][0] = cap[i][0]; cap[nu][1] = cap[i][1]; cap[nu][2] = cap[i][2]; nu++; }
    }
    if (nu >= 3 && !flush) {
        if (out >= MAXF || nu > MAXV) return -1;
        double c[3] = {0.0, 0.0, 0.0}, e1[3], e2[3], ang[MAXV];
        for (int i = 0; i < nu; i++) { c[0] += cap[i][0]; c[1] += cap[i][1]; c[2] += cap[i][2]; }
        c[0] /= nu; c[1] /= nu; c[2] /= nu;
        /* a basis of the plane */
        double ax[3] = {0.0, 0.0, 0.0};
        int k = fabs(h[0]) < fabs(h[1]) ? (fabs(h[0]) < fabs(h[2]) ? 0 : 2) : (fabs(h[1]) < fabs(h[2]) ? 1 : 2);
        ax[k] = 1.0;
        cross(h, ax, e1);
        double l1 = sqrt(dot(e1, e1));
        e1[0] /= l1; e1[1] /= l1; e1[2] /= l1;
        cross(h, e1, e2);
        Face *g = &F[out];
        for (int i = 0; i < nu; i++) {
            double d[3] = {cap[i][0] - c[0], cap[i][1] - c[1], cap[i][2] - c[2]};
            ang[i] = atan2(dot(d, e2), dot(d, e1));
        }
        for (int i = 0; i < nu; i++) {              /* insertion sort by angle */
            int j = i;
            double a = ang[i], q[3] = {cap[i][0], cap[i][1], cap[i][2]};
            while (j > 0 && ang[j - 1] > a) {
                ang[j] = ang[j - 1];
                cap[j][0] = cap[j - 1][0]; cap[j][1] = cap[j - 1][1]; cap[j][2] = cap[j - 1][2];
                j--;
            }
            ang[j] = a; cap[j][0] = q[0]; cap[j][1] = q[1]; cap[j][2] = q[2];
        }
        g->n = nu;
        for (int i = 0; i < nu; i++) { g->v[i][0] = cap[i][0]; g->v[i][1] = cap[i][1]; g->v[i][2] = cap[i][2]; }
        g->m[0] = h[0]; g->m[1] = h[1]; g->m[2] = h[2]; g->e = h[3];
        out++;
    }
    return out;
}

/* barycentric coordinates of the 9 sub-triangle centroids (contact._SUB's order) */
static void sub_points(double (*b)[2])
{
    int m = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3 - i; j++)
            for (int k = 0; k < 2; k++)
                if (k == 0 || i + j < 2) {
                    b[m][0] = (i + 1.0 / 3.0 + (k == 1) / 3.0) / 3.0;
                    b[m][1] = (j + 1.0 / 3.0 + (k == 1) / 3.0) / 3.0;
                    m++;
                }
}

int mc_contact_box_box(const double *in, double *out)
{
    const double *ha = in, *pa = in + 3, *Ra = in + 6, *hb = in + 15, *pb = in + 18, *Rb = in + 21;
    const double *va = in + 30, *wa = in + 33, *vb = in + 36, *wb = in + 39;
    double E = in[42], Bd = in[43], tol = in[44], min_radius = in[45];
    for (int i = 0; i < 18; i++) out[i] = 0.0;

    /* GJK (penetration's first step): apart, the distance is GJK's */
    Support SA, SB;
    support_init(&SA, ha, pa, Ra);
    support_init(&SB, hb, pb, Rb);
    double v0[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]}, distance;
    if (dot(v0, v0) == 0.0) { v0[0] = 1.0; v0[1] = 0.0; v0[2] = 0.0; }
    if (!gjk(&SA, &SB, v0, 1e-9, 128, &distance)) {
        out[0] = distance;
        if (distance > tol) { out[1] = MC_CONTACT_APART; return MC_CONTACT_APART; }
        out[1] = MC_CONTACT_REFERENCE;
        return MC_CONTACT_REFERENCE;
    }

    /* separating axes: the smallest support value of A - B over the candidate normals */
    double UA[3][3], UB[3][3], axes[15][3];
    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 3; r++) { UA[i][r] = Ra[3 * r + i]; UB[i][r] = Rb[3 * r + i]; }
    int na = 0;
    for (int i = 0; i < 3; i++) { axes[na][0] = UA[i][0]; axes[na][1] = UA[i][1]; axes[na][2] = UA[i][2]; na++; }
    for (int i = 0; i < 3; i++) { axes[na][0] = UB[i][0]; axes[na][1] = UB[i][1]; axes[na][2] = UB[i][2]; na++; }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double c[3];
            cross(UA[i], UB[j], c);
            double l = sqrt(dot(c, c));
            if (l > 1e-6) { axes[na][0] = c[0] / l; axes[na][1] = c[1] / l; axes[na][2] = c[2] / l; na++; }
        }
    double delta[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]}, depth = INFINITY, n[3] = {0.0, 0.0, 1.0};
    for (int k = 0; k < na; k++) {
        const double *u = axes[k];
        double S = 0.0;
        for (int i = 0; i < 3; i++) S += ha[i] * fabs(dot(u, UA[i])) + hb[i] * fabs(dot(u, UB[i]));
        double ud = dot(u, delta);
        for (int s = 0; s < 2; s++) {
            double h = s ? S - ud : S + ud;
            if (h < depth) {
                depth = h;
                n[0] = s ? -u[0] : u[0]; n[1] = s ? -u[1] : u[1]; n[2] = s ? -u[2] : u[2];
            }
        }
    }
    depth = depth > 0.0 ? depth : 0.0;
    out[0] = -depth;
    out[1] = MC_CONTACT_NONE;

    /* the interference polyhedron: A's faces clipped by B's planes */
    double HA[6][4], HB[6][4], H[12][4];
    box_planes(ha, pa, Ra, HA);
    box_planes(hb, pb, Rb, HB);
    for (int i = 0; i < 6; i++)
        for (int c = 0; c < 4; c++) { H[i][c] = HA[i][c]; H[6 + i][c] = HB[i][c]; }
    /* interference()'s early exit: the vertices' bounding boxes overlap by less than 2 min_radius */
    double lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    for (int b = 0; b < 2; b++) {
        const double *half = b ? hb : ha, *p = b ? pb : pa, *R = b ? Rb : Ra;
        double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int c = 0; c < 8; c++) {
            double sg[3] = {c & 4 ? 1.0 : -1.0, c & 2 ? 1.0 : -1.0, c & 1 ? 1.0 : -1.0}, x[3];
            corner(half, p, R, sg, x);
            for (int r = 0; r < 3; r++) { if (x[r] < mn[r]) mn[r] = x[r]; if (x[r] > mx[r]) mx[r] = x[r]; }
        }
        for (int r = 0; r < 3; r++) { if (mn[r] > lo[r]) lo[r] = mn[r]; if (mx[r] < hi[r]) hi[r] = mx[r]; }
    }
    for (int r = 0; r < 3; r++)
        if (hi[r] - lo[r] < 2.0 * min_radius) return MC_CONTACT_NONE;

    Face F[MAXF];
    int nf = box_faces(ha, pa, Ra, (const double (*)[4])HA, F);
    for (int i = 0; i < 6 && nf > 0; i++) {
        nf = clip(F, nf, HB[i]);
        if (nf < 0) { out[1] = MC_CONTACT_REFERENCE; return MC_CONTACT_REFERENCE; }
    }
    if (nf < 4) return MC_CONTACT_NONE;
    /* volume, centroid and area by triangles fanned from an interior point */
    double x0[3] = {0.0, 0.0, 0.0};
    int nv = 0;
    for (int f = 0; f < nf; f++)
        for (int i = 0; i < F[f].n; i++) { x0[0] += F[f].v[i][0]; x0[1] += F[f].v[i][1]; x0[2] += F[f].v[i][2]; nv++; }
    x0[0] /= nv; x0[1] /= nv; x0[2] /= nv;
    double vol = 0.0, area = 0.0, cs[3] = {0.0, 0.0, 0.0};
    for (int f = 0; f < nf; f++)
        for (int i = 1; i + 1 < F[f].n; i++) {
            double T0[3], T1[3], T2[3], c[3], e1[3], e2[3], a[3];
            for (int r = 0; r < 3; r++) {
                T0[r] = F[f].v[0][r] - x0[r]; T1[r] = F[f].v[i][r] - x0[r]; T2[r] = F[f].v[i + 1][r] - x0[r];
                e1[r] = F[f].v[i][r] - F[f].v[0][r]; e2[r] = F[f].v[i + 1][r] - F[f].v[0][r];
            }
            cross(T1, T2, c);
            double vt = fabs(dot(T0, c)) / 6.0;
            vol += vt;
            for (int r = 0; r < 3; r++) cs[r] += vt * (T0[r] + T1[r] + T2[r]);
            cross(e1, e2, a);
            area += 0.5 * sqrt(dot(a, a));
        }
    if (!(vol > 0.0) || !isfinite(vol)) return MC_CONTACT_NONE;
    double point[3] = {x0[0] + cs[0] / (4.0 * vol), x0[1] + cs[1] / (4.0 * vol), x0[2] + cs[2] / (4.0 * vol)};
    /* interference()'s zero-volume decision: the Chebyshev radius against min_radius */
    double r_in = INFINITY;
    for (int k = 0; k < 12; k++) {
        double r = -(dot(H[k], point) + H[k][3]);
        if (r < r_in) r_in = r;
    }
    if (!(r_in >= min_radius)) {
        if (3.0 * vol / area < min_radius) return MC_CONTACT_NONE;
        out[1] = MC_CONTACT_REFERENCE;
        return MC_CONTACT_REFERENCE;
    }

    /* the dashpots over the footprint: the faces that face +n */
    double fn = E * vol, fd = 0.0, arm[3] = {0.0, 0.0, 0.0}, b9[9][2];
    int npts = 0;
    if (Bd > 0.0) {
        sub_points(b9);
        for (int f = 0; f < nf; f++) {
            if (!(dot(F[f].m, n) > 0.0)) continue;
            for (int i = 1; i + 1 < F[f].n; i++) {
                const double *P0 = F[f].v[0];
                double e1[3], e2[3], c[3];
                for (int r = 0; r < 3; r++) { e1[r] = F[f].v[i][r] - P0[r]; e2[r] = F[f].v[i + 1][r] - P0[r]; }
                cross(e1, e2, c);
                double w = fabs(0.5 * dot(c, n)) / 9.0;
                for (int q = 0; q < 9; q++) {
                    double x[3];
                    for (int r = 0; r < 3; r++) x[r] = P0[r] + b9[q][0] * e1[r] + b9[q][1] * e2[r];
                    /* the chord along n through x */
                    double up = INFINITY, down = -INFINITY;
                    for (int k = 0; k < 12; k++) {
                        double an = dot(H[k], n), rhs = -(dot(H[k], x) + H[k][3]);
                        if (an > 1e-12) { double s = rhs / an; if (s < up) up = s; }
                        else if (an < -1e-12) { double s = rhs / an; if (s > down) down = s; }
                    }
                    double d = up - down;
                    d = d > 0.0 ? d : 0.0;
                    if (!isfinite(d)) d = 0.0;
                    double ra[3], rb[3], ua[3], ub[3];
                    for (int r = 0; r < 3; r++) { ra[r] = x[r] - pa[r]; rb[r] = x[r] - pb[r]; }
                    cross(wa, ra, ua);
                    cross(wb, rb, ub);
                    double rel[3] = {(va[0] + ua[0]) - (vb[0] + ub[0]), (va[1] + ua[1]) - (vb[1] + ub[1]),
                                     (va[2] + ua[2]) - (vb[2] + ub[2])};
                    double spring = E * d, pd = Bd * dot(rel, n);
                    pd = pd > -spring ? pd : -spring;
                    pd = pd < spring ? pd : spring;
                    pd *= w;
                    fd += pd;
                    double lever[3];
                    cross(x, n, lever);
                    arm[0] += pd * lever[0]; arm[1] += pd * lever[1]; arm[2] += pd * lever[2];
                    npts++;
                }
            }
        }
    }
    if (npts) {
        double pan[3], pbn[3];
        cross(pa, n, pan);
        cross(pb, n, pbn);
        for (int r = 0; r < 3; r++) {
            out[10 + r] = -(arm[r] - fd * pan[r]);
            out[13 + r] = arm[r] - fd * pbn[r];
        }
        fn += fd;
        out[17] = 1.0;
    }
    out[1] = MC_CONTACT_LOADS;
    out[2] = point[0]; out[3] = point[1]; out[4] = point[2];
    out[5] = n[0]; out[6] = n[1]; out[7] = n[2];
    out[8] = fn > 0.0 ? fn : 0.0;
    out[9] = fd;
    out[16] = vol;
    return MC_CONTACT_LOADS;
}
