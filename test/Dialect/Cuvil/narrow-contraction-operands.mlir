// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-narrow-contraction-operands,canonicalize))" | FileCheck %s --check-prefix=FOLD
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-narrow-contraction-operands{element-type=bf16},canonicalize))" | FileCheck %s --check-prefix=BF16
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-narrow-contraction-operands{element-type=f16},canonicalize))" | FileCheck %s --check-prefix=F16
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-narrow-contraction-operands{element-type=bf16 batched-contractions},canonicalize))" | FileCheck %s --check-prefix=BATCHED

#id = affine_map<(d0, d1) -> (d0, d1)>

// What torch-mlir emits for a bf16 nn.Linear: both operands extended to f32.
// FOLD-LABEL: func.func @bf16_model_matmul
// FOLD-NOT:     arith.extf
// FOLD:         linalg.matmul ins(%arg0, %arg1 : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// BF16-LABEL: func.func @bf16_model_matmul
// BF16:         linalg.matmul ins(%arg0, %arg1 : tensor<8x16xbf16>, tensor<16x32xbf16>)
// The model's own narrow type wins over element-type: never bf16 -> f32 -> f16.
// F16-LABEL: func.func @bf16_model_matmul
// F16:         linalg.matmul ins(%arg0, %arg1 : tensor<8x16xbf16>, tensor<16x32xbf16>)
func.func @bf16_model_matmul(%a: tensor<8x16xbf16>, %b: tensor<16x32xbf16>) -> tensor<8x32xf32> {
  %ea = tensor.empty() : tensor<8x16xf32>
  %a32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x16xbf16>) outs(%ea : tensor<8x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %eb = tensor.empty() : tensor<16x32xf32>
  %b32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<16x32xbf16>) outs(%eb : tensor<16x32xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<16x32xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// An f32 model: only element-type truncates (operands, not the accumulator).
// FOLD-LABEL: func.func @f32_batch_matmul
// FOLD:         linalg.batch_matmul ins(%arg0, %arg1 : tensor<2x8x16xf32>, tensor<2x16x4xf32>)
// BF16-LABEL: func.func @f32_batch_matmul
// BF16-DAG:     %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8x16xbf16>)
// BF16-DAG:     arith.truncf %{{.*}} : f32 to bf16
// BF16-DAG:     %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x16x4xf32>) outs(%{{.*}} : tensor<2x16x4xbf16>)
// BF16:         linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x8x16xbf16>, tensor<2x16x4xbf16>) outs(%arg2 : tensor<2x8x4xf32>)
// F16-LABEL: func.func @f32_batch_matmul
// F16:          linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x16xf16>, tensor<2x16x4xf16>) outs(%arg2 : tensor<2x8x4xf32>)
func.func @f32_batch_matmul(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>, %c: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%c : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

// -----

// Convolutions keep their strides; dynamic sizes are truncated with their sizes.
// BF16-LABEL: func.func @conv_dynamic_batch
// BF16:         %[[D:.*]] = tensor.dim %arg0, %c0
// BF16:         tensor.empty(%[[D]]) : tensor<?x3x9x9xbf16>
// BF16:         linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<?x3x9x9xbf16>, tensor<4x3x3x3xbf16>)
func.func @conv_dynamic_batch(%x: tensor<?x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %o: tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<?x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  return %r : tensor<?x4x4x4xf32>
}

// -----

// One operand extended from bf16, the other from f16: left as it is.
// BF16-LABEL: func.func @mixed_narrow_types
// BF16:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @mixed_narrow_types(%a: tensor<4x4xbf16>, %b: tensor<4x4xf16>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %a32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %b32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x4xf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A bf16 model's GELU, fused with the upcast of its result: it yields the
// bf16 value instead (its only user is the matmul), no truncation needed.
// FOLD-LABEL: func.func @producer_yields_extension
// FOLD:         %[[E:.*]] = tensor.empty() : tensor<8x16xbf16>
// FOLD:         %[[G:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<8x16xbf16>)
// FOLD:           %[[T:.*]] = arith.truncf
// FOLD-NEXT:      linalg.yield %[[T]] : bf16
// FOLD:         linalg.matmul ins(%[[G]], %arg1 : tensor<8x16xbf16>, tensor<16x32xbf16>)
#idp = affine_map<(d0, d1) -> (d0, d1)>
func.func @producer_yields_extension(%x: tensor<8x16xf32>, %b: tensor<16x32xbf16>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#idp, #idp], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.truncf %v : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x16xf32>
  %eb = tensor.empty() : tensor<16x32xf32>
  %b32 = linalg.generic {indexing_maps = [#idp, #idp], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<16x32xbf16>) outs(%eb : tensor<16x32xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %w = arith.extf %v : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<16x32xf32>
  %r = linalg.matmul ins(%a, %b32 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// The same producer with a second user keeps its f32 result: without
// element-type the matmul stays f32.
// FOLD-LABEL: func.func @producer_with_two_users
// FOLD:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
#idq = affine_map<(d0, d1) -> (d0, d1)>
func.func @producer_with_two_users(%x: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#idq, #idq], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.truncf %v : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r, %a : tensor<8x32xf32>, tensor<8x16xf32>
}

// -----

// A weight-only quantized nn.Linear (cuvil.weight_only): f32 activations
// times the transposed upcast of an int8 weight. The i8 weight is transposed
// instead and read by the matmul, which converts it (sitofp) in its body;
// the f32 activations stay f32, also under element-type= (no truncation).
#wid = affine_map<(d0, d1) -> (d0, d1)>
// FOLD-LABEL: func.func @int8_weight_linear
// FOLD:         %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<32x16xi8>) outs(%{{.*}} : tensor<16x32xi8>) permutation = [1, 0]
// FOLD:         linalg.matmul ins(%arg0, %[[T]] : tensor<8x16xf32>, tensor<16x32xi8>) outs(%{{.*}} : tensor<8x32xf32>)
// FOLD-NOT:     arith.sitofp
// BF16-LABEL: func.func @int8_weight_linear
// BF16:         linalg.matmul ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<16x32xi8>)
func.func @int8_weight_linear(%x: tensor<8x16xf32>, %q: tensor<32x16xi8>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<32x16xf32>
  %w = linalg.generic {indexing_maps = [#wid, #wid], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<32x16xi8>) outs(%e : tensor<32x16xf32>) {
  ^bb0(%v: i8, %o: f32):
    %f = arith.sitofp %v : i8 to f32
    linalg.yield %f : f32
  } -> tensor<32x16xf32>
  %et = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%et : tensor<16x32xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// The batched contraction cuvil-lower-to-linalg makes of cuvil.matmul with a
// 3-D int8 weight: the generic reads the i8 weight too.
#bx = affine_map<(b, m, k, n) -> (b, m, k)>
#bw = affine_map<(b, m, k, n) -> (b, k, n)>
#bo = affine_map<(b, m, k, n) -> (b, m, n)>
#bid = affine_map<(a, b, c) -> (a, b, c)>
// FOLD-LABEL: func.func @int8_weight_batched_generic
// FOLD:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x4x16xf32>, tensor<2x16x32xi8>) outs(%arg2 : tensor<2x4x32xf32>)
// FOLD:           arith.sitofp %{{.*}} : i8 to f32
// FOLD:           arith.mulf
func.func @int8_weight_batched_generic(%x: tensor<2x4x16xf32>, %q: tensor<2x16x32xi8>, %c: tensor<2x4x32xf32>) -> tensor<2x4x32xf32> {
  %e = tensor.empty() : tensor<2x16x32xf32>
  %w = linalg.generic {indexing_maps = [#bid, #bid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x16x32xi8>) outs(%e : tensor<2x16x32xf32>) {
  ^bb0(%v: i8, %o: f32):
    %f = arith.sitofp %v : i8 to f32
    linalg.yield %f : f32
  } -> tensor<2x16x32xf32>
  %r = linalg.generic {indexing_maps = [#bx, #bw, #bo], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x4x16xf32>, tensor<2x16x32xf32>) outs(%c : tensor<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x32xf32>
  return %r : tensor<2x4x32xf32>
}

// -----

// A batched generic whose operands are both f32 computations (attention):
// left as it is, whatever element-type says (only named contractions narrow).
#ax = affine_map<(b, m, k, n) -> (b, m, k)>
#aw = affine_map<(b, m, k, n) -> (b, k, n)>
#ao = affine_map<(b, m, k, n) -> (b, m, n)>
// FOLD-LABEL: func.func @f32_batched_generic
// FOLD:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x4x16xf32>, tensor<2x16x32xf32>)
// BF16-LABEL: func.func @f32_batched_generic
// BF16:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x4x16xf32>, tensor<2x16x32xf32>)
func.func @f32_batched_generic(%x: tensor<2x4x16xf32>, %w: tensor<2x16x32xf32>, %c: tensor<2x4x32xf32>) -> tensor<2x4x32xf32> {
  %r = linalg.generic {indexing_maps = [#ax, #aw, #ao], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x4x16xf32>, tensor<2x16x32xf32>) outs(%c : tensor<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x32xf32>
  return %r : tensor<2x4x32xf32>
}

// -----

// element-type truncates an elementwise producer's result inside it when the
// contraction is its only user (no truncating op after it); with another
// user it keeps its f32 result and a truncating generic follows.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d1)>
// BF16-LABEL: func.func @truncated_in_producer
// BF16:         %[[G:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// BF16:           math.erf
// BF16-NEXT:      %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// BF16-NEXT:      linalg.yield %[[T]] : bf16
// BF16:         linalg.matmul ins(%[[G]], %{{.*}} : tensor<8x16xbf16>, tensor<16x32xbf16>)
// BF16-LABEL: func.func @producer_kept_for_its_other_user
// BF16:         %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
// BF16:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// BF16:         linalg.matmul ins(%[[T]], %{{.*}} : tensor<8x16xbf16>, tensor<16x32xbf16>)
// BF16:         return %{{.*}}, %[[G]]
func.func @truncated_in_producer(%x: tensor<8x16xf32>, %bias: tensor<16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %g = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = math.erf %s : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%g, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
func.func @producer_kept_for_its_other_user(%x: tensor<8x16xf32>, %bias: tensor<16xf32>, %w: tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %g = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%g, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r, %g : tensor<8x32xf32>, tensor<8x16xf32>
}

// -----

// The same through the reshape between them (a [1, 8, 16] layer output read
// as [8, 16] rows): the reshape takes the narrow element type.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// BF16-LABEL: func.func @truncated_in_producer_through_reshape
// BF16:         %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8x16xbf16>)
// BF16:           arith.truncf %{{.*}} : f32 to bf16
// BF16:         %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<1x8x16xbf16> into tensor<8x16xbf16>
// BF16:         linalg.matmul ins(%[[C]], %{{.*}} : tensor<8x16xbf16>, tensor<16x32xbf16>)
func.func @truncated_in_producer_through_reshape(%x: tensor<1x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<1x8x16xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x16xf32>) outs(%e : tensor<1x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<1x8x16xf32>
  %c2 = tensor.collapse_shape %g [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%c2, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// Attention's q.k^T as cuvil-lower-to-linalg writes it (loops [b, m, k, n]):
// narrowed only with batched-contractions (hosts whose AMX tiles or
// vdpbf16ps take it); the truncation goes into the scaling op that produces q.
// BF16-LABEL: func.func @batched_product
// BF16:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x16xf32>, tensor<2x16x8xf32>)
// BATCHED-LABEL: func.func @batched_product
// BATCHED:         %[[Q:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x16xbf16>)
// BATCHED:           arith.mulf
// BATCHED:           arith.truncf %{{.*}} : f32 to bf16
// BATCHED:         %[[K:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x16x8xf32>) outs(%{{.*}} : tensor<2x16x8xbf16>)
// BATCHED:         linalg.generic {{.*}} ins(%[[Q]], %[[K]] : tensor<2x8x16xbf16>, tensor<2x16x8xbf16>) outs(%{{.*}} : tensor<2x8x8xf32>)
// BATCHED:           arith.extf
// BATCHED:           arith.extf
func.func @batched_product(%q: tensor<2x8x16xf32>, %kt: tensor<2x16x8xf32>) -> tensor<2x8x8xf32> {
  %scale = arith.constant 0.25 : f32
  %eq = tensor.empty() : tensor<2x8x16xf32>
  %qs = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x8x16xf32>) outs(%eq : tensor<2x8x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %scale : f32
    linalg.yield %m : f32
  } -> tensor<2x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<2x8x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%qs, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%c : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}
