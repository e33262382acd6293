// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-vnni-interleave))' | FileCheck %s

// The per-call VNNI pack of attention's k^T on bf16 hosts ([b][k/2][2][n/64][64]
// -> [b][n/64][k/2][64][2]): per (batch, panel, k pair) the two k rows are
// loaded whole, interleaved, and stored as one row of 128 elements.
// CHECK-LABEL: func.func @k_transpose_pack
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[ROWS:.*]] = memref.collapse_shape %arg1 {{\[\[}}0], [1], [2], [3, 4]] : memref<12x2x32x64x2xbf16> into memref<12x2x32x128xbf16>
// CHECK:         scf.for %[[B:.*]] = %c0 to %c12
// CHECK:           scf.for %[[P:.*]] = %c0 to %c2
// CHECK:             scf.for %[[K:.*]] = %c0 to %c32
// CHECK:               %[[EVEN:.*]] = vector.load %arg0[%[[B]], %[[K]], %c0, %[[P]], %c0] : memref<12x32x2x2x64xbf16>, vector<64xbf16>
// CHECK:               %[[ODD:.*]] = vector.load %arg0[%[[B]], %[[K]], %c1, %[[P]], %c0] : memref<12x32x2x2x64xbf16>, vector<64xbf16>
// CHECK:               %[[PAIRS:.*]] = vector.interleave %[[EVEN]], %[[ODD]] : vector<64xbf16> -> vector<128xbf16>
// CHECK:               vector.store %[[PAIRS]], %[[ROWS]][%[[B]], %[[P]], %[[K]], %c0] : memref<12x2x32x128xbf16>, vector<128xbf16>
func.func @k_transpose_pack(%in: memref<12x32x2x2x64xbf16>, %out: memref<12x2x32x64x2xbf16>) {
  linalg.transpose ins(%in : memref<12x32x2x2x64xbf16>) outs(%out : memref<12x2x32x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
  return
}

// -----

// The rhs pack of a matmul of two inputs ([k/2][2][n/64][64] -> [n/64][k/2][64][2],
// no batch): loops over (n/64, k/2).
// CHECK-LABEL: func.func @matmul_rhs_pack
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[ROWS:.*]] = memref.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : memref<16x512x64x2xbf16> into memref<16x512x128xbf16>
// CHECK:         scf.for %[[P:.*]] = %c0 to %c16
// CHECK:           scf.for %[[K:.*]] = %c0 to %c512
// CHECK:             %[[EVEN:.*]] = vector.load %arg0[%[[K]], %c0, %[[P]], %c0] : memref<512x2x16x64xbf16>, vector<64xbf16>
// CHECK:             %[[ODD:.*]] = vector.load %arg0[%[[K]], %c1, %[[P]], %c0] : memref<512x2x16x64xbf16>, vector<64xbf16>
// CHECK:             %[[PAIRS:.*]] = vector.interleave %[[EVEN]], %[[ODD]] : vector<64xbf16> -> vector<128xbf16>
// CHECK:             vector.store %[[PAIRS]], %[[ROWS]][%[[P]], %[[K]], %c0] : memref<16x512x128xbf16>, vector<128xbf16>
func.func @matmul_rhs_pack(%in: memref<512x2x16x64xbf16>, %out: memref<16x512x64x2xbf16>) {
  linalg.transpose ins(%in : memref<512x2x16x64xbf16>) outs(%out : memref<16x512x64x2xbf16>) permutation = [2, 0, 3, 1]
  return
}

// -----

// Other transposes (another permutation, 32-bit elements, rows longer than
// 256, strided rows, tensors) are left alone.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-5: linalg.transpose
// CHECK-NOT:     vector.interleave
func.func @others(%a: memref<2x4x2x2x64xbf16>, %b: memref<2x2x4x2x64xbf16>, %c: memref<2x4x2x2x64xf32>,
                  %d: memref<2x2x4x64x2xf32>, %e: memref<4x2x512xbf16>, %f: memref<4x512x2xbf16>,
                  %g: memref<4x2x64xbf16, strided<[256, 128, 2]>>, %h: memref<4x64x2xbf16>,
                  %t: tensor<4x2x64xbf16>) -> tensor<4x64x2xbf16> {
  linalg.transpose ins(%a : memref<2x4x2x2x64xbf16>) outs(%b : memref<2x2x4x2x64xbf16>) permutation = [0, 3, 1, 2, 4]
  linalg.transpose ins(%c : memref<2x4x2x2x64xf32>) outs(%d : memref<2x2x4x64x2xf32>) permutation = [0, 3, 1, 4, 2]
  linalg.transpose ins(%e : memref<4x2x512xbf16>) outs(%f : memref<4x512x2xbf16>) permutation = [0, 2, 1]
  linalg.transpose ins(%g : memref<4x2x64xbf16, strided<[256, 128, 2]>>) outs(%h : memref<4x64x2xbf16>) permutation = [0, 2, 1]
  %i = tensor.empty() : tensor<4x64x2xbf16>
  %r = linalg.transpose ins(%t : tensor<4x2x64xbf16>) outs(%i : tensor<4x64x2xbf16>) permutation = [0, 2, 1]
  return %r : tensor<4x64x2xbf16>
}
