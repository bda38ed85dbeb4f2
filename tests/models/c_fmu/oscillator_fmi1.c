/*
 * Oscillator1: the Oscillator test model (oscillator.c) as a stand-alone FMI 1.0 co-simulation
 * FMU ("CoSimulation_StandAlone"), written in plain C.
 *
 * It lets the marine-cosim tests show that the co-simulation master runs FMI 1.0 FMUs, alone and
 * mixed with FMI 2.0 ones. It is built from this one file with gcc (the build expands the model it
 * shares with oscillator.c, oscillator_model.h, into it); the FMI 1.0 co-simulation declarations
 * (fmiPlatformTypes.h / fmiFunctions.h of the standard) are written out below, so no other header
 * is needed.
 *
 * Model (oscillator_model.h, shared with oscillator.c): mass-spring-damper driven by an external
 * force
 *
 *     m * a = F - c * v - k * x,      x' = v,  v' = a
 *
 * integrated by classic RK4 with a fixed internal sub-step of at most MAX_SUBSTEP; the input F is
 * held constant over each communication step (zero-order hold).
 *
 * Value references are those of the FMI 2.0 Oscillator (FMI 1.0 has no independent variable, so
 * there is no "time"): 1..99 parameters, 100..199 inputs, 200..299 outputs.
 *
 *     vr    name  causality  variability  unit     start
 *     1     m     internal   parameter    kg       10
 *     2     k     internal   parameter    N/m      1000
 *     3     c     internal   parameter    N.s/m    5
 *     4     x0    internal   parameter    m        0.1
 *     5     v0    internal   parameter    m/s      0
 *     100   F     input      continuous   N        0
 *     200   x     output     continuous   m        (x0 at initialization)
 *     201   v     output     continuous   m/s      (v0 at initialization)
 *     202   a     output     continuous   m/s2     (direct feedthrough from F)
 *
 * FMI 1.0 co-simulation has no formal state machine; this FMU follows the calling sequence of
 * the standard and refuses calls out of order:
 *
 *     instantiated  --fmiInitializeSlave-->  initialized  --fmiTerminateSlave-->  terminated
 *          ^                                      |  fmiDoStep                         |
 *          +------------- fmiResetSlave (from any state) -------------------------------+
 *
 *   - parameters can be set only before fmiInitializeSlave, the input F also afterwards;
 *   - values can be read in every state (before initialization they are the start values);
 *   - a function that fails logs why, returns fmiError and puts the instance into the error
 *     state, where only fmiGetXXX, fmiTerminateSlave, fmiResetSlave and fmiFreeSlaveInstance
 *     are accepted.
 *   - fmiDoStep with newStep = fmiFalse repeats the previous communication step from its start
 *     (states and time go back, the inputs set since are used); the capability flag
 *     canRejectSteps stays false, as the FMU itself never rejects a step.
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ========================================================================================== */
/* 0. FMI 1.0 co-simulation declarations (fmiPlatformTypes.h and fmiFunctions.h, version 1.0)  */
/* ========================================================================================== */

/* The exported names are <modelIdentifier>_<fmi function>, e.g. Oscillator1_fmiDoStep. */
#define MODEL_IDENTIFIER Oscillator1
#define fmiPaste(a, b) a##b
#define fmiPasteB(a, b) fmiPaste(a, b)
#define fmiFullName(name) fmiPasteB(MODEL_IDENTIFIER, name)

#if defined(__GNUC__) && __GNUC__ >= 4
#define DllExport __attribute__((visibility("default")))
#else
#define DllExport
#endif

#define fmiPlatform "standard32"
#define fmiVersion "1.0"

typedef void *fmiComponent;
typedef unsigned int fmiValueReference;
typedef double fmiReal;
typedef int fmiInteger;
typedef char fmiBoolean;
typedef const char *fmiString;

#define fmiTrue 1
#define fmiFalse 0
#define fmiUndefinedValueReference (fmiValueReference)(-1)

typedef enum { fmiOK, fmiWarning, fmiDiscard, fmiError, fmiFatal, fmiPending } fmiStatus;

typedef enum { fmiDoStepStatus, fmiPendingStatus, fmiLastSuccessfulTime } fmiStatusKind;

typedef void (*fmiCallbackLogger)(fmiComponent c, fmiString instanceName, fmiStatus status, fmiString category,
                                  fmiString message, ...);
typedef void *(*fmiCallbackAllocateMemory)(size_t nobj, size_t size);
typedef void (*fmiCallbackFreeMemory)(void *obj);
typedef void (*fmiStepFinished)(fmiComponent c, fmiStatus status);

typedef struct {
    fmiCallbackLogger logger;
    fmiCallbackAllocateMemory allocateMemory;
    fmiCallbackFreeMemory freeMemory;
    fmiStepFinished stepFinished;
} fmiCallbackFunctions;

#define fmiGetTypesPlatform fmiFullName(_fmiGetTypesPlatform)
#define fmiGetVersion fmiFullName(_fmiGetVersion)
#define fmiSetDebugLogging fmiFullName(_fmiSetDebugLogging)
#define fmiSetReal fmiFullName(_fmiSetReal)
#define fmiSetInteger fmiFullName(_fmiSetInteger)
#define fmiSetBoolean fmiFullName(_fmiSetBoolean)
#define fmiSetString fmiFullName(_fmiSetString)
#define fmiGetReal fmiFullName(_fmiGetReal)
#define fmiGetInteger fmiFullName(_fmiGetInteger)
#define fmiGetBoolean fmiFullName(_fmiGetBoolean)
#define fmiGetString fmiFullName(_fmiGetString)
#define fmiInstantiateSlave fmiFullName(_fmiInstantiateSlave)
#define fmiInitializeSlave fmiFullName(_fmiInitializeSlave)
#define fmiTerminateSlave fmiFullName(_fmiTerminateSlave)
#define fmiResetSlave fmiFullName(_fmiResetSlave)
#define fmiFreeSlaveInstance fmiFullName(_fmiFreeSlaveInstance)
#define fmiSetRealInputDerivatives fmiFullName(_fmiSetRealInputDerivatives)
#define fmiGetRealOutputDerivatives fmiFullName(_fmiGetRealOutputDerivatives)
#define fmiCancelStep fmiFullName(_fmiCancelStep)
#define fmiDoStep fmiFullName(_fmiDoStep)
#define fmiGetStatus fmiFullName(_fmiGetStatus)
#define fmiGetRealStatus fmiFullName(_fmiGetRealStatus)
#define fmiGetIntegerStatus fmiFullName(_fmiGetIntegerStatus)
#define fmiGetBooleanStatus fmiFullName(_fmiGetBooleanStatus)
#define fmiGetStringStatus fmiFullName(_fmiGetStringStatus)

DllExport const char *fmiGetTypesPlatform(void);
DllExport const char *fmiGetVersion(void);
DllExport fmiStatus fmiSetDebugLogging(fmiComponent c, fmiBoolean loggingOn);
DllExport fmiStatus fmiSetReal(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiReal value[]);
DllExport fmiStatus fmiSetInteger(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiInteger value[]);
DllExport fmiStatus fmiSetBoolean(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiBoolean value[]);
DllExport fmiStatus fmiSetString(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiString value[]);
DllExport fmiStatus fmiGetReal(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiReal value[]);
DllExport fmiStatus fmiGetInteger(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiInteger value[]);
DllExport fmiStatus fmiGetBoolean(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiBoolean value[]);
DllExport fmiStatus fmiGetString(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiString value[]);
DllExport fmiComponent fmiInstantiateSlave(fmiString instanceName, fmiString fmuGUID, fmiString fmuLocation,
                                           fmiString mimeType, fmiReal timeout, fmiBoolean visible,
                                           fmiBoolean interactive, fmiCallbackFunctions functions,
                                           fmiBoolean loggingOn);
DllExport fmiStatus fmiInitializeSlave(fmiComponent c, fmiReal tStart, fmiBoolean StopTimeDefined, fmiReal tStop);
DllExport fmiStatus fmiTerminateSlave(fmiComponent c);
DllExport fmiStatus fmiResetSlave(fmiComponent c);
DllExport void fmiFreeSlaveInstance(fmiComponent c);
DllExport fmiStatus fmiSetRealInputDerivatives(fmiComponent c, const fmiValueReference vr[], size_t nvr,
                                               const fmiInteger order[], const fmiReal value[]);
DllExport fmiStatus fmiGetRealOutputDerivatives(fmiComponent c, const fmiValueReference vr[], size_t nvr,
                                                const fmiInteger order[], fmiReal value[]);
DllExport fmiStatus fmiCancelStep(fmiComponent c);
DllExport fmiStatus fmiDoStep(fmiComponent c, fmiReal currentCommunicationPoint, fmiReal communicationStepSize,
                              fmiBoolean newStep);
DllExport fmiStatus fmiGetStatus(fmiComponent c, const fmiStatusKind s, fmiStatus *value);
DllExport fmiStatus fmiGetRealStatus(fmiComponent c, const fmiStatusKind s, fmiReal *value);
DllExport fmiStatus fmiGetIntegerStatus(fmiComponent c, const fmiStatusKind s, fmiInteger *value);
DllExport fmiStatus fmiGetBooleanStatus(fmiComponent c, const fmiStatusKind s, fmiBoolean *value);
DllExport fmiStatus fmiGetStringStatus(fmiComponent c, const fmiStatusKind s, fmiString *value);

#define MODEL_IDENTIFIER_STRING "Oscillator1"
/* must equal the guid attribute in modelDescription_fmi1.xml */
#define MODEL_GUID "{9988314f-4e68-49b6-a822-c2a8c43312d7}"

/* ========================================================================================== */
/* 1. The model                                                                               */
/* ========================================================================================== */

/* the slack in the number of RK4 sub-steps of a communication step (see oscillator_model.h) */
#define SUBSTEP_SLACK 1e-6
/* refuse communication steps that would need more sub-steps than this (a master bug) */
#define MAX_SUBSTEPS_PER_STEP 100000000.0

typedef enum {
    MODE_INSTANTIATED = 1,
    MODE_INITIALIZED = 2,
    MODE_TERMINATED = 3,
    MODE_ERROR = 4
} Mode;

typedef enum { CAUSALITY_PARAMETER, CAUSALITY_INPUT, CAUSALITY_OUTPUT } Causality;

typedef struct {
    fmiValueReference vr;
    const char *name;
    Causality causality; /* CAUSALITY_PARAMETER: causality="internal" variability="parameter" */
    size_t offset;       /* where the value lives in ModelState; NO_OFFSET if computed */
    double min;          /* smallest legal value (parameters and inputs) */
    int min_exclusive;   /* the value must be strictly greater than min */
} Variable;

#define NO_OFFSET ((size_t)-1)
#define FIELD(name) offsetof(ModelState, name)

/* ModelState, the equations and the value references, shared with the FMI 2.0 Oscillator
 * (oscillator.c); expanded into this file by the build */
#include "oscillator_model.h"

static const Variable VARIABLES[] = {OSCILLATOR_VARIABLES};
#define N_VARIABLES (sizeof(VARIABLES) / sizeof(VARIABLES[0]))

/* ========================================================================================== */
/* 2. FMI plumbing                                                                            */
/* ========================================================================================== */

typedef struct {
    char *instance_name;
    fmiCallbackFunctions functions; /* a copy (FMI 1.0 passes the struct by value) */
    fmiBoolean logging_on;
    ModelState s;
    ModelState previous; /* the state at the start of the last step, for newStep = fmiFalse */
    int has_previous;
} Instance;

static const char *mode_name(Mode mode) {
    switch (mode) {
    case MODE_INSTANTIATED: return "instantiated";
    case MODE_INITIALIZED: return "initialized";
    case MODE_TERMINATED: return "terminated";
    case MODE_ERROR: return "error";
    }
    return "unknown";
}

static void *allocate(const fmiCallbackFunctions *f, size_t n, size_t size) {
    return f->allocateMemory ? f->allocateMemory(n, size) : calloc(n, size);
}

static void release(const fmiCallbackFunctions *f, void *p) {
    if (!p) return;
    if (f->freeMemory) f->freeMemory(p);
    else free(p);
}

/* The logger's message is a printf format in which "#<type><vr>#" stands for a variable name:
 * format here, then double every '%' and '#' so that both pass through literally. */
static void vlog_message(const fmiCallbackFunctions *f, fmiComponent c, fmiString instance_name, fmiStatus status,
                         const char *category, const char *fmt, va_list args) {
    char text[1024], escaped[2048];
    size_t i, j = 0;
    if (!f || !f->logger) return;
    vsnprintf(text, sizeof(text), fmt, args);
    for (i = 0; text[i] && j + 2 < sizeof(escaped); i++) {
        if (text[i] == '%' || text[i] == '#') escaped[j++] = text[i];
        escaped[j++] = text[i];
    }
    escaped[j] = '\0';
    f->logger(c, instance_name ? instance_name : "", status, category, escaped);
}

static void log_with(const fmiCallbackFunctions *f, fmiComponent c, fmiString instance_name, fmiStatus status,
                     const char *category, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vlog_message(f, c, instance_name, status, category, fmt, args);
    va_end(args);
}

/* Log an error (errors are always reported), put the instance into the error state and return
 * fmiError. Recovery is possible with fmiResetSlave. */
static fmiStatus fail(Instance *inst, const char *function, const char *fmt, ...) {
    char text[900];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    log_with(&inst->functions, inst, inst->instance_name, fmiError, "error", "%s: %s", function, text);
    inst->s.mode = MODE_ERROR;
    return fmiError;
}

static void log_call(Instance *inst, const char *fmt, ...) {
    va_list args;
    if (!inst->logging_on) return;
    va_start(args, fmt);
    vlog_message(&inst->functions, inst, inst->instance_name, fmiOK, "call", fmt, args);
    va_end(args);
}

/* The component argument of every function goes through here; NULL cannot be logged. */
#define GET_INSTANCE(c, function)                       \
    Instance *inst = (Instance *)(c);                   \
    if (!inst) return fmiError;                         \
    log_call(inst, "%s", function)

#define IN(mode) (1u << (mode))
#define ANY_MODE (IN(MODE_INSTANTIATED) | IN(MODE_INITIALIZED) | IN(MODE_TERMINATED) | IN(MODE_ERROR))
#define SETTABLE (IN(MODE_INSTANTIATED) | IN(MODE_INITIALIZED))

static fmiStatus require_mode(Instance *inst, const char *function, unsigned allowed) {
    if (allowed & (1u << inst->s.mode)) return fmiOK;
    return fail(inst, function, "not allowed in state '%s'", mode_name(inst->s.mode));
}

static const Variable *find_variable(fmiValueReference vr) {
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

static fmiStatus unsupported(fmiComponent c, const char *function, const char *why) {
    GET_INSTANCE(c, function);
    return fail(inst, function, "not supported (%s)", why);
}

/* ========================================================================================== */
/* 3. FMI 1.0 co-simulation functions                                                         */
/* ========================================================================================== */

/* ---- inquiry, logging, instances ---- */

const char *fmiGetTypesPlatform(void) { return fmiPlatform; }

const char *fmiGetVersion(void) { return fmiVersion; }

fmiStatus fmiSetDebugLogging(fmiComponent c, fmiBoolean loggingOn) {
    GET_INSTANCE(c, "fmiSetDebugLogging");
    inst->logging_on = loggingOn ? fmiTrue : fmiFalse;
    return fmiOK;
}

fmiComponent fmiInstantiateSlave(fmiString instanceName, fmiString fmuGUID, fmiString fmuLocation,
                                 fmiString mimeType, fmiReal timeout, fmiBoolean visible, fmiBoolean interactive,
                                 fmiCallbackFunctions functions, fmiBoolean loggingOn) {
    Instance *inst;
    size_t len;
    const char *fn = "fmiInstantiateSlave";
    /* stand-alone: no tool to start, no resources, nothing to show */
    (void)fmuLocation, (void)mimeType, (void)timeout, (void)visible, (void)interactive;
    if (!instanceName || !instanceName[0]) {
        log_with(&functions, NULL, "", fmiError, "error", "%s: missing instance name", fn);
        return NULL;
    }
    if (!fmuGUID || strcmp(fmuGUID, MODEL_GUID) != 0) {
        log_with(&functions, NULL, instanceName, fmiError, "error", "%s: wrong GUID '%s', expected '%s'", fn,
                 fmuGUID ? fmuGUID : "(null)", MODEL_GUID);
        return NULL;
    }
    inst = (Instance *)allocate(&functions, 1, sizeof(Instance));
    if (!inst) {
        log_with(&functions, NULL, instanceName, fmiError, "error", "%s: out of memory", fn);
        return NULL;
    }
    memset(inst, 0, sizeof(*inst));
    inst->functions = functions;
    len = strlen(instanceName);
    inst->instance_name = (char *)allocate(&functions, len + 1, 1);
    if (!inst->instance_name) {
        log_with(&functions, NULL, instanceName, fmiError, "error", "%s: out of memory", fn);
        release(&functions, inst);
        return NULL;
    }
    memcpy(inst->instance_name, instanceName, len + 1);
    inst->logging_on = loggingOn ? fmiTrue : fmiFalse;
    set_start_values(&inst->s);
    log_call(inst, "%s", fn);
    return inst;
}

void fmiFreeSlaveInstance(fmiComponent c) {
    Instance *inst = (Instance *)c;
    fmiCallbackFunctions f;
    if (!inst) return;
    log_call(inst, "fmiFreeSlaveInstance");
    f = inst->functions;
    release(&f, inst->instance_name);
    release(&f, inst);
}

/* ---- initialization, termination, reset ---- */

fmiStatus fmiInitializeSlave(fmiComponent c, fmiReal tStart, fmiBoolean StopTimeDefined, fmiReal tStop) {
    const char *fn = "fmiInitializeSlave";
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_INSTANTIATED)) != fmiOK) return fmiError;
    if (!isfinite(tStart)) return fail(inst, fn, "tStart is not finite");
    if (StopTimeDefined && !(tStop >= tStart))
        return fail(inst, fn, "tStop (%.17g) is before tStart (%.17g)", tStop, tStart);
    inst->s.start_time = tStart;
    inst->s.time = tStart;
    inst->s.stop_time_defined = StopTimeDefined ? 1 : 0;
    inst->s.stop_time = StopTimeDefined ? tStop : 0.0;
    apply_initial_values(&inst->s);
    inst->has_previous = 0;
    inst->s.mode = MODE_INITIALIZED;
    return fmiOK;
}

fmiStatus fmiTerminateSlave(fmiComponent c) {
    const char *fn = "fmiTerminateSlave";
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_INITIALIZED) | IN(MODE_ERROR)) != fmiOK) return fmiError;
    inst->s.mode = MODE_TERMINATED;
    return fmiOK;
}

/* back to the state right after fmiInstantiateSlave, with the default start values */
fmiStatus fmiResetSlave(fmiComponent c) {
    GET_INSTANCE(c, "fmiResetSlave");
    set_start_values(&inst->s);
    inst->has_previous = 0;
    return fmiOK;
}

/* ---- values ---- */

fmiStatus fmiGetReal(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiReal value[]) {
    const char *fn = "fmiGetReal";
    size_t i;
    GET_INSTANCE(c, fn);
    if (nvr > 0 && (!vr || !value)) return fail(inst, fn, "vr or value is NULL");
    for (i = 0; i < nvr; i++) {
        const Variable *var = find_variable(vr[i]);
        if (!var) return fail(inst, fn, "unknown value reference %u", (unsigned)vr[i]);
        value[i] = var->offset == NO_OFFSET ? computed_value(&inst->s, var->vr) : *field(&inst->s, var);
    }
    return fmiOK;
}

/* checks all values first, so a refused call changes nothing */
fmiStatus fmiSetReal(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiReal value[]) {
    const char *fn = "fmiSetReal";
    size_t i;
    Mode mode;
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, SETTABLE) != fmiOK) return fmiError;
    mode = inst->s.mode;
    if (nvr > 0 && (!vr || !value)) return fail(inst, fn, "vr or value is NULL");
    for (i = 0; i < nvr; i++) {
        const Variable *var = find_variable(vr[i]);
        const double x = value[i];
        if (!var) return fail(inst, fn, "unknown value reference %u", (unsigned)vr[i]);
        if (var->causality == CAUSALITY_OUTPUT)
            return fail(inst, fn, "output '%s' (vr %u) cannot be set", var->name, (unsigned)var->vr);
        if (var->causality == CAUSALITY_PARAMETER && mode != MODE_INSTANTIATED)
            return fail(inst, fn, "parameter '%s' (vr %u) can only be set before fmiInitializeSlave", var->name,
                        (unsigned)var->vr);
        if (isnan(x)) return fail(inst, fn, "'%s' (vr %u) set to NaN", var->name, (unsigned)var->vr);
        if (!isfinite(x)) return fail(inst, fn, "'%s' (vr %u) set to %g", var->name, (unsigned)var->vr, x);
        if (var->min_exclusive ? !(x > var->min) : !(x >= var->min))
            return fail(inst, fn, "'%s' (vr %u) = %.17g must be %s %g", var->name, (unsigned)var->vr, x,
                        var->min_exclusive ? ">" : ">=", var->min);
    }
    for (i = 0; i < nvr; i++) *field(&inst->s, find_variable(vr[i])) = value[i];
    if (mode == MODE_INSTANTIATED) apply_initial_values(&inst->s);
    return fmiOK;
}

/* the FMU has no Integer, Boolean or String variables: any value reference is unknown */
#define NO_VARIABLES_OF_TYPE(fn, allowed)                                                                    \
    GET_INSTANCE(c, fn);                                                                                     \
    (void)value;                                                                                             \
    if (require_mode(inst, fn, allowed) != fmiOK) return fmiError;                                           \
    if (nvr > 0) return fail(inst, fn, "unknown value reference %u", vr ? (unsigned)vr[0] : 0u);             \
    return fmiOK

fmiStatus fmiGetInteger(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiInteger value[]) {
    NO_VARIABLES_OF_TYPE("fmiGetInteger", ANY_MODE);
}
fmiStatus fmiGetBoolean(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiBoolean value[]) {
    NO_VARIABLES_OF_TYPE("fmiGetBoolean", ANY_MODE);
}
fmiStatus fmiGetString(fmiComponent c, const fmiValueReference vr[], size_t nvr, fmiString value[]) {
    NO_VARIABLES_OF_TYPE("fmiGetString", ANY_MODE);
}
fmiStatus fmiSetInteger(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiInteger value[]) {
    NO_VARIABLES_OF_TYPE("fmiSetInteger", SETTABLE);
}
fmiStatus fmiSetBoolean(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiBoolean value[]) {
    NO_VARIABLES_OF_TYPE("fmiSetBoolean", SETTABLE);
}
fmiStatus fmiSetString(fmiComponent c, const fmiValueReference vr[], size_t nvr, const fmiString value[]) {
    NO_VARIABLES_OF_TYPE("fmiSetString", SETTABLE);
}

/* ---- stepping ---- */

fmiStatus fmiDoStep(fmiComponent c, fmiReal currentCommunicationPoint, fmiReal communicationStepSize,
                    fmiBoolean newStep) {
    const char *fn = "fmiDoStep";
    const double t = currentCommunicationPoint, h = communicationStepSize;
    double n, dt;
    unsigned long i, steps;
    GET_INSTANCE(c, fn);
    if (require_mode(inst, fn, IN(MODE_INITIALIZED)) != fmiOK) return fmiError;
    if (!isfinite(t)) return fail(inst, fn, "currentCommunicationPoint = %g is not finite", t);
    if (!(h >= 0.0) || !isfinite(h)) return fail(inst, fn, "communicationStepSize = %g must be >= 0", h);
    if (!newStep) {
        /* repeat the previous step from its start, with the inputs as they are now */
        double F = inst->s.F;
        if (!inst->has_previous)
            return fail(inst, fn, "newStep = fmiFalse but there is no previous step to repeat");
        if (fabs(t - inst->previous.time) > time_tolerance(inst->previous.time))
            return fail(inst, fn, "newStep = fmiFalse repeats the step from t = %.17g, not from %.17g",
                        inst->previous.time, t);
        inst->s = inst->previous;
        inst->s.F = F;
    } else if (fabs(t - inst->s.time) > time_tolerance(inst->s.time)) {
        return fail(inst, fn, "currentCommunicationPoint = %.17g but the FMU is at t = %.17g", t, inst->s.time);
    }
    if (inst->s.stop_time_defined && t + h > inst->s.stop_time + time_tolerance(inst->s.stop_time))
        return fail(inst, fn, "step to t = %.17g goes past tStop = %.17g", t + h, inst->s.stop_time);
    n = ceil(h / MAX_SUBSTEP * (1.0 - SUBSTEP_SLACK));
    if (n > MAX_SUBSTEPS_PER_STEP)
        return fail(inst, fn, "communicationStepSize = %g needs more than %.0f sub-steps", h, MAX_SUBSTEPS_PER_STEP);
    inst->previous = inst->s;
    inst->has_previous = 1;
    if (h > 0.0) {
        steps = n < 1.0 ? 1ul : (unsigned long)n;
        dt = h / (double)steps;
        for (i = 0; i < steps; i++) rk4_step(&inst->s, dt);
    }
    if (!state_is_finite(&inst->s)) {
        char state[256];
        describe_state(&inst->s, state, sizeof(state));
        return fail(inst, fn, "the solution diverged at t = %.17g (%s)", t + h, state);
    }
    inst->s.time = t + h;
    return fmiOK;
}

fmiStatus fmiCancelStep(fmiComponent c) {
    return unsupported(c, "fmiCancelStep", "fmiDoStep never returns fmiPending");
}

fmiStatus fmiSetRealInputDerivatives(fmiComponent c, const fmiValueReference vr[], size_t nvr,
                                     const fmiInteger order[], const fmiReal value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return unsupported(c, "fmiSetRealInputDerivatives", "canInterpolateInputs is false");
}

fmiStatus fmiGetRealOutputDerivatives(fmiComponent c, const fmiValueReference vr[], size_t nvr,
                                      const fmiInteger order[], fmiReal value[]) {
    (void)vr, (void)nvr, (void)order, (void)value;
    return unsupported(c, "fmiGetRealOutputDerivatives", "maxOutputDerivativeOrder is 0");
}

/* Statuses are meant for after fmiPending, which this FMU never returns: only the last
 * successful time is answered, the rest are not available (fmiDiscard, state unchanged). */
fmiStatus fmiGetStatus(fmiComponent c, const fmiStatusKind s, fmiStatus *value) {
    GET_INSTANCE(c, "fmiGetStatus");
    (void)s, (void)value;
    return fmiDiscard;
}

fmiStatus fmiGetRealStatus(fmiComponent c, const fmiStatusKind s, fmiReal *value) {
    GET_INSTANCE(c, "fmiGetRealStatus");
    if (s == fmiLastSuccessfulTime && value) {
        *value = inst->s.time;
        return fmiOK;
    }
    return fmiDiscard;
}

fmiStatus fmiGetIntegerStatus(fmiComponent c, const fmiStatusKind s, fmiInteger *value) {
    GET_INSTANCE(c, "fmiGetIntegerStatus");
    (void)s, (void)value;
    return fmiDiscard;
}

fmiStatus fmiGetBooleanStatus(fmiComponent c, const fmiStatusKind s, fmiBoolean *value) {
    GET_INSTANCE(c, "fmiGetBooleanStatus");
    (void)s, (void)value;
    return fmiDiscard;
}

fmiStatus fmiGetStringStatus(fmiComponent c, const fmiStatusKind s, fmiString *value) {
    GET_INSTANCE(c, "fmiGetStringStatus");
    (void)s, (void)value;
    return fmiDiscard;
}
