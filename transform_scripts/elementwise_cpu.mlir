// =============================================================================
// Cuvil: Transform-dialect schedule for everything that is not a matmul:
// elementwise ops, row reductions (softmax, layer norm) and N-D transposes
// (fp32 and integer, static shapes), on x86-64 CPUs with AVX-512.
//
// Entry point: @cuvil_elementwise, in scheduling.DEFAULT_SCHEDULE after
// matmul_cpu.mlir and batch_matmul_cpu.mlir (it skips contractions, which those
// schedule):
//   cuvil-opt in.mlir --transform-preload-library=transform-library-paths=elementwise_cpu.mlir \
//     --transform-interpreter=entry-point=cuvil_elementwise
//
// Parameters: the arguments of @cuvil_elementwise_schedule; @cuvil_elementwise
// binds their defaults, cuvil.transform.apply(..., params={"EW_ROWS": 4}) others.
//   EW_ROWS = 8         rows per tile of elementwise ops and of ops on i1;
//   EW_VEC = 64         vector width (elements) of elementwise ops;
//   RED_ROWS = 8        rows per tile of row reductions (that many accumulators);
//   PAR_MIN_COLS = 768  columns a rank-2 op needs (with >= 64 rows) for threads.
// The partial accumulator of a reduction row is 16 wide (one zmm), fixed.
//
// First, row chains: kernels cuvil-outline-kernels marked `cuvil.row_chain`
// (a softmax's or a layer norm's ops over the same rows, RowChains.h). Their
// returned op is tiled by RED_ROWS rows (an scf.forall when big, as below)
// and the chain's other ops are fused into each tile
// (transform.cuvil.tile_and_fuse_producers); in the tile, every reduction
// becomes RED_ROWS x 16 partial accumulators, the elementwise ops run one row
// at a time in EW_VEC chunks, and the intermediates are tile-sized buffers
// (on the stack: cuvil-stack-tile-buffers). See @cuvil_ew_row_chain.
//
// Then it looks at every linalg op directly in a func.func (ops already tiled by an
// earlier script are inside loops and are left alone) and dispatches with
// transform.foreach_match, first match wins:
//   * ops reading or writing i1 tensors: not vectorized (i1 buffers become
//     bytes after bufferization, see cuvil-widen-bool-memrefs, which handles
//     scalar loads/stores only); their rows (all loops but the last, if
//     parallel; rank 1-4) are still tiled by EW_ROWS (rank 1: 4096 elements) so
//     that they run on all threads when big; the tiles stay scalar loops.
//   * contractions (mulf + addf body): skipped.
//   * reductions along the last loop (rank 2-4, all other loops parallel, one
//     result; e.g. softmax's max and sum, layer norm's mean and variance):
//     RED_ROWS-row tiles with the zero/neutral fill of the result fused in;
//     the reduction tiled by 16 gives a RED_ROWS x 16 partial accumulator (one
//     zmm per row: RED_ROWS independent add chains), hoisted into registers
//     across the reduction loop; the partial last chunk is peeled (masked); a
//     final horizontal reduction per row. Summation order therefore differs
//     from a sequential loop (fp32 error ~1e-6 relative).
//   * the VNNI pair packs of bf16 products' per-call rhs (attention's, a
//     matmul of two inputs: 16-bit transposes whose innermost output dim is
//     an input dim of 2, transform.cuvil.match.vnni_pair_transpose): skipped,
//     for cuvil-vnni-interleave.
//   * linalg.transpose (rank 2-4): tiles of the leading dims and 64 rows; 16x16
//     tiles of the two innermost output dims, peeled; vectorized (a transpose of
//     the innermost dim becomes the AVX-512 16x16 shuffle transpose, a
//     permutation of outer dims becomes row copies).
//   * all-parallel ops (rank 1-5: linalg.generic, fill, copy, ...): tiles of
//     EW_ROWS rows of the second-innermost dim (rank 1: 4096 elements), then one
//     row at a time in EW_VEC-wide chunks, the partial last chunk peeled and
//     masked. Broadcast operands, gathers (tensor.extract in the body, e.g.
//     embeddings) and linalg.index are handled by the vectorizer.
// Big ops get an scf.forall for the row tiles, small ones scf.for loops: with
// more than one thread every scf.forall becomes an async-parallel-for region,
// whose task hand-off once cost ~0.1 ms on the test VM (more than a 128x768
// layer-norm step). With the runtime's spinning workers 128 x 768 ops pay:
// PAR_MIN_COLS 3072 -> 768 (layer norm, softmax rows, bias adds, GELU of
// transformers at seq 128), 2 threads, interleaved, Xeon model 167: BERT-base
// bf16 0.97-0.98x the time, GPT-2 fp32 0.95x, ResNet-18 int8 0.97x. A small
// serial kernel also reads what the other core's matmul tiles just wrote
// (BERT's layer norm took 1.1 ms at 1 thread, 1.5 at 2). See @cuvil_ew_big.
// Then, per function: permuted/masked transfers lowered, unit dims dropped,
// canonicalize + CSE, in quantizing kernels loop-invariant code motion (see
// @cuvil_ew_hoist_quantize_invariants), loop-invariant-subset-hoisting
// (reduction accumulators in registers), multi_reduction -> horizontal reductions, 16x16 shuffle
// transposes, broadcast/shape_cast lowering.
//
// Math functions (exp, erf, tanh) stay math.* on vectors here; the lowering
// pipeline's cuvil-math-approx pass rewrites the f32 ones into polynomial
// approximations (arith + fma, still vectors), the others become libm calls.
//
// One set of sequences serves every rank: the transform.cuvil.* ops
// (dialects/CuvilTransformOps.td) test bitwidths and shapes, and build the
// per-rank tile and vector sizes (`tile_sizes %op [%rows, 0] leading 1`: rank 3
// gets [1, %rows, 0]) that their tile_using_for / tile_reduction_using_for /
// vectorize (and upstream's tile_using_forall *(...)) take as one param.
// =============================================================================
module attributes {transform.with_named_sequence} {

  // ------------------------------------------------------------ entry points
  // The schedule with its default parameters.
  transform.named_sequence @cuvil_elementwise(%root: !transform.any_op {transform.readonly}) {
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 768 : i64 -> !transform.param<i64>
    transform.include @cuvil_elementwise_schedule failures(propagate)
        (%root, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }

  // Every matcher takes the op and the four parameters (foreach_match forwards
  // them) and yields the op and what its action needs.
  transform.named_sequence @cuvil_elementwise_schedule(%root: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly, cuvil.param = "EW_ROWS"},
      %ew_vec: !transform.param<i64> {transform.readonly, cuvil.param = "EW_VEC"},
      %red_rows: !transform.param<i64> {transform.readonly, cuvil.param = "RED_ROWS"},
      %min_cols: !transform.param<i64> {transform.readonly, cuvil.param = "PAR_MIN_COLS"}) {
    // Phase 0: row chains (kernels cuvil-outline-kernels marked
    // cuvil.row_chain): the returned op tiled by rows, the chain's other ops
    // fused into the tile.
    %chains = transform.structured.match ops{["func.func"]} attributes{cuvil.row_chain} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %chains : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      // Big: an scf.forall (the second sequence then finds the loop, not a
      // linalg op, at the return, and does nothing).
      transform.sequence %f : !transform.any_op failures(suppress) {
      ^bb1(%ff: !transform.any_op):
        %ret = transform.structured.match ops{["func.return"]} in %ff : (!transform.any_op) -> !transform.any_op
        %last = transform.get_producer_of_operand %ret[0] : (!transform.any_op) -> !transform.any_op
        %o, %rows, %vec, %rvec, %rr = transform.include @cuvil_ew_match_row_chain_big failures(propagate)
            (%last, %ew_rows, %ew_vec, %red_rows, %min_cols)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
             !transform.param<i64>)
         -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        transform.include @cuvil_ew_row_chain failures(propagate) (%o, %rows, %vec, %rvec, %rr)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
             !transform.param<i64>) -> ()
      }
      transform.sequence %f : !transform.any_op failures(suppress) {
      ^bb1(%ff: !transform.any_op):
        %ret = transform.structured.match ops{["func.return"]} in %ff : (!transform.any_op) -> !transform.any_op
        %last = transform.get_producer_of_operand %ret[0] : (!transform.any_op) -> !transform.any_op
        %o, %rows, %vec, %rvec, %rr = transform.include @cuvil_ew_match_row_chain failures(propagate)
            (%last, %ew_rows, %ew_vec, %red_rows, %min_cols)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
             !transform.param<i64>)
         -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
        transform.include @cuvil_ew_row_chain_serial failures(propagate) (%o, %rows, %vec, %rvec, %rr)
          : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
             !transform.param<i64>) -> ()
      }
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    // Phase 1: reductions first, so that their init fills are still there to fuse.
    %funcs1 = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_i1_rows_big -> @cuvil_ew_tile_rows,
        @cuvil_ew_match_i1_rows -> @cuvil_ew_tile_rows_serial,
        @cuvil_ew_match_i1 -> @cuvil_ew_skip,
        @cuvil_ew_match_contraction -> @cuvil_ew_skip,
        @cuvil_ew_match_row_reduction_big -> @cuvil_ew_row_reduction,
        @cuvil_ew_match_row_reduction -> @cuvil_ew_row_reduction_serial
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    // Phase 2: transposes and all-parallel ops.
    %funcs2 = transform.foreach_match in %funcs1, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_i1_rows_big -> @cuvil_ew_tile_rows,
        @cuvil_ew_match_i1_rows -> @cuvil_ew_tile_rows_serial,
        @cuvil_ew_match_i1 -> @cuvil_ew_skip,
        @cuvil_ew_match_contraction -> @cuvil_ew_skip,
        @cuvil_ew_match_vnni_pair_pack -> @cuvil_ew_skip,
        @cuvil_ew_match_transpose_big -> @cuvil_ew_transpose,
        @cuvil_ew_match_transpose -> @cuvil_ew_transpose_serial,
        @cuvil_ew_match_parallel_big -> @cuvil_ew_parallel,
        @cuvil_ew_match_parallel -> @cuvil_ew_parallel_serial
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.foreach %funcs2 : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      transform.include @cuvil_ew_vector_lowering failures(propagate) (%f) : (!transform.any_op) -> ()
    }
    transform.yield
  }

  // ---------------------------------------------------------------- matchers
  // Only ops directly in a func.func (not ones already tiled into loops).
  transform.named_sequence @cuvil_ew_match_top(%op: !transform.any_op {transform.readonly}) {
    %parent = transform.get_parent_op %op {nth_parent = 1} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["func.func"] : !transform.any_op
    transform.yield
  }

  // "Big enough for an scf.forall". Element counts cannot be computed in a
  // matcher, so it is a per-rank shape test (transformer-sized; 0: any size):
  //   rank 1: n >= 131072; rank 2: rows >= 64 and cols >= PAR_MIN_COLS;
  //   rank 3: d0 >= 4 and d1, d2 >= 128; rank 4: d1 >= 4 and d2, d3 >= 128;
  //   rank 5: d2, d3 >= 4 and d4 >= 64 (Winograd transforms of ResNet-sized convs).
  transform.named_sequence @cuvil_ew_big(%op: !transform.any_op {transform.readonly},
      %min_cols: !transform.param<i64> {transform.readonly}) {
    transform.cuvil.match.loop_ranges_at_least %op
        [[131072], [64, %min_cols], [4, 128, 128], [0, 4, 128, 128], [0, 0, 4, 4, 64]]
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }
  // Transposes and elementwise ops also count as big with the conv-shaped
  // tensors of cuvil-winograd-conv and cuvil-im2col-conv (HWC <-> CHW
  // transposes, Winograd's transforms):
  // every dim >= 16 at rank 3 (transformers' 12-head tensors stay serial),
  // d1 >= 8, d2 >= 16, d3 >= 64 at rank 4, d1, d2 >= 128 at rank 4 (the
  // NCHW -> NHWC transpose of a 3-channel image, [1, 230, 230, 3]), and
  // Winograd's transforms, whose loops run the coefficient dim second
  // innermost (cuvil-winograd-conv): [th, w, alpha, C] at rank 4 with 4+ tile
  // rows (a 28x28 image has 7, a 14x14 one 7 with F(2x2)), [b, th, tw, m, F]
  // at rank 5 (m = 2 with F(2x2)).
  // ResNet-18 at 2 threads, same process: 21.8-25.5 -> 20.1-21.9 ms with it;
  // the image transpose and the 7-tile-row transforms (serial before) of
  // ResNet-18 bf16 from 0.29 to 0.15-0.19 ms (2 threads, Zen 5).
  // The im2col gathers of cuvil-im2col-conv ([OH, OW, KH, KW * C], >= ~150K
  // elements: 56x56x3x192, 112x112x7x21, 7x7x3x1536): ResNet-18 int8 at 2
  // threads ran them on one thread, ~0.65 of its ~4.2 ms.
  transform.named_sequence @cuvil_ew_big_or_conv(%op: !transform.any_op {transform.readonly},
      %min_cols: !transform.param<i64> {transform.readonly}) {
    transform.cuvil.match.loop_ranges_at_least %op
        [[131072], [64, %min_cols], [4, 128, 128], [0, 4, 128, 128], [0, 0, 4, 4, 64],
         [16, 16, 16], [0, 8, 16, 64], [0, 128, 128, 0], [4, 16, 4, 64], [0, 4, 4, 2, 64],
         [56, 56, 0, 16], [28, 28, 0, 64], [14, 14, 0, 256], [7, 7, 0, 1024]]
      : !transform.any_op, !transform.param<i64>
    transform.yield
  }

  // Ops reading or writing i1 (any input or init).
  transform.named_sequence @cuvil_ew_match_i1(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.cuvil.match.any_operand_bitwidth %op, 1 : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  // ... whose rows are parallel (rank 1-4; rank 1: its loop): yields the row tile sizes.
  transform.named_sequence @cuvil_ew_match_i1_rows(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    transform.cuvil.match.any_operand_bitwidth %op, 1 : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c1 = transform.param.constant 1 : i64 -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %r, %c1 : !transform.param<i64>
      transform.match.param.cmpi le %r, %c4 : !transform.param<i64>
      transform.match.structured.dim %s[0] {parallel} : !transform.any_op
      transform.match.structured.dim %s[except(-1)] {parallel} : !transform.any_op
      transform.match.structured.yield
    }
    %rows = transform.cuvil.tile_sizes %op [[%ew_rows, 0], [4096]] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.yield %op, %rows : !transform.any_op, !transform.param<i64>
  }
  transform.named_sequence @cuvil_ew_match_i1_rows_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    %o, %rows = transform.include @cuvil_ew_match_i1_rows failures(propagate)
        (%op, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.param<i64>)
    transform.include @cuvil_ew_big failures(propagate) (%op, %min_cols)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %o, %rows : !transform.any_op, !transform.param<i64>
  }

  // Contractions (matmul, batched matmul): left to matmul_cpu / batch_matmul_cpu.
  transform.named_sequence @cuvil_ew_match_contraction(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // The VNNI pair pack of a product's per-call rhs (pack_cpu.mlir, bf16
  // hosts: attention's k^T and v, a matmul of two inputs): a 16-bit
  // linalg.transpose whose innermost output dim is the k pair. Left to
  // cuvil-vnni-interleave (after bufferization), which writes it as row loads
  // and vector.interleave.
  transform.named_sequence @cuvil_ew_match_vnni_pair_pack(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_ew_match_top failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.cuvil.match.vnni_pair_transpose %op : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // Reduction along the last loop only, one init, rank 2-4: yields the row tile
  // sizes and RED_ROWS.
  transform.named_sequence @cuvil_ew_match_row_reduction(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    transform.include @cuvil_ew_match_top failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %r, %c2 : !transform.param<i64>
      transform.match.param.cmpi le %r, %c4 : !transform.param<i64>
      transform.match.structured.dim %s[-1] {reduction} : !transform.any_op
      transform.match.structured.dim %s[except(-1)] {parallel} : !transform.any_op
      %n = transform.match.structured.num_inits %s : (!transform.any_op) -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %n, %one : !transform.param<i64>
      // One combiner op (a sum, a max): tile_reduction_using_for splits only
      // those. Others (argmax-like selects of max_pool with indices) stay for
      // the scalar path: the failed split left the interpreter with stale
      // handles, and it crashed.
      transform.match.structured.body %s { reduction_position = 0 } : !transform.any_op
      transform.match.structured.yield
    }
    %rows = transform.cuvil.tile_sizes %op [%red_rows, 0] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.yield %op, %rows, %red_rows : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }
  transform.named_sequence @cuvil_ew_match_row_reduction_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    %o, %rows, %rr = transform.include @cuvil_ew_match_row_reduction failures(propagate)
        (%op, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
    transform.include @cuvil_ew_big failures(propagate) (%op, %min_cols)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %o, %rows, %rr : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }

  // The last op of a row chain (rank 2-4, all loops parallel but maybe the
  // last): yields its row tile sizes (RED_ROWS rows) and the chunk sizes of
  // the elementwise ops in the tile.
  transform.named_sequence @cuvil_ew_match_row_chain(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %r, %c2 : !transform.param<i64>
      transform.match.param.cmpi le %r, %c4 : !transform.param<i64>
      transform.match.structured.dim %s[except(-1)] {parallel} : !transform.any_op
      transform.match.structured.yield
    }
    %rows = transform.cuvil.tile_sizes %op [%red_rows, 0] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %vec = transform.cuvil.tile_sizes %op [1, %ew_vec] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %rvec = transform.cuvil.tile_sizes %op [%red_rows, 16] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.yield %op, %rows, %vec, %rvec, %red_rows
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
  }
  transform.named_sequence @cuvil_ew_match_row_chain_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) {
    %o, %rows, %vec, %rvec, %rr = transform.include @cuvil_ew_match_row_chain failures(propagate)
        (%op, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>)
     -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
    transform.include @cuvil_ew_big failures(propagate) (%op, %min_cols)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %o, %rows, %vec, %rvec, %rr
      : !transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
  }

  // linalg.transpose of rank 2-4: yields the tile sizes of 64 rows.
  transform.named_sequence @cuvil_ew_match_transpose(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    transform.include @cuvil_ew_match_top failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.operation_name %op ["linalg.transpose"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %r, %c2 : !transform.param<i64>
      transform.match.param.cmpi le %r, %c4 : !transform.param<i64>
      transform.match.structured.yield
    }
    %rows = transform.cuvil.tile_sizes %op [64, 0] leading 1 : (!transform.any_op) -> !transform.param<i64>
    transform.yield %op, %rows : !transform.any_op, !transform.param<i64>
  }
  transform.named_sequence @cuvil_ew_match_transpose_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>) {
    %o, %rows = transform.include @cuvil_ew_match_transpose failures(propagate)
        (%op, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.param<i64>)
    transform.include @cuvil_ew_big_or_conv failures(propagate) (%op, %min_cols)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %o, %rows : !transform.any_op, !transform.param<i64>
  }

  // All loops parallel, rank 1-5: yields the row tile sizes and the vector sizes.
  transform.named_sequence @cuvil_ew_match_parallel(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    transform.include @cuvil_ew_match_top failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %c1 = transform.param.constant 1 : i64 -> !transform.param<i64>
      %c5 = transform.param.constant 5 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %r, %c1 : !transform.param<i64>
      transform.match.param.cmpi le %r, %c5 : !transform.param<i64>
      transform.match.structured.dim %s[all] {parallel} : !transform.any_op
      transform.match.structured.yield
    }
    %rows = transform.cuvil.tile_sizes %op [[%ew_rows, 0], [4096]] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %vec = transform.cuvil.tile_sizes %op [%ew_vec] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.yield %op, %rows, %vec : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }
  transform.named_sequence @cuvil_ew_match_parallel_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>) {
    %o, %rows, %vec = transform.include @cuvil_ew_match_parallel failures(propagate)
        (%op, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
    transform.include @cuvil_ew_big_or_conv failures(propagate) (%op, %min_cols)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %o, %rows, %vec : !transform.any_op, !transform.param<i64>, !transform.param<i64>
  }

  // ----------------------------------------------------------------- actions
  // Each category has an scf.forall action (big ops) and an scf.for one; both
  // tile the rows by the matcher's sizes and hand the loop nest's root to a
  // shared rest.
  transform.named_sequence @cuvil_ew_skip(%op: !transform.any_op {transform.readonly}) {
    transform.yield
  }

  // Peels a loop (the partial last tile); no-op when the tile size divides.
  transform.named_sequence @cuvil_ew_peel(%loop: !transform.any_op {transform.readonly}) {
    transform.sequence %loop : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }

  // An op reading or writing i1: its rows tiled, no vectorization.
  transform.named_sequence @cuvil_ew_tile_rows(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}) {
    %t, %forall = transform.structured.tile_using_forall %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
  transform.named_sequence @cuvil_ew_tile_rows_serial(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}) {
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }

  // Elementwise: row tiles, then loops over single rows and EW_VEC-wide column
  // chunks (the partial last chunk peeled), vectorized.
  transform.named_sequence @cuvil_ew_parallel(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly}) {
    %t, %forall = transform.structured.tile_using_forall %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_vectorize_rows failures(propagate) (%t, %forall, %vec)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_parallel_serial(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly}) {
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_vectorize_rows failures(propagate) (%t, %loop, %vec)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  // %vec: [1, ..., 1, EW_VEC], the chunk tile sizes and the vector sizes.
  transform.named_sequence @cuvil_ew_vectorize_rows(%t: !transform.any_op {transform.consumed},
      %nest: !transform.any_op {transform.readonly}, %vec: !transform.param<i64> {transform.readonly}) {
    %chunk, %loop = transform.cuvil.tile_using_for %t tile_sizes *(%vec)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %inner = transform.get_parent_op %chunk {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_ew_peel failures(propagate) (%inner) : (!transform.any_op) -> ()
    %tiles = transform.structured.match interface{LinalgOp} in %nest : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%tile: !transform.any_op):
      transform.sequence %tile : !transform.any_op failures(suppress) {
      ^bb1(%tt: !transform.any_op):
        transform.cuvil.vectorize %tt vector_sizes *(%vec) : !transform.any_op, !transform.param<i64>
      }
    }
    transform.yield
  }

  // Row reduction: row tiles (the zero-fill of the result fused in when they
  // are an scf.forall), the reduction tiled by 16 into a RED_ROWS x 16 partial
  // accumulator (kept in registers), the partial last chunk peeled, then one
  // final 16-wide horizontal reduction per row.
  transform.named_sequence @cuvil_ew_row_reduction(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly}) {
    %t, %forall = transform.structured.tile_using_forall %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_reduce_rows failures(propagate) (%t, %forall, %red_rows)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_row_reduction_serial(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly}) {
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_reduce_rows failures(propagate) (%t, %loop, %red_rows)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_reduce_rows(%t: !transform.any_op {transform.consumed},
      %nest: !transform.any_op {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly}) {
    %red = transform.cuvil.tile_sizes %t [16] leading 0 : (!transform.any_op) -> !transform.param<i64>
    %vec = transform.cuvil.tile_sizes %t [%red_rows, 16] leading 1
      : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    // The init: operand 0 of an scf.forall is its shared output (that of an
    // scf.for its lower bound, so serial tiles keep their fill outside).
    transform.sequence %nest : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%i: !transform.any_op):
        transform.match.operation_name %i ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %i into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %fill_vec = transform.cuvil.tile_sizes %ff [%red_rows] leading 1
          : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
        transform.cuvil.vectorize %ff vector_sizes *(%fill_vec) : !transform.any_op, !transform.param<i64>
      }
    }
    %fill, %part, %comb, %loop = transform.cuvil.tile_reduction_using_for %t by tile_sizes *(%red)
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_peel failures(propagate) (%loop) : (!transform.any_op) -> ()
    %tiles = transform.structured.match interface{LinalgOp} in %nest : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%tile: !transform.any_op):
      transform.sequence %tile : !transform.any_op failures(suppress) {
      ^bb1(%tt: !transform.any_op):
        transform.cuvil.vectorize %tt vector_sizes *(%vec) : !transform.any_op, !transform.param<i64>
      }
    }
    transform.yield
  }

  // Row chain: the last op tiled by RED_ROWS rows, every producer of its tile
  // in the kernel fused in (the row maxima, sums and means computed for those
  // rows, the exp or the centered values a row at a time); then in the tile,
  // each reduction as @cuvil_ew_reduce_rows (RED_ROWS x 16 accumulators),
  // each elementwise op one row at a time in EW_VEC-wide chunks, the fills.
  // The intermediates are tile-sized tensors (4 KB for 8 rows of 128 f32),
  // read back from L1 by the next op instead of from memory.
  // In a row chain's tile: its reductions (one combiner, as
  // @cuvil_ew_match_row_reduction) and its elementwise ops.
  transform.named_sequence @cuvil_ew_match_tile_reduction(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[-1] {reduction} : !transform.any_op
      transform.match.structured.dim %s[except(-1)] {parallel} : !transform.any_op
      transform.match.structured.body %s { reduction_position = 0 } : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @cuvil_ew_match_tile_parallel(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[all] {parallel} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @cuvil_ew_row_chain(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly},
      %rvec: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly}) {
    %ops, %loop = transform.cuvil.tile_and_fuse_producers %op tile_sizes *(%rows) {use_forall}
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_row_chain_tiles failures(propagate) (%loop, %vec, %rvec, %red_rows)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_row_chain_serial(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly},
      %rvec: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly}) {
    %ops, %loop = transform.cuvil.tile_and_fuse_producers %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_row_chain_tiles failures(propagate) (%loop, %vec, %rvec, %red_rows)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_row_chain_tiles(%loop: !transform.any_op {transform.readonly},
      %vec: !transform.param<i64> {transform.readonly}, %rvec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}) {
    %f = transform.get_parent_op %loop {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    // The untiled ops are dead; slices of empty tensors become tile-sized
    // empty tensors (buffers of one tile); a producer fused for two readers
    // was fused twice.
    transform.apply_dce to %f : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    // Each reduction of the last loop: a RED_ROWS x 16 partial accumulator
    // (all of them tiled before anything is vectorized: a reduction of rows
    // no longer than 16 would fit the vector sizes untiled, and be
    // vectorized, and so erased, while still in the list).
    %reds = transform.collect_matching @cuvil_ew_match_tile_reduction in %loop
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %reds : !transform.any_op {
    ^bb0(%g: !transform.any_op):
      transform.sequence %g : !transform.any_op failures(suppress) {
      ^bb1(%t: !transform.any_op):
        %red = transform.cuvil.tile_sizes %t [16] leading 0 : (!transform.any_op) -> !transform.param<i64>
        %fill, %part, %comb, %rl = transform.cuvil.tile_reduction_using_for %t by tile_sizes *(%red)
          : (!transform.any_op, !transform.param<i64>)
          -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.include @cuvil_ew_peel failures(propagate) (%rl) : (!transform.any_op) -> ()
      }
    }
    // The pieces: partial accumulators, their fills and merges (RED_ROWS x 16;
    // the other ops do not fit, but for rows of at most 16, which this
    // vectorizes whole).
    %pieces = transform.structured.match interface{LinalgOp} in %loop : (!transform.any_op) -> !transform.any_op
    transform.foreach %pieces : !transform.any_op {
    ^bb0(%p: !transform.any_op):
      transform.sequence %p : !transform.any_op failures(suppress) {
      ^bb1(%pp: !transform.any_op):
        transform.cuvil.vectorize %pp vector_sizes *(%rvec) : !transform.any_op, !transform.param<i64>
      }
    }
    // The elementwise ops left: one row at a time, EW_VEC-wide chunks.
    %rest = transform.collect_matching @cuvil_ew_match_tile_parallel in %loop
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %rest : !transform.any_op {
    ^bb0(%g: !transform.any_op):
      transform.sequence %g : !transform.any_op failures(suppress) {
      ^bb1(%t: !transform.any_op):
        %chunk, %cl = transform.cuvil.tile_using_for %t tile_sizes *(%vec)
          : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
        %inner = transform.get_parent_op %chunk {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
        transform.include @cuvil_ew_peel failures(propagate) (%inner) : (!transform.any_op) -> ()
        %chunks = transform.structured.match interface{LinalgOp} in %cl : (!transform.any_op) -> !transform.any_op
        transform.foreach %chunks : !transform.any_op {
        ^bb3(%p: !transform.any_op):
          transform.sequence %p : !transform.any_op failures(suppress) {
          ^bb4(%pp: !transform.any_op):
            transform.cuvil.vectorize %pp vector_sizes *(%vec) : !transform.any_op, !transform.param<i64>
          }
        }
      }
    }
    // The reductions' fills of RED_ROWS rows.
    %fills = transform.structured.match ops{["linalg.fill"]} in %loop : (!transform.any_op) -> !transform.any_op
    transform.foreach %fills : !transform.any_op {
    ^bb0(%fl: !transform.any_op):
      transform.sequence %fl : !transform.any_op failures(suppress) {
      ^bb1(%t: !transform.any_op):
        %fvec = transform.cuvil.tile_sizes %t [%red_rows] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
        transform.cuvil.vectorize %t vector_sizes *(%fvec) : !transform.any_op, !transform.param<i64>
      }
    }
    transform.yield
  }

  // linalg.transpose: tiles of the leading dims and 64 rows, 16x16 tiles of the
  // two innermost output dims (partial tiles peeled), vectorized; transposes
  // that move the innermost dim become 16x16 shuffle transposes.
  transform.named_sequence @cuvil_ew_transpose(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}) {
    %t, %forall = transform.structured.tile_using_forall %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_transpose_tiles failures(propagate) (%t, %forall)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_transpose_serial(%op: !transform.any_op {transform.consumed},
      %rows: !transform.param<i64> {transform.readonly}) {
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%rows)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_ew_transpose_tiles failures(propagate) (%t, %loop)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @cuvil_ew_transpose_tiles(%t: !transform.any_op {transform.consumed},
      %nest: !transform.any_op {transform.readonly}) {
    %sizes = transform.cuvil.tile_sizes %t [16, 16] leading 1 : (!transform.any_op) -> !transform.param<i64>
    %tile, %loop = transform.cuvil.tile_using_for %t tile_sizes *(%sizes)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %inner = transform.get_parent_op %tile {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    %outer = transform.get_parent_op %inner {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_ew_peel failures(propagate) (%inner) : (!transform.any_op) -> ()
    transform.include @cuvil_ew_peel failures(propagate) (%outer) : (!transform.any_op) -> ()
    %tiles = transform.structured.match ops{["linalg.transpose"]} in %nest : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%tt0: !transform.any_op):
      transform.sequence %tt0 : !transform.any_op failures(suppress) {
      ^bb1(%tt: !transform.any_op):
        transform.cuvil.vectorize %tt vector_sizes *(%sizes) : !transform.any_op, !transform.param<i64>
      }
    }
    transform.yield
  }

  // ------------------------------------------- loop-invariant code of quantizes
  // In a kernel that quantizes (math.roundeven: an int8 epilogue), the
  // loop-invariant ops move out of the quantize's row loop, then out of the
  // row-tile loop around it (scf.for or scf.forall): the per-channel scales
  // are read and multiplied once per row tile, not once per row, which LLVM
  // cannot do (those loads may alias the output's stores). ResNet-18 int8,
  // 1 thread, Xeon model 207, 8 rounds interleaved, time new / old: 0.96 and
  // 0.99 (medians of two runs; min 0.60 and 0.89). Not everywhere: hoisted out
  // of a bf16 kernel's row loop, a bias's masked bf16 read became 4-lane bf16
  // ops (LLVM's SLP vectorizer) that llc cannot legalize (it aborted).
  transform.named_sequence @cuvil_ew_match_quantize(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["math.roundeven"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @cuvil_ew_hoist_quantize_invariants(%f: !transform.any_op {transform.readonly}) {
    %q = transform.collect_matching @cuvil_ew_match_quantize in %f : (!transform.any_op) -> !transform.any_op
    %rows = transform.get_parent_op %q {op_name = "scf.for", deduplicate, allow_empty_results}
      : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %rows : !transform.any_op
    %serial = transform.get_parent_op %rows {op_name = "scf.for", deduplicate, allow_empty_results}
      : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %serial : !transform.any_op
    %tiles = transform.get_parent_op %rows {op_name = "scf.forall", deduplicate, allow_empty_results}
      : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %tiles : !transform.any_op
    transform.yield
  }

  // ---------------------------------------------------------- vector lowering
  transform.named_sequence @cuvil_ew_vector_lowering(%f: !transform.any_op {transform.consumed}) {
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    transform.include @cuvil_ew_hoist_quantize_invariants failures(propagate) (%f) : (!transform.any_op) -> ()
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.yield
  }
}
