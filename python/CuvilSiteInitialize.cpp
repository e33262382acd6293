//===- CuvilSiteInitialize.cpp - auto-registration for cuvil.ir -----------===//
// `cuvil._mlir_libs` imports `_site_initialize_0` when the first Context is
// made and calls `register_dialects` on the global registry.
//===----------------------------------------------------------------------===//
#include "cuvil-c/Dialects.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "Registers the Cuvil dialect, its transform ops and passes with cuvil.ir";
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    mlirDialectHandleInsertDialect(mlirGetDialectHandle__cuvil__(), registry);
    cuvilRegisterTransformExtension(registry);
    cuvilRegisterTMTensorStandIn(registry);
  });
  cuvilRegisterPasses();
}
