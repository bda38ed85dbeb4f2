/*
 * fmi1_common.c: the FMI 1.0 co-simulation functions of the plain-C test FMUs, for any model laid
 * out as fmi1_common.h describes. The model file defines, before including this file:
 *
 *   ModelState                       everything that changes (with mode, time, start_time, stop_time,
 *                                    stop_time_defined), copied by value for a repeated step
 *   VARIABLES, N_VARIABLES           the Real variables (fmi1_common.h: Variable)
 *   set_start_values(s)              all of ModelState to its start values, mode MODE_INSTANTIATED
 *   apply_initial_values(s)          the states from the parameters (until initialization is done)
 *   computed_value(s, vr)            the value of a variable with offset NO_OFFSET
 *   model_max_substep(s)             the largest integrator sub-step [s]
 *   model_substep(s, t, dt)          one integrator sub-step from t to t + dt, inputs held
 *   state_is_finite(s)               0 if the solution diverged ...
 *   describe_state(s, text, size)    ... and what to say about it in the error message
 *
 * FMI 1.0 co-simulation has no formal state machine; these functions follow the calling sequence
 * of the standard and refuse calls out of order:
 *
 *     instantiated  --fmiInitializeSlave-->  initialized  --fmiTerminateSlave-->  terminated
 *          ^                                      |  fmiDoStep                         |
 *          +------------- fmiResetSlave (from any state) -------------------------------+
 *
 *   - parameters can be set only before fmiInitializeSlave, inputs also afterwards;
 *   - values can be read in every state (before initialization they are the start values);
 *   - a function that fails logs why, returns fmiError and puts the instance into the error
 *     state, where only fmiGetXXX, fmiTerminateSlave, fmiResetSlave and fmiFreeSlaveInstance
 *     are accepted;
 *   - fmiDoStep with newStep = fmiFalse repeats the previous communication step from its start
 *     (states and time go back, the inputs set since are used); the capability flag
 *     canRejectSteps stays false, as the FMU itself never rejects a step.
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */

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
        ModelState now = inst->s;
        size_t k;
        if (!inst->has_previous)
            return fail(inst, fn, "newStep = fmiFalse but there is no previous step to repeat");
        if (fabs(t - inst->previous.time) > time_tolerance(inst->previous.time))
            return fail(inst, fn, "newStep = fmiFalse repeats the step from t = %.17g, not from %.17g",
                        inst->previous.time, t);
        inst->s = inst->previous;
        for (k = 0; k < N_VARIABLES; k++)
            if (VARIABLES[k].causality == CAUSALITY_INPUT) *field(&inst->s, &VARIABLES[k]) = *field(&now, &VARIABLES[k]);
    } else if (fabs(t - inst->s.time) > time_tolerance(inst->s.time)) {
        return fail(inst, fn, "currentCommunicationPoint = %.17g but the FMU is at t = %.17g", t, inst->s.time);
    }
    if (inst->s.stop_time_defined && t + h > inst->s.stop_time + time_tolerance(inst->s.stop_time))
        return fail(inst, fn, "step to t = %.17g goes past tStop = %.17g", t + h, inst->s.stop_time);
    n = ceil(h / model_max_substep(&inst->s) * (1.0 - SUBSTEP_SLACK));
    if (n > MAX_SUBSTEPS_PER_STEP)
        return fail(inst, fn, "communicationStepSize = %g needs more than %.0f sub-steps", h, MAX_SUBSTEPS_PER_STEP);
    inst->previous = inst->s;
    inst->has_previous = 1;
    if (h > 0.0) {
        steps = n < 1.0 ? 1ul : (unsigned long)n;
        dt = h / (double)steps;
        for (i = 0; i < steps; i++) model_substep(&inst->s, t + (double)i * dt, dt);
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

