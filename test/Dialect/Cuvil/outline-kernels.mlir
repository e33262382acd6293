// RUN: cuvil-opt %s --split-input-file --cuvil-outline-kernels | FileCheck %s
// Every static linalg op on tensors moves into a private kernel
// @cuvil_kernel_<n>_<op> {cuvil.kernel = <n>}; identical kernels (same op,
// shapes, constants) are one function; the empty tensor the op writes
// becomes the kernel's last argument (destination passing).

// Two layers of the same shapes, different weights: one kernel per op, each
// called twice. The zero fill goes inside the kernel.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32>, %[[W1:.*]]: tensor<8x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[M0:.*]] = call @cuvil_kernel_0_matmul(%[[X]], %[[W0]], %[[E]])
// CHECK:         %[[R0:.*]] = call @cuvil_kernel_1_generic(%[[M0]], %[[E]])
// CHECK:         %[[M1:.*]] = call @cuvil_kernel_0_matmul(%[[R0]], %[[W1]], %[[E]])
// CHECK:         %[[R1:.*]] = call @cuvil_kernel_1_generic(%[[M1]], %[[E]])
// CHECK:         return %[[R1]]
// CHECK-LABEL: func.func private @cuvil_kernel_0_matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x8xf32>, %[[OUT:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-SAME:    attributes {cuvil.kernel = 0 : i64}
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4x8xf32>)
// CHECK:         linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F]] : tensor<4x8xf32>)
// CHECK-LABEL: func.func private @cuvil_kernel_1_generic
// CHECK-SAME:    attributes {cuvil.kernel = 1 : i64}
// CHECK:         arith.maximumf
// CHECK-NOT:   func.func private
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%r0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r1 : tensor<4x8xf32>
}

// -----

// Different constants make different kernels; a slice read by one op goes
// into its kernel (the whole tensor is passed, not a copy of the slice).
// CHECK-LABEL: func.func @slices
// CHECK:         call @cuvil_kernel_0_generic(%arg0, %{{.*}})
// CHECK:         call @cuvil_kernel_1_generic(%arg0, %{{.*}})
// CHECK-LABEL: func.func private @cuvil_kernel_0_generic
// CHECK-SAME:    (%[[T:.*]]: tensor<4x16xf32>, %{{.*}}: tensor<4x8xf32>)
// CHECK:         arith.constant 2.000000e+00
// CHECK:         tensor.extract_slice %[[T]][0, 0] [4, 8] [1, 1]
// CHECK-LABEL: func.func private @cuvil_kernel_1_generic
// CHECK:         arith.constant 3.000000e+00
// CHECK:         tensor.extract_slice %{{.*}}[0, 8] [4, 8] [1, 1]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slices(%t: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = tensor.extract_slice %t[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %b = tensor.extract_slice %t[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %ra = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %rb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %three : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %ra, %rb : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Dynamic shapes stay in place.
// CHECK-LABEL: func.func @dynamic
// CHECK:         linalg.generic
// CHECK-NOT:   func.func private
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic(%x: tensor<?x8xf32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A broadcast initializing a matmul's accumulator is outlined with the
// matmul (its schedule writes it tile by tile); the kernel takes the vector
// and the empty destination, not a broadcast tensor.
// CHECK-LABEL: func.func @broadcast_init
// CHECK-NOT:     linalg.generic
// CHECK:         call @cuvil_kernel_0_matmul(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16xi32>, tensor<4x8xi32>, tensor<8x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-LABEL: func.func private @cuvil_kernel_0_matmul
// CHECK:         %[[INIT:.*]] = linalg.generic
// CHECK:         linalg.matmul {{.*}} outs(%[[INIT]] : tensor<4x16xi32>)
#col = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @broadcast_init(%s: tensor<16xi32>, %x: tensor<4x8xi32>, %w: tensor<8x16xi32>) -> tensor<4x16xi32> {
  %e = tensor.empty() : tensor<4x16xi32>
  %init = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16xi32>) outs(%e : tensor<4x16xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<4x16xi32>
  %r = linalg.matmul ins(%x, %w : tensor<4x8xi32>, tensor<8x16xi32>) outs(%init : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}

// -----

// A zero fill of a reshaped empty tensor (a VNNI matmul's [m][n/64][64]
// accumulator), shared by two contractions: rebuilt inside each kernel, and
// the reshaped empty tensor is the destination argument, of the type the
// kernel returns (no fill left in main to be copied for each call).
// CHECK-LABEL: func.func @reshaped_fill
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x128xf32>
// CHECK:         %[[D:.*]] = tensor.expand_shape %[[E]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 64]
// CHECK:         call @cuvil_kernel_0_generic(%arg0, %arg1, %[[D]])
// CHECK:         call @cuvil_kernel_0_generic(%arg0, %arg2, %[[D]])
// CHECK-LABEL: func.func private @cuvil_kernel_0_generic
// CHECK-SAME:    (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<2x8x64xf32>, %[[OUT:.*]]: tensor<4x2x64xf32>) -> tensor<4x2x64xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4x2x64xf32>)
// CHECK:         linalg.generic {{.*}} outs(%[[F]] : tensor<4x2x64xf32>)
#a = affine_map<(m, p, j, k) -> (m, k)>
#b = affine_map<(m, p, j, k) -> (p, k, j)>
#c = affine_map<(m, p, j, k) -> (m, p, j)>
func.func @reshaped_fill(%x: tensor<4x8xf32>, %b0: tensor<2x8x64xf32>, %b1: tensor<2x8x64xf32>)
    -> (tensor<4x2x64xf32>, tensor<4x2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %d = tensor.expand_shape %e [[0], [1, 2]] output_shape [4, 2, 64] : tensor<4x128xf32> into tensor<4x2x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%d : tensor<4x2x64xf32>) -> tensor<4x2x64xf32>
  %r0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %b0 : tensor<4x8xf32>, tensor<2x8x64xf32>) outs(%f : tensor<4x2x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2x64xf32>
  %r1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %b1 : tensor<4x8xf32>, tensor<2x8x64xf32>) outs(%f : tensor<4x2x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2x64xf32>
  return %r0, %r1 : tensor<4x2x64xf32>, tensor<4x2x64xf32>
}

// -----

// Layer norm over rows: the mean, the centering, the variance and the
// normalization are one kernel (a row chain, marked for the elementwise
// schedule); the truncation after it, whose input is also returned, is not.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @layer_norm_chain
// CHECK:         %[[N:.*]] = call @cuvil_kernel_0_generic(%arg0,
// CHECK:         call @cuvil_kernel_1_generic(%[[N]],
// CHECK-LABEL: func.func private @cuvil_kernel_0_generic
// CHECK-SAME:    cuvil.row_chain
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func private @cuvil_kernel_1_generic
// CHECK-NOT:     cuvil.row_chain
// CHECK-SAME:    {
func.func @layer_norm_chain(%x: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %er = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %c = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<16x64xf32>, tensor<16xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.divf %s, %n : f32
    %v = arith.subf %a, %m : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %var = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %v = arith.addf %sq, %acc : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %norm = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %var : tensor<16x64xf32>, tensor<16xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %v: f32, %out: f32):
    %m = arith.divf %v, %n : f32
    %r = math.rsqrt %m : f32
    %y = arith.mulf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<16x64xf32>
  %eb = tensor.empty() : tensor<16x64xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%norm : tensor<16x64xf32>) outs(%eb : tensor<16x64xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %v = arith.truncf %a : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<16x64xbf16>
  return %norm, %t : tensor<16x64xf32>, tensor<16x64xbf16>
}

// -----

// A pad fed only by an op's result (through a reshape): the op's kernel
// writes the padded tensor. The border is filled (rows 0 and 5..6, then
// columns 0..1 and 10..11 of the interior rows), the op writes the interior
// through a view of the kernel's destination, and main keeps no pad.
// CHECK-LABEL: func.func @pad_sink
// CHECK-NOT:     tensor.pad
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<7x12xi8>
// CHECK:         %[[K:.*]] = call @cuvil_kernel_0_generic(%arg0, %[[E]]) : (tensor<4x2x4xf32>, tensor<7x12xi8>) -> tensor<7x12xi8>
// CHECK:         tensor.expand_shape %[[K]]
// CHECK-LABEL: func.func private @cuvil_kernel_0_generic
// CHECK-SAME:    (%[[X:.*]]: tensor<4x2x4xf32>, %[[OUT:.*]]: tensor<7x12xi8>) -> tensor<7x12xi8>
// CHECK:         %[[V:.*]] = arith.constant -3 : i8
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[OUT]][0, 0] [1, 12] [1, 1]
// CHECK:         %[[F0:.*]] = linalg.fill ins(%[[V]] : i8) outs(%[[S0]] : tensor<1x12xi8>)
// CHECK:         %[[D0:.*]] = tensor.insert_slice %[[F0]] into %[[OUT]][0, 0] [1, 12] [1, 1]
// CHECK:         tensor.extract_slice %[[D0]][5, 0] [2, 12] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[1, 0] [4, 2] [1, 1]
// CHECK:         %[[S3:.*]] = tensor.extract_slice %{{.*}}[1, 10] [4, 2] [1, 1]
// CHECK:         %[[F3:.*]] = linalg.fill ins(%[[V]] : i8) outs(%[[S3]] : tensor<4x2xi8>)
// CHECK:         %[[D3:.*]] = tensor.insert_slice %[[F3]]
// CHECK:         %[[IN:.*]] = tensor.extract_slice %[[D3]][1, 2] [4, 8] [1, 1]
// CHECK:         %[[VIEW:.*]] = tensor.expand_shape %[[IN]] {{\[}}[0], [1, 2]] output_shape [4, 2, 4]
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x2x4xf32>) outs(%[[VIEW]] : tensor<4x2x4xi8>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[R]]
// CHECK:         %[[P:.*]] = tensor.insert_slice %[[C]] into %[[D3]][1, 2] [4, 8] [1, 1]
// CHECK:         return %[[P]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pad_sink(%x: tensor<4x2x4xf32>) -> tensor<1x7x3x4xi8> {
  %pv = arith.constant -3 : i8
  %e = tensor.empty() : tensor<4x2x4xi8>
  %q = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2x4xf32>) outs(%e : tensor<4x2x4xi8>) {
  ^bb0(%a: f32, %out: i8):
    %v = arith.fptosi %a : f32 to i8
    linalg.yield %v : i8
  } -> tensor<4x2x4xi8>
  %c = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x4xi8> into tensor<4x8xi8>
  %p = tensor.pad %c low[1, 2] high[2, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : i8
  } : tensor<4x8xi8> to tensor<7x12xi8>
  %r = tensor.expand_shape %p [[0, 1], [2, 3]] output_shape [1, 7, 3, 4] : tensor<7x12xi8> into tensor<1x7x3x4xi8>
  return %r : tensor<1x7x3x4xi8>
}

// -----

// Not sunk: a result padded twice (which pad would the kernel write?), and
// an op that reads its init. The pads stay in main.
// CHECK-LABEL: func.func @pad_not_sunk
// CHECK:         %[[Q:.*]] = call @cuvil_kernel_0_generic(%arg0, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         tensor.pad %[[Q]] low[1, 1]
// CHECK:         tensor.pad %[[Q]] low[2, 2]
// CHECK:         %[[A:.*]] = call @cuvil_kernel_1_generic(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         tensor.pad %[[A]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @pad_not_sunk(%x: tensor<4x8xf32>) -> (tensor<6x10xf32>, tensor<8x12xf32>, tensor<6x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.maximumf %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %p = tensor.pad %q low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  %p1 = tensor.pad %q low[2, 2] high[2, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<8x12xf32>
  %acc = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.addf %a, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %p2 = tensor.pad %acc low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  return %p, %p1, %p2 : tensor<6x10xf32>, tensor<8x12xf32>, tensor<6x10xf32>
}

// -----

// Side users of a sunk pad's source read its interior: an elementwise user
// (the next block's residual add) and a gather (a strided 1x1 conv's
// windows, read by tensor.extract in its body) take the padded tensor into
// their kernels and slice it there; a matmul gets the view from main (a
// dense copy after bufferization, as for any strided argument).
// CHECK-LABEL: func.func @pad_sink_side_users
// CHECK-NOT:     tensor.pad
// CHECK:         %[[P:.*]] = call @cuvil_kernel_0_generic(%arg0, %{{.*}}) : (tensor<4x8xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
// CHECK:         %[[V:.*]] = tensor.extract_slice %[[P]][1, 1] [4, 8] [1, 1]
// CHECK:         call @cuvil_kernel_1_generic(%[[P]], %arg0, %{{.*}}) : (tensor<6x10xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:         call @cuvil_kernel_2_matmul(%[[V]], %arg1, %{{.*}})
// CHECK:         call @cuvil_kernel_3_generic(%[[P]], %{{.*}}) : (tensor<6x10xf32>, tensor<2x4xf32>)
// CHECK-LABEL: func.func private @cuvil_kernel_1_generic
// CHECK-SAME:    (%[[PADDED:.*]]: tensor<6x10xf32>, %[[X:.*]]: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32>)
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[PADDED]][1, 1] [4, 8] [1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-LABEL: func.func private @cuvil_kernel_3_generic
// CHECK-SAME:    (%[[PADDED3:.*]]: tensor<6x10xf32>, %{{.*}}: tensor<2x4xf32>)
// CHECK:         %[[S3:.*]] = tensor.extract_slice %[[PADDED3]][1, 1] [4, 8] [1, 1]
// CHECK:         tensor.extract %[[S3]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @pad_sink_side_users(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<6x10xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.maximumf %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %p = tensor.pad %q low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %q : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%q, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %eg = tensor.empty() : tensor<2x4xf32>
  %g = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%eg : tensor<2x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %i2 = arith.muli %i, %c2 : index
    %j2 = arith.muli %j, %c2 : index
    %v = tensor.extract %q[%i2, %j2] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %p, %sum, %m, %g : tensor<6x10xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4xf32>
}

// -----

// A pool's init is the fill of an empty tensor: sunk, the fill initializes
// the interior view and the pool accumulates into it.
// CHECK-LABEL: func.func @pad_sink_pool
// CHECK-NOT:     tensor.pad
// CHECK:         call @cuvil_kernel_0_pooling_nhwc_max(%arg0, %{{.*}}) : (tensor<1x8x8x4xf32>, tensor<6x24xf32>) -> tensor<6x24xf32>
// CHECK-LABEL: func.func private @cuvil_kernel_0_pooling_nhwc_max
// CHECK:         %[[IN:.*]] = tensor.extract_slice %{{.*}}[1, 4] [4, 16] [1, 1]
// CHECK:         %[[VIEW:.*]] = tensor.expand_shape %[[IN]] {{\[}}[0, 1], [2, 3]] output_shape [1, 4, 4, 4]
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : tensor<1x4x4x4xf32>)
// CHECK:         %[[P:.*]] = linalg.pooling_nhwc_max {{.*}} outs(%[[F]] : tensor<1x4x4x4xf32>)
// CHECK:         tensor.collapse_shape %[[P]]
func.func @pad_sink_pool(%x: tensor<1x8x8x4xf32>) -> tensor<6x24xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<1x8x8x4xf32>, tensor<2x2xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<1x4x4x4xf32> into tensor<4x16xf32>
  %pd = tensor.pad %c low[1, 4] high[1, 4] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x16xf32> to tensor<6x24xf32>
  return %pd : tensor<6x24xf32>
}

// -----

// Not sunk: the padding value is computed after the op (the kernel would be
// called before it exists).
// CHECK-LABEL: func.func @pad_value_after_the_op
// CHECK:         %[[Q:.*]] = call @cuvil_kernel_0_generic(%arg0, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         %[[V:.*]] = arith.addf %arg1, %arg1
// CHECK:         tensor.pad %[[Q]]
// CHECK:         tensor.yield %[[V]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @pad_value_after_the_op(%x: tensor<4x8xf32>, %s: f32) -> tensor<6x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.maximumf %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %pv = arith.addf %s, %s : f32
  %p = tensor.pad %q low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  return %p : tensor<6x10xf32>
}
