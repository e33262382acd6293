// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/matmul_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s

// The B-packed matmul pack_cpu.mlir produces (loops [m, n/64, k, 64]):
// scf.forall over 4-panel groups (x 64-row blocks; one here) with the fill fused, K blocks
// of 768 (TKP), then per panel a 4x64 register tile (accumulators carried in
// vectors across the k loop, which is unrolled by 4), rows peeled (37 = 9 x 4 + 1):
// the last row is a 1 x 64 register tile of its own, unmasked.
// CHECK-LABEL: func.func @packed
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall ({{.*}}) in (2)
// CHECK:           vector.transfer_write {{.*}} : vector<64xf32>
// CHECK:           scf.for {{.*}} to %c1536 step %c768
// CHECK:             scf.for
// CHECK:               scf.for {{.*}} to %c36 step %c4
// CHECK:                 scf.for {{.*}} to %c768 step %c4 iter_args({{.*}}) -> ({{.*}}vector<4x1x64xf32>)
// CHECK-COUNT-16:          vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:               vector.fma
// CHECK:                   scf.yield
// CHECK:               tensor.extract_slice {{.*}}[36, 0] [1, 768]
// CHECK:               scf.for {{.*}} to %c768 step %c4 iter_args({{.*}}) -> ({{.*}}vector<64xf32>)
// CHECK-COUNT-4:         vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:     vector.{{create|constant}}_mask
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @packed(%x: tensor<37x1536xf32>, %bp: tensor<8x1536x64xf32>) -> tensor<37x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x8x64xf32>) -> tensor<37x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<37x1536xf32>, tensor<8x1536x64xf32>) outs(%f : tensor<37x8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<37x8x64xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<37x8x64xf32> into tensor<37x512xf32>
  return %c : tensor<37x512xf32>
}

// 130 rows (128 to 511): forall tiles of 2 panels x 128 rows.
// CHECK-LABEL: func.func @packed_mid
// CHECK:         scf.forall ({{.*}}) in (2, 2)
// CHECK:             scf.for {{.*}} step %c4 iter_args({{.*}}) -> ({{.*}}vector<4x1x64xf32>)
// CHECK-COUNT-16:      vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:     vector.{{create|constant}}_mask
// CHECK:         return
func.func @packed_mid(%x: tensor<130x128xf32>, %bp: tensor<4x128x64xf32>) -> tensor<130x4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<130x4x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<130x4x64xf32>) -> tensor<130x4x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<130x128xf32>, tensor<4x128x64xf32>) outs(%f : tensor<130x4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<130x4x64xf32>
  return %r : tensor<130x4x64xf32>
}

// 600 rows (>= 512): the tall schedule, forall tiles of up to 96 rows spread
// evenly over an even count (8 of 78 rows; 96-row tiles were 6 x 96 + 24, 7
// tiles) and 6 x 64 register tiles: 24 accumulators, 24 FMAs per k step.
// CHECK-LABEL: func.func @packed_tall
// CHECK:         scf.forall (%[[T:.*]]) in (8)
// CHECK:           affine.min #{{.*}}(%[[T]])
// CHECK:           scf.for {{.*}} step %c6
// CHECK:             scf.for {{.*}} to %c128 step %c4 iter_args({{.*}}) -> ({{.*}}vector<6x1x64xf32>)
// CHECK-COUNT-24:      vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:     vector.{{create|constant}}_mask
// CHECK:         return
func.func @packed_tall(%x: tensor<600x128xf32>, %bp: tensor<1x128x64xf32>) -> tensor<600x1x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<600x1x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<600x1x64xf32>) -> tensor<600x1x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<600x128xf32>, tensor<1x128x64xf32>) outs(%f : tensor<600x1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<600x1x64xf32>
  return %r : tensor<600x1x64xf32>
}

// Attention's batched contraction (loops [b, m, k, n]) is not a packed matmul.
// CHECK-LABEL: func.func @not_packed
// CHECK:         linalg.generic
func.func @not_packed(%q: tensor<4x32x16xf32>, %kt: tensor<4x16x32xf32>, %c: tensor<4x32x32xf32>) -> tensor<4x32x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (b, k, n)>,
                                        affine_map<(b, m, k, n) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<4x32x16xf32>, tensor<4x16x32xf32>) outs(%c : tensor<4x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x32x32xf32>
  return %r : tensor<4x32x32xf32>
}
