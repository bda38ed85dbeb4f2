/* A serial crane on a moving base stepped with RK4: the compiled kernel of Crane.step in
 * components/crane.py, which is the reference (the same operations in the same order, the
 * articulated-body algorithm of aba.c for the joint accelerations; results agree to rounding).
 *
 * Per joint (sms_api_digest Sec. 2.4, eqs. 67-72, errata applied; components/crane.py):
 *   position control:  tau = kp (q_t - q) + ki z - kd qd,   z' = q_t - q
 *   velocity control:  tau = kp (qd_t - qd) + ki z,          z' = qd_t - qd
 *   torque control:    tau = setpoint;  passive: tau = 0
 *   limits |tau| <= torque_max, and |tau| <= power_max / |qd| while motoring (raw qd > 0; braking
 *   and standstill: torque_max alone, components/crane.py); z' = 0 while saturated
 *   end stops: q < lower: tau += -K (q - lower) - D qd; q > upper: tau += -K (q - upper) - D qd
 * The base moves at constant acceleration from its state at the step start (BaseMotion.at):
 *   w(s) = w0 + alpha s,  q(s) = normalise(dq (x) q0) with dq the rotation by s (w0 + w(s)) / 2,
 *   p(s) = p0 + v0 s + a s^2 / 2,  v(s) = v0 + a s.
 *
 * ctx: n, then the addresses of the ABA's model, its input buffer (link wrenches set; the base,
 * q, qd and tau are written here), a work buffer (mc_aba_work_size doubles), the crane array, and
 * the bound outputs' (0: none; write_outputs). The crane array:
 *   [0] sub-steps, [1] h, [2] 1 if k1 holds the first stage, [3] the step dt, [4..6] gravity,
 *   [7..25] base at the step start: p (3), quaternion (4), v, w, a, alpha (3 each),
 *   [26..38] out: the base at the step end: quaternion (4, from its rotation matrix, Shepperd's
 *   method as components/crane.py's _matrix_to_quat), p, v, w,
 *   [39] 1: mc_crane_step ends with mc_crane_evaluate at the step's end (the base at [7..25] taken
 *   on to it: the evaluation a Crane makes next for its outputs, in the same call),
 *   then per joint MC_CRANE_JOINT: mode (0 passive, 1 position, 2 velocity, 3 torque), kp, ki,
 *   kd (position control only, else 0), torque_max (inf: none), power_max (NaN: none), lower,
 *   upper (+-inf: none), stop stiffness, stop damping, lower and upper (0 where infinite), setpoint,
 *   integrating (1 in position and velocity control),
 *   then y = [q, qd, z] (3n, in place), k1 (3n), and (mc_crane_evaluate's outputs) the actuator
 *   torques (n, end stops excluded) and the integrators' rates z' (n), and the sub-step the end
 *   stops need (1), then the number m of points whose motion mc_crane_evaluate forms (1) and the
 *   points (MC_ABA_POINT each, mc_aba_points: link and r in, position, velocity and v_P out).
 * Sub-steps 0 (mc_crane_step): the kernel chooses them as Crane.step does, h holding the largest
 *   sub-step (the stability limit with the stops free applied) and the last entry the one with the
 *   stops engaged, taken where a joint is beyond a stop or reaches one within dt at its present
 *   rate; n = max(1, ceil(dt / h - 1e-9)), h = dt / n, both written back to [0] and [1].
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

enum { C_NSUB = 0, C_H = 1, C_K1 = 2, C_DT = 3, C_G = 4, C_BASE = 7, C_OUT = 26, C_EVAL = 39 };
enum { J_MODE = 0, J_KP, J_KI, J_KD, J_TMAX, J_PMAX, J_LO, J_HI, J_KS, J_DS, J_LO0, J_HI0, J_SP, J_INT };
/* the ABA input layout (aba.c) */
enum { IN_MOVING = 0, IN_R = 2, IN_P = 11, IN_V = 14, IN_W = 17, IN_A = 20, IN_AL = 23, IN_G = 26 };

static void quat_to_matrix(const double *q, double *R) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    const double s = 2.0 / (w * w + x * x + y * y + z * z);
    const double wx = s * w * x, wy = s * w * y, wz = s * w * z;
    const double xx = s * x * x, xy = s * x * y, xz = s * x * z;
    const double yy = s * y * y, yz = s * y * z, zz = s * z * z;
    R[0] = 1.0 - yy - zz; R[1] = xy - wz;       R[2] = xz + wy;
    R[3] = xy + wz;       R[4] = 1.0 - xx - zz; R[5] = yz - wx;
    R[6] = xz - wy;       R[7] = yz + wx;       R[8] = 1.0 - xx - yy;
}

static void normalise(double *q) {
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    q[0] /= n; q[1] /= n; q[2] /= n; q[3] /= n;
}

/* the base at s seconds after the step start (BaseMotion.at): R, p, v, w into the ABA's input */
static void base_at(const double *b, double s, double *in) {
    const double *p0 = b, *q0 = b + 3, *v0 = b + 7, *w0 = b + 10, *a = b + 13, *al = b + 16;
    double w[3], rot[3], q[4];
    const double hs = 0.5 * s;
    for (int k = 0; k < 3; k++) {
        w[k] = w0[k] + al[k] * s;
        rot[k] = hs * (w0[k] + w[k]);
    }
    const double angle = sqrt(rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]);
    if (angle > 0.0) {
        const double sh = sin(0.5 * angle);
        const double d[4] = {cos(0.5 * angle), sh * rot[0] / angle, sh * rot[1] / angle, sh * rot[2] / angle};
        /* dq (x) q0, the Hamilton product of components/rotations.py */
        q[0] = d[0] * q0[0] - d[1] * q0[1] - d[2] * q0[2] - d[3] * q0[3];
        q[1] = d[0] * q0[1] + d[1] * q0[0] + d[2] * q0[3] - d[3] * q0[2];
        q[2] = d[0] * q0[2] - d[1] * q0[3] + d[2] * q0[0] + d[3] * q0[1];
        q[3] = d[0] * q0[3] + d[1] * q0[2] - d[2] * q0[1] + d[3] * q0[0];
        normalise(q);
    } else {
        memcpy(q, q0, sizeof q);
    }
    quat_to_matrix(q, in + IN_R);
    for (int k = 0; k < 3; k++) {
        in[IN_P + k] = p0[k] + v0[k] * s + 0.5 * a[k] * s * s;
        in[IN_V + k] = v0[k] + a[k] * s;
        in[IN_W + k] = w[k];
    }
}

/* the joint torques and integrator rates at y (Crane._evaluate) into the ABA's input (base at t,
   q, qd, tau), with the actuator torques into act (if not NULL); z' into dy[2n..3n) */
static void joint_forces(int n, double *in, const double *cr, double t, const double *y, double *dy, double *act_out) {
    const double *J = cr + MC_CRANE_HEAD, *q = y, *qd = y + n, *z = y + 2 * n;
    double *qin = in + MC_ABA_IN_HEAD, *qdin = qin + n, *tau = qin + 2 * n;
    base_at(cr + C_BASE, t, in);
    for (int i = 0; i < n; i++) {
        const double *j = J + MC_CRANE_JOINT * i;
        const int mode = (int)j[J_MODE];
        const double err = j[J_SP] - (mode == 1 ? q[i] : qd[i]);
        /* kp (setpoint - (q or qd)) + ki z - kd qd, as the reference's array expression */
        double raw = j[J_KP] * err + j[J_KI] * z[i] - j[J_KD] * qd[i];
        if (mode == 3)
            raw = j[J_SP];
        /* the power limit binds while the drive delivers power (raw qd > 0, so qd != 0) */
        const double limit = raw * qd[i] > 0.0 ? fmin(j[J_TMAX], j[J_PMAX] / fabs(qd[i])) : j[J_TMAX];
        double act = raw < limit ? raw : limit;
        if (act < -limit)
            act = -limit;
        const int saturated = act != raw;
        double stop = 0.0;
        if (q[i] < j[J_LO])
            stop = -j[J_KS] * (q[i] - j[J_LO0]) - j[J_DS] * qd[i];
        else if (q[i] > j[J_HI])
            stop = -j[J_KS] * (q[i] - j[J_HI0]) - j[J_DS] * qd[i];
        tau[i] = act + stop;
        qin[i] = q[i];
        qdin[i] = qd[i];
        dy[2 * n + i] = (j[J_INT] != 0.0 && !saturated) ? err : 0.0;
        if (act_out)
            act_out[i] = act;
    }
}

/* dy = [qd, qdd, z'] at y, the base at t */
static void derivative(int n, const double *model, double *in, double *work, const double *cr, double t,
                       const double *y, double *dy) {
    joint_forces(n, in, cr, t, y, dy, NULL);
    memcpy(dy, y + n, n * sizeof(double));
    mc_aba_qdd(n, model, in, work);
    memcpy(dy + n, work, n * sizeof(double));
}

/* rotation matrix -> unit quaternion, Shepperd's method (components/crane.py, _matrix_to_quat) */
static void matrix_to_quat(const double *R, double *q) {
    const double t = R[0] + R[4] + R[8];
    double s;
    if (t > 0) {
        s = sqrt(t + 1.0) * 2;
        q[0] = 0.25 * s; q[1] = (R[7] - R[5]) / s; q[2] = (R[2] - R[6]) / s; q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        s = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s; q[1] = 0.25 * s; q[2] = (R[1] + R[3]) / s; q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        s = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s; q[1] = (R[1] + R[3]) / s; q[2] = 0.25 * s; q[3] = (R[5] + R[7]) / s;
    } else {
        s = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s; q[1] = (R[2] + R[6]) / s; q[2] = (R[5] + R[7]) / s; q[3] = 0.25 * s;
    }
    normalise(q);
}

/* The outputs an adapter shows of an evaluation, written where it keeps them (fmus/crane.py):
 * outs = m (the attachments), then the addresses of the base's articulated inertia blocks in NED
 * axes (linear: 0,0 1,1 2,2 0,1 0,2 1,2 of I_A[:3, :3]; coupling: I_A[:3, 3:] row-major; angular:
 * the same entries of I_A[3:, 3:]), the bias force and moment, then per attachment its position and
 * velocity (the points' first m). */
static void write_outputs(const long long *outs, const double *work, int n, const double *points) {
    static const int linear[6] = {0, 7, 14, 1, 2, 8}, coupling[9] = {3, 4, 5, 9, 10, 11, 15, 16, 17},
                     angular[6] = {21, 28, 35, 22, 23, 29};
    const double *IA = mc_aba_base_inertia(n, work), *bias = IA + 36;
    double *il = (double *)(intptr_t)outs[1], *ic = (double *)(intptr_t)outs[2], *ia = (double *)(intptr_t)outs[3];
    double *bf = (double *)(intptr_t)outs[4], *bm = (double *)(intptr_t)outs[5];
    for (int k = 0; k < 6; k++) {
        il[k] = IA[linear[k]];
        ia[k] = IA[angular[k]];
    }
    for (int k = 0; k < 9; k++)
        ic[k] = IA[coupling[k]];
    memcpy(bf, bias, 3 * sizeof(double));
    memcpy(bm, bias + 3, 3 * sizeof(double));
    for (int j = 0; j < (int)outs[0]; j++) {
        memcpy((double *)(intptr_t)outs[6 + 2 * j], points + MC_ABA_POINT * j + 4, 3 * sizeof(double));
        memcpy((double *)(intptr_t)outs[7 + 2 * j], points + MC_ABA_POINT * j + 7, 3 * sizeof(double));
    }
}

/* Crane._evaluate at the step start: the whole articulated-body algorithm with its outputs into
   work (as mc_aba), the actuator torques and z' into the crane array (after k1), and the motion
   of its points (the attachments an adapter shows) there too. */
int mc_crane_evaluate(const long long *ctx) {
    const int n = (int)ctx[0];
    double *in = (double *)(intptr_t)ctx[2], *cr = (double *)(intptr_t)ctx[4];
    if (n < 1 || n > MC_ABA_MAX_LINKS)
        return -1;
    const double *y = cr + MC_CRANE_HEAD + MC_CRANE_JOINT * n;
    double *act = cr + MC_CRANE_HEAD + MC_CRANE_JOINT * n + 6 * n, dy[3 * MC_ABA_MAX_LINKS];
    in[IN_MOVING] = 1.0;
    for (int k = 0; k < 3; k++) {
        in[IN_G + k] = cr[C_G + k];
        in[IN_A + k] = cr[C_BASE + 13 + k];
        in[IN_AL + k] = cr[C_BASE + 16 + k];
    }
    joint_forces(n, in, cr, 0.0, y, dy, act);
    memcpy(act + n, dy + 2 * n, n * sizeof(double));
    const int code = mc_aba(ctx);
    double *points = act + 2 * n + 1;
    if (code == 0 && points[0] > 0.0)
        mc_aba_points(n, (const double *)(intptr_t)ctx[3], points + 1, (int)points[0]);
    if (code == 0 && ctx[5])
        write_outputs((const long long *)(intptr_t)ctx[5], (const double *)(intptr_t)ctx[3], n, points + 1);
    return code;
}

/* a joint is beyond an end stop, or gets there within dt at its present rate (Crane._at_a_stop):
   q + min(qd dt, 0) < lower or q + max(qd dt, 0) > upper, with Python's min and max (the first
   argument unless the second is smaller, or larger; NaN compares false either way) */
static int at_a_stop(int n, const double *cr, const double *y, double dt) {
    const double *J = cr + MC_CRANE_HEAD;
    for (int i = 0; i < n; i++) {
        const double x = y[n + i] * dt;
        const double down = 0.0 < x ? 0.0 : x, up = 0.0 > x ? 0.0 : x;
        if (y[i] + down < J[MC_CRANE_JOINT * i + J_LO] || y[i] + up > J[MC_CRANE_JOINT * i + J_HI])
            return 1;
    }
    return 0;
}

int mc_crane_step(const long long *ctx) {
    const int n = (int)ctx[0];
    const double *model = (const double *)(intptr_t)ctx[1];
    double *in = (double *)(intptr_t)ctx[2], *work = (double *)(intptr_t)ctx[3], *cr = (double *)(intptr_t)ctx[4];
    if (n < 1 || n > MC_ABA_MAX_LINKS)
        return -1;
    const int m = 3 * n;
    double *y = cr + MC_CRANE_HEAD + MC_CRANE_JOINT * n;
    int nsub = (int)cr[C_NSUB];
    double h = cr[C_H];
    if (nsub <= 0) {                 /* Crane.step's choice of the sub-steps (header) */
        const double dt = cr[C_DT], stops = y[8 * n];
        if (h > stops && at_a_stop(n, cr, y, dt))
            h = stops;
        const double count = ceil(dt / h - 1e-9);
        if (!(count < 1e9))          /* NaN (Python's math.ceil refuses it) or beyond any bound */
            return -2;
        nsub = count < 1.0 ? 1 : (int)count;
        h = dt / nsub;
        cr[C_NSUB] = nsub;
        cr[C_H] = h;
    }
    const double *k1 = y + m;
    double K1[3 * MC_ABA_MAX_LINKS], K2[3 * MC_ABA_MAX_LINKS], K3[3 * MC_ABA_MAX_LINKS], K4[3 * MC_ABA_MAX_LINKS],
           T[3 * MC_ABA_MAX_LINKS];
    in[IN_MOVING] = 1.0;
    for (int k = 0; k < 3; k++) {
        in[IN_G + k] = cr[C_G + k];
        in[IN_A + k] = cr[C_BASE + 13 + k];
        in[IN_AL + k] = cr[C_BASE + 16 + k];
    }
    double s = 0.0;
    for (int sub = 0; sub < nsub; sub++) {
        const double *k = K1;
        if (sub == 0 && cr[C_K1] != 0.0)
            k = k1;
        else
            derivative(n, model, in, work, cr, s, y, K1);
        for (int j = 0; j < m; j++)
            T[j] = y[j] + h / 2 * k[j];
        derivative(n, model, in, work, cr, s + h / 2, T, K2);
        for (int j = 0; j < m; j++)
            T[j] = y[j] + h / 2 * K2[j];
        derivative(n, model, in, work, cr, s + h / 2, T, K3);
        for (int j = 0; j < m; j++)
            T[j] = y[j] + h * K3[j];
        derivative(n, model, in, work, cr, s + h, T, K4);
        for (int j = 0; j < m; j++)
            y[j] = y[j] + h / 6 * (k[j] + 2 * K2[j] + 2 * K3[j] + K4[j]);
        s += h;
    }
    /* the base at the step end */
    base_at(cr + C_BASE, cr[C_DT], in);
    matrix_to_quat(in + IN_R, cr + C_OUT);
    for (int k = 0; k < 3; k++) {
        cr[C_OUT + 4 + k] = in[IN_P + k];
        cr[C_OUT + 7 + k] = in[IN_V + k];
        cr[C_OUT + 10 + k] = in[IN_W + k];
    }
    if (cr[C_EVAL] == 0.0)
        return 0;
    /* the base at the step's end as the Crane keeps it (BaseMotion(p, quaternion, v, w, a, alpha)),
       then the evaluation at s = 0 from there, as a separate mc_crane_evaluate would make it */
    memcpy(cr + C_BASE, cr + C_OUT + 4, 3 * sizeof(double));
    memcpy(cr + C_BASE + 3, cr + C_OUT, 4 * sizeof(double));
    memcpy(cr + C_BASE + 7, cr + C_OUT + 7, 6 * sizeof(double));
    return mc_crane_evaluate(ctx);
}
