// =============================================================================
// Cuvil: Transform-dialect schedule for batched matmuls (fp32, bf16 x bf16 ->
// f32 and i8 x i8 -> i32; static shapes)
// on x86-64 CPUs with AVX-512 (tuned on a Zen 4 VM).
//
// Entry point: @__transform_main.
//
// What it matches: every linalg op directly in a func.func with a contraction
// body (mulf + addf, or muli + addi), rank 4, two inputs, and loops [b, m, n, k] (e.g.
// linalg.batch_matmul) or [b, m, k, n] (the batched linalg.generic that
// cuvil-lower-to-linalg emits for cuvil.matmul with a 3-D rhs: attention's
// q.k^T and p.v). Other loop orders are left alone.
//
// What it does to each (C[b] += A[b] * B[b]):
//  1. generalize, then interchange the loops to [b, m, n, k] (k innermost).
//  2. scf.forall over (b, m) tiles of [1, TM]: heads x row blocks are the
//     thread-level parallelism (12 heads x 2 = 24 tiles for BERT's 12x128x128).
//  3. fuse a linalg.fill producing C into the forall and vectorize it there.
//  4. register tiling [1, RM, RN, 1] (loops m, n, k), peeling of partial m and n
//     tiles (full tiles unmasked, boundary tiles masked).
//  5. vectorize [1, RM, RN, 1], then @cuvil_bmm_vector_lowering (per function):
//     reduction_to_contract, drop the unit batch dim, hoist the accumulators
//     out of the k loop (loop-invariant-subset-hoisting), contraction -> outer
//     products -> vector.fma (as in matmul_cpu.mlir).
//
// Parameters: the arguments of @cuvil_batch_matmul_cpu_schedule; @__transform_main
// binds the defaults, cuvil.transform.apply(..., params={"TM": 32}) others:
// TM = 64, RM = 4, RN = 64 (RN a power-of-two multiple of 16; see matmul_cpu.mlir
// for why). Same names as in matmul_cpu.mlir, so one params dict tunes both.
// =============================================================================
module attributes {transform.with_named_sequence} {

  // A batched contraction directly in a func.func: rank 4, two inputs, loops
  // classified [b, m, n, k] in some order; its body is checked apart.
  transform.named_sequence @cuvil_match_bmm_common(%op: !transform.any_op {transform.readonly}) {
    %parent = transform.get_parent_op %op {nth_parent = 1} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["func.func"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %four : !transform.param<i64>
      %b, %m, %n, %k = transform.match.structured.classify_contraction_dims %s
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %b, %zero : !transform.param<i64>
      transform.match.param.cmpi eq %m, %one : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield
  }

  // A float body (mulf + addf; bf16 operands extended to f32 included).
  transform.named_sequence @cuvil_match_float_body(%op: !transform.any_op {transform.readonly}) {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield
  }

  // An integer body (muli + addi: int8 operands sign-extended to the i32
  // accumulator, a QDQ model's attention products). Vectorized the same way,
  // as i32 outer products (no VNNI: the operands are activations, not
  // packed weights).
  transform.named_sequence @cuvil_match_int_body(%op: !transform.any_op {transform.readonly}) {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.body %s {contraction = ["arith.muli", "arith.addi"]} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield
  }

  // Loops [b, m, k, n], a float body.
  transform.named_sequence @cuvil_match_bmkn_float(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bmm_common failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.include @cuvil_match_float_body failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[2] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Loops [b, m, k, n], a int body.
  transform.named_sequence @cuvil_match_bmkn_int(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bmm_common failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.include @cuvil_match_int_body failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[2] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Loops [b, m, n, k], a float body.
  transform.named_sequence @cuvil_match_bmnk_float(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bmm_common failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.include @cuvil_match_float_body failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[3] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Loops [b, m, n, k], a int body.
  transform.named_sequence @cuvil_match_bmnk_int(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bmm_common failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.include @cuvil_match_int_body failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[3] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Schedules one batched contraction whose loops are already [b, m, n, k].
  transform.named_sequence @cuvil_bmm_cpu(
      %op: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly},
      %rn: !transform.param<i64> {transform.readonly}) {
    // 2. thread tiling over (batch, m)
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %op tile_sizes [%one, %tm]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // 3. fuse the zero-fill of C (skipped when C is not a linalg.fill)
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%i: !transform.any_op):
        transform.match.operation_name %i ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %i into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %ffr, %ffl0, %ffl1, %ffl2 = transform.structured.tile_using_for %ff tile_sizes [1, 1, %rn]
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.structured.vectorize %ffr vector_sizes [1, 1, %rn] : !transform.any_op, !transform.param<i64>
      }
    }
    // 4. register tiling (m, n, k = 1) and peeling of partial tiles
    %t2, %l0, %l1, %l2 = transform.structured.tile_using_for %t0 tile_sizes [0, %rm, %rn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
     -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
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
    // 5. vectorize every register tile (full tiles: static; peeled: masked)
    %kernels = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [1, %rm, %rn, 1]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }

  transform.named_sequence @cuvil_bmm_bmkn(%op: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly},
      %rn: !transform.param<i64> {transform.readonly}) {
    %g = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    %i = transform.structured.interchange %g iterator_interchange = [0, 1, 3, 2]
      : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_bmm_cpu failures(propagate) (%i, %tm, %rm, %rn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_bmm_bmnk(%op: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly},
      %rn: !transform.param<i64> {transform.readonly}) {
    %g = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_bmm_cpu failures(propagate) (%g, %tm, %rm, %rn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // Function-level vector lowering (as @cuvil_vector_lowering in matmul_cpu.mlir,
  // plus dropping the unit batch dimension of the contractions).
  transform.named_sequence @cuvil_bmm_vector_lowering(%f: !transform.any_op {transform.consumed}) {
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      // Mixed precision (bf16 x bf16 -> f32): the vectorizer puts an arith.extf
      // between the reads of A / B and the mulf. sink_ops moves the extf in
      // front of the broadcast / transpose of each read, so those fold into
      // the contraction's indexing maps and the contraction is f32 x f32 like
      // the fp32 kernel, lowered the same way (with the extf after the
      // broadcast they do not fold, and the contraction is unrolled to
      // scalars). fp32 kernels have no such elementwise op here: unchanged.
      transform.apply_patterns.vector.sink_ops
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.yield
  }

  // Entry point: the schedule with its default parameters.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
    %rm = transform.param.constant 4 : i64 -> !transform.param<i64>
    %rn = transform.param.constant 64 : i64 -> !transform.param<i64>
    transform.include @cuvil_batch_matmul_cpu_schedule failures(propagate) (%root, %tm, %rm, %rn)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // The schedule; `cuvil.param` names the parameters for cuvil.transform.apply.
  transform.named_sequence @cuvil_batch_matmul_cpu_schedule(%root: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "TM"},
      %rm: !transform.param<i64> {transform.readonly, cuvil.param = "RM"},
      %rn: !transform.param<i64> {transform.readonly, cuvil.param = "RN"}) {
    %bmkn_f = transform.collect_matching @cuvil_match_bmkn_float in %root : (!transform.any_op) -> !transform.any_op
    %bmkn_i = transform.collect_matching @cuvil_match_bmkn_int in %root : (!transform.any_op) -> !transform.any_op
    %bmkn = transform.merge_handles %bmkn_f, %bmkn_i : !transform.any_op
    transform.foreach %bmkn : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @cuvil_bmm_bmkn failures(propagate) (%op, %tm, %rm, %rn)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %bmnk_f = transform.collect_matching @cuvil_match_bmnk_float in %root : (!transform.any_op) -> !transform.any_op
    %bmnk_i = transform.collect_matching @cuvil_match_bmnk_int in %root : (!transform.any_op) -> !transform.any_op
    %bmnk = transform.merge_handles %bmnk_f, %bmnk_i : !transform.any_op
    transform.foreach %bmnk : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @cuvil_bmm_bmnk failures(propagate) (%op, %tm, %rm, %rn)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      transform.include @cuvil_bmm_vector_lowering failures(propagate) (%f) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
