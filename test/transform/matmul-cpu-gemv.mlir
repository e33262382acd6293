// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/matmul_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s

// A decode step's packed matmul (M = 1, pack_cpu.mlir's panels) of int8
// weights (cuvil.weight_only): the register tile is the one row x 64
// columns, unmasked, its accumulator carried across the k loop (unrolled by
// 4); each k step converts one 64-byte row of the panel (sitofp) and runs 4
// FMAs.
// CHECK-LABEL: func.func @packed_one_row_int8_weights
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     vector.{{create|constant}}_mask
// CHECK:         scf.forall ({{.*}}) in (2)
// CHECK:           scf.for {{.*}} to %c768 step %c4 iter_args({{.*}}, %[[ACC:.*]] = %{{.*}}) -> ({{.*}}vector<64xf32>)
// CHECK:             %[[W:.*]] = arith.sitofp {{.*}} : vector<64xi8> to vector<64xf32>
// CHECK:             vector.fma %[[W]], %{{.*}}, %[[ACC]] : vector<64xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     vector.{{create|constant}}_mask
// CHECK:         return
func.func @packed_one_row_int8_weights(%x: tensor<1x768xf32>, %bp: tensor<8x768x64xi8>) -> tensor<1x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<1x768xf32>, tensor<8x768x64xi8>) outs(%f : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %b: i8, %o: f32):
    %bf = arith.sitofp %b : i8 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x64xf32>
  return %r : tensor<1x8x64xf32>
}

// -----

// A plain matmul of 2 rows (as pack_cpu.mlir leaves those it does not
// pack): all M rows in the register tile, 2 x 128 columns, accumulators
// carried across the k loop of a full tile without masks; the n loop is
// peeled (384 = 256 + 128 in two forall tiles), only its remainder masked.
// CHECK-LABEL: func.func @two_rows
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.forall
// CHECK:           scf.for {{.*}} step %c128 iter_args
// CHECK:             vector.transfer_read {{.*}} : tensor<2x128xf32>, vector<2x128xf32>
// CHECK:             scf.for {{.*}} to %c64 step %c1 iter_args({{.*}}) -> ({{.*}}vector<2x128xf32>)
// CHECK-NOT:           create_mask
// CHECK-COUNT-2:       vector.fma {{.*}} : vector<128xf32>
// CHECK:           scf.for
// CHECK:             vector.create_mask
// CHECK-NOT:     linalg.matmul
// CHECK:         return
func.func @two_rows(%x: tensor<2x64xf32>, %w: tensor<64x384xf32>) -> tensor<2x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x384xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x384xf32>) -> tensor<2x384xf32>
  %r = linalg.matmul ins(%x, %w : tensor<2x64xf32>, tensor<64x384xf32>) outs(%f : tensor<2x384xf32>) -> tensor<2x384xf32>
  return %r : tensor<2x384xf32>
}
