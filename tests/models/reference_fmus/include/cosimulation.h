#pragma once

#include "model.h"

Status doFixedStep(ModelInstance *comp, bool* stateEvent, bool* timeEvent);
