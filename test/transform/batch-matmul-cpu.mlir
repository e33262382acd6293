// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/batch_matmul_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s

// Attention's q.k^T as cuvil-lower-to-linalg emits it (loops [b, m, k, n]):
// one (head, 64-row block) per scf.forall iteration, the zero-fill fused and
// vectorized, a 4x64 register tile whose accumulators are loop-carried
// vectors over k, outer products as FMAs.
// CHECK-LABEL: func.func @qk
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall ({{.*}}) in (12, 2)
// CHECK:           vector.transfer_write {{.*}} : vector<64xf32>
// CHECK:           scf.for {{.*}} step %c4
// CHECK:             scf.for {{.*}} step %c64
// CHECK:               scf.for {{.*}} to %c64 step %c1 iter_args({{.*}}) -> ({{.*}}vector<4x64xf32>)
// CHECK-COUNT-4:         vector.fma {{.*}} : vector<64xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<4x64xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @qk(%q: tensor<12x128x64xf32>, %kt: tensor<12x64x128xf32>) -> tensor<12x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (b, k, n)>,
                                        affine_map<(b, m, k, n) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<12x128x64xf32>, tensor<12x64x128xf32>) outs(%f : tensor<12x128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<12x128x128xf32>
  return %r : tensor<12x128x128xf32>
}

// The same product in int8 (a QDQ model's q.k^T: i8 operands sign-extended
// into an i32 accumulator): the same tiles, as i32 outer products.
// CHECK-LABEL: func.func @qk_int8
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall ({{.*}}) in (12, 2)
// CHECK:               scf.for {{.*}} to %c64 step %c1 iter_args({{.*}}) -> ({{.*}}vector<4x64xi32>)
// CHECK-COUNT-4:         arith.muli {{.*}} : vector<64xi32>
// CHECK:               vector.transfer_write {{.*}} : vector<4x64xi32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @qk_int8(%q: tensor<12x128x64xi8>, %kt: tensor<12x64x128xi8>) -> tensor<12x128x128xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<12x128x128xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<12x128x128xi32>) -> tensor<12x128x128xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (b, k, n)>,
                                        affine_map<(b, m, k, n) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<12x128x64xi8>, tensor<12x64x128xi8>) outs(%f : tensor<12x128x128xi32>) {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %a32 = arith.extsi %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  } -> tensor<12x128x128xi32>
  return %r : tensor<12x128x128xi32>
}

// linalg.batch_matmul, odd sizes: partial m and n tiles are peeled (masked
// transfers only there).
// CHECK-LABEL: func.func @odd
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         scf.forall ({{.*}}) in (3)
// CHECK:           vector.fma
// CHECK:           vector.{{create|constant}}_mask
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return
func.func @odd(%a: tensor<3x7x5xf32>, %b: tensor<3x5x70xf32>, %c: tensor<3x7x70xf32>) -> tensor<3x7x70xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x7x5xf32>, tensor<3x5x70xf32>) outs(%c : tensor<3x7x70xf32>) -> tensor<3x7x70xf32>
  return %r : tensor<3x7x70xf32>
}

// Not a batched matmul (three loops): left alone.
// CHECK-LABEL: func.func @plain
// CHECK:         linalg.matmul
func.func @plain(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
