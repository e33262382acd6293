//===- CuvilOps.td - Cuvil ops -----------------------------*- tablegen -*-===//
// Result types are inferred (InferTypeOpAdaptor) wherever they follow from
// the operands, so a wrong printed type is a verifier error naming operands.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS
#define CUVIL_OPS

include "CuvilDialect.td"
include "CuvilAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Cuvil_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Cuvil_Tensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Cuvil_MatmulOp : Cuvil_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Batched matrix multiply with numpy batch broadcasting";
  let description = [{
    `lhs: [B..., M, K]`, `rhs: [B'..., K, N]` (or `[B'..., N, K]` with
    `transpose_b`, the layout of `nn.Linear` weights), result
    `[broadcast(B, B')..., M, N]`. Rank-1 operands are not accepted: reshape
    first. `lhs` may carry a `#cuvil.sparse_csr` encoding (rank 2), in which
    case only the stored entries are multiplied. Products accumulate in the
    operands' element type, but for int8 operands (signed), which accumulate
    in i32 (`torch._int_mm`; x86's int8 dot products).

    ```mlir
    %c = cuvil.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
    %d = cuvil.matmul %x, %w {transpose_b} : tensor<32x64xi8>, tensor<128x64xi8> -> tensor<32x128xi32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs, UnitAttr:$transpose_b);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise ops (numpy broadcasting)
//===----------------------------------------------------------------------===//

class Cuvil_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Cuvil_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let summary = "Elementwise `" # mnemonic # "` with numpy broadcasting";
  let description = [{
    Operands broadcast like numpy: shapes align on the right, a size-1 (static)
    dim stretches. The broadcast is explicit in the operand types; the result
    type is inferred from them. Operands share an element type.
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Cuvil_AddOp : Cuvil_BinaryOp<"add", [Commutative]>;
def Cuvil_SubOp : Cuvil_BinaryOp<"sub">;
def Cuvil_MulOp : Cuvil_BinaryOp<"mul", [Commutative]>;
def Cuvil_DivOp : Cuvil_BinaryOp<"div">;
def Cuvil_MaxOp : Cuvil_BinaryOp<"max", [Commutative]>;

class Cuvil_UnaryOp<string mnemonic, string what>
    : Cuvil_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Cuvil_FloatTensor:$input);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cuvil_ReluOp : Cuvil_UnaryOp<"relu", "max(x, 0), elementwise">;
def Cuvil_TanhOp : Cuvil_UnaryOp<"tanh", "tanh(x), elementwise">;
def Cuvil_ExpOp : Cuvil_UnaryOp<"exp", "exp(x), elementwise">;
def Cuvil_GeluOp : Cuvil_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "GELU, exact (erf) or with the tanh approximation";
  let arguments = (ins Cuvil_FloatTensor:$input, UnitAttr:$tanh_approx);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

def Cuvil_SoftmaxOp : Cuvil_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Numerically stable softmax along one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis` (negative counts
    from the end).
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axis as a non-negative dimension index.
    int64_t getNormalizedAxis() {
      int64_t rank = getInput().getType().getRank();
      int64_t axis = static_cast<int64_t>(getAxis()); // I64Attr reads unsigned
      return axis < 0 ? axis + rank : axis;
    }
  }];
}

def Cuvil_LayerNormOp : Cuvil_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalisation over the last dim, with affine weight and bias";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * weight + bias`, statistics over the
    last dim (biased variance, as PyTorch). `weight` and `bias` are 1-D with
    the size of that dim.
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Cuvil_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight) `,` type($bias)
    `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Cuvil_AttentionOp : Cuvil_Op<"attention",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Scaled dot-product attention: softmax(q k^T * scale + mask) v";
  let description = [{
    `q: [B..., S, D]`, `k: [B..., T, D]`, `v: [B..., T, Dv]` → `[B..., S, Dv]`.
    `scale` defaults to `1/sqrt(D)`. `causal` masks key positions after the
    query position. `mask` is an additive mask broadcastable to
    `[B..., S, T]`. `layout` (`#cuvil.block_masked`) names the present
    blocks of the `[S, T]` score matrix: only those are computed, the rest are
    masked out (a query row with no present block yields zeros).
  }];
  let arguments = (ins Cuvil_FloatTensor:$query, Cuvil_FloatTensor:$key,
                       Cuvil_FloatTensor:$value,
                       Optional<Cuvil_FloatTensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<Cuvil_BlockMaskedAttr>:$layout);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale actually applied: the attribute, or 1/sqrt(head dim).
    double getEffectiveScale();
  }];
}

//===----------------------------------------------------------------------===//
// Types and layouts
//===----------------------------------------------------------------------===//

def Cuvil_DtypeCastOp : Cuvil_Op<"dtype_cast", [Pure]> {
  let summary = "Convert element type (f32, f16, bf16, i8, i32), same shape";
  let description = [{
    Float narrowing rounds to nearest-even (IEEE default); float → integer
    rounds per `rounding` (default nearest-even) and saturates to the
    integer range; integer → float is exact or rounds to nearest-even.
  }];
  let arguments = (ins Cuvil_Tensor:$input,
      DefaultValuedAttr<Cuvil_RoundingModeAttr,
                        "::mlir::cuvil::RoundingMode::nearest_even">:$rounding);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_ToLayoutOp : Cuvil_Op<"to_layout", [Pure]> {
  let summary = "Keep only the entries a layout stores (dense → sparse encoding)";
  let description = [{
    The result has the same shape and element type and a `#cuvil.sparse_csr`
    or `#cuvil.block_masked` encoding; entries outside the pattern are
    dropped.
  }];
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cuvil_ToDenseOp : Cuvil_Op<"to_dense", [Pure, InferTypeOpAdaptor]> {
  let summary = "Materialise an encoded tensor densely (zeros outside the pattern)";
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Target instructions (vector level, made by the schedules)
//===----------------------------------------------------------------------===//

def Cuvil_DotU8S8Op : Cuvil_Op<"x86.dot_u8s8", [Pure, AllTypesMatch<["acc", "lhs", "rhs", "result"]>]> {
  let summary = "x86 int8 dot product of unsigned and signed bytes (vpdpbusd)";
  let description = [{
    Lane i of the result is `acc[i] + sum_{q<4} u8(lhs[i] byte q) * s8(rhs[i] byte q)`,
    without saturation: AVX512-VNNI's `vpdpbusd` on 16 lanes. Each i32 lane of
    `lhs` / `rhs` holds four bytes (VNNI layout). Made by
    `transform.apply_patterns.cuvil.vector_contract_to_u8s8_dot`; a pure op
    (upstream's LLVM intrinsic call has unknown memory effects, which
    bufferization's deallocation refuses), lowered to
    `llvm.x86.avx512.vpdpbusd.512` by cuvil-lower-x86-dot just before the
    vector-to-LLVM conversion.

    ```mlir
    %r = cuvil.x86.dot_u8s8 %acc, %a, %b : vector<16xi32>
    ```
  }];
  let arguments = (ins VectorOfLengthAndType<[16], [I32]>:$acc, VectorOfLengthAndType<[16], [I32]>:$lhs,
                       VectorOfLengthAndType<[16], [I32]>:$rhs);
  let results = (outs VectorOfLengthAndType<[16], [I32]>:$result);
  let assemblyFormat = "$acc `,` $lhs `,` $rhs attr-dict `:` type($result)";
}

#endif // CUVIL_OPS
