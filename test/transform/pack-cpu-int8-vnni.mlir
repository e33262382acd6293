// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs_int8_vnni | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs_amx_bf16_int8_tiles -canonicalize \
// RUN:   | FileCheck %s --check-prefix=TILES

// int8 x int8 -> int32: A reshaped to k quads, B repacked into quad panels
// [3][64][64][4], C reshaped as for fp32: the rank-5 contraction
// cuvil-unsigned-int8-lhs and matmul_dot_cpu.mlir take.
// CHECK-LABEL: func.func @int8
// On AMX hosts K = 256 is already whole 64-byte tile rows: nothing padded.
// TILES-LABEL: func.func @int8
// TILES-NOT:     tensor.pad
// TILES:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>)
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [32, 64, 4] : tensor<32x256xi8> into tensor<32x64x4xi8>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<64x4x3x64xi8>) outs(%{{.*}} : tensor<3x64x64x4xi8>) permutation = [2, 0, 3, 1]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%{{.*}} : tensor<32x3x64xi32>)
func.func @int8(%a: tensor<32x256xi8>, %b: tensor<256x192xi8>) -> tensor<32x192xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x192xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x192xi32>) -> tensor<32x192xi32>
  %r = linalg.matmul ins(%a, %b : tensor<32x256xi8>, tensor<256x192xi8>) outs(%f : tensor<32x192xi32>) -> tensor<32x192xi32>
  return %r : tensor<32x192xi32>
}

// -----

// K = 250 (not a multiple of 4): A and B padded with zero k rows; f32
// matmuls keep the plain 64-column panels.
// CHECK-LABEL: func.func @odd_k_and_f32
// On AMX hosts K is padded to whole tile rows (256 = 4 x 64) instead, so
// that cuvil-amx-matmul reads A in place: 64 quads, B's zero rows padded
// once (a weight's pad runs in main_prepack).
// TILES-LABEL: func.func @odd_k_and_f32
// TILES:         tensor.pad %{{.*}} low[0, 0] high[0, 6]
// TILES:         tensor<32x250xi8> to tensor<32x256xi8>
// TILES:         tensor.pad %{{.*}} low[0, 0] high[6, 0]
// TILES:         tensor<250x192xi8> to tensor<256x192xi8>
// TILES:         ins(%{{.*}}, %{{.*}} : tensor<32x64x4xi8>, tensor<3x64x64x4xi8>) outs(%{{.*}} : tensor<32x3x64xi32>)
// CHECK:         tensor.pad
// CHECK:         tensor<32x63x4xi8>
// CHECK:         tensor<3x63x64x4xi8>
// CHECK:         tensor<3x256x64xf32>
func.func @odd_k_and_f32(%a: tensor<32x250xi8>, %b: tensor<250x192xi8>, %fa: tensor<32x256xf32>, %fb: tensor<256x192xf32>)
    -> (tensor<32x192xi32>, tensor<32x192xf32>) {
  %c0 = arith.constant 0 : i32
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x192xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<32x192xi32>) -> tensor<32x192xi32>
  %r = linalg.matmul ins(%a, %b : tensor<32x250xi8>, tensor<250x192xi8>) outs(%f : tensor<32x192xi32>) -> tensor<32x192xi32>
  %fe = tensor.empty() : tensor<32x192xf32>
  %ff = linalg.fill ins(%z : f32) outs(%fe : tensor<32x192xf32>) -> tensor<32x192xf32>
  %s = linalg.matmul ins(%fa, %fb : tensor<32x256xf32>, tensor<256x192xf32>) outs(%ff : tensor<32x192xf32>) -> tensor<32x192xf32>
  return %r, %s : tensor<32x192xi32>, tensor<32x192xf32>
}

// -----

// A few rows, down to one (a decode step), are VNNI-packed too: the dot
// kernel runs rows short of a register tile one at a time. On AMX hosts,
// whose tiles take 16 rows, they keep the fp32 kernel's few-rows panels
// (@cuvil_match_packable_gemv), no k quads.
// CHECK-LABEL: func.func @one_row
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x64x4xi8>, tensor<3x64x64x4xi8>) outs(%{{.*}} : tensor<1x3x64xi32>)
// CHECK-NOT:     linalg.matmul
// TILES-LABEL: func.func @one_row
// TILES:         linalg.transpose ins(%{{.*}} : tensor<256x3x64xi8>) outs(%{{.*}} : tensor<3x256x64xi8>) permutation = [1, 0, 2]
// TILES:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x256xi8>, tensor<3x256x64xi8>) outs(%{{.*}} : tensor<1x3x64xi32>)
func.func @one_row(%a: tensor<1x256xi8>, %b: tensor<256x192xi8>) -> tensor<1x192xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x192xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x192xi32>) -> tensor<1x192xi32>
  %r = linalg.matmul ins(%a, %b : tensor<1x256xi8>, tensor<256x192xi8>) outs(%f : tensor<1x192xi32>) -> tensor<1x192xi32>
  return %r : tensor<1x192xi32>
}
