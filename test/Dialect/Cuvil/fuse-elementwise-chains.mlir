// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-fuse-elementwise-chains))' | FileCheck %s

// Attention's q: bias add, [s, h, d] -> [h, s, d], truncation to bf16: one op.
// CHECK-LABEL: func.func @bias_transpose_truncate
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<128x12x64xf32>, tensor<12x64xf32>)
// CHECK-SAME:      outs(%{{.*}} : tensor<12x128x64xbf16>)
// CHECK:           arith.addf
// CHECK:           arith.truncf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @bias_transpose_truncate(%x: tensor<128x12x64xf32>, %b: tensor<12x64xf32>) -> tensor<12x128x64xbf16> {
  %e0 = tensor.empty() : tensor<128x12x64xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<128x12x64xf32>, tensor<12x64xf32>) outs(%e0 : tensor<128x12x64xf32>) {
  ^bb0(%in: f32, %in_b: f32, %out: f32):
    %s = arith.addf %in, %in_b : f32
    linalg.yield %s : f32
  } -> tensor<128x12x64xf32>
  %e1 = tensor.empty() : tensor<12x128x64xf32>
  %1 = linalg.transpose ins(%0 : tensor<128x12x64xf32>) outs(%e1 : tensor<12x128x64xf32>) permutation = [1, 0, 2]
  %e2 = tensor.empty() : tensor<12x128x64xbf16>
  %2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%1 : tensor<12x128x64xf32>) outs(%e2 : tensor<12x128x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<12x128x64xbf16>
  return %2 : tensor<12x128x64xbf16>
}

// -----

// k^T moves the innermost dim: it stays a transpose (as a generic its
// consumer would read columns), and its producer stays apart.
// CHECK-LABEL: func.func @inner_transpose_kept
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:         linalg.transpose
// CHECK-SAME:      permutation = [1, 2, 0]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @inner_transpose_kept(%x: tensor<128x12x64xf32>, %b: tensor<12x64xf32>) -> tensor<12x64x128xf32> {
  %e0 = tensor.empty() : tensor<128x12x64xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<128x12x64xf32>, tensor<12x64xf32>) outs(%e0 : tensor<128x12x64xf32>) {
  ^bb0(%in: f32, %in_b: f32, %out: f32):
    %s = arith.addf %in, %in_b : f32
    linalg.yield %s : f32
  } -> tensor<128x12x64xf32>
  %e1 = tensor.empty() : tensor<12x64x128xf32>
  %1 = linalg.transpose ins(%0 : tensor<128x12x64xf32>) outs(%e1 : tensor<12x64x128xf32>) permutation = [1, 2, 0]
  return %1 : tensor<12x64x128xf32>
}

// -----

// Softmax's mask add has three readers (the row max, the exp, a row check):
// it is repeated in each and no longer written out.
// CHECK-LABEL: func.func @mask_add_into_three_users
// CHECK-SAME:    (%[[S:.*]]: tensor<128x128xf32>, %[[M:.*]]: tensor<128x128xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[S]], %[[M]] : {{.*}}) outs(%{{.*}} : tensor<128xf32>)
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} ins(%[[S]], %[[M]], %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<128x128xf32>)
// CHECK:           arith.addf
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[S]], %[[M]] : {{.*}}) outs(%{{.*}} : tensor<128xi8>)
// CHECK:           arith.addf
// CHECK:           arith.cmpf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @mask_add_into_three_users(%s: tensor<128x128xf32>, %mask: tensor<128x128xf32>)
    -> (tensor<128x128xf32>, tensor<128xi8>) {
  %ninf = arith.constant 0xFF800000 : f32
  %z8 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<128x128xf32>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<128x128xf32>
  %er = tensor.empty() : tensor<128xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%er : tensor<128xf32>) -> tensor<128xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<128x128xf32>) outs(%init : tensor<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%masked, %max : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %mx: f32, %out: f32):
    %d = arith.subf %a, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<128x128xf32>
  %e8 = tensor.empty() : tensor<128xi8>
  %init8 = linalg.fill ins(%z8 : i8) outs(%e8 : tensor<128xi8>) -> tensor<128xi8>
  %any = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<128x128xf32>) outs(%init8 : tensor<128xi8>) {
  ^bb0(%a: f32, %acc: i8):
    %c = arith.cmpf une, %a, %ninf : f32
    %c8 = arith.extui %c : i1 to i8
    %r = arith.ori %c8, %acc : i8
    linalg.yield %r : i8
  } -> tensor<128xi8>
  return %exp, %any : tensor<128x128xf32>, tensor<128xi8>
}

// -----

// An exp read twice is computed once (repeating it costs more than the pass
// over memory it saves); a per-row value read by a row-broadcast is not
// repeated per element; a contraction keeps its operands.
// CHECK-LABEL: func.func @kept_apart
// CHECK:         %[[EXP:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[EXP]] :
// CHECK:         %[[ROW:.*]] = linalg.generic
// CHECK:           math.sqrt
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[EXP]], %[[ROW]] :
// CHECK:         %[[NEG:.*]] = linalg.generic
// CHECK:           arith.negf
// CHECK:         linalg.matmul ins(%[[NEG]], %{{.*}} :
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @kept_apart(%x: tensor<128x128xf32>, %r: tensor<128xf32>, %w: tensor<128x64xf32>)
    -> (tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %er = tensor.empty() : tensor<128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<128xf32>) -> tensor<128xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<128x128xf32>) outs(%init : tensor<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %rows = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%r : tensor<128xf32>) outs(%er : tensor<128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.sqrt %a : f32
    linalg.yield %v : f32
  } -> tensor<128xf32>
  %scaled = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %rows : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %v = arith.mulf %a, %s : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %neg = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %em = tensor.empty() : tensor<128x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%em : tensor<128x64xf32>) -> tensor<128x64xf32>
  %mm = linalg.matmul ins(%neg, %w : tensor<128x128xf32>, tensor<128x64xf32>) outs(%acc : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %sum, %scaled, %mm : tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xf32>
}

// -----

// Attention's output: [h, s, d] -> [s, h, d], collapsed to [s, h*d], then
// truncated for the projection. The truncation is expanded to [s, h, d] and
// fused with the transpose; its result is collapsed instead.
// CHECK-LABEL: func.func @transpose_collapse_truncate
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<12x128x64xf32>) outs(%{{.*}} : tensor<128x12x64xbf16>)
// CHECK:           arith.truncf
// CHECK-NOT:     linalg.generic
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0], [1, 2]] : tensor<128x12x64xbf16> into tensor<128x768xbf16>
// CHECK:         return %[[C]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @transpose_collapse_truncate(%x: tensor<12x128x64xf32>) -> tensor<128x768xbf16> {
  %e0 = tensor.empty() : tensor<128x12x64xf32>
  %0 = linalg.transpose ins(%x : tensor<12x128x64xf32>) outs(%e0 : tensor<128x12x64xf32>) permutation = [1, 0, 2]
  %1 = tensor.collapse_shape %0 [[0], [1, 2]] : tensor<128x12x64xf32> into tensor<128x768xf32>
  %e1 = tensor.empty() : tensor<128x768xbf16>
  %2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%1 : tensor<128x768xf32>) outs(%e1 : tensor<128x768xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x768xbf16>
  return %2 : tensor<128x768xbf16>
}

// -----

// A collapse whose source has another reader stays: the reader after it is
// not expanded.
// CHECK-LABEL: func.func @shared_collapse_source_kept
// CHECK:         tensor.collapse_shape
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<128x768xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @shared_collapse_source_kept(%x: tensor<128x12x64xf32>) -> (tensor<128x12x64xf32>, tensor<128x768xbf16>) {
  %e0 = tensor.empty() : tensor<128x12x64xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<128x12x64xf32>) outs(%e0 : tensor<128x12x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<128x12x64xf32>
  %1 = tensor.collapse_shape %0 [[0], [1, 2]] : tensor<128x12x64xf32> into tensor<128x768xf32>
  %e1 = tensor.empty() : tensor<128x768xbf16>
  %2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%1 : tensor<128x768xf32>) outs(%e1 : tensor<128x768xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x768xbf16>
  return %0, %2 : tensor<128x12x64xf32>, tensor<128x768xbf16>
}

// -----

// A compare of an extended value with a constant exact in the narrow type
// compares in the narrow type (softmax's all-masked check: f32 scores
// extended to f64 and compared with -inf); 0.1 is not exact in f32.
// CHECK-LABEL: func.func @compare_before_extension
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[TENTH:.*]] = arith.constant 1.000000e-01 : f64
// CHECK:         %[[E:.*]] = arith.extf %[[X:.*]] : f32 to f64
// CHECK:         arith.cmpf oeq, %[[X]], %[[NINF]] : f32
// CHECK:         arith.cmpf olt, %[[E]], %[[TENTH]] : f64
func.func @compare_before_extension(%x: f32) -> (i1, i1) {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %tenth = arith.constant 0.1 : f64
  %e = arith.extf %x : f32 to f64
  %a = arith.cmpf oeq, %e, %ninf : f64
  %b = arith.cmpf olt, %e, %tenth : f64
  return %a, %b : i1, i1
}
