// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs_bf16_vnni | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs_bf16_vnni --cuvil-split-prepack | FileCheck %s --check-prefix=PREPACK
// RUN: cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/pack_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_pack_matmul_rhs_amx_bf16 -canonicalize | FileCheck %s --check-prefix=AMX

// bf16 x @ W^T: A only reshaped to k pairs (K even), W^T repacked into VNNI
// panels [48][384][64][2] (weight-only: main_prepack), C reshaped as for fp32.
// CHECK-LABEL: func.func @linear
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [128, 384, 2] : tensor<128x768xbf16> into tensor<128x384x2xbf16>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<384x2x48x64xbf16>) outs(%{{.*}} : tensor<48x384x64x2xbf16>) permutation = [2, 0, 3, 1]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<128x384x2xbf16>, tensor<48x384x64x2xbf16>) outs(%{{.*}} : tensor<128x48x64xf32>)
// CHECK:         tensor.collapse_shape {{.*}} into tensor<128x3072xf32>
// PREPACK-LABEL: func.func @linear(
// PREPACK-SAME:      tensor<48x384x64x2xbf16> {cuvil.packed = 0 : i64}
// PREPACK-NOT:     linalg.transpose
// PREPACK:         linalg.generic
// PREPACK-LABEL: func.func @linear_prepack
// PREPACK:         linalg.transpose {{.*}} permutation = [2, 0, 3, 1]
func.func @linear(%x: tensor<128x768xbf16>, %w: tensor<3072x768xbf16> {cuvil.weight}) -> tensor<128x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<768x3072xbf16>
  %wt = linalg.transpose ins(%w : tensor<3072x768xbf16>) outs(%et : tensor<768x3072xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<128x3072xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<128x768xbf16>, tensor<768x3072xbf16>) outs(%f : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  return %r : tensor<128x3072xf32>
}

// -----

// Odd K and N not a multiple of 64: A and B get a zero k row, B zero columns.
// CHECK-LABEL: func.func @odd
// CHECK:         tensor.pad %{{.*}} low[0, 0] high[0, 1]
// CHECK:         tensor.expand_shape {{.*}} into tensor<37x17x2xbf16>
// CHECK:         tensor.pad %{{.*}} low[0, 0] high[1, 56]
// CHECK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<4x17x64x2xbf16>) permutation = [2, 0, 3, 1]
// CHECK:         linalg.generic
// CHECK:         tensor.extract_slice {{.*}}[0, 0] [37, 200] [1, 1]
func.func @odd(%x: tensor<37x33xbf16>, %b: tensor<33x200xbf16>) -> tensor<37x200xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x200xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37x200xf32>) -> tensor<37x200xf32>
  %r = linalg.matmul ins(%x, %b : tensor<37x33xbf16>, tensor<33x200xbf16>) outs(%f : tensor<37x200xf32>) -> tensor<37x200xf32>
  return %r : tensor<37x200xf32>
}

// -----

// fp32 matmuls keep @cuvil_pack_matmul_rhs's 64-column panels; bf16 ones
// of a few rows (M >= 4) are VNNI-packed like large ones; on AMX hosts,
// whose tiles take 16 rows, they stay linalg.matmul (the fallback schedule).
// CHECK-LABEL: func.func @others
// CHECK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<8x256x64xf32>) permutation = [1, 0, 2]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<8x32x64x2xbf16>) permutation = [2, 0, 3, 1]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x32x2xbf16>, tensor<8x32x64x2xbf16>) outs(%{{.*}} : tensor<8x8x64xf32>)
// CHECK-NOT:     linalg.matmul
// AMX-LABEL: func.func @others
// AMX:         linalg.matmul {{.*}} tensor<8x64xbf16>
func.func @others(%x: tensor<64x256xf32>, %w: tensor<256x512xf32>, %a: tensor<8x64xbf16>, %b: tensor<64x512xbf16>)
    -> (tensor<64x512xf32>, tensor<8x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  %r = linalg.matmul ins(%x, %w : tensor<64x256xf32>, tensor<256x512xf32>) outs(%f : tensor<64x512xf32>) -> tensor<64x512xf32>
  %e2 = tensor.empty() : tensor<8x512xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x512xf32>) -> tensor<8x512xf32>
  %s = linalg.matmul ins(%a, %b : tensor<8x64xbf16>, tensor<64x512xbf16>) outs(%f2 : tensor<8x512xf32>) -> tensor<8x512xf32>
  return %r, %s : tensor<64x512xf32>, tensor<8x512xf32>
}

// -----

// Attention's bf16 products on hosts with AVX512-BF16
// (@cuvil_pack_matmul_rhs_bf16_vnni) and AMX-BF16 hosts
// (@cuvil_pack_matmul_rhs_amx_bf16), loops [b, m, k, n] (q.k^T) and
// [b, m, n, k] (p.v), packed per batch: A's k pairs by an expand_shape, B
// into [b][n/64][k/2][64][2] by the pair transpose cuvil-vnni-interleave
// writes, C along n by reshapes only.
// AMX-LABEL: func.func @attention_products
// AMX:         %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [12, 128, 32, 2]
// AMX:         %[[BK:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2], [3, 4]] output_shape [12, 32, 2, 2, 64]
// AMX:         %[[B:.*]] = linalg.transpose ins(%[[BK]] : tensor<12x32x2x2x64xbf16>) outs(%{{.*}} : tensor<12x2x32x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
// AMX:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<12x128x32x2xbf16>, tensor<12x2x32x64x2xbf16>) outs(%{{.*}} : tensor<12x128x2x64xf32>)
// AMX:         linalg.transpose ins(%{{.*}} : tensor<12x64x2x1x64xbf16>) outs(%{{.*}} : tensor<12x1x64x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
// AMX:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12x128x64x2xbf16>, tensor<12x1x64x64x2xbf16>) outs(%{{.*}} : tensor<12x128x1x64xf32>)
// CHECK-LABEL: func.func @attention_products
// CHECK:       %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [12, 128, 32, 2]
// CHECK:       %[[BK:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2], [3, 4]] output_shape [12, 32, 2, 2, 64]
// CHECK:       %[[B:.*]] = linalg.transpose ins(%[[BK]] : tensor<12x32x2x2x64xbf16>) outs(%{{.*}} : tensor<12x2x32x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<12x128x32x2xbf16>, tensor<12x2x32x64x2xbf16>) outs(%{{.*}} : tensor<12x128x2x64xf32>)
// CHECK:       linalg.transpose ins(%{{.*}} : tensor<12x64x2x1x64xbf16>) outs(%{{.*}} : tensor<12x1x64x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12x128x64x2xbf16>, tensor<12x1x64x64x2xbf16>) outs(%{{.*}} : tensor<12x128x1x64xf32>)
func.func @attention_products(%q: tensor<12x128x64xbf16>, %kt: tensor<12x64x128xbf16>, %p: tensor<12x128x128xbf16>, %v: tensor<12x128x64xbf16>)
    -> (tensor<12x128x128xf32>, tensor<12x128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<12x128x64xbf16>, tensor<12x64x128xbf16>) outs(%f : tensor<12x128x128xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<12x128x128xf32>
  %e2 = tensor.empty() : tensor<12x128x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<12x128x128xbf16>, tensor<12x128x64xbf16>) outs(%f2 : tensor<12x128x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<12x128x64xf32>
  return %s, %o : tensor<12x128x128xf32>, tensor<12x128x64xf32>
}

// -----

// cuvil-winograd-conv's batch matmul after precision="bf16" narrowed it:
// generalized and packed per batch as attention's products are, B a weight
// (the transformed filters): its pair transpose is weight-only work, in
// main_prepack.
// CHECK-LABEL: func.func @winograd_products
// CHECK:         tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [36, 196, 32, 2]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<36x196x32x2xbf16>, tensor<36x1x32x64x2xbf16>) outs(%{{.*}} : tensor<36x196x1x64xf32>)
// CHECK-NOT:     linalg.batch_matmul
// PREPACK-LABEL: func.func @winograd_products(
// PREPACK-SAME:      tensor<36x1x32x64x2xbf16> {cuvil.packed = 0 : i64}
// PREPACK-NOT:     linalg.transpose
// PREPACK-LABEL: func.func @winograd_products_prepack
// PREPACK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<36x1x32x64x2xbf16>) permutation = [0, 3, 1, 4, 2]
// AMX-LABEL: func.func @winograd_products
// AMX:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<36x196x32x2xbf16>, tensor<36x1x32x64x2xbf16>) outs(%{{.*}} : tensor<36x196x1x64xf32>)
func.func @winograd_products(%a: tensor<36x196x64xbf16>, %w: tensor<36x64x64xbf16> {cuvil.weight}) -> tensor<36x196x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<36x196x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<36x196x64xf32>) -> tensor<36x196x64xf32>
  %r = linalg.batch_matmul ins(%a, %w : tensor<36x196x64xbf16>, tensor<36x64x64xbf16>) outs(%f : tensor<36x196x64xf32>) -> tensor<36x196x64xf32>
  return %r : tensor<36x196x64xf32>
}

// -----

// One 64-column panel already takes the VNNI layout (a ResNet stem's im2col
// matmul: 12544 x 148 x 64); on AMX hosts with K padded to whole tile rows
// (148 -> 160).
// CHECK-LABEL: func.func @one_panel
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12544x74x2xbf16>, tensor<1x74x64x2xbf16>) outs(%{{.*}} : tensor<12544x1x64xf32>)
// CHECK-NOT:     linalg.matmul
// AMX-LABEL: func.func @one_panel
// AMX:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12544x80x2xbf16>, tensor<1x80x64x2xbf16>) outs(%{{.*}} : tensor<12544x1x64xf32>)
func.func @one_panel(%x: tensor<12544x148xbf16>, %w: tensor<148x64xbf16> {cuvil.weight}) -> tensor<12544x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12544x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12544x64xf32>) -> tensor<12544x64xf32>
  %r = linalg.matmul ins(%x, %w : tensor<12544x148xbf16>, tensor<148x64xbf16>) outs(%f : tensor<12544x64xf32>) -> tensor<12544x64xf32>
  return %r : tensor<12544x64xf32>
}

// -----

// bf16 with fewer than 4 rows (a decode step): the fp32 kernel's few-rows
// panels (pack_cpu's @cuvil_match_packable_gemv), not VNNI ones.
// CHECK-LABEL: func.func @three_rows
// CHECK:         linalg.transpose {{.*}} outs(%{{.*}} : tensor<8x64x64xbf16>) permutation = [1, 0, 2]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x64xbf16>, tensor<8x64x64xbf16>) outs(%{{.*}} : tensor<3x8x64xf32>)
func.func @three_rows(%a: tensor<3x64xbf16>, %b: tensor<64x512xbf16>) -> tensor<3x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x512xf32>) -> tensor<3x512xf32>
  %s = linalg.matmul ins(%a, %b : tensor<3x64xbf16>, tensor<64x512xbf16>) outs(%f : tensor<3x512xf32>) -> tensor<3x512xf32>
  return %s : tensor<3x512xf32>
}
