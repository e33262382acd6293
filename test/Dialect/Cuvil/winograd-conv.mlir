// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-winograd-conv))" | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-winograd-conv{output-tile=2}))" | FileCheck %s --check-prefix=TILE2
// RUN: not cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-winograd-conv{output-tile=3}))" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-winograd-conv{min-input-channels=8 min-output-size=7 min-tiles-for-f4=1}))" | FileCheck %s --check-prefix=OPTS
// 3x3 stride-1 NCHW convolutions become Winograd F(m x m, 3 x 3): input
// transpose to HWC, two 1-D input transforms, the filter transform (a weight-
// only generic), one batch_matmul over the (m+2)^2 tile positions, two 1-D
// output transforms, transpose back to NCHW.

// BAD: output-tile must be 0, 2 or 4, got 3

// 34x34 (padded) input -> 32x32 output: 64 tiles of 4x4, so F(4x4) (auto); no
// extra padding.
// The transforms' loops run the coefficient dim second innermost (rows of
// one tap's outputs): (th, w, a, c) -> [a, th, w, c], (a, th, tw, b, c) ->
// [a, b, th, tw, c], (b, th, tw, p, f) -> [p, b, th, tw, f]; the last output
// pass's q is second innermost already.
// CHECK-DAG:     #[[$T1:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1, d3)>
// CHECK-DAG:     #[[$V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d2, d4)>
// CHECK-DAG:     #[[$S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d2, d4)>
// CHECK-LABEL: func.func @exact_tiles
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x16x34x34xf32>) outs(%{{.*}} : tensor<1x34x34x16xf32>) permutation = [0, 2, 3, 1]
// CHECK:         linalg.generic {indexing_maps = [{{.*}}, #[[$T1]]]{{.*}} outs(%{{.*}} : tensor<6x8x34x16xf32>)
// CHECK:           math.fma
// CHECK:         linalg.generic {indexing_maps = [{{.*}}, #[[$V]]]{{.*}} outs(%{{.*}} : tensor<6x6x8x8x16xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<48x16x3x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>)
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<36x64x16xf32>, tensor<36x16x48xf32>) outs(%{{.*}} : tensor<36x64x48xf32>)
// CHECK:         linalg.generic {indexing_maps = [{{.*}}, #[[$S]]]{{.*}} outs(%{{.*}} : tensor<4x6x8x8x48xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<8x4x8x4x48xf32>)
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[Y:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [1, 32, 32, 48]
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    %[[R:.*]] = linalg.transpose ins(%[[Y]] : tensor<1x32x32x48xf32>) outs(%{{.*}} : tensor<1x48x32x32xf32>) permutation = [0, 3, 1, 2]
// CHECK-NEXT:    return %[[R]]
// TILE2-LABEL: func.func @exact_tiles
// TILE2:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x256x16xf32>, tensor<16x16x48xf32>)
func.func @exact_tiles(%x: tensor<1x16x34x34xf32>, %w: tensor<48x16x3x3xf32> {cuvil.weight}) -> tensor<1x48x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x32x32xf32>) -> tensor<1x48x32x32xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x16x34x34xf32>, tensor<48x16x3x3xf32>) outs(%init : tensor<1x48x32x32xf32>) -> tensor<1x48x32x32xf32>
  return %y : tensor<1x48x32x32xf32>
}

// -----

// 15x17 output: 20 tiles of 4x4 would be too few, so F(2x2) (auto), 8x9 tiles
// of 2x2; the input is zero-padded up to whole tiles, the result cropped; a
// non-zero init (a bias) is added at the end.
// CHECK-LABEL: func.func @partial_tiles_with_init
// CHECK:         tensor.pad %{{.*}} low[0, 0, 0] high[1, 1, 0]
// CHECK:         : tensor<17x19x24xf32> to tensor<18x20x24xf32>
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x72x24xf32>, tensor<16x24x40xf32>)
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0] [15, 17, 40] [1, 1, 1] : tensor<16x18x40xf32> to tensor<15x17x40xf32>
// CHECK:         %[[INIT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x40x15x17xf32>) outs(%{{.*}} : tensor<1x15x17x40xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[INIT]] : tensor<1x15x17x40xf32>, tensor<1x15x17x40xf32>)
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[SUM]] : tensor<1x15x17x40xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK:         return %[[R]]
func.func @partial_tiles_with_init(%x: tensor<1x24x17x19xf32>, %w: tensor<40x24x3x3xf32> {cuvil.weight},
                                   %init: tensor<1x40x15x17xf32>) -> tensor<1x40x15x17xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x24x17x19xf32>, tensor<40x24x3x3xf32>) outs(%init : tensor<1x40x15x17xf32>) -> tensor<1x40x15x17xf32>
  return %y : tensor<1x40x15x17xf32>
}

// -----

// Left to the direct schedule: stride 2, a 5x5 filter, batch 2, too few
// channels, and (by default only) a 7x7 output. The thresholds are options:
// with 8 input channels and 7x7 outputs allowed (and F(4x4) from one tile
// on), the last two convs are rewritten.
// CHECK-LABEL: func.func @not_candidates
// CHECK-COUNT-5: linalg.conv_2d_nchw_fchw
// CHECK-NOT:     linalg.batch_matmul
// TILE2-LABEL: func.func @not_candidates
// TILE2-COUNT-4: linalg.conv_2d_nchw_fchw
// TILE2:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x16x64xf32>, tensor<16x64x64xf32>)
// OPTS-LABEL: func.func @not_candidates
// OPTS-COUNT-3: linalg.conv_2d_nchw_fchw
// OPTS:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<36x16x8xf32>, tensor<36x8x64xf32>)
// OPTS:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<36x4x64xf32>, tensor<36x64x64xf32>)
// OPTS-NOT:     linalg.conv_2d_nchw_fchw
// OPTS:         return
func.func @not_candidates(%x: tensor<1x64x17x17xf32>, %w: tensor<64x64x3x3xf32> {cuvil.weight},
                          %w5: tensor<64x64x5x5xf32> {cuvil.weight},
                          %xb: tensor<2x64x16x16xf32>, %xs: tensor<1x8x16x16xf32>, %ws: tensor<64x8x3x3xf32> {cuvil.weight},
                          %x7: tensor<1x64x9x9xf32>)
    -> (tensor<1x64x8x8xf32>, tensor<1x64x13x13xf32>, tensor<2x64x14x14xf32>, tensor<1x64x14x14xf32>, tensor<1x64x7x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x64x8x8xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %s2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
          ins(%x, %w : tensor<1x64x17x17xf32>, tensor<64x64x3x3xf32>) outs(%i0 : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %e1 = tensor.empty() : tensor<1x64x13x13xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x64x13x13xf32>) -> tensor<1x64x13x13xf32>
  %k5 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
          ins(%x, %w5 : tensor<1x64x17x17xf32>, tensor<64x64x5x5xf32>) outs(%i1 : tensor<1x64x13x13xf32>) -> tensor<1x64x13x13xf32>
  %e2 = tensor.empty() : tensor<2x64x14x14xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x64x14x14xf32>) -> tensor<2x64x14x14xf32>
  %b2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
          ins(%xb, %w : tensor<2x64x16x16xf32>, tensor<64x64x3x3xf32>) outs(%i2 : tensor<2x64x14x14xf32>) -> tensor<2x64x14x14xf32>
  %e3 = tensor.empty() : tensor<1x64x14x14xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %c8 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
          ins(%xs, %ws : tensor<1x8x16x16xf32>, tensor<64x8x3x3xf32>) outs(%i3 : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %e4 = tensor.empty() : tensor<1x64x7x7xf32>
  %i4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %o7 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
          ins(%x7, %w : tensor<1x64x9x9xf32>, tensor<64x64x3x3xf32>) outs(%i4 : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  return %s2, %k5, %b2, %c8, %o7 : tensor<1x64x8x8xf32>, tensor<1x64x13x13xf32>, tensor<2x64x14x14xf32>, tensor<1x64x14x14xf32>, tensor<1x64x7x7xf32>
}

// -----

// A filter that is not a weight (a plain argument) would need its transform
// on every call: left alone.
// CHECK-LABEL: func.func @filter_not_a_weight
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-NOT:     linalg.batch_matmul
func.func @filter_not_a_weight(%x: tensor<1x16x34x34xf32>, %w: tensor<48x16x3x3xf32>) -> tensor<1x48x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x32x32xf32>) -> tensor<1x48x32x32xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x16x34x34xf32>, tensor<48x16x3x3xf32>) outs(%init : tensor<1x48x32x32xf32>) -> tensor<1x48x32x32xf32>
  return %y : tensor<1x48x32x32xf32>
}

// -----

// An input larger than the windows need (20x21 for a 16x16 output, legal for
// linalg): the unused rows/cols are sliced off before the tile padding.
// CHECK-LABEL: func.func @input_larger_than_windows
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x16x20x21xf32>) outs(%{{.*}} : tensor<1x20x21x16xf32>)
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 0] [18, 18, 16] [1, 1, 1] : tensor<20x21x16xf32> to tensor<18x18x16xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<16x64x16xf32>, tensor<16x16x48xf32>)
func.func @input_larger_than_windows(%x: tensor<1x16x20x21xf32>, %w: tensor<48x16x3x3xf32> {cuvil.weight}) -> tensor<1x48x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x16x20x21xf32>, tensor<48x16x3x3xf32>) outs(%init : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  return %y : tensor<1x48x16x16xf32>
}
