// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/conv_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_conv_cpu | FileCheck %s

// Stride 1 (mode A): output channels packed by 16, a forall over the 4 channel
// blocks; in it the filter block is packed ([16 x 3 x 3] vector transposes), the
// zero init vectorized, then a 24x16 accumulator (ow 24 x 16 channels) carried
// in registers through the c/kh/kw loops (FMAs), the ow remainder (28 = 24 + 4)
// peeled, and the packed block unpacked to NCHW.
// CHECK-LABEL: func.func @conv3x3_s1
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         scf.forall ({{.*}}) in (4) shared_outs
// CHECK:           vector.transfer_read {{.*}} : tensor<1x16x64x3x3xf32>, vector<1x16x1x3x3xf32>
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x3x3x16xf32>, tensor<1x64x3x3x16xf32>
// CHECK:           vector.transfer_write {{.*}} : vector<1x1x1x28x16xf32>, tensor<1x1x28x28x16xf32>
// CHECK:           scf.for {{.*}} to %c28 step %c1
// CHECK:             scf.for {{.*}} to %c64 step %c4 iter_args({{.*}}) -> ({{.*}}vector<24x16xf32>)
// CHECK:               scf.for {{.*}} to %c3 step %c1
// CHECK:                 scf.for {{.*}} to %c3 step %c1 iter_args({{.*}}) -> ({{.*}}vector<24x16xf32>)
// CHECK-NOT:               vector.transfer_write
// CHECK:                   vector.fma {{.*}} : vector<16xf32>
// CHECK:                   scf.yield
// CHECK:             vector.transfer_write {{.*}} : vector<24x16xf32>, tensor<1x1x1x24x16xf32>
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> ({{.*}}vector<4x16xf32>)
// CHECK:                   vector.fma {{.*}} : vector<16xf32>
// CHECK:           scf.for {{.*}} to %c28 step %c1
// CHECK:             vector.transfer_write {{.*}} : vector<1x16x1x16xf32>, tensor<1x16x28x28xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         return
func.func @conv3x3_s1(%in: tensor<1x64x30x30xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x28x28xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%in, %w : tensor<1x64x30x30xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %r : tensor<1x64x28x28xf32>
}

// Stride 2, 3x3, odd channel count, bias init (mode B): packed by 32 (40 -> 64,
// 2 forall iterations), the broadcast bias packed inside the forall; the ow loop
// is unrolled by 7: seven vector<32> accumulators through the c/kh loops, the
// contraction over kw becomes FMAs.
// CHECK-LABEL: func.func @conv3x3_s2_bias
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         scf.forall ({{.*}}) in (2) shared_outs
// CHECK:           scf.for {{.*}} to %c14 step %c7
// CHECK:             scf.for {{.*}} to %c24 step %c1 iter_args({{.*}}vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK:               scf.for {{.*}} to %c3 step %c1
// CHECK:                 vector.fma {{.*}} : vector<32xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         return
func.func @conv3x3_s2_bias(%in: tensor<1x24x29x29xf32>, %w: tensor<40x24x3x3xf32>, %b: tensor<40xf32>) -> tensor<1x40x14x14xf32> {
  %e = tensor.empty() : tensor<1x40x14x14xf32>
  %bb = linalg.broadcast ins(%b : tensor<40xf32>) outs(%e : tensor<1x40x14x14xf32>) dimensions = [0, 2, 3]
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%in, %w : tensor<1x24x29x29xf32>, tensor<40x24x3x3xf32>) outs(%bb : tensor<1x40x14x14xf32>) -> tensor<1x40x14x14xf32>
  return %r : tensor<1x40x14x14xf32>
}

// 1x1 stride 2 (downsample, mode C): ow unrolled by 7, contraction over 8 input
// channels per step.
// CHECK-LABEL: func.func @conv1x1_s2
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         scf.forall ({{.*}}) in (2) shared_outs
// CHECK:           scf.for {{.*}} to %c14 step %c7
// CHECK:             scf.for {{.*}} to %c32 step %c8 iter_args({{.*}}vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK:               vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         return
func.func @conv1x1_s2(%in: tensor<1x32x28x28xf32>, %w: tensor<64x32x1x1xf32>) -> tensor<1x64x14x14xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x14x14xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%in, %w : tensor<1x32x28x28xf32>, tensor<64x32x1x1xf32>) outs(%f : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  return %r : tensor<1x64x14x14xf32>
}

