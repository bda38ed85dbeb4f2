/*
 * Oscillator: a stand-alone FMI 2.0 co-simulation FMU written in plain C.
 *
 * It plays the part of a "third-party" FMU in the marine-cosim tests: it is built from this one
 * file (with the files it includes from tests/models/c_fmu expanded into it) with gcc against the FMI 2.0
 * headers that FMPy ships, with no Python and no code from this project, so the co-simulation
 * master can be shown to run FMUs it did not build.
 *
 * Model: mass-spring-damper driven by an external force
 *
 *     m * a = F - c * v - k * x,      x' = v,  v' = a
 *
 * integrated by classic RK4 with a fixed internal sub-step of at most MAX_SUBSTEP; the input F is
 * held constant over each communication step (zero-order hold).
 *
 * Value references are part of the FMU's interface and must not change (see VARIABLES below and
 * modelDescription.xml). They are grouped so that variables can be added later without moving
 * the existing ones: 0 time, 1..99 parameters, 100..199 inputs, 200..299 outputs.
 *
 *     vr    name  causality  unit     start
 *     0     time  independent s
 *     1     m     parameter   kg      10
 *     2     k     parameter   N/m     1000
 *     3     c     parameter   N.s/m   5
 *     4     x0    parameter   m       0.1
 *     5     v0    parameter   m/s     0
 *     100   F     input       N       0
 *     200   x     output      m       (calculated: x0 at initialization)
 *     201   v     output      m/s     (calculated: v0 at initialization)
 *     202   a     output      m/s2    (calculated, direct feedthrough from F)
 *
 * How the file is organised: the model itself (ModelState, the equations, the parameter checks
 * of the variable table) is in oscillator_model.h, shared with the FMI 1.0 Oscillator
 * (oscillator_fmi1.c); the FMI 2.0 functions, which do not depend on the model, are in
 * fmi2_common.c, shared with the third-party ship (third_party_ship.c). This file holds what is
 * particular to the FMI 2.0 Oscillator: its variable table and the hooks fmi2_common.c calls.
 * The build expands the three includes, so the FMU ships (and compiles) one self-contained
 * sources/oscillator.c.
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */
#define MODEL_IDENTIFIER "Oscillator"
/* must equal the guid attribute in modelDescription.xml */
#define MODEL_GUID "{8c4e8ab0-1f5e-4c1d-9e2a-6f3b5d7a2c10}"

#include "fmi2_common.h"
#include "oscillator_model.h"

enum { VR_TIME = 0 };

static const Variable VARIABLES[] = {
    {VR_TIME, "time", CAUSALITY_INDEPENDENT, FIELD(time), -INFINITY, 0},
    OSCILLATOR_VARIABLES,
};
#define N_VARIABLES (sizeof(VARIABLES) / sizeof(VARIABLES[0]))

/* ---- the hooks of fmi2_common.c ---- */

static double model_max_substep(const ModelState *s) {
    (void)s;
    return MAX_SUBSTEP;
}

static void model_substep(ModelState *s, double t, double dt) {
    (void)t; /* autonomous apart from the held input */
    rk4_step(s, dt);
}

/* what an fmi2FMUstate is marked with */
#define FMU_STATE_MAGIC 0x4f534331u /* "OSC1" */

/* serialized form: 8-byte tag, mode and stop_time_defined as uint32, then the doubles of
 * ModelState in declaration order; native byte order (for the same binary only) */
static const char SERIAL_TAG[8] = {'O', 'S', 'C', 'S', 'T', 'v', '0', '1'};
#define N_SERIAL_DOUBLES 11
#define SERIAL_SIZE (sizeof(SERIAL_TAG) + 2 * sizeof(uint32_t) + N_SERIAL_DOUBLES * sizeof(double))

static void serial_doubles(ModelState *s, double *d[N_SERIAL_DOUBLES]) {
    d[0] = &s->time;
    d[1] = &s->start_time;
    d[2] = &s->stop_time;
    d[3] = &s->m;
    d[4] = &s->k;
    d[5] = &s->c;
    d[6] = &s->x0;
    d[7] = &s->v0;
    d[8] = &s->F;
    d[9] = &s->x;
    d[10] = &s->v;
}

static void serialize_state(const ModelState *state, char *p) {
    ModelState s = *state;
    double *d[N_SERIAL_DOUBLES];
    uint32_t header[2];
    size_t i;
    header[0] = (uint32_t)s.mode;
    header[1] = (uint32_t)s.stop_time_defined;
    memcpy(p, header, sizeof(header));
    p += sizeof(header);
    serial_doubles(&s, d);
    for (i = 0; i < N_SERIAL_DOUBLES; i++, p += sizeof(double)) memcpy(p, d[i], sizeof(double));
}

static const char *deserialize_state(const char *p, ModelState *s) {
    double *d[N_SERIAL_DOUBLES];
    uint32_t header[2];
    size_t i;
    memcpy(header, p, sizeof(header));
    p += sizeof(header);
    if (header[0] < MODE_INSTANTIATED || header[0] > MODE_ERROR || header[1] > 1) return "corrupt serialized state";
    memset(s, 0, sizeof(*s));
    s->mode = (Mode)header[0];
    s->stop_time_defined = (fmi2Boolean)header[1];
    serial_doubles(s, d);
    for (i = 0; i < N_SERIAL_DOUBLES; i++, p += sizeof(double)) memcpy(d[i], p, sizeof(double));
    return NULL;
}

/* the FMI 2.0 functions */
#include "fmi2_common.c"
