// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs | FileCheck %s
// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs --cuvil-split-prepack | FileCheck %s --check-prefix=PREPACK

// x @ W^T with N = 3072: B = W^T is repacked as [48][768][64] (expand + transpose,
// weight-only), C is only reshaped (no copy), the contraction has loops
// [m, n/64, k, 64].
// CHECK-LABEL: func.func @linear
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<3072x768xf32>)
// CHECK:         %[[EX:.*]] = tensor.expand_shape %[[WT]] {{\[}}[0], [1, 2]] output_shape [768, 48, 64]
// CHECK:         %[[BP:.*]] = linalg.transpose ins(%[[EX]] : tensor<768x48x64xf32>) outs(%{{.*}} : tensor<48x768x64xf32>) permutation = [1, 0, 2]
// CHECK:         %[[CE:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [128, 48, 64]
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}}) outs(%[[CE]] : tensor<128x48x64xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME:        ins(%{{.*}}, %[[BP]] : tensor<128x768xf32>, tensor<48x768x64xf32>) outs(%[[Z]] : tensor<128x48x64xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2]] : tensor<128x48x64xf32> into tensor<128x3072xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         return %[[C]]
// The packing is weight-only work: it moves to main_prepack.
// PREPACK-LABEL: func.func @linear
// PREPACK-NOT:     linalg.transpose
// PREPACK:         linalg.generic
// PREPACK-LABEL: func.func @linear_prepack
// PREPACK:         linalg.transpose {{.*}} permutation = [1, 0]
// PREPACK:         linalg.transpose {{.*}} permutation = [1, 0, 2]
func.func @linear(%x: tensor<128x768xf32>, %w: tensor<3072x768xf32> {cuvil.weight}) -> tensor<128x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<768x3072xf32>
  %wt = linalg.transpose ins(%w : tensor<3072x768xf32>) outs(%et : tensor<768x3072xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<128x3072xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<128x768xf32>, tensor<768x3072xf32>) outs(%f : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  return %r : tensor<128x3072xf32>
}

// N not a multiple of 64: B is zero-padded to 256 columns, C sliced back.
// CHECK-LABEL: func.func @padded
// CHECK:         tensor.pad
// CHECK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<4x33x64xf32>) permutation = [1, 0, 2]
// CHECK:         linalg.generic
// CHECK:         tensor.collapse_shape {{.*}} into tensor<37x256xf32>
// CHECK:         tensor.extract_slice {{.*}}[0, 0] [37, 200] [1, 1]
func.func @padded(%x: tensor<37x33xf32>, %b: tensor<33x200xf32>) -> tensor<37x200xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x200xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x200xf32>) -> tensor<37x200xf32>
  %r = linalg.matmul ins(%x, %b : tensor<37x33xf32>, tensor<33x200xf32>) outs(%f : tensor<37x200xf32>) -> tensor<37x200xf32>
  return %r : tensor<37x200xf32>
}

// A decode step's matmul (M = 1) of an int8 weight (cuvil.weight_only) is
// packed too: i8 panels [N/64][K][64], the weight-only pack hoisted.
// CHECK-LABEL: func.func @one_row_int8_weight
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<1x64xf32>, tensor<2x64x64xi8>) outs(%{{.*}} : tensor<1x2x64xf32>)
// CHECK:           arith.sitofp
// PREPACK-LABEL: func.func @one_row_int8_weight(
// PREPACK-SAME:      tensor<2x64x64xi8> {cuvil.packed
func.func @one_row_int8_weight(%x: tensor<1x64xf32>, %q: tensor<64x128xi8> {cuvil.weight}) -> tensor<1x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %r = linalg.matmul ins(%x, %q : tensor<1x64xf32>, tensor<64x128xi8>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %r : tensor<1x128xf32>
}

// Small M or N, or a dynamic M: left to matmul_cpu's plain schedule.
// CHECK-LABEL: func.func @small_or_dynamic
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT:     linalg.generic
func.func @small_or_dynamic(%x: tensor<8x64xf32>, %y: tensor<64x64xf32>, %w: tensor<64x512xf32>,
                            %d: tensor<?x64xf32>, %c: tensor<?x512xf32>) -> (tensor<8x512xf32>, tensor<64x64xf32>, tensor<?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x512xf32>) -> tensor<8x512xf32>
  %r = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r2 = linalg.matmul ins(%y, %y : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r3 = linalg.matmul ins(%d, %w : tensor<?x64xf32>, tensor<64x512xf32>) outs(%c : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r, %r2, %r3 : tensor<8x512xf32>, tensor<64x64xf32>, tensor<?x512xf32>
}
