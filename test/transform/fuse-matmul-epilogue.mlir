// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/matmul_bias_relu_fusion.mlir \
// RUN:   --transform-interpreter | FileCheck %s

// The shipped fusion schedule (entry point @__transform_main, TM=64, TN=256,
// TK=256, 4x64 register tiles) on relu(x @ W + b) as torch-mlir emits it.
// The output is 128x512, two tiles each way, so that the scf.forall is kept
// (a one-tile payload folds it away and fusion cannot be told from running
// the three ops one after the other). In each forall iteration: the fill of
// the 64x256 tile row by row, the matmul tile (K blocks of 256, 4x64
// accumulators carried in vectors through the k loop, one FMA per row), then
// the bias+relu epilogue reading that tile and the matching slice of b, and
// the result written into the shared output. Nothing runs outside the loop.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-SAME:    (%{{.*}}: tensor<128x512xf32>, %{{.*}}: tensor<512x512xf32>, %[[B:.*]]: tensor<512xf32>)
// CHECK-NOT:     linalg.
// CHECK-NOT:     scf.for
// CHECK:         %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<1x256xf32>
// CHECK-NOT:     linalg.
// CHECK-NOT:     scf.for
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 2) shared_outs(%[[OUTS:.*]] = %{{.*}}) -> (tensor<128x512xf32>) {
// CHECK:           %[[TILE:.*]] = tensor.extract_slice %[[OUTS]][%{{.*}}, %{{.*}}] [64, 256] [1, 1] : tensor<128x512xf32> to tensor<64x256xf32>
// CHECK:           %[[FILLED:.*]] = scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %[[TILE]]) -> (tensor<64x256xf32>) {
// CHECK:             vector.transfer_write %[[ZEROS]], %{{.*}} : vector<1x256xf32>, tensor<1x256xf32>
// CHECK:           %[[MM:.*]] = scf.for %{{.*}} = %c0 to %c512 step %c256 iter_args(%{{.*}} = %[[FILLED]]) -> (tensor<64x256xf32>) {
// CHECK:             scf.for %{{.*}} = %c0 to %c64 step %c4
// CHECK:               scf.for %{{.*}} = %c0 to %c256 step %c64
// CHECK:                 %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<4x64xf32>, vector<4x64xf32>
// CHECK:                 scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args({{.*}}, %{{.*}} = %[[ACC]]) -> ({{.*}}, vector<4x64xf32>) {
// CHECK-COUNT-4:             vector.fma {{.*}} : vector<64xf32>
// CHECK-NOT:                 vector.fma
// CHECK:                 vector.transfer_write {{.*}} : vector<4x64xf32>, tensor<4x64xf32>
// CHECK:           %[[BIAS:.*]] = tensor.extract_slice %[[B]][%{{.*}}] [256] [1] : tensor<512xf32> to tensor<256xf32>
// CHECK:           %[[EPI:.*]] = scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK:             tensor.extract_slice %[[MM]][%{{.*}}, 0] [1, 256] [1, 1] : tensor<64x256xf32> to tensor<1x256xf32>
// CHECK:             vector.transfer_read %[[BIAS]][%c0], %{{.*}} : tensor<256xf32>, vector<256xf32>
// CHECK:             %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<1x256xf32>
// CHECK-NEXT:        %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZEROS]] : vector<1x256xf32>
// CHECK-NEXT:        vector.transfer_write %[[RELU]], %{{.*}} : vector<1x256xf32>, tensor<1x256xf32>
// CHECK:           scf.forall.in_parallel {
// CHECK-NEXT:        tensor.parallel_insert_slice %[[EPI]] into %[[OUTS]]
// CHECK-NOT:     linalg.
// CHECK:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias_relu(%x: tensor<128x512xf32>, %w: tensor<512x512xf32>, %b: tensor<512xf32>) -> tensor<128x512xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<128x512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<128x512xf32>) -> tensor<128x512xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<128x512xf32>, tensor<512x512xf32>) outs(%acc : tensor<128x512xf32>) -> tensor<128x512xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<128x512xf32>, tensor<512xf32>) outs(%empty : tensor<128x512xf32>) {
  ^bb0(%m: f32, %bias: f32, %o: f32):
    %s = arith.addf %m, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x512xf32>
  return %out : tensor<128x512xf32>
}
