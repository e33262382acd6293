// RUN: cuvil-opt %s --split-input-file --cuvil-fold-unit-extent-dims | FileCheck %s

// One 64-column panel (N = 64): the VNNI contraction keeps its five loops
// (matmul_dot_cpu.mlir matches rank 5); the elementwise op after it loses
// its unit dimension as upstream's pass drops it.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
#id = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @one_panel
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<64x144x4xi8>, tensor<1x144x64x4xi8>) outs(%{{.*}} : tensor<64x1x64xi32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        tensor<64x64xi32>
func.func @one_panel(%a: tensor<64x144x4xi8>, %b: tensor<1x144x64x4xi8>, %c: tensor<64x1x64xi32>) -> tensor<64x1x64xi32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x144x4xi8>, tensor<1x144x64x4xi8>) outs(%c : tensor<64x1x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %x32 = arith.extui %x : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<64x1x64xi32>
  %e = tensor.empty() : tensor<64x1x64xi32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<64x1x64xi32>) outs(%e : tensor<64x1x64xi32>) {
  ^bb0(%x: i32, %o: i32):
    %y = arith.addi %x, %x : i32
    linalg.yield %y : i32
  } -> tensor<64x1x64xi32>
  return %d : tensor<64x1x64xi32>
}

// -----

// The batched form (attention's p.v on AMX hosts, one head of 64 columns):
// its panel loop stays, and so does the batch loop of a single head (the
// AMX schedule matches rank 6).
#blhs = affine_map<(b, m, np, kq, j, v) -> (b, m, kq, v)>
#brhs = affine_map<(b, m, np, kq, j, v) -> (b, np, kq, j, v)>
#bout = affine_map<(b, m, np, kq, j, v) -> (b, m, np, j)>
// CHECK-LABEL: func.func @batched_one_panel
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x128x64x2xbf16>, tensor<1x1x64x64x2xbf16>) outs(%{{.*}} : tensor<1x128x1x64xf32>)
func.func @batched_one_panel(%a: tensor<1x128x64x2xbf16>, %b: tensor<1x1x64x64x2xbf16>, %c: tensor<1x128x1x64xf32>)
    -> tensor<1x128x1x64xf32> {
  %r = linalg.generic {indexing_maps = [#blhs, #brhs, #bout],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<1x128x64x2xbf16>, tensor<1x1x64x64x2xbf16>) outs(%c : tensor<1x128x1x64xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x128x1x64xf32>
  return %r : tensor<1x128x1x64xf32>
}

// -----

// pack_cpu.mlir's plain panels for a decode step's M = 1 matmul keep their
// four loops (matmul_cpu.mlir schedules the rank-4 op; without its m loop it
// would stay scalar loops).
#pl = affine_map<(m, np, k, j) -> (m, k)>
#pr = affine_map<(m, np, k, j) -> (np, k, j)>
#po = affine_map<(m, np, k, j) -> (m, np, j)>
// CHECK-LABEL: func.func @one_row_panels
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x256xf32>, tensor<4x256x64xi8>) outs(%{{.*}} : tensor<1x4x64xf32>)
func.func @one_row_panels(%a: tensor<1x256xf32>, %b: tensor<4x256x64xi8>, %c: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  %r = linalg.generic {indexing_maps = [#pl, #pr, #po], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<1x256xf32>, tensor<4x256x64xi8>) outs(%c : tensor<1x4x64xf32>) {
  ^bb0(%x: f32, %w: i8, %acc: f32):
    %wf = arith.sitofp %w : i8 to f32
    %p = arith.mulf %x, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x64xf32>
  return %r : tensor<1x4x64xf32>
}

// -----

// The broadcast initializing a kept VNNI contraction keeps its unit dim too:
// it stays the contraction's init (no expand_shape between them), so
// cuvil-outline-kernels puts it into the matmul's kernel.
#lhs = affine_map<(m, np, kq, j, v) -> (m, kq, v)>
#rhs = affine_map<(m, np, kq, j, v) -> (np, kq, j, v)>
#out = affine_map<(m, np, kq, j, v) -> (m, np, j)>
#col = affine_map<(a, b, c) -> (b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @broadcast_init
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:        outs(%{{.*}} : tensor<64x1x64xi32>)
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}} outs(%[[INIT]] : tensor<64x1x64xi32>)
func.func @broadcast_init(%a: tensor<64x144x4xi8>, %b: tensor<1x144x64x4xi8>, %s: tensor<1x64xi32>) -> tensor<64x1x64xi32> {
  %e = tensor.empty() : tensor<64x1x64xi32>
  %init = linalg.generic {indexing_maps = [#col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x64xi32>) outs(%e : tensor<64x1x64xi32>) {
  ^bb0(%x: i32, %o: i32):
    linalg.yield %x : i32
  } -> tensor<64x1x64xi32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x144x4xi8>, tensor<1x144x64x4xi8>) outs(%init : tensor<64x1x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %x32 = arith.extui %x : i8 to i32
    %w32 = arith.extsi %w : i8 to i32
    %p = arith.muli %x32, %w32 : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  } -> tensor<64x1x64xi32>
  return %r : tensor<64x1x64xi32>
}

// -----

// A window over a depth-1 output (torch-mlir's max_pool3d, kernel 3, stride
// 2, on a padded depth of 5): the output's unit loop d0 sits inside the
// input's `d0 * 2 + d2`; dropped, that would be the bare loop d2 over a dim
// of 5 with a range of 3 (an invalid op). It stays.
#in = affine_map<(d0, d1, d2) -> (d0 * 2 + d2, d1)>
#win = affine_map<(d0, d1, d2) -> (d2)>
#res = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @window_of_unit_output
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<1x4xf32>)
func.func @window_of_unit_output(%x: tensor<5x4xf32>, %w: tensor<3xf32>, %init: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #win, #res], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<5x4xf32>, tensor<3xf32>) outs(%init : tensor<1x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// cuvil-im2col-conv's int8 conv over shifted rows with 64 output channels
// (one panel): its 7 loops stay, for the AMX schedule.
#sa = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#sb = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#sc = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @shifted_rows_one_panel
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
// CHECK-SAME:      outs(%{{.*}} : tensor<64x1x64xi32>)
func.func @shifted_rows_one_panel(%x: tensor<90x16x4xi8>, %w: tensor<1x3x3x16x64x4xi8>) -> tensor<64x1x64xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x1x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<64x1x64xi32>) -> tensor<64x1x64xi32>
  %r = linalg.generic {indexing_maps = [#sa, #sb, #sc],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<90x16x4xi8>, tensor<1x3x3x16x64x4xi8>) outs(%f : tensor<64x1x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %a32 = arith.extsi %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  } -> tensor<64x1x64xi32>
  return %r : tensor<64x1x64xi32>
}
