//===- WinogradConv.cpp - 3x3 convolutions as Winograd F(m x m, 3 x 3) ----===//
// Y = A^T [ (G g G^T) . (B^T d B) ] A per m x m output tile (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015). The
// elementwise product summed over input channels is, for each of the
// (m+2)^2 tile positions, a [tiles x C] x [C x F] matmul: one
// linalg.batch_matmul. Every transform is split into two 1-D transforms
// (rows, then columns) so that each is an all-parallel linalg.generic with
// the channel dim innermost: the elementwise schedule vectorizes it along
// channels, and the strided tile reads are row offsets, never gathers.
//===----------------------------------------------------------------------===//
#include "ConvRewrite.h"
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "cuvil-winograd-conv"
#define DBGS() (llvm::dbgs() << "[" DEBUG_TYPE "] ")

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILWINOGRADCONV
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// The transform matrices of F(m x m, 3 x 3), alpha = m + 2, row-major:
/// BT is alpha x alpha, G is alpha x 3, AT is m x alpha.
struct WinogradMatrices {
  int64_t m;
  ArrayRef<float> bt, g, at;
};

// clang-format off
constexpr float kBT2[] = {1, 0, -1, 0,
                          0, 1, 1, 0,
                          0, -1, 1, 0,
                          0, 1, 0, -1};
constexpr float kG2[] = {1, 0, 0,
                         0.5f, 0.5f, 0.5f,
                         0.5f, -0.5f, 0.5f,
                         0, 0, 1};
constexpr float kAT2[] = {1, 1, 1, 0,
                          0, 1, -1, -1};

constexpr float kBT4[] = {4, 0, -5, 0, 1, 0,
                          0, -4, -4, 1, 1, 0,
                          0, 4, -4, -1, 1, 0,
                          0, -2, -1, 2, 1, 0,
                          0, 2, -1, -2, 1, 0,
                          0, 4, 0, -5, 0, 1};
constexpr float kG4[] = {1.0f / 4, 0, 0,
                         -1.0f / 6, -1.0f / 6, -1.0f / 6,
                         -1.0f / 6, 1.0f / 6, -1.0f / 6,
                         1.0f / 24, 1.0f / 12, 1.0f / 6,
                         1.0f / 24, -1.0f / 12, 1.0f / 6,
                         0, 0, 1};
constexpr float kAT4[] = {1, 1, 1, 1, 1, 0,
                          0, 1, -1, 2, -2, 0,
                          0, 1, 1, 4, 4, 0,
                          0, 1, -1, 8, -8, 1};
// clang-format on

WinogradMatrices matricesFor(int64_t m) {
  if (m == 2)
    return {2, kBT2, kG2, kAT2};
  return {4, kBT4, kG4, kAT4};
}

/// Outputs below this (in height or width) are never rewritten, whatever
/// the tile: a 4 x 4 output is one F(4x4) tile, two F(2x2) ones.
constexpr int64_t kMinOutputForAnyTile = 4;

Value rewriteConv(OpBuilder &ob, linalg::Conv2DNchwFchwOp conv, const ConvShape &s, WinogradMatrices w) {
  TensorBuilder b{ob, conv.getLoc(), ob.getF32Type()};
  const int64_t m = w.m, alpha = m + 2;
  const int64_t th = llvm::divideCeil(s.oh, m), tw = llvm::divideCeil(s.ow, m);
  const int64_t hn = m * th + 2, wn = m * tw + 2;

  // Input: [1,C,Hp,Wp] -> HWC [Hn,Wn,C] (rows/cols past the last window
  // dropped, zero ones added for the last partial tiles).
  Value xt = nchwToHwc(b, conv.getInputs()[0], s.hp, s.wp, s.c);
  const int64_t keptH = std::min(s.hp, hn), keptW = std::min(s.wp, wn);
  if (keptH < s.hp || keptW < s.wp)
    xt = b.slice(xt, {0, 0, 0}, {keptH, keptW, s.c}, {1, 1, 1}, {keptH, keptW, s.c});
  if (keptH < hn || keptW < wn) {
    Value zero = arith::ConstantOp::create(ob, b.loc, ob.getF32FloatAttr(0));
    xt = tensor::PadOp::create(ob, b.loc, RankedTensorType::get({hn, wn, s.c}, b.f32), xt, b.attrs({0, 0, 0}),
                               b.attrs({hn - keptH, wn - keptW, 0}), zero);
  }

  // V = B^T d B, rows then columns: T1[a][th][w][c] = sum_i BT[a][i] d[m*th+i][w][c],
  // V[a][b][th][tw][c] = sum_j BT[b][j] T1[a][th][m*tw+j][c].
  SmallVector<Value> taps, coefs;
  for (int64_t i = 0; i < alpha; ++i) {
    taps.push_back(b.slice(xt, {i, 0, 0}, {th, wn, s.c}, {m, 1, 1}, {th, wn, s.c}));
    coefs.push_back(b.column(w.bt, alpha, alpha, i));
  }
  // Loops (th, w, a, c) and (a, th, tw, b, c): the coefficient dim second
  // innermost (see TensorBuilder::combine).
  Value t1 = b.combine(taps, coefs, b.map(4, {0, 1, 3}), b.map(4, {2}), {alpha, th, wn, s.c}, {1, 2, 0, 3});
  taps.clear();
  for (int64_t j = 0; j < alpha; ++j)
    taps.push_back(b.slice(t1, {0, 0, j, 0}, {alpha, th, tw, s.c}, {1, 1, m, 1}, {alpha, th, tw, s.c}));
  Value v = b.combine(taps, coefs, b.map(5, {0, 1, 2, 4}), b.map(5, {3}), {alpha, alpha, th, tw, s.c},
                      {0, 2, 3, 1, 4});
  v = b.collapse(v, {{0, 1}, {2, 3}, {4}});

  // U[a][b][c][f] = sum_{kh,kw} G[a][kh] G[b][kw] g[f][c][kh][kw]: reads only
  // the filter, so cuvil-split-prepack runs it once at load.
  Value g = b.constant({alpha, 3}, w.g);
  auto red = utils::IteratorType::reduction, par = utils::IteratorType::parallel;
  Value u = linalg::GenericOp::create(
                ob, b.loc, TypeRange{RankedTensorType::get({alpha, alpha, s.c, s.f}, b.f32)},
                ValueRange{conv.getInputs()[1], g, g}, ValueRange{b.zeros({alpha, alpha, s.c, s.f})},
                ArrayRef<AffineMap>{b.map(6, {3, 2, 4, 5}), b.map(6, {0, 4}), b.map(6, {1, 5}),
                                    b.map(6, {0, 1, 2, 3})},
                ArrayRef<utils::IteratorType>{par, par, par, par, red, red},
                [](OpBuilder &nb, Location l, ValueRange a) {
                  Value p = arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, a[0], a[1]), a[2]);
                  linalg::YieldOp::create(nb, l, arith::AddFOp::create(nb, l, a[3], p).getResult());
                })
                .getResult(0);
  u = b.collapse(u, {{0, 1}, {2}, {3}});

  // M[ab] = V[ab] x U[ab]: [tiles x C] x [C x F] for each of the alpha^2 positions.
  auto mType = RankedTensorType::get({alpha * alpha, th * tw, s.f}, b.f32);
  Value prod = linalg::BatchMatmulOp::create(ob, b.loc, TypeRange{mType}, ValueRange{v, u},
                                             ValueRange{b.zeros(mType.getShape())})
                   .getResult(0);
  prod = b.expand(prod, {alpha, alpha, th, tw, s.f}, {{0, 1}, {2, 3}, {4}});

  // Y = A^T M A: S[p][b][th][tw][f] = sum_a AT[p][a] M[a][b][th][tw][f],
  // Y[th][p][tw][q][f] = sum_b AT[q][b] S[p][b][th][tw][f].
  taps.clear();
  coefs.clear();
  for (int64_t a = 0; a < alpha; ++a) {
    taps.push_back(b.slice(prod, {a, 0, 0, 0, 0}, {1, alpha, th, tw, s.f}, {1, 1, 1, 1, 1}, {alpha, th, tw, s.f}));
    coefs.push_back(b.column(w.at, m, alpha, a));
  }
  // Loops (b, th, tw, p, f); the second pass's q is already second innermost.
  Value sPass = b.combine(taps, coefs, b.map(5, {0, 1, 2, 4}), b.map(5, {3}), {m, alpha, th, tw, s.f},
                          {1, 2, 3, 0, 4});
  taps.clear();
  for (int64_t bb = 0; bb < alpha; ++bb)
    taps.push_back(b.slice(sPass, {0, bb, 0, 0, 0}, {m, 1, th, tw, s.f}, {1, 1, 1, 1, 1}, {m, th, tw, s.f}));
  Value y = b.combine(taps, coefs, b.map(5, {1, 0, 2, 4}), b.map(5, {3}), {th, m, tw, m, s.f});

  // [OH, OW, F] without the padded tiles' extra rows/cols -> [1,F,OH,OW].
  y = b.collapse(y, {{0, 1}, {2, 3}, {4}});
  if (m * th != s.oh || m * tw != s.ow)
    y = b.slice(y, {0, 0, 0}, {s.oh, s.ow, s.f}, {1, 1, 1}, {s.oh, s.ow, s.f});
  y = b.expand(y, {1, s.oh, s.ow, s.f}, {{0, 1}, {2}, {3}});
  return nhwcToNchw(b, addConvInitNhwc(b, conv, y), s.oh, s.ow, s.f);
}

struct WinogradConv : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  WinogradConv(MLIRContext *ctx, const CuvilWinogradConvOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv, PatternRewriter &rewriter) const override {
    // Small channel counts leave the transforms, which scale with C + F,
    // larger than the product they save (C x F).
    FailureOr<ConvShape> s = matchBatchOneConv(rewriter, conv, options.minInputChannels, options.minOutputChannels);
    if (failed(s))
      return failure();
    if (s->kh != 3 || s->kw != 3)
      return rewriter.notifyMatchFailure(conv, "filter is not 3x3");
    if (!allOnes(conv.getStrides()) || !allOnes(conv.getDilations()))
      return rewriter.notifyMatchFailure(conv, "stride or dilation is not 1");
    if (s->oh < kMinOutputForAnyTile || s->ow < kMinOutputForAnyTile)
      return rewriter.notifyMatchFailure(conv, "output smaller than 4x4");
    // The filter transform must run once, in main_prepack: per call (scalar
    // reduction loops) it would cost more than the products it saves.
    if (!isWeightOnly(conv.getInputs()[1]))
      return rewriter.notifyMatchFailure(conv, "filter not computed from weights only");
    FailureOr<int64_t> m = outputTile(rewriter, conv, *s);
    if (failed(m))
      return failure();
    LLVM_DEBUG(DBGS() << "F(" << *m << "x" << *m << ", 3x3) for the " << s->oh << "x" << s->ow << " output, "
                      << s->c << " -> " << s->f << " channels, at " << conv.getLoc() << "\n");
    rewriter.replaceOp(conv, rewriteConv(rewriter, conv, *s, matricesFor(*m)));
    return success();
  }

  /// The forced tile, or the one that pays off for this output size.
  FailureOr<int64_t> outputTile(PatternRewriter &rewriter, linalg::Conv2DNchwFchwOp conv, const ConvShape &s) const {
    if (options.outputTile == 2 || options.outputTile == 4)
      return options.outputTile;
    if (options.outputTile != 0)
      return rewriter.notifyMatchFailure(conv, "output-tile must be 0, 2 or 4");
    // Auto: nothing below min-output-size (14 x 14); there the transformed filter
    // (36/9 of the weights for m = 4, 16/9 for m = 2) is read for a handful
    // of tiles and costs more than the saved products (ResNet-18's 7 x 7,
    // 512-channel conv: 3.4 ms with m = 2, 5.4 ms with m = 4, 2.6 ms as
    // cuvil-im2col-conv's matmul). F(4x4) when that leaves >= min-tiles-for-f4
    // (32) tiles per position (28 x 28 and up), else F(2x2) (14 x 14, 256 channels:
    // 1.32-1.41 ms vs 1.45-1.49 ms, and ~10x more accurate).
    if (std::min(s.oh, s.ow) < options.minOutputSize)
      return rewriter.notifyMatchFailure(conv, [&](Diagnostic &diag) {
        diag << "output " << s.oh << "x" << s.ow << " smaller than min-output-size " << options.minOutputSize;
      });
    int64_t tiles4 = llvm::divideCeil(s.oh, 4) * llvm::divideCeil(s.ow, 4);
    return tiles4 >= options.minTilesForF4 ? 4 : 2;
  }

  CuvilWinogradConvOptions options;
};

struct CuvilWinogradConvPass : cuvil::impl::CuvilWinogradConvBase<CuvilWinogradConvPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    // Checked once, before any function runs.
    if (outputTile != 0 && outputTile != 2 && outputTile != 4)
      return emitError(UnknownLoc::get(ctx))
             << "cuvil-winograd-conv: output-tile must be 0, 2 or 4, got " << int64_t(outputTile);
    RewritePatternSet set(ctx);
    populateWinogradConvPatterns(
        set, CuvilWinogradConvOptions{outputTile, minInputChannels, minOutputChannels, minOutputSize, minTilesForF4});
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    // One rewrite per conv, in program order, nothing folded: the walk
    // driver, not the greedy one (which would also fold and move constants).
    walkAndApplyPatterns(getOperation(), patterns);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::cuvil::populateWinogradConvPatterns(RewritePatternSet &patterns,
                                               const CuvilWinogradConvOptions &options) {
  patterns.add<WinogradConv>(patterns.getContext(), options);
}
