// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/matmul_dot_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s

// The VNNI-packed bf16 matmul pack_cpu.mlir's @cuvil_pack_matmul_rhs_bf16_vnni
// makes of x @ W^T (128x768 @ 768x3072): scf.forall over 4-panel x 64-row
// tiles with the fill fused, a 4-row x 64-column register tile whose 16
// accumulators (one zmm each) are loop-carried vectors over the k pairs, one
// 32-bit broadcast of A's k pair per row and one 64-byte read of B's panel row
// per 16 columns, 16 vdpbf16ps per k pair.
// CHECK-LABEL: func.func @vnni
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall ({{.*}}) in (12, 2)
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x64xf32>
// CHECK:           scf.for {{.*}} to %c4 step %c1
// CHECK:             scf.for {{.*}} to %c64 step %c4
// CHECK:               scf.for {{.*}} to %c384 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>,
// CHECK:                 vector.transfer_read {{.*}} : tensor<1x1x32xbf16>, vector<32xbf16>
// CHECK:                 vector.broadcast {{.*}} : vector<1xi32> to vector<16xi32>
// CHECK-COUNT-16:        x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT:             x86vector.avx512.dot
// CHECK:                 scf.yield
// The accumulators written back as one chain into the register tile (as 16
// slices of it, bufferization copied each into a fresh heap buffer).
// CHECK-COUNT-16:      vector.transfer_write {{.*}} : vector<1x1x16xf32>, tensor<4x1x64xf32>
// CHECK-NEXT:          tensor.insert_slice {{.*}} : tensor<4x1x64xf32> into tensor<64x4x64xf32>
// CHECK-NOT:     vector.contract
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @vnni(%a: tensor<128x384x2xbf16>, %b: tensor<48x384x64x2xbf16>) -> tensor<128x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x48x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x48x64xf32>) -> tensor<128x48x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j, v) -> (m, k, v)>, affine_map<(m, n, k, j, v) -> (n, k, j, v)>,
                                        affine_map<(m, n, k, j, v) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<128x384x2xbf16>, tensor<48x384x64x2xbf16>) outs(%f : tensor<128x48x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<128x48x64xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<128x48x64xf32> into tensor<128x3072xf32>
  return %c : tensor<128x3072xf32>
}

// -----

// 37 rows (9 x 4 + 1), K = 33 padded to 17 pairs, 8 panels (two forall tiles of
// 37 rows): the peeled row runs the same 1 x 16 dot tiles (here one row: its 4
// accumulators hoisted too).
// CHECK-LABEL: func.func @rows_peeled
// CHECK:         scf.for {{.*}} to %c36 step %c4
// CHECK:           scf.for {{.*}} to %c17 step %c1
// CHECK-COUNT-16:    x86vector.avx512.dot
// CHECK:         scf.for {{.*}} to %c17 step %c1 {{.*}} -> ({{.*}}vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>)
// CHECK-COUNT-4:   x86vector.avx512.dot
// CHECK-NOT:       x86vector.avx512.dot
// CHECK-NOT:     vector.contract
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @rows_peeled(%a: tensor<37x17x2xbf16>, %b: tensor<8x17x64x2xbf16>) -> tensor<37x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x8x64xf32>) -> tensor<37x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j, v) -> (m, k, v)>, affine_map<(m, n, k, j, v) -> (n, k, j, v)>,
                                        affine_map<(m, n, k, j, v) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<37x17x2xbf16>, tensor<8x17x64x2xbf16>) outs(%f : tensor<37x8x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<37x8x64xf32>
  return %r : tensor<37x8x64xf32>
}

// -----

// 39 rows (9 x 4 + 3): the 3 peeled rows one at a time, each over the whole
// K with its 4 accumulators loop-carried (before, the rows' loop sat inside
// the k loop and the accumulators went through memory every k pair).
// CHECK-LABEL: func.func @three_rows_peeled
// CHECK:         scf.for {{.*}} to %c36 step %c4
// CHECK:           scf.for {{.*}} to %c17 step %c1
// CHECK-COUNT-16:    x86vector.avx512.dot
// CHECK:         scf.for {{.*}} to %c3 step %c1
// CHECK:           scf.for {{.*}} to %c17 step %c1 {{.*}} -> ({{.*}}vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>)
// CHECK-COUNT-4:     x86vector.avx512.dot
// CHECK-NOT:       x86vector.avx512.dot
// CHECK:         return
func.func @three_rows_peeled(%a: tensor<39x17x2xbf16>, %b: tensor<8x17x64x2xbf16>) -> tensor<39x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<39x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<39x8x64xf32>) -> tensor<39x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j, v) -> (m, k, v)>, affine_map<(m, n, k, j, v) -> (n, k, j, v)>,
                                        affine_map<(m, n, k, j, v) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<39x17x2xbf16>, tensor<8x17x64x2xbf16>) outs(%f : tensor<39x8x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<39x8x64xf32>
  return %r : tensor<39x8x64xf32>
}

// -----

// Rows spread evenly over an even number of forall tiles (two threads take
// contiguous halves): 196 rows x 4 panels in 4 tiles of 52 rows (64-row tiles
// were 64 + 64 | 64 + 4); 49 rows x 4 panels in two tiles of 28 (one tile
// left one thread idle).
// CHECK-DAG:     #[[$ROWS52:.*]] = affine_map<(d0) -> (d0 * -52 + 196, 52)>
// CHECK-DAG:     #[[$ROWS28:.*]] = affine_map<(d0) -> (d0 * -28 + 49, 28)>
// CHECK-LABEL: func.func @balanced_rows
// CHECK:         scf.forall (%[[R:.*]]) in (4)
// CHECK:           affine.min #[[$ROWS52]](%[[R]])
// CHECK:         scf.forall (%[[R2:.*]]) in (2)
// CHECK:           affine.min #[[$ROWS28]](%[[R2]])
func.func @balanced_rows(%a: tensor<196x17x2xbf16>, %b: tensor<4x17x64x2xbf16>, %a2: tensor<49x17x2xbf16>)
    -> (tensor<196x4x64xf32>, tensor<49x4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<196x4x64xf32>) -> tensor<196x4x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j, v) -> (m, k, v)>, affine_map<(m, n, k, j, v) -> (n, k, j, v)>,
                                        affine_map<(m, n, k, j, v) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<196x17x2xbf16>, tensor<4x17x64x2xbf16>) outs(%f : tensor<196x4x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<196x4x64xf32>
  %e2 = tensor.empty() : tensor<49x4x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<49x4x64xf32>) -> tensor<49x4x64xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(m, n, k, j, v) -> (m, k, v)>, affine_map<(m, n, k, j, v) -> (n, k, j, v)>,
                                         affine_map<(m, n, k, j, v) -> (m, n, j)>],
                        iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a2, %b : tensor<49x17x2xbf16>, tensor<4x17x64x2xbf16>) outs(%f2 : tensor<49x4x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<49x4x64xf32>
  return %r, %r2 : tensor<196x4x64xf32>, tensor<49x4x64xf32>
}

// -----

// Not VNNI-packed (fp32, or bf16 in 64-column panels): left to matmul_cpu.mlir.
// CHECK-LABEL: func.func @not_vnni
// CHECK:         linalg.generic
// CHECK:         linalg.matmul
// CHECK-NOT:     x86vector
func.func @not_vnni(%x: tensor<37x1536xf32>, %bp: tensor<8x1536x64xf32>, %a: tensor<64x256xbf16>, %w: tensor<256x512xbf16>)
    -> (tensor<37x8x64xf32>, tensor<64x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x8x64xf32>) -> tensor<37x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<37x1536xf32>, tensor<8x1536x64xf32>) outs(%f : tensor<37x8x64xf32>) {
  ^bb0(%p0: f32, %p1: f32, %o: f32):
    %p = arith.mulf %p0, %p1 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<37x8x64xf32>
  %e2 = tensor.empty() : tensor<64x512xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %m = linalg.matmul ins(%a, %w : tensor<64x256xbf16>, tensor<256x512xbf16>) outs(%f2 : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r, %m : tensor<37x8x64xf32>, tensor<64x512xf32>
}

// -----

// The VNNI-packed int8 matmul after cuvil-unsigned-int8-lhs (128x256 @
// 256x384; u8 x s8 -> i32): the same tiles and register kernel, with one
// 32-bit broadcast of A's k quad per row, one 64-byte read of B's panel row
// per 16 columns and 16 vpdpbusd (cuvil.x86.dot_u8s8) per k quad.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
// CHECK-LABEL: func.func @vnni_int8
// CHECK:         scf.forall ({{.*}}) in (2, 2)
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x64xi32>
// CHECK:               scf.for {{.*}} to %c64 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xi32>, vector<1x1x16xi32>, vector<1x1x16xi32>, vector<1x1x16xi32>,
// CHECK:                 vector.transfer_read {{.*}} : tensor<128x64x4xi8>, vector<1x1x4xi8>
// CHECK:                 vector.transfer_read {{.*}} : tensor<1x1x64xi8>, vector<64xi8>
// CHECK:                 vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-16:        cuvil.x86.dot_u8s8 {{.*}} : vector<16xi32>
// CHECK-NOT:             cuvil.x86.dot_u8s8
// CHECK:                 scf.yield
// CHECK-NOT:     vector.contract
// CHECK-NOT:     arith.muli
// CHECK:         return
func.func @vnni_int8(%a: tensor<128x64x4xi8>, %b: tensor<6x64x64x4xi8>) -> tensor<128x6x64xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x6x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<128x6x64xi32>) -> tensor<128x6x64xi32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<128x64x4xi8>, tensor<6x64x64x4xi8>) outs(%f : tensor<128x6x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %x32 = arith.extui %x : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<128x6x64xi32>
  return %r : tensor<128x6x64xi32>
}

// -----

// An int8 conv over shifted rows after cuvil-unsigned-int8-lhs{shifted-rows}
// (3x3 taps over a 10-pixel-wide padded input, 128 rows = two 64-row forall
// tiles, 2 panels): forall tiles of 4 panels (both) x 64 rows, register tiles of one
// panel x 4 rows, inside them the taps kh and kw and the 16 k quads, with
// the 16 accumulators carried by all three loops (in registers over the
// whole window); a tap reads A at row q + kh * 10 + kw, then the same 16
// vpdpbusd per k quad as the matmul's kernel. No rank-7 op is left.
#sra = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#srb = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#src = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 64 + d1 + d2 * 10 + d3)>
// CHECK-LABEL: func.func @vnni_shifted_rows
// CHECK:         scf.forall (%[[T:.*]]) in (2)
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x64xi32>
// CHECK:           scf.for {{.*}} to %c2 step %c1
// CHECK:             scf.for %[[M:.*]] = %c0 to %c64 step %c4
// CHECK:               scf.for %[[KH:.*]] = %c0 to %c3 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xi32>, vector<1x1x16xi32>, vector<1x1x16xi32>, vector<1x1x16xi32>,
// CHECK:                 scf.for %[[KW:.*]] = %c0 to %c3 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xi32>,
// CHECK:                   scf.for %[[K:.*]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xi32>,
// CHECK:                     %[[R:.*]] = affine.apply #[[ROW]](%[[T]], %[[M]], %[[KH]], %[[KW]])
// CHECK:                     vector.transfer_read %{{.*}}[%[[R]], %[[K]], %c0]{{.*}} : tensor<152x16x4xi8>, vector<1x1x4xi8>
// CHECK-COUNT-16:            cuvil.x86.dot_u8s8 {{.*}} : vector<16xi32>
// CHECK-NOT:                 cuvil.x86.dot_u8s8
// CHECK:                     scf.yield
// CHECK-NOT:     vector.contract
// CHECK-NOT:     arith.muli
// CHECK:         return
func.func @vnni_shifted_rows(%x: tensor<152x16x4xi8>, %w: tensor<2x3x3x16x64x4xi8>) -> tensor<128x2x64xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x2x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<128x2x64xi32>) -> tensor<128x2x64xi32>
  %r = linalg.generic {indexing_maps = [#sra, #srb, #src],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<152x16x4xi8>, tensor<2x3x3x16x64x4xi8>) outs(%f : tensor<128x2x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %a32 = arith.extui %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<128x2x64xi32>
  return %r : tensor<128x2x64xi32>
}

// -----

// Attention's q.k^T as pack_cpu.mlir's @cuvil_pack_bf16_bmms packs it (BERT-
// base: 12 heads, 128 x 64 @ 64 x 128; loops [b, m, n/64, k/2, 64, 2]):
// scf.forall over one head x 64 rows (both panels) with the fill fused;
// fold_unit_batch drops the tile's batch loop, and the rest is the matmul's
// kernel: 4-row x 64-column register tiles, 16 accumulators carried over the
// 32 k pairs, A read at the tile's head, 16 vdpbf16ps per k pair.
// CHECK-LABEL: func.func @vnni_bmm
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[B:.*]], %{{.*}}) in (12, 2)
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x1x64xf32>
// CHECK:           scf.for {{.*}} to %c2 step %c1
// CHECK:             scf.for {{.*}} to %c64 step %c4
// CHECK:               scf.for {{.*}} to %c32 step %c1 iter_args({{.*}}) -> ({{.*}}vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>,
// CHECK:                 vector.transfer_read %arg0[%[[B]], {{.*}} : tensor<12x128x32x2xbf16>, vector<1x1x2xbf16>
// CHECK-COUNT-16:        x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT:             x86vector.avx512.dot
// CHECK:                 scf.yield
// CHECK-NOT:     vector.contract
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @vnni_bmm(%a: tensor<12x128x32x2xbf16>, %b: tensor<12x2x32x64x2xbf16>) -> tensor<12x128x2x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x128x2x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x128x2x64xf32>) -> tensor<12x128x2x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k, j, v) -> (b, m, k, v)>,
                                        affine_map<(b, m, n, k, j, v) -> (b, n, k, j, v)>,
                                        affine_map<(b, m, n, k, j, v) -> (b, m, n, j)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<12x128x32x2xbf16>, tensor<12x2x32x64x2xbf16>) outs(%f : tensor<12x128x2x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<12x128x2x64xf32>
  return %r : tensor<12x128x2x64xf32>
}

// -----

// The same product with a dynamic batch is left alone (it would stay in
// `main`, where the kernel's function-wide passes for one product would
// rewrite the next): it runs as loops.
// CHECK-LABEL: func.func @vnni_bmm_dynamic
// CHECK-NOT:     scf.forall
// CHECK-NOT:     x86vector.avx512.dot
// CHECK:         linalg.generic
func.func @vnni_bmm_dynamic(%a: tensor<?x128x32x2xbf16>, %b: tensor<?x2x32x64x2xbf16>, %c: tensor<?x128x2x64xf32>)
    -> tensor<?x128x2x64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, n, k, j, v) -> (b, m, k, v)>,
                                        affine_map<(b, m, n, k, j, v) -> (b, n, k, j, v)>,
                                        affine_map<(b, m, n, k, j, v) -> (b, m, n, j)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x128x32x2xbf16>, tensor<?x2x32x64x2xbf16>) outs(%c : tensor<?x128x2x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x128x2x64xf32>
  return %r : tensor<?x128x2x64xf32>
}
