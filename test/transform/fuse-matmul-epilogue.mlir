// RUN: cuvil-opt %S/Inputs/matmul_bias_relu.mlir --transform-preload-library=transform-library-paths=%S/Inputs/fuse_matmul_epilogue.mlir --transform-interpreter=entry-point=fuse_matmul_epilogue --canonicalize | FileCheck %s

// One loop nest holds both the matmul tile and the bias+relu tile, each
// vectorized; nothing of either is left outside the loop.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (8, 8)
// CHECK:           vector.contract
// CHECK:           arith.addf {{.*}} : vector<8x32xf32>
// CHECK:           arith.maximumf {{.*}} : vector<8x32xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.
// CHECK:         return
