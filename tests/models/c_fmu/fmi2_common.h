/*
 * fmi2_common.h: the types that the plain-C FMI 2.0 co-simulation test FMUs (oscillator.c,
 * third_party_ship.c) declare their model with. The FMI 2.0 functions themselves, which do not
 * depend on the model, are in fmi2_common.c.
 *
 * A model file is laid out as
 *
 *     #define MODEL_IDENTIFIER "..."     (the modelIdentifier, for log messages)
 *     #define MODEL_GUID "{...}"         (must equal the guid attribute of its modelDescription)
 *     #include "fmi2_common.h"
 *     ... the model: ModelState, VARIABLES, the equations and the hooks listed in fmi2_common.c ...
 *     #include "fmi2_common.c"
 *
 * The FMU is still built from one C file: the build (tests/models/c_fmu/build.py) expands these two
 * includes into the source it compiles and ships as sources/<model>.c, so that an FMU's sources
 * compile on their own.
 */
#ifndef FMI2_COMMON_H
#define FMI2_COMMON_H

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

/* A communication step h is split into n = ceil(h / max_substep * (1 - SUBSTEP_SLACK)) equal
 * sub-steps. The slack keeps a step that arrives as max_substep plus round-off of the master's
 * time arithmetic (t_next - t, which is off by some ulp of t) from being split in two; the
 * sub-step is then at most max_substep / (1 - SUBSTEP_SLACK), i.e. max_substep to within 1 ppm. */
#define SUBSTEP_SLACK 1e-6
/* refuse communication steps that would need more sub-steps than this (a master bug, not a
 * long simulation: 1e8 sub-steps of 1 ms are 1e5 s of simulated time in one step) */
#define MAX_SUBSTEPS_PER_STEP 100000000.0

/* the FMI 2.0 co-simulation state machine */
typedef enum {
    MODE_INSTANTIATED = 1,
    MODE_INITIALIZATION = 2,
    MODE_STEP_COMPLETE = 3,
    MODE_TERMINATED = 4,
    MODE_ERROR = 5
} Mode;

typedef enum { CAUSALITY_INDEPENDENT, CAUSALITY_PARAMETER, CAUSALITY_INPUT, CAUSALITY_OUTPUT, CAUSALITY_CONSTANT,
               CAUSALITY_LOCAL } Causality;

/* one Real variable of the model (the FMUs have no Integer, Boolean or String variables) */
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

#endif /* FMI2_COMMON_H */
