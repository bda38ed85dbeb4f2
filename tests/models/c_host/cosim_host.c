/*
 * cosim_host.c -- OSP libcosim driven from C, with no Python in the process: the libcosim of
 * libcosimpy's wheel (libcosimc.so, its C API) runs a whole system of FMUs. Used by
 * tests/fmus/test_fmu_portable.py to run the offshore lift's portable FMUs where no Python exists.
 *
 *   cosim_host SPEC OUT
 *
 * SPEC has one item per line:
 *   step_ns N | steps N
 *   slave NAME FMU_PATH                       (slave indices are the order of these lines)
 *   real|int|bool SLAVE VR VALUE | string SLAVE VR TEXT   (initial values)
 *   connect OUT_SLAVE OUT_VR IN_SLAVE IN_VR   (Real variables)
 *   observe SLAVE VR                          (Real outputs written to OUT after every step)
 * OUT gets one line per step, "t v1 v2 ...". Exits non-zero with libcosim's message on failure.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the parts of libcosimc's C API (cosim.h) used here */
typedef struct cosim_execution_s cosim_execution;
typedef struct cosim_slave_s cosim_slave;
typedef struct cosim_observer_s cosim_observer;
cosim_execution *cosim_execution_create(int64_t start_time, int64_t step_size);
cosim_slave *cosim_local_slave_create(const char *fmu_path, const char *instance_name);
int cosim_execution_add_slave(cosim_execution *execution, cosim_slave *slave);
int cosim_execution_connect_real_variables(cosim_execution *e, int out_slave, uint32_t out_vr, int in_slave,
                                           uint32_t in_vr);
int cosim_execution_set_real_initial_value(cosim_execution *e, int slave, uint32_t vr, double value);
int cosim_execution_set_integer_initial_value(cosim_execution *e, int slave, uint32_t vr, int value);
int cosim_execution_set_boolean_initial_value(cosim_execution *e, int slave, uint32_t vr, bool value);
int cosim_execution_set_string_initial_value(cosim_execution *e, int slave, uint32_t vr, const char *value);
cosim_observer *cosim_last_value_observer_create(void);
int cosim_execution_add_observer(cosim_execution *e, cosim_observer *observer);
int cosim_execution_step(cosim_execution *e, int64_t steps);
int cosim_observer_slave_get_real(cosim_observer *o, int slave, const uint32_t vr[], size_t n, double values[]);
int cosim_execution_destroy(cosim_execution *e);
const char *cosim_last_error_message(void);
int cosim_log_set_output_level(int level);

#define MAX_SLAVES 16
#define MAX_OBSERVED 256

static int fail(const char *what) {
    fprintf(stderr, "libcosim: %s: %s\n", what, cosim_last_error_message());
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SPEC OUT\n", argv[0]);
        return 1;
    }
    FILE *spec = fopen(argv[1], "r");
    FILE *out = fopen(argv[2], "w");
    if (!spec || !out) { perror("cosim_host"); return 1; }
    cosim_log_set_output_level(4);   /* errors only: libcosim logs to stdout */

    long long step_ns = 0, steps = 0;
    cosim_execution *execution = NULL;
    cosim_observer *observer = cosim_last_value_observer_create();
    int slaves[MAX_SLAVES], n_slaves = 0;
    int observed_slave[MAX_OBSERVED];
    uint32_t observed_vr[MAX_OBSERVED];
    int n_observed = 0;
    char line[8192], word[32], text[4096];
    while (fgets(line, sizeof line, spec)) {
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "%31s", word) != 1) continue;
        int a, b;
        unsigned va, vb;
        double x;
        if (strcmp(word, "step_ns") == 0) {
            step_ns = atoll(line + 8);
            execution = cosim_execution_create(0, step_ns);
            if (!execution || cosim_execution_add_observer(execution, observer) != 0) return fail("create");
        } else if (strcmp(word, "steps") == 0) {
            steps = atoll(line + 6);
        } else if (strcmp(word, "slave") == 0) {
            char name[256];
            if (sscanf(line, "slave %255s %4095[^\n]", name, text) != 2 || n_slaves == MAX_SLAVES) return 1;
            cosim_slave *slave = cosim_local_slave_create(text, name);
            if (!slave) return fail(name);
            slaves[n_slaves] = cosim_execution_add_slave(execution, slave);
            if (slaves[n_slaves] < 0) return fail(name);
            ++n_slaves;
        } else if (strcmp(word, "real") == 0 && sscanf(line, "real %d %u %lf", &a, &va, &x) == 3) {
            if (cosim_execution_set_real_initial_value(execution, slaves[a], va, x) != 0) return fail(line);
        } else if (strcmp(word, "int") == 0 && sscanf(line, "int %d %u %d", &a, &va, &b) == 3) {
            if (cosim_execution_set_integer_initial_value(execution, slaves[a], va, b) != 0) return fail(line);
        } else if (strcmp(word, "bool") == 0 && sscanf(line, "bool %d %u %d", &a, &va, &b) == 3) {
            if (cosim_execution_set_boolean_initial_value(execution, slaves[a], va, b != 0) != 0) return fail(line);
        } else if (strcmp(word, "string") == 0 && sscanf(line, "string %d %u %4095[^\n]", &a, &va, text) == 3) {
            if (cosim_execution_set_string_initial_value(execution, slaves[a], va, text) != 0) return fail(line);
        } else if (strcmp(word, "connect") == 0 && sscanf(line, "connect %d %u %d %u", &a, &va, &b, &vb) == 4) {
            if (cosim_execution_connect_real_variables(execution, slaves[a], va, slaves[b], vb) != 0) return fail(line);
        } else if (strcmp(word, "observe") == 0 && sscanf(line, "observe %d %u", &a, &va) == 2 &&
                   n_observed < MAX_OBSERVED) {
            observed_slave[n_observed] = slaves[a];
            observed_vr[n_observed++] = va;
        } else {
            fprintf(stderr, "cosim_host: cannot read spec line '%s'\n", line);
            return 1;
        }
    }
    for (long long k = 1; k <= steps; ++k) {
        if (cosim_execution_step(execution, 1) != 0) return fail("step");
        fprintf(out, "%.17g", (double)(k * step_ns) * 1e-9);
        for (int i = 0; i < n_observed; ++i) {
            double value;
            if (cosim_observer_slave_get_real(observer, observed_slave[i], &observed_vr[i], 1, &value) != 0)
                return fail("observe");
            fprintf(out, " %.17g", value);
        }
        fprintf(out, "\n");
    }
    fclose(out);
    cosim_execution_destroy(execution);
    return 0;
}
