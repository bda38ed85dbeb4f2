/*
 * Oscillator1: the Oscillator test model (oscillator.c) as a stand-alone FMI 1.0 co-simulation
 * FMU ("CoSimulation_StandAlone"), written in plain C.
 *
 * It lets the marine-cosim tests show that the co-simulation master runs FMI 1.0 FMUs, alone and
 * mixed with FMI 2.0 ones. It is built from this one file with gcc (the build expands into it the
 * model it shares with oscillator.c, oscillator_model.h, and the FMI 1.0 declarations and functions
 * it shares with the other FMI 1.0 test FMUs, fmi1_common.h/.c), so no other header is needed.
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
 * The calling sequence it accepts (parameters before fmiInitializeSlave, the input F also after,
 * newStep = fmiFalse repeating the last step) is fmi1_common.c's.
 *
 * All instance data lives in the instance struct (no globals), so any number of instances can
 * run side by side in one process.
 */

/* exported names are Oscillator1_fmiDoStep, ... */
#define MODEL_IDENTIFIER Oscillator1
#define MODEL_IDENTIFIER_STRING "Oscillator1"
/* must equal the guid attribute in modelDescription_fmi1.xml */
#define MODEL_GUID "{9988314f-4e68-49b6-a822-c2a8c43312d7}"

/* the FMI 1.0 declarations and the types of a model (Mode, Variable, ...); the FMI 1.0 functions are
 * in fmi1_common.c, included at the end; the build expands both into the one shipped source */
#include "fmi1_common.h"

/* ========================================================================================== */
/* 1. The model                                                                               */
/* ========================================================================================== */

/* ModelState, the equations and the value references, shared with the FMI 2.0 Oscillator
 * (oscillator.c); expanded into this file by the build */
#include "oscillator_model.h"

static const Variable VARIABLES[] = {OSCILLATOR_VARIABLES};
#define N_VARIABLES (sizeof(VARIABLES) / sizeof(VARIABLES[0]))

/* ---- the hooks of fmi1_common.c ---- */

static double model_max_substep(const ModelState *s) {
    (void)s;
    return MAX_SUBSTEP;
}

static void model_substep(ModelState *s, double t, double dt) {
    (void)t;
    rk4_step(s, dt);
}

/* ========================================================================================== */
/* 2. The FMI 1.0 functions                                                                   */
/* ========================================================================================== */

#include "fmi1_common.c"
