/* nmpc kernel: filled in by its binding's commit (components/kernels/nmpc.py). Each kernel declares
 * its exported functions here and its binding sets their ctypes signatures. */
#include "kernels.h"
