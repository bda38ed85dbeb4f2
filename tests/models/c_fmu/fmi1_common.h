/*
 * fmi1_common.h: the FMI 1.0 co-simulation declarations (fmiPlatformTypes.h and fmiFunctions.h of the
 * standard, written out, so no other header is needed) and the types that the plain-C FMI 1.0 test
 * FMUs (oscillator_fmi1.c, manoeuvring_ship_fmi1.c) declare their model with. The FMI 1.0 functions
 * themselves, which do not depend on the model, are in fmi1_common.c.
 *
 * A model file is laid out as
 *
 *     #define MODEL_IDENTIFIER Name             (the modelIdentifier as a token: exported names are
 *                                               Name_fmiDoStep, ...)
 *     #define MODEL_IDENTIFIER_STRING "Name"
 *     #define MODEL_GUID "{...}"               (must equal the guid attribute of its modelDescription)
 *     #include "fmi1_common.h"
 *     ... the model: ModelState, VARIABLES, the equations and the hooks listed in fmi1_common.c ...
 *     #include "fmi1_common.c"
 *
 * The build (tests/models/c_fmu/build.py) expands these includes into the one source it compiles.
 */
#ifndef FMI1_COMMON_H
#define FMI1_COMMON_H

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


/* A communication step h is split into n = ceil(h / max_substep * (1 - SUBSTEP_SLACK)) equal
 * sub-steps: the slack keeps a step of max_substep plus the round-off of the master's time
 * arithmetic from being split in two (fmi2_common.h says more) */
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

#endif /* FMI1_COMMON_H */
