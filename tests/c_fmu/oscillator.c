/*
 * Oscillator: a stand-alone FMI 2.0 co-simulation FMU written in plain C.
 *
 * It plays the part of a "third-party" FMU in the marine-cosim tests: it is built from this one
 * file with gcc against the FMI 2.0 headers that FMPy ships, with no Python and no code from
 * this project, so the co-simulation master can be shown to run FMUs it did not build.
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
 * How the file is organised, so that it can be reused for another model:
 *   1. the model: ModelState, the variable table, the equations and the parameter checks;
 *   2. the FMI plumbing (instances, logging, state machine, FMU state) which does not depend on
 *      the model beyond ModelState and the variable table;
 *   3. the FMI 2.0 functions, all exported; those for capabilities the FMU does not declare
 *      return fmi2Error with a log message.
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#define MODEL_IDENTIFIER "Oscillator"
/* must equal the guid attribute in modelDescription.xml */
#define MODEL_GUID "{8c4e8ab0-1f5e-4c1d-9e2a-6f3b5d7a2c10}"

/* ========================================================================================== */
/* 1. The model                                                                               */
/* ========================================================================================== */

/* largest internal RK4 step [s]: a communication step h is split into
 * n = ceil(h / MAX_SUBSTEP * (1 - SUBSTEP_SLACK)) equal sub-steps. The slack keeps a step that
 * arrives as 1 ms plus round-off of the master's time arithmetic (t_next - t, which is off by
 * some ulp of t) from being split in two; the sub-step is then at most
 * MAX_SUBSTEP / (1 - SUBSTEP_SLACK), i.e. 1 ms to within 1 ppm. */
#define MAX_SUBSTEP 1e-3
#define SUBSTEP_SLACK 1e-6
/* refuse communication steps that would need more sub-steps than this (a master bug, not a
 * long simulation: 1e8 sub-steps are 1e5 s of simulated time in one step) */
#define MAX_SUBSTEPS_PER_STEP 100000000.0

typedef enum {
    MODE_INSTANTIATED = 1,
    MODE_INITIALIZATION = 2,
    MODE_STEP_COMPLETE = 3,
    MODE_TERMINATED = 4,
    MODE_ERROR = 5
} Mode;

/* Everything that changes while the FMU runs. fmi2GetFMUstate copies exactly this struct. */
typedef struct {
    Mode mode;
    fmi2Boolean stop_time_defined;
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

enum {
    VR_TIME = 0,
    VR_M = 1,
    VR_K = 2,
    VR_C = 3,
    VR_X0 = 4,
    VR_V0 = 5,
    VR_F = 100,
    VR_X = 200,
    VR_V = 201,
    VR_A = 202
};

typedef enum { CAUSALITY_INDEPENDENT, CAUSALITY_PARAMETER, CAUSALITY_INPUT, CAUSALITY_OUTPUT } Causality;

typedef struct {
    fmi2ValueReference vr;
    const char *name;
    Causality causality; /* parameters are all variability="fixed" */
    size_t offset;       /* where the value lives in ModelState; NO_OFFSET if computed */
    double min;          /* smallest legal value (parameters and inputs) */
    int min_exclusive;   /* the value must be strictly greater than min */
} Variable;

#define NO_OFFSET ((size_t)-1)
#define FIELD(name) offsetof(ModelState, name)

static const Variable VARIABLES[] = {
    {VR_TIME, "time", CAUSALITY_INDEPENDENT, FIELD(time), -INFINITY, 0},
    {VR_M, "m", CAUSALITY_PARAMETER, FIELD(m), 0.0, 1},
    {VR_K, "k", CAUSALITY_PARAMETER, FIELD(k), 0.0, 0},
    {VR_C, "c", CAUSALITY_PARAMETER, FIELD(c), 0.0, 0},
    {VR_X0, "x0", CAUSALITY_PARAMETER, FIELD(x0), -INFINITY, 0},
    {VR_V0, "v0", CAUSALITY_PARAMETER, FIELD(v0), -INFINITY, 0},
    {VR_F, "F", CAUSALITY_INPUT, FIELD(F), -INFINITY, 0},
    {VR_X, "x", CAUSALITY_OUTPUT, FIELD(x), -INFINITY, 0},
    {VR_V, "v", CAUSALITY_OUTPUT, FIELD(v), -INFINITY, 0},
    {VR_A, "a", CAUSALITY_OUTPUT, NO_OFFSET, -INFINITY, 0},
};
#define N_VARIABLES (sizeof(VARIABLES) / sizeof(VARIABLES[0]))

static void set_start_values(ModelState *s) {
    memset(s, 0, sizeof(*s));
    s->mode = MODE_INSTANTIATED;
    s->stop_time_defined = fmi2False;
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
static double computed_value(const ModelState *s, fmi2ValueReference vr) {
    switch (vr) {
    case VR_A:
        return acceleration(s, s->x, s->v);
    default:
        return NAN;
    }
}

/* before the first step the states follow their initial values */
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

/* ========================================================================================== */
/* 2. FMI plumbing                                                                            */
/* ========================================================================================== */

typedef struct {
    char *instance_name;
    fmi2CallbackFunctions functions; /* a copy: the master's struct need not outlive the call */
    fmi2Boolean logging_on;
    fmi2Boolean log_calls; /* category "logCalls" */
    ModelState s;
} Instance;

/* what an fmi2FMUstate points to */
#define FMU_STATE_MAGIC 0x4f534331u /* "OSC1" */
typedef struct {
    uint32_t magic;
    ModelState s;
} FmuState;

/* serialized form: 8-byte tag, mode and stop_time_defined as uint32, then the doubles of
 * ModelState in declaration order; native byte order (for the same binary only) */
static const char SERIAL_TAG[8] = {'O', 'S', 'C', 'S', 'T', 'v', '0', '1'};
#define N_SERIAL_DOUBLES 11
#define SERIAL_SIZE (sizeof(SERIAL_TAG) + 2 * sizeof(uint32_t) + N_SERIAL_DOUBLES * sizeof(double))

static const char *mode_name(Mode mode) {
    switch (mode) {
    case MODE_INSTANTIATED: return "instantiated";
    case MODE_INITIALIZATION: return "initialization mode";
    case MODE_STEP_COMPLETE: return "step complete";
    case MODE_TERMINATED: return "terminated";
    case MODE_ERROR: return "error";
    }
    return "unknown";
}

static void *allocate(const fmi2CallbackFunctions *f, size_t n, size_t size) {
    return f->allocateMemory ? f->allocateMemory(n, size) : calloc(n, size);
}

static void release(const fmi2CallbackFunctions *f, void *p) {
    if (!p) return;
    if (f->freeMemory) f->freeMemory(p);
    else free(p);
}

/* The logger's message is a printf format: format here, then double any '%' so that it is
 * passed through literally by loggers that do format. */
static void vlog_message(const fmi2CallbackFunctions *f, fmi2String instance_name, fmi2Status status,
                         const char *category, const char *fmt, va_list args) {
    char text[1024], escaped[2048];
    size_t i, j = 0;
    if (!f || !f->logger) return;
    vsnprintf(text, sizeof(text), fmt, args);
    for (i = 0; text[i] && j + 2 < sizeof(escaped); i++) {
        if (text[i] == '%') escaped[j++] = '%';
        escaped[j++] = text[i];
    }
    escaped[j] = '\0';
    f->logger(f->componentEnvironment, instance_name ? instance_name : "", status, category, escaped);
}

static void log_with(const fmi2CallbackFunctions *f, fmi2String instance_name, fmi2Status status,
                     const char *category, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vlog_message(f, instance_name, status, category, fmt, args);
    va_end(args);
}

/* Log an error (errors are always reported), put the instance into the error state and return
 * fmi2Error. Recovery is possible with fmi2SetFMUstate or fmi2Reset. */
static fmi2Status fail(Instance *inst, const char *function, const char *fmt, ...) {
    char text[900];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    log_with(&inst->functions, inst->instance_name, fmi2Error, "logStatusError", "%s: %s", function, text);
    inst->s.mode = MODE_ERROR;
    return fmi2Error;
}

static void log_call(Instance *inst, const char *fmt, ...) {
    va_list args;
    if (!inst->logging_on || !inst->log_calls) return;
    va_start(args, fmt);
    vlog_message(&inst->functions, inst->instance_name, fmi2OK, "logCalls", fmt, args);
    va_end(args);
}

/* The component argument of every function goes through here; NULL cannot be logged. */
#define GET_INSTANCE(c, function)                       \
    Instance *inst = (Instance *)(c);                   \
    if (!inst) return fmi2Error;                        \
    log_call(inst, "%s", function)

static fmi2Status require_mode(Instance *inst, const char *function, unsigned allowed) {
    if (allowed & (1u << inst->s.mode)) return fmi2OK;
    return fail(inst, function, "not allowed in state '%s'", mode_name(inst->s.mode));
}
#define IN(mode) (1u << (mode))
/* states in which values may be read / written (FMI 2.0 co-simulation state machine) */
#define GETTABLE (IN(MODE_INITIALIZATION) | IN(MODE_STEP_COMPLETE) | IN(MODE_TERMINATED) | IN(MODE_ERROR))
#define SETTABLE (IN(MODE_INSTANTIATED) | IN(MODE_INITIALIZATION) | IN(MODE_STEP_COMPLETE))

static const Variable *find_variable(fmi2ValueReference vr) {
    size_t i;
    for (i = 0; i < N_VARIABLES; i++)
        if (VARIABLES[i].vr == vr) return &VARIABLES[i];
    return NULL;
}

static double *field(ModelState *s, const Variable *var) {
    return (double *)((char *)s + var->offset);
}

/* time tolerance for comparing communication points */
static double time_tolerance(double t) {
    return 1e-9 * (1.0 + fabs(t));
}

static fmi2Status unsupported(fmi2Component c, const char *function, const char *why) {
    GET_INSTANCE(c, function);
    return fail(inst, function, "not supported (%s)", why);
}

/* ========================================================================================== */
/* 3. FMI 2.0 functions                                                                       */
/* ========================================================================================== */

/* ---- inquiry, logging, instances ---- */

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }

const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
    size_t i;
    fmi2Boolean log_calls = fmi2False;
    GET_INSTANCE(c, "fmi2SetDebugLogging");
    if (nCategories > 0 && !categories) return fail(inst, "fmi2SetDebugLogging", "categories is NULL");
    for (i = 0; i < nCategories; i++) {
        if (!categories[i]) return fail(inst, "fmi2SetDebugLogging", "category %u is NULL", (unsigned)i);
        if (strcmp(categories[i], "logCalls") == 0) log_calls = fmi2True;
        else if (strcmp(categories[i], "logStatusError") != 0)
            return fail(inst, "fmi2SetDebugLogging", "unknown log category '%s'", categories[i]);
    }
    inst->logging_on = loggingOn ? fmi2True : fmi2False;
    /* no categories given: all of them */
    inst->log_calls = nCategories == 0 ? fmi2True : log_calls;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    Instance *inst;
    size_t len;
    (void)fmuResourceLocation; /* the FMU has no resources */
    (void)visible;
    if (!functions) return NULL;
    if (!instanceName || !instanceName[0]) {
        log_with(functions, "", fmi2Error, "logStatusError", "fmi2Instantiate: missing instance name");
        return NULL;
    }
    if (fmuType != fmi2CoSimulation) {
        log_with(functions, instanceName, fmi2Error, "logStatusError",
                 "fmi2Instantiate: %s supports co-simulation only", MODEL_IDENTIFIER);
        return NULL;
    }
    if (!fmuGUID || strcmp(fmuGUID, MODEL_GUID) != 0) {
        log_with(functions, instanceName, fmi2Error, "logStatusError",
                 "fmi2Instantiate: wrong GUID '%s', expected '%s'", fmuGUID ? fmuGUID : "(null)", MODEL_GUID);
        return NULL;
    }
    inst = (Instance *)allocate(functions, 1, sizeof(Instance));
    if (!inst) {
        log_with(functions, instanceName, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        return NULL;
    }
    memset(inst, 0, sizeof(*inst));
    inst->functions = *functions;
    len = strlen(instanceName);
    inst->instance_name = (char *)allocate(functions, len + 1, 1);
    if (!inst->instance_name) {
        log_with(functions, instanceName, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        release(functions, inst);
        return NULL;
    }
    memcpy(inst->instance_name, instanceName, len + 1);
    inst->logging_on = loggingOn ? fmi2True : fmi2False;
    inst->log_calls = fmi2True;
    set_start_values(&inst->s);
    log_call(inst, "fmi2Instantiate");
    return inst;
}

void fmi2FreeInstance(fmi2Component c) {
    Instance *inst = (Instance *)c;
    fmi2CallbackFunctions f;
    if (!inst) return;
    log_call(inst, "fmi2FreeInstance");
    f = inst->functions;
    release(&f, inst->instance_name);
    release(&f, inst);
}

/* ---- initialization, termination, reset ---- */

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    const char *fn = "fmi2SetupExperiment";
    GET_INSTANCE(c, fn);
    (void)toleranceDefined; /* fixed-step integrator: the tolerance is not used */
    (void)tolerance;
    if (require_mode(inst, fn, IN(MODE_INSTANTIATED)) != fmi2OK) return fmi2Error;
    if (!isfinite(startTime)) return fail(inst, fn, "startTime is not finite");
    if (stopTimeDefined && !(stopTime >= startTime))
        return fail(inst, fn, "stopTime (%.17g) is before startTime (%.17g)", stopTime, startTime);
    inst->s.start_time = startTime;
    inst->s.time = startTime;
    inst->s.stop_time_defined = stopTimeDefined ? fmi2True : fmi2False;
    inst->s.stop_time = stopTimeDefined ? stopTime : 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    const char *fn = "fmi2EnterInitializationMode";
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_INSTANTIATED)) != fmi2OK) return fmi2Error;
    apply_initial_values(&inst->s);
    inst->s.mode = MODE_INITIALIZATION;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    const char *fn = "fmi2ExitInitializationMode";
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_INITIALIZATION)) != fmi2OK) return fmi2Error;
    apply_initial_values(&inst->s);
    inst->s.time = inst->s.start_time;
    inst->s.mode = MODE_STEP_COMPLETE;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
    const char *fn = "fmi2Terminate";
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_STEP_COMPLETE)) != fmi2OK) return fmi2Error;
    inst->s.mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
    GET_INSTANCE(c, "fmi2Reset");
    set_start_values(&inst->s);
    return fmi2OK;
}

/* ---- getting and setting values ---- */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    const char *fn = "fmi2GetReal";
    size_t i;
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, GETTABLE) != fmi2OK) return fmi2Error;
    if (nvr > 0 && (!vr || !value)) return fail(inst, fn, "vr or value is NULL");
    for (i = 0; i < nvr; i++) {
        const Variable *var = find_variable(vr[i]);
        if (!var) return fail(inst, fn, "unknown value reference %u", (unsigned)vr[i]);
        value[i] = var->offset == NO_OFFSET ? computed_value(&inst->s, var->vr) : *field(&inst->s, var);
    }
    return fmi2OK;
}

/* checks all values first, so a refused call changes nothing */
fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[]) {
    const char *fn = "fmi2SetReal";
    size_t i;
    Mode mode;
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, SETTABLE) != fmi2OK) return fmi2Error;
    mode = inst->s.mode;
    if (nvr > 0 && (!vr || !value)) return fail(inst, fn, "vr or value is NULL");
    for (i = 0; i < nvr; i++) {
        const Variable *var = find_variable(vr[i]);
        const double x = value[i];
        if (!var) return fail(inst, fn, "unknown value reference %u", (unsigned)vr[i]);
        if (var->causality != CAUSALITY_PARAMETER && var->causality != CAUSALITY_INPUT)
            return fail(inst, fn, "variable '%s' (vr %u) cannot be set", var->name, (unsigned)var->vr);
        if (var->causality == CAUSALITY_PARAMETER && mode == MODE_STEP_COMPLETE)
            return fail(inst, fn, "parameter '%s' (vr %u) is fixed and cannot be set after initialization",
                        var->name, (unsigned)var->vr);
        if (isnan(x)) return fail(inst, fn, "'%s' (vr %u) set to NaN", var->name, (unsigned)var->vr);
        if (!isfinite(x)) return fail(inst, fn, "'%s' (vr %u) set to %g", var->name, (unsigned)var->vr, x);
        if (var->min_exclusive ? !(x > var->min) : !(x >= var->min))
            return fail(inst, fn, "'%s' (vr %u) = %.17g must be %s %g", var->name, (unsigned)var->vr, x,
                        var->min_exclusive ? ">" : ">=", var->min);
    }
    for (i = 0; i < nvr; i++) *field(&inst->s, find_variable(vr[i])) = value[i];
    if (mode != MODE_STEP_COMPLETE) apply_initial_values(&inst->s);
    return fmi2OK;
}

/* the FMU has no Integer, Boolean or String variables: any value reference is unknown */
#define NO_VARIABLES_OF_TYPE(fn, allowed)                                                                    \
    GET_INSTANCE(c, fn);                                                                                     \
    (void)value;                                                                                             \
    if (require_mode(inst, fn, allowed) != fmi2OK) return fmi2Error;                                         \
    if (nvr > 0) return fail(inst, fn, "unknown value reference %u", vr ? (unsigned)vr[0] : 0u);             \
    return fmi2OK

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[]) {
    NO_VARIABLES_OF_TYPE("fmi2GetInteger", GETTABLE);
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[]) {
    NO_VARIABLES_OF_TYPE("fmi2GetBoolean", GETTABLE);
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[]) {
    NO_VARIABLES_OF_TYPE("fmi2GetString", GETTABLE);
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[]) {
    NO_VARIABLES_OF_TYPE("fmi2SetInteger", SETTABLE);
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[]) {
    NO_VARIABLES_OF_TYPE("fmi2SetBoolean", SETTABLE);
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[]) {
    NO_VARIABLES_OF_TYPE("fmi2SetString", SETTABLE);
}

/* ---- FMU state ---- */

static FmuState *checked_state(Instance *inst, const char *fn, fmi2FMUstate state) {
    FmuState *st = (FmuState *)state;
    if (!st) {
        fail(inst, fn, "FMUstate is NULL");
        return NULL;
    }
    if (st->magic != FMU_STATE_MAGIC) {
        fail(inst, fn, "FMUstate was not created by %s", MODEL_IDENTIFIER);
        return NULL;
    }
    return st;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
    const char *fn = "fmi2GetFMUstate";
    FmuState *st;
    GET_INSTANCE(c, fn);
    if (!FMUstate) return fail(inst, fn, "FMUstate is NULL");
    if (*FMUstate) {
        /* overwrite a state this FMU created before */
        if (!(st = checked_state(inst, fn, *FMUstate))) return fmi2Error;
    } else {
        st = (FmuState *)allocate(&inst->functions, 1, sizeof(FmuState));
        if (!st) return fail(inst, fn, "out of memory");
        memset(st, 0, sizeof(*st));
        st->magic = FMU_STATE_MAGIC;
        *FMUstate = st;
    }
    st->s = inst->s;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate) {
    const char *fn = "fmi2SetFMUstate";
    FmuState *st;
    GET_INSTANCE(c, fn);
    if (!(st = checked_state(inst, fn, FMUstate))) return fmi2Error;
    inst->s = st->s;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
    const char *fn = "fmi2FreeFMUstate";
    GET_INSTANCE(c, fn);
    if (!FMUstate) return fail(inst, fn, "FMUstate is NULL");
    if (!*FMUstate) return fmi2OK;
    if (!checked_state(inst, fn, *FMUstate)) return fmi2Error;
    ((FmuState *)*FMUstate)->magic = 0;
    release(&inst->functions, *FMUstate);
    *FMUstate = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size) {
    const char *fn = "fmi2SerializedFMUstateSize";
    GET_INSTANCE(c, fn);
    if (!size) return fail(inst, fn, "size is NULL");
    if (!checked_state(inst, fn, FMUstate)) return fmi2Error;
    *size = SERIAL_SIZE;
    return fmi2OK;
}

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

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size) {
    const char *fn = "fmi2SerializeFMUstate";
    FmuState *st;
    double *d[N_SERIAL_DOUBLES];
    uint32_t header[2];
    char *p = (char *)serializedState;
    size_t i;
    GET_INSTANCE(c, fn);
    if (!(st = checked_state(inst, fn, FMUstate))) return fmi2Error;
    if (!serializedState) return fail(inst, fn, "serializedState is NULL");
    if (size < SERIAL_SIZE) return fail(inst, fn, "buffer of %u bytes is too small (need %u)", (unsigned)size, (unsigned)SERIAL_SIZE);
    header[0] = (uint32_t)st->s.mode;
    header[1] = (uint32_t)st->s.stop_time_defined;
    memcpy(p, SERIAL_TAG, sizeof(SERIAL_TAG));
    p += sizeof(SERIAL_TAG);
    memcpy(p, header, sizeof(header));
    p += sizeof(header);
    serial_doubles(&st->s, d);
    for (i = 0; i < N_SERIAL_DOUBLES; i++, p += sizeof(double)) memcpy(p, d[i], sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size, fmi2FMUstate *FMUstate) {
    const char *fn = "fmi2DeSerializeFMUstate";
    ModelState s;
    FmuState *st;
    double *d[N_SERIAL_DOUBLES];
    uint32_t header[2];
    const char *p = (const char *)serializedState;
    size_t i;
    GET_INSTANCE(c, fn);
    if (!FMUstate) return fail(inst, fn, "FMUstate is NULL");
    if (!serializedState) return fail(inst, fn, "serializedState is NULL");
    if (size != SERIAL_SIZE || memcmp(p, SERIAL_TAG, sizeof(SERIAL_TAG)) != 0)
        return fail(inst, fn, "not a serialized %s state (%u bytes)", MODEL_IDENTIFIER, (unsigned)size);
    p += sizeof(SERIAL_TAG);
    memcpy(header, p, sizeof(header));
    p += sizeof(header);
    if (header[0] < MODE_INSTANTIATED || header[0] > MODE_ERROR || header[1] > 1)
        return fail(inst, fn, "corrupt serialized state");
    memset(&s, 0, sizeof(s));
    s.mode = (Mode)header[0];
    s.stop_time_defined = (fmi2Boolean)header[1];
    serial_doubles(&s, d);
    for (i = 0; i < N_SERIAL_DOUBLES; i++, p += sizeof(double)) memcpy(d[i], p, sizeof(double));
    if (*FMUstate) {
        if (!(st = checked_state(inst, fn, *FMUstate))) return fmi2Error;
    } else {
        st = (FmuState *)allocate(&inst->functions, 1, sizeof(FmuState));
        if (!st) return fail(inst, fn, "out of memory");
        memset(st, 0, sizeof(*st));
        st->magic = FMU_STATE_MAGIC;
        *FMUstate = st;
    }
    st->s = s;
    return fmi2OK;
}

/* ---- co-simulation ---- */

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    const char *fn = "fmi2DoStep";
    const double t = currentCommunicationPoint, h = communicationStepSize;
    double n, dt;
    unsigned long i, steps;
    GET_INSTANCE(c, fn);
    (void)noSetFMUStatePriorToCurrentPoint;
    if (require_mode(inst, fn, IN(MODE_STEP_COMPLETE)) != fmi2OK) return fmi2Error;
    if (!isfinite(t) || fabs(t - inst->s.time) > time_tolerance(inst->s.time))
        return fail(inst, fn, "currentCommunicationPoint = %.17g but the FMU is at t = %.17g", t, inst->s.time);
    if (!(h > 0.0) || !isfinite(h)) return fail(inst, fn, "communicationStepSize = %g must be > 0", h);
    if (inst->s.stop_time_defined && t + h > inst->s.stop_time + time_tolerance(inst->s.stop_time))
        return fail(inst, fn, "step to t = %.17g goes past stopTime = %.17g", t + h, inst->s.stop_time);
    n = ceil(h / MAX_SUBSTEP * (1.0 - SUBSTEP_SLACK));
    if (n > MAX_SUBSTEPS_PER_STEP)
        return fail(inst, fn, "communicationStepSize = %g needs more than %.0f sub-steps", h, MAX_SUBSTEPS_PER_STEP);
    steps = n < 1.0 ? 1ul : (unsigned long)n;
    dt = h / (double)steps;
    for (i = 0; i < steps; i++) rk4_step(&inst->s, dt);
    if (!isfinite(inst->s.x) || !isfinite(inst->s.v))
        return fail(inst, fn, "the solution diverged at t = %.17g (x = %g, v = %g)", t + h, inst->s.x, inst->s.v);
    inst->s.time = t + h;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) {
    return unsupported(c, "fmi2CancelStep", "fmi2DoStep never returns fmi2Pending");
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return unsupported(c, "fmi2SetRealInputDerivatives", "canInterpolateInputs is false");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return unsupported(c, "fmi2GetRealOutputDerivatives", "maxOutputDerivativeOrder is 0");
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                        const fmi2Real dvKnown[], fmi2Real dvUnknown[]) {
    (void)vUnknown_ref, (void)nUnknown, (void)vKnown_ref, (void)nKnown, (void)dvKnown, (void)dvUnknown;
    return unsupported(c, "fmi2GetDirectionalDerivative", "providesDirectionalDerivative is false");
}

/* Statuses are only meaningful after fmi2Pending or fmi2Discard, which this FMU never returns;
 * the two that a master may ask for after a step are answered, the rest are not available. */
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    GET_INSTANCE(c, "fmi2GetStatus");
    (void)s, (void)value;
    return fmi2Discard;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    GET_INSTANCE(c, "fmi2GetRealStatus");
    if (s == fmi2LastSuccessfulTime && value) {
        *value = inst->s.time;
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    GET_INSTANCE(c, "fmi2GetIntegerStatus");
    (void)s, (void)value;
    return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    GET_INSTANCE(c, "fmi2GetBooleanStatus");
    if (s == fmi2Terminated && value) {
        *value = fmi2False; /* the FMU never asks to stop the simulation */
        return fmi2OK;
    }
    return fmi2Discard;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    GET_INSTANCE(c, "fmi2GetStringStatus");
    (void)s, (void)value;
    return fmi2Discard;
}

/* ---- model exchange: not supported (fmi2Instantiate refuses fmi2ModelExchange) ---- */

#define ME_ONLY "the FMU supports co-simulation only"

fmi2Status fmi2EnterEventMode(fmi2Component c) { return unsupported(c, "fmi2EnterEventMode", ME_ONLY); }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo) {
    (void)eventInfo;
    return unsupported(c, "fmi2NewDiscreteStates", ME_ONLY);
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    return unsupported(c, "fmi2EnterContinuousTimeMode", ME_ONLY);
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint, (void)enterEventMode, (void)terminateSimulation;
    return unsupported(c, "fmi2CompletedIntegratorStep", ME_ONLY);
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    (void)time;
    return unsupported(c, "fmi2SetTime", ME_ONLY);
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    (void)x, (void)nx;
    return unsupported(c, "fmi2SetContinuousStates", ME_ONLY);
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx) {
    (void)derivatives, (void)nx;
    return unsupported(c, "fmi2GetDerivatives", ME_ONLY);
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni) {
    (void)eventIndicators, (void)ni;
    return unsupported(c, "fmi2GetEventIndicators", ME_ONLY);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    (void)x, (void)nx;
    return unsupported(c, "fmi2GetContinuousStates", ME_ONLY);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
    (void)x_nominal, (void)nx;
    return unsupported(c, "fmi2GetNominalsOfContinuousStates", ME_ONLY);
}
