//===- VnniInterleave.cpp - VNNI pair packing as vector interleaves -------===//
// pack_cpu.mlir packs the rhs of attention's bf16 products (k^T, v) into
// VNNI pair panels for the AMX tiles on every call:
//
//   out[b][p][kp][j][v] = in[b][kp][v][p][j]     (v < 2, j < 64)
//
// a linalg.transpose that moves the innermost dimension. Vectorized as a
// transpose (elementwise_cpu.mlir) it became one element per cycle; here the
// two k rows of a panel are loaded whole, interleaved (the pairs of 64
// columns) and stored as 128 contiguous elements: two 64-byte loads, a few
// unpack/permute instructions and two stores per 256 bytes.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILVNNIINTERLEAVE
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The pack's permutation: out (b, p, kp, j, v) = in (b, kp, v, p, j).
constexpr int64_t kPermutation[] = {0, 3, 1, 4, 2};

/// Whether `op` is such a pack on static buffers whose rows can be read
/// and written whole: 16-bit elements, v = 2, the input's columns and the
/// output's (column, pair) block contiguous.
bool isVnniPairPack(linalg::TransposeOp op) {
  if (!op.hasPureBufferSemantics() || op.getPermutation() != ArrayRef<int64_t>(kPermutation))
    return false;
  auto in = cast<MemRefType>(op.getInput().getType());
  auto out = cast<MemRefType>(op.getInit().getType());
  return in.hasStaticShape() && out.hasStaticShape() && in.getElementTypeBitWidth() == 16 &&
         in.getDimSize(2) == 2 && in.areTrailingDimsContiguous(1) && out.areTrailingDimsContiguous(2);
}

void rewrite(linalg::TransposeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value in = op.getInput(), out = op.getInit();
  auto inType = cast<MemRefType>(in.getType());
  int64_t batches = inType.getDimSize(0), pairs = inType.getDimSize(1), panels = inType.getDimSize(3),
          columns = inType.getDimSize(4);
  // The output's (column, pair) block as one row of 2 x columns elements.
  Value rows = memref::CollapseShapeOp::create(b, loc, out, SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value c0 = index(0), c1 = index(1);
  auto rowType = VectorType::get({columns}, inType.getElementType());
  SmallVector<Value> upper = {index(batches), index(panels), index(pairs)};
  scf::buildLoopNest(b, loc, ValueRange{c0, c0, c0}, upper, ValueRange{c1, c1, c1},
                     [&](OpBuilder &nb, Location l, ValueRange iv) {
                       Value bi = iv[0], p = iv[1], kp = iv[2];
                       Value even = vector::LoadOp::create(nb, l, rowType, in, ValueRange{bi, kp, c0, p, c0});
                       Value odd = vector::LoadOp::create(nb, l, rowType, in, ValueRange{bi, kp, c1, p, c0});
                       Value pairsRow = vector::InterleaveOp::create(nb, l, even, odd);
                       vector::StoreOp::create(nb, l, pairsRow, rows, ValueRange{bi, p, kp, c0});
                     });
  op.erase();
}

struct CuvilVnniInterleavePass : cuvil::impl::CuvilVnniInterleaveBase<CuvilVnniInterleavePass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> packs;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (isVnniPairPack(op))
        packs.push_back(op);
    });
    for (linalg::TransposeOp op : packs)
      rewrite(op);
  }
};

} // namespace
