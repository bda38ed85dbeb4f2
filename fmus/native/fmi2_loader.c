/*
 * fmi2_loader.c -- the FMI 2.0 co-simulation binary of every marine-cosim FMU on Linux.
 *
 * The FMU's model is Python (resources/<package>/...). This library implements the FMI C API
 * itself and hands each call, encoded as bytes, to the Python end (fmi_bridge.py in the FMU's
 * private package), which calls the slave and answers with the status, the messages logged during
 * the call and the results. resources/loader.txt says how the Python end runs:
 *
 *   mode=inprocess  (the default build) in the host's own Python if the process has one (FMPy,
 *                   libcosimpy), otherwise in an interpreter this library starts from the build
 *                   machine's libpython (resources/python_env.txt, or MARINE_COSIM_PYTHON and
 *                   MARINE_COSIM_LIBPYTHON). Only functions of Python's stable ABI are called, so
 *                   a host Python of another minor version works too; a libpython of another minor
 *                   version than the FMU was built for is refused with a message (its PyConfig
 *                   differs), never started.
 *   mode=process    (build_fmus.py --portable) in a child process running the Python runtime
 *                   bundled in resources/runtime, over a socket pair. The bundle is copied once per
 *                   content hash into a cache this library owns ($MARINE_COSIM_CACHE, else
 *                   $XDG_CACHE_HOME/marine-cosim, else ~/.cache/marine-cosim), so instances keep
 *                   working when the host deletes its unzip folder. Nothing of the host's Python,
 *                   if any, is touched.
 *
 * Any failure to start Python gives a message through the host's logger and a NULL instance.
 * Requests and replies are little-endian; see fmi_bridge.py for their layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
/* Windows: process mode only (see docs/fmu_runtime.md, "Windows"): cross-compiled with mingw-w64,
 * never run by our tests. */
#define MC_PROCESS_ONLY
#include <windows.h>
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#else
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#ifdef MC_WITH_PYTHON_HEADERS
#include <Python.h>   /* PyConfig, to start an interpreter in a host without one */
#endif

#include "fmi2Functions.h"

#ifndef _WIN32
extern char **environ;
#endif

#if defined(MC_PROCESS_ONLY) && !defined(_WIN32)
/* the oldest version of memcpy (glibc 2.14 added memcpy@GLIBC_2.14 for overlapping-copy bugs
 * in callers; this file never copies overlapping memory), so the binary loads on old glibc */
__asm__(".symver memcpy,memcpy@GLIBC_2.2.5");
#endif

enum Op {
    OP_INSTANTIATE, OP_FREE, OP_SETUP, OP_ENTER_INIT, OP_EXIT_INIT, OP_TERMINATE, OP_RESET, OP_GET_REAL,
    OP_GET_INTEGER, OP_GET_BOOLEAN, OP_GET_STRING, OP_SET_REAL, OP_SET_INTEGER, OP_SET_BOOLEAN, OP_SET_STRING,
    OP_DO_STEP, OP_GET_STATE, OP_SET_STATE, OP_FREE_STATE, OP_SERIALIZE_STATE, OP_DESERIALIZE_STATE,
    OP_WITH_SETS   /* setReal calls kept back (see "Fewer calls into Python"), then the request they precede */
};

/* ------------------------------------------------------------------ growable byte buffer */

typedef struct { char *data; size_t len, cap; } Buffer;

static int buf_reserve(Buffer *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}
static void buf_put(Buffer *b, const void *p, size_t n) {
    if (buf_reserve(b, n) == 0) { memcpy(b->data + b->len, p, n); b->len += n; }
}
static void buf_u32(Buffer *b, uint32_t v) { buf_put(b, &v, 4); }
static void buf_i32(Buffer *b, int32_t v) { buf_put(b, &v, 4); }
static void buf_f64(Buffer *b, double v) { buf_put(b, &v, 8); }
static void buf_text(Buffer *b, const char *s) {
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    buf_u32(b, n);
    buf_put(b, s ? s : "", n);
}

/* ------------------------------------------------------------------ configuration */

typedef struct {
    char mode[32], package[128], module[128], klass[128], hash[128], python[PATH_MAX];
} LoaderConfig;

/* Reads "key=value" from a resources file; returns 0 if found. */
static int read_key(const char *file, const char *key, char *value, size_t size) {
    FILE *f = fopen(file, "r");
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

static int uri_to_path(const char *uri, char *out, size_t size) {
    const char *p = uri;
    if (strncmp(p, "file://", 7) == 0) {
        p += 7;
        if (*p != '/') { p = strchr(p, '/'); if (!p) return -1; }   /* file://host/path */
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
#ifdef _WIN32
    if (out[0] == '/' && out[1] && out[2] == ':') memmove(out, out + 1, j);   /* /C:/... */
#endif
    return 0;
}

/* One loaded copy of this library serves one FMU: what its first instantiation found is kept,
 * so later instances work even if the host has deleted the unzip folder meanwhile. */
#ifdef _WIN32
static SRWLOCK setup_lock = SRWLOCK_INIT;
static void lock_setup(void) { AcquireSRWLockExclusive(&setup_lock); }
static void unlock_setup(void) { ReleaseSRWLockExclusive(&setup_lock); }
#else
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static void lock_setup(void) { pthread_mutex_lock(&setup_lock); }
static void unlock_setup(void) { pthread_mutex_unlock(&setup_lock); }
#endif
static int configured = 0;
static LoaderConfig config;
static char runtime_root[PATH_MAX];     /* process mode: the unpacked copy in the cache */
static char setup_error[4096];
static char model_guid[128];           /* the guid of the modelDescription.xml beside resources/, if found */

/* The guid attribute of resources/../modelDescription.xml (read once, with the rest of the setup):
 * fmi2Instantiate compares the host's with it (FMI 2.0: the GUID checks that the model
 * description the host read belongs to this binary). A host that read the modelDescription.xml
 * of another build (a stale unzip folder, another version of the FMU) ran with value references
 * that meant other variables, at fmi2OK. No file there (deleted by the host): no check. */
static void read_model_guid(const char *resources) {
    char file[PATH_MAX + 32], head[16384];
    snprintf(file, sizeof file, "%s/../modelDescription.xml", resources);
    FILE *f = fopen(file, "rb");
    if (!f) return;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = 0;
    const char *root = strstr(head, "<fmiModelDescription");
    const char *at = root ? strstr(root, " guid=\"") : NULL;
    if (!at) return;
    at += 7;
    const char *end = strchr(at, '"');
    if (end && (size_t)(end - at) < sizeof model_guid) {
        memcpy(model_guid, at, (size_t)(end - at));
        model_guid[end - at] = 0;
    }
}

/* ------------------------------------------------------------------ in-process Python */
typedef void PyObj;
#ifndef MC_PROCESS_ONLY
typedef struct {
    int (*IsInitialized)(void);
    int (*GILState_Ensure)(void);
    void (*GILState_Release)(int);
    PyObj *(*Import_ImportModule)(const char *);
    PyObj *(*Object_GetAttrString)(PyObj *, const char *);
    int (*Object_HasAttrString)(PyObj *, const char *);
    PyObj *(*Object_CallFunction)(PyObj *, const char *, ...);
    PyObj *(*Object_Str)(PyObj *);
    PyObj *(*Bytes_FromStringAndSize)(const char *, ssize_t);
    int (*Bytes_AsStringAndSize)(PyObj *, char **, ssize_t *);
    const char *(*Unicode_AsUTF8)(PyObj *);
    PyObj *(*Unicode_FromString)(const char *);
    PyObj *(*Sys_GetObject)(const char *);
    int (*Sequence_Contains)(PyObj *, PyObj *);
    int (*List_Append)(PyObj *, PyObj *);
    void (*Err_Fetch)(PyObj **, PyObj **, PyObj **);
    void (*DecRef)(PyObj *);
    const char *(*GetVersion)(void);
} PythonApi;
static PythonApi py;
static PyObj *bridge_instantiate = NULL;   /* <package>.fmi_bridge.instantiate */

#define PY_SYMBOLS(X)                                                                          \
    X(IsInitialized, "Py_IsInitialized") X(GILState_Ensure, "PyGILState_Ensure")                \
    X(GILState_Release, "PyGILState_Release") X(Import_ImportModule, "PyImport_ImportModule")   \
    X(Object_GetAttrString, "PyObject_GetAttrString") X(Object_HasAttrString, "PyObject_HasAttrString") \
    X(Object_CallFunction, "PyObject_CallFunction") X(Object_Str, "PyObject_Str")               \
    X(Bytes_FromStringAndSize, "PyBytes_FromStringAndSize")                                     \
    X(Bytes_AsStringAndSize, "PyBytes_AsStringAndSize") X(Unicode_AsUTF8, "PyUnicode_AsUTF8")   \
    X(Unicode_FromString, "PyUnicode_FromString") X(Sys_GetObject, "PySys_GetObject")           \
    X(Sequence_Contains, "PySequence_Contains") X(List_Append, "PyList_Append")                 \
    X(Err_Fetch, "PyErr_Fetch") X(DecRef, "Py_DecRef") X(GetVersion, "Py_GetVersion")

static int resolve_python(void *lib) {
#define RESOLVE(field, name)                                                                   \
    *(void **)&py.field = dlsym(lib, name);                                                    \
    if (!py.field) {                                                                           \
        snprintf(setup_error, sizeof setup_error, "the Python library lacks %s", name);        \
        return -1;                                                                             \
    }
    PY_SYMBOLS(RESOLVE)
    return 0;
}

/* The text of the pending Python exception (and clears it); GIL held. */
static void python_error(char *out, size_t size, const char *what) {
    PyObj *type = NULL, *value = NULL, *tb = NULL;
    py.Err_Fetch(&type, &value, &tb);
    const char *text = "unknown error";
    PyObj *str = value ? py.Object_Str(value) : NULL;
    if (str) text = py.Unicode_AsUTF8(str);
    snprintf(out, size, "%s: %s", what, text ? text : "?");
    if (str) py.DecRef(str);
    if (type) py.DecRef(type);
    if (value) py.DecRef(value);
    if (tb) py.DecRef(tb);
}

static int version_matches(void) {
#ifdef MC_WITH_PYTHON_HEADERS
    char want[16];
    snprintf(want, sizeof want, "%d.%d", PY_MAJOR_VERSION, PY_MINOR_VERSION);
    const char *have = py.GetVersion();
    size_t n = strlen(want);
    return strncmp(have, want, n) == 0 && (have[n] < '0' || have[n] > '9');
#else
    return 0;
#endif
}

static int start_python(const char *resources) {
    char env_file[PATH_MAX];
    snprintf(env_file, sizeof env_file, "%s/python_env.txt", resources);
    void *lib = RTLD_DEFAULT;
    if (!dlsym(RTLD_DEFAULT, "Py_IsInitialized")) {
        char libpython[PATH_MAX];
        const char *from_env = getenv("MARINE_COSIM_LIBPYTHON");
        if (from_env && *from_env) snprintf(libpython, sizeof libpython, "%s", from_env);
        else if (read_key(env_file, "libpython", libpython, sizeof libpython) != 0) {
            snprintf(setup_error, sizeof setup_error,
                     "no libpython configured: set MARINE_COSIM_LIBPYTHON or rebuild the FMU with build_fmus.py "
                     "(resources '%s' has no python_env.txt)", resources);
            return -1;
        }
        lib = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL);
        if (!lib) {
            snprintf(setup_error, sizeof setup_error,
                     "cannot load libpython '%s' (%s); set MARINE_COSIM_LIBPYTHON to the shared library of a "
                     "Python that has numpy and scipy, or use an FMU built with build_fmus.py --portable",
                     libpython, dlerror());
            return -1;
        }
        if (resolve_python(lib) != 0) return -1;
        if (!py.IsInitialized() && !version_matches()) {
            char built[64] = "?";
            read_key(env_file, "version", built, sizeof built);
            snprintf(setup_error, sizeof setup_error,
                     "libpython '%s' is Python %.20s but this FMU was built for Python %s: set "
                     "MARINE_COSIM_LIBPYTHON (and MARINE_COSIM_PYTHON) to a Python %s, or use an FMU built with "
                     "build_fmus.py --portable, which brings its own Python", libpython, py.GetVersion(), built, built);
            return -1;
        }
    } else if (resolve_python(RTLD_DEFAULT) != 0) {
        return -1;
    }
    if (py.IsInitialized()) return 0;   /* a Python host, or another of our FMUs started it */
#ifdef MC_WITH_PYTHON_HEADERS
    void (*init_config)(PyConfig *) = dlsym(lib, "PyConfig_InitPythonConfig");
    PyStatus (*set_string)(PyConfig *, wchar_t **, const char *) = dlsym(lib, "PyConfig_SetBytesString");
    PyStatus (*initialize)(const PyConfig *) = dlsym(lib, "Py_InitializeFromConfig");
    void (*clear)(PyConfig *) = dlsym(lib, "PyConfig_Clear");
    int (*failed)(PyStatus) = dlsym(lib, "PyStatus_Exception");
    void *(*save_thread)(void) = dlsym(lib, "PyEval_SaveThread");
    if (!init_config || !set_string || !initialize || !clear || !failed || !save_thread) {
        snprintf(setup_error, sizeof setup_error, "the loaded libpython lacks the PyConfig API (Python >= 3.8 needed)");
        return -1;
    }
    char python[PATH_MAX];
    const char *from_env = getenv("MARINE_COSIM_PYTHON");
    int have_python = 1;
    if (from_env && *from_env) snprintf(python, sizeof python, "%s", from_env);
    else have_python = read_key(env_file, "python", python, sizeof python) == 0;
    PyConfig cfg;
    init_config(&cfg);
    /* a guest in someone else's process: leave its signals and stdio alone */
    cfg.install_signal_handlers = 0;
    cfg.configure_c_stdio = 0;
    cfg.parse_argv = 0;
    cfg.user_site_directory = 0;
    PyStatus status = {0};
    /* as if this python had been started: finds its venv (pyvenv.cfg) and site-packages */
    if (have_python) status = set_string(&cfg, &cfg.program_name, python);
    if (!failed(status)) status = initialize(&cfg);
    clear(&cfg);
    if (failed(status)) {
        snprintf(setup_error, sizeof setup_error, "Python initialisation failed (%s) for program '%s'",
                 status.err_msg ? status.err_msg : "unknown error", have_python ? python : "(default)");
        return -1;
    }
    /* release the GIL: every call takes it with PyGILState_Ensure, from whatever thread. The
     * interpreter is never finalised: numpy does not survive re-initialisation. */
    save_thread();
    return 0;
#else
    snprintf(setup_error, sizeof setup_error, "this loader was built without Python headers and cannot start Python");
    return -1;
#endif
}

/* Imports <package>.fmi_bridge in the process's Python (GIL taken here). */
static int import_bridge(const char *resources) {
    int gil = py.GILState_Ensure();
    int rc = -1;
    PyObj *path = py.Sys_GetObject("path");   /* borrowed */
    PyObj *entry = py.Unicode_FromString(resources);
    if (path && entry && py.Sequence_Contains(path, entry) == 0) py.List_Append(path, entry);
    if (entry) py.DecRef(entry);
    char name[256];
    snprintf(name, sizeof name, "%s.fmi_bridge", config.package);
    PyObj *module = py.Import_ImportModule(name);
    if (!module) {
        python_error(setup_error, sizeof setup_error, "cannot import the FMU's Python");
    } else {
        bridge_instantiate = py.Object_GetAttrString(module, "instantiate");
        if (!bridge_instantiate) python_error(setup_error, sizeof setup_error, "fmi_bridge");
        else rc = 0;
        py.DecRef(module);
    }
    py.GILState_Release(gil);
    return rc;
}

#endif /* MC_PROCESS_ONLY */

/* ------------------------------------------------------------------ out-of-process runtime */

#ifdef _WIN32

static void cache_folder(char *out, size_t size) {
    const char *env = getenv("MARINE_COSIM_CACHE");
    if (env && *env) { snprintf(out, size, "%s", env); return; }
    env = getenv("LOCALAPPDATA");
    if (env && *env) { snprintf(out, size, "%s\\marine-cosim", env); return; }
    snprintf(out, size, "%s\\marine-cosim", getenv("TEMP") ? getenv("TEMP") : ".");
}

static int make_dirs(const char *dir) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 3; *p; ++p) {   /* past "C:\\" */
        if (*p != '\\' && *p != '/') continue;
        char c = *p;
        *p = 0;
        if (!CreateDirectoryA(tmp, NULL) && GetLastError() != ERROR_ALREADY_EXISTS) return -1;
        *p = c;
    }
    return (CreateDirectoryA(tmp, NULL) || GetLastError() == ERROR_ALREADY_EXISTS) ? 0 : -1;
}

static int copy_tree(const char *from, const char *to) {
    if (!CreateDirectoryA(to, NULL) && GetLastError() != ERROR_ALREADY_EXISTS) return -1;
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s\\*", from);
    WIN32_FIND_DATAA found;
    HANDLE search = FindFirstFileA(pattern, &found);
    if (search == INVALID_HANDLE_VALUE) return -1;
    int rc = 0;
    do {
        if (strcmp(found.cFileName, ".") == 0 || strcmp(found.cFileName, "..") == 0) continue;
        char a[PATH_MAX], b[PATH_MAX];
        snprintf(a, sizeof a, "%s\\%s", from, found.cFileName);
        snprintf(b, sizeof b, "%s\\%s", to, found.cFileName);
        if (found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) rc = copy_tree(a, b);
        else if (!CopyFileA(a, b, FALSE)) rc = -1;
    } while (rc == 0 && FindNextFileA(search, &found));
    FindClose(search);
    return rc;
}

static void remove_tree(const char *dir) {
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s\\*", dir);
    WIN32_FIND_DATAA found;
    HANDLE search = FindFirstFileA(pattern, &found);
    if (search != INVALID_HANDLE_VALUE) {
        do {
            if (strcmp(found.cFileName, ".") == 0 || strcmp(found.cFileName, "..") == 0) continue;
            char a[PATH_MAX];
            snprintf(a, sizeof a, "%s\\%s", dir, found.cFileName);
            if (found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) remove_tree(a);
            else DeleteFileA(a);
        } while (FindNextFileA(search, &found));
        FindClose(search);
    }
    RemoveDirectoryA(dir);
}

static int unpack_runtime(const char *resources) {
    char cache[PATH_MAX], marker[PATH_MAX + 16], partial[PATH_MAX + 64];
    cache_folder(cache, sizeof cache);
    snprintf(runtime_root, sizeof runtime_root, "%s\\%s", cache, config.hash);
    snprintf(marker, sizeof marker, "%s\\.complete", runtime_root);
    if (GetFileAttributesA(marker) != INVALID_FILE_ATTRIBUTES) return 0;
    if (make_dirs(cache) != 0) {
        snprintf(setup_error, sizeof setup_error, "cannot create the runtime cache '%s' (error %lu; set "
                 "MARINE_COSIM_CACHE to a writable folder)", cache, (unsigned long)GetLastError());
        return -1;
    }
    snprintf(partial, sizeof partial, "%s\\.partial-%s-%lu", cache, config.hash, (unsigned long)GetCurrentProcessId());
    remove_tree(partial);
    if (copy_tree(resources, partial) != 0) {
        snprintf(setup_error, sizeof setup_error, "cannot copy the FMU's runtime from '%s' to '%s' (error %lu)",
                 resources, partial, (unsigned long)GetLastError());
        remove_tree(partial);
        return -1;
    }
    char done[PATH_MAX + 80];
    snprintf(done, sizeof done, "%s\\.complete", partial);
    HANDLE f = CreateFileA(done, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    if (f != INVALID_HANDLE_VALUE) CloseHandle(f);
    if (!MoveFileExA(partial, runtime_root, 0)) {
        remove_tree(partial);   /* another process finished first: use its copy */
        if (GetFileAttributesA(marker) == INVALID_FILE_ATTRIBUTES) {
            snprintf(setup_error, sizeof setup_error, "cannot place the FMU's runtime at '%s'", runtime_root);
            return -1;
        }
    }
    return 0;
}

#else

static char copy_to[PATH_MAX];
static size_t copy_from_len;

static int copy_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)ftw;
    char target[PATH_MAX];
    if (snprintf(target, sizeof target, "%s%s", copy_to, path + copy_from_len) >= (int)sizeof target) return -1;
    if (type == FTW_D) return (mkdir(target, 0755) == 0 || errno == EEXIST) ? 0 : -1;
    if (type != FTW_F) return 0;   /* the runtime has no links or special files */
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    int out = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (sb->st_mode & 0111) ? 0755 : 0644);
    if (out < 0) { close(in); return -1; }
    char chunk[1 << 16];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, chunk, sizeof chunk)) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, chunk + done, (size_t)(n - done));
            if (w <= 0) { rc = -1; break; }
            done += w;
        }
        if (rc) break;
    }
    if (n < 0) rc = -1;
    close(in);
    if (close(out) != 0) rc = -1;
    return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb; (void)type; (void)ftw;
    remove(path);
    return 0;
}

static int make_dirs(const char *dir) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}

static void cache_folder(char *out, size_t size) {
    const char *env = getenv("MARINE_COSIM_CACHE");
    if (env && *env) { snprintf(out, size, "%s", env); return; }
    env = getenv("XDG_CACHE_HOME");
    if (env && *env) { snprintf(out, size, "%s/marine-cosim", env); return; }
    env = getenv("HOME");
    if (env && *env) { snprintf(out, size, "%s/.cache/marine-cosim", env); return; }
    snprintf(out, size, "/tmp/marine-cosim-%ld", (long)getuid());
}

/* The FMU's resources copied into <cache>/<hash> once: a copy made under a temporary name and
 * renamed when complete, so concurrent processes never see half a runtime. */
static int unpack_runtime(const char *resources) {
    char cache[PATH_MAX], marker[PATH_MAX + 16];
    cache_folder(cache, sizeof cache);
    snprintf(runtime_root, sizeof runtime_root, "%s/%s", cache, config.hash);
    snprintf(marker, sizeof marker, "%s/.complete", runtime_root);
    if (access(marker, F_OK) == 0) return 0;
    if (make_dirs(cache) != 0) {
        snprintf(setup_error, sizeof setup_error, "cannot create the runtime cache '%s': %s "
                 "(set MARINE_COSIM_CACHE to a writable folder)", cache, strerror(errno));
        return -1;
    }
    snprintf(copy_to, sizeof copy_to, "%s/.partial-%s-%ld", cache, config.hash, (long)getpid());
    copy_from_len = strlen(resources);
    nftw(copy_to, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (nftw(resources, copy_entry, 16, FTW_PHYS) != 0) {
        snprintf(setup_error, sizeof setup_error, "cannot copy the FMU's runtime from '%s' to '%s': %s", resources,
                 copy_to, strerror(errno));
        nftw(copy_to, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return -1;
    }
    /* unzip tools may drop the executable bit (Python's zipfile does): the interpreter needs it */
    char python[PATH_MAX + 16];
    snprintf(python, sizeof python, "%s/%s", copy_to, config.python);
    chmod(python, 0755);
    char done[PATH_MAX + 16];
    snprintf(done, sizeof done, "%s/.complete", copy_to);
    int fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    if (rename(copy_to, runtime_root) != 0) {
        /* another process finished first: use its copy */
        nftw(copy_to, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        if (access(marker, F_OK) != 0) {
            snprintf(setup_error, sizeof setup_error, "cannot place the FMU's runtime at '%s': %s", runtime_root,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

#endif /* _WIN32 */

/* ------------------------------------------------------------------ setup, once per library copy */

static int setup(const char *resources) {
    lock_setup();
    int rc = 0;
    if (configured) goto done;
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/loader.txt", resources);
    if (read_key(file, "mode", config.mode, sizeof config.mode) != 0 ||
        read_key(file, "package", config.package, sizeof config.package) != 0 ||
        read_key(file, "module", config.module, sizeof config.module) != 0 ||
        read_key(file, "class", config.klass, sizeof config.klass) != 0) {
        snprintf(setup_error, sizeof setup_error, "cannot read '%s' (is resourceLocation the FMU's resources folder?)",
                 file);
        rc = -1;
        goto done;
    }
    if (strcmp(config.mode, "process") == 0) {
        if (read_key(file, "hash", config.hash, sizeof config.hash) != 0 ||
            read_key(file, "python", config.python, sizeof config.python) != 0) {
            snprintf(setup_error, sizeof setup_error, "'%s' names no runtime", file);
            rc = -1;
            goto done;
        }
        rc = unpack_runtime(resources);
    } else {
#ifdef MC_PROCESS_ONLY
        snprintf(setup_error, sizeof setup_error, "this binary runs portable FMUs only (mode=%s)", config.mode);
        rc = -1;
#else
        rc = start_python(resources);
        if (rc == 0) rc = import_bridge(resources);
#endif
    }
    if (rc == 0) {
        read_model_guid(resources);
        configured = 1;
    }
done:
    unlock_setup();
    return rc;
}

/* ------------------------------------------------------------------ instances */

#ifdef _WIN32
typedef struct { HANDLE process, to, from; } Child;   /* the child and our ends of two pipes */
#else
typedef struct { pid_t pid; int fd; } Child;          /* the child and our end of a socket pair */
#endif

/* A setReal value-reference list whose values may be kept back: what the slave's Python would take
 * without a word when every value is finite and within [lo, hi]. */
typedef struct { uint32_t n; uint32_t *vrs; double *lo, *hi; } SetList;
#define MAX_SET_LISTS 32          /* lists remembered per instance (a master uses a few) */
#define MAX_PENDING 64            /* setReal calls kept back at most before they are sent */

typedef struct {
    int process;                   /* 1: child process, 0: in-process Python object */
    PyObj *instance;               /* in-process: fmi_bridge.Instance */
    PyObj *call;                   /* in-process: its bound method call */
    Child child;                   /* process */
    int dead;                      /* process: the child is gone */
    char name[256];
    fmi2CallbackFunctions host;
    fmi2Boolean logging_on;
    Buffer request, reply;
    size_t at;                     /* read position in reply */
    Buffer strings;                /* getString results, valid until the next call */
    struct StateHandle **states;   /* the FMU states this instance made and has not freed */
    size_t n_states, cap_states;
    /* fewer calls into Python (see "Fewer calls into Python" below) */
    SetList set_lists[MAX_SET_LISTS];   /* setReal lists the slave said may wait, with their bounds */
    size_t n_set_lists;
    Buffer pending;                /* setReal calls kept back: u32 n, n references, n values each */
    uint32_t n_pending;
    Buffer sent;                   /* a request with the kept-back calls in front of it */
    int after_step;                /* 1 from a doStep's return until the next call */
    Buffer read_list;              /* the getReal that came first after the last doStep: u32 n, references */
    Buffer ahead;                  /* its values, read by the slave at the end of the doStep since */
    int ahead_valid;               /* 1 while they answer that getReal (until any other call) */
} Instance;

/* An FMU state as the host holds it: memory of this library, naming the Python end's number for
 * it. Each instance lists the ones it made, and a state pointer is used only once found in that
 * list: a state of another instance (whose Python numbers are its own: a number alone restored
 * the other instance's own state of that number at fmi2OK), one already freed, or a pointer that
 * is no state at all is refused with a message instead of being followed. */
typedef struct StateHandle { uint32_t key; } StateHandle;

static void host_log(const Instance *w, const fmi2CallbackFunctions *cb, const char *name, fmi2Status status,
                     const char *category, const char *text) {
    int forward = (w == NULL || w->logging_on) || (status != fmi2OK && status != fmi2Pending);
    if (!forward) return;
    if (!(cb && cb->logger)) {
        fprintf(stderr, "[%s] %s\n", name ? name : "marine-cosim", text);
        return;
    }
    /* The text goes as the format string (hosts written with ctypes cannot read variadic
     * arguments), so '%' is doubled for printf-style hosts to print it literally. */
    size_t percents = 0, len = strlen(text);
    for (size_t i = 0; i < len; ++i) percents += text[i] == '%';
    char *escaped = percents ? malloc(len + percents + 1) : (char *)text;
    if (escaped && percents) {
        size_t j = 0;
        for (size_t i = 0; i < len; ++i) { escaped[j++] = text[i]; if (text[i] == '%') escaped[j++] = '%'; }
        escaped[j] = 0;
    }
    cb->logger(cb->componentEnvironment, name, status, category, escaped ? escaped : "(out of memory)");
    if (escaped && escaped != text) free(escaped);
}

#ifdef _WIN32

static int child_send(Child *c, const char *p, size_t n) {
    while (n) {
        DWORD w = 0;
        if (!WriteFile(c->to, p, (DWORD)n, &w, NULL) || w == 0) return -1;
        p += w;
        n -= w;
    }
    return 0;
}

static int child_recv(Child *c, char *p, size_t n) {
    while (n) {
        DWORD r = 0;
        if (!ReadFile(c->from, p, (DWORD)n, &r, NULL) || r == 0) return -1;
        p += r;
        n -= r;
    }
    return 0;
}

static void child_exit_text(Child *c, char *why, size_t size) {
    DWORD code = 0;
    if (WaitForSingleObject(c->process, 5000) == WAIT_OBJECT_0 && GetExitCodeProcess(c->process, &code))
        snprintf(why, size, "exited with status %lu", (unsigned long)code);
    else
        snprintf(why, size, "closed its connection");
}

static void child_close(Child *c, int wait) {
    if (c->to) CloseHandle(c->to);
    if (c->from) CloseHandle(c->from);
    if (c->process) {
        if (wait) WaitForSingleObject(c->process, INFINITE);
        CloseHandle(c->process);
    }
    c->to = c->from = c->process = NULL;
}

static int child_spawn(Child *c, char *error, size_t size) {
    SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
    HANDLE child_in = NULL, child_out = NULL;
    if (!CreatePipe(&child_in, &c->to, &inherit, 0) || !CreatePipe(&c->from, &child_out, &inherit, 0)) {
        snprintf(error, size, "CreatePipe failed (error %lu)", (unsigned long)GetLastError());
        return -1;
    }
    SetHandleInformation(c->to, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(c->from, HANDLE_FLAG_INHERIT, 0);
    char python[PATH_MAX + 16], command[4 * PATH_MAX];
    snprintf(python, sizeof python, "%s\\%s", runtime_root, config.python);
    for (char *p = python; *p; ++p) if (*p == '/') *p = '\\';
    snprintf(command, sizeof command,
             "\"%s\" -I -S -c \"import sys; sys.path[:0] = [r'%s\\runtime\\site-packages', r'%s']; "
             "from %s.fmi_bridge import serve_handles; serve_handles(%llu, %llu)\"",
             python, runtime_root, runtime_root, config.package, (unsigned long long)(uintptr_t)child_in,
             (unsigned long long)(uintptr_t)child_out);
    STARTUPINFOA startup;
    PROCESS_INFORMATION info;
    memset(&startup, 0, sizeof startup);
    startup.cb = sizeof startup;
    int ok = CreateProcessA(python, command, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &startup, &info);
    CloseHandle(child_in);
    CloseHandle(child_out);
    if (!ok) {
        snprintf(error, size, "cannot execute '%s' (error %lu)", python, (unsigned long)GetLastError());
        child_close(c, 0);
        return -1;
    }
    CloseHandle(info.hThread);
    c->process = info.hProcess;
    return 0;
}

#else

static int child_send(Child *c, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int child_recv(Child *c, char *p, size_t n) {
    while (n) {
        ssize_t r = recv(c->fd, p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void child_exit_text(Child *c, char *why, size_t size) {
    int status = 0;
    snprintf(why, size, "closed its connection");
    if (c->pid > 0 && waitpid(c->pid, &status, 0) == c->pid) {
        c->pid = 0;
        if (WIFEXITED(status)) snprintf(why, size, "exited with status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status)) snprintf(why, size, "was killed by signal %d", WTERMSIG(status));
    }
}

static void child_close(Child *c, int wait) {
    if (c->fd >= 0) close(c->fd);   /* the child reads end-of-file and exits */
    c->fd = -1;
    if (wait && c->pid > 0) waitpid(c->pid, NULL, 0);
    c->pid = 0;
}

static int child_spawn(Child *c, char *error, size_t size) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(error, size, "socketpair: %s", strerror(errno));
        return -1;
    }
    /* everything the child needs is prepared before fork: a multi-threaded host allows only
     * async-signal-safe calls between fork and exec */
    char python[PATH_MAX + 16], libdir[PATH_MAX + 32], code[3 * PATH_MAX];
    snprintf(python, sizeof python, "%s/%s", runtime_root, config.python);
    snprintf(libdir, sizeof libdir, "LD_LIBRARY_PATH=%s/runtime/lib", runtime_root);
    snprintf(code, sizeof code,
             "import sys; sys.path[:0] = ['%s/runtime/site-packages', '%s']; from %s.fmi_bridge import serve; serve(3)",
             runtime_root, runtime_root, config.package);
    char *argv[] = {python, "-I", "-S", "-c", code, NULL};
    size_t n_env = 0;
    while (environ && environ[n_env]) ++n_env;
    char **envp = calloc(n_env + 2, sizeof *envp);
    if (!envp) { close(sv[0]); close(sv[1]); snprintf(error, size, "out of memory"); return -1; }
    size_t k = 0;
    for (size_t i = 0; i < n_env; ++i)
        if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0 && strncmp(environ[i], "PYTHON", 6) != 0 &&
            strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            envp[k++] = environ[i];
    envp[k++] = libdir;
    envp[k] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        if (sv[1] == 3) {
            int copy = dup(sv[1]);
            dup2(copy, 3);
        } else {
            dup2(sv[1], 3);   /* dup2 clears close-on-exec on fd 3 */
        }
        for (int fd = 4; fd < 1024; ++fd) close(fd);
        execve(python, argv, envp);
        /* async-signal-safe report: errno as two digits */
        char note[] = "marine-cosim FMU loader: cannot execute the FMU's Python (errno ..)\n";
        int e = errno % 100;
        note[sizeof note - 5] = (char)('0' + e / 10);
        note[sizeof note - 4] = (char)('0' + e % 10);
        if (write(2, note, sizeof note - 1) < 0) _exit(127);
        _exit(127);
    }
    free(envp);
    close(sv[1]);
    if (pid < 0) {
        snprintf(error, size, "fork: %s", strerror(errno));
        close(sv[0]);
        return -1;
    }
    c->fd = sv[0];
    c->pid = pid;
    return 0;
}

#endif /* _WIN32 */

static void child_gone(Instance *w, const char *during) {
    char why[128];
    child_exit_text(&w->child, why, sizeof why);
    w->dead = 1;
    char message[512];
    snprintf(message, sizeof message, "the FMU's Python process %s during %s (its messages, if any, are on "
             "standard error)", why, during);
    host_log(w, &w->host, w->name, fmi2Fatal, "logStatusFatal", message);
}

static void forget_set_lists(Instance *w) {
    for (size_t i = 0; i < w->n_set_lists; ++i) {
        free(w->set_lists[i].vrs);
        free(w->set_lists[i].lo);
        free(w->set_lists[i].hi);
    }
    w->n_set_lists = 0;
}

static fmi2Status exchange_once(Instance *w, const char *during, const char *request, size_t request_len);

/* Sends w->request (after the setReal calls kept back, if any), fills w->reply; returns the status
 * after forwarding the logged messages. The setReal lists that may wait are forgotten after a call
 * that failed or that changes the instance's life-cycle state: the slave says again, at its next
 * setReal, whether they may (it must be healthy and stepping). */
static fmi2Status exchange(Instance *w, const char *during) {
    const char *request = w->request.data;
    size_t request_len = w->request.len;
    if (w->n_pending) {
        w->sent.len = 0;
        if (buf_reserve(&w->sent, 8 + w->pending.len + w->request.len) != 0) return fmi2Fatal;
        buf_u32(&w->sent, OP_WITH_SETS);
        buf_u32(&w->sent, w->n_pending);
        buf_put(&w->sent, w->pending.data, w->pending.len);
        buf_put(&w->sent, w->request.data, w->request.len);
        request = w->sent.data;
        request_len = w->sent.len;
        w->pending.len = 0;
        w->n_pending = 0;
    }
    fmi2Status s = exchange_once(w, during, request, request_len);
    uint32_t op;
    memcpy(&op, w->request.data, 4);
    int keeps_state = op == OP_GET_REAL || op == OP_GET_INTEGER || op == OP_GET_BOOLEAN || op == OP_GET_STRING ||
                      op == OP_SET_REAL || op == OP_SET_INTEGER || op == OP_SET_BOOLEAN || op == OP_SET_STRING ||
                      op == OP_DO_STEP || op == OP_GET_STATE || op == OP_FREE_STATE || op == OP_SERIALIZE_STATE ||
                      op == OP_DESERIALIZE_STATE;
    if (s > fmi2Warning || !keeps_state) forget_set_lists(w);
    return s;
}

static fmi2Status exchange_once(Instance *w, const char *during, const char *request, size_t request_len) {
    w->reply.len = 0;
    w->at = 0;
    if (w->process) {
        if (w->dead) {
            host_log(w, &w->host, w->name, fmi2Error, "logStatusError", "the FMU's Python process is gone");
            return fmi2Fatal;
        }
        uint32_t n = (uint32_t)request_len, m = 0;
        if (child_send(&w->child, (char *)&n, 4) || child_send(&w->child, request, n) ||
            child_recv(&w->child, (char *)&m, 4) || buf_reserve(&w->reply, m) ||
            child_recv(&w->child, w->reply.data, m)) {
            child_gone(w, during);
            return fmi2Fatal;
        }
        w->reply.len = m;
    } else {
#ifndef MC_PROCESS_ONLY
        int gil = py.GILState_Ensure();
        PyObj *arg = py.Bytes_FromStringAndSize(request, (ssize_t)request_len);
        PyObj *result = arg ? py.Object_CallFunction(w->call, "(O)", arg) : NULL;
        char *data = NULL;
        ssize_t size = 0;
        if (result && py.Bytes_AsStringAndSize(result, &data, &size) == 0 && buf_reserve(&w->reply, (size_t)size) == 0) {
            memcpy(w->reply.data, data, (size_t)size);
            w->reply.len = (size_t)size;
        } else {
            char message[1024];
            python_error(message, sizeof message, during);
            host_log(w, &w->host, w->name, fmi2Fatal, "logStatusFatal", message);
        }
        if (result) py.DecRef(result);
        if (arg) py.DecRef(arg);
        py.GILState_Release(gil);
#endif
        if (!w->reply.len) return fmi2Fatal;
    }
    if (w->reply.len < 8) return fmi2Fatal;
    int32_t status;
    uint32_t nlogs;
    memcpy(&status, w->reply.data, 4);
    memcpy(&nlogs, w->reply.data + 4, 4);
    w->at = 8;
    for (uint32_t k = 0; k < nlogs; ++k) {
        int32_t level;
        uint32_t len;
        if (w->at + 8 > w->reply.len) return fmi2Fatal;
        memcpy(&level, w->reply.data + w->at, 4);
        memcpy(&len, w->reply.data + w->at + 4, 4);
        char category[64];
        snprintf(category, sizeof category, "%.*s", (int)(len < 63 ? len : 63), w->reply.data + w->at + 8);
        w->at += 8 + len;
        memcpy(&len, w->reply.data + w->at, 4);
        char *text = malloc(len + 1);
        if (text) {
            memcpy(text, w->reply.data + w->at + 4, len);
            text[len] = 0;
            host_log(w, &w->host, w->name, (fmi2Status)level, category, text);
            free(text);
        }
        w->at += 4 + len;
    }
    return (fmi2Status)status;
}

static int payload(Instance *w, void *out, size_t n) {
    if (w->at + n > w->reply.len) return -1;
    memcpy(out, w->reply.data + w->at, n);
    w->at += n;
    return 0;
}

/* Any call but a getReal answered from the values read ahead: those values are no longer the
 * answer, and a doStep's first call that is not a getReal means no read ahead at the next doStep. */
static void another_call(Instance *w) {
    if (w->after_step) w->read_list.len = 0;
    w->after_step = 0;
    w->ahead_valid = 0;
}

static void begin(Instance *w, enum Op op) {
    another_call(w);
    w->request.len = 0;
    buf_u32(&w->request, (uint32_t)op);
}

/* ------------------------------------------------------------------ FMI 2.0 API */

/* The instances alive in this process (of this library). A host that calls with an instance it has
 * freed (or a pointer that never was one) gets fmi2Error and a line on stderr (it has no logger
 * left to tell) instead of this library reading freed memory: that gave fmi2Fatal or a crash,
 * whichever the allocator happened to leave there. A short list: a system holds a few instances. */
#ifdef _WIN32
static SRWLOCK live_lock = SRWLOCK_INIT;
static void lock_live(void) { AcquireSRWLockExclusive(&live_lock); }
static void unlock_live(void) { ReleaseSRWLockExclusive(&live_lock); }
#else
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static void lock_live(void) { pthread_mutex_lock(&live_lock); }
static void unlock_live(void) { pthread_mutex_unlock(&live_lock); }
#endif
static void **live_instances;
static size_t n_live, cap_live;

static int add_live(void *w) {
    int ok = 1;
    lock_live();
    if (n_live == cap_live) {
        size_t cap = cap_live ? 2 * cap_live : 16;
        void **grown = realloc(live_instances, cap * sizeof *grown);
        if (grown) { live_instances = grown; cap_live = cap; } else ok = 0;
    }
    if (ok) live_instances[n_live++] = w;
    unlock_live();
    return ok;
}

/* 1 if c is a live instance; with ``remove``, it is taken off the list (fmi2FreeInstance) */
static int live(fmi2Component c, int remove, const char *call) {
    int found = 0;
    if (c) {
        lock_live();
        for (size_t i = n_live; i-- > 0;) {
            if (live_instances[i] == c) {
                found = 1;
                if (remove) live_instances[i] = live_instances[--n_live];
                break;
            }
        }
        unlock_live();
    }
    if (!found && c)
        fprintf(stderr, "[marine-cosim] %s: %p is not a live instance of this FMU (freed, or never made); "
                "the call is refused\n", call, c);
    return found;
}


const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

static void free_instance(Instance *w) {
    if (w->process) child_close(&w->child, !w->dead);
    forget_set_lists(w);
    free(w->pending.data);
    free(w->sent.data);
    free(w->read_list.data);
    free(w->ahead.data);
    for (size_t i = 0; i < w->n_states; ++i) free(w->states[i]);
    free(w->states);
    free(w->request.data);
    free(w->reply.data);
    free(w->strings.data);
    free(w);
}

static void release(Instance *w);

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String guid,
                              fmi2String resourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    char resources[PATH_MAX] = ".";
    char message[sizeof setup_error + 64];
    if (fmuType != fmi2CoSimulation) {
        host_log(NULL, functions, instanceName, fmi2Error, "logStatusError",
                 "marine-cosim FMUs support co-simulation only");
        return NULL;
    }
    if (resourceLocation) uri_to_path(resourceLocation, resources, sizeof resources);
    if (setup(resources) != 0) {
        snprintf(message, sizeof message, "marine-cosim FMU loader: %s", setup_error);
        host_log(NULL, functions, instanceName, fmi2Fatal, "logStatusFatal", message);
        return NULL;
    }
    if (guid && model_guid[0] && strcmp(guid, model_guid) != 0) {
        char text[512];
        snprintf(text, sizeof text, "fmi2Instantiate: GUID '%.160s' is not this FMU's '%s': the modelDescription.xml "
                 "the host read is of another build of the FMU", guid, model_guid);
        host_log(NULL, functions, instanceName, fmi2Error, "logStatusError", text);
        return NULL;
    }
    Instance *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (functions) w->host = *functions;
    w->logging_on = loggingOn;
#ifndef _WIN32
    w->child.fd = -1;
#endif
    snprintf(w->name, sizeof w->name, "%s", instanceName ? instanceName : "");
    /* the instance's code and data come from the cached copy in process mode, so it keeps
     * working if the host deletes the unzip folder */
    const char *where = resources;
    char cached[PATH_MAX + 16];
    if (strcmp(config.mode, "process") == 0) {
        w->process = 1;
        snprintf(cached, sizeof cached, "%s", runtime_root);
        where = cached;
        char error[512];
        if (child_spawn(&w->child, error, sizeof error) != 0) {
            snprintf(message, sizeof message, "marine-cosim FMU loader: cannot start the FMU's Python (%s)", error);
            host_log(w, functions, instanceName, fmi2Fatal, "logStatusFatal", message);
            free_instance(w);
            return NULL;
        }
        begin(w, OP_INSTANTIATE);
        buf_text(&w->request, config.module);
        buf_text(&w->request, config.klass);
        buf_text(&w->request, w->name);
        buf_text(&w->request, where);
        buf_text(&w->request, visible ? "1" : "0");
        fmi2Status s = exchange(w, "instantiation");
        if (s > fmi2Warning || !add_live(w)) {
            free_instance(w);
            return NULL;
        }
        return w;
    }
#ifdef MC_PROCESS_ONLY
    free(w);
    return NULL;
#else
    int gil = py.GILState_Ensure();
    PyObj *result = py.Object_CallFunction(bridge_instantiate, "(ssssi)", config.module, config.klass, w->name, where,
                                           (int)visible);
    if (result && py.Object_HasAttrString(result, "call")) {
        w->instance = result;
        w->call = py.Object_GetAttrString(result, "call");
    } else {
        if (result) {
            PyObj *text = py.Object_Str(result);
            snprintf(message, sizeof message, "%s", text ? py.Unicode_AsUTF8(text) : "instantiation failed");
            if (text) py.DecRef(text);
            py.DecRef(result);
        } else {
            python_error(message, sizeof message, "instantiation failed");
        }
        host_log(w, functions, instanceName, fmi2Fatal, "logStatusFatal", message);
    }
    py.GILState_Release(gil);
    if (!w->call || !add_live(w)) {
        if (w->call) release(w);
        else free(w);
        return NULL;
    }
    return w;
#endif
}

/* the instance's Python end and memory */
static void release(Instance *w) {
    if (w->process) {
        w->pending.len = 0;       /* setReal calls kept back mean nothing to an instance being freed */
        w->n_pending = 0;
        begin(w, OP_FREE);
        if (!w->dead) exchange(w, "fmi2FreeInstance");
    } else {
#ifndef MC_PROCESS_ONLY
        int gil = py.GILState_Ensure();
        if (w->call) py.DecRef(w->call);
        if (w->instance) py.DecRef(w->instance);
        py.GILState_Release(gil);
        w->instance = w->call = NULL;
#endif
    }
    free_instance(w);
}

void fmi2FreeInstance(fmi2Component c) {
    if (live(c, 1, "fmi2FreeInstance")) release((Instance *)c);
}

#define W ((Instance *)c)
#define SIMPLE(fn, op)                                                                           \
    fmi2Status fn(fmi2Component c) {                                                             \
        if (!live(c, 0, __func__)) return fmi2Error;                                                                \
        begin(W, op);                                                                            \
        return exchange(W, #fn);                                                                 \
    }
SIMPLE(fmi2EnterInitializationMode, OP_ENTER_INIT)
SIMPLE(fmi2ExitInitializationMode, OP_EXIT_INIT)
SIMPLE(fmi2Terminate, OP_TERMINATE)
SIMPLE(fmi2Reset, OP_RESET)

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    (void)n; (void)cats;
    if (!live(c, 0, __func__)) return fmi2Error;
    W->logging_on = on;   /* the slave always reports to us; we filter for the host */
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stopDef, fmi2Real stop) {
    if (!live(c, 0, __func__)) return fmi2Error;
    begin(W, OP_SETUP);
    buf_i32(&W->request, tolDef);
    buf_f64(&W->request, tol);
    buf_f64(&W->request, start);
    buf_i32(&W->request, stopDef);
    buf_f64(&W->request, stop);
    return exchange(W, "fmi2SetupExperiment");
}

/* ------------------------------------------------------------------ fewer calls into Python
 *
 * A master calls setReal, doStep and getReal on every instance at every macro step, mostly with the
 * same value-reference lists, and each call into the slave's Python costs more than its work. Two
 * ways save calls, without changing what the slave sees or in which order:
 *
 * - setReal kept back. The slave's reply to a setReal says whether a call of these references is
 *   sure to be taken without a word (Real inputs, the instance healthy and stepping) and within
 *   which bounds. A later setReal of the same list with every value finite and within its bounds
 *   returns fmi2OK at once: its values are kept here and handed to the slave, in order, in front of
 *   the next call that enters Python (which any call but another kept-back setReal or a getReal
 *   answered as below does). A value that is not finite or out of bounds goes to the slave at once,
 *   which rejects it with its message. The lists are forgotten after a call that failed or changed
 *   the life-cycle state (exchange()).
 * - getReal read ahead. The getReal that comes first after a doStep is remembered; the next doStep
 *   asks the slave to read the same references at its end, as that getReal would, and returns their
 *   values with the step when the read gave no message and left the instance as healthy as it was.
 *   The getReal that follows, of the same list and with no call between, is answered from them.
 *   A read that gave a message is held by the slave's Python and answered (values, messages and
 *   status) at that getReal, or its messages are given with whatever call comes instead. */

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior) {
    if (!live(c, 0, __func__)) return fmi2Error;
    begin(W, OP_DO_STEP);
    buf_f64(&W->request, t);
    buf_f64(&W->request, h);
    buf_i32(&W->request, noSetPrior);
    if (W->read_list.len) buf_put(&W->request, W->read_list.data, W->read_list.len);
    else buf_u32(&W->request, 0);
    fmi2Status s = exchange(W, "fmi2DoStep");
    uint32_t n = 0;
    if (s == fmi2OK && payload(W, &n, 4) == 0 && n && W->read_list.len == 4 + 4 * (size_t)n &&
        W->at + 8 * (size_t)n <= W->reply.len && buf_reserve(&W->ahead, 8 * (size_t)n) == 0) {
        memcpy(W->ahead.data, W->reply.data + W->at, 8 * (size_t)n);
        W->ahead.len = 8 * (size_t)n;
        W->ahead_valid = 1;
    }
    W->after_step = 1;
    return s;
}

/* value references or values given as NULL for n > 0 (a host's nvr that does not match its
 * arrays): refused with a message instead of copied from address 0 (a crash of the host) */
static int missing_arrays(Instance *w, const void *vr, const void *v, size_t n, const char *call) {
    if (!n || (vr && v)) return 0;
    char text[200];
    snprintf(text, sizeof text, "%s: %zu value references with a NULL array of %s; the call is refused", call, n,
             vr ? "values" : "value references");
    host_log(w, &w->host, w->name, fmi2Error, "logStatusError", text);
    return 1;
}

static void put_vrs(Instance *w, enum Op op, const fmi2ValueReference vr[], size_t n) {
    begin(w, op);
    buf_u32(&w->request, (uint32_t)n);
    buf_put(&w->request, vr, 4 * n);
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    if (W->ahead_valid && n && W->read_list.len == 4 + 4 * n && memcmp(W->read_list.data + 4, vr, 4 * n) == 0) {
        memcpy(v, W->ahead.data, 8 * n);     /* read at the end of the doStep (see above) */
        W->after_step = 0;
        return fmi2OK;
    }
    int first_after_step = W->after_step;
    put_vrs(W, OP_GET_REAL, vr, n);
    if (first_after_step && n && n <= UINT32_MAX / 8) {
        W->read_list.len = 0;
        buf_put(&W->read_list, W->request.data + 4, 4 + 4 * n);
    }
    fmi2Status s = exchange(W, "fmi2GetReal");
    if (s != fmi2Fatal && payload(W, v, 8 * n) != 0) return fmi2Fatal;
    return s;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_GET_INTEGER, vr, n);
    fmi2Status s = exchange(W, "fmi2GetInteger");
    if (s != fmi2Fatal && payload(W, v, 4 * n) != 0) return fmi2Fatal;
    return s;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_GET_BOOLEAN, vr, n);
    fmi2Status s = exchange(W, "fmi2GetBoolean");
    for (size_t i = 0; s != fmi2Fatal && i < n; ++i) {
        int32_t b;
        if (payload(W, &b, 4) != 0) return fmi2Fatal;
        v[i] = b ? fmi2True : fmi2False;
    }
    return s;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_GET_STRING, vr, n);
    fmi2Status s = exchange(W, "fmi2GetString");
    if (s == fmi2Fatal) return s;
    /* the strings stay valid until the next call on this instance, as FMI 2.0 asks */
    W->strings.len = 0;
    size_t *offsets = calloc(n ? n : 1, sizeof *offsets);
    if (!offsets) return fmi2Fatal;
    for (size_t i = 0; i < n; ++i) {
        uint32_t len;
        if (payload(W, &len, 4) != 0 || W->at + len > W->reply.len) { free(offsets); return fmi2Fatal; }
        offsets[i] = W->strings.len;
        buf_put(&W->strings, W->reply.data + W->at, len);
        buf_put(&W->strings, "", 1);
        W->at += len;
    }
    for (size_t i = 0; i < n; ++i) v[i] = W->strings.data + offsets[i];
    free(offsets);
    return s;
}

/* the list of a kept-back setReal of these references, if the slave said they may wait */
static SetList *set_list(Instance *w, const fmi2ValueReference vr[], size_t n) {
    for (size_t i = 0; i < w->n_set_lists; ++i) {
        SetList *l = &w->set_lists[i];
        if (l->n == n && memcmp(l->vrs, vr, 4 * n) == 0) return l;
    }
    return NULL;
}

/* the slave's word on a setReal of these references just made: u32 1, then n minima and n maxima */
static void learn_set_list(Instance *w, const fmi2ValueReference vr[], size_t n) {
    uint32_t may_wait = 0;
    if (w->n_set_lists == MAX_SET_LISTS || payload(w, &may_wait, 4) != 0 || may_wait != 1 ||
        w->at + 16 * n > w->reply.len)
        return;
    SetList l = {(uint32_t)n, malloc(4 * n), malloc(8 * n), malloc(8 * n)};
    if (!l.vrs || !l.lo || !l.hi) {
        free(l.vrs); free(l.lo); free(l.hi);
        return;
    }
    memcpy(l.vrs, vr, 4 * n);
    payload(w, l.lo, 8 * n);
    payload(w, l.hi, 8 * n);
    w->set_lists[w->n_set_lists++] = l;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    SetList *l = n ? set_list(W, vr, n) : NULL;
    if (l && W->n_pending < MAX_PENDING) {
        size_t i = 0;
        while (i < n && isfinite(v[i]) && v[i] >= l->lo[i] && v[i] <= l->hi[i]) ++i;
        if (i == n && buf_reserve(&W->pending, 4 + 12 * n) == 0) {
            another_call(W);
            buf_u32(&W->pending, (uint32_t)n);
            buf_put(&W->pending, vr, 4 * n);
            buf_put(&W->pending, v, 8 * n);
            W->n_pending++;
            return fmi2OK;
        }
    }
    put_vrs(W, OP_SET_REAL, vr, n);
    buf_put(&W->request, v, 8 * n);
    fmi2Status s = exchange(W, "fmi2SetReal");
    if (s == fmi2OK && !l && n) learn_set_list(W, vr, n);
    return s;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_SET_INTEGER, vr, n);
    buf_put(&W->request, v, 4 * n);
    return exchange(W, "fmi2SetInteger");
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_SET_BOOLEAN, vr, n);
    for (size_t i = 0; i < n; ++i) buf_i32(&W->request, v[i] ? 1 : 0);
    return exchange(W, "fmi2SetBoolean");
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (missing_arrays(W, vr, v, n, __func__)) return fmi2Error;
    put_vrs(W, OP_SET_STRING, vr, n);
    for (size_t i = 0; i < n; ++i) buf_text(&W->request, v[i]);
    return exchange(W, "fmi2SetString");
}

/* An FMU state is a number the Python end gives, held in a StateHandle of the instance. */
static size_t find_state(const Instance *w, fmi2FMUstate state) {
    for (size_t i = w->n_states; i-- > 0;)          /* the latest first: masters restore what they just saved */
        if ((void *)w->states[i] == state) return i;
    return (size_t)-1;
}

/* the state at *state if this instance made it; else a message naming the call and NULL */
static StateHandle *own_state(Instance *w, fmi2FMUstate state, const char *call) {
    size_t i = state ? find_state(w, state) : (size_t)-1;
    if (i != (size_t)-1) return w->states[i];
    char text[300];
    snprintf(text, sizeof text, "%s: %p is not an FMU state of instance '%s' (one of another instance or another "
             "FMU, one already freed, or no state at all); nothing was changed", call, state, w->name);
    host_log(w, &w->host, w->name, fmi2Error, "logStatusError", text);
    return NULL;
}

/* a new handle for the Python end's state number ``key`` (0: none) */
static fmi2Status new_state(Instance *w, fmi2Status s, fmi2FMUstate *state) {
    uint32_t key = 0;
    *state = NULL;
    if (s == fmi2Fatal) return s;
    if (payload(w, &key, 4) != 0) return fmi2Fatal;
    if (!key) return s;
    if (w->n_states == w->cap_states) {
        size_t cap = w->cap_states ? 2 * w->cap_states : 8;
        StateHandle **grown = realloc(w->states, cap * sizeof *grown);
        if (!grown) return fmi2Fatal;
        w->states = grown;
        w->cap_states = cap;
    }
    StateHandle *h = malloc(sizeof *h);
    if (!h) return fmi2Fatal;
    h->key = key;
    w->states[w->n_states++] = h;
    *state = h;
    return s;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    if (!live(c, 0, __func__) || !state) return fmi2Error;
    begin(W, OP_GET_STATE);
    return new_state(W, exchange(W, "fmi2GetFMUstate"), state);
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    if (!live(c, 0, __func__)) return fmi2Error;
    StateHandle *h = own_state(W, state, "fmi2SetFMUstate");
    if (!h) return fmi2Error;
    begin(W, OP_SET_STATE);
    buf_u32(&W->request, h->key);
    return exchange(W, "fmi2SetFMUstate");
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    if (!live(c, 0, __func__)) return fmi2Error;
    if (!state || !*state) return fmi2OK;
    StateHandle *h = own_state(W, *state, "fmi2FreeFMUstate");
    if (!h) return fmi2Error;
    size_t i = find_state(W, h);
    W->states[i] = W->states[--W->n_states];
    begin(W, OP_FREE_STATE);
    buf_u32(&W->request, h->key);
    free(h);
    *state = NULL;
    return exchange(W, "fmi2FreeFMUstate");
}

static fmi2Status serialize(Instance *w, const StateHandle *h) {
    begin(w, OP_SERIALIZE_STATE);
    buf_u32(&w->request, h->key);
    return exchange(w, "fmi2SerializeFMUstate");
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    if (!live(c, 0, __func__) || !size) return fmi2Error;
    StateHandle *h = own_state(W, state, "fmi2SerializedFMUstateSize");
    if (!h) return fmi2Error;
    fmi2Status s = serialize(W, h);
    uint32_t n = 0;
    if (s != fmi2Fatal && payload(W, &n, 4) != 0) return fmi2Fatal;
    *size = n;
    return s;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    if (!live(c, 0, __func__)) return fmi2Error;
    StateHandle *h = own_state(W, state, "fmi2SerializeFMUstate");
    if (!h) return fmi2Error;
    fmi2Status s = serialize(W, h);
    uint32_t n = 0;
    if (s == fmi2Fatal || payload(W, &n, 4) != 0) return fmi2Fatal;
    if (n > size) {
        host_log(W, &W->host, W->name, fmi2Error, "logStatusError", "fmi2SerializeFMUstate: buffer too small");
        return fmi2Error;
    }
    return payload(W, bytes, n) == 0 ? s : fmi2Fatal;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state) {
    if (!live(c, 0, __func__) || !state) return fmi2Error;
    if (size > UINT32_MAX || (size && !bytes)) {
        *state = NULL;
        host_log(W, &W->host, W->name, fmi2Error, "logStatusError",
                 "fmi2DeSerializeFMUstate: no bytes, or more than 4 GiB: not a state of this FMU");
        return fmi2Error;
    }
    begin(W, OP_DESERIALIZE_STATE);
    buf_u32(&W->request, (uint32_t)size);
    buf_put(&W->request, bytes, size);
    return new_state(W, exchange(W, "fmi2DeSerializeFMUstate"), state);
}

static fmi2Status unsupported(fmi2Component c, const char *what) {
    if (live(c, 0, what)) host_log(W, &W->host, W->name, fmi2Error, "logStatusError", what);
    return fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vu[], size_t nu,
                                        const fmi2ValueReference vk[], size_t nk, const fmi2Real dv[], fmi2Real df[]) {
    (void)vu; (void)nu; (void)vk; (void)nk; (void)dv; (void)df;
    return unsupported(c, "fmi2GetDirectionalDerivative is not provided (providesDirectionalDerivative=false)");
}
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    return unsupported(c, "fmi2SetRealInputDerivatives is not provided (canInterpolateInputs=false)");
}
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    return unsupported(c, "fmi2GetRealOutputDerivatives is not provided (maxOutputDerivativeOrder=0)");
}
fmi2Status fmi2CancelStep(fmi2Component c) {
    return unsupported(c, "fmi2CancelStep: doStep always completes synchronously");
}
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v) {
    (void)k; (void)v;
    return unsupported(c, "fmi2GetStatus: doStep always completes synchronously");
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v) {
    (void)k; (void)v;
    return unsupported(c, "fmi2GetRealStatus: doStep always completes synchronously");
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v) {
    (void)k; (void)v;
    return unsupported(c, "fmi2GetIntegerStatus: doStep always completes synchronously");
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v) {
    (void)k; (void)v;
    return unsupported(c, "fmi2GetBooleanStatus: doStep always completes synchronously");
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v) {
    (void)k; (void)v;
    return unsupported(c, "fmi2GetStringStatus: doStep always completes synchronously");
}
