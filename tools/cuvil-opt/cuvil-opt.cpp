//===- cuvil-opt.cpp - the Cuvil pass runner ------------------------------===//
// mlir-opt with every upstream dialect, pass and extension, plus Cuvil's.
//===----------------------------------------------------------------------===//
#include "cuvil/InitCuvil.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "Cuvil version " << CUVIL_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
       << ")\n";
  });
  mlir::registerAllPasses();
  mlir::cuvil::registerAllCuvilPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::cuvil::registerCuvilDialect(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cuvil optimizer driver\n", registry));
}
