//===- CuvilTransformOps.td - Cuvil's Transform-dialect ops -*- tablegen -*-===//
//
// A Transform-dialect extension (ops named transform.cuvil.*) with what
// transform_scripts/elementwise_cpu.mlir needs to schedule ops of any rank with
// one set of named sequences:
//   * matchers: `match.any_operand_bitwidth` (ops reading or writing i1),
//     `match.loop_ranges_at_least` (a table of minimum shapes, one per rank)
//     and `match.vnni_pair_transpose` (left to cuvil-vnni-interleave);
//   * `tile_sizes`: a rank-dependent list of tile (or vector) sizes as one
//     param holding one value per loop of the op;
//   * `balanced_row_tile`: a forall tile size that gives two threads equal
//     halves;
//   * `tile_using_for`, `tile_reduction_using_for` and `vectorize`: upstream's
//     transform.structured ops of those names, taking such a param ("packed"
//     sizes, like `tile_using_forall ... tile_sizes *(%p)`), so the number of
//     sizes need not be written in the script;
//   * `apply_patterns.cuvil.flatten_tensor_transfer_reads`: a pattern set for
//     the dot-product kernels' VNNI reads (see the op);
//   * `apply_patterns.cuvil.vector_contract_to_u8s8_dot`: int8 VNNI
//     contractions as vpdpbusd (see the op);
//   * `apply_patterns.cuvil.fold_shifted_rows_taps`: one tap of an int8 conv
//     over shifted rows as the rank-5 VNNI contraction (see the op);
//   * `apply_patterns.cuvil.fold_unit_batch`: a one-batch tile of a batched
//     op without its batch loop (see the op).
//
// Registered with cuvil-opt and the Python bindings (mlir::cuvil::
// registerCuvilTransformExtension, called by registerCuvilDialect).
// The scripts name their parameters with `cuvil.param = "NAME"` argument
// attributes (read by python/cuvil/transform.py), so the extension loads the
// Cuvil dialect along with the Transform dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TRANSFORM_OPS
#define CUVIL_TRANSFORM_OPS

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/IR/TransformTypes.td"
include "mlir/Dialect/Transform/Interfaces/MatchInterfaces.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpBase.td"

class CuvilTransformOp<string mnemonic, list<Trait> traits = []>
    : Op<Transform_Dialect, "cuvil." # mnemonic, traits> {
  let cppNamespace = "::mlir::cuvil";
}

//===----------------------------------------------------------------------===//
// Matchers
//===----------------------------------------------------------------------===//

def MatchAnyOperandBitwidthOp : CuvilTransformOp<"match.any_operand_bitwidth",
    [SingleOpMatcher, MatchOpInterface, MemoryEffectsOpInterface]> {
  let summary = "Matches a structured op with an operand of the given element bitwidth";
  let description = [{
    Succeeds if the payload op is a structured (Linalg) op and one of its
    inputs or inits has elements of exactly `bitwidth` bits: the element type
    of a shaped operand, the type itself of a scalar one (e.g. the value of a
    `linalg.fill`), counting integer and floating-point types only. Results are
    not looked at separately: on tensors they have the types of the inits.

    ```mlir
    // Ops reading or writing i1.
    transform.cuvil.match.any_operand_bitwidth %op, 1 : !transform.any_op
    ```

    Produces a silenceable failure if the op is not a structured op or no
    operand has such elements, a definite failure if the handle is not
    associated with exactly one payload op. Only reads the handle and the
    payload.
  }];

  let arguments = (ins TransformHandleTypeInterface:$operand_handle,
                       ConfinedAttr<I64Attr, [IntPositive]>:$bitwidth);
  let assemblyFormat =
      "$operand_handle `,` $bitwidth attr-dict `:` type($operand_handle)";
  let extraClassDeclaration = SingleOpMatcher.extraDeclaration;
}

def MatchLoopRangesAtLeastOp : CuvilTransformOp<"match.loop_ranges_at_least",
    [SingleOpMatcher, MatchOpInterface, MemoryEffectsOpInterface]> {
  let summary = "Matches a structured op whose loop ranges reach one of the given shapes";
  let description = [{
    `shapes` is a list of minimum shapes, each a list of integers or params
    (holding one integer each). Succeeds if the payload op is a structured op
    and, for one of the shapes with as many entries as the op has loops,
    every static loop range is at least the corresponding entry. An entry of 0
    puts no constraint on its loop (which may then be dynamic); a dynamic loop
    range never satisfies a positive entry. A single shape may be written
    without the outer brackets.

    ```mlir
    // rank 1: >= 131072 elements; rank 2: >= 64 rows of >= %min_cols;
    // rank 3: d0 >= 4, d1 and d2 >= 128.
    transform.cuvil.match.loop_ranges_at_least %op
        [[131072], [64, %min_cols], [4, 128, 128]] : !transform.any_op, !transform.param<i64>
    ```

    Produces a silenceable failure if the op is not a structured op or no
    shape of its rank is reached; a definite failure if the handle is not
    associated with exactly one payload op or a param does not hold exactly
    one integer. Only reads the handles and the payload.
  }];

  let arguments = (ins TransformHandleTypeInterface:$operand_handle,
                       Variadic<TransformParamTypeInterface>:$dynamic_sizes,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$row_lengths);
  let assemblyFormat = [{
    $operand_handle custom<SizeTable>($dynamic_sizes, $static_sizes, $row_lengths)
    attr-dict `:` type($operand_handle) (`,` type($dynamic_sizes)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = SingleOpMatcher.extraDeclaration;
}

def MatchVnniPairTransposeOp : CuvilTransformOp<"match.vnni_pair_transpose",
    [SingleOpMatcher, MatchOpInterface, MemoryEffectsOpInterface]> {
  let summary = "Matches the VNNI pair packing of a product's per-call rhs";
  let description = [{
    Succeeds if the payload op is a `linalg.transpose` of 16-bit elements with
    static shapes whose output's innermost dim is an input dim of 2 and whose
    output's second-innermost dim is the input's innermost (at most 256):
    `out[.., j, v] = in[.., v, .., j]`, the pack that cuvil-vnni-interleave
    writes as vector interleaves after bufferization (one predicate,
    cuvil/Transforms/VnniPairTranspose.h).

    ```mlir
    transform.cuvil.match.vnni_pair_transpose %op : !transform.any_op
    ```

    Produces a silenceable failure if the op is not such a transpose, a
    definite failure if the handle is not associated with exactly one payload
    op. Only reads the handle and the payload.
  }];

  let arguments = (ins TransformHandleTypeInterface:$operand_handle);
  let assemblyFormat = "$operand_handle attr-dict `:` type($operand_handle)";
  let extraClassDeclaration = SingleOpMatcher.extraDeclaration;
}

//===----------------------------------------------------------------------===//
// Rank-dependent sizes
//===----------------------------------------------------------------------===//

def TileSizesOp : CuvilTransformOp<"tile_sizes",
    [SingleOpMatcher, MatchOpInterface, MemoryEffectsOpInterface]> {
  let summary = "Builds a list of sizes, one per loop of the payload op";
  let description = [{
    Produces a param holding one integer per loop of the payload op (a
    TilingInterface op, e.g. any Linalg op): the sizes of the trailing loops
    come from the first of the given rows that has at most as many entries as
    the op has loops; the loops before them get `leading` (default 0). Entries
    are integers or params holding one integer each. A single row may be
    written without the outer brackets.

    ```mlir
    // rank 3: [1, %rows, 0]; rank 2: [%rows, 0]; rank 1: [4096].
    %sizes = transform.cuvil.tile_sizes %op [[%rows, 0], [4096]] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    ```

    The result feeds the packed sizes of `transform.cuvil.tile_using_for`,
    `transform.cuvil.tile_reduction_using_for`, `transform.cuvil.vectorize`
    and upstream's `transform.structured.tile_using_forall ... tile_sizes *(%p)`.

    Produces a silenceable failure if the op is not a TilingInterface op or
    every row is longer than its number of loops; a definite failure if the
    handle is not associated with exactly one payload op or a param does not
    hold exactly one integer. Only reads the handles and the payload, so it can
    be used in matchers.
  }];

  let arguments = (ins TransformHandleTypeInterface:$operand_handle,
                       Variadic<TransformParamTypeInterface>:$dynamic_sizes,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$row_lengths,
                       DefaultValuedAttr<I64Attr, "0">:$leading);
  let results = (outs TransformParamTypeInterface:$sizes);
  let assemblyFormat = [{
    $operand_handle custom<SizeTable>($dynamic_sizes, $static_sizes, $row_lengths)
    (`leading` $leading^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = SingleOpMatcher.extraDeclaration;
}

def BalancedRowTileOp : CuvilTransformOp<"balanced_row_tile",
    [SingleOpMatcher, MatchOpInterface, MemoryEffectsOpInterface]> {
  let summary = "A forall tile size that splits a loop evenly between two threads";
  let description = [{
    For an scf.forall over the payload op's first two loops tiled by
    [`tile0`, `tile1`] (0: untiled): the tile size for loop 1 that spreads its
    range evenly over as many tiles as `tile1` makes, or over one more where
    the forall would otherwise have an odd number of tiles, rounded up to a
    multiple of `multiple` (the register tile's rows). With two threads each
    takes one contiguous half of the forall's tiles
    (cuvil-partition-parallel-loops{parts=2}): 196 rows in tiles of 64 were
    64 + 64 | 64 + 4 rows (the second thread idle a third of the time);
    balanced, 52 + 52 | 52 + 40. A dynamic loop keeps `tile1`.

    ```mlir
    %tm = transform.cuvil.balanced_row_tile %op tiles %tnp, %tm64 multiple %rm
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        -> !transform.param<i64>
    ```

    Produces a silenceable failure if the op is not a structured (Linalg) op
    with at least two loops; a definite failure if the handle is not
    associated with exactly one payload op or a param does not hold exactly
    one positive integer (`tile0` may be 0). Only reads the handles and the
    payload.
  }];

  let arguments = (ins TransformHandleTypeInterface:$operand_handle,
                       TransformParamTypeInterface:$tile0,
                       TransformParamTypeInterface:$tile1,
                       TransformParamTypeInterface:$multiple);
  let results = (outs TransformParamTypeInterface:$tile);
  let assemblyFormat = [{
    $operand_handle `tiles` $tile0 `,` $tile1 `multiple` $multiple attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = SingleOpMatcher.extraDeclaration;
}

//===----------------------------------------------------------------------===//
// Tiling and vectorization with packed sizes
//===----------------------------------------------------------------------===//

def TileUsingForOp : CuvilTransformOp<"tile_using_for",
    [DeclareOpInterfaceMethods<TransformOpInterface>,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
     ReportTrackingListenerFailuresOpTrait]> {
  let summary = "transform.structured.tile_using_for with the sizes in one param";
  let description = [{
    Tiles each payload op (TilingInterface) like
    `transform.structured.tile_using_for` with one tile size per loop taken
    from `tile_sizes`, a param holding one integer per loop (at most as many
    as the op has loops; 0: the loop is not tiled), e.g. from
    `transform.cuvil.tile_sizes`. The same sizes apply to every payload op.

    Returns the tiled op and the outermost generated `scf.for` (the root of
    the loop nest, like the `scf.forall` of `tile_using_forall`; the inner
    loops are its descendants: `transform.get_parent_op %tiled {op_name =
    "scf.for"}` is the innermost one).

    ```mlir
    %tiled, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%sizes)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    ```

    Consumes the target handle. Produces a silenceable failure if a payload op
    is not a TilingInterface op or gets more sizes than it has loops, a
    definite failure if tiling fails.
  }];

  let arguments = (ins TransformHandleTypeInterface:$target,
                       TransformParamTypeInterface:$tile_sizes);
  let results = (outs TransformHandleTypeInterface:$tiled_op,
                      TransformHandleTypeInterface:$loop);
  let assemblyFormat = [{
    $target `tile_sizes` `*` `` `(` $tile_sizes `)` attr-dict
    `:` functional-type(operands, results)
  }];
}

def TileAndFuseProducersOp : CuvilTransformOp<"tile_and_fuse_producers",
    [DeclareOpInterfaceMethods<TransformOpInterface>,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
     ReportTrackingListenerFailuresOpTrait]> {
  let summary = "Tiles an op and fuses every producer of its tiles into the loop";
  let description = [{
    Tiles the payload op (TilingInterface) with one tile size per loop taken
    from `tile_sizes` (a param, as `transform.cuvil.tile_using_for`), in one
    `scf.forall` with `use_forall`, else in `scf.for` loops, and fuses into
    the loop every producer its tiles read, transitively (upstream's
    `tileConsumerAndFuseProducersUsingSCF`: the greedy fusion of
    `transform.structured.fuse`, whose sizes cannot be one param). A
    producer read by two fused ops is fused twice (CSE merges the copies).
    The original producers stay, unused (`transform.apply_dce` removes them).

    Returns every op in the loop body that was tiled or fused (the tiled
    target first) and the outermost loop.

    ```mlir
    %ops, %loop = transform.cuvil.tile_and_fuse_producers %op tile_sizes *(%sizes) {use_forall}
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    ```

    Consumes the target handle. Produces a silenceable failure if the payload
    is not one TilingInterface op or gets more sizes than it has loops, a
    definite failure if tiling fails.
  }];

  let arguments = (ins TransformHandleTypeInterface:$target,
                       TransformParamTypeInterface:$tile_sizes,
                       UnitAttr:$use_forall);
  let results = (outs TransformHandleTypeInterface:$tiled_ops,
                      TransformHandleTypeInterface:$loop);
  let assemblyFormat = [{
    $target `tile_sizes` `*` `` `(` $tile_sizes `)` attr-dict
    `:` functional-type(operands, results)
  }];
}

def TileReductionUsingForOp : CuvilTransformOp<"tile_reduction_using_for",
    [DeclareOpInterfaceMethods<TransformOpInterface>,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "transform.structured.tile_reduction_using_for with the sizes in one param";
  let description = [{
    Tiles the reduction loops of each payload op (PartialReductionOpInterface)
    like `transform.structured.tile_reduction_using_for ... by tile_sizes =
    [...]`, with one size per loop taken from `tile_sizes` (a param, e.g.
    from `transform.cuvil.tile_sizes %op [16] leading 0`).

    Returns the ops initializing the partial accumulators, the partial
    reductions inside the loop, the ops merging them after it and the loop.

    ```mlir
    %fill, %partial, %merge, %loop = transform.cuvil.tile_reduction_using_for %op by tile_sizes *(%sizes)
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    ```

    Consumes the target handle. Produces a silenceable failure if a payload op
    does not implement PartialReductionOpInterface or cannot be tiled.
  }];

  let arguments = (ins TransformHandleTypeInterface:$target,
                       TransformParamTypeInterface:$tile_sizes);
  let results = (outs TransformHandleTypeInterface:$fill_op,
                      TransformHandleTypeInterface:$split_op,
                      TransformHandleTypeInterface:$combining_op,
                      TransformHandleTypeInterface:$for_op);
  let assemblyFormat = [{
    $target `by` `tile_sizes` `*` `` `(` $tile_sizes `)` attr-dict
    `:` functional-type(operands, results)
  }];
}

def VectorizeOp : CuvilTransformOp<"vectorize",
    [DeclareOpInterfaceMethods<TransformOpInterface>,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "transform.structured.vectorize with the vector sizes in one param";
  let description = [{
    Vectorizes each payload op like `transform.structured.vectorize %op
    vector_sizes [...]` (masked where the sizes do not divide the shape), with
    one vector size per loop taken from `vector_sizes`, a param (e.g. from
    `transform.cuvil.tile_sizes %op [%vec] leading 1`).

    ```mlir
    transform.cuvil.vectorize %op vector_sizes *(%sizes) : !transform.any_op, !transform.param<i64>
    ```

    Consumes the target handle. Produces a silenceable failure if a payload op
    cannot be vectorized.
  }];

  let arguments = (ins TransformHandleTypeInterface:$target,
                       TransformParamTypeInterface:$vector_sizes);
  let results = (outs);
  let assemblyFormat = [{
    $target `vector_sizes` `*` `` `(` $vector_sizes `)` attr-dict
    `:` type($target) `,` type($vector_sizes)
  }];
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

// Named like upstream's pattern ops (transform.apply_patterns.<dialect>.*):
// they are only valid inside transform.apply_patterns.
def ApplyFlattenTensorTransferReadsPatternsOp : Op<Transform_Dialect,
    "apply_patterns.cuvil.flatten_tensor_transfer_reads",
    [DeclareOpInterfaceMethods<PatternDescriptorOpInterface>]> {
  let cppNamespace = "::mlir::cuvil";
  let summary = "Reads of whole trailing rows of a tensor as one 1-D read";
  let description = [{
    Rewrites an unmasked, in-bounds `vector.transfer_read` of a static tensor
    with a minor-identity map, whose vector is `1 x .. x 1 x a x b` (a > 1) and whose
    last dimension `b` is the tensor's whole last dimension (read from index
    0), into a `tensor.collapse_shape` of the tensor's last two dimensions, a
    1-D read of `a * b` elements and a `vector.shape_cast` back:

    ```mlir
    %v = vector.transfer_read %t[%i, %k, %j, %c0], %pad {in_bounds = [true, true, true, true]}
        : tensor<4x384x64x2xbf16>, vector<1x1x16x2xbf16>
    // becomes
    %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<4x384x64x2xbf16> into tensor<4x384x128xbf16>
    %j2 = affine.apply affine_map<(d0) -> (d0 * 2)>(%j)
    %f = vector.transfer_read %c[%i, %k, %j2], %pad {in_bounds = [true]} : tensor<4x384x128xbf16>, vector<32xbf16>
    %v = vector.shape_cast %f : vector<32xbf16> to vector<1x1x16x2xbf16>
    ```

    Why: `convert-vector-to-scf{full-unroll}` lowers an n-D read to one read
    per innermost row, i.e. sixteen 4-byte loads and shuffles for the
    64-byte VNNI row of B that one vdpbf16ps takes. Upstream's flattening
    patterns (populateFlattenVectorTransferPatterns) only take memrefs, and
    the schedules run on tensors. The collapse is free after bufferization
    (the collapsed dimensions are contiguous in a tensor).
  }];
  let assemblyFormat = "attr-dict";
}

def ApplyVectorContractToUnsignedInt8DotPatternsOp : Op<Transform_Dialect,
    "apply_patterns.cuvil.vector_contract_to_u8s8_dot",
    [DeclareOpInterfaceMethods<PatternDescriptorOpInterface>]> {
  let cppNamespace = "::mlir::cuvil";
  let summary = "u8 x s8 -> i32 contractions of one VNNI quad as vpdpbusd";
  let description = [{
    Rewrites a `vector.contract` (kind add) whose lhs is `arith.extui` of an
    i8 vector with exactly one non-unit dimension, of size 4 (one row's k
    quad), whose rhs is `arith.extsi` of an i8 vector with non-unit
    dimensions `[16, 4]` (16 columns' quads, VNNI layout) and whose
    accumulator is an i32 vector with one non-unit dimension of size 16,
    into the x86 int8 dot product (vpdpbusd)

    ```mlir
    %r = cuvil.x86.dot_u8s8 %acc, %a, %b : vector<16xi32>
    ```

    : the lhs quad is broadcast
    as one 32-bit value, the rhs's 64 bytes are one register. Each i32 lane
    adds the four products of its quad, which is the contraction exactly
    (vpdpbusd does not saturate). Shape casts adapt the unit dimensions.

    Upstream's `vector_contract_to_packed_type_dot_product` lowers int8
    contractions to `vpdpbssd` (signed x signed, AVX-VNNI-INT8), which the
    AVX512-VNNI hosts Cuvil meets do not have; `vpdpbusd` is on every host
    with AVX512-VNNI (Cascade Lake and later, Zen 4 and later).
    cuvil-unsigned-int8-lhs gives int8 matmuls this operand form. Only for
    hosts with the instruction: the script that applies it is picked from
    the host's CPU features.
  }];
  let assemblyFormat = "attr-dict";
}

def ApplyFoldShiftedRowsTapsPatternsOp : Op<Transform_Dialect,
    "apply_patterns.cuvil.fold_shifted_rows_taps",
    [DeclareOpInterfaceMethods<PatternDescriptorOpInterface>]> {
  let cppNamespace = "::mlir::cuvil";
  let summary = "One tap of an int8 conv over shifted rows as a VNNI matmul";
  let description = [{
    Drops the tap loops (kh, kw) of a tile of cuvil-im2col-conv's int8 conv
    over shifted rows (a rank-7 `linalg.generic`, loops
    `[n/64, q, 64, kh, kw, c/4, 4]`, A read at row `q + kh * WP + kw`) when
    both have one iteration, as a tile holding one tap does: A's row is then
    `q` of the tile's slice (its offset holds the shift), B's kh and kw
    dimensions go, and the tile is the rank-5 VNNI contraction
    `C[q][n/64][64] += A[q][c/4][4] * B[n/64][c/4][64][4]` (loops
    `[n/64, q, 64, c/4, 4]`) that the dot-product kernel's vector steps take.
    Upstream's unit-dim folding drops every unit loop (a one-panel tile's
    n/64 too); this one drops those two only.
  }];
  let assemblyFormat = "attr-dict";
}

def ApplyFoldUnitBatchPatternsOp : Op<Transform_Dialect,
    "apply_patterns.cuvil.fold_unit_batch",
    [DeclareOpInterfaceMethods<PatternDescriptorOpInterface>]> {
  let cppNamespace = "::mlir::cuvil";
  let summary = "A one-batch tile of a batched linalg.generic without its batch loop";
  let description = [{
    Drops loop 0 of a `linalg.generic` on tensors when it is a batch loop
    with one iteration: parallel, of static size 1, and the leading index
    of every operand (`d0` first in each indexing map and nowhere else), as
    in a tile of attention's batched products holding one head. The
    operands are read and written through rank-reducing slices, and the op
    is the unbatched one (e.g. the rank-5 VNNI contraction
    `[n/64, m, 64, k/2, 2]` of a rank-6 batched one) that the matmul
    schedules take. Upstream's unit-dim folding drops every unit loop (a
    one-panel tile's n/64 too); this one drops the batch loop only.
  }];
  let assemblyFormat = "attr-dict";
}

#endif // CUVIL_TRANSFORM_OPS
