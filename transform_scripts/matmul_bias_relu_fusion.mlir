// =============================================================================
// Cuvil: Transform-dialect schedule for  relu(A @ B + bias)  on AVX-512 CPUs.
//
// Matches a linalg.generic (elementwise bias add, optional relu) whose operand #0
// is produced by a linalg.matmul (whose init is typically a linalg.fill), e.g.
// the form torch-mlir emits for nn.Linear + ReLU after the weight is transposed:
//   %C   = linalg.fill ins(%zero) outs(%e)
//   %mm  = linalg.matmul ins(%A, %B) outs(%C)
//   %out = linalg.generic {(i,j)->(i,j), (i,j)->(j), (i,j)->(i,j)}
//            ins(%mm, %bias) outs(%e2) { addf ; maximumf 0 (optional) }
//
// Schedule (@cuvil_mbr_fuse); parameters: the arguments of @cuvil_mbr_schedule,
// their defaults bound by @__transform_main (cuvil.transform.apply(params=...) binds others):
//   TM=64, TN=256 (thread/cache tile), TK=256 (K block), RM=4, RN=64 (register tile,
//   16 zmm accumulators); same meaning as in matmul_cpu.mlir.
//  1. Tile the CONSUMER (bias+relu generic) with tile_using_forall [TM, TN].
//  2. Fuse the producer linalg.matmul into the forall
//     (transform.structured.fuse_into_containing_op): each forall iteration
//     computes one TMxTN tile of A@B and then applies bias+relu to it while the tile
//     is still in L1/L2. The full-size matmul result is never written to memory
//     (one TMxTN = 64 KiB scratch buffer per tile after bufferization).
//  3. Also fuse the linalg.fill that zero-initializes the matmul (if present).
//  4. Fused matmul tile: K blocking [0,0,TK], register tiling [RM,RN,1], peeling of
//     partial register tiles, vectorization (masked only on the boundaries).
//  5. Epilogue: tile the bias+relu tile row by row ([1, TN]) and vectorize it
//     (masked when TN does not divide N).
//  6. @cuvil_mbr_vector_lowering: reduction_to_contract, canonicalize/CSE,
//     loop-invariant-subset-hoisting (C accumulators stay in registers across
//     k), contract -> outerproduct -> vector.fma.
// The bufferization/LLVM pipeline is the same as for matmul_cpu.mlir (PIPELINE.md).
// This file is self-contained; do not preload it together with matmul_cpu.mlir
// (both define @__transform_main).
// =============================================================================
module attributes {transform.with_named_sequence} {

  transform.named_sequence @cuvil_mbr_fuse(
      %g: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %tn: !transform.param<i64> {transform.readonly},
      %tk: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly},
      %rn: !transform.param<i64> {transform.readonly}) {
    // 0. the producer of the epilogue's first operand must be a linalg.matmul
    %mm = transform.get_producer_of_operand %g[0] : (!transform.any_op) -> !transform.any_op
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %nmm = transform.num_associations %mm : (!transform.any_op) -> !transform.param<i64>
    transform.match.param.cmpi eq %nmm, %one : !transform.param<i64>  // empty if operand is a block arg
    transform.match.operation_name %mm ["linalg.matmul"] : !transform.any_op
    // 1. tile the consumer (bias+relu) into thread/cache tiles
    %g0, %forall = transform.structured.tile_using_forall %g tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // 2. fuse the matmul producer into the tile loop
    %mm0, %forall1 = transform.structured.fuse_into_containing_op %mm into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    // 3. fuse the fill (if the matmul init is a fill)
    transform.sequence %mm0, %forall1 : !transform.any_op, !transform.any_op failures(suppress) {
    ^bb0(%m: !transform.any_op, %fa: !transform.any_op):
      %slice = transform.get_producer_of_operand %m[2] : (!transform.any_op) -> !transform.any_op
      %fill = transform.get_producer_of_operand %slice[0] : (!transform.any_op) -> !transform.any_op
      %nfill = transform.num_associations %fill : (!transform.any_op) -> !transform.param<i64>
      %one1 = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %nfill, %one1 : !transform.param<i64>
      transform.match.operation_name %fill ["linalg.fill"] : !transform.any_op
      %ff, %fa2 = transform.structured.fuse_into_containing_op %fill into %fa : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %ffr, %ffl = transform.structured.tile_using_for %ff tile_sizes [1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %ffr vector_sizes [1, %tn] : !transform.any_op, !transform.param<i64>
    }
    // 4. matmul tile: K tiling, register tiling, peeling, vectorization
    %t1, %lk = transform.structured.tile_using_for %mm0 tile_sizes [0, 0, %tk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %t2, %l0, %l1, %l2 = transform.structured.tile_using_for %t1 tile_sizes [%rm, %rn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.sequence %l1 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.sequence %l0 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    %kernels = transform.structured.match ops{["linalg.matmul"]} in %forall1 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [%rm, %rn, 1] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    // 5. epilogue (bias + relu) tile: one row at a time, vectorized (masked if partial)
    %gr, %gl = transform.structured.tile_using_for %g0 tile_sizes [1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %gr vector_sizes [1, %tn] : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @cuvil_mbr_vector_lowering(%f: !transform.any_op {transform.consumed}) {
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.yield
  }

  // Entry point: the schedule with its default parameters (same meaning as in
  // matmul_cpu.mlir).
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
    %tn = transform.param.constant 256 : i64 -> !transform.param<i64>
    %tk = transform.param.constant 256 : i64 -> !transform.param<i64>
    %rm = transform.param.constant 4 : i64 -> !transform.param<i64>
    %rn = transform.param.constant 64 : i64 -> !transform.param<i64>
    transform.include @cuvil_mbr_schedule failures(propagate) (%root, %tm, %tn, %tk, %rm, %rn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // The schedule; `cuvil.param` names the parameters for cuvil.transform.apply.
  transform.named_sequence @cuvil_mbr_schedule(%root: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "TM"},
      %tn: !transform.param<i64> {transform.readonly, cuvil.param = "TN"},
      %tk: !transform.param<i64> {transform.readonly, cuvil.param = "TK"},
      %rm: !transform.param<i64> {transform.readonly, cuvil.param = "RM"},
      %rn: !transform.param<i64> {transform.readonly, cuvil.param = "RN"}) {
    // Every linalg.generic whose operand #0 is produced by a linalg.matmul is
    // treated as the epilogue; generics not fed by a matmul are skipped
    // (failures(suppress) in the per-op sequence).
    %gens = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %gens : !transform.any_op {
    ^bb0(%g: !transform.any_op):
      transform.sequence %g : !transform.any_op failures(suppress) {
      ^bb1(%gg: !transform.any_op):
        transform.include @cuvil_mbr_fuse failures(propagate) (%gg, %tm, %tn, %tk, %rm, %rn)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
             !transform.param<i64>, !transform.param<i64>) -> ()
      }
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      transform.include @cuvil_mbr_vector_lowering failures(propagate) (%f) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
