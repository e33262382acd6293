// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-unsigned-int8-lhs))" | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-unsigned-int8-lhs{shifted-rows}))" | FileCheck %s --check-prefix=SR

// The VNNI-packed int8 contraction pack_cpu.mlir makes of a 32x256x192
// matmul: the lhs flipped to unsigned (xor 0x80), read zero-extended; B's
// column sums in C's packed layout; C, a zero fill, starts at -128 x the sums
// (broadcast over the rows) instead, and nothing follows the contraction.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
// CHECK-LABEL: func.func @packed
// CHECK:         %[[FLIP:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32x64x4xi8>) outs(%{{.*}} : tensor<32x64x4xi8>)
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i8
// CHECK:         %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}} : tensor<3x64x64x4xi8>) outs(%{{.*}} : tensor<3x64xi32>)
// CHECK:           arith.extsi
// CHECK:           arith.addi
// CHECK:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<3x64xi32>) outs(%{{.*}} : tensor<3x64xi32>)
// CHECK:           %[[C:.*]] = arith.constant -128 : i32
// CHECK:           arith.muli %{{.*}}, %[[C]] : i32
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[NEG]] : tensor<3x64xi32>) outs(%{{.*}} : tensor<32x3x64xi32>)
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}} ins(%[[FLIP]], %{{.*}} : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%[[INIT]] : tensor<32x3x64xi32>)
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[DOT]]
func.func @packed(%a: tensor<32x64x4xi8>, %b: tensor<3x64x64x4xi8>) -> tensor<32x3x64xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x3x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x3x64xi32>) -> tensor<32x3x64xi32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%f : tensor<32x3x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %x32 = arith.extsi %x : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<32x3x64xi32>
  return %r : tensor<32x3x64xi32>
}

// -----

// C not a zero fill (here an argument: accumulating into a given tensor):
// 128 x the sums are subtracted from the result, in a pass after it.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
// CHECK-LABEL: func.func @packed_into_given_init
// CHECK:         %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction"]
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}} outs(%arg2 : tensor<32x3x64xi32>)
// CHECK:         %[[FIX:.*]] = linalg.generic {{.*}} ins(%[[DOT]], %[[SUMS]] : tensor<32x3x64xi32>, tensor<3x64xi32>)
// CHECK:           %[[S:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:           arith.subi %{{.*}}, %[[S]] : i32
// CHECK:         return %[[FIX]]
func.func @packed_into_given_init(%a: tensor<32x64x4xi8>, %b: tensor<3x64x64x4xi8>, %c: tensor<32x3x64xi32>) -> tensor<32x3x64xi32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%c : tensor<32x3x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %x32 = arith.extsi %x : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<32x3x64xi32>
  return %r : tensor<32x3x64xi32>
}

// -----

// An int8 matmul that was not VNNI-packed (here: the plain named op) and a
// packed contraction of another type keep their form.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     arith.xori
// CHECK-NOT:     arith.extui
// CHECK:         linalg.matmul
// CHECK-NOT:     arith.xori
// CHECK:         return
func.func @left_alone(%a: tensor<32x256xi8>, %b: tensor<256x192xi8>, %c: tensor<32x192xi32>,
                      %fa: tensor<32x64x4xi16>, %fb: tensor<3x64x64x4xi16>, %fc: tensor<32x3x64xi32>)
    -> (tensor<32x192xi32>, tensor<32x3x64xi32>) {
  %r = linalg.matmul ins(%a, %b : tensor<32x256xi8>, tensor<256x192xi8>) outs(%c : tensor<32x192xi32>) -> tensor<32x192xi32>
  %s = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%fa, %fb : tensor<32x64x4xi16>, tensor<3x64x64x4xi16>) outs(%fc : tensor<32x3x64xi32>) {
  ^bb0(%x: i16, %w: i16, %acc: i32):
    %x32 = arith.extsi %x : i16 to i32
    %w32 = arith.extsi %w : i16 to i32
    %p = arith.muli %x32, %w32 : i32
    %t = arith.addi %acc, %p : i32
    linalg.yield %t : i32
  } -> tensor<32x3x64xi32>
  return %r, %s : tensor<32x192xi32>, tensor<32x3x64xi32>
}

// -----

// A written by an elementwise op (a quantize) that only the contraction
// reads: the flip is added to what that op yields, no extra pass over A.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
#id = affine_map<(a, b) -> (a, b)>
// CHECK-LABEL: func.func @flip_in_producer
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<32x256xf32>) outs(%{{.*}} : tensor<32x256xi8>)
// CHECK:           %[[Q:.*]] = arith.fptosi
// CHECK:           %[[F:.*]] = arith.xori %[[Q]], %{{.*}} : i8
// CHECK:           linalg.yield %[[F]]
// CHECK:         tensor.expand_shape
// CHECK-NOT:     arith.xori
// CHECK:         arith.extui
func.func @flip_in_producer(%x: tensor<32x256xf32>, %b: tensor<3x64x64x4xi8>) -> tensor<32x3x64xi32> {
  %e8 = tensor.empty() : tensor<32x256xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x256xf32>) outs(%e8 : tensor<32x256xi8>) {
  ^bb0(%v: f32, %o: i8):
    %i = arith.fptosi %v : f32 to i8
    linalg.yield %i : i8
  } -> tensor<32x256xi8>
  %a = tensor.expand_shape %q [[0], [1, 2]] output_shape [32, 64, 4] : tensor<32x256xi8> into tensor<32x64x4xi8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x3x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x3x64xi32>) -> tensor<32x3x64xi32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%f : tensor<32x3x64xi32>) {
  ^bb0(%xa: i8, %w: i8, %acc: i32):
    %x32 = arith.extsi %xa : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<32x3x64xi32>
  return %r : tensor<32x3x64xi32>
}

// -----

// K = 250: the packing padded A with zero k columns (B with zero k rows):
// the flip still goes into the producer, and into the padding value (every
// element of A flips: a pad of the model's own meets real weights).
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
#id = affine_map<(a, b) -> (a, b)>
// CHECK-LABEL: func.func @flip_through_k_padding
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<32x250xi8>)
// CHECK:           arith.xori
// CHECK:         tensor.pad
// CHECK:           %[[P:.*]] = arith.xori %{{.*}}, %{{.*}} : i8
// CHECK:           tensor.yield %[[P]]
// CHECK-NOT:     arith.xori
// CHECK:         arith.extui
func.func @flip_through_k_padding(%x: tensor<32x250xf32>, %b: tensor<3x63x64x4xi8>) -> tensor<32x3x64xi32> {
  %e8 = tensor.empty() : tensor<32x250xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x250xf32>) outs(%e8 : tensor<32x250xi8>) {
  ^bb0(%v: f32, %o: i8):
    %i = arith.fptosi %v : f32 to i8
    linalg.yield %i : i8
  } -> tensor<32x250xi8>
  %z = arith.constant 0 : i8
  %p = tensor.pad %q low[0, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : i8
  } : tensor<32x250xi8> to tensor<32x252xi8>
  %a = tensor.expand_shape %p [[0], [1, 2]] output_shape [32, 63, 4] : tensor<32x252xi8> into tensor<32x63x4xi8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x3x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x3x64xi32>) -> tensor<32x3x64xi32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<32x63x4xi8>, tensor<3x63x64x4xi8>) outs(%f : tensor<32x3x64xi32>) {
  ^bb0(%xa: i8, %w: i8, %acc: i32):
    %x32 = arith.extsi %xa : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %pr = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %pr : i32
    linalg.yield %s : i32
  } -> tensor<32x3x64xi32>
  return %r : tensor<32x3x64xi32>
}

// -----

// cuvil-im2col-conv's int8 conv over shifted rows (rank 7, A the padded
// input as rows of pixels, B [F/64][KH][KW][C/4][64][4]): with shifted-rows
// (hosts with vpdpbusd and no AMX) the padded input's producer writes it
// flipped, the pad's value flips too, and C starts at -128 x B's column sums
// taken over kh, kw, c/4 and the quad. Without the option (AMX hosts'
// signed x signed tiles) it is left alone.
#sra = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#srb = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#src = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// SR-DAG:   #[[SUMIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// SR-DAG:   #[[SUMOUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4)>
// SR-LABEL: func.func @shifted_rows
// SR:         %[[Q:.*]] = linalg.generic
// SR:           %[[V:.*]] = arith.trunci %{{.*}} : i32 to i8
// SR:           %[[F:.*]] = arith.xori %[[V]], %{{.*}} : i8
// SR:           linalg.yield %[[F]] : i8
// SR:         tensor.pad %[[Q]]
// SR:           %[[PF:.*]] = arith.xori %{{.*}}, %{{.*}} : i8
// SR:           tensor.yield %[[PF]] : i8
// SR:         %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[SUMIN]], #[[SUMOUT]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]}
// SR-SAME:      ins(%{{.*}} : tensor<1x3x3x16x64x4xi8>) outs(%{{.*}} : tensor<1x64xi32>)
// SR:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<1x64xi32>)
// SR:           arith.muli %{{.*}}, %c-128_i32 : i32
// SR:         %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[NEG]] : tensor<1x64xi32>) outs(%{{.*}} : tensor<64x1x64xi32>)
// SR:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<{{.*}}x16x4xi8>, tensor<1x3x3x16x64x4xi8>) outs(%[[INIT]] : tensor<64x1x64xi32>)
// SR:           arith.extui %{{.*}} : i8 to i32
// SR:           arith.extsi %{{.*}} : i8 to i32
// CHECK-LABEL: func.func @shifted_rows
// CHECK-NOT:     arith.xori
// CHECK-NOT:     arith.extui
func.func @shifted_rows(%acc: tensor<100x64xi32>, %w: tensor<1x3x3x16x64x4xi8>) -> tensor<64x1x64xi32> {
  %zero = arith.constant 0 : i32
  %zp = arith.constant -128 : i8
  %e8 = tensor.empty() : tensor<100x64xi8>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<100x64xi32>) outs(%e8 : tensor<100x64xi8>) {
  ^bb0(%a: i32, %o: i8):
    %t = arith.trunci %a : i32 to i8
    linalg.yield %t : i8
  } -> tensor<100x64xi8>
  %p = tensor.pad %q low[0, 0] high[20, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zp : i8
  } : tensor<100x64xi8> to tensor<120x64xi8>
  %x = tensor.expand_shape %p [[0], [1, 2]] output_shape [120, 16, 4] : tensor<120x64xi8> into tensor<120x16x4xi8>
  %e = tensor.empty() : tensor<64x1x64xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<64x1x64xi32>) -> tensor<64x1x64xi32>
  %y = linalg.generic {indexing_maps = [#sra, #srb, #src],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<120x16x4xi8>, tensor<1x3x3x16x64x4xi8>) outs(%init : tensor<64x1x64xi32>) {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %ea = arith.extsi %a : i8 to i32
    %eb = arith.extsi %b : i8 to i32
    %m = arith.muli %ea, %eb : i32
    %s = arith.addi %c, %m : i32
    linalg.yield %s : i32
  } -> tensor<64x1x64xi32>
  return %y : tensor<64x1x64xi32>
}
