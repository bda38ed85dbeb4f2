/* Winch: drum, gear, motor, brake and controller (components/winch.py, the reference): all sub-steps
 * of Winch.step in one call, and Winch.present_drive. The same floating-point operations in the
 * same order as the Python (a * b * c is (a * b) * c), with libm's exp, pow and copysign as Python's
 * math.exp, ** and math.copysign call them, and Python's min/max written as the conditionals they
 * are: the same bits.
 *
 * Drum dynamics (components/winch.py's module docstring):
 *   J omega' = T r - tau_g - c omega - tau_b,   tau_g = n tau_m eta^s,
 *   s = -sign(tau_m) sat(omega / omega_s)  (a linear ramp of s within the efficiency band),
 * integrated by explicit Euler; the brake by Karnopp stick-slip; the drive's torque for exact
 * tracking of v_ref within |tau_m| <= tau_max and the power limit while motoring; the reference from
 * the mode: 0 velocity (acceleration limits [SMS]), 1 tension PID [SMS], 2 heave compensation
 * (v_ref = velocity reference - w [W15]), 3 brake.
 *
 * params (MC_WINCH_PARAMS): the WP_* below, J, the band and the radius's constants as Winch forms
 *   them (r0^2, d^2 and pi w_drum by Python's ** and *: the same numbers).
 * state (MC_WINCH_STATE): the WS_* below: the step (dt, Winch.substep), the inputs (mode, brake as
 *   0/1, speed and tension setpoints, line tension, hardpoint velocity), Winch's state (t, omega,
 *   paid_out, v_lim, integral, dfilt, v_ref, motor_torque, saturated and braking as 0/1),
 *   present_drive's answer (motor torque, reference speed, saturated as 0/1), and the kernel's own
 *   cache of 1 - exp(-h / tau_c) (whether set, its h, its value). One array, so that a call passes
 *   two pointers and nothing else (ctypes converts each argument, a double costs more than the sums).
 */
#include <math.h>

#include "kernels.h"

/* exp and pow of glibc's first symbol versions: glibc 2.29 added exp@GLIBC_2.29 and pow@GLIBC_2.29,
 * which a build links by default and which would raise the library's glibc floor from 2.17 (the
 * FMUs', tests/fmus/test_fmu_kernels.py) to 2.29. The old versions wrap the same functions and
 * differ only in the error handling of overflow, underflow and domain errors, where they return the
 * same values (inf, 0); Python's math.exp and ** were checked equal to them bit for bit over
 * millions of arguments (exp of [-800, 800], pow of (0.01, 10] to (-50, 50)). */
#if defined(__GLIBC__) && defined(__x86_64__)
__asm__(".symver exp,exp@GLIBC_2.2.5");
__asm__(".symver pow,pow@GLIBC_2.2.5");
#elif defined(__GLIBC__) && defined(__aarch64__)
__asm__(".symver exp,exp@GLIBC_2.17");
__asm__(".symver pow,pow@GLIBC_2.17");
#endif

enum { WP_R0 = 0, WP_FLAT, WP_R0SQ, WP_DSQ, WP_PIW, WP_SPOOLED, WP_J, WP_BAND, WP_N, WP_ETA, WP_TMAX, WP_PMAX,
       WP_C, WP_BRAKE, WP_ACC, WP_DEC, WP_VMAX, WP_KP, WP_KI, WP_KD, WP_TF, WP_TAUC, WP_COUNT };
enum { WS_DT = 0, WS_SUBSTEP, WS_MODE, WS_BRAKE, WS_SPEED_SP, WS_TENSION_SP, WS_TENSION, WS_HARDPOINT, WS_T,
       WS_OMEGA, WS_PAID, WS_VLIM, WS_INTEGRAL, WS_DFILT, WS_VREF, WS_TAU, WS_SAT, WS_BRAKING, WS_DRIVE_TAU,
       WS_DRIVE_VREF, WS_DRIVE_SAT, WS_DECAY_SET, WS_DECAY_H, WS_DECAY, WS_COUNT };

/* the layouts' sizes as kernels.h states them (a negative array size stops the build otherwise) */
typedef char mc_winch_layouts[(WP_COUNT == MC_WINCH_PARAMS && WS_COUNT == MC_WINCH_STATE) ? 1 : -1];

/* Winch.radius */
static double radius(const double *P, double paid_out) {
    if (P[WP_FLAT] != 0.0)
        return P[WP_R0];
    double spooled = P[WP_SPOOLED] - paid_out;
    if (0.0 > spooled)                                  /* max(spooled, 0.0) */
        spooled = 0.0;
    return sqrt(P[WP_R0SQ] + P[WP_DSQ] * spooled / P[WP_PIW]);
}

/* Winch._efficiency_factor */
static double efficiency_factor(const double *P, double tau_m, double omega) {
    const double band = P[WP_BAND], eta = P[WP_ETA];
    if (omega >= band || omega <= -band)
        return tau_m * omega < 0.0 ? eta : 1.0 / eta;
    const double s = tau_m < 0.0 ? omega / band : -omega / band;
    /* Python's float ** returns a NaN exponent itself */
    return isnan(s) ? s : pow(eta, s);
}

/* Winch._drive_torque: the motor torque (returned) and whether it saturates */
static double drive_torque(const double *P, double omega, double T, double r, double a_want, int *saturated) {
    const double n = P[WP_N], eta = P[WP_ETA], band = P[WP_BAND];
    const double need = T * r - P[WP_C] * omega - P[WP_J] * a_want / r;
    double tau_m;
    if (omega >= band || omega <= -band) {
        tau_m = need / (n * eta);
        if (!(tau_m * omega < 0.0))
            tau_m = need * eta / n;
    } else {
        tau_m = need / (n * efficiency_factor(P, need, omega));
    }
    double lim = P[WP_TMAX];
    if (tau_m * omega < 0.0) {
        const double power = P[WP_PMAX] / fabs(n * omega);
        if (power < lim)
            lim = power;
    }
    const double held = -lim > tau_m ? -lim : tau_m;
    *saturated = fabs(tau_m) > lim;
    return lim < held ? lim : held;
}

/* min(max(target, -vmax), vmax) as the Python writes it (conditionals: a NaN passes through). */
static double clamp_speed(double target, double vmax) {
    if (-vmax > target)
        target = -vmax;
    if (vmax < target)
        target = vmax;
    return target;
}

/* Winch._operator_reference */
static double operator_reference(const double *P, double *S, double h) {
    double target;
    if (S[WS_MODE] == 1.0) {
        const double e = S[WS_TENSION] - S[WS_TENSION_SP];
        const double tf = h > P[WP_TF] ? h : P[WP_TF];
        const double deriv = (e - S[WS_DFILT]) / tf;
        S[WS_DFILT] += h * deriv;
        S[WS_INTEGRAL] += h * e;
        target = P[WP_KP] * e + P[WP_KI] * S[WS_INTEGRAL] + P[WP_KD] * deriv;
    } else {
        target = S[WS_SPEED_SP];
    }
    target = clamp_speed(target, P[WP_VMAX]);
    const double v_lim = S[WS_VLIM];
    if (target > v_lim) {
        const double step = (v_lim >= 0.0 ? P[WP_ACC] : P[WP_DEC]) * h;
        const double up = v_lim + step;
        S[WS_VLIM] = target < up ? target : up;
    } else if (target < v_lim) {
        const double step = (v_lim > 0.0 ? P[WP_DEC] : P[WP_ACC]) * h;
        const double down = v_lim - step;
        S[WS_VLIM] = target > down ? target : down;
    }
    return S[WS_VLIM];
}

/* Winch._substep */
static void winch_substep(const double *P, double *S, double h) {
    const double J = P[WP_J], band = P[WP_BAND], n = P[WP_N], eta = P[WP_ETA];
    const double mode = S[WS_MODE];
    const double r = radius(P, S[WS_PAID]);
    double T = S[WS_TENSION];
    if (0.0 > T)
        T = 0.0;
    const int brake = S[WS_BRAKE] != 0.0 || mode == 3.0;
    const double v_prev_ref = S[WS_VREF];
    if (brake) {
        S[WS_VLIM] = r * S[WS_OMEGA];
        S[WS_DFILT] = S[WS_TENSION] - S[WS_TENSION_SP];
    }
    double v_ref, tau_m;
    if (mode == 3.0) {
        v_ref = 0.0;
        tau_m = 0.0;
    } else {
        v_ref = !brake ? operator_reference(P, S, h) : S[WS_VLIM];
        if (mode == 2.0)
            v_ref -= S[WS_HARDPOINT];
        const double a_ref = (v_ref - v_prev_ref) / h;
        if (S[WS_DECAY_SET] == 0.0 || S[WS_DECAY_H] != h) {
            S[WS_DECAY] = 1.0 - exp(-h / P[WP_TAUC]);
            S[WS_DECAY_H] = h;
            S[WS_DECAY_SET] = 1.0;
        }
        const double a_want = a_ref + (v_prev_ref - r * S[WS_OMEGA]) * S[WS_DECAY] / h;
        int saturated;
        tau_m = drive_torque(P, S[WS_OMEGA], T, r, a_want, &saturated);
        S[WS_SAT] = saturated ? 1.0 : 0.0;
        if (brake)
            tau_m = 0.0;
    }
    S[WS_VREF] = v_ref;
    const double omega = S[WS_OMEGA];
    double gear;
    if (omega >= band || omega <= -band)
        gear = n * tau_m * (tau_m * omega < 0.0 ? eta : 1.0 / eta);
    else
        gear = n * tau_m * efficiency_factor(P, tau_m, omega);
    const double drive = T * r - gear - P[WP_C] * omega;
    double omega_new;
    S[WS_BRAKING] = 0.0;
    if (brake && P[WP_BRAKE] > 0.0) {
        const double stop = drive + J * omega / h;
        S[WS_BRAKING] = 1.0;
        if (fabs(stop) <= P[WP_BRAKE])
            omega_new = 0.0;
        else
            omega_new = omega + h * (drive - copysign(P[WP_BRAKE], stop)) / J;
    } else {
        omega_new = omega + h * drive / J;
    }
    S[WS_TAU] = tau_m;
    S[WS_PAID] += 0.5 * h * r * (omega + omega_new);
    S[WS_OMEGA] = omega_new;
    S[WS_T] += h;
}

int mc_winch_step(const double *P, double *S) {
    /* n = max(1, int(math.ceil(dt / substep - 1e-9))); what C cannot count (NaN, infinite, beyond an
       int) goes back to the Python, which raises or loops as it always did */
    const double dt = S[WS_DT];
    const double x = dt / S[WS_SUBSTEP] - 1e-9;
    if (!(x < 2147483647.0))
        return -1;
    const int n = x <= 1.0 ? 1 : (int)ceil(x);
    const double h = dt / n;
    for (int i = 0; i < n; i++)
        winch_substep(P, S, h);
    return n;
}

void mc_winch_present_drive(const double *P, double *S) {
    double *out = S + WS_DRIVE_TAU;
    const double mode = S[WS_MODE], omega = S[WS_OMEGA], v_lim = S[WS_VLIM];
    const double r = radius(P, S[WS_PAID]);
    double T = S[WS_TENSION];
    if (0.0 > T)
        T = 0.0;
    const int brake = S[WS_BRAKE] != 0.0 || mode == 3.0;
    out[2] = 0.0;
    if (mode == 3.0) {
        out[0] = out[1] = 0.0;
        return;
    }
    if (brake) {
        out[0] = 0.0;
        out[1] = r * omega;
        return;
    }
    double target;
    if (mode == 1.0) {
        const double e = S[WS_TENSION] - S[WS_TENSION_SP];
        double deriv = 0.0;
        if (P[WP_KD] != 0.0) {
            const double tf = 1e-300 > P[WP_TF] ? 1e-300 : P[WP_TF];    /* max(derivative_filter, 1e-300) */
            deriv = (e - S[WS_DFILT]) / tf;
        }
        target = P[WP_KP] * e + P[WP_KI] * S[WS_INTEGRAL] + P[WP_KD] * deriv;
    } else {
        target = S[WS_SPEED_SP];
    }
    target = clamp_speed(target, P[WP_VMAX]);
    double a_ref = 0.0;
    if (target > v_lim)
        a_ref = v_lim >= 0.0 ? P[WP_ACC] : P[WP_DEC];
    else if (target < v_lim)
        a_ref = -(v_lim > 0.0 ? P[WP_DEC] : P[WP_ACC]);
    const double v_ref = v_lim - (mode == 2.0 ? S[WS_HARDPOINT] : 0.0);
    const double a_want = a_ref + (S[WS_VREF] - r * omega) / P[WP_TAUC];
    int saturated;
    out[0] = drive_torque(P, omega, T, r, a_want, &saturated);
    out[1] = v_ref;
    out[2] = saturated ? 1.0 : 0.0;
}
