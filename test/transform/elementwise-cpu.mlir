// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter --verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %S/Inputs/softmax_13x100.mlir --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_elementwise | FileCheck %s --check-prefix=ENTRY
// RUN: cuvil-opt %S/Inputs/softmax_chain_13x100.mlir --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_elementwise | FileCheck %s --check-prefix=CHAIN
// RUN: cuvil-opt %S/Inputs/softmax_chain_3x4x16x16.mlir --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_elementwise | FileCheck %s --check-prefix=SHORT

// transform_scripts/elementwise_cpu.mlir, sequence by sequence. Every split
// has its own @__transform_main, which includes the library's sequences (the
// preloaded library is merged into its module): first the whole schedule,
// then each matcher (remarks name what it accepts; ops without one are
// rejected), then each action, then errors.

// The same softmax as a row chain: one loop over tiles of 8 rows, each
// computing its rows' maxima, exps, sums and quotients (the exps in a
// tile-sized buffer); no second pass over the rows.
// CHAIN-LABEL: func.func @softmax_chain
// CHAIN:         scf.for {{.*}} to %c13 step %c8
// CHAIN:           tensor.empty(%{{.*}}) : tensor<?x16xf32>
// CHAIN:           scf.for {{.*}} to %c96 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// CHAIN:           vector.reduction <maximumf>
// CHAIN:           tensor.empty(%{{.*}}) : tensor<?x100xf32>
// CHAIN:             math.exp {{.*}} : vector<64xf32>
// CHAIN:           vector.reduction <add>
// CHAIN:             arith.divf {{.*}} : vector<64xf32>
// CHAIN:           scf.yield
// CHAIN-NOT:     scf.for
// CHAIN-NOT:     linalg.
// CHAIN:         return

// Rows of 16 (a 4-head attention over 16 tokens): the exp of 8 rows is one
// vector<8x16xf32> (the ops fit the reductions' vector sizes untiled).
// SHORT-LABEL: func.func @softmax_chain_short_rows
// SHORT:         scf.for {{.*}} to %c16 step %c8
// SHORT:           vector.reduction <maximumf>
// SHORT:           math.exp {{.*}} : vector<8x16xf32>
// SHORT:           vector.reduction <add>
// SHORT-NOT:     linalg.
// SHORT:         return

// cuvil-opt with the script's entry point and default parameters.
// ENTRY-LABEL: func.func @softmax
// ENTRY:         scf.for {{.*}} to %c13 step %c8
// ENTRY:           scf.for {{.*}} to %c96 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// ENTRY:           vector.reduction <maximumf>
// ENTRY:         scf.for {{.*}} to %c13 step %c8
// ENTRY:           scf.for
// ENTRY:             math.exp {{.*}} : vector<64xf32>
// ENTRY:             math.exp {{.*}} : vector<64xf32>
// ENTRY:           vector.reduction <add>
// ENTRY:             arith.divf {{.*}} : vector<64xf32>
// ENTRY-NOT:     linalg.generic
// ENTRY:         return

// ============================================================ @cuvil_elementwise
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_elementwise(%root: !transform.any_op {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_elementwise failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }
}

// Elementwise with a broadcast operand, odd sizes: one row at a time in 64-wide
// vectors, the partial last chunk peeled (masked). Small ops get scf.for loops
// (an scf.forall costs more than their work once it becomes async tasks).
// CHECK-LABEL: func.func @add_bias
// CHECK-NOT:     scf.forall
// CHECK:         scf.for {{.*}} to %c20 step %c8
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} to %c128 step %c64
// CHECK:               vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x64xf32>, vector<64xf32>
// CHECK:               arith.addf {{.*}} : vector<64xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<64xf32>, tensor<1x64xf32>
// CHECK:             vector.{{create|constant}}_mask
// CHECK:             vector.transfer_read {{.*}} : tensor<1x1xf32>, vector<64xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @add_bias(%x: tensor<20x129xf32>, %b: tensor<129xf32>) -> tensor<20x129xf32> {
  %e = tensor.empty() : tensor<20x129xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<20x129xf32>, tensor<129xf32>) outs(%e : tensor<20x129xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<20x129xf32>
  return %r : tensor<20x129xf32>
}

// A quantizing op (int8 epilogue): the per-channel scale is read and scaled
// once, before the row-tile loop, not once per row.
// CHECK-LABEL: func.func @requantize_rows
// CHECK:         %[[S:.*]] = vector.transfer_read %{{.*}} : tensor<64xf32>, vector<64xf32>
// CHECK:         %[[SC:.*]] = arith.mulf %[[S]], %{{.*}} : vector<64xf32>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             arith.sitofp
// CHECK:             arith.mulf %{{.*}}, %[[SC]] : vector<64xf32>
// CHECK:             math.roundeven
func.func @requantize_rows(%x: tensor<16x64xi32>, %s: tensor<64xf32>) -> tensor<16x64xi8> {
  %e = tensor.empty() : tensor<16x64xi8>
  %half = arith.constant 0.5 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<16x64xi32>, tensor<64xf32>) outs(%e : tensor<16x64xi8>) {
  ^bb0(%a: i32, %c: f32, %o: i8):
    %sc = arith.mulf %c, %half : f32
    %f = arith.sitofp %a : i32 to f32
    %y = arith.mulf %f, %sc : f32
    %rd = math.roundeven %y : f32
    %q = arith.fptosi %rd : f32 to i8
    linalg.yield %q : i8
  } -> tensor<16x64xi8>
  return %r : tensor<16x64xi8>
}

// A big elementwise op (rank 2, >= 64 rows of >= 3072): an scf.forall over
// 8-row blocks (async tasks with more than one thread).
// CHECK-LABEL: func.func @gelu_like
// CHECK:         scf.forall ({{.*}}) in (8)
// CHECK:           scf.for {{.*}} to %c3072 step %c64
// CHECK:             math.erf {{.*}} : vector<64xf32>
// CHECK:           vector.{{create|constant}}_mask
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @gelu_like(%x: tensor<64x3100xf32>) -> tensor<64x3100xf32> {
  %e = tensor.empty() : tensor<64x3100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x3100xf32>) outs(%e : tensor<64x3100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.erf %a : f32
    linalg.yield %s : f32
  } -> tensor<64x3100xf32>
  return %r : tensor<64x3100xf32>
}

// Row reduction (softmax's max) over 100: 8-row blocks (the -inf fill is fused
// only into an scf.forall), an 8x16 partial accumulator carried by the
// reduction loop (not stored), the 4-wide remainder peeled, then horizontal
// reductions.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for {{.*}} to %c13 step %c8
// CHECK:           scf.for {{.*}} to %c96 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// CHECK-NOT:         vector.transfer_write
// CHECK:             arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK:             scf.yield
// CHECK:           arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @row_max(%x: tensor<13x100xf32>) -> tensor<13xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<13xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<13xf32>) -> tensor<13xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<13x100xf32>) outs(%f : tensor<13xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<13xf32>
  return %r : tensor<13xf32>
}

// Attention-sized rank-3 row sum (4 heads x 128 rows x 130): an scf.forall over
// (head, 8-row block).
// CHECK-LABEL: func.func @head_row_sum
// CHECK:         scf.forall ({{.*}}) in (4, 16)
// CHECK:           scf.for {{.*}} to %c128 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// CHECK:           vector.reduction <add>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @head_row_sum(%x: tensor<4x128x130xf32>) -> tensor<4x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128xf32>) -> tensor<4x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x128x130xf32>) outs(%f : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// Attention's k^T: a rank-4 transpose of the two innermost dims becomes 16x16
// shuffle transposes.
// CHECK-LABEL: func.func @transpose_heads
// CHECK:         scf.for {{.*}} to %c2 step %c1
// CHECK:           scf.for
// CHECK:             vector.transfer_read {{.*}} : tensor<1x16x1x16xf32>, vector<16x1x16xf32>
// CHECK-COUNT-64:    vector.shuffle
// CHECK-NOT:     linalg.transpose
// CHECK:         return
func.func @transpose_heads(%x: tensor<1x32x2x16xf32>) -> tensor<1x2x16x32xf32> {
  %e = tensor.empty() : tensor<1x2x16x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x32x2x16xf32>) outs(%e : tensor<1x2x16x32xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x2x16x32xf32>
}

// Ops on i1 tensors are not vectorized (cuvil-widen-bool-memrefs rewrites
// scalar loads and stores only) but their rows are still tiled (an scf.forall
// when big); contractions are left to the other scripts.
// CHECK-LABEL: func.func @skipped
// CHECK:         scf.for {{.*}} to %c24 step %c8
// CHECK:           linalg.generic {{.*}} outs({{.*}} : tensor<8x64xi1>)
// CHECK-NOT:       vector.
// CHECK:         linalg.matmul
// CHECK:         return
func.func @skipped(%x: tensor<24x64xf32>, %y: tensor<64x64xf32>) -> (tensor<24x64xi1>, tensor<24x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x64xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<24x64xf32>) outs(%e : tensor<24x64xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %c : i1
  } -> tensor<24x64xi1>
  %e2 = tensor.empty() : tensor<24x64xf32>
  %mm = linalg.matmul ins(%x, %y : tensor<24x64xf32>, tensor<64x64xf32>) outs(%e2 : tensor<24x64xf32>) -> tensor<24x64xf32>
  return %r, %mm : tensor<24x64xi1>, tensor<24x64xf32>
}

// A reduction without a single combiner op (max_pool1d's indices: a select
// on a compare of another value) cannot be split: left to the scalar path
// (it used to fail the split and crash the interpreter).
// CHECK-LABEL: func.func @argmax_like_reduction
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-NOT:     vector.
// CHECK:         return
func.func @argmax_like_reduction(%x: tensor<16x40xf32>, %best: tensor<16xf32>, %init: tensor<16xi64>) -> tensor<16xi64> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %best : tensor<16x40xf32>, tensor<16xf32>) outs(%init : tensor<16xi64>) {
  ^bb0(%a: f32, %m: f32, %o: i64):
    %j = linalg.index 1 : index
    %eq = arith.cmpf oeq, %a, %m : f32
    %ji = arith.index_cast %j : index to i64
    %s = arith.select %eq, %ji, %o : i64
    linalg.yield %s : i64
  } -> tensor<16xi64>
  return %r : tensor<16xi64>
}

// Rank 1: 4096-element blocks (an scf.forall from 131072 elements), 64-wide chunks.
// CHECK-LABEL: func.func @rank1_big
// CHECK:         scf.forall ({{.*}}) in (32)
// CHECK:           scf.for {{.*}} to %c4096 step %c64
// CHECK:             arith.mulf {{.*}} : vector<64xf32>
// CHECK-NOT:     linalg.generic
func.func @rank1_big(%x: tensor<131072xf32>) -> tensor<131072xf32> {
  %e = tensor.empty() : tensor<131072xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<131072xf32>) outs(%e : tensor<131072xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<131072xf32>
  return %r : tensor<131072xf32>
}

// Rank 5 (a Winograd transform's shape): rows of the second-innermost dim.
// CHECK-LABEL: func.func @rank5_winograd
// CHECK:         scf.forall ({{.*}}) in (6, 6, 4)
// CHECK:           scf.for {{.*}} to %c4 step %c1
// CHECK:             vector.transfer_write {{.*}} : vector<64xf32>, tensor<1x1x1x1x64xf32>
// CHECK-NOT:     linalg.fill
func.func @rank5_winograd() -> tensor<6x6x4x4x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x6x4x4x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<6x6x4x4x64xf32>) -> tensor<6x6x4x4x64xf32>
  return %f : tensor<6x6x4x4x64xf32>
}

// Conv shapes: Winograd's transforms (loops with the coefficient dim second
// innermost) of a 28x28 image (7 tile rows; rank 4) and F(2x2)'s first output
// pass (m = 2; rank 5), and the NCHW -> NHWC transpose of a 3-channel image
// get an scf.forall; a transform of 3 tile rows stays serial.
// CHECK-LABEL: func.func @winograd_rows
// CHECK:         scf.forall ({{.*}}) in (7, 30)
// CHECK:         scf.forall ({{.*}}) in (4, 7, 7)
// CHECK-NOT:     scf.forall (
// CHECK:         return
func.func @winograd_rows(%x: tensor<7x30x128xf32>, %c: tensor<6xf32>, %s: tensor<4x7x7x256xf32>, %c2: tensor<2xf32>,
                         %y: tensor<3x16x64xf32>) -> (tensor<6x7x30x128xf32>, tensor<2x4x7x7x256xf32>, tensor<6x3x16x64xf32>) {
  %e = tensor.empty() : tensor<6x7x30x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(th, w, a, c) -> (th, w, c)>, affine_map<(th, w, a, c) -> (a)>,
                                        affine_map<(th, w, a, c) -> (a, th, w, c)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<7x30x128xf32>, tensor<6xf32>) outs(%e : tensor<6x7x30x128xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  } -> tensor<6x7x30x128xf32>
  %e2 = tensor.empty() : tensor<2x4x7x7x256xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(b, th, tw, p, f) -> (b, th, tw, f)>, affine_map<(b, th, tw, p, f) -> (p)>,
                                         affine_map<(b, th, tw, p, f) -> (p, b, th, tw, f)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %c2 : tensor<4x7x7x256xf32>, tensor<2xf32>) outs(%e2 : tensor<2x4x7x7x256xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  } -> tensor<2x4x7x7x256xf32>
  %e3 = tensor.empty() : tensor<6x3x16x64xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(th, w, a, c) -> (th, w, c)>, affine_map<(th, w, a, c) -> (a)>,
                                         affine_map<(th, w, a, c) -> (a, th, w, c)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %c : tensor<3x16x64xf32>, tensor<6xf32>) outs(%e3 : tensor<6x3x16x64xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  } -> tensor<6x3x16x64xf32>
  return %r, %r2, %r3 : tensor<6x7x30x128xf32>, tensor<2x4x7x7x256xf32>, tensor<6x3x16x64xf32>
}

// CHECK-LABEL: func.func @image_to_channels_last
// CHECK:         scf.forall
// CHECK-SAME:      in (230, 4)
func.func @image_to_channels_last(%x: tensor<1x3x230x230xf32>) -> tensor<1x230x230x3xf32> {
  %e = tensor.empty() : tensor<1x230x230x3xf32>
  %t = linalg.transpose ins(%x : tensor<1x3x230x230xf32>) outs(%e : tensor<1x230x230x3xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x230x230x3xf32>
}

// A matmul's per-call VNNI pair pack (16-bit, the pair dim moved innermost,
// the rows next to it) is left to cuvil-vnni-interleave; another 16-bit
// transpose is scheduled.
// CHECK-LABEL: func.func @vnni_pair_pack_skipped
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<512x2x16x64xbf16>) {{.*}} permutation = [2, 0, 3, 1]
// CHECK-NOT:     linalg.transpose
// CHECK:         return
func.func @vnni_pair_pack_skipped(%x: tensor<512x2x16x64xbf16>, %y: tensor<4x8x16x64xbf16>)
    -> (tensor<16x512x64x2xbf16>, tensor<4x16x8x64xbf16>) {
  %e = tensor.empty() : tensor<16x512x64x2xbf16>
  %p = linalg.transpose ins(%x : tensor<512x2x16x64xbf16>) outs(%e : tensor<16x512x64x2xbf16>) permutation = [2, 0, 3, 1]
  %e2 = tensor.empty() : tensor<4x16x8x64xbf16>
  %t = linalg.transpose ins(%y : tensor<4x8x16x64xbf16>) outs(%e2 : tensor<4x16x8x64xbf16>) permutation = [0, 2, 1, 3]
  return %p, %t : tensor<16x512x64x2xbf16>, tensor<4x16x8x64xbf16>
}

// Ops an earlier script already tiled (inside loops) are left alone.
// CHECK-LABEL: func.func @already_tiled
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK-NOT:       vector.
// CHECK:         return
func.func @already_tiled(%x: tensor<24x64xf32>) -> tensor<24x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %x) -> tensor<24x64xf32> {
    %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%acc : tensor<24x64xf32>) outs(%acc : tensor<24x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = math.exp %a : f32
      linalg.yield %s : f32
    } -> tensor<24x64xf32>
    scf.yield %h : tensor<24x64xf32>
  }
  return %r : tensor<24x64xf32>
}

// -----

// ==================================================== @cuvil_elementwise_schedule
// Other parameters: EW_ROWS = 4, EW_VEC = 32, RED_ROWS = 2, PAR_MIN_COLS = 100
// (so 64 x 129 is big, for the row reduction too).
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_elementwise_schedule(%root: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ew_rows = transform.param.constant 4 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 32 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 2 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 100 : i64 -> !transform.param<i64>
    transform.include @cuvil_elementwise_schedule failures(propagate) (%root, %ew_rows, %ew_vec, %red_rows, %min_cols)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }
}

// CHECK-LABEL: func.func @params
// CHECK:         scf.forall ({{.*}}) in (16)
// CHECK:           scf.for {{.*}} to %c128 step %c32
// CHECK:             arith.addf {{.*}} : vector<32xf32>
// CHECK:         scf.forall ({{.*}}) in (32)
// CHECK:           scf.for {{.*}} to %c128 step %c16 iter_args({{.*}}) -> ({{.*}}vector<2x16xf32>)
func.func @params(%x: tensor<64x129xf32>) -> (tensor<64x129xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64x129xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x129xf32>) outs(%e : tensor<64x129xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<64x129xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x129xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %r, %s : tensor<64x129xf32>, tensor<64xf32>
}

// -----

// ======================================== @cuvil_ew_big, @cuvil_ew_big_or_conv
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_big(%op: !transform.any_op {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
  transform.named_sequence private @cuvil_ew_big_or_conv(%op: !transform.any_op {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
  transform.named_sequence @say_big(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "big" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @say_conv(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "conv-shaped" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @yield_op(%op: !transform.any_op {transform.readonly},
      %min_cols: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_big(%op: !transform.any_op {transform.readonly},
      %min_cols: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    transform.include @cuvil_ew_big failures(propagate) (%op, %min_cols) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_conv(%op: !transform.any_op {transform.readonly},
      %min_cols: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    transform.include @cuvil_ew_big_or_conv failures(propagate) (%op, %min_cols) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %min_cols
        @match_big -> @say_big, @match_conv -> @say_conv
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @big(%a: tensor<131072xf32>, %b: tensor<131071xf32>, %c: tensor<64x3072xf32>, %d: tensor<63x3072xf32>,
               %e: tensor<64x3071xf32>, %f: tensor<4x128x128xf32>, %g: tensor<4x127x128xf32>,
               %h: tensor<16x16x16xf32>, %i: tensor<15x16x16xf32>, %j: tensor<1x4x128x128xf32>,
               %k: tensor<1x8x16x64xf32>, %l: tensor<1x8x16x63xf32>, %m: tensor<6x6x4x4x64xf32>,
               %n: tensor<6x6x3x4x64xf32>, %o: tensor<?x3072xf32>, %p: tensor<2x2x2x2x2x2xf32>) {
  %z = arith.constant 0.0 : f32
  // expected-remark @below {{big}}
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<131072xf32>) -> tensor<131072xf32>
  %1 = linalg.fill ins(%z : f32) outs(%b : tensor<131071xf32>) -> tensor<131071xf32>
  // expected-remark @below {{big}}
  %2 = linalg.fill ins(%z : f32) outs(%c : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  %3 = linalg.fill ins(%z : f32) outs(%d : tensor<63x3072xf32>) -> tensor<63x3072xf32>
  %4 = linalg.fill ins(%z : f32) outs(%e : tensor<64x3071xf32>) -> tensor<64x3071xf32>
  // expected-remark @below {{big}}
  %5 = linalg.fill ins(%z : f32) outs(%f : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %6 = linalg.fill ins(%z : f32) outs(%g : tensor<4x127x128xf32>) -> tensor<4x127x128xf32>
  // expected-remark @below {{conv-shaped}}
  %7 = linalg.fill ins(%z : f32) outs(%h : tensor<16x16x16xf32>) -> tensor<16x16x16xf32>
  %8 = linalg.fill ins(%z : f32) outs(%i : tensor<15x16x16xf32>) -> tensor<15x16x16xf32>
  // expected-remark @below {{big}}
  %9 = linalg.fill ins(%z : f32) outs(%j : tensor<1x4x128x128xf32>) -> tensor<1x4x128x128xf32>
  // expected-remark @below {{conv-shaped}}
  %10 = linalg.fill ins(%z : f32) outs(%k : tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32>
  %11 = linalg.fill ins(%z : f32) outs(%l : tensor<1x8x16x63xf32>) -> tensor<1x8x16x63xf32>
  // expected-remark @below {{big}}
  %12 = linalg.fill ins(%z : f32) outs(%m : tensor<6x6x4x4x64xf32>) -> tensor<6x6x4x4x64xf32>
  %13 = linalg.fill ins(%z : f32) outs(%n : tensor<6x6x3x4x64xf32>) -> tensor<6x6x3x4x64xf32>
  %14 = linalg.fill ins(%z : f32) outs(%o : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  %15 = linalg.fill ins(%z : f32) outs(%p : tensor<2x2x2x2x2x2xf32>) -> tensor<2x2x2x2x2x2xf32>
  return
}

// -----

// ============ @cuvil_ew_match_i1, @cuvil_ew_match_i1_rows, @cuvil_ew_match_i1_rows_big
// Any input or init with i1 elements (inside loops too); rows: rank 1-4 with
// all loops but the last parallel (rank 1: its loop parallel).
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_match_i1(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> !transform.any_op
  transform.named_sequence private @cuvil_ew_match_i1_rows(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>)
  transform.named_sequence private @cuvil_ew_match_i1_rows_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>)
  transform.named_sequence @say_rows_big(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "big rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @say_rows(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @say_i1(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "i1" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_i1_rows_big -> @say_rows_big, @cuvil_ew_match_i1_rows -> @say_rows,
        @cuvil_ew_match_i1 -> @say_i1
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @i1(%x: tensor<64x3072xf32>, %m: tensor<24x64xi1>, %y: tensor<24x64xf32>, %v: tensor<100xf32>) {
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<64x3072xi1>
  // expected-remark @below {{big rows 8 : i64, 0 : i64}}
  %cmp = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x3072xf32>) outs(%e1 : tensor<64x3072xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %ninf : f32
    linalg.yield %c : i1
  } -> tensor<64x3072xi1>
  %e2 = tensor.empty() : tensor<24x64xf32>
  // expected-remark @below {{rows 8 : i64, 0 : i64}}
  %sel = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%m, %y : tensor<24x64xi1>, tensor<24x64xf32>) outs(%e2 : tensor<24x64xf32>) {
  ^bb0(%b: i1, %a: f32, %o: f32):
    %s = arith.select %b, %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<24x64xf32>
  %e3 = tensor.empty() : tensor<100xi1>
  // expected-remark @below {{rows 4096 : i64}}
  %f1 = linalg.fill ins(%true : i1) outs(%e3 : tensor<100xi1>) -> tensor<100xi1>
  %e4 = tensor.empty() : tensor<2x3x4x5xi1>
  // expected-remark @below {{rows 1 : i64, 1 : i64, 8 : i64, 0 : i64}}
  %f4 = linalg.fill ins(%true : i1) outs(%e4 : tensor<2x3x4x5xi1>) -> tensor<2x3x4x5xi1>
  // Rank 5: i1, no rows.
  %e5 = tensor.empty() : tensor<2x2x2x2x3xi1>
  // expected-remark @below {{i1}}
  %f5 = linalg.fill ins(%true : i1) outs(%e5 : tensor<2x2x2x2x3xi1>) -> tensor<2x2x2x2x3xi1>
  // A reduction over the leading loop: i1, no rows.
  %e6 = tensor.empty() : tensor<64xi1>
  // expected-remark @below {{rows 4096 : i64}}
  %t = linalg.fill ins(%true : i1) outs(%e6 : tensor<64xi1>) -> tensor<64xi1>
  // expected-remark @below {{i1}}
  %all = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                         iterator_types = ["reduction", "parallel"]}
      ins(%m : tensor<24x64xi1>) outs(%t : tensor<64xi1>) {
  ^bb0(%a: i1, %o: i1):
    %r = arith.andi %a, %o : i1
    linalg.yield %r : i1
  } -> tensor<64xi1>
  // A rank-1 reduction: i1, no rows.
  %e7 = tensor.empty() : tensor<i1>
  // expected-remark @below {{i1}}
  %f7 = linalg.fill ins(%true : i1) outs(%e7 : tensor<i1>) -> tensor<i1>
  // expected-remark @below {{i1}}
  %any = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%e3 : tensor<100xi1>) outs(%f7 : tensor<i1>) {
  ^bb0(%a: i1, %o: i1):
    %r = arith.ori %a, %o : i1
    linalg.yield %r : i1
  } -> tensor<i1>
  // No i1 operand (an i1 inside the body only).
  %e8 = tensor.empty() : tensor<100xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%v : tensor<100xf32>) outs(%e8 : tensor<100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf ogt, %a, %ninf : f32
    %s = arith.select %c, %a, %ninf : f32
    linalg.yield %s : f32
  } -> tensor<100xf32>
  // Not structured.
  %c = arith.cmpf ogt, %ninf, %ninf : f32
  return
}

// -----

// ================================ @cuvil_ew_match_contraction, @cuvil_ew_match_top
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_match_top(%op: !transform.any_op {transform.readonly})
  transform.named_sequence private @cuvil_ew_match_contraction(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> !transform.any_op
  transform.named_sequence @say_contraction(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "contraction" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @say_top(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "top" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @match_top(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.include @cuvil_ew_match_top failures(propagate) (%op) : (!transform.any_op) -> ()
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_contraction -> @say_contraction, @match_top -> @say_top
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @contractions(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<16x64xf32>,
                        %x: tensor<2x16x32xf32>, %y: tensor<2x32x64xf32>, %z: tensor<2x16x64xf32>) {
  // expected-remark @below {{contraction}}
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  // expected-remark @below {{contraction}}
  %1 = linalg.batch_matmul ins(%x, %y : tensor<2x16x32xf32>, tensor<2x32x64xf32>) outs(%z : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // expected-remark @below {{contraction}}
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%c : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  // A product without a sum: a top-level elementwise op, not a contraction.
  // expected-remark @below {{top}}
  %3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<16x64xf32>) outs(%c : tensor<16x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %o : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %c) -> tensor<16x64xf32> {
    // In a loop: not top.
    %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%acc : tensor<16x64xf32>) outs(%acc : tensor<16x64xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<16x64xf32>
    scf.yield %h : tensor<16x64xf32>
  }
  return
}

// -----

// ============= @cuvil_ew_match_row_reduction, @cuvil_ew_match_row_reduction_big
// Rank 2-4, the last loop the only reduction, one init, top level.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_match_row_reduction(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
  transform.named_sequence private @cuvil_ew_match_row_reduction_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
  transform.named_sequence @say_big(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}, %rr: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "big rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @say(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}, %rr: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 4 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_row_reduction_big -> @say_big, @cuvil_ew_match_row_reduction -> @say
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @row_reductions(%a: tensor<64x3072xf32>, %b: tensor<4x128x128xf32>, %c: tensor<2x3x4x5xf32>,
                          %d: tensor<100xf32>, %e: tensor<2x2x2x2x3xf32>, %ia: tensor<64xf32>, %ib: tensor<4x128xf32>,
                          %ic: tensor<2x3x4xf32>, %id: tensor<f32>, %ie: tensor<2x2x2x2xf32>, %if: tensor<3072xf32>) {
  // expected-remark @below {{big rows 4 : i64, 0 : i64}}
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<64x3072xf32>) outs(%ia : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  // expected-remark @below {{big rows 1 : i64, 4 : i64, 0 : i64}}
  %1 = linalg.reduce ins(%b : tensor<4x128x128xf32>) outs(%ib : tensor<4x128xf32>) dimensions = [2]
    (%x: f32, %o: f32) {
      %s = arith.maximumf %x, %o : f32
      linalg.yield %s : f32
    }
  // expected-remark @below {{rows 1 : i64, 1 : i64, 4 : i64, 0 : i64}}
  %2 = linalg.reduce ins(%c : tensor<2x3x4x5xf32>) outs(%ic : tensor<2x3x4xf32>) dimensions = [3]
    (%x: f32, %o: f32) {
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    }
  // Rank 1, rank 5, a reduction of the first loop, two inits: rejected.
  %3 = linalg.reduce ins(%d : tensor<100xf32>) outs(%id : tensor<f32>) dimensions = [0]
    (%x: f32, %o: f32) {
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    }
  %4 = linalg.reduce ins(%e : tensor<2x2x2x2x3xf32>) outs(%ie : tensor<2x2x2x2xf32>) dimensions = [4]
    (%x: f32, %o: f32) {
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    }
  %5 = linalg.reduce ins(%a : tensor<64x3072xf32>) outs(%if : tensor<3072xf32>) dimensions = [0]
    (%x: f32, %o: f32) {
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    }
  %6:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<64x3072xf32>) outs(%ia, %ia : tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32, %p: f32):
    %s = arith.addf %x, %o : f32
    %m = arith.maximumf %x, %p : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// ====================== @cuvil_ew_match_transpose, @cuvil_ew_match_transpose_big
// linalg.transpose of rank 2-4 at top level; big or conv-shaped ones big.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_match_transpose(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>)
  transform.named_sequence private @cuvil_ew_match_transpose_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>)
  transform.named_sequence @say_big(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "big rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @say(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "rows" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_transpose_big -> @say_big, @cuvil_ew_match_transpose -> @say
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @transposes(%a: tensor<37x21xf32>, %b: tensor<16x16x16xf32>, %c: tensor<1x33x3x17xf32>,
                      %d: tensor<2x3x4x5x6xf32>, %ea: tensor<21x37xf32>, %eb: tensor<16x16x16xf32>,
                      %ec: tensor<1x3x17x33xf32>, %ed: tensor<2x3x4x6x5xf32>) {
  // expected-remark @below {{rows 64 : i64, 0 : i64}}
  %0 = linalg.transpose ins(%a : tensor<37x21xf32>) outs(%ea : tensor<21x37xf32>) permutation = [1, 0]
  // expected-remark @below {{big rows 1 : i64, 64 : i64, 0 : i64}}
  %1 = linalg.transpose ins(%b : tensor<16x16x16xf32>) outs(%eb : tensor<16x16x16xf32>) permutation = [2, 0, 1]
  // expected-remark @below {{rows 1 : i64, 1 : i64, 64 : i64, 0 : i64}}
  %2 = linalg.transpose ins(%c : tensor<1x33x3x17xf32>) outs(%ec : tensor<1x3x17x33xf32>) permutation = [0, 2, 3, 1]
  // Rank 5: left to the all-parallel schedule.
  %3 = linalg.transpose ins(%d : tensor<2x3x4x5x6xf32>) outs(%ed : tensor<2x3x4x6x5xf32>) permutation = [0, 1, 2, 4, 3]
  // A transposing linalg.generic: not linalg.transpose.
  %4 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<37x21xf32>) outs(%ea : tensor<21x37xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<21x37xf32>
  return
}

// -----

// ======================== @cuvil_ew_match_parallel, @cuvil_ew_match_parallel_big
// All loops parallel, rank 1-5, top level: yields the row tile sizes and the
// vector sizes.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_match_parallel(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
  transform.named_sequence private @cuvil_ew_match_parallel_big(%op: !transform.any_op {transform.readonly},
      %ew_rows: !transform.param<i64> {transform.readonly}, %ew_vec: !transform.param<i64> {transform.readonly},
      %red_rows: !transform.param<i64> {transform.readonly}, %min_cols: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
  transform.named_sequence @say_big(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "big rows" at %op : !transform.param<i64>, !transform.any_op
    transform.debug.emit_param_as_remark %vec, "vec" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @say(%op: !transform.any_op {transform.readonly},
      %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly}) {
    transform.debug.emit_param_as_remark %rows, "rows" at %op : !transform.param<i64>, !transform.any_op
    transform.debug.emit_param_as_remark %vec, "vec" at %op : !transform.param<i64>, !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ew_vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %red_rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %min_cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    %r = transform.foreach_match in %funcs, %ew_rows, %ew_vec, %red_rows, %min_cols
        @cuvil_ew_match_parallel_big -> @say_big, @cuvil_ew_match_parallel -> @say
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> !transform.any_op
    transform.yield
  }
}

func.func @parallel(%a: tensor<100xf32>, %b: tensor<64x3072xf32>, %c: tensor<2x3x4x5x6xf32>,
                    %d: tensor<1x2x3x4x5x6xf32>, %e: tensor<f32>, %f: tensor<13x100xf32>, %g: tensor<13xf32>) {
  %z = arith.constant 0.0 : f32
  // expected-remark @below {{rows 4096 : i64}}
  // expected-remark @below {{vec 64 : i64}}
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100xf32>) -> tensor<100xf32>
  // expected-remark @below {{big rows 8 : i64, 0 : i64}}
  // expected-remark @below {{vec 1 : i64, 64 : i64}}
  %1 = linalg.copy ins(%b : tensor<64x3072xf32>) outs(%b : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  // expected-remark @below {{rows 1 : i64, 1 : i64, 1 : i64, 8 : i64, 0 : i64}}
  // expected-remark @below {{vec 1 : i64, 1 : i64, 1 : i64, 1 : i64, 64 : i64}}
  %2 = linalg.fill ins(%z : f32) outs(%c : tensor<2x3x4x5x6xf32>) -> tensor<2x3x4x5x6xf32>
  // Rank 6, rank 0, a reduction: rejected.
  %3 = linalg.fill ins(%z : f32) outs(%d : tensor<1x2x3x4x5x6xf32>) -> tensor<1x2x3x4x5x6xf32>
  %4 = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %5 = linalg.reduce ins(%f : tensor<13x100xf32>) outs(%g : tensor<13xf32>) dimensions = [1]
    (%x: f32, %o: f32) {
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// ================ @cuvil_ew_tile_rows, @cuvil_ew_tile_rows_serial, @cuvil_ew_skip
// The i1 rows actions by hand: an scf.forall for one op, scf.for loops for the
// other, whatever their size; @cuvil_ew_skip leaves an op alone.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_skip(%op: !transform.any_op {transform.readonly})
  transform.named_sequence private @cuvil_ew_tile_rows(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence private @cuvil_ew_tile_rows_serial(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fills = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %a, %b, %c = transform.split_handle %fills : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %ra = transform.cuvil.tile_sizes %a [[%rows, 0], [4096]] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %rb = transform.cuvil.tile_sizes %b [[%rows, 0], [4096]] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.include @cuvil_ew_tile_rows failures(propagate) (%a, %ra) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.include @cuvil_ew_tile_rows_serial failures(propagate) (%b, %rb) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.include @cuvil_ew_skip failures(propagate) (%c) : (!transform.any_op) -> ()
    transform.yield
  }
}

// CHECK-LABEL: func.func @tile_rows
// CHECK:         scf.forall ({{.*}}) in (2, 3)
// CHECK:           linalg.fill {{.*}} -> tensor<1x8x64xi1>
// CHECK:         scf.for {{.*}} to %c2 step %c1
// CHECK:           scf.for {{.*}} to %c24 step %c8
// CHECK:             linalg.fill {{.*}} -> tensor<1x8x64xi1>
// CHECK-NOT:     vector.
// CHECK:         linalg.fill {{.*}} -> tensor<2x24x64xi1>
// CHECK-NOT:     vector.
// CHECK:         return
func.func @tile_rows() -> (tensor<2x24x64xi1>, tensor<2x24x64xi1>, tensor<2x24x64xi1>) {
  %true = arith.constant true
  %e = tensor.empty() : tensor<2x24x64xi1>
  %a = linalg.fill ins(%true : i1) outs(%e : tensor<2x24x64xi1>) -> tensor<2x24x64xi1>
  %b = linalg.fill ins(%true : i1) outs(%e : tensor<2x24x64xi1>) -> tensor<2x24x64xi1>
  %c = linalg.fill ins(%true : i1) outs(%e : tensor<2x24x64xi1>) -> tensor<2x24x64xi1>
  return %a, %b, %c : tensor<2x24x64xi1>, tensor<2x24x64xi1>, tensor<2x24x64xi1>
}

// -----

// ===== @cuvil_ew_parallel, @cuvil_ew_parallel_serial, @cuvil_ew_vectorize_rows, @cuvil_ew_peel
// The same op both ways: rows, single rows in 32-wide chunks (peeled: 70 =
// 2 x 32 + 6), vectorized.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_parallel(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly})
  transform.named_sequence private @cuvil_ew_parallel_serial(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly}, %vec: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %a, %b = transform.split_handle %ops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %rows = transform.param.constant 4 : i64 -> !transform.param<i64>
    %vec = transform.param.constant 32 : i64 -> !transform.param<i64>
    %ra = transform.cuvil.tile_sizes %a [[%rows, 0], [4096]] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %va = transform.cuvil.tile_sizes %a [%vec] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %rb = transform.cuvil.tile_sizes %b [[%rows, 0], [4096]] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %vb = transform.cuvil.tile_sizes %b [%vec] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.include @cuvil_ew_parallel failures(propagate) (%a, %ra, %va)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.include @cuvil_ew_parallel_serial failures(propagate) (%b, %rb, %vb)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }
}

// (Masks everywhere: the tiles have dynamic sizes until canonicalization,
// which @cuvil_ew_vector_lowering runs.)
// CHECK-LABEL: func.func @parallel_both_ways
// CHECK:         scf.forall ({{.*}}) in (3)
// CHECK:           scf.for {{.*}} to %c4{{.*}} step %c1
// CHECK:             scf.for {{.*}} to %c64 step %c32
// CHECK:               vector.transfer_read {{.*}} : tensor<1x?xf32>, vector<1x32xf32>
// CHECK:               math.exp {{.*}} : vector<1x32xf32>
// CHECK:             scf.for {{.*}} = %c64 to %c70 step %c32
// CHECK:         scf.for {{.*}} to %c12 step %c4
// CHECK:           scf.for {{.*}} to %c4{{.*}} step %c1
// CHECK:             scf.for {{.*}} to %c64 step %c32
// CHECK:               math.tanh {{.*}} : vector<1x32xf32>
// CHECK:             scf.for {{.*}} = %c64 to %c70 step %c32
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @parallel_both_ways(%x: tensor<12x70xf32>) -> (tensor<12x70xf32>, tensor<12x70xf32>) {
  %e = tensor.empty() : tensor<12x70xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x70xf32>) outs(%e : tensor<12x70xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<12x70xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x70xf32>) outs(%e : tensor<12x70xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.tanh %v : f32
    linalg.yield %s : f32
  } -> tensor<12x70xf32>
  return %a, %b : tensor<12x70xf32>, tensor<12x70xf32>
}

// -----

// ======== @cuvil_ew_row_reduction, @cuvil_ew_row_reduction_serial, @cuvil_ew_reduce_rows
// With an scf.forall the zero fill is fused into it (and vectorized there);
// with scf.for loops it stays outside. Both: a 2 x 16 accumulator (RED_ROWS = 2),
// the remainder (100 = 6 x 16 + 4) peeled, vectorized.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_row_reduction(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence private @cuvil_ew_row_reduction_serial(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly}, %red_rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %a, %b = transform.split_handle %ops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %rr = transform.param.constant 2 : i64 -> !transform.param<i64>
    %ra = transform.cuvil.tile_sizes %a [%rr, 0] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %rb = transform.cuvil.tile_sizes %b [%rr, 0] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.include @cuvil_ew_row_reduction failures(propagate) (%a, %ra, %rr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.include @cuvil_ew_row_reduction_serial failures(propagate) (%b, %rb, %rr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }
}

// CHECK-LABEL: func.func @row_sums_both_ways
// CHECK:         scf.forall ({{.*}}) in (3) shared_outs({{.*}} = %0)
// CHECK:           vector.transfer_write {{.*}} : vector<2xf32>, tensor<2xf32>
// CHECK:           scf.for {{.*}} to %c96 step %c16{{.*}} -> (tensor<2x16xf32>)
// CHECK:             vector.transfer_read {{.*}} : tensor<2x?xf32>, vector<2x16xf32>
// CHECK:           scf.for {{.*}} = %c96 to %c100 step %c16{{.*}} -> (tensor<2x16xf32>)
// CHECK:           vector.multi_reduction <add>, {{.*}} : vector<2x16xf32> to vector<2xf32>
// CHECK:         linalg.fill {{.*}} -> tensor<6xf32>
// CHECK:         scf.for {{.*}} to %c6 step %c2
// CHECK-NOT:       linalg.fill
// CHECK:           scf.for {{.*}} to %c96 step %c16{{.*}} -> (tensor<2x16xf32>)
// CHECK:           vector.multi_reduction <add>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @row_sums_both_ways(%x: tensor<6x100xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %fa = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x100xf32>) outs(%fa : tensor<6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x100xf32>) outs(%fb : tensor<6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %a, %b : tensor<6xf32>, tensor<6xf32>
}

// -----

// ========= @cuvil_ew_transpose, @cuvil_ew_transpose_serial, @cuvil_ew_transpose_tiles
// 64-row tiles, 16x16 tiles (both innermost loops peeled: 37 = 2 x 16 + 5,
// 21 = 16 + 5), vectorized.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_transpose(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence private @cuvil_ew_transpose_serial(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.transpose"]} in %root : (!transform.any_op) -> !transform.any_op
    %a, %b = transform.split_handle %ops : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %ra = transform.cuvil.tile_sizes %a [64, 0] leading 1 : (!transform.any_op) -> !transform.param<i64>
    %rb = transform.cuvil.tile_sizes %b [64, 0] leading 1 : (!transform.any_op) -> !transform.param<i64>
    transform.include @cuvil_ew_transpose failures(propagate) (%a, %ra) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.include @cuvil_ew_transpose_serial failures(propagate) (%b, %rb) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
}

// CHECK-LABEL: func.func @transpose_both_ways
// CHECK:         scf.forall ({{.*}}) in (1)
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             scf.for {{.*}} to %c32 step %c16
// CHECK:               vector.transfer_read {{.*}} permutation_map = {{.*}} : tensor<?x?xf32>, vector<16x16xf32>
// CHECK:             scf.for {{.*}} = %c32 to %c37 step %c16
// CHECK:           scf.for {{.*}} step %c16
// CHECK:         scf.for {{.*}} to %c21 step %c64
// CHECK:           scf.for {{.*}} step %c16
// CHECK:             scf.for {{.*}} to %c32 step %c16
// CHECK:             scf.for {{.*}} = %c32 to %c37 step %c16
// CHECK:           scf.for {{.*}} step %c16
// CHECK-NOT:     linalg.transpose
// CHECK:         return
func.func @transpose_both_ways(%x: tensor<37x21xf32>) -> (tensor<21x37xf32>, tensor<21x37xf32>) {
  %e = tensor.empty() : tensor<21x37xf32>
  %a = linalg.transpose ins(%x : tensor<37x21xf32>) outs(%e : tensor<21x37xf32>) permutation = [1, 0]
  %b = linalg.transpose ins(%x : tensor<37x21xf32>) outs(%e : tensor<21x37xf32>) permutation = [1, 0]
  return %a, %b : tensor<21x37xf32>, tensor<21x37xf32>
}


// -----

// =================================================== @cuvil_ew_vector_lowering
// Transfers lowered, multi_reductions to horizontal reductions, 16x16 shuffles.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_vector_lowering(%f: !transform.any_op {transform.consumed})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_ew_vector_lowering failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
}

// CHECK-LABEL: func.func @lowering
// CHECK-NOT:     vector.multi_reduction
// CHECK:         vector.reduction <add>
// CHECK-COUNT-64: vector.shuffle
// CHECK-NOT:     vector.transpose
func.func @lowering(%v: vector<16xf32>, %acc: f32, %t: vector<16x16xf32>) -> (f32, vector<16x16xf32>) {
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<16xf32> to f32
  %tr = vector.transpose %t, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %r, %tr : f32, vector<16x16xf32>
}

