// =============================================================================
// Cuvil: Transform-dialect schedule for NCHW convolutions and pooling (fp32,
// static shapes) on x86-64 CPUs with AVX-512 (tuned on a 2-core Zen 4 VM).
//
// Entry point: @cuvil_conv_cpu(%root), in scheduling.DEFAULT_SCHEDULE as
// ("conv_cpu", "cuvil_conv_cpu"). It works before or after elementwise_cpu
// (measured the same on ResNet-18): run first, it folds the convs' zero fills
// into the packed layout; run after, it packs the already-vectorized init.
//   cuvil-opt in.mlir --transform-preload-library=transform-library-paths=conv_cpu.mlir \
//     --transform-interpreter=entry-point=cuvil_conv_cpu
//
// What it handles (everything else is left untouched):
//   linalg.conv_2d_nchw_fchw   any stride / kernel / padding / dilation / channels
//   linalg.pooling_nchw_max/sum, linalg.pooling_nhwc_max/sum
//   tensor.pad                 (the padding torch-mlir puts in front of convs/pools)
//
// Convolution (direct, no im2col): O[f,oh,ow] += I[c,oh*s+kh,ow*s+kw] * W[f,c,kh,kw]
//  1. transform.structured.pack on the output-channel dim by P (16 for stride 1,
//     32 otherwise): the filter becomes W'[F/P][C][KH][KW][P] (a linalg.pack,
//     lowered to a transpose) and the result O'[N][F/P][OH][OW][P] (unpack at the
//     end). The input stays NCHW. Channel counts that P does not divide are
//     padded by the pack (zero filters).
//  2. One scf.forall over blocks of P output channels (tile the unpack, fuse the
//     packed conv, its init and the filter pack into it). Per iteration: pack
//     that filter block ([16 x KH x KW] vector transposes; it stays in L2),
//     compute, unpack to NCHW (16x16 vector transposes). The forall is what the
//     2-thread build splits.
//  3. Register tile; unit dims are then folded so that each tile is a plain
//     contraction the generic vectorizer turns into vector.contract, lowered to
//     AVX-512 FMAs by @cuvil_conv_vector_lowering; the accumulators are hoisted
//     out of the reduction loops (loop-invariant-subset-hoisting):
//       stride 1 (mode A): tile [oh 1, ow 24, c 4, kh 1, kw 1] x 16 channels:
//            acc[ow][16] += I[c][ow] (broadcast from memory) * W'[c][16];
//            24 zmm accumulators; ow peeled (static or masked remainder).
//       stride > 1, KW > 1 (mode B): tile [oh 1, ow 7, kh 1, all kw] x 32
//            channels, the ow loop unrolled by 7 (a strided ow cannot be a vector
//            dim): acc[ow_i][32] += I[s*ow_i + kw] * W'[kw][32], over kw.
//       anything else, e.g. 1x1 stride 2 or dilation (mode C): like B with the
//            contraction over 8 input channels (strided input reads).
//     Measured, 1 thread, min of 20-30 runs, filter packing and unpacking
//     included, side by side with torch eager (oneDNN), GFLOP/s:
//       3x3 s1, ResNet-18 layers 1-3 (64..256 ch, 56..14 px): 90-105 (eager 90-110)
//       3x3 s1, 512 ch at 7x7: 80-84 (eager 58-70)
//       3x3 s2: 68-93 (eager 75-100); 7x7 s2 stem (C=3): ~80 (eager ~95)
//       1x1 s2 downsample: ~35 (eager ~56)
//
// Pooling: scf.forall over blocks of 8 output rows, [16 c, 1 oh, 8 ow, 1 kh]
//   tiles, decomposed to linalg.pooling_ncw_* and vectorized (lanes along c,
//   in-register transposes). ResNet's 3x3/2 max pool: ~1.2 ms (eager 6.1 ms).
// Pads: a pad fed by an op's result is not here any more: cuvil-outline-kernels
//   moved it into that op's kernel, which fills the border and writes the
//   interior in place. The others (a result padded twice or reshaped two
//   ways) each get their own buffer here
//   (transform.structured.bufferize_to_allocation, linalg.copy as the
//   memcpy); the fill and the interior copy are vectorized row by row. A
//   plain tensor.pad bufferizes to a generic strided memrefCopy
//   (~5 ms on ResNet-18); a fill + insert_slice rewrite gets identical fills
//   CSE'd into one buffer that is then copied again for every pad.
//
// What reaches it: at raise time (python/cuvil/raising.py) batch-1 convs with
// >= 16 input and >= 32 output channels are rewritten before this schedule
// sees them: 3x3 stride-1 ones with outputs >= 14x14 by cuvil-winograd-conv,
// the others by cuvil-im2col-conv (one packed matmul, the filter transposed
// once in main_prepack). This schedule keeps the rest: few channels (the 3-
// channel stem), batch > 1, dynamic shapes. Its filter packing runs per call
// (it runs after cuvil-split-prepack): ~1 cycle per weight.
// BN/ReLU epilogues are left to elementwise_cpu.
// =============================================================================
module attributes {transform.with_named_sequence} {

  // ---------------------------------------------------------------- matchers

  // A linalg.conv_2d_nchw_fchw whose filter width is > 1.
  transform.named_sequence @cuvil_conv_match_kw_gt1(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.conv_2d_nchw_fchw"] : !transform.any_op
    %kw = transform.match.structured %op : (!transform.any_op) -> !transform.param<i64> {
    ^bb0(%s: !transform.any_op):
      %d = transform.match.structured.dim %s[6] : (!transform.any_op) -> !transform.param<i64>
      transform.match.structured.yield %d : !transform.param<i64>
    }
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.match.param.cmpi gt %kw, %one : !transform.param<i64>
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_conv_match_pool(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.pooling_nchw_max", "linalg.pooling_nchw_sum"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_conv_match_pool_nhwc(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // Structured ops of rank 2 / 3 / 4 (used on single fills and copies).
  transform.named_sequence @cuvil_conv_match_rank(%op: !transform.any_op {transform.readonly},
      %rank: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %r = transform.match.structured %op : (!transform.any_op) -> !transform.param<i64> {
    ^bb0(%s: !transform.any_op):
      %d = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.structured.yield %d : !transform.param<i64>
    }
    transform.match.param.cmpi eq %r, %rank : !transform.param<i64>
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @cuvil_conv_match_rank2(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %c = transform.param.constant 2 : i64 -> !transform.param<i64>
    %x = transform.include @cuvil_conv_match_rank failures(propagate) (%op, %c)
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.yield %x : !transform.any_op
  }
  transform.named_sequence @cuvil_conv_match_rank3(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %c = transform.param.constant 3 : i64 -> !transform.param<i64>
    %x = transform.include @cuvil_conv_match_rank failures(propagate) (%op, %c)
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.yield %x : !transform.any_op
  }
  transform.named_sequence @cuvil_conv_match_rank4(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %c = transform.param.constant 4 : i64 -> !transform.param<i64>
    %x = transform.include @cuvil_conv_match_rank failures(propagate) (%op, %c)
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.yield %x : !transform.any_op
  }

  // ------------------------------------------------- packing and distribution

  // Packs the output channels by 16 / 32 (linalg.pack only takes static sizes).
  transform.named_sequence @cuvil_conv_pack16(%c: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %g = transform.structured.pack %c packed_sizes = [0, 16, 0, 0, 0, 0, 0]
      : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    %ga = transform.cast %g : !transform.op<"linalg.generic"> to !transform.any_op
    transform.yield %ga : !transform.any_op
  }
  transform.named_sequence @cuvil_conv_pack32(%c: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %g = transform.structured.pack %c packed_sizes = [0, 32, 0, 0, 0, 0, 0]
      : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    %ga = transform.cast %g : !transform.op<"linalg.generic"> to !transform.any_op
    transform.yield %ga : !transform.any_op
  }

  // %g: the packed conv (generic [n, F/P, oh, ow, c, kh, kw, P]); %p = P.
  // Builds the forall over blocks of P output channels and vectorizes the filter
  // pack, the output init and the unpack inside it. Returns the conv tile.
  transform.named_sequence @cuvil_conv_distribute(%g: !transform.any_op {transform.consumed},
      %p: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %f = transform.get_parent_op %g {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization   // pack(fill) -> fill of the packed tensor
    } : !transform.any_op
    %u = transform.get_consumers_of_result %g[0] : (!transform.any_op) -> !transform.any_op
    %init = transform.get_producer_of_operand %g[2] : (!transform.any_op) -> !transform.any_op
    %wp = transform.get_producer_of_operand %g[1] : (!transform.any_op) -> !transform.any_op
    %ut, %fa = transform.structured.tile_using_forall %u tile_sizes [1, %p, 0, 0]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %g2, %fa2 = transform.structured.fuse_into_containing_op %g into %fa
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %wp2, %fa3 = transform.structured.fuse_into_containing_op %wp into %fa2
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    // Output init: a zero fill (fused, vectorized row by row) or, for a conv with
    // bias, a linalg.pack of the broadcast bias (fused, its transpose vectorized).
    %is_fill = transform.structured.match ops{["linalg.fill"]} in %init : (!transform.any_op) -> !transform.any_op
    %is_pack = transform.structured.match ops{["linalg.pack"]} in %init : (!transform.any_op) -> !transform.any_op
    transform.foreach %is_fill : !transform.any_op {
    ^bb0(%fl: !transform.any_op):
      %fl2, %fa4 = transform.structured.fuse_into_containing_op %fl into %fa3
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %flt, %fll:2 = transform.structured.tile_using_for %fl2 tile_sizes [0, 1, 1, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %flt : !transform.any_op
    }
    transform.foreach %is_pack : !transform.any_op {
    ^bb0(%ip: !transform.any_op):
      %ip2, %fa4 = transform.structured.fuse_into_containing_op %ip into %fa3
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %ipc = transform.cast %ip2 : !transform.any_op to !transform.op<"linalg.pack">
      %ia, %ib, %itr = transform.structured.lower_pack %ipc : (!transform.op<"linalg.pack">)
        -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
      %itt, %itl:2 = transform.structured.tile_using_for %itr tile_sizes [0, 0, 1, 16, 0]
        : (!transform.op<"linalg.transpose">) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %itt vector_sizes [1, 1, 1, 16, %p] : !transform.any_op, !transform.param<i64>
    }
    // Per-iteration temporaries instead of slices of whole-tensor buffers.
    transform.apply_patterns to %fa3 {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    // Filter pack -> transpose [F/P, P, C, KH, KW] -> [F/P, C, KH, KW, P], as
    // [16 x KH x KW] -> [KH x KW x 16] vector transposes.
    %wpc = transform.cast %wp2 : !transform.any_op to !transform.op<"linalg.pack">
    %pa, %pb, %ptr = transform.structured.lower_pack %wpc : (!transform.op<"linalg.pack">)
      -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %ptt, %ptl:3 = transform.structured.tile_using_for %ptr tile_sizes [1, 1, 0, 0, 16]
      : (!transform.op<"linalg.transpose">) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %ptt : !transform.any_op
    // Unpack: [P output channels x 16 output columns] tiles, ow peeled.
    %utt, %utl:3 = transform.structured.tile_using_for %ut tile_sizes [0, %p, 1, 16]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.sequence %utl#2 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.apply_patterns to %fa3 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %utiles = transform.structured.match ops{["linalg.unpack"]} in %fa3 : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %utiles vector_sizes [1, 1, 1, 16, %p] : !transform.any_op, !transform.param<i64>
    transform.yield %g2 : !transform.any_op
  }

  // ------------------------------------------------------------ register tiles

  // Mode A (stride 1): [oh 1, ow 24, c 4, kh 1, kw 1], f = the packed 16; ow peeled.
  transform.named_sequence @cuvil_conv_regtile_s1(%g: !transform.any_op {transform.consumed}) {
    %t, %l:5 = transform.structured.tile_using_for %g tile_sizes [0, 0, 1, 24, 4, 1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op)
    transform.sequence %l#1 : !transform.any_op failures(suppress) {
    ^bb0(%x: !transform.any_op):
      %lc = transform.cast %x : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }

  // Mode B (strided, KW > 1): [oh 1, ow 7, kh 1, kw all], then ow (and oh) by 1,
  // unrolled: 7 tiles of acc[32] += I[kw] * W'[kw][32].
  transform.named_sequence @cuvil_conv_regtile_kw(%g: !transform.any_op {transform.consumed}) {
    %t1, %l:4 = transform.structured.tile_using_for %g tile_sizes [0, 0, 1, 7, 1, 1, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    %t2, %lh, %lw = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 1, 1, 0, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">, !transform.op<"scf.for">)
    transform.loop.unroll %lw {factor = 7} : !transform.op<"scf.for">
    transform.loop.unroll %lh {factor = 1} : !transform.op<"scf.for">
    transform.yield
  }

  // Mode C (fallback, e.g. 1x1 stride 2): [oh 1, ow 7, c 8, kh 1, kw 1], ow unrolled.
  transform.named_sequence @cuvil_conv_regtile_c(%g: !transform.any_op {transform.consumed}) {
    %t1, %l:5 = transform.structured.tile_using_for %g tile_sizes [0, 0, 1, 7, 8, 1, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %lw = transform.structured.tile_using_for %t1 tile_sizes [0, 0, 0, 1, 0, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.op<"scf.for">)
    transform.loop.unroll %lw {factor = 7} : !transform.op<"scf.for">
    transform.yield
  }

  // Folds the unit dims of the register tiles (turning them into contractions with
  // projected-permutation maps) and vectorizes those with static shapes.
  transform.named_sequence @cuvil_conv_fold_vectorize(%fa: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %fa {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %gs = transform.structured.match ops{["linalg.generic"]} in %fa : (!transform.any_op) -> !transform.any_op
    transform.foreach %gs : !transform.any_op {
    ^bb0(%g: !transform.any_op):
      transform.sequence %g : !transform.any_op failures(suppress) {
      ^bb1(%g1: !transform.any_op):
        transform.structured.vectorize %g1 : !transform.any_op
      }
    }
    transform.yield
  }
  // ... then the dynamic remainders, masked ([ow, c, f] resp. [c, f] after folding).
  transform.named_sequence @cuvil_conv_finish_s1(%fa: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_conv_fold_vectorize failures(propagate) (%fa) : (!transform.any_op) -> ()
    %gs = transform.structured.match ops{["linalg.generic"]} in %fa : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %gs vector_sizes [24, 4, 16] : !transform.any_op
    transform.yield
  }
  transform.named_sequence @cuvil_conv_finish_c(%fa: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_conv_fold_vectorize failures(propagate) (%fa) : (!transform.any_op) -> ()
    %gs = transform.structured.match ops{["linalg.generic"]} in %fa : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %gs vector_sizes [8, 32] : !transform.any_op
    transform.yield
  }

  // ------------------------------------------------------ pads, fills, copies

  // One linalg.fill / linalg.copy (tensor or memref) of rank 2-4, one row per
  // (masked) vector transfer: rows distributed with scf.forall (top level) or
  // scf.for (inside another parallel loop: nested async tasks would block the
  // runtime's thread pool).
  transform.named_sequence @cuvil_conv_rows_par(%op: !transform.any_op {transform.readonly}) {
    %x2 = transform.collect_matching @cuvil_conv_match_rank2 in %op : (!transform.any_op) -> !transform.any_op
    %x3 = transform.collect_matching @cuvil_conv_match_rank3 in %op : (!transform.any_op) -> !transform.any_op
    %x4 = transform.collect_matching @cuvil_conv_match_rank4 in %op : (!transform.any_op) -> !transform.any_op
    transform.foreach %x2 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %fa = transform.structured.tile_using_forall %x tile_sizes [1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.foreach %x3 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %fa = transform.structured.tile_using_forall %x tile_sizes [1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.foreach %x4 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %fa = transform.structured.tile_using_forall %x tile_sizes [1, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.yield
  }
  transform.named_sequence @cuvil_conv_rows_seq(%op: !transform.any_op {transform.readonly}) {
    %x2 = transform.collect_matching @cuvil_conv_match_rank2 in %op : (!transform.any_op) -> !transform.any_op
    %x3 = transform.collect_matching @cuvil_conv_match_rank3 in %op : (!transform.any_op) -> !transform.any_op
    %x4 = transform.collect_matching @cuvil_conv_match_rank4 in %op : (!transform.any_op) -> !transform.any_op
    transform.foreach %x2 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %l = transform.structured.tile_using_for %x tile_sizes [1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.foreach %x3 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %l:2 = transform.structured.tile_using_for %x tile_sizes [1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.foreach %x4 : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      %t, %l:3 = transform.structured.tile_using_for %x tile_sizes [1, 1, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %t : !transform.any_op
    }
    transform.yield
  }

  // A tensor.pad directly in a func.func (not inside a loop).
  transform.named_sequence @cuvil_conv_match_top_pad(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["tensor.pad"] : !transform.any_op
    %parent = transform.get_parent_op %op {nth_parent = 1} : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["func.func"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // tensor.pad -> its own buffer (memref.alloc + linalg.fill + linalg.copy of the
  // interior into a subview, bufferization.to_tensor for the users); the fill
  // and the copy are vectorized row by row.
  transform.named_sequence @cuvil_conv_pad_par(%pad: !transform.any_op {transform.consumed}) {
    %buf, %new = transform.structured.bufferize_to_allocation %pad {memcpy_op = "linalg.copy"} : !transform.any_op
    %alloc = transform.get_defining_op %buf : (!transform.any_value) -> !transform.any_op
    %users = transform.get_consumers_of_result %alloc[0] : (!transform.any_op) -> !transform.any_op
    transform.foreach %users : !transform.any_op {
    ^bb0(%u: !transform.any_op):
      %fill = transform.structured.match ops{["linalg.fill"]} in %u : (!transform.any_op) -> !transform.any_op
      %view = transform.structured.match ops{["memref.subview"]} in %u : (!transform.any_op) -> !transform.any_op
      transform.foreach %fill : !transform.any_op {
      ^bb1(%x: !transform.any_op):
        transform.include @cuvil_conv_rows_par failures(propagate) (%x) : (!transform.any_op) -> ()
      }
      transform.foreach %view : !transform.any_op {
      ^bb1(%v: !transform.any_op):
        %copy = transform.get_consumers_of_result %v[0] : (!transform.any_op) -> !transform.any_op
        %c = transform.structured.match ops{["linalg.copy"]} in %copy : (!transform.any_op) -> !transform.any_op
        transform.foreach %c : !transform.any_op {
        ^bb2(%x: !transform.any_op):
          transform.include @cuvil_conv_rows_par failures(propagate) (%x) : (!transform.any_op) -> ()
        }
      }
    }
    transform.yield
  }

  transform.named_sequence @cuvil_conv_pad_seq(%pad: !transform.any_op {transform.consumed}) {
    %buf, %new = transform.structured.bufferize_to_allocation %pad {memcpy_op = "linalg.copy"} : !transform.any_op
    %alloc = transform.get_defining_op %buf : (!transform.any_value) -> !transform.any_op
    %users = transform.get_consumers_of_result %alloc[0] : (!transform.any_op) -> !transform.any_op
    transform.foreach %users : !transform.any_op {
    ^bb0(%u: !transform.any_op):
      %fill = transform.structured.match ops{["linalg.fill"]} in %u : (!transform.any_op) -> !transform.any_op
      %view = transform.structured.match ops{["memref.subview"]} in %u : (!transform.any_op) -> !transform.any_op
      transform.foreach %fill : !transform.any_op {
      ^bb1(%x: !transform.any_op):
        transform.include @cuvil_conv_rows_seq failures(propagate) (%x) : (!transform.any_op) -> ()
      }
      transform.foreach %view : !transform.any_op {
      ^bb1(%v: !transform.any_op):
        %copy = transform.get_consumers_of_result %v[0] : (!transform.any_op) -> !transform.any_op
        %c = transform.structured.match ops{["linalg.copy"]} in %copy : (!transform.any_op) -> !transform.any_op
        transform.foreach %c : !transform.any_op {
        ^bb2(%x: !transform.any_op):
          transform.include @cuvil_conv_rows_seq failures(propagate) (%x) : (!transform.any_op) -> ()
        }
      }
    }
    transform.yield
  }

  // ------------------------------------------------------------------ pooling

  // forall over blocks of 8 output rows; [16 c, 1 oh, 8 ow, 1 kh] tiles, c and ow
  // peeled (static remainders after canonicalization).
  transform.named_sequence @cuvil_conv_pool_tile(%p: !transform.any_op {transform.consumed}) {
    %init = transform.get_producer_of_operand %p[2] : (!transform.any_op) -> !transform.any_op
    %t0, %fa = transform.structured.tile_using_forall %p tile_sizes [0, 0, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    // the -inf / 0 init: fused into the forall and vectorized there
    %is_fill = transform.structured.match ops{["linalg.fill"]} in %init : (!transform.any_op) -> !transform.any_op
    transform.foreach %is_fill : !transform.any_op {
    ^bb0(%fl: !transform.any_op):
      %fl2, %fa2 = transform.structured.fuse_into_containing_op %fl into %fa
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %flt, %fll:2 = transform.structured.tile_using_for %fl2 tile_sizes [0, 1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %flt : !transform.any_op
    }
    %t, %l:4 = transform.structured.tile_using_for %t0 tile_sizes [0, 16, 1, 8, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.sequence %l#2 : !transform.any_op failures(suppress) {
    ^bb0(%x: !transform.any_op):
      %lc = transform.cast %x : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.sequence %l#0 : !transform.any_op failures(suppress) {
    ^bb0(%x: !transform.any_op):
      %lc = transform.cast %x : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
  // NHWC pools (a conv's channels-last result, cuvil-propagate-channels-last):
  // the same forall; [1 oh, 4 ow, 64 c, 1 kh] tiles, lanes along the
  // contiguous channels (one zmm of i8, four of f32), ow and c peeled.
  transform.named_sequence @cuvil_conv_pool_tile_nhwc(%p: !transform.any_op {transform.consumed}) {
    %init = transform.get_producer_of_operand %p[2] : (!transform.any_op) -> !transform.any_op
    %t0, %fa = transform.structured.tile_using_forall %p tile_sizes [0, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %is_fill = transform.structured.match ops{["linalg.fill"]} in %init : (!transform.any_op) -> !transform.any_op
    transform.foreach %is_fill : !transform.any_op {
    ^bb0(%fl: !transform.any_op):
      %fl2, %fa2 = transform.structured.fuse_into_containing_op %fl into %fa
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %flt, %fll:2 = transform.structured.tile_using_for %fl2 tile_sizes [0, 1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.structured.vectorize %flt : !transform.any_op
    }
    %t, %l:4 = transform.structured.tile_using_for %t0 tile_sizes [0, 1, 4, 64, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.sequence %l#2 : !transform.any_op failures(suppress) {
    ^bb0(%x: !transform.any_op):
      %lc = transform.cast %x : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.sequence %l#1 : !transform.any_op failures(suppress) {
    ^bb0(%x: !transform.any_op):
      %lc = transform.cast %x : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
  // After canonicalization (static remainders): decompose to 1-D NCW / NWC pooling and
  // vectorize; a tile that does not vectorize stays scalar (still correct).
  transform.named_sequence @cuvil_conv_pool_vectorize(%root: !transform.any_op {transform.readonly}) {
    %fs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fs {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %ps = transform.structured.match ops{["linalg.pooling_nchw_max", "linalg.pooling_nchw_sum",
                                          "linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ps : !transform.any_op {
    ^bb0(%x: !transform.any_op):
      transform.sequence %x : !transform.any_op failures(suppress) {
      ^bb1(%y: !transform.any_op):
        %d = transform.structured.decompose %y : (!transform.any_op) -> !transform.any_op
        transform.structured.vectorize %d : !transform.any_op
      }
    }
    transform.yield
  }

  // ----------------------------------------------------------- vector lowering

  // Function-level cleanup, accumulator hoisting and contraction -> FMA lowering
  // (the same recipe as matmul_cpu.mlir's @cuvil_vector_lowering, plus folding of
  // tensor slices into transfers once the accumulators are hoisted).
  transform.named_sequence @cuvil_conv_vector_lowering(%f: !transform.any_op {transform.consumed}) {
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.reduction_to_contract
      // bf16 / f16 operands (precision=, bf16 models): sink_ops moves the
      // vectorizer's arith.extf in front of the broadcasts of each read, so
      // they fold into the contraction and it is lowered like the f32 one
      // (as in matmul_cpu.mlir); f32 kernels have no extf here: unchanged.
      transform.apply_patterns.vector.sink_ops
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
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

  // --------------------------------------------------------------------- entry

  transform.named_sequence @cuvil_conv_cpu(%root: !transform.any_op {transform.readonly}) {
    %p16 = transform.param.constant 16 : i64 -> !transform.param<i64>
    %p32 = transform.param.constant 32 : i64 -> !transform.param<i64>
    // 1. stride-1 convolutions (mode A)
    %s1 = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]}
      attributes {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %s1 : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %g = transform.include @cuvil_conv_pack16 failures(propagate) (%c) : (!transform.any_op) -> !transform.any_op
      %t = transform.include @cuvil_conv_distribute failures(propagate) (%g, %p16)
        : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
      %fa = transform.get_parent_op %t {op_name = "scf.forall"} : (!transform.any_op) -> !transform.any_op
      transform.include @cuvil_conv_regtile_s1 failures(propagate) (%t) : (!transform.any_op) -> ()
      transform.include @cuvil_conv_finish_s1 failures(propagate) (%fa) : (!transform.any_op) -> ()
    }
    // 2. the remaining convolutions with KW > 1 (mode B)
    %kw = transform.collect_matching @cuvil_conv_match_kw_gt1 in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %kw : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %g = transform.include @cuvil_conv_pack32 failures(propagate) (%c) : (!transform.any_op) -> !transform.any_op
      %t = transform.include @cuvil_conv_distribute failures(propagate) (%g, %p32)
        : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
      %fa = transform.get_parent_op %t {op_name = "scf.forall"} : (!transform.any_op) -> !transform.any_op
      transform.include @cuvil_conv_regtile_kw failures(propagate) (%t) : (!transform.any_op) -> ()
      transform.include @cuvil_conv_fold_vectorize failures(propagate) (%fa) : (!transform.any_op) -> ()
    }
    // 3. all other convolutions (mode C)
    %rest = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %rest : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %g = transform.include @cuvil_conv_pack32 failures(propagate) (%c) : (!transform.any_op) -> !transform.any_op
      %t = transform.include @cuvil_conv_distribute failures(propagate) (%g, %p32)
        : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
      %fa = transform.get_parent_op %t {op_name = "scf.forall"} : (!transform.any_op) -> !transform.any_op
      transform.include @cuvil_conv_regtile_c failures(propagate) (%t) : (!transform.any_op) -> ()
      transform.include @cuvil_conv_finish_c failures(propagate) (%fa) : (!transform.any_op) -> ()
    }
    // 4. pads (in front of convs and pools): own buffer, vectorized fill + copy;
    //    pads inside loops (the filter pack of odd channel counts) with scf.for.
    %top_pads = transform.collect_matching @cuvil_conv_match_top_pad in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %top_pads : !transform.any_op {
    ^bb0(%pd: !transform.any_op):
      transform.include @cuvil_conv_pad_par failures(propagate) (%pd) : (!transform.any_op) -> ()
    }
    %pads = transform.structured.match ops{["tensor.pad"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %pads : !transform.any_op {
    ^bb0(%pd: !transform.any_op):
      transform.include @cuvil_conv_pad_seq failures(propagate) (%pd) : (!transform.any_op) -> ()
    }
    // 5. pooling
    %pools = transform.collect_matching @cuvil_conv_match_pool in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %pools : !transform.any_op {
    ^bb0(%pl: !transform.any_op):
      transform.include @cuvil_conv_pool_tile failures(propagate) (%pl) : (!transform.any_op) -> ()
    }
    %nhwc_pools = transform.collect_matching @cuvil_conv_match_pool_nhwc in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %nhwc_pools : !transform.any_op {
    ^bb0(%pl: !transform.any_op):
      transform.include @cuvil_conv_pool_tile_nhwc failures(propagate) (%pl) : (!transform.any_op) -> ()
    }
    transform.include @cuvil_conv_pool_vectorize failures(propagate) (%root) : (!transform.any_op) -> ()
    // 6. safety net: linalg.pack/unpack do not bufferize; lower any left over.
    %lp = transform.structured.match ops{["linalg.pack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.pack">
    transform.foreach %lp : !transform.op<"linalg.pack"> {
    ^bb0(%x: !transform.op<"linalg.pack">):
      %a, %b, %c = transform.structured.lower_pack %x : (!transform.op<"linalg.pack">)
        -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    }
    %lu = transform.structured.match ops{["linalg.unpack"]} in %root : (!transform.any_op) -> !transform.op<"linalg.unpack">
    transform.foreach %lu : !transform.op<"linalg.unpack"> {
    ^bb0(%x: !transform.op<"linalg.unpack">):
      %a, %b, %c, %d = transform.structured.lower_unpack %x : (!transform.op<"linalg.unpack">)
        -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">,
            !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
    }
    // 7. vector lowering
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      transform.include @cuvil_conv_vector_lowering failures(propagate) (%fn) : (!transform.any_op) -> ()
    }
    transform.yield
  }
}
