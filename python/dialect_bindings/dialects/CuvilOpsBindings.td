// Entry point for the Python op-builder generator (cuvil.dialects.cuvil).
#ifndef CUVIL_PYTHON_BINDINGS
#define CUVIL_PYTHON_BINDINGS
include "CuvilOps.td"
#endif
