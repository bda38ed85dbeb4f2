/*
 * typed_fmi2.c: two small plain-C FMI 2.0 co-simulation FMUs with variables of every FMI 2.0 type,
 * written after the Reference FMUs of the Modelica Association (modelica/Reference-FMUs) to test
 * the master as an FMI importer without them:
 *
 *   Feedthrough (default): every input copied to its output at once (direct feedthrough),
 *       vr  name                 type         causality
 *       1   real_in              Real         input      -> 2 real_out
 *       3   real_parameter       Real         parameter (tunable)
 *       1   int_in               Integer      input      -> 2 int_out
 *       3   enum_in              Enumeration  input      -> 4 enum_out
 *       1   bool_in              Boolean      input      -> 2 bool_out
 *       1   string_in            String       input      -> 2 string_out
 *   Stair (-DSTAIR): an Integer counter that counts the seconds from 1 and, like the Reference FMU
 *       Stair, asks to end the simulation at t = 9 s: doStep returns fmi2Discard and
 *       fmi2GetBooleanStatus(fmi2Terminated) is true.
 *       vr  name     type     causality
 *       1   counter  Integer  output
 *
 * Value references are unique per type only (FMI 2.0 section 2.2.7), as here on purpose.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#ifdef STAIR
#define MODEL_GUID "{4f0a7d1e-7b3c-4c4e-9a55-1f2d3c4b5a6f}"
#else
#define MODEL_GUID "{9b8d2a61-3f4e-4d2a-8c1b-7e6f5a4b3c2d}"
#endif

typedef struct {
    fmi2CallbackFunctions cb;
    fmi2String name;
    double time;
    double real_in, real_parameter;
    int int_in, enum_in, bool_in;
    char string_in[256];
    int counter;
    int terminated;
} Instance;

static void say(Instance *m, fmi2Status status, const char *message) {
    if (m->cb.logger) m->cb.logger(m->cb.componentEnvironment, m->name, status, "logError", message);
}

static void clear(Instance *m) {
    m->time = 0.0;
    m->real_in = 0.0;
    m->real_parameter = 1.0;
    m->int_in = 0;
    m->enum_in = 1;
    m->bool_in = 0;
    strcpy(m->string_in, "");
    m->counter = 1;
    m->terminated = 0;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }
fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    (void)c; (void)on; (void)n; (void)cats;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible, fmi2Boolean logging) {
    Instance *m;
    (void)resources; (void)visible; (void)logging;
    if (type != fmi2CoSimulation || !guid || strcmp(guid, MODEL_GUID) != 0) return NULL;
    m = (Instance *)calloc(1, sizeof(Instance));
    if (!m) return NULL;
    m->cb = *functions;
    m->name = name;
    clear(m);
    return m;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    (void)tol_defined; (void)tol; (void)stop_defined; (void)stop;
    ((Instance *)c)->time = start;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { clear((Instance *)c); return fmi2OK; }

static fmi2Status unknown(Instance *m, const char *what) {
    say(m, fmi2Error, what);
    return fmi2Error;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
        switch (vr[i]) {
#ifndef STAIR
        case 1: value[i] = m->real_in; break;
        case 2: value[i] = m->real_in; break;
        case 3: value[i] = m->real_parameter; break;
#endif
        default: return unknown(m, "getReal: unknown value reference");
        }
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
        switch (vr[i]) {
#ifdef STAIR
        case 1: value[i] = m->counter; break;
#else
        case 1: case 2: value[i] = m->int_in; break;
        case 3: case 4: value[i] = m->enum_in; break;
#endif
        default: return unknown(m, "getInteger: unknown value reference");
        }
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1 || vr[i] == 2) { value[i] = m->bool_in; continue; }
#endif
        return unknown(m, "getBoolean: unknown value reference");
    }
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1 || vr[i] == 2) { value[i] = m->string_in; continue; }
#endif
        return unknown(m, "getString: unknown value reference");
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1) { m->real_in = value[i]; continue; }
        if (vr[i] == 3) { m->real_parameter = value[i]; continue; }
#endif
        return unknown(m, "setReal: not an input or parameter");
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1) { m->int_in = value[i]; continue; }
        if (vr[i] == 3) {
            if (value[i] < 1 || value[i] > 3) return unknown(m, "setInteger: enum_in must be 1, 2 or 3");
            m->enum_in = value[i];
            continue;
        }
#endif
        return unknown(m, "setInteger: not an input");
    }
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1) { m->bool_in = value[i] ? 1 : 0; continue; }
#endif
        return unknown(m, "setBoolean: not an input");
    }
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String value[]) {
    Instance *m = (Instance *)c;
    size_t i;
    (void)vr; (void)value;  /* unused in one of the two models */
    for (i = 0; i < n; i++) {
#ifndef STAIR
        if (vr[i] == 1 && value[i] && strlen(value[i]) < sizeof(m->string_in)) {
            strcpy(m->string_in, value[i]);
            continue;
        }
#endif
        return unknown(m, "setString: not an input, or longer than 255 characters");
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
    Instance *m = (Instance *)c;
    (void)no_prior;
#ifdef STAIR
    /* the counter steps up at every whole second; at t = 9 s the model asks to stop */
    if (t + h > 9.0 - 1e-9) {
        m->time = 9.0;
        m->counter = 9;
        m->terminated = 1;
        return fmi2Discard;
    }
    m->time = t + h;
    m->counter = 1 + (int)floor(m->time + 1e-9);
#else
    m->time = t + h;
#endif
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    (void)c; (void)s; *value = fmi2OK;
    return fmi2OK;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *value = ((Instance *)c)->time;
    return fmi2OK;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    (void)c; (void)s; (void)value;
    return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    if (s != fmi2Terminated) return fmi2Discard;
    *value = ((Instance *)c)->terminated ? fmi2True : fmi2False;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    (void)c; (void)s; (void)value;
    return fmi2Discard;
}

/* not supported: no FMU state, no derivatives */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n) {
    (void)c; (void)s; (void)n;
    return fmi2Error;
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n) {
    (void)c; (void)s; (void)b; (void)n;
    return fmi2Error;
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s) {
    (void)c; (void)b; (void)n; (void)s;
    return fmi2Error;
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz, const fmi2Real dv[], fmi2Real dz[]) {
    (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;
    return fmi2Error;
}
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    (void)c; (void)vr; (void)n; (void)order; (void)value;
    return fmi2Error;
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[]) {
    (void)c; (void)vr; (void)n; (void)order; (void)value;
    return fmi2Error;
}
