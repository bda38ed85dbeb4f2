/*
 * pythonfmu_loader.c -- the FMI 2.0 binary of every marine-cosim FMU on Linux.
 *
 * Why this exists: pythonfmu's libpythonfmu-export.so does not link libpython. It expects the
 * Python C API to be already present in the process, which holds when the host is Python (FMPy)
 * but not in a C or C++ host (libcosim, OMSimulator, Simulink, ...): dlopen() then fails with
 * "undefined symbol: _Py_NoneStruct" unless the user sets LD_PRELOAD (pythonfmu issues #192, #202).
 *
 * This loader is what the host dlopen()s as binaries/linux64/<modelIdentifier>.so. On the first
 * fmi2Instantiate it
 *   1. makes the Python C API globally visible: if the process already has it (a Python host) it
 *      is used as is; otherwise libpython is dlopen()ed with RTLD_GLOBAL, so that pythonfmu and
 *      the numpy/scipy extension modules (which are not linked against libpython either) resolve
 *      against it;
 *   2. initialises the interpreter, if nobody has, with PyConfig.program_name set to the Python
 *      executable of the environment the FMU was built in, so that environment's site-packages
 *      (numpy, scipy) are found exactly as if that python had been started; then releases the GIL;
 *   3. dlopen()s pythonfmu's real binary (binaries/linux64/pythonfmu-export.so) and forwards
 *      every FMI function to it.
 * The executable and libpython come from resources/python_env.txt (written by build_fmus.py), or
 * from the environment variables MARINE_COSIM_PYTHON and MARINE_COSIM_LIBPYTHON, which win.
 *
 * It also fixes the status of a call: pythonfmu reports a bad input only through the logger (the
 * Python API of pythonfmu cannot return fmi2Error), so a call returns the worst of the status its
 * inner function returned and the statuses logged during it. A Python adapter that logs an
 * error therefore makes the call return fmi2Error, as the FMI standard expects.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fmi2Functions.h"

/* ---- Python C API, resolved at run time (this library must not need libpython to load) ---- */

typedef int (*Py_IsInitialized_t)(void);
typedef void (*PyConfig_InitPythonConfig_t)(PyConfig *);
typedef PyStatus (*PyConfig_SetBytesString_t)(PyConfig *, wchar_t **, const char *);
typedef PyStatus (*Py_InitializeFromConfig_t)(const PyConfig *);
typedef void (*PyConfig_Clear_t)(PyConfig *);
typedef int (*PyStatus_Exception_t)(PyStatus);
typedef PyThreadState *(*PyEval_SaveThread_t)(void);

/* ---- the forwarded FMI functions ---- */

#define FMI2_FUNCTIONS(X)                                                                        \
    X(fmi2SetDebugLogging) X(fmi2Instantiate) X(fmi2FreeInstance) X(fmi2SetupExperiment)         \
    X(fmi2EnterInitializationMode) X(fmi2ExitInitializationMode) X(fmi2Terminate) X(fmi2Reset)   \
    X(fmi2GetReal) X(fmi2GetInteger) X(fmi2GetBoolean) X(fmi2GetString) X(fmi2SetReal)           \
    X(fmi2SetInteger) X(fmi2SetBoolean) X(fmi2SetString) X(fmi2GetFMUstate) X(fmi2SetFMUstate)   \
    X(fmi2FreeFMUstate) X(fmi2SerializedFMUstateSize) X(fmi2SerializeFMUstate)                   \
    X(fmi2DeSerializeFMUstate) X(fmi2GetDirectionalDerivative) X(fmi2SetRealInputDerivatives)    \
    X(fmi2GetRealOutputDerivatives) X(fmi2DoStep) X(fmi2CancelStep) X(fmi2GetStatus)             \
    X(fmi2GetRealStatus) X(fmi2GetIntegerStatus) X(fmi2GetBooleanStatus) X(fmi2GetStringStatus)

#define DECLARE_POINTER(name) static name##TYPE *inner_##name = NULL;
FMI2_FUNCTIONS(DECLARE_POINTER)

/* pythonfmu 0.7.0 keeps a static std::shared_ptr<PyState>, destroyed at exit by its atexit
 * destructor and then assigned again by its ELF destructor (finalizePythonInterpreter): a
 * use-after-free that corrupts the heap at process exit in C hosts (valgrind: "Invalid read in
 * finalizePythonInterpreter"). Calling finalizePythonInterpreter ourselves right after each
 * instantiation empties that static while nothing can race it, so both exit-time paths find it
 * empty. It is harmless here because the interpreter is never owned by pythonfmu's PyState:
 * either the host or this loader initialised Python before pythonfmu saw it. */
typedef void finalizePythonInterpreterTYPE(void);
static finalizePythonInterpreterTYPE *inner_release_py_state = NULL;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t instantiate_lock = PTHREAD_MUTEX_INITIALIZER;
static void *inner_handle = NULL;
static char load_error[4096] = "";

/* One per instance: the host sees a pointer to this, the inner FMU sees our callbacks. */
typedef struct {
    fmi2Component inner;
    fmi2CallbackFunctions host;   /* copy of the host's callbacks */
    fmi2CallbackFunctions ours;   /* logger replaced, environment = this wrapper */
    fmi2Status worst_logged;      /* worst status logged since the current call began */
    fmi2Boolean host_logging_on;  /* what the host asked for; the inner FMU always logs to us */
} Wrapper;

static void wrapper_logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                           fmi2String category, fmi2String message, ...) {
    /* pythonfmu (cppfmu) hands every message over as the format string with no arguments, and the
     * text comes from Python: a '%' in it ("5 % shorter") must not be read as a conversion (it
     * would read arguments that were never passed: a crash). So the text is taken literally. */
    Wrapper *w = (Wrapper *)env;
    const char *text = message ? message : "";
    if (status > w->worst_logged && status != fmi2Pending) w->worst_logged = status;
    /* warnings and errors always reach the host; the rest only if it asked for logging */
    int forward = w->host_logging_on || (status != fmi2OK && status != fmi2Pending);
    if (forward && w->host.logger) {
        /* The text goes as the format string, because hosts written with ctypes (FMPy) cannot read
         * variadic arguments; '%' is doubled so printf-style hosts print it literally. */
        size_t percents = 0, len = strlen(text);
        for (size_t i = 0; i < len; ++i) percents += text[i] == '%';
        char *escaped = percents ? malloc(len + percents + 1) : (char *)text;
        if (escaped && percents) {
            size_t j = 0;
            for (size_t i = 0; i < len; ++i) { escaped[j++] = text[i]; if (text[i] == '%') escaped[j++] = '%'; }
            escaped[j] = 0;
        }
        w->host.logger(w->host.componentEnvironment, instance, status, category, escaped ? escaped : "(out of memory)");
        if (escaped && escaped != text) free(escaped);
    }
}

static void host_log(const fmi2CallbackFunctions *cb, fmi2String instance, fmi2Status status,
                     const char *message) {
    if (cb && cb->logger) cb->logger(cb->componentEnvironment, instance, status, "logStatusFatal", "%s", message);
    else fprintf(stderr, "[%s] %s\n", instance ? instance : "marine-cosim", message);
}

/* ---- locating files ---- */

static int uri_to_path(const char *uri, char *out, size_t size) {
    const char *p = uri;
    if (strncmp(p, "file://", 7) == 0) {
        p += 7;
        /* file://host/path: skip an authority such as "localhost" */
        if (*p != '/') { p = strchr(p, '/'); if (!p) return -1; }
    } else if (strncmp(p, "file:", 5) == 0) {
        p += 5;
    }
    size_t j = 0;
    for (; *p && j + 1 < size; ++p) {
        if (p[0] == '%' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            out[j++] = (char)strtol(hex, NULL, 16);
            p += 2;
        } else {
            out[j++] = *p;
        }
    }
    out[j] = 0;
    while (j > 1 && out[j - 1] == '/') out[--j] = 0;
    return 0;
}

/* Reads "key=value" from resources/python_env.txt; returns 0 if found. */
static int read_env_file(const char *resources, const char *key, char *value, size_t size) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/python_env.txt", resources);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[PATH_MAX + 64];
    size_t klen = strlen(key);
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
            char *v = line + klen + 1;
            v[strcspn(v, "\r\n")] = 0;
            snprintf(value, size, "%s", v);
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

static int setting(const char *resources, const char *env_name, const char *key, char *value, size_t size) {
    const char *from_env = getenv(env_name);
    if (from_env && *from_env) { snprintf(value, size, "%s", from_env); return 0; }
    return read_env_file(resources, key, value, size);
}

/* ---- loading Python and pythonfmu's binary, once per process (per copy of this library) ---- */

static int ensure_python(const char *resources) {
    Py_IsInitialized_t is_initialized = (Py_IsInitialized_t)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    void *lib = RTLD_DEFAULT;
    if (!is_initialized) {
        char libpython[PATH_MAX];
        if (setting(resources, "MARINE_COSIM_LIBPYTHON", "libpython", libpython, sizeof libpython) != 0) {
            snprintf(load_error, sizeof load_error,
                     "no libpython configured: set MARINE_COSIM_LIBPYTHON or rebuild the FMU with build_fmus.py "
                     "(resources '%s' has no python_env.txt)", resources);
            return -1;
        }
        lib = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL);
        if (!lib) {
            snprintf(load_error, sizeof load_error,
                     "cannot load libpython '%s' (%s); set MARINE_COSIM_LIBPYTHON to the libpython%d.%d "
                     "shared library of a Python that has numpy and scipy",
                     libpython, dlerror(), PY_MAJOR_VERSION, PY_MINOR_VERSION);
            return -1;
        }
        is_initialized = (Py_IsInitialized_t)dlsym(lib, "Py_IsInitialized");
        if (!is_initialized) {
            snprintf(load_error, sizeof load_error, "'%s' is not a libpython (no Py_IsInitialized)", libpython);
            return -1;
        }
    }
    if (is_initialized()) return 0;

    PyConfig_InitPythonConfig_t init_config = (PyConfig_InitPythonConfig_t)dlsym(lib, "PyConfig_InitPythonConfig");
    PyConfig_SetBytesString_t set_string = (PyConfig_SetBytesString_t)dlsym(lib, "PyConfig_SetBytesString");
    Py_InitializeFromConfig_t initialize = (Py_InitializeFromConfig_t)dlsym(lib, "Py_InitializeFromConfig");
    PyConfig_Clear_t clear = (PyConfig_Clear_t)dlsym(lib, "PyConfig_Clear");
    PyStatus_Exception_t failed = (PyStatus_Exception_t)dlsym(lib, "PyStatus_Exception");
    PyEval_SaveThread_t save_thread = (PyEval_SaveThread_t)dlsym(lib, "PyEval_SaveThread");
    if (!init_config || !set_string || !initialize || !clear || !failed || !save_thread) {
        snprintf(load_error, sizeof load_error, "the loaded libpython lacks the PyConfig API (Python >= 3.8 needed)");
        return -1;
    }

    char python[PATH_MAX];
    int have_python = setting(resources, "MARINE_COSIM_PYTHON", "python", python, sizeof python) == 0;

    PyConfig config;
    init_config(&config);
    /* A guest in someone else's process: leave its signals and stdio alone. */
    config.install_signal_handlers = 0;
    config.configure_c_stdio = 0;
    config.parse_argv = 0;
    config.user_site_directory = 0;
    PyStatus status = {0};
    if (have_python) {
        /* As if this python had been started: finds its venv (pyvenv.cfg) and site-packages. */
        status = set_string(&config, &config.program_name, python);
    }
    if (!failed(status)) status = initialize(&config);
    clear(&config);
    if (failed(status)) {
        snprintf(load_error, sizeof load_error, "Python initialisation failed (%s) for program '%s'",
                 status.err_msg ? status.err_msg : "unknown error", have_python ? python : "(default)");
        return -1;
    }
    /* Release the GIL: pythonfmu takes it with PyGILState_Ensure on every call, from any thread.
     * The interpreter is never finalised: numpy does not survive re-initialisation. */
    save_thread();
    return 0;
}

static int ensure_loaded(const char *resources) {
    pthread_mutex_lock(&load_lock);
    int rc = 0;
    if (inner_handle) goto done;
    if (ensure_python(resources) != 0) { rc = -1; goto done; }

    Dl_info info;
    if (!dladdr((void *)&ensure_loaded, &info) || !info.dli_fname) {
        snprintf(load_error, sizeof load_error, "cannot find the FMU binary's own path");
        rc = -1;
        goto done;
    }
    char inner_path[PATH_MAX];
    snprintf(inner_path, sizeof inner_path, "%s", info.dli_fname);
    char *slash = strrchr(inner_path, '/');
    size_t dir_len = slash ? (size_t)(slash - inner_path + 1) : 0;
    snprintf(inner_path + dir_len, sizeof inner_path - dir_len, "pythonfmu-export.so");
    void *handle = dlopen(inner_path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "cannot load '%s': %s", inner_path, dlerror());
        rc = -1;
        goto done;
    }
#define LOAD_POINTER(name)                                                                       \
    inner_##name = (name##TYPE *)dlsym(handle, #name);                                           \
    if (!inner_##name) {                                                                         \
        snprintf(load_error, sizeof load_error, "'%s' does not export " #name, inner_path);     \
        rc = -1;                                                                                 \
        goto done;                                                                               \
    }
    FMI2_FUNCTIONS(LOAD_POINTER)
    inner_release_py_state = (finalizePythonInterpreterTYPE *)dlsym(handle, "finalizePythonInterpreter");
    inner_handle = handle;
done:
    pthread_mutex_unlock(&load_lock);
    return rc;
}

/* ---- FMI 2.0 API ---- */

#define W ((Wrapper *)c)
#define BEGIN_CALL(c) if (!(c)) return fmi2Error; W->worst_logged = fmi2OK
#define FINISH(status) ((W->worst_logged > (status) && (W->worst_logged == fmi2Error || W->worst_logged == fmi2Fatal \
                          || W->worst_logged == fmi2Warning)) ? W->worst_logged : (status))

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String guid,
                              fmi2String resourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    char resources[PATH_MAX] = ".";
    if (resourceLocation) uri_to_path(resourceLocation, resources, sizeof resources);
    if (ensure_loaded(resources) != 0) {
        char message[sizeof load_error + 64];
        snprintf(message, sizeof message, "marine-cosim FMU loader: %s", load_error);
        host_log(functions, instanceName, fmi2Fatal, message);
        return NULL;
    }
    Wrapper *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (functions) w->host = *functions;
    w->ours = w->host;
    w->ours.logger = wrapper_logger;
    w->ours.componentEnvironment = w;
    w->host_logging_on = loggingOn;
    pthread_mutex_lock(&instantiate_lock);
    /* Inner logging always on: an error is only visible to us through the logger. */
    w->inner = inner_fmi2Instantiate(instanceName, fmuType, guid, resourceLocation, &w->ours, visible, fmi2True);
    if (inner_release_py_state) inner_release_py_state();
    pthread_mutex_unlock(&instantiate_lock);
    if (!w->inner) { free(w); return NULL; }
    return w;
}

void fmi2FreeInstance(fmi2Component c) {
    if (!c) return;
    inner_fmi2FreeInstance(W->inner);
    free(c);
}

/* Forwarders: each resets the logged status, calls the inner FMU and folds the two together. */
#define FORWARD(name, params, args)                                                              \
    fmi2Status name params {                                                                     \
        BEGIN_CALL(c);                                                                           \
        fmi2Status s = inner_##name args;                                                        \
        return FINISH(s);                                                                        \
    }

/* Not forwarded: the inner FMU must keep logging errors to us; we filter for the host instead. */
fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    if (!c) return fmi2Error;
    W->host_logging_on = on;
    return fmi2OK;
}

FORWARD(fmi2SetupExperiment, (fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start, fmi2Boolean stopDef, fmi2Real stop),
        (W->inner, tolDef, tol, start, stopDef, stop))
FORWARD(fmi2EnterInitializationMode, (fmi2Component c), (W->inner))
FORWARD(fmi2ExitInitializationMode, (fmi2Component c), (W->inner))
FORWARD(fmi2Terminate, (fmi2Component c), (W->inner))
FORWARD(fmi2Reset, (fmi2Component c), (W->inner))
FORWARD(fmi2GetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]), (W->inner, vr, n, v))
FORWARD(fmi2GetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]), (W->inner, vr, n, v))
FORWARD(fmi2GetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]), (W->inner, vr, n, v))
FORWARD(fmi2GetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]), (W->inner, vr, n, v))
FORWARD(fmi2SetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]), (W->inner, vr, n, v))
FORWARD(fmi2SetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]), (W->inner, vr, n, v))
FORWARD(fmi2SetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]), (W->inner, vr, n, v))
FORWARD(fmi2SetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]), (W->inner, vr, n, v))
FORWARD(fmi2GetFMUstate, (fmi2Component c, fmi2FMUstate *state), (W->inner, state))
FORWARD(fmi2SetFMUstate, (fmi2Component c, fmi2FMUstate state), (W->inner, state))
FORWARD(fmi2FreeFMUstate, (fmi2Component c, fmi2FMUstate *state), (W->inner, state))
FORWARD(fmi2SerializedFMUstateSize, (fmi2Component c, fmi2FMUstate state, size_t *size), (W->inner, state, size))
FORWARD(fmi2SerializeFMUstate, (fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size), (W->inner, state, bytes, size))
FORWARD(fmi2DeSerializeFMUstate, (fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state), (W->inner, bytes, size, state))
FORWARD(fmi2GetDirectionalDerivative,
        (fmi2Component c, const fmi2ValueReference vu[], size_t nu, const fmi2ValueReference vk[], size_t nk, const fmi2Real dv[], fmi2Real df[]),
        (W->inner, vu, nu, vk, nk, dv, df))
FORWARD(fmi2SetRealInputDerivatives, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer order[], const fmi2Real v[]),
        (W->inner, vr, n, order, v))
FORWARD(fmi2GetRealOutputDerivatives, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer order[], fmi2Real v[]),
        (W->inner, vr, n, order, v))
FORWARD(fmi2DoStep, (fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior), (W->inner, t, h, noSetPrior))
FORWARD(fmi2CancelStep, (fmi2Component c), (W->inner))
FORWARD(fmi2GetStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Status *v), (W->inner, k, v))
FORWARD(fmi2GetRealStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Real *v), (W->inner, k, v))
FORWARD(fmi2GetIntegerStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Integer *v), (W->inner, k, v))
FORWARD(fmi2GetBooleanStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v), (W->inner, k, v))
FORWARD(fmi2GetStringStatus, (fmi2Component c, const fmi2StatusKind k, fmi2String *v), (W->inner, k, v))
