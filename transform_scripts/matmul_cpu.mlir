// =============================================================================
// Cuvil: Transform-dialect schedule for linalg.matmul (fp32, static shapes) on
// x86-64 CPUs with AVX-512 and 32 zmm registers (tuned on a Zen 4 VM).
//
// Usage (PIPELINE.md has the passes before and after the schedule):
//   cuvil-opt in.mlir --transform-preload-library=transform-library-paths=transform_scripts/matmul_cpu.mlir \
//       --transform-interpreter
// Entry point: @__transform_main (default entry of --transform-interpreter).
//
// Tunable parameters: the arguments of @cuvil_matmul_cpu_schedule; @__transform_main
// binds these defaults, cuvil.transform.apply(..., params={"TM": 32}) others:
//   TM = 64, TN = 256  cache/thread tile of C (one scf.forall iteration).
//   TK = 256           K-block (A panel TMxTK = 64 KiB, B panel TKxTN = 256 KiB -> L2).
//   TNP = 4, TKP = 768 the B-packed matmuls' forall tile (panels of 64 columns) and
//                      K-block (see "Packing" below).
//   RM = 4,  RN = 64   register tile: 4 rows x (4 x zmm) = 16 accumulators, k step 1;
//                      per k: 4 broadcasts of A + 4 zmm loads of B feed 16 FMAs.
//                      The k loop is unrolled by 4 (@cuvil_unroll_k).
//                      RM/RN must be constants; RN a power-of-two multiple of 16
//                      (RN=48 produced very slow code; 4x128 spills). The register
//                      tiles compared are in benchmarks/README.md.
//   TNP_MID = 2, TM_MID = 128  the forall tile of the packed fp32 matmuls of 128
//                      to 511 rows: one B panel read for 32 register tiles, not
//                      16, and 6 tiles for 2 threads on a 768-wide layer, not 3.
//                      Time new / old (1 thread, 2 threads): BERT-base fp32
//                      0.96..0.97, 0.92..0.93; GPT-2 0.87..0.90 (1 thread).
//   RM_TALL = 6, TM_TALL = 96  the packed fp32 matmuls of >= 512 rows: 6 x 64
//                      register tiles (24 accumulators; per k 6 broadcasts and
//                      4 row loads feed 24 FMAs) in forall tiles of 96 rows.
//                      1024^3, 1 thread: 166 -> 177 GFLOP/s (2 threads 311 ->
//                      322); below 512 rows (BERT's 128) the 4-row tile's
//                      remainders cost less (benchmarks/README.md).
//
// What @cuvil_matmul_cpu does to every linalg.matmul (C += A * B):
//  1. Cache/thread tiling: tile_using_forall [TM, TN] -> scf.forall over C tiles
//     (lowered later to scf.for, or scf.parallel + async-parallel-for).
//  2. If C is produced by linalg.fill, fuse the fill into the forall and
//     vectorize it (zeroing happens tile-by-tile, in cache).
//  3. K-blocking: tile_using_for [0, 0, TK].
//  4. Register tiling: tile_using_for [RM, RN, 1] (loops m, n, k; k innermost).
//  5. Peeling of the m and n register loops (transform.loop.peel, failures
//     suppressed when the trip count already divides): full RMxRN tiles stay
//     unmasked; only the boundary tiles use masked vectorization. This is what
//     makes shapes like 100x70x33 correct and keeps 1024^3 mask-free.
//  6. Vectorization with vector_sizes [RM, RN, 1] (masked only on boundaries).
//  7. @cuvil_vector_lowering (per func):
//       - reduction_to_contract: mulf + multi_reduction -> vector.contract;
//       - canonicalize + CSE; loop-invariant-subset-hoisting: the RMxRN
//         accumulator transfer_read/transfer_write pair is hoisted out of the k
//         loop on tensors, so C lives in registers across the k loop;
//       - contraction lowering to vector.outerproduct, then outer products to
//         vector.fma (one broadcast of A[i,k] x one B row chunk per zmm);
//       - 16x16 shuffle-based transposes (used by linalg.transpose below).
//
// Matmuls of fewer than RM rows (M = 1..3: an LLM's decode step, a batch-1 MLP):
// the RM x RN tile would run them on its masked boundary path only (a mask per
// k step, the accumulators read and written each step). @cuvil_gemv_cpu tiles
// all M rows x 128 columns instead, unmasked, accumulators in registers across
// the whole K; pack_cpu.mlir packs such matmuls' B into panels too (a
// contiguous stream per panel: row-major B rows are pages apart), and those
// run @cuvil_packed_matmul_cpu with RM = M. Batch-1 MLP 1024-4096-4096-1024,
// 1 thread, Zen 4: 10.3 -> 4.1 ms (fp32), 1.3 ms with int8 weights.
//
// Transposed B (nn.Linear, x @ W^T): torch-mlir emits linalg.transpose + linalg.matmul.
//   @cuvil_transpose_cpu tiles the transpose [64,64] -> [16,16] (peeled),
//   vectorizes it and lowers to AVX-512 16x16 shuffles, then the matmul is scheduled
//   as above (~4 MB extra copy for a 1024x1024 weight; free if the weight is prepacked).
//   A linalg.matmul carrying transposed-B indexing_maps is also scheduled and
//   computes correct results, but B is then read with stride K. That is very slow,
//   so emit the transpose explicitly or prepack.
//
// Packing (linalg.pack to [M/8][K][8] / [N/32][K][32] + unpack) was tried. It did
// not pay off at 1024^3 (within noise, slightly slower), so it is not part of this
// schedule. B-only packing done once, at prepack time, does pay:
// pack_cpu.mlir (run in the raise step, before cuvil-split-prepack) turns large
// matmuls into C[m][n/64][64] += A[m][k] * Bp[n/64][k][64]; @cuvil_packed_matmul_cpu
// schedules that contraction: loops interchanged to [n/64, m, 64, k], scf.forall over
// TNP(=4) panels x TM rows with the fill fused, K blocks of TKP, RM x 64 register tile
// (k innermost; the last rows % RM as 1 x 64 tiles), vectorized [1, RM, 64, 1]. Consecutive k rows of B are then
// 256 bytes apart instead of N*4 (12-16 KiB for the FFN/MLP shapes). TNP = 2 or 8
// were slower with 2 threads. TKP = 768 (one K block for the 768-wide transformer
// layers) instead of TK = 256: the accumulators are loaded and stored once per K
// block. The measurements behind these choices are in benchmarks/README.md.
// =============================================================================
module attributes {transform.with_named_sequence} {

  // Schedules one linalg.matmul. Parameters are !transform.param<i64> values.
  transform.named_sequence @cuvil_matmul_cpu(
      %mm: !transform.any_op {transform.consumed},
      %tm: !transform.param<i64> {transform.readonly}, %tn: !transform.param<i64> {transform.readonly},
      %tk: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly},
      %rn: !transform.param<i64> {transform.readonly}) {
    // 1. cache / thread tiling
    %t0, %forall = transform.structured.tile_using_forall %mm tile_sizes [%tm, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // 2. fuse the zero-fill of C (only if the forall's shared output is a linalg.fill)
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      // empty handle when the init is a block argument; foreach then does nothing
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%i: !transform.any_op):
        transform.match.operation_name %i ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %i into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %ffr, %ffl = transform.structured.tile_using_for %ff tile_sizes [1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.structured.vectorize %ffr vector_sizes [1, %tn] : !transform.any_op, !transform.param<i64>
      }
    }
    // 3. K blocking
    %t1, %lk = transform.structured.tile_using_for %t0 tile_sizes [0, 0, %tk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    // 4. register tiling (m, n, k=1)
    %t2, %l0, %l1, %l2 = transform.structured.tile_using_for %t1 tile_sizes [%rm, %rn, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
     -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @cuvil_unroll_k failures(propagate) (%l2) : (!transform.any_op) -> ()
    // 5. peel partial register tiles (no-op, silently, when the tile divides)
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
    // 6. vectorize every register tile (main: static, unmasked; peeled: masked)
    %kernels = transform.structured.match ops{["linalg.matmul"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [%rm, %rn, 1]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }

  // A linalg.matmul with a static M below the register tile's RM rows (a
  // decode step's vector x matrix, M = 1): yields M.
  transform.named_sequence @cuvil_match_gemv(%op: !transform.any_op {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    %m = transform.include @cuvil_match_few_rows failures(propagate) (%op) : (!transform.any_op) -> !transform.param<i64>
    transform.yield %op, %m : !transform.any_op, !transform.param<i64>
  }

  // Schedules one matmul of M < RM rows. The RM x RN schedule would run it on
  // its masked boundary tiles only (a mask per k step, the accumulators read
  // and written each step); here the register tile is all M rows x RN
  // columns, k innermost over the whole K, so the accumulators stay in
  // registers and each k step is M broadcasts of A + RN/16 row loads of B.
  // scf.forall over TN-column tiles; n peeled (only the last tile masked).
  transform.named_sequence @cuvil_gemv_cpu(
      %mm: !transform.any_op {transform.consumed}, %m: !transform.param<i64> {transform.readonly},
      %tn: !transform.param<i64> {transform.readonly}, %rn: !transform.param<i64> {transform.readonly}) {
    %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %mm tile_sizes [%zero, %tn]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%i: !transform.any_op):
        transform.match.operation_name %i ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %i into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.structured.vectorize %ff vector_sizes [%m, %tn] : !transform.any_op, !transform.param<i64>, !transform.param<i64>
      }
    }
    %t1, %l1, %l2 = transform.structured.tile_using_for %t0 tile_sizes [0, %rn, 1]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.sequence %l1 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    %kernels = transform.structured.match ops{["linalg.matmul"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [%m, %rn, 1]
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>
    transform.yield
  }

  // Schedules one 2-D linalg.transpose (e.g. W^T materialized by torch-mlir).
  transform.named_sequence @cuvil_transpose_cpu(%tr: !transform.any_op {transform.consumed}) {
    %t0, %forall = transform.structured.tile_using_forall %tr tile_sizes [64, 64]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t1, %l0, %l1 = transform.structured.tile_using_for %t0 tile_sizes [16, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
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
    %tiles = transform.structured.match ops{["linalg.transpose"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %tiles vector_sizes [16, 16] : !transform.any_op
    transform.yield
  }

  // Unrolls a register tile's k loop by 4 (before the m loop is peeled, so
  // that both copies are unrolled; the vectorized steps' accumulator reads
  // fold into the previous step's writes). One k step is RM broadcasts, 4
  // row loads and 4*RM FMAs: with RM = 4 the loop's counter, compare and
  // branch were 3 of its 27 instructions. 1024^3
  // fp32 (Intel Xeon model 167, 1 thread): 153-160 -> 169-177 GFLOP/s, packed
  // and unpacked (benchmarks/README.md). A trip count that 4 does not divide
  // gets a remainder loop; a loop of fewer than 4 steps stays as it is.
  transform.named_sequence @cuvil_unroll_k(%loop: !transform.any_op {transform.readonly}) {
    transform.sequence %loop : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      transform.loop.unroll %lc {factor = 4} : !transform.op<"scf.for">
    }
    transform.yield
  }

  // The B-packed matmul that pack_cpu.mlir (run in RAISE_PIPELINE) makes of a
  // linalg.matmul: C[m][n/64][64] += A[m][k] * Bp[n/64][k][64], loops
  // [m, n/64, k, 64] (rank 4, contraction body, k = loop 2).
  transform.named_sequence @cuvil_match_packed_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %four : !transform.param<i64>
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      transform.match.structured.dim %s[2] {reduction} : !transform.any_op
      transform.match.structured.dim %s[0, 1, 3] {parallel} : !transform.any_op
      %b, %m, %n, %k = transform.match.structured.classify_contraction_dims %s
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %m, %zero : !transform.param<i64>
      transform.match.param.cmpi eq %k, %two : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Succeeds on a packed fp32 matmul of at least `min_m` rows.
  transform.named_sequence @cuvil_match_packed_matmul_rows_at_least(%op: !transform.any_op {transform.readonly},
      %min_m: !transform.param<i64> {transform.readonly}) {
    transform.include @cuvil_match_packed_matmul failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %min_m : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield
  }

  // A packed fp32 matmul of at least 512 rows (a 1024^3 product, im2col
  // convolutions): scheduled with the tall register tile (RM_TALL rows).
  transform.named_sequence @cuvil_match_tall_packed_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    %min_m = transform.param.constant 512 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_packed_matmul_rows_at_least failures(propagate) (%op, %min_m)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %op : !transform.any_op
  }

  // A packed fp32 matmul of at least 128 rows (a transformer's linear layers
  // at sequence length 128): forall tiles of TM_MID rows x TNP_MID panels.
  transform.named_sequence @cuvil_match_mid_packed_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    %min_m = transform.param.constant 128 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_packed_matmul_rows_at_least failures(propagate) (%op, %min_m)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %op : !transform.any_op
  }

  // The same contraction in integers (int8 x int8 -> int32 matmuls where the
  // host has no int8 dot-product kernel): the same loops, multiplies and adds
  // of sign-extended lanes.
  transform.named_sequence @cuvil_match_packed_int_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %four : !transform.param<i64>
      transform.match.structured.body %s {contraction = ["arith.muli", "arith.addi"]} : !transform.any_op
      transform.match.structured.dim %s[2] {reduction} : !transform.any_op
      transform.match.structured.dim %s[0, 1, 3] {parallel} : !transform.any_op
      %b, %m, %n, %k = transform.match.structured.classify_contraction_dims %s
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %m, %zero : !transform.param<i64>
      transform.match.param.cmpi eq %k, %two : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Packed matmuls (of either kind) whose M is below the register tile's
  // RM rows: yield M.
  transform.named_sequence @cuvil_match_packed_gemv(%op: !transform.any_op {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    transform.include @cuvil_match_packed_matmul failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %m = transform.include @cuvil_match_few_rows failures(propagate) (%op) : (!transform.any_op) -> !transform.param<i64>
    transform.yield %op, %m : !transform.any_op, !transform.param<i64>
  }
  transform.named_sequence @cuvil_match_packed_int_gemv(%op: !transform.any_op {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    transform.include @cuvil_match_packed_int_matmul failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %m = transform.include @cuvil_match_few_rows failures(propagate) (%op) : (!transform.any_op) -> !transform.param<i64>
    transform.yield %op, %m : !transform.any_op, !transform.param<i64>
  }
  transform.named_sequence @cuvil_match_few_rows(%op: !transform.any_op {transform.readonly}) -> !transform.param<i64> {
    %m = transform.match.structured %op : (!transform.any_op) -> !transform.param<i64> {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %one : !transform.param<i64>
      transform.match.param.cmpi lt %m, %four : !transform.param<i64>
      transform.match.structured.yield %m : !transform.param<i64>
    }
    transform.yield %m : !transform.param<i64>
  }

  // Schedules one packed matmul: loops interchanged to [n/64, m, 64, k];
  // scf.forall over TN/64 panels x TM rows (fill fused); K blocks of TKP; register
  // tile RM x 64 with k innermost, vectorized [1, RM, 64, 1]; the last rows % RM
  // as 1 x 64 tiles, vectorized [1, 1, 64, 1].
  transform.named_sequence @cuvil_packed_matmul_cpu(
      %op: !transform.any_op {transform.consumed},
      %tnp: !transform.param<i64> {transform.readonly}, %tm: !transform.param<i64> {transform.readonly},
      %tk: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly}) {
    %i = transform.structured.interchange %op iterator_interchange = [1, 0, 3, 2]
      : (!transform.any_op) -> !transform.any_op
    // Rows spread evenly over an even number of tiles: with two threads each
    // runs one contiguous half of the forall (matmul_dot_cpu.mlir's step 1;
    // ResNet-18 fp32 at 2 threads, Zen 5: its 28x28 convs 0.31 -> 0.29 ms).
    %tmb = transform.cuvil.balanced_row_tile %i tiles %tnp, %tm multiple %rm
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %i tile_sizes [%tnp, %tmb]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%f: !transform.any_op):
        transform.match.operation_name %f ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %f into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %ffr, %fl0, %fl1 = transform.structured.tile_using_for %ff tile_sizes [1, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        transform.structured.vectorize %ffr vector_sizes [1, 1, 64] : !transform.any_op
      }
    }
    %t1, %lk = transform.structured.tile_using_for %t0 tile_sizes [0, 0, 0, %tk]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %t2, %l0, %l1 = transform.structured.tile_using_for %t1 tile_sizes [1, %rm, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // The last rows % RM (when there are such rows) one at a time: a 1 x 64
    // register tile each, unmasked. (A masked RM x 64 tile reads and writes
    // its accumulators at every k step, through a copy of the C slice.)
    transform.sequence %l1 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      // (an empty handle when the rows divide: peeling leaves no remainder)
      transform.foreach %rem : !transform.any_op {
      ^bb1(%r: !transform.any_op):
        %rest = transform.structured.match ops{["linalg.generic"]} in %r : (!transform.any_op) -> !transform.any_op
        %row, %lr, %lrk = transform.structured.tile_using_for %rest tile_sizes [0, 1, 0, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @cuvil_unroll_k failures(propagate) (%lrk) : (!transform.any_op) -> ()
        %rows = transform.structured.match ops{["linalg.generic"]} in %r : (!transform.any_op) -> !transform.any_op
        transform.structured.vectorize %rows vector_sizes [1, 1, 64, 1] : !transform.any_op
      }
    }
    // Whole RM-row tiles: k innermost.
    %full = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    %t3, %l2 = transform.structured.tile_using_for %full tile_sizes [0, 0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_unroll_k failures(propagate) (%l2) : (!transform.any_op) -> ()
    %kernels = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [1, %rm, 64, 1] : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  // Function-level vector cleanup, accumulator hoisting and lowering to FMAs.
  transform.named_sequence @cuvil_vector_lowering(%f: !transform.any_op {transform.consumed}) {
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
    // The packed kernel's vector.contract has a leading unit (panel) dim.
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    // Hoist the C accumulators out of the k loop (tensor-level subset hoisting).
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
    } : !transform.any_op
    transform.yield
  }

  // Matches 2-D linalg.transpose only: the 16x16 shuffle schedule does not
  // apply to the rank-4 head permutations of attention (left to lowering).
  transform.named_sequence @cuvil_match_2d_transpose(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.transpose"] : !transform.any_op
    %rank = transform.match.structured %op : (!transform.any_op) -> !transform.param<i64> {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.structured.yield %r : !transform.param<i64>
    }
    %two = transform.param.constant 2 : i64 -> !transform.param<i64>
    transform.match.param.cmpi eq %rank, %two : !transform.param<i64>
    transform.yield %op : !transform.any_op
  }

  // Entry point: the schedule with its default parameters.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // TM x TN: C tile per scf.forall iteration; TK: K block; RM x RN: register tile.
    %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
    %tn = transform.param.constant 256 : i64 -> !transform.param<i64>
    %tk = transform.param.constant 256 : i64 -> !transform.param<i64>
    %rm = transform.param.constant 4 : i64 -> !transform.param<i64>
    %rn = transform.param.constant 64 : i64 -> !transform.param<i64>
    // Packed matmuls (pack_cpu.mlir): TNP panels of 64 columns per forall tile,
    // K blocks of TKP (a TKP x 64 B panel: 192 KiB, in L2).
    %tnp = transform.param.constant 4 : i64 -> !transform.param<i64>
    %tkp = transform.param.constant 768 : i64 -> !transform.param<i64>
    // Packed fp32 matmuls of >= 512 rows: RM_TALL x 64 register tiles (24
    // accumulators: per k, 6 broadcasts and 4 row loads feed 24 FMAs), forall
    // tiles of TM_TALL rows (a multiple of 6).
    %tm_tall = transform.param.constant 96 : i64 -> !transform.param<i64>
    %rm_tall = transform.param.constant 6 : i64 -> !transform.param<i64>
    // Packed fp32 matmuls of 128 to 511 rows: forall tiles of TM_MID rows x
    // TNP_MID panels (a 768-wide layer at 128 rows: 6 tiles for 2 threads).
    %tnp_mid = transform.param.constant 2 : i64 -> !transform.param<i64>
    %tm_mid = transform.param.constant 128 : i64 -> !transform.param<i64>
    transform.include @cuvil_matmul_cpu_schedule failures(propagate) (%root, %tm, %tn, %tk, %rm, %rn, %tnp, %tkp, %tnp_mid, %tm_mid, %tm_tall, %rm_tall)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  // The schedule; `cuvil.param` names the parameters for cuvil.transform.apply.
  transform.named_sequence @cuvil_matmul_cpu_schedule(%root: !transform.any_op {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "TM"},
      %tn: !transform.param<i64> {transform.readonly, cuvil.param = "TN"},
      %tk: !transform.param<i64> {transform.readonly, cuvil.param = "TK"},
      %rm: !transform.param<i64> {transform.readonly, cuvil.param = "RM"},
      %rn: !transform.param<i64> {transform.readonly, cuvil.param = "RN"},
      %tnp: !transform.param<i64> {transform.readonly, cuvil.param = "TNP"},
      %tkp: !transform.param<i64> {transform.readonly, cuvil.param = "TKP"},
      %tnp_mid: !transform.param<i64> {transform.readonly, cuvil.param = "TNP_MID"},
      %tm_mid: !transform.param<i64> {transform.readonly, cuvil.param = "TM_MID"},
      %tm_tall: !transform.param<i64> {transform.readonly, cuvil.param = "TM_TALL"},
      %rm_tall: !transform.param<i64> {transform.readonly, cuvil.param = "RM_TALL"}) {
    // Matmuls of fewer than RM rows first (vectorized whole, so the match
    // of every linalg.matmul below no longer sees them).
    %gemvs, %gemv_rows = transform.collect_matching @cuvil_match_gemv in %root
      : (!transform.any_op) -> (!transform.any_op, !transform.param<i64>)
    %gemv_rn = transform.param.constant 128 : i64 -> !transform.param<i64>
    transform.foreach %gemvs, %gemv_rows : !transform.any_op, !transform.param<i64> {
    ^bb0(%g: !transform.any_op, %rows: !transform.param<i64>):
      transform.include @cuvil_gemv_cpu failures(propagate) (%g, %rows, %tn, %gemv_rn)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %mms = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_matmul_cpu failures(propagate) (%m, %tm, %tn, %tk, %rm, %rn)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    // Packed matmuls of fewer than RM rows (pack_cpu.mlir packs decode-step
    // matmuls too): a register tile of all M rows, unmasked.
    %fgemvs, %fgemv_rows = transform.collect_matching @cuvil_match_packed_gemv in %root
      : (!transform.any_op) -> (!transform.any_op, !transform.param<i64>)
    %igemvs, %igemv_rows = transform.collect_matching @cuvil_match_packed_int_gemv in %root
      : (!transform.any_op) -> (!transform.any_op, !transform.param<i64>)
    %pgemvs = transform.merge_handles %fgemvs, %igemvs : !transform.any_op
    %pgemv_rows = transform.merge_handles %fgemv_rows, %igemv_rows : !transform.param<i64>
    transform.foreach %pgemvs, %pgemv_rows : !transform.any_op, !transform.param<i64> {
    ^bb0(%g: !transform.any_op, %rows: !transform.param<i64>):
      transform.include @cuvil_packed_matmul_cpu failures(propagate) (%g, %tnp, %tm, %tkp, %rows)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    %tall = transform.collect_matching @cuvil_match_tall_packed_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %tall : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_packed_matmul_cpu failures(propagate) (%m, %tnp, %tm_tall, %tkp, %rm_tall)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    %mid = transform.collect_matching @cuvil_match_mid_packed_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mid : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_packed_matmul_cpu failures(propagate) (%m, %tnp_mid, %tm_mid, %tkp, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    %fmms = transform.collect_matching @cuvil_match_packed_matmul in %root : (!transform.any_op) -> !transform.any_op
    %imms = transform.collect_matching @cuvil_match_packed_int_matmul in %root : (!transform.any_op) -> !transform.any_op
    %pmms = transform.merge_handles %fmms, %imms : !transform.any_op
    transform.foreach %pmms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_packed_matmul_cpu failures(propagate) (%m, %tnp, %tm, %tkp, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>) -> ()
    }
    %trs = transform.collect_matching @cuvil_match_2d_transpose in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %trs : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.include @cuvil_transpose_cpu failures(propagate) (%t) : (!transform.any_op) -> ()
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      transform.include @cuvil_vector_lowering failures(propagate) (%f) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
