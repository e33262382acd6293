// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/matmul_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/batch_matmul_cpu.mlir \
// RUN:   --transform-interpreter | FileCheck %s --check-prefix=BMM

// The fallback for bf16 x bf16 -> f32 contractions (any AVX-512 host): the same
// register kernels as fp32, B's 64-wide row chunk and A's 4 values extended to
// f32 once per k, then FMAs on f32 (nothing unrolled to scalars). 100x70x33:
// peeled rows and masked columns.
// CHECK-LABEL: func.func @plain
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> ({{.*}}vector<4x64xf32>)
// CHECK:           arith.extf {{.*}} : vector<64xbf16> to vector<64xf32>
// CHECK-COUNT-4:   vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:     vector<1xf32>
// CHECK-NOT:     vector.contract
// CHECK:         return
func.func @plain(%a: tensor<100x33xbf16>, %b: tensor<33x70xbf16>) -> tensor<100x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x33xbf16>, tensor<33x70xbf16>) outs(%f : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}

// -----

// B-packed bf16 (pack_cpu.mlir's @cuvil_pack_matmul_rhs: 64-column panels).
// CHECK-LABEL: func.func @packed
// CHECK:         scf.for {{.*}} to %c256 step %c4 iter_args({{.*}}) -> ({{.*}}vector<4x1x64xf32>)
// CHECK:           arith.extf {{.*}} : vector<64xbf16> to vector<64xf32>
// CHECK-COUNT-4:   vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:     vector<1xf32>
// CHECK-NOT:     vector.contract
// CHECK:         return
func.func @packed(%x: tensor<64x256xbf16>, %bp: tensor<8x256x64xbf16>) -> tensor<64x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x8x64xf32>) -> tensor<64x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k, j) -> (m, k)>, affine_map<(m, n, k, j) -> (n, k, j)>,
                                        affine_map<(m, n, k, j) -> (m, n, j)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %bp : tensor<64x256xbf16>, tensor<8x256x64xbf16>) outs(%f : tensor<64x8x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x8x64xf32>
  return %r : tensor<64x8x64xf32>
}

// -----

// Attention-style batch matmul on bf16 activations (both operands bf16).
// BMM-LABEL: func.func @bmm
// BMM:         scf.forall
// BMM:           arith.extf {{.*}} : vector<64xbf16> to vector<64xf32>
// BMM-COUNT-4:   vector.fma {{.*}} : vector<64xf32>
// BMM-NOT:     vector<1xf32>
// BMM-NOT:     vector.contract
// BMM:         return
func.func @bmm(%a: tensor<3x37x33xbf16>, %b: tensor<3x33x70xbf16>) -> tensor<3x37x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x37x70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x37x70xf32>) -> tensor<3x37x70xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x37x33xbf16>, tensor<3x33x70xbf16>) outs(%f : tensor<3x37x70xf32>) -> tensor<3x37x70xf32>
  return %r : tensor<3x37x70xf32>
}
