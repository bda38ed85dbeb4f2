/*
 * fmi2_host.c -- a minimal FMI 2.0 co-simulation importer with no Python in it, as a C or C++
 * simulation tool would be. Used by tests/test_fmu_c_host.py to prove that our FMUs run in hosts
 * that have no Python of their own and without LD_PRELOAD.
 *
 *   fmi2_host FMU_DIR MODEL_ID GUID STOP STEP OUT_VRS [set:VR=VALUE ...] [nan:VR]
 *
 * FMU_DIR is the extracted FMU. OUT_VRS is a comma-separated list of Real value references printed
 * at every communication point as "t v1 v2 ...". "set:" sets a Real before initialisation;
 * "nan:VR" sets that input to NaN after initialisation and prints the status fmiSetReal returned.
 * Exits non-zero (with the reason on stderr) on any unexpected status.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    va_list args;
    va_start(args, message);
    fprintf(stderr, "[%s|%d|%s] ", name ? name : "?", (int)status, category ? category : "");
    vfprintf(stderr, message, args);
    fprintf(stderr, "\n");
    va_end(args);
}

#define LOAD(name)                                                                                \
    name##TYPE *name = (name##TYPE *)dlsym(lib, #name);                                           \
    if (!name) { fprintf(stderr, "missing symbol %s\n", #name); return 2; }

#define CHECK(call)                                                                               \
    do {                                                                                          \
        fmi2Status s_ = (call);                                                                   \
        if (s_ > fmi2Warning) { fprintf(stderr, "%s returned %d\n", #call, (int)s_); return 3; } \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s FMU_DIR MODEL_ID GUID STOP STEP OUT_VRS [set:VR=VALUE ...] [nan:VR]\n", argv[0]);
        return 1;
    }
    const char *dir = argv[1], *model = argv[2], *guid = argv[3];
    double stop = atof(argv[4]), step = atof(argv[5]);

    char path[4096];
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", dir, model);
    /* RTLD_LOCAL as real hosts do: nothing the FMU loads becomes visible to the host */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen failed: %s\n", dlerror()); return 2; }

    LOAD(fmi2Instantiate) LOAD(fmi2SetupExperiment) LOAD(fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationMode) LOAD(fmi2DoStep) LOAD(fmi2GetReal) LOAD(fmi2SetReal)
    LOAD(fmi2Terminate) LOAD(fmi2FreeInstance) LOAD(fmi2GetVersion)

    if (strcmp(fmi2GetVersion(), "2.0") != 0) { fprintf(stderr, "bad version\n"); return 2; }

    fmi2ValueReference outs[256];
    size_t n_out = 0;
    for (char *tok = strtok(argv[6], ","); tok && n_out < 256; tok = strtok(NULL, ",")) outs[n_out++] = (fmi2ValueReference)atol(tok);

    char uri[4200];
    snprintf(uri, sizeof uri, "file://%s/resources", dir);
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host_instance", fmi2CoSimulation, guid, uri, &callbacks, fmi2False, fmi2False);
    if (!c) { fprintf(stderr, "fmi2Instantiate returned NULL\n"); return 3; }

    long nan_vr = -1;
    for (int i = 7; i < argc; ++i) {
        if (strncmp(argv[i], "set:", 4) == 0) {
            fmi2ValueReference vr = (fmi2ValueReference)atol(argv[i] + 4);
            fmi2Real value = atof(strchr(argv[i], '=') + 1);
            CHECK(fmi2SetReal(c, &vr, 1, &value));
        } else if (strncmp(argv[i], "nan:", 4) == 0) {
            nan_vr = atol(argv[i] + 4);
        }
    }
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, stop));
    CHECK(fmi2EnterInitializationMode(c));
    CHECK(fmi2ExitInitializationMode(c));

    if (nan_vr >= 0) {
        fmi2ValueReference vr = (fmi2ValueReference)nan_vr;
        fmi2Real value = NAN;
        printf("setReal-nan-status %d\n", (int)fmi2SetReal(c, &vr, 1, &value));
    }

    fmi2Real values[256];
    long n_steps = lround(stop / step);
    for (long k = 0; k <= n_steps; ++k) {
        double t = k * step;
        CHECK(fmi2GetReal(c, outs, n_out, values));
        printf("%.17g", t);
        for (size_t i = 0; i < n_out; ++i) printf(" %.17g", values[i]);
        printf("\n");
        if (k < n_steps) CHECK(fmi2DoStep(c, t, step, fmi2True));
    }
    CHECK(fmi2Terminate(c));
    fmi2FreeInstance(c);
    return 0;
}
