// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-collapse-short-rows))' | FileCheck %s
// Elementwise ops on short rows get their trailing loops merged where every
// operand reads them contiguously (or not at all).

// A per-channel requantize of [C, 7, 7]: one loop of 49 per channel.
// CHECK-LABEL: func.func @per_channel
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<512x7x7xi32> into tensor<512x49xi32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<512x49xi32>, tensor<512xf32>)
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [512, 7, 7] : tensor<512x49xi8> into tensor<512x7x7xi8>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d0)>
func.func @per_channel(%x: tensor<512x7x7xi32>, %s: tensor<512xf32>, %o: tensor<512x7x7xi8>) -> tensor<512x7x7xi8> {
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<512x7x7xi32>, tensor<512xf32>) outs(%o : tensor<512x7x7xi8>) {
  ^bb0(%a: i32, %b: f32, %out: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %b : f32
    %i = arith.fptosi %m : f32 to i8
    linalg.yield %i : i8
  } -> tensor<512x7x7xi8>
  return %r : tensor<512x7x7xi8>
}

// -----

// Merging stops once the row holds 64 elements: [2, 8, 8, 4] -> [2, 256]
// needs d1 (8 x 4 = 32 < 64, then 8 x 32 = 256): d0 stays.
// CHECK-LABEL: func.func @stops_at_a_vector_row
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<2x8x8x4xf32> into tensor<2x256xf32>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @stops_at_a_vector_row(%x: tensor<2x8x8x4xf32>, %o: tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32> {
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x8x4xf32>) outs(%o : tensor<2x8x8x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x8x8x4xf32>
  return %r : tensor<2x8x8x4xf32>
}

// -----

// A reduction over the trailing [7, 7] (a global average pool with the
// residual add fused in) reduces rows of 49; a reduction loop never merges
// with a parallel one (@left_alone).
// CHECK-LABEL: func.func @pool_over_trailing_dims
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<512x7x7xi32> into tensor<512x49xi32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<512x49xi32>, tensor<512xf32>) outs(%{{.*}} : tensor<512xf32>)
#pool_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pool_ch = affine_map<(d0, d1, d2) -> (d0)>
func.func @pool_over_trailing_dims(%x: tensor<512x7x7xi32>, %s: tensor<512xf32>, %o: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.generic {indexing_maps = [#pool_in, #pool_ch, #pool_ch], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %s : tensor<512x7x7xi32>, tensor<512xf32>) outs(%o : tensor<512xf32>) {
  ^bb0(%a: i32, %b: f32, %out: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %b : f32
    %sum = arith.addf %m, %out : f32
    linalg.yield %sum : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

// Rows of 64 or more, a transposed operand, a gather and a reduction keep
// their loops.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%long: tensor<4x8x64xf32>, %x: tensor<4x7x7xf32>, %table: tensor<100xf32>, %idx: tensor<4x7x7xindex>)
    -> (tensor<4x8x64xf32>, tensor<4x7x7xf32>, tensor<4x7x7xf32>, tensor<4x7xf32>) {
  %a = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%long : tensor<4x8x64xf32>) outs(%long : tensor<4x8x64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x8x64xf32>
  %b = linalg.generic {indexing_maps = [#tr, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x7x7xf32>) outs(%x : tensor<4x7x7xf32>) {
  ^bb0(%v: f32, %out: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x7x7xf32>
  %c = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%idx : tensor<4x7x7xindex>) outs(%x : tensor<4x7x7xf32>) {
  ^bb0(%i: index, %out: f32):
    %v = tensor.extract %table[%i] : tensor<100xf32>
    linalg.yield %v : f32
  } -> tensor<4x7x7xf32>
  %e = tensor.empty() : tensor<4x7xf32>
  %d = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x7x7xf32>) outs(%e : tensor<4x7xf32>) {
  ^bb0(%v: f32, %out: f32):
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x7xf32>
  return %a, %b, %c, %d : tensor<4x8x64xf32>, tensor<4x7x7xf32>, tensor<4x7x7xf32>, tensor<4x7xf32>
}

// -----

// A window (unfold: input row d0 + d4) is no permutation: left as it is
// (upstream's dim-sequence check asserted on it: the process died).
#window = affine_map<(d0, d1, d2) -> (d0 + d2, d1)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @window_stays
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%{{.*}} : tensor<5x5xf32>)
// CHECK:         } -> tensor<3x5x3xf32>
func.func @window_stays(%x: tensor<5x5xf32>) -> tensor<3x5x3xf32> {
  %e = tensor.empty() : tensor<3x5x3xf32>
  %w = linalg.generic {indexing_maps = [#window, #out3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<5x5xf32>) outs(%e : tensor<3x5x3xf32>) {
  ^bb0(%v: f32, %out: f32):
    linalg.yield %v : f32
  } -> tensor<3x5x3xf32>
  return %w : tensor<3x5x3xf32>
}

// -----

// A channels-last pad of H and W pads whole rows of W*C elements: C elements
// per padded W step.
// CHECK-LABEL: func.func @pad_whole_rows
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<56x56x64xi8> into tensor<56x3584xi8>
// CHECK:         %[[P:.*]] = tensor.pad %[[R]] low[1, 64] high[1, 64]
// CHECK:         } : tensor<56x3584xi8> to tensor<58x3712xi8>
// CHECK:         tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [58, 58, 64] : tensor<58x3712xi8> into tensor<58x58x64xi8>
func.func @pad_whole_rows(%x: tensor<56x56x64xi8>) -> tensor<58x58x64xi8> {
  %c = arith.constant -128 : i8
  %p = tensor.pad %x low[1, 1, 0] high[1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %c : i8
  } : tensor<56x56x64xi8> to tensor<58x58x64xi8>
  return %p : tensor<58x58x64xi8>
}

// -----

// A pad of the last dim (an NCHW pad of W) keeps its shape.
// CHECK-LABEL: func.func @pad_of_the_last_dim
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         tensor.pad %{{.*}} low[0, 1, 1] high[0, 1, 1]
func.func @pad_of_the_last_dim(%x: tensor<3x8x8xf32>) -> tensor<3x10x10xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %c : f32
  } : tensor<3x8x8xf32> to tensor<3x10x10xf32>
  return %p : tensor<3x10x10xf32>
}
