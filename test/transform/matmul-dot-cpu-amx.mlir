// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/matmul_dot_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_amx_int8 | FileCheck %s

// The AMX-INT8 entry on cuvil-im2col-conv's conv over shifted rows (3 x 3
// taps of 64 channels, input rows 10 pixels wide, 128 output rows, 2 panels):
// scf.forall over AMX_TNP = 4 panels x AMX_TM = 64 rows, each tile reading
// the 64 + 2 * 10 + 2 input rows its taps shift to, the zero fill fused and
// marked as the accumulators' start, the tile's contraction marked for
// cuvil-amx-matmul.
#a = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#b = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#c = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @shifted_rows
// CHECK:         scf.forall ({{.*}}) in (1, 2) shared_outs
// CHECK:           tensor.extract_slice %arg0[%{{.*}}, 0, 0] [86, 16, 4] [1, 1, 1] : tensor<150x16x4xi8> to tensor<86x16x4xi8>
// CHECK:           %[[INIT:.*]] = linalg.fill {cuvil.amx_init}
// CHECK:           linalg.generic
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<86x16x4xi8>, tensor<?x3x3x16x64x4xi8>) outs(%[[INIT]] : tensor<64x?x64xi32>) attrs = {cuvil.amx}
func.func @shifted_rows(%x: tensor<150x16x4xi8>, %w: tensor<2x3x3x16x64x4xi8>) -> tensor<128x2x64xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x2x64xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<128x2x64xi32>) -> tensor<128x2x64xi32>
  %r = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<150x16x4xi8>, tensor<2x3x3x16x64x4xi8>) outs(%f : tensor<128x2x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %a32 = arith.extsi %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  } -> tensor<128x2x64xi32>
  return %r : tensor<128x2x64xi32>
}
