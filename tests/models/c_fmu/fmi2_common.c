/*
 * fmi2_common.c: the FMI 2.0 co-simulation functions of the plain-C test FMUs (oscillator.c,
 * third_party_ship.c), which do not depend on the model: instances, logging, the state machine,
 * getting and setting Real variables through the model's VARIABLES table, FMU states (get, set,
 * serialize) and the functions for capabilities the FMUs do not declare (they return fmi2Error
 * with a log message). Every FMI 2.0 function is defined here and exported.
 *
 * It is included at the end of a model file (see fmi2_common.h), which has defined before:
 *
 *   MODEL_IDENTIFIER, MODEL_GUID     strings (fmi2_common.h)
 *   ModelState                       everything that changes while the FMU runs, with at least
 *                                    Mode mode; fmi2Boolean stop_time_defined;
 *                                    double time, start_time, stop_time; fmi2GetFMUstate copies
 *                                    exactly this struct
 *   VARIABLES[], N_VARIABLES         the Real variables (Variable, fmi2_common.h)
 *   set_start_values(s)              all of ModelState to its start values, mode MODE_INSTANTIATED
 *   apply_initial_values(s)          the states from the parameters (until initialization is done)
 *   computed_value(s, vr)            the value of a variable with offset NO_OFFSET
 *   model_max_substep(s)             the largest integrator sub-step [s]
 *   model_substep(s, t, dt)          one integrator sub-step from t to t + dt, inputs held
 *   state_is_finite(s)               0 if the solution diverged ...
 *   describe_state(s, text, size)    ... and what to say about it in the error message
 *   FMU_STATE_MAGIC                  a uint32 that marks the FMU states of this model
 *   SERIAL_TAG[8], SERIAL_SIZE       the serialized FMU state starts with the tag, has this size
 *   serialize_state(s, p)            writes ModelState after the tag (SERIAL_SIZE - 8 bytes) ...
 *   deserialize_state(p, s)          ... and reads it back; returns NULL or why it cannot
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */

/* ========================================================================================== */
/* 1. FMI plumbing                                                                            */
/* ========================================================================================== */

typedef struct {
    char *instance_name;
    fmi2CallbackFunctions functions; /* a copy: the master's struct need not outlive the call */
    fmi2Boolean logging_on;
    fmi2Boolean log_calls; /* category "logCalls" */
    fmi2Boolean model_exchange; /* instantiated as fmi2ModelExchange (models built with MODEL_EXCHANGE) */
    ModelState s;
} Instance;

/* what an fmi2FMUstate points to */
typedef struct {
    uint32_t magic;
    ModelState s;
} FmuState;

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

/* How far past stopTime a step may end. Built with -DSTRICT_STOP_TIME: not at all, not even by a
   rounding error, as some third-party FMUs (20-sim's) check it: a master that computes the last
   step's end as t + h with t = n h asks for 174.975 + 0.025 = 175.00000000000003 > 175. */
static double stop_time_slack(double stop) {
#ifdef STRICT_STOP_TIME
    (void)stop;
    return 0.0;
#else
    return time_tolerance(stop);
#endif
}

static fmi2Status unsupported(fmi2Component c, const char *function, const char *why) {
    GET_INSTANCE(c, function);
    return fail(inst, function, "not supported (%s)", why);
}

/* ========================================================================================== */
/* 2. FMI 2.0 functions                                                                       */
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
#ifdef MODEL_EXCHANGE
    if (fmuType != fmi2ModelExchange) {
        log_with(functions, instanceName, fmi2Error, "logStatusError",
                 "fmi2Instantiate: this build of %s supports model exchange only", MODEL_IDENTIFIER);
        return NULL;
    }
#else
    if (fmuType != fmi2CoSimulation) {
        log_with(functions, instanceName, fmi2Error, "logStatusError",
                 "fmi2Instantiate: %s supports co-simulation only", MODEL_IDENTIFIER);
        return NULL;
    }
#endif
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
    inst->model_exchange = fmuType == fmi2ModelExchange ? fmi2True : fmi2False;
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

/* the FMU state that *FMUstate points to, to be overwritten, or a new one if it is NULL */
static FmuState *writable_state(Instance *inst, const char *fn, fmi2FMUstate *FMUstate) {
    FmuState *st;
    if (*FMUstate) {
        /* overwrite a state this FMU created before */
        return checked_state(inst, fn, *FMUstate);
    }
    st = (FmuState *)allocate(&inst->functions, 1, sizeof(FmuState));
    if (!st) {
        fail(inst, fn, "out of memory");
        return NULL;
    }
    memset(st, 0, sizeof(*st));
    st->magic = FMU_STATE_MAGIC;
    *FMUstate = st;
    return st;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
    const char *fn = "fmi2GetFMUstate";
    FmuState *st;
    GET_INSTANCE(c, fn);
    if (!FMUstate) return fail(inst, fn, "FMUstate is NULL");
    if (!(st = writable_state(inst, fn, FMUstate))) return fmi2Error;
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

/* serialized form: SERIAL_TAG, then what the model's serialize_state writes */
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size) {
    const char *fn = "fmi2SerializeFMUstate";
    FmuState *st;
    char *p = (char *)serializedState;
    GET_INSTANCE(c, fn);
    if (!(st = checked_state(inst, fn, FMUstate))) return fmi2Error;
    if (!serializedState) return fail(inst, fn, "serializedState is NULL");
    if (size < SERIAL_SIZE) return fail(inst, fn, "buffer of %u bytes is too small (need %u)", (unsigned)size, (unsigned)SERIAL_SIZE);
    memcpy(p, SERIAL_TAG, sizeof(SERIAL_TAG));
    serialize_state(&st->s, p + sizeof(SERIAL_TAG));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size, fmi2FMUstate *FMUstate) {
    const char *fn = "fmi2DeSerializeFMUstate";
    ModelState s;
    FmuState *st;
    const char *p = (const char *)serializedState, *why;
    GET_INSTANCE(c, fn);
    if (!FMUstate) return fail(inst, fn, "FMUstate is NULL");
    if (!serializedState) return fail(inst, fn, "serializedState is NULL");
    if (size != SERIAL_SIZE || memcmp(p, SERIAL_TAG, sizeof(SERIAL_TAG)) != 0)
        return fail(inst, fn, "not a serialized %s state (%u bytes)", MODEL_IDENTIFIER, (unsigned)size);
    if ((why = deserialize_state(p + sizeof(SERIAL_TAG), &s)) != NULL) return fail(inst, fn, "%s", why);
    if (!(st = writable_state(inst, fn, FMUstate))) return fmi2Error;
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
    char state[256];
    GET_INSTANCE(c, fn);
    (void)noSetFMUStatePriorToCurrentPoint;
    if (inst->model_exchange) return fail(inst, fn, "not allowed for a model-exchange instance");
    if (require_mode(inst, fn, IN(MODE_STEP_COMPLETE)) != fmi2OK) return fmi2Error;
    if (!isfinite(t) || fabs(t - inst->s.time) > time_tolerance(inst->s.time))
        return fail(inst, fn, "currentCommunicationPoint = %.17g but the FMU is at t = %.17g", t, inst->s.time);
    if (!(h > 0.0) || !isfinite(h)) return fail(inst, fn, "communicationStepSize = %g must be > 0", h);
    if (inst->s.stop_time_defined && t + h > inst->s.stop_time + stop_time_slack(inst->s.stop_time))
        return fail(inst, fn, "step to t = %.17g goes past stopTime = %.17g", t + h, inst->s.stop_time);
#ifdef MAX_COMMUNICATION_STEP
    /* built to stand for an FMU whose solver cannot take long steps: it discards them, unchanged */
    if (h > MAX_COMMUNICATION_STEP * (1.0 + 1e-9)) {
        log_with(&inst->functions, inst->instance_name, fmi2Discard, "logStatusError",
                 "%s: communicationStepSize = %g is longer than the %g s this FMU can take: step discarded",
                 fn, h, (double)MAX_COMMUNICATION_STEP);
        return fmi2Discard;
    }
#endif
    n = ceil(h / model_max_substep(&inst->s) * (1.0 - SUBSTEP_SLACK));
    if (n > MAX_SUBSTEPS_PER_STEP)
        return fail(inst, fn, "communicationStepSize = %g needs more than %.0f sub-steps", h, MAX_SUBSTEPS_PER_STEP);
    steps = n < 1.0 ? 1ul : (unsigned long)n;
    dt = h / (double)steps;
    for (i = 0; i < steps; i++) model_substep(&inst->s, t + (double)i * dt, dt);
    if (!state_is_finite(&inst->s)) {
        describe_state(&inst->s, state, sizeof(state));
        return fail(inst, fn, "the solution diverged at t = %.17g (%s)", t + h, state);
    }
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

/* Statuses are only meaningful after fmi2Pending or fmi2Discard (returned only by a build with
 * MAX_COMMUNICATION_STEP); the two that a master may ask for after a step are answered, the rest are
 * not available. */
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

/* ---- model exchange ---- */

#ifdef MODEL_EXCHANGE
/* Built with MODEL_EXCHANGE the model has N_CONTINUOUS states at model_states(s) and their
 * derivatives from model_derivatives(s, dx) at s->time; no event indicators and no time events.
 * After initialization the instance stays in MODE_STEP_COMPLETE, which stands for event and
 * continuous-time mode alike (values may be got and set in both). */

#define ME_GET_INSTANCE(fn)                                                                          \
    GET_INSTANCE(c, fn);                                                                             \
    if (!inst->model_exchange) return fail(inst, fn, "not allowed for a co-simulation instance")

fmi2Status fmi2EnterEventMode(fmi2Component c) {
    ME_GET_INSTANCE("fmi2EnterEventMode");
    return require_mode(inst, "fmi2EnterEventMode", IN(MODE_STEP_COMPLETE));
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo) {
    ME_GET_INSTANCE("fmi2NewDiscreteStates");
    if (!eventInfo) return fail(inst, "fmi2NewDiscreteStates", "eventInfo is NULL");
    memset(eventInfo, 0, sizeof(*eventInfo));
    return require_mode(inst, "fmi2NewDiscreteStates", IN(MODE_STEP_COMPLETE));
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    ME_GET_INSTANCE("fmi2EnterContinuousTimeMode");
    return require_mode(inst, "fmi2EnterContinuousTimeMode", IN(MODE_STEP_COMPLETE));
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    char state[256];
    ME_GET_INSTANCE("fmi2CompletedIntegratorStep");
    (void)noSetFMUStatePriorToCurrentPoint;
    if (!enterEventMode || !terminateSimulation) return fail(inst, "fmi2CompletedIntegratorStep", "NULL argument");
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    if (!state_is_finite(&inst->s)) {
        describe_state(&inst->s, state, sizeof(state));
        return fail(inst, "fmi2CompletedIntegratorStep", "the solution diverged at t = %.17g (%s)", inst->s.time,
                    state);
    }
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    ME_GET_INSTANCE("fmi2SetTime");
    if (!isfinite(time)) return fail(inst, "fmi2SetTime", "time %g is not finite", time);
    inst->s.time = time;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    size_t i;
    ME_GET_INSTANCE("fmi2SetContinuousStates");
    if (nx != N_CONTINUOUS || !x) return fail(inst, "fmi2SetContinuousStates", "nx = %u, expected %u", (unsigned)nx,
                                              (unsigned)N_CONTINUOUS);
    for (i = 0; i < nx; i++) model_states(&inst->s)[i] = x[i];
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx) {
    ME_GET_INSTANCE("fmi2GetDerivatives");
    if (nx != N_CONTINUOUS || !derivatives) return fail(inst, "fmi2GetDerivatives", "nx = %u, expected %u",
                                                        (unsigned)nx, (unsigned)N_CONTINUOUS);
    model_derivatives(&inst->s, derivatives);
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni) {
    ME_GET_INSTANCE("fmi2GetEventIndicators");
    (void)eventIndicators;
    if (ni != 0) return fail(inst, "fmi2GetEventIndicators", "ni = %u, the model has none", (unsigned)ni);
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    size_t i;
    ME_GET_INSTANCE("fmi2GetContinuousStates");
    if (nx != N_CONTINUOUS || !x) return fail(inst, "fmi2GetContinuousStates", "nx = %u, expected %u", (unsigned)nx,
                                              (unsigned)N_CONTINUOUS);
    for (i = 0; i < nx; i++) x[i] = model_states(&inst->s)[i];
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
    size_t i;
    ME_GET_INSTANCE("fmi2GetNominalsOfContinuousStates");
    if (nx != N_CONTINUOUS || !x_nominal) return fail(inst, "fmi2GetNominalsOfContinuousStates", "nx = %u",
                                                      (unsigned)nx);
    for (i = 0; i < nx; i++) x_nominal[i] = 1.0;
    return fmi2OK;
}

#else /* co-simulation only */

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

#endif /* MODEL_EXCHANGE */
