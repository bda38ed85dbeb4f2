/* 6-DOF rigid body (the payload): the derivative of the Newton-Euler equations at the CG with
 * quaternion attitude, and classic RK4 steps of them; the held loads from the inputs, and the
 * motion and acceleration outputs. The compiled kernel of components/rigid_body.py
 * (RigidBody._derivative, step, set_loads, motion_outputs and acceleration_outputs), which is the
 * reference: the same floating-point operations in the same order, so results agree to rounding
 * (the sums of the quaternion's norm may round differently); the loads and the outputs are
 * numpy's bits where the RigidBody's check at first use finds them so.
 *
 * SMS API report CR 2010-256 eq. 23, with diagonal added mass in the Kirchhoff form of Fossen
 * (2011), eqs. 6.43-6.45 and 6.51, about the CG in body axes:
 *   M nu_dot + [omega x p; omega x h + v x p] = tau,  [p; h] = M nu,  M = diag(m, m, m, I) + s diag(A)
 * with gravity, buoyancy at cb, attachment forces, a force and moment at the CG and diagonal
 * linear plus quadratic drag on the velocity relative to the water (components/rigid_body.py's
 * module docstring has the full statement).
 *
 * params (53): mass, m g, I (9), I^-1 dry (9), I^-1 wet (9), has_hydro, rho g V, cb - cg (3),
 *   added mass (6), linear drag (6), quadratic drag (6), splash height
 * loads (19): NED force at the CG without weight and buoyancy (3), NED moment (3), the attachment
 *   moment matrix C = sum_i a_i f_i^T (9), water velocity NED (3), water elevation
 * y (13): r_cg NED (3), q (4), v body (3), omega body (3)
 */
#include <float.h>
#include <math.h>

#include "kernels.h"

enum { P_M = 0, P_MG = 1, P_I = 2, P_IDRY = 11, P_IWET = 20, P_HYDRO = 29, P_BUOY = 30, P_CB = 31,
       P_ADDED = 34, P_DLIN = 40, P_DQUAD = 46, P_SPLASH = 52 };
enum { L_F = 0, L_M = 3, L_C = 6, L_VW = 15, L_ELEV = 18 };

static void inv3(const double *a, double *out) {
    double a00 = a[0], a01 = a[1], a02 = a[2], a10 = a[3], a11 = a[4], a12 = a[5], a20 = a[6], a21 = a[7],
           a22 = a[8];
    double c00 = a11 * a22 - a12 * a21;
    double c01 = a12 * a20 - a10 * a22;
    double c02 = a10 * a21 - a11 * a20;
    double det = a00 * c00 + a01 * c01 + a02 * c02;
    double k = 1.0 / det;
    out[0] = c00 * k;
    out[1] = (a02 * a21 - a01 * a22) * k;
    out[2] = (a01 * a12 - a02 * a11) * k;
    out[3] = c01 * k;
    out[4] = (a00 * a22 - a02 * a20) * k;
    out[5] = (a02 * a10 - a00 * a12) * k;
    out[6] = c02 * k;
    out[7] = (a01 * a20 - a00 * a21) * k;
    out[8] = (a00 * a11 - a01 * a10) * k;
}

static double smoothstep(double x) {
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    return x * x * (3.0 - 2.0 * x);
}

/* R(q) as rotations.quat_to_matrix forms it (the same operations; q need not be normalised). */
static void quat_matrix(double qw, double qx, double qy, double qz, double R[9]) {
    const double k = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz);
    const double kwx = k * qw * qx, kwy = k * qw * qy, kwz = k * qw * qz;
    const double xx = k * qx * qx, xy = k * qx * qy, xz = k * qx * qz;
    const double yy = k * qy * qy, yz = k * qy * qz, zz = k * qz * qz;
    R[0] = 1.0 - yy - zz, R[1] = xy - kwz, R[2] = xz + kwy;
    R[3] = xy + kwz, R[4] = 1.0 - xx - zz, R[5] = yz - kwx;
    R[6] = xz - kwy, R[7] = yz + kwx, R[8] = 1.0 - xx - yy;
}

void mc_rigid_body_derivative(const double *P, const double *L, const double *y, double *dy) {
    const double z = y[2], qw = y[3], qx = y[4], qy = y[5], qz = y[6];
    const double u = y[7], v = y[8], w = y[9], p = y[10], q = y[11], r = y[12];

    /* rotation body -> NED (rotations.quat_to_matrix) */
    double R[9];
    quat_matrix(qw, qx, qy, qz, R);
    const double r00 = R[0], r01 = R[1], r02 = R[2];
    const double r10 = R[3], r11 = R[4], r12 = R[5];
    const double r20 = R[6], r21 = R[7], r22 = R[8];

    /* submerged fraction: smoothstep of cb's depth in the splash zone */
    double s = 0.0;
    if (P[P_HYDRO] != 0.0) {
        const double *cb = P + P_CB, h = P[P_SPLASH];
        double depth = z + r20 * cb[0] + r21 * cb[1] + r22 * cb[2] + L[L_ELEV];
        s = smoothstep((depth + 0.5 * h) / h);
    }

    /* forces at the CG, body axes (weight minus buoyancy along e_z NED) */
    double fx = L[L_F], fy = L[L_F + 1], fz = L[L_F + 2];
    fz += P[P_MG] - s * P[P_BUOY];
    double Fx = r00 * fx + r10 * fy + r20 * fz;
    double Fy = r01 * fx + r11 * fy + r21 * fz;
    double Fz = r02 * fx + r12 * fy + r22 * fz;

    /* moments about the CG, body axes: R^T m_ned + eps_jkl (C R)_kl */
    const double mx = L[L_M], my = L[L_M + 1], mz = L[L_M + 2];
    const double *c = L + L_C;
    double Mx = (r00 * mx + r10 * my + r20 * mz
                 + (c[3] * r02 + c[4] * r12 + c[5] * r22) - (c[6] * r01 + c[7] * r11 + c[8] * r21));
    double My = (r01 * mx + r11 * my + r21 * mz
                 + (c[6] * r00 + c[7] * r10 + c[8] * r20) - (c[0] * r02 + c[1] * r12 + c[2] * r22));
    double Mz = (r02 * mx + r12 * my + r22 * mz
                 + (c[0] * r01 + c[1] * r11 + c[2] * r21) - (c[3] * r00 + c[4] * r10 + c[5] * r20));

    const double *I = P + P_I;
    double I00 = I[0], I01 = I[1], I02 = I[2], I10 = I[3], I11 = I[4], I12 = I[5], I20 = I[6], I21 = I[7],
           I22 = I[8];
    const double m = P[P_M];
    double mu, mv, mw, Jw[9];
    const double *Ji;
    if (s > 0.0) {
        /* buoyancy b = -s rho g V R^T e_z at cb: moment (cb - cg) x b */
        const double bs = -s * P[P_BUOY];
        const double bx = bs * r20, by = bs * r21, bz = bs * r22;
        const double ax = P[P_CB], ay = P[P_CB + 1], az = P[P_CB + 2];
        Mx += ay * bz - az * by;
        My += az * bx - ax * bz;
        Mz += ax * by - ay * bx;
        /* damping on the velocity relative to the water */
        const double cx = L[L_VW], cy = L[L_VW + 1], cz = L[L_VW + 2];
        const double ur = u - (r00 * cx + r10 * cy + r20 * cz);
        const double vr = v - (r01 * cx + r11 * cy + r21 * cz);
        const double wr = w - (r02 * cx + r12 * cy + r22 * cz);
        const double *dl = P + P_DLIN, *dq = P + P_DQUAD;
        Fx -= s * (dl[0] + dq[0] * fabs(ur)) * ur;
        Fy -= s * (dl[1] + dq[1] * fabs(vr)) * vr;
        Fz -= s * (dl[2] + dq[2] * fabs(wr)) * wr;
        Mx -= s * (dl[3] + dq[3] * fabs(p)) * p;
        My -= s * (dl[4] + dq[4] * fabs(q)) * q;
        Mz -= s * (dl[5] + dq[5] * fabs(r)) * r;
        /* M = diag(m, m, m, I) + s diag(A) */
        const double *a = P + P_ADDED;
        mu = m + s * a[0];
        mv = m + s * a[1];
        mw = m + s * a[2];
        I00 += s * a[3];
        I11 += s * a[4];
        I22 += s * a[5];
        if (s == 1.0) {
            Ji = P + P_IWET;
        } else {
            const double wet[9] = {I00, I01, I02, I10, I11, I12, I20, I21, I22};
            inv3(wet, Jw);
            Ji = Jw;
        }
    } else {
        mu = mv = mw = m;
        Ji = P + P_IDRY;
    }

    /* momenta and the Coriolis-centripetal terms (Kirchhoff form) */
    const double pu = mu * u, pv = mv * v, pw = mw * w;
    const double hx = I00 * p + I01 * q + I02 * r;
    const double hy = I10 * p + I11 * q + I12 * r;
    const double hz = I20 * p + I21 * q + I22 * r;
    Fx -= q * pw - r * pv;
    Fy -= r * pu - p * pw;
    Fz -= p * pv - q * pu;
    Mx -= q * hz - r * hy + v * pw - w * pv;
    My -= r * hx - p * hz + w * pu - u * pw;
    Mz -= p * hy - q * hx + u * pv - v * pu;

    dy[0] = r00 * u + r01 * v + r02 * w;
    dy[1] = r10 * u + r11 * v + r12 * w;
    dy[2] = r20 * u + r21 * v + r22 * w;
    dy[3] = -0.5 * (qx * p + qy * q + qz * r);
    dy[4] = 0.5 * (qw * p + qy * r - qz * q);
    dy[5] = 0.5 * (qw * q - qx * r + qz * p);
    dy[6] = 0.5 * (qw * r + qx * q - qy * p);
    dy[7] = Fx / mu;
    dy[8] = Fy / mv;
    dy[9] = Fz / mw;
    dy[10] = Ji[0] * Mx + Ji[1] * My + Ji[2] * Mz;
    dy[11] = Ji[3] * Mx + Ji[4] * My + Ji[5] * Mz;
    dy[12] = Ji[6] * Mx + Ji[7] * My + Ji[8] * Mz;
}

/* n classic RK4 sub-steps of length h on y (in place), the quaternion renormalised after each;
   k1, if not NULL, is the derivative at y (the first stage of the first sub-step). */
void mc_rigid_body_step(const double *P, const double *L, double *y, int n, double h, const double *k1) {
    double a[13], b[13], c[13], d[13], t[13];
    const double hh = 0.5 * h, h6 = h / 6.0;
    for (int s = 0; s < n; s++) {
        const double *k = a;
        if (s == 0 && k1)
            k = k1;
        else
            mc_rigid_body_derivative(P, L, y, a);
        for (int j = 0; j < 13; j++)
            t[j] = y[j] + hh * k[j];
        mc_rigid_body_derivative(P, L, t, b);
        for (int j = 0; j < 13; j++)
            t[j] = y[j] + hh * b[j];
        mc_rigid_body_derivative(P, L, t, c);
        for (int j = 0; j < 13; j++)
            t[j] = y[j] + h * c[j];
        mc_rigid_body_derivative(P, L, t, d);
        for (int j = 0; j < 13; j++)
            y[j] = y[j] + h6 * (k[j] + 2.0 * (b[j] + c[j]) + d[j]);
        const double norm = sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] + y[6] * y[6]);
        for (int j = 3; j < 7; j++)
            y[j] /= norm;
    }
}

/* The held loads L (19, the layout above) from the inputs of RigidBody.set_loads, the reference:
 *   f = sum_i f_i + f_cg,  m = m_cg,  C = sum_i a_i f_i^T = A^T F  (the attachment moment matrix),
 * v_water and the elevation as given. arms (n x 3): a_i - cg, body frame; in (3 n + 10): the forces
 * f_i NED (n x 3), f_cg (3), m_cg (3), v_water (3), the elevation. The sum is the reference's,
 * 0 + f_0 + f_1 + ... then + f_cg (numpy's sum over the rows); A^T F is formed as OpenBLAS's
 * Haswell-family dgemm forms numpy's arms.T @ f: per element a chain of fused multiply-adds over
 * i from +0 (the RigidBody checks once per process that this gives numpy's bits here). */
void mc_rigid_body_loads(const double *arms, int n, const double *in, double *L) {
    const double *f = in, *cf = in + 3 * n;
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int i = 0; i < n; i++) {
        fx = fx + f[3 * i];
        fy = fy + f[3 * i + 1];
        fz = fz + f[3 * i + 2];
    }
    L[L_F] = fx + cf[0];
    L[L_F + 1] = fy + cf[1];
    L[L_F + 2] = fz + cf[2];
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) {
            double c = 0.0;
            for (int i = 0; i < n; i++)
                c = fma(arms[3 * i + j], f[3 * i + k], c);
            L[L_C + 3 * j + k] = c;
        }
    for (int j = 0; j < 3; j++) {
        L[L_M + j] = cf[3 + j];
        L[L_VW + j] = cf[6 + j];
    }
    L[L_ELEV] = cf[9];
}

/* (R x)_i for a 3x3 row-major R, as OpenBLAS's Haswell-family dgemv forms numpy's R @ x (and
 * R.dot(x)): its three-element tail, fused, added to the zeroed y (ship.c's row_dot) */
static inline double row_dot(const double *a, const double *x) {
    return fma(a[2], x[2], fma(a[0], x[0], a[1] * x[1])) + 0.0;
}

static void rotate(const double *R, const double *x, double *out) {
    for (int i = 0; i < 3; i++)
        out[i] = row_dot(R + 3 * i, x);
}

/* math.hypot(x, y) of CPython 3.10-3.13 (Modules/mathmodule.c, vector_norm for two coordinates):
 * the squares summed exactly in double-length arithmetic, the square root corrected once by
 * Newton's step, so that the result is CPython's, not the C library's (which may differ in the
 * last bit). The products' low parts by fma: exact, as CPython's Dekker split is. The algorithm is
 * CPython's (Python Software Foundation License; R. Hettinger's vector_norm), written out here. */
static double py_hypot(double x, double y) {
    double vec[2] = {fabs(x), fabs(y)};
    double max = 0.0;     /* CPython's: a NaN is never the maximum, an infinity wins over it */
    for (int i = 0; i < 2; i++)
        if (vec[i] > max)
            max = vec[i];
    if (isinf(max))
        return max;
    if (isnan(vec[0]) || isnan(vec[1]))
        return NAN;
    if (max == 0.0)
        return max;
    int max_e;
    frexp(max, &max_e);
    if (max_e < -1023) {
        /* subnormals made normal first: ldexp(1.0, -max_e) would overflow */
        return DBL_MIN * py_hypot(vec[0] / DBL_MIN, vec[1] / DBL_MIN);
    }
    const double scale = ldexp(1.0, -max_e);
    double csum = 1.0, frac1 = 0.0, frac2 = 0.0;
    for (int i = 0; i < 2; i++) {
        const double v = vec[i] * scale;
        const double hi = v * v, lo = fma(v, v, -hi);
        const double s = csum + hi, slo = (csum - s) + hi;
        csum = s;
        frac1 += lo;
        frac2 += slo;
    }
    double h = sqrt(csum - 1.0 + (frac1 + frac2));
    const double hi = -h * h, lo = fma(-h, h, -hi);
    const double s = csum + hi, slo = (csum - s) + hi;
    csum = s;
    frac1 += lo;
    frac2 += slo;
    const double x2 = csum - 1.0 + (frac1 + frac2);
    h += x2 / (2.0 * h);
    return h / scale;
}

/* The motion outputs of RigidBody.motion_outputs (the reference), in its floating-point operations
 * and order: R = R(q) as rotations.quat_to_matrix, its products R x as numpy's (row_dot),
 *   origin  p = r_cg - R cg,                 v_p = R (v + omega x (-cg)),
 *   point i p_i = r_cg + R (a_i - cg),       v_i = R (v + omega x (a_i - cg)),
 * the zyx Euler angles as rotations.quat_to_euler_zyx (atan2 of the C library, as Python's math;
 * hypot as CPython's), r_cg, R v, R omega and omega (SMS API report CR 2010-256 eq. 17-23;
 * Fossen 2011 eq. 2.40-2.41). cg (3) body frame; arms (n x 3): a_i - cg; y (13): the state.
 * out (25 + 6 n): p (3), v_p (3), q (4), roll, pitch, yaw, r_cg (3), R v (3), R omega (3),
 * omega (3), then p_i (3) and v_i (3) for each point. */
void mc_rigid_body_motion(const double *cg, const double *arms, int n, const double *y, double *out) {
    const double qw = y[3], qx = y[4], qy = y[5], qz = y[6];
    const double vx = y[7], vy = y[8], vz = y[9], wx = y[10], wy = y[11], wz = y[12];
    double R[9];
    quat_matrix(qw, qx, qy, qz, R);
    double t[3], b[3];

    rotate(R, cg, t);
    for (int j = 0; j < 3; j++)
        out[j] = y[j] - t[j];
    const double mx = -cg[0], my = -cg[1], mz = -cg[2];
    b[0] = vx + (wy * mz - wz * my);
    b[1] = vy + (wz * mx - wx * mz);
    b[2] = vz + (wx * my - wy * mx);
    rotate(R, b, out + 3);
    for (int j = 0; j < 4; j++)
        out[6 + j] = y[3 + j];

    /* rotations.quat_to_euler_zyx: its own R entries, formed as it forms them */
    const double s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz);
    const double r11 = 1.0 - s * (qy * qy + qz * qz);
    const double r21 = s * (qx * qy + qw * qz);
    const double r31 = s * (qx * qz - qw * qy);
    const double r32 = s * (qy * qz + qw * qx);
    const double r33 = 1.0 - s * (qx * qx + qy * qy);
    out[10] = atan2(r32, r33);
    out[11] = atan2(-r31, py_hypot(r11, r21));
    out[12] = atan2(r21, r11);

    for (int j = 0; j < 3; j++)
        out[13 + j] = y[j];
    rotate(R, y + 7, out + 16);
    rotate(R, y + 10, out + 19);
    for (int j = 0; j < 3; j++)
        out[22 + j] = y[10 + j];

    for (int i = 0; i < n; i++) {
        const double *a = arms + 3 * i;
        double *o = out + 25 + 6 * i;
        rotate(R, a, t);
        for (int j = 0; j < 3; j++)
            o[j] = y[j] + t[j];
        b[0] = vx + (wy * a[2] - wz * a[1]);
        b[1] = vy + (wz * a[0] - wx * a[2]);
        b[2] = vz + (wx * a[1] - wy * a[0]);
        rotate(R, b, o + 3);
    }
}

/* The acceleration outputs of RigidBody.acceleration_outputs (the reference), in its floating-point
 * operations and order, from the rates d = dy/dt at y (mc_rigid_body_derivative's, under the held
 * loads L): with b = v' + omega x v (body axes),
 *   CG      a_cg = R b,                      angular  R omega',
 *   point i a_i = R (b + omega' x rho_i + omega x (omega x rho_i)),  rho_i = a_i - cg,
 * and the submerged fraction s (the derivative's smoothstep of cb's depth in the splash zone;
 * Fossen 2011 eq. 2.42; SMS API report CR 2010-256 eq. 23). out (7 + 3 n): a_cg (3), R omega' (3),
 * s, then a_i (3) for each point. */
void mc_rigid_body_accelerations(const double *P, const double *L, const double *arms, int n, const double *y,
                                 const double *d, double *out) {
    const double qw = y[3], qx = y[4], qy = y[5], qz = y[6];
    const double vx = y[7], vy = y[8], vz = y[9], wx = y[10], wy = y[11], wz = y[12];
    const double dwx = d[10], dwy = d[11], dwz = d[12];
    double R[9];
    quat_matrix(qw, qx, qy, qz, R);
    double b[3], t[3];
    b[0] = d[7] + (wy * vz - wz * vy);
    b[1] = d[8] + (wz * vx - wx * vz);
    b[2] = d[9] + (wx * vy - wy * vx);
    rotate(R, b, out);
    rotate(R, d + 10, out + 3);
    double s = 0.0;
    if (P[P_HYDRO] != 0.0) {
        const double *cb = P + P_CB, h = P[P_SPLASH];
        const double depth = y[2] + R[6] * cb[0] + R[7] * cb[1] + R[8] * cb[2] + L[L_ELEV];
        s = smoothstep((depth + 0.5 * h) / h);
    }
    out[6] = s;
    for (int i = 0; i < n; i++) {
        const double px = arms[3 * i], py = arms[3 * i + 1], pz = arms[3 * i + 2];
        const double cx = wy * pz - wz * py, cy = wz * px - wx * pz, cz = wx * py - wy * px;
        t[0] = b[0] + (dwy * pz - dwz * py) + (wy * cz - wz * cy);
        t[1] = b[1] + (dwz * px - dwx * pz) + (wz * cx - wx * cz);
        t[2] = b[2] + (dwx * py - dwy * px) + (wx * cy - wy * cx);
        rotate(R, t, out + 7 + 3 * i);
    }
}
