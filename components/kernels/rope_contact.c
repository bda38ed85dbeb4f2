/* rope_contact kernel: filled in by its binding's commit (components/kernels/rope_contact.py). Each kernel declares
 * its exported functions here and its binding sets their ctypes signatures. */
#include "kernels.h"
