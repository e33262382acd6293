//===- Bf16VectorMemoryAsI16.cpp - odd bf16 vector loads/stores as i16 -----===//
// LLVM 22's x86 backend aborts (SoftPromoteHalfOperand: "Do not know how to
// soft promote this operator's operand", a v32bf16 scalar_to_vector) on a
// load or store of a bf16 vector whose length is 8k + 1 (9, 17, 33, ...) on
// AVX-512 targets. Such vectors come from vectorized copies of bf16 rows,
// e.g. a bf16 matmul with K = 33 pads A's rows to 34 and copies the 33 in.
// A bf16 value is 16 bits of storage: this pass loads and stores those
// vectors as i16 vectors and bitcasts, which the backend handles (a copy
// becomes an i16 copy once the bitcasts cancel). Measured with llc alone:
// lengths 1..80 of bf16, 8k + 1 abort; f16 and i16 of every length do not.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILBF16VECTORMEMORYASI16
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The i16 vector to use for a bf16 vector of a length the backend rejects;
/// null for every other type.
VectorType asI16(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() != 1 || vector.isScalable() || !vector.getElementType().isBF16())
    return {};
  int64_t n = vector.getNumElements();
  if (n <= 8 || n % 8 != 1)
    return {};
  return VectorType::get({n}, IntegerType::get(type.getContext(), 16));
}

struct CuvilBf16VectorMemoryAsI16Pass
    : cuvil::impl::CuvilBf16VectorMemoryAsI16Base<CuvilBf16VectorMemoryAsI16Pass> {
  void runOnOperation() override {
    SmallVector<LLVM::LoadOp> loads;
    SmallVector<LLVM::StoreOp> stores;
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<LLVM::LoadOp>(op); load && asI16(load.getType()))
        loads.push_back(load);
      else if (auto store = dyn_cast<LLVM::StoreOp>(op); store && asI16(store.getValue().getType()))
        stores.push_back(store);
    });
    for (LLVM::LoadOp load : loads) {
      OpBuilder b(load);
      Type bf16 = load.getType();
      // The same op with the i16 result type: alignment, volatility and the
      // other attributes stay.
      Operation *wide = b.clone(*load.getOperation());
      wide->getResult(0).setType(asI16(bf16));
      Value cast = LLVM::BitcastOp::create(b, load.getLoc(), bf16, wide->getResult(0));
      load.getResult().replaceAllUsesWith(cast);
      load.erase();
    }
    for (LLVM::StoreOp store : stores) {
      OpBuilder b(store);
      Value cast = LLVM::BitcastOp::create(b, store.getLoc(), asI16(store.getValue().getType()), store.getValue());
      store.getValueMutable().assign(cast);
    }
  }
};

} // namespace
