#ifndef config_h
#define config_h

/* Not a Reference FMU: a test model of marine-cosim written on the Reference FMUs' framework
   (../src, ../include), for FMI 3.0 arrays of Int32, Boolean and a Float64 matrix with fixed sizes. */

#include <stdbool.h>
#include <stdint.h>

#define MODEL_IDENTIFIER ArrayFeedthrough
#define INSTANTIATION_TOKEN "{6A1E2C9B-5D8F-4B3A-9E7C-1F2D3B4A5C6E}"

#define CO_SIMULATION

#define GET_FLOAT64
#define SET_FLOAT64
#define GET_INT32
#define SET_INT32
#define GET_BOOLEAN
#define SET_BOOLEAN
#define EVENT_UPDATE

#define FIXED_SOLVER_STEP 0.1
#define DEFAULT_STOP_TIME 1

typedef enum {
    vr_time,
    vr_ints_in,
    vr_ints_out,
    vr_flags_in,
    vr_flags_out,
    vr_m_in,
    vr_m_out
} ValueReference;

typedef struct {
    int32_t ints_in[3];
    int32_t ints_out[3];
    bool flags_in[2];
    bool flags_out[2];
    double m_in[2][3];
    double m_out[3][2];
} ModelData;

#endif /* config_h */
