//===- Im2colConv.cpp - convolutions as im2col + one matmul ---------------===//
// out[p][f] = sum_{kh,kw,c} x[s*oh + d*kh][s*ow + d*kw][c] * w[f][c][kh][kw]
// with p = (oh, ow): a [P x K] x [K x F] matmul, K = KH*KW*C. The window
// copies read and write C-long rows of the HWC input.
//===----------------------------------------------------------------------===//
#include "ConvRewrite.h"
#include "cuvil/Transforms/Passes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILIM2COLCONV
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

Value im2colConv(OpBuilder &ob, linalg::Conv2DNchwFchwOp conv, const ConvShape &s) {
  TensorBuilder b{ob, conv.getLoc(), ob.getF32Type()};
  auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());
  const int64_t p = s.oh * s.ow;

  Value x = b.collapse(conv.getInputs()[0], {{0, 1}, {2}, {3}});
  Value xt = b.transpose(x, {s.hp, s.wp, s.c}, {1, 2, 0});
  Value cols = b.empty({s.oh, s.ow, s.kh, s.kw, s.c});
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j) {
      Value window = b.slice(xt, {i * dilations[0], j * dilations[1], 0}, {s.oh, s.ow, s.c},
                             {strides[0], strides[1], 1}, {s.oh, s.ow, s.c});
      cols = tensor::InsertSliceOp::create(ob, b.loc, window, cols, b.attrs({0, 0, i, j, 0}),
                                           b.attrs({s.oh, s.ow, 1, 1, s.c}), b.attrs({1, 1, 1, 1, 1}));
    }
  Value lhs = b.collapse(cols, {{0, 1}, {2, 3, 4}});

  Value rhs = b.collapse(b.transpose(conv.getInputs()[1], {s.kh, s.kw, s.c, s.f}, {2, 3, 1, 0}), {{0, 1, 2}, {3}});

  auto outType = RankedTensorType::get({p, s.f}, b.f32);
  Value prod = linalg::MatmulOp::create(ob, b.loc, TypeRange{outType}, ValueRange{lhs, rhs},
                                        ValueRange{b.zeros({p, s.f})})
                   .getResult(0);
  Value y = b.transpose(prod, {s.f, p}, {1, 0});
  return addConvInit(b, conv, b.expand(y, {1, s.f, s.oh, s.ow}, {{0, 1}, {2, 3}}));
}

struct CuvilIm2colConvPass : cuvil::impl::CuvilIm2colConvBase<CuvilIm2colConvPass> {
  void runOnOperation() override {
    rewriteEachConv(getOperation(), [](OpBuilder &builder, linalg::Conv2DNchwFchwOp conv) -> Value {
      std::optional<ConvShape> shape = batchOneConvShape(conv, /*minIn=*/16, /*minOut=*/32);
      return shape ? im2colConv(builder, conv, *shape) : Value();
    });
  }
};

} // namespace
