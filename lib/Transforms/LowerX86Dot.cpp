//===- LowerX86Dot.cpp - Cuvil's x86 instruction ops -> LLVM intrinsics ---===//
// The schedules' int8 dot-product kernel computes with cuvil.x86.dot_u8s8, a
// pure op, through bufferization; here, with the lowering to LLVM, it becomes
// the intrinsic call (see the op).
//===----------------------------------------------------------------------===//
#include "cuvil/Dialect/CuvilOps.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILLOWERX86DOT
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
struct CuvilLowerX86DotPass : cuvil::impl::CuvilLowerX86DotBase<CuvilLowerX86DotPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](cuvil::DotU8S8Op dot) {
      OpBuilder b(dot);
      Location loc = dot.getLoc();
      // LLVM 22's signature takes the byte operands as <64 x i8> (the MLIR
      // translation checks it; llc would upgrade the older i32 form).
      auto bytes = VectorType::get({64}, b.getI8Type());
      Value lhs = vector::BitCastOp::create(b, loc, bytes, dot.getLhs());
      Value rhs = vector::BitCastOp::create(b, loc, bytes, dot.getRhs());
      Value call = LLVM::CallIntrinsicOp::create(b, loc, dot.getType(),
                                                 b.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
                                                 ValueRange{dot.getAcc(), lhs, rhs})
                       .getResult(0);
      dot.replaceAllUsesWith(call);
      dot.erase();
    });
  }
};
} // namespace
