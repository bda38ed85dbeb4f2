/*
 * oscillator_model.h: the Oscillator model that the FMI 2.0 FMU (oscillator.c) and the FMI 1.0
 * FMU (oscillator_fmi1.c) share, so that both compute the same numbers.
 *
 * Model: mass-spring-damper driven by an external force
 *
 *     m * a = F - c * v - k * x,      x' = v,  v' = a
 *
 * integrated by classic RK4 with a fixed internal sub-step of at most MAX_SUBSTEP; the input F is
 * held constant over each communication step (zero-order hold).
 *
 * The including file defines before: Mode (with MODE_INSTANTIATED), Causality (CAUSALITY_PARAMETER,
 * CAUSALITY_INPUT, CAUSALITY_OUTPUT) and Variable (vr, name, causality, offset, min, min_exclusive),
 * NO_OFFSET and FIELD(name) = offsetof(ModelState, name). It is expanded into the FMU's one source
 * file by the build (tests/models/c_fmu/build.py), like fmi2_common.h.
 */
#ifndef OSCILLATOR_MODEL_H
#define OSCILLATOR_MODEL_H

/* largest internal RK4 step [s]: a communication step h is split into
 * n = ceil(h / MAX_SUBSTEP * (1 - SUBSTEP_SLACK)) equal sub-steps. The slack keeps a step that
 * arrives as 1 ms plus round-off of the master's time arithmetic (t_next - t, which is off by
 * some ulp of t) from being split in two; the sub-step is then at most
 * MAX_SUBSTEP / (1 - SUBSTEP_SLACK), i.e. 1 ms to within 1 ppm. */
#define MAX_SUBSTEP 1e-3

/* Everything that changes while the FMU runs. fmi2GetFMUstate copies exactly this struct. */
typedef struct {
    Mode mode;
    int stop_time_defined; /* fmi2Boolean / fmiBoolean value */
    double time;       /* [s] current communication point */
    double start_time; /* [s] */
    double stop_time;  /* [s] only if stop_time_defined */
    /* parameters */
    double m;  /* [kg] mass, > 0 */
    double k;  /* [N/m] spring stiffness, >= 0 */
    double c;  /* [N.s/m] damping coefficient, >= 0 */
    double x0; /* [m] initial position */
    double v0; /* [m/s] initial velocity */
    /* input */
    double F; /* [N] external force */
    /* continuous states */
    double x; /* [m] */
    double v; /* [m/s] */
} ModelState;

/* value references of the model (FMI 2.0 adds 0 for time) */
enum { VR_M = 1, VR_K = 2, VR_C = 3, VR_X0 = 4, VR_V0 = 5, VR_F = 100, VR_X = 200, VR_V = 201, VR_A = 202 };

/* the rows of the VARIABLES table for the model's variables */
#define OSCILLATOR_VARIABLES                                          \
    {VR_M, "m", CAUSALITY_PARAMETER, FIELD(m), 0.0, 1},               \
    {VR_K, "k", CAUSALITY_PARAMETER, FIELD(k), 0.0, 0},               \
    {VR_C, "c", CAUSALITY_PARAMETER, FIELD(c), 0.0, 0},               \
    {VR_X0, "x0", CAUSALITY_PARAMETER, FIELD(x0), -INFINITY, 0},      \
    {VR_V0, "v0", CAUSALITY_PARAMETER, FIELD(v0), -INFINITY, 0},      \
    {VR_F, "F", CAUSALITY_INPUT, FIELD(F), -INFINITY, 0},             \
    {VR_X, "x", CAUSALITY_OUTPUT, FIELD(x), -INFINITY, 0},            \
    {VR_V, "v", CAUSALITY_OUTPUT, FIELD(v), -INFINITY, 0},            \
    {VR_A, "a", CAUSALITY_OUTPUT, NO_OFFSET, -INFINITY, 0}

static void set_start_values(ModelState *s) {
    memset(s, 0, sizeof(*s));
    s->mode = MODE_INSTANTIATED;
    s->stop_time_defined = 0;
    s->time = 0.0;
    s->start_time = 0.0;
    s->stop_time = 0.0;
    s->m = 10.0;
    s->k = 1000.0;
    s->c = 5.0;
    s->x0 = 0.1;
    s->v0 = 0.0;
    s->F = 0.0;
    s->x = s->x0;
    s->v = s->v0;
}

/* acceleration a = (F - c v - k x) / m */
static double acceleration(const ModelState *s, double x, double v) {
    return (s->F - s->c * v - s->k * x) / s->m;
}

/* value of a variable that is not stored in ModelState */
static double computed_value(const ModelState *s, unsigned int vr) {
    switch (vr) {
    case VR_A:
        return acceleration(s, s->x, s->v);
    default:
        return NAN;
    }
}

/* until initialization is done the states follow their initial values */
static void apply_initial_values(ModelState *s) {
    s->x = s->x0;
    s->v = s->v0;
}

/* one classic RK4 step of length dt, F held */
static void rk4_step(ModelState *s, double dt) {
    const double x = s->x, v = s->v;
    const double k1x = v, k1v = acceleration(s, x, v);
    const double k2x = v + 0.5 * dt * k1v, k2v = acceleration(s, x + 0.5 * dt * k1x, v + 0.5 * dt * k1v);
    const double k3x = v + 0.5 * dt * k2v, k3v = acceleration(s, x + 0.5 * dt * k2x, v + 0.5 * dt * k2v);
    const double k4x = v + dt * k3v, k4v = acceleration(s, x + dt * k3x, v + dt * k3v);
    s->x = x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
    s->v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
}

/* the check after a step and what the error message says if it fails */
static int state_is_finite(const ModelState *s) {
    return isfinite(s->x) && isfinite(s->v);
}

static void describe_state(const ModelState *s, char *text, size_t size) {
    snprintf(text, size, "x = %g, v = %g", s->x, s->v);
}

#endif /* OSCILLATOR_MODEL_H */
