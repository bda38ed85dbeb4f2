/* Not a Reference FMU: a test model of marine-cosim on the Reference FMUs' framework.
   ints_out = 10 * ints_in, flags_out = not flags_in, m_out = the transpose of m_in (3x2 from 2x3). */
#include "config.h"
#include "model.h"

Status setStartValues(ModelInstance *comp) {
    ASSERT_NOT_NULL2(comp);
    for (int i = 0; i < 3; i++) M(ints_in)[i] = i + 1;
    M(flags_in)[0] = false;
    M(flags_in)[1] = true;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            M(m_in)[i][j] = 3 * i + j + 1;
    comp->isDirtyValues = true;
    return OK;
}

Status calculateValues(ModelInstance *comp) {
    ASSERT_NOT_NULL2(comp);
    for (int i = 0; i < 3; i++) M(ints_out)[i] = 10 * M(ints_in)[i];
    for (int i = 0; i < 2; i++) M(flags_out)[i] = !M(flags_in)[i];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            M(m_out)[j][i] = M(m_in)[i][j];
    comp->isDirtyValues = false;
    return OK;
}

Status getFloat64(ModelInstance* comp, ValueReference vr, double values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    calculateValues(comp);
    switch (vr) {
        case vr_time:
            ASSERT_NVALUES(1);
            values[(*index)++] = comp->time;
            return OK;
        case vr_m_in:
            ASSERT_NVALUES(6);
            for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) values[(*index)++] = M(m_in)[i][j];
            return OK;
        case vr_m_out:
            ASSERT_NVALUES(6);
            for (int i = 0; i < 3; i++) for (int j = 0; j < 2; j++) values[(*index)++] = M(m_out)[i][j];
            return OK;
        default:
            logError(comp, "Get Float64 is not allowed for value reference %u.", vr);
            return Error;
    }
}

Status setFloat64(ModelInstance* comp, ValueReference vr, const double values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    if (vr != vr_m_in) {
        logError(comp, "Set Float64 is not allowed for value reference %u.", vr);
        return Error;
    }
    ASSERT_NVALUES(6);
    for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) M(m_in)[i][j] = values[(*index)++];
    comp->isDirtyValues = true;
    return OK;
}

Status getInt32(ModelInstance* comp, ValueReference vr, int32_t values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    calculateValues(comp);
    if (vr != vr_ints_in && vr != vr_ints_out) {
        logError(comp, "Get Int32 is not allowed for value reference %u.", vr);
        return Error;
    }
    ASSERT_NVALUES(3);
    for (int i = 0; i < 3; i++) values[(*index)++] = vr == vr_ints_in ? M(ints_in)[i] : M(ints_out)[i];
    return OK;
}

Status setInt32(ModelInstance* comp, ValueReference vr, const int32_t values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    if (vr != vr_ints_in) {
        logError(comp, "Set Int32 is not allowed for value reference %u.", vr);
        return Error;
    }
    ASSERT_NVALUES(3);
    for (int i = 0; i < 3; i++) M(ints_in)[i] = values[(*index)++];
    comp->isDirtyValues = true;
    return OK;
}

Status getBoolean(ModelInstance* comp, ValueReference vr, bool values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    calculateValues(comp);
    if (vr != vr_flags_in && vr != vr_flags_out) {
        logError(comp, "Get Boolean is not allowed for value reference %u.", vr);
        return Error;
    }
    ASSERT_NVALUES(2);
    for (int i = 0; i < 2; i++) values[(*index)++] = vr == vr_flags_in ? M(flags_in)[i] : M(flags_out)[i];
    return OK;
}

Status setBoolean(ModelInstance* comp, ValueReference vr, const bool values[], size_t nValues, size_t* index) {
    ASSERT_NOT_NULL2(comp);
    if (vr != vr_flags_in) {
        logError(comp, "Set Boolean is not allowed for value reference %u.", vr);
        return Error;
    }
    ASSERT_NVALUES(2);
    for (int i = 0; i < 2; i++) M(flags_in)[i] = values[(*index)++];
    comp->isDirtyValues = true;
    return OK;
}

Status eventUpdate(ModelInstance *comp) {
    ASSERT_NOT_NULL2(comp);
    comp->valuesOfContinuousStatesChanged   = false;
    comp->nominalsOfContinuousStatesChanged = false;
    comp->terminateSimulation               = false;
    comp->nextEventTimeDefined              = false;
    return OK;
}
