//===- FoldUnitExtentDims.cpp - linalg-fold-unit-extent-dims, VNNI kept ---===//
// Upstream's unit-dimension folding, except for the VNNI-packed contractions
// of pack_cpu.mlir (C[m][n/64][64] += A[m][k/v][v] * B[n/64][k/v][64][v]):
// a matmul of one 64-column panel (an int8 conv with 64 output channels)
// would lose its panel loop and no longer be the rank-5 op that
// matmul_dot_cpu.mlir schedules (it would stay scalar loops). The same for
// the plain panel contractions (C[m][n/64][64] += A[m][k] * B[n/64][k][64]):
// a decode step's M = 1 matmul would lose its m loop and no longer be the
// rank-4 op that matmul_cpu.mlir schedules. And cuvil-im2col-conv's int8
// convs over shifted rows (one panel: 64 output channels).
// Also kept: a unit loop inside a window expression (`d2 * 2 + d5`, torch-
// mlir's max_pool3d over a depth-1 output) that would become the bare loop
// `d5` of a larger operand dimension: upstream folds it into an invalid op.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/ShiftedRows.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDUNITEXTENTDIMS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Loops [m, n/64, k/v, 64, v] (parallel, parallel, reduction, parallel,
/// reduction), v = 2 (bf16 pairs) or 4 (int8 quads), two inputs; or the
/// batched form [b, m, n/64, k/v, 64, v] (attention's products, Winograd's
/// batch matmuls: bf16 on AMX and AVX512-BF16 hosts), whose batch loop is
/// kept too (a single head is still the rank-6 op that matmul_dot_cpu.mlir
/// schedules).
bool isVnniContraction(linalg::GenericOp g) {
  using utils::IteratorType;
  unsigned n = g.getNumLoops();
  if ((n != 5 && n != 6) || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1)
    return false;
  unsigned first = n - 5;   // the batch loop, if any, is loop 0
  SmallVector<IteratorType> it = g.getIteratorTypesArray();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(first + i, ctx); };
  AffineExpr m = d(0), np = d(1), kv = d(2), j = d(3), v = d(4);
  SmallVector<AffineExpr> a = {m, kv, v}, b = {np, kv, j, v}, c = {m, np, j};
  if (first)
    for (SmallVector<AffineExpr> *operand : {&a, &b, &c})
      operand->insert(operand->begin(), getAffineDimExpr(0, ctx));
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  return (!first || it[0] == IteratorType::parallel) && it[first] == IteratorType::parallel &&
         it[first + 1] == IteratorType::parallel && it[first + 2] == IteratorType::reduction &&
         it[first + 3] == IteratorType::parallel && it[first + 4] == IteratorType::reduction &&
         ranges[first + 3] == 64 && (ranges[first + 4] == 2 || ranges[first + 4] == 4) &&
         maps[0] == AffineMap::get(n, 0, a, ctx) && maps[1] == AffineMap::get(n, 0, b, ctx) &&
         maps[2] == AffineMap::get(n, 0, c, ctx);
}

/// Loops [m, n/64, k, 64] (parallel, parallel, reduction, parallel), two
/// inputs: pack_cpu.mlir's plain panels.
bool isPanelContraction(linalg::GenericOp g) {
  using utils::IteratorType;
  if (g.getNumLoops() != 4 || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1)
    return false;
  SmallVector<IteratorType> it = g.getIteratorTypesArray();
  MLIRContext *ctx = g.getContext();
  AffineExpr m, np, k, j;
  bindDims(ctx, m, np, k, j);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  return it[0] == IteratorType::parallel && it[1] == IteratorType::parallel && it[2] == IteratorType::reduction &&
         it[3] == IteratorType::parallel && g.getStaticLoopRanges()[3] == 64 &&
         maps[0] == AffineMap::get(4, 0, {m, k}, ctx) && maps[1] == AffineMap::get(4, 0, {np, k, j}, ctx) &&
         maps[2] == AffineMap::get(4, 0, {m, np, j}, ctx);
}

/// Loops [n/64, q, 64, kh, kw, c/4, 4]: cuvil-im2col-conv's int8 conv over
/// shifted rows (A[q + kh * WP + kw][c/4][4]), which matmul_dot_cpu.mlir's
/// AMX and dot-product schedules take with its panel loop (64 output
/// channels: one panel).
bool isShiftedRowsContraction(linalg::GenericOp g) {
  if (!cuvil::matchShiftedRowsContraction(g))
    return false;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  return ranges[2] == 64 && ranges[6] == 4;
}

bool isKeptContraction(linalg::GenericOp g) {
  return isVnniContraction(g) || isPanelContraction(g) || isShiftedRowsContraction(g);
}

/// The accumulator init of a contraction kept whole (an int8 matmul's
/// zero-point correction broadcast over its rows): folded, it would reach
/// the contraction through an expand_shape, and cuvil-outline-kernels would
/// give it a kernel of its own instead of the matmul's (ResNet-18's int8
/// stem: a 3.2 MB broadcast written per call, then read back).
bool initializesKeptContraction(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return false;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
  return g && g.isDpsInit(&use) && isKeptContraction(g);
}

/// The loops of `dims` that upstream may drop: not those whose removal
/// turns a compound operand expression into a bare loop (`d2 * 2 + d5` with
/// d2 = 0 is `d5`, which would then have to span the operand's whole dim).
SmallVector<unsigned> withoutWindowLoops(linalg::GenericOp g, SmallVector<unsigned> dims) {
  MLIRContext *ctx = g.getContext();
  llvm::erase_if(dims, [&](unsigned d) {
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    for (AffineMap map : g.getIndexingMapsArray())
      for (AffineExpr e : map.getResults())
        if (!isa<AffineDimExpr>(e) && e.isFunctionOfDim(d) &&
            isa<AffineDimExpr>(simplifyAffineExpr(e.replace(getAffineDimExpr(d, ctx), zero), map.getNumDims(), 0)))
          return true;
    return false;
  });
  return dims;
}

struct CuvilFoldUnitExtentDimsPass
    : cuvil::impl::CuvilFoldUnitExtentDimsBase<CuvilFoldUnitExtentDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    linalg::ControlDropUnitDims options;
    auto upstream = options.controlFn;
    options.controlFn = [upstream](Operation *op) -> SmallVector<unsigned> {
      if (auto g = dyn_cast<linalg::GenericOp>(op); g && isKeptContraction(g))
        return {};
      if (initializesKeptContraction(op))
        return {};
      if (auto g = dyn_cast<linalg::GenericOp>(op))
        return withoutWindowLoops(g, upstream(op));
      return upstream(op);
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldUnitExtentDimsPatterns(patterns, options);
    linalg::populateMoveInitOperandsToInputPattern(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
