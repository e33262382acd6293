//===- VnniInterleave.cpp - VNNI pair packing as vector interleaves -------===//
// pack_cpu.mlir packs the rhs of a bf16 product computed per call (attention's
// k^T and v, a matmul of two inputs) into VNNI pair panels on every call:
//
//   out[b][p][kp][j][v] = in[b][kp][v][p][j]     (v < 2, j < 64)
//
// (without b for a matmul), a linalg.transpose that moves the innermost
// dimension (VnniPairTranspose.h). Vectorized as a transpose
// (elementwise_cpu.mlir) it became one element per cycle; here the two k rows
// of a panel are loaded whole, interleaved (the pairs of 64 columns) and
// stored as 128 contiguous elements: two 64-byte loads, a few unpack/permute
// instructions and two stores per 256 bytes.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/VnniPairTranspose.h"
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

bool mlir::cuvil::isVnniPairTranspose(linalg::TransposeOp op) {
  auto in = cast<ShapedType>(op.getInput().getType());
  auto out = cast<ShapedType>(op.getInit().getType());
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = in.getRank();
  if (rank < 2 || !in.hasStaticShape() || !out.hasStaticShape() || in.getElementTypeBitWidth() != 16)
    return false;
  return perm[rank - 2] == rank - 1 && in.getDimSize(perm[rank - 1]) == 2 &&
         in.getDimSize(rank - 1) <= cuvil::kMaxVnniPairRow;
}

namespace {

/// A pair transpose whose rows can be read and written whole: on buffers,
/// the input's rows and the output's (column, pair) blocks contiguous.
bool isContiguousVnniPairTranspose(linalg::TransposeOp op) {
  if (!op.hasPureBufferSemantics() || !cuvil::isVnniPairTranspose(op))
    return false;
  auto in = cast<MemRefType>(op.getInput().getType());
  auto out = cast<MemRefType>(op.getInit().getType());
  return in.areTrailingDimsContiguous(1) && out.areTrailingDimsContiguous(2);
}

void rewrite(linalg::TransposeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value in = op.getInput(), out = op.getInit();
  auto inType = cast<MemRefType>(in.getType());
  auto outType = cast<MemRefType>(out.getType());
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = inType.getRank(), columns = inType.getDimSize(rank - 1), pairDim = perm[rank - 1];
  // The output's (column, pair) block as one row of 2 x columns elements.
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank - 2; ++d)
    groups.push_back({d});
  groups.push_back({rank - 2, rank - 1});
  Value rows = memref::CollapseShapeOp::create(b, loc, out, groups);
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value c0 = index(0), c1 = index(1);
  auto rowType = VectorType::get({columns}, inType.getElementType());
  // One loop per output dim but the last two, in the output's order (stores
  // in sequence).
  SmallVector<Value> lower(rank - 2, c0), steps(rank - 2, c1), upper;
  for (int64_t d = 0; d < rank - 2; ++d)
    upper.push_back(index(outType.getDimSize(d)));
  scf::buildLoopNest(b, loc, lower, upper, steps, [&](OpBuilder &nb, Location l, ValueRange iv) {
    SmallVector<Value> at(rank, c0);
    for (int64_t d = 0; d < rank - 2; ++d)
      at[perm[d]] = iv[d];
    at[pairDim] = c0;
    Value even = vector::LoadOp::create(nb, l, rowType, in, at);
    at[pairDim] = c1;
    Value odd = vector::LoadOp::create(nb, l, rowType, in, at);
    Value pairsRow = vector::InterleaveOp::create(nb, l, even, odd);
    SmallVector<Value> to(iv.begin(), iv.end());
    to.push_back(c0);
    vector::StoreOp::create(nb, l, pairsRow, rows, to);
  });
  op.erase();
}

struct CuvilVnniInterleavePass : cuvil::impl::CuvilVnniInterleaveBase<CuvilVnniInterleavePass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> packs;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (isContiguousVnniPairTranspose(op))
        packs.push_back(op);
    });
    for (linalg::TransposeOp op : packs)
      rewrite(op);
  }
};

} // namespace
