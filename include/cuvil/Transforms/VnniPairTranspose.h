//===- VnniPairTranspose.h - the VNNI pair packing of an activation -*- C++ -*-===//
// A bf16 product whose rhs is computed per call (attention's k^T and v, a
// matmul of two inputs) packs that rhs into VNNI pair panels on every call
// (pack_cpu.mlir): out[.., j, v] = in[.., v, .., j], a linalg.transpose that
// moves a dim of 2 (the k pair) innermost and the input's rows next to it.
// cuvil-vnni-interleave writes it as row loads and vector interleaves; the
// elementwise schedule (transform.cuvil.match.vnni_pair_transpose) leaves it
// to that pass. Both know it by this one predicate.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_VNNIPAIRTRANSPOSE_H
#define CUVIL_TRANSFORMS_VNNIPAIRTRANSPOSE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::cuvil {

/// The longest input row (the output's second-innermost dim) interleaved as
/// one vector: 64 columns is one VNNI panel, 256 a few registers.
constexpr int64_t kMaxVnniPairRow = 256;

/// Whether `op` (on tensors or buffers) is such a pack: static shapes, 16-bit
/// elements, the output's innermost dim an input dim of 2 and its
/// second-innermost the input's innermost, of at most kMaxVnniPairRow.
bool isVnniPairTranspose(linalg::TransposeOp op);

} // namespace mlir::cuvil

#endif // CUVIL_TRANSFORMS_VNNIPAIRTRANSPOSE_H
