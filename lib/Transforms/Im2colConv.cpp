//===- Im2colConv.cpp - convolutions as im2col + one matmul ---------------===//
// out[p][f] = sum_{kh,kw,c} x[s*oh + d*kh][s*ow + d*kw][c] * w[f][c][kh][kw]
// with p = (oh, ow): a [P x K] x [K x F] matmul, K = KH*KW*C. The windows
// are gathered by one all-parallel linalg.generic (C-long rows of the HWC
// input; the elementwise schedule makes them vector loads and stores).
//===----------------------------------------------------------------------===//
#include "ConvRewrite.h"
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/ShiftedRows.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "cuvil-im2col-conv"
#define DBGS() (llvm::dbgs() << "[" DEBUG_TYPE "] ")

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILIM2COLCONV
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Bytes of an AMX tile row; columns of a VNNI panel (pack_cpu.mlir).
constexpr int64_t kTileRowBytes = 64, kPanel = 64;
/// Rows of the forall tiles of these convs (matmul_dot_cpu.mlir
/// @cuvil_amx_int8_schedule and @cuvil_vnni_shifted_rows tile them by 64
/// rows, whatever AMX_TM / DOT_TM say).
constexpr int64_t kShiftedRowsTile = 64;
/// The shifted-rows form saves the gather and the tiles' reads of its
/// matrix from L3; a matrix that stays in L2 costs less than the padded
/// width's extra rows (ResNet-18 int8 on AMX, 1 thread, per call set: 56 x
/// 56 x 64 0.79 -> 0.36 ms, 28 x 28 x 128 0.40 -> 0.34, but 14 x 14 x 256
/// (0.45 MB gathered) 0.41 -> 0.42 and 7 x 7 x 512 0.63 -> 0.70; on the
/// dot-product kernel those two are bounded out by shifted-rows-max-extra
/// anyway).
constexpr int64_t kShiftedRowsMinBytes = 512 * 1024;

/// The gather's window as taps x run length (d1 = 1): KH x KW*C, or more of
/// both (windowLayout(): K a multiple of the tile rows).
struct WindowLayout {
  int64_t taps, run;
};

/// For int8 convs with `kMultiple` (AMX hosts: 64, the bytes of a tile row)
/// whose K = KH*KW*C is not a multiple of it, with dilation 1 along W: a
/// window of taps' >= KH rows of run' >= KW*C input elements with taps' x
/// run' = K rounded up to the multiple (the ResNet stem: 7 x 21 = 147 ->
/// 8 x 24 = 192). The extra elements are the input's own (the next pixels
/// of the row, the next row) and their weights are zero, so the products
/// are unchanged; every read stays inside the padded input. Without it, the
/// VNNI packing padded the 147-byte rows to whole tile rows by a copy of
/// the gathered matrix on every call (pack_cpu's @cuvil_pack_rhs_vnni4_tiles).
/// None fits: KH x KW*C.
WindowLayout windowLayout(const ConvShape &s, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                          int64_t kMultiple, bool int8) {
  WindowLayout plain{s.kh, s.kw * s.c};
  int64_t k = s.kh * s.kw * s.c;
  if (!int8 || kMultiple <= 0 || dilations[1] != 1 || k % kMultiple == 0)
    return plain;
  int64_t target = (k + kMultiple - 1) / kMultiple * kMultiple;
  // Reads in bounds: the last window's rows and run end inside the padded
  // input ([HP][WP*C]).
  int64_t maxTaps = (s.hp - 1 - strides[0] * (s.oh - 1)) / dilations[0] + 1;
  int64_t maxRun = s.wp * s.c - strides[1] * s.c * (s.ow - 1);
  for (int64_t taps = s.kh; taps <= maxTaps; ++taps)
    if (target % taps == 0 && target / taps >= plain.run && target / taps <= maxRun)
      return {taps, target / taps};
  return plain;
}

/// cols[oh][ow][kh][kw][c] = x[s0*oh + d0*kh][s1*ow + d1*kw][c] for the HWC
/// input `xt`: a tensor.extract in the body, not one slice copy per window
/// (those stayed in `main` as strided memref copies: ~7% of ResNet-18, on one
/// thread). The trailing index is the innermost loop, so the vectorizer reads
/// contiguous rows. With d1 = 1 the window's (kw, c) are one run of kw*C
/// elements of the input's row (HWC is [H][W*C]): the gather's rows are that
/// long, not C (the int8 stem, C = 3: 0.62 ms as rows of 3 bytes).
/// With d1 = 1 the window is `window`'s taps x run (runs of the input's row).
Value gatherWindows(TensorBuilder &b, Value xt, const ConvShape &s, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> dilations, WindowLayout window) {
  const bool rowRuns = dilations[1] == 1;
  SmallVector<int64_t> shape = rowRuns ? SmallVector<int64_t>{s.oh, s.ow, window.taps, window.run}
                                       : SmallVector<int64_t>{s.oh, s.ow, s.kh, s.kw, s.c};
  Value source = rowRuns ? b.collapse(xt, {{0}, {1, 2}}) : xt;
  auto type = RankedTensorType::get(shape, b.f32);
  const unsigned rank = shape.size();
  SmallVector<AffineMap> maps{b.b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b.b, b.loc, TypeRange{type}, ValueRange{}, ValueRange{b.empty(shape)}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange) {
        auto index = [&](int64_t dim) { return linalg::IndexOp::create(nb, l, dim).getResult(); };
        // outer * stride + tap * dilation, on index values
        auto position = [&](int64_t outDim, int64_t stride, Value tap) {
          Value outer = arith::MulIOp::create(nb, l, index(outDim),
                                              arith::ConstantIndexOp::create(nb, l, stride));
          return arith::AddIOp::create(nb, l, outer, tap).getResult();
        };
        auto scaled = [&](int64_t dim, int64_t factor) {
          return arith::MulIOp::create(nb, l, index(dim), arith::ConstantIndexOp::create(nb, l, factor))
              .getResult();
        };
        Value row = position(0, strides[0], scaled(2, dilations[0]));
        SmallVector<Value> at{row};
        if (rowRuns) {
          at.push_back(position(1, strides[1] * s.c, index(3)));   // (s1*ow)*C + kw*C + c
        } else {
          at.push_back(position(1, strides[1], scaled(3, dilations[1])));
          at.push_back(index(4));
        }
        Value v = tensor::ExtractOp::create(nb, l, source, at);
        linalg::YieldOp::create(nb, l, v);
      });
  return op.getResult(0);
}

Value im2colConv(OpBuilder &ob, linalg::Conv2DNchwFchwOp conv, const ConvShape &s, int64_t kMultiple) {
  // Operands and windows in the input's type, the product in the
  // accumulator's (f32, or i8 operands into i32: linalg.matmul extends them).
  Type inType = getElementTypeOrSelf(conv.getInputs()[0].getType());
  Type accType = getElementTypeOrSelf(conv.getOutputs()[0].getType());
  TensorBuilder b{ob, conv.getLoc(), inType};
  TensorBuilder acc{ob, conv.getLoc(), accType};
  auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());
  const int64_t p = s.oh * s.ow;

  WindowLayout window = windowLayout(s, strides, dilations, kMultiple, isInt8Conv(conv));
  Value xt = nchwToHwc(b, conv.getInputs()[0], s.hp, s.wp, s.c);
  Value cols = gatherWindows(b, xt, s, strides, dilations, window);
  Value lhs = dilations[1] == 1 ? b.collapse(cols, {{0, 1}, {2, 3}}) : b.collapse(cols, {{0, 1}, {2, 3, 4}});

  Value rhs = b.transpose(conv.getInputs()[1], {s.kh, s.kw, s.c, s.f}, {2, 3, 1, 0});
  if (window.taps != s.kh || window.run != s.kw * s.c) {
    // W^T's rows as the window's: [KH][KW*C][F] zero-padded to [taps][run][F].
    Value rows = b.collapse(rhs, {{0}, {1, 2}, {3}});
    Value zero = arith::ConstantOp::create(ob, b.loc, cast<TypedAttr>(ob.getZeroAttr(inType)));
    auto padded = RankedTensorType::get({window.taps, window.run, s.f}, inType);
    rhs = tensor::PadOp::create(ob, b.loc, padded, rows, b.attrs({0, 0, 0}),
                                b.attrs({window.taps - s.kh, window.run - s.kw * s.c, 0}), zero);
    rhs = b.collapse(rhs, {{0, 1}, {2}});
  } else {
    rhs = b.collapse(rhs, {{0, 1, 2}, {3}});
  }

  auto outType = RankedTensorType::get({p, s.f}, accType);
  Value prod = linalg::MatmulOp::create(ob, b.loc, TypeRange{outType}, ValueRange{lhs, rhs},
                                        ValueRange{acc.zeros({p, s.f})})
                   .getResult(0);
  Value y = acc.expand(prod, {1, s.oh, s.ow, s.f}, {{0, 1, 2}, {3}});
  return nhwcToNchw(acc, addConvInitNhwc(acc, conv, y), s.oh, s.ow, s.f);
}

/// The tensor.pad (constant value, static sizes) that makes `conv`'s
/// padded input, if that is where the input comes from.
tensor::PadOp inputPad(linalg::Conv2DNchwFchwOp conv) {
  auto pad = conv.getInputs()[0].getDefiningOp<tensor::PadOp>();
  if (!pad || !pad.getConstantPaddingValue() ||
      ShapedType::isDynamicShape(pad.getStaticLow()) || ShapedType::isDynamicShape(pad.getStaticHigh()) ||
      !pad.getSourceType().hasStaticShape())
    return {};
  return pad;
}

/// Whether `conv` (int8, `s`) takes the shifted-rows form below: stride and
/// dilation 1, a window wider than one pixel, input and output channels in
/// whole 64-byte tile rows / 64-column panels, its padded input a
/// tensor.pad (which then also adds the rows the last tiles read), a
/// gathered matrix of at least kShiftedRowsMinBytes, and (`maxExtraPercent`
/// > 0) at most that many percent more rows computed than output pixels:
/// the padded width's columns past OW and the rows up to a whole tile.
/// Measured on the dot-product kernel (ResNet-18 int8, AMD Zen 5, 1
/// thread, per call set): 56 x 56 x 64 (4% extra) 1.23 -> 1.07 ms, 28 x 28
/// x 128 (14% extra) 0.85 -> 0.89 ms.
bool takesShiftedRows(linalg::Conv2DNchwFchwOp conv, const ConvShape &s, int64_t maxExtraPercent) {
  const int64_t pixels = s.oh * s.ow;
  const int64_t rowsQ = (s.oh * s.wp + kShiftedRowsTile - 1) / kShiftedRowsTile * kShiftedRowsTile;
  // A user's option may be huge: clamped, the product below cannot
  // overflow (past 1000% only a padding wider than 5x the output row would
  // tell the bound from none).
  const int64_t boundPercent = std::min<int64_t>(maxExtraPercent, 1000);
  return isInt8Conv(conv) && allOnes(conv.getStrides()) && allOnes(conv.getDilations()) && s.kh * s.kw > 1 &&
         s.c % kTileRowBytes == 0 && s.f % kPanel == 0 && inputPad(conv) &&
         pixels * s.kh * s.kw * s.c >= kShiftedRowsMinBytes &&
         (boundPercent <= 0 || (rowsQ - pixels) * 100 <= boundPercent * pixels);
}

/// A stride-1 int8 conv (AMX and VNNI hosts) as one contraction over shifted rows of
/// its padded input, without the im2col gather: with the input flattened to
/// rows of pixels X[r][C] (r = h * WP + w), the output on the padded width,
/// Y[q][f] with q = oh * WP + ow, is
///
///   Y[q][f] = sum_{kh,kw,c} X[q + kh * WP + kw][c] * W[f][c][kh][kw]
///
/// (the columns ow >= OW of each output row are computed and dropped). Each
/// tap reads a window of X's rows in place, so a 16-row AMX tile of A is 16
/// pixels' channels at row stride C: cuvil-amx-matmul reads them from the
/// input (in L2: 215 KB for ResNet's 56 x 56 x 64) instead of from a
/// gathered [OH*OW][KH*KW*C] matrix 9x its size, which the gather wrote and
/// the tiles then streamed from L3 (C reference kernels, 56 x 56 x 64 -> 64,
/// Xeon model 167: 0.080 ms against 0.087 gather + 0.109 matmul).
/// On hosts with vpdpbusd and no AMX, the dot-product kernel reads them the
/// same way: each register tile's taps are consecutive pixels from the
/// tap's shift (matmul_dot_cpu.mlir @cuvil_vnni_shifted_rows).
/// The contraction is built in the loop order and VNNI layout the AMX
/// schedule tiles (matmul_dot_cpu.mlir @cuvil_amx_shifted_rows):
/// loops [n/64, q, 64, kh, kw, c/4, 4], A = X as [R][C/4][4], B the weights
/// packed as [F/64][KH][KW][C/4][64][4] (in main_prepack), C [Q][F/64][64],
/// signed x signed (tdpbssd; cuvil-unsigned-int8-lhs{shifted-rows} makes it
/// u8 x s8 for vpdpbusd). Q is rounded up to whole forall tiles of
/// kShiftedRowsTile rows, and the input's pad adds rows at the bottom so
/// that every row those tiles read exists.
Value shiftedRowsConv(OpBuilder &ob, linalg::Conv2DNchwFchwOp conv, const ConvShape &s) {
  Location loc = conv.getLoc();
  Type i8 = getElementTypeOrSelf(conv.getInputs()[0].getType());
  Type i32 = getElementTypeOrSelf(conv.getOutputs()[0].getType());
  TensorBuilder b{ob, loc, i8};
  TensorBuilder acc{ob, loc, i32};
  const int64_t q = s.oh * s.wp, panels = s.f / kPanel, groups = s.c / 4;
  const int64_t rowsQ = (q + kShiftedRowsTile - 1) / kShiftedRowsTile * kShiftedRowsTile;
  // The last tile's last product reads row rowsQ - 1 + (KH-1)*WP + KW-1.
  const int64_t rowsRead = rowsQ + (s.kh - 1) * s.wp + s.kw - 1;
  const int64_t extraRows = std::max<int64_t>(0, (rowsRead - s.hp * s.wp + s.wp - 1) / s.wp);

  // The input's pad, with the extra rows at the bottom (their value only
  // reaches the dropped columns).
  tensor::PadOp pad = inputPad(conv);
  SmallVector<int64_t> high(pad.getStaticHigh());
  high[2] += extraRows;
  auto tallType = RankedTensorType::get({1, s.c, s.hp + extraRows, s.wp}, i8);
  Value tall = tensor::PadOp::create(ob, loc, tallType, pad.getSource(), b.attrs(pad.getStaticLow()), b.attrs(high),
                                     pad.getConstantPaddingValue(), pad.getNofold());
  Value x = nchwToHwc(b, tall, s.hp + extraRows, s.wp, s.c);
  const int64_t rows = (s.hp + extraRows) * s.wp;
  Value a = b.expand(b.collapse(x, {{0, 1}, {2}}), {rows, groups, 4}, {{0}, {1, 2}});

  // [F][C][KH][KW] -> [KH][KW][C][F] -> [KH][KW][C/4][4][F/64][64] -> [F/64][KH][KW][C/4][64][4]
  Value w = b.transpose(conv.getInputs()[1], {s.kh, s.kw, s.c, s.f}, {2, 3, 1, 0});
  w = b.expand(w, {s.kh, s.kw, groups, 4, panels, kPanel}, {{0}, {1}, {2, 3}, {4, 5}});
  w = b.transpose(w, {panels, s.kh, s.kw, groups, kPanel, 4}, {4, 0, 1, 2, 5, 3});

  auto outType = RankedTensorType::get({rowsQ, panels, kPanel}, i32);
  Value prod = linalg::GenericOp::create(
                   ob, loc, TypeRange{outType}, ValueRange{a, w}, ValueRange{acc.zeros({rowsQ, panels, kPanel})},
                   cuvil::shiftedRowsMaps(ob.getContext(), s.wp), cuvil::shiftedRowsIteratorTypes(),
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     Value lhs = arith::ExtSIOp::create(nb, l, i32, args[0]);
                     Value rhs = arith::ExtSIOp::create(nb, l, i32, args[1]);
                     Value mul = arith::MulIOp::create(nb, l, lhs, rhs);
                     linalg::YieldOp::create(nb, l, ValueRange{arith::AddIOp::create(nb, l, args[2], mul)});
                   })
                   .getResult(0);

  // [Q'][F/64][64] -> [Q'][F] -> rows [0, OH*WP) as [OH][WP][F] -> columns [0, OW).
  Value y = acc.collapse(prod, {{0}, {1, 2}});
  y = acc.slice(y, {0, 0}, {q, s.f}, {1, 1}, {q, s.f});
  y = acc.expand(y, {s.oh, s.wp, s.f}, {{0, 1}, {2}});
  y = acc.slice(y, {0, 0, 0}, {s.oh, s.ow, s.f}, {1, 1, 1}, {s.oh, s.ow, s.f});
  y = acc.expand(y, {1, s.oh, s.ow, s.f}, {{0, 1}, {2}, {3}});
  return nhwcToNchw(acc, addConvInitNhwc(acc, conv, y), s.oh, s.ow, s.f);
}

struct Im2colConv : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  Im2colConv(MLIRContext *ctx, const CuvilIm2colConvOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv, PatternRewriter &rewriter) const override {
    FailureOr<ConvShape> shape =
        matchBatchOneConv(rewriter, conv, options.minInputChannels, options.minOutputChannels, /*int8=*/true);
    if (failed(shape))
      return failure();
    if (options.int8ShiftedRows && takesShiftedRows(conv, *shape, options.shiftedRowsMaxExtra)) {
      LLVM_DEBUG(DBGS() << "shifted-rows contraction for the conv at " << conv.getLoc() << "\n");
      rewriter.replaceOp(conv, shiftedRowsConv(rewriter, conv, *shape));
      return success();
    }
    LLVM_DEBUG(DBGS() << "im2col matmul " << shape->oh * shape->ow << " x " << shape->f << " x "
                      << shape->kh * shape->kw * shape->c << " for the conv at " << conv.getLoc() << "\n");
    rewriter.replaceOp(conv, im2colConv(rewriter, conv, *shape, options.int8KMultiple));
    return success();
  }

  CuvilIm2colConvOptions options;
};

struct CuvilIm2colConvPass : cuvil::impl::CuvilIm2colConvBase<CuvilIm2colConvPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateIm2colConvPatterns(
        set, CuvilIm2colConvOptions{minInputChannels, minOutputChannels, int8KMultiple, int8ShiftedRows,
                                    shiftedRowsMaxExtra});
    patterns = std::move(set);
    return success();
  }

  // One rewrite per conv, in program order, nothing folded: the walk driver,
  // not the greedy one (which would also fold and move the constants).
  void runOnOperation() override { walkAndApplyPatterns(getOperation(), patterns); }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::cuvil::populateIm2colConvPatterns(RewritePatternSet &patterns, const CuvilIm2colConvOptions &options) {
  patterns.add<Im2colConv>(patterns.getContext(), options);
}
