//===- Transforms.h - Cuvil rewrite patterns -------------------*- C++ -*-===//
// The pattern sets behind Cuvil's pattern-based passes, for drivers and
// pipelines other than those passes (e.g. a transform script's
// apply_patterns, or another project's lowering). The options of the conv
// rewrites are the passes' generated option structs, so their defaults are
// written once, in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_TRANSFORMS_H
#define CUVIL_TRANSFORMS_TRANSFORMS_H

#include "cuvil/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil {

/// linalg.matmul / linalg.batch_matmul accumulating into a zero fill (with an
/// optional transpose of the rhs' last two dims) -> cuvil.matmul.
void populateRaiseLinalgPatterns(RewritePatternSet &patterns);

/// Dense Cuvil ops -> linalg / tensor / arith / math on tensors. Ops on
/// tensors with a Cuvil layout are left to the layout lowering of
/// cuvil-lower-to-linalg, which also changes function signatures.
void populateLowerToLinalgPatterns(RewritePatternSet &patterns);

/// f32 math.erf / math.exp / math.tanh -> arith + math.fma polynomials.
void populateMathApproxPatterns(RewritePatternSet &patterns);

/// Batch-1 static f32 linalg.conv_2d_nchw_fchw, 3x3, stride and dilation 1,
/// weight-only filter -> Winograd F(m x m, 3 x 3) (see cuvil-winograd-conv).
void populateWinogradConvPatterns(RewritePatternSet &patterns,
                                  const CuvilWinogradConvOptions &options = {});

/// Batch-1 static f32 linalg.conv_2d_nchw_fchw -> im2col gather + one
/// linalg.matmul (see cuvil-im2col-conv).
void populateIm2colConvPatterns(RewritePatternSet &patterns,
                                const CuvilIm2colConvOptions &options = {});

/// memref<...xi1> -> memref<...xi8>, every other type unchanged.
class BoolMemrefTypeConverter : public TypeConverter {
public:
  BoolMemrefTypeConverter();
};

/// Loads, stores, globals and every other region-free op on i1 memrefs,
/// function signatures, calls and returns, retyped with `converter` (a
/// BoolMemrefTypeConverter): loads truncate the byte, stores zero-extend.
void populateWidenBoolMemrefsPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns);

} // namespace mlir::cuvil

#endif // CUVIL_TRANSFORMS_TRANSFORMS_H
