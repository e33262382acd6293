// RUN: cuvil-opt %s --split-input-file --cuvil-lower-to-linalg | FileCheck %s
// Lowering of the dense Cuvil ops to linalg/tensor/arith/math, static and
// dynamic (`?`) dims. Numerics are checked natively in
// test/pytest/test_dialect_numerics.py; here the structure is.

// A 2-D matmul is a zero-filled linalg.matmul (what the CPU schedule matches).
// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
// CHECK:         return %[[R]]
// CHECK-NOT:     cuvil.
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = cuvil.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Batched lhs x rank-2 (transposed) rhs: the weight transpose is a 2-D
// linalg.transpose, the batch dims fold into M, every size comes from the
// operands at run time.
// CHECK-LABEL: func.func @matmul_dynamic_transpose_b
// CHECK-SAME:    (%[[A:.*]]: tensor<?x4x8xf32>, %[[B:.*]]: tensor<?x8xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[B]], %c0
// CHECK:         %[[TE:.*]] = tensor.empty(%[[N]]) : tensor<8x?xf32>
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<?x8xf32>) outs(%[[TE]] : tensor<8x?xf32>) permutation = [1, 0]
// CHECK:         %[[A2:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A2]], %[[BT]] : tensor<?x8xf32>, tensor<8x?xf32>)
// CHECK:         %[[D0:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4x8xf32>
// CHECK:         %[[D2:.*]] = tensor.dim %[[BT]], %{{.*}} : tensor<8x?xf32>
// CHECK:         tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], 4, %[[D2]]] : tensor<?x?xf32> into tensor<?x4x?xf32>
func.func @matmul_dynamic_transpose_b(%a: tensor<?x4x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x4x?xf32> {
  %0 = cuvil.matmul %a, %b {transpose_b} : tensor<?x4x8xf32>, tensor<?x8xf32> -> tensor<?x4x?xf32>
  return %0 : tensor<?x4x?xf32>
}

// -----

// Two dynamic dims in the lhs batch+M group: no collapse/expand (a
// memref.expand_shape with two dynamic sizes in a group made
// expand-strided-metadata assert); a batched generic reads the 2-D rhs
// (transposed by a copying generic) for every batch.
// CHECK-DAG:   #[[$LHS2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$RHS2:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @matmul_two_dynamic_batch_dims
// CHECK-SAME:    (%[[A:.*]]: tensor<?x?x8xf32>, %[[B:.*]]: tensor<16x8xf32>)
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[BT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$LHS2]], #[[$RHS2]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[A]], %[[BT]] : tensor<?x?x8xf32>, tensor<8x16xf32>)
// CHECK-NOT:     tensor.expand_shape
func.func @matmul_two_dynamic_batch_dims(%a: tensor<?x?x8xf32>, %b: tensor<16x8xf32>) -> tensor<?x?x16xf32> {
  %0 = cuvil.matmul %a, %b {transpose_b} : tensor<?x?x8xf32>, tensor<16x8xf32> -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// Batched rhs: one linalg.generic contraction; a size-1 batch dim of rhs
// broadcasts (map reads index 0). transpose_b is applied by a copying
// generic (not a 3-D linalg.transpose, which the 2-D CPU schedule would
// try to vectorize), then the loops run batch, i, r (reduction), j.
// CHECK-DAG:   #[[$TR:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG:   #[[$LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d2, d3)>
// CHECK-DAG:   #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @matmul_batched_broadcast
// CHECK-SAME:    (%[[A:.*]]: tensor<?x4x8xf32>, %[[B:.*]]: tensor<1x16x8xf32>)
// CHECK:         %[[D:.*]] = tensor.dim %[[A]], %c0
// CHECK:         %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x4x16xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x4x16xf32>)
// CHECK:         %[[BT:.*]] = linalg.generic {indexing_maps = [#[[$TR]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[B]] : tensor<1x16x8xf32>) outs(%{{.*}} : tensor<1x8x16xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[A]], %[[BT]] : tensor<?x4x8xf32>, tensor<1x8x16xf32>) outs(%[[F]] : tensor<?x4x16xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.transpose
func.func @matmul_batched_broadcast(%a: tensor<?x4x8xf32>, %b: tensor<1x16x8xf32>) -> tensor<?x4x16xf32> {
  %0 = cuvil.matmul %a, %b {transpose_b} : tensor<?x4x8xf32>, tensor<1x16x8xf32> -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// Integer contractions use muli/addi (in their type; int8 below accumulates in i32).
// CHECK-LABEL: func.func @matmul_i16
// CHECK:         %[[Z:.*]] = arith.constant 0 : i16
// CHECK:         linalg.fill ins(%[[Z]] : i16)
// CHECK:         linalg.generic
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i16
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i16
func.func @matmul_i16(%a: tensor<3x4x8xi16>, %b: tensor<3x8x2xi16>) -> tensor<3x4x2xi16> {
  %0 = cuvil.matmul %a, %b : tensor<3x4x8xi16>, tensor<3x8x2xi16> -> tensor<3x4x2xi16>
  return %0 : tensor<3x4x2xi16>
}

// -----

// Numpy broadcasting: right-aligned maps, stretched size-1 dims read index 0,
// dynamic result sizes from the operand that has the dim un-stretched.
// CHECK-DAG:   #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG:   #[[$COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG:   #[[$ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG:   #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME:    (%[[A:.*]]: tensor<?x4x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[C:.*]]: tensor<4x1xi32>, %[[D:.*]]: tensor<1x?xi32>)
// CHECK:         %[[D0:.*]] = tensor.dim %[[A]], %c0
// CHECK:         %[[E0:.*]] = tensor.empty(%[[D0]]) : tensor<?x4x16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$LAST]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[E0]] : tensor<?x4x16xf32>)
// CHECK:           arith.addf
// CHECK:         %[[D1:.*]] = tensor.dim %[[D]], %c1
// CHECK:         %[[E1:.*]] = tensor.empty(%[[D1]]) : tensor<4x?xi32>
// CHECK:         linalg.generic {indexing_maps = [#[[$COL0]], #[[$ROW0]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[C]], %[[D]] : {{.*}}) outs(%[[E1]] : tensor<4x?xi32>)
// CHECK:           arith.divsi
func.func @binary_broadcast(%a: tensor<?x4x16xf32>, %b: tensor<16xf32>, %c: tensor<4x1xi32>, %d: tensor<1x?xi32>) -> (tensor<?x4x16xf32>, tensor<4x?xi32>) {
  %0 = cuvil.add %a, %b : tensor<?x4x16xf32>, tensor<16xf32> -> tensor<?x4x16xf32>
  %1 = cuvil.div %c, %d : tensor<4x1xi32>, tensor<1x?xi32> -> tensor<4x?xi32>
  return %0, %1 : tensor<?x4x16xf32>, tensor<4x?xi32>
}

// -----

// One scalar op per binary op, float and integer.
// CHECK-LABEL: func.func @binary_ops
// CHECK:         arith.subf
// CHECK:         arith.mulf
// CHECK:         arith.divf
// CHECK:         arith.maximumf
// CHECK:         arith.subi
// CHECK:         arith.muli
// CHECK:         arith.maxsi
// CHECK:         arith.addi
func.func @binary_ops(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0 = cuvil.sub %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = cuvil.mul %0, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = cuvil.div %1, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = cuvil.max %2, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = cuvil.sub %i, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  %5 = cuvil.mul %4, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  %6 = cuvil.max %5, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  %7 = cuvil.add %6, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  return %3, %7 : tensor<2x3xf32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME:    (%[[X:.*]]: tensor<?x16xf32>)
// CHECK:         %[[D:.*]] = tensor.dim %[[X]], %c0
// CHECK:         tensor.empty(%[[D]]) : tensor<?x16xf32>
// CHECK:         linalg.generic
// CHECK:           %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           arith.maximumf %{{.*}}, %[[Z]] : f32
// CHECK:         linalg.generic
// CHECK:           math.tanh
// CHECK:         linalg.generic
// CHECK:           math.exp
// Exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
// CHECK:         linalg.generic
// CHECK:           %[[ISQ2:.*]] = arith.constant 0.70710{{[0-9]+}} : f32
// CHECK:           %[[S:.*]] = arith.mulf %{{.*}}, %[[ISQ2]]
// CHECK:           math.erf %[[S]]
// CHECK:           arith.constant 5.000000e-01
// Tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK:         linalg.generic
// CHECK:           arith.constant 4.471500e-02
// CHECK:           arith.constant 0.797884{{.*}} : f32
// CHECK:           math.tanh
// CHECK-NOT:       math.erf
// CHECK:         return
func.func @unary(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %0 = cuvil.relu %x : tensor<?x16xf32>
  %1 = cuvil.tanh %0 : tensor<?x16xf32>
  %2 = cuvil.exp %1 : tensor<?x16xf32>
  %3 = cuvil.gelu %2 : tensor<?x16xf32>
  %4 = cuvil.gelu %3 {tanh_approx} : tensor<?x16xf32>
  return %4 : tensor<?x16xf32>
}

// -----

// f16/bf16 GELU is computed in f32 and rounded once (PyTorch's opmath);
// math.erf on f16 used to reach convert-math-to-libm, whose extf/truncf
// wrappers appear after arith is lowered, and LLVM translation failed.
// CHECK-LABEL: func.func @gelu_f16
// CHECK:         linalg.generic
// CHECK:           %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:           math.erf %{{.*}} : f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT:       math.erf %{{.*}} : f16
func.func @gelu_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = cuvil.gelu %x : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// Softmax along a middle, dynamic axis: max and sum reduce that axis (the
// reduced tensors drop it), exp(x - max), divide.
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_axis1
// CHECK-SAME:    (%[[X:.*]]: tensor<2x?x8xf32>)
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x?x8xf32>) outs(%[[M0]] : tensor<2x8xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[E:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$ID]]], {{.*}}} ins(%[[X]], %[[MAX]] : tensor<2x?x8xf32>, tensor<2x8xf32>)
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<2x?x8xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[E]], %[[SUM]] : tensor<2x?x8xf32>, tensor<2x8xf32>)
// CHECK:           arith.divf
func.func @softmax_axis1(%x: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %0 = cuvil.softmax %x {axis = 1 : i64} : tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_negative_axis
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
func.func @softmax_negative_axis(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %0 = cuvil.softmax %x : tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Layer norm over the last (dynamic) dim: 1/N from tensor.dim, mean,
// centred values, biased variance, rsqrt(var + eps), affine weight/bias.
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm_dynamic
// CHECK-SAME:    (%[[X:.*]]: tensor<?x?xf32>, %[[W:.*]]: tensor<?xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c1
// CHECK:         %[[NI:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK:         %[[NF:.*]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK:         %[[INV:.*]] = arith.divf %{{.*}}, %[[NF]] : f32
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]]
// CHECK:         %[[CEN:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[SUM]] :
// CHECK:           arith.mulf %{{.*}}, %[[INV]]
// CHECK:           arith.subf
// CHECK:         %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[CEN]]
// CHECK:         %[[EPS:.*]] = arith.constant 9.99999996E-13 : f32
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$COL]], #[[$COL]], #[[$ID]]], {{.*}}} ins(%[[CEN]], %[[SQ]], %[[W]], %[[B]] :
// CHECK:           arith.addf %{{.*}}, %[[EPS]]
// CHECK:           math.rsqrt
func.func @layer_norm_dynamic(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = cuvil.layer_norm %x, %w, %b {epsilon = 1.0e-12 : f64} : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Dense attention: q * scale, k transposed once, scores (batch, s, d, t
// loops), additive mask broadcast from [S, T], causal select (key index >
// query index -> -inf), softmax over t, probs x v.
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$MASK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @attention_mask_causal
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x8x16xf32>, %[[K:.*]]: tensor<2x12x16xf32>, %[[V:.*]]: tensor<2x12x4xf32>, %[[M:.*]]: tensor<8x12xf32>)
// CHECK:         %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK:         %[[QS:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<2x8x16xf32>)
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:         %[[KT:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x12x16xf32>) outs(%{{.*}} : tensor<2x16x12xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[QS]], %[[KT]] : tensor<2x8x16xf32>, tensor<2x16x12xf32>) outs(%{{.*}} : tensor<2x8x12xf32>)
// CHECK:         %[[SM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$MASK]], #[[$ID]]], {{.*}}} ins(%[[S]], %[[M]] : tensor<2x8x12xf32>, tensor<8x12xf32>)
// CHECK-NEXT:    ^bb0(%[[SV:.*]]: f32, %[[MV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.addf %[[SV]], %[[MV]] : f32
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[CAUSAL:.*]] = linalg.generic {{.*}} ins(%[[SM]] : tensor<2x8x12xf32>)
// CHECK-NEXT:    ^bb0(%[[SMV:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[J:.*]] = linalg.index 2 : index
// CHECK:           %[[FUT:.*]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK:           arith.select %[[FUT]], %[[NINF]], %[[SMV]] : f32
// Softmax over keys; a row whose keys are all masked (max = -inf, sum = 0)
// gives zeros like torch's SDPA, not NaN: the max is replaced by 0 before
// exp(x - max) (-inf - -inf would be NaN), and the quotient by 0 when the
// sum is 0.
// CHECK:         %[[NINF2:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[CAUSAL]] : tensor<2x8x12xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[CAUSAL]], %[[MAX]] : tensor<2x8x12xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:.*]]: f32, %[[MAXV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ALLMASKED:.*]] = arith.cmpf oeq, %[[MAXV]], %[[NINF2]] : f32
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.select %[[ALLMASKED]], %[[ZERO]], %[[MAXV]] : f32
// CHECK-NEXT:      %[[CEN:.*]] = arith.subf %[[XV]], %[[SHIFT]] : f32
// CHECK-NEXT:      math.exp %[[CEN]] : f32
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x8x12xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x8x12xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    ^bb0(%[[EV:.*]]: f32, %[[SUMV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.divf %[[EV]], %[[SUMV]] : f32
// CHECK-NEXT:      %[[NONE:.*]] = arith.cmpf oeq, %[[SUMV]], %[[ZERO]] : f32
// CHECK-NEXT:      arith.select %[[NONE]], %[[ZERO]], %[[P]] : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %[[V]] : tensor<2x8x12xf32>, tensor<2x12x4xf32>) outs(%{{.*}} : tensor<2x8x4xf32>)
func.func @attention_mask_causal(%q: tensor<2x8x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x4xf32>, %m: tensor<8x12xf32>) -> tensor<2x8x4xf32> {
  %0 = cuvil.attention %q, %k, %v mask(%m : tensor<8x12xf32>) {causal} : tensor<2x8x16xf32>, tensor<2x12x16xf32>, tensor<2x12x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Explicit scale attribute: q is multiplied by it (not by 1/sqrt(8)).
// CHECK-LABEL: func.func @attention_scale
// CHECK-SAME:    (%[[Q:.*]]: tensor<4x8xf32>)
// CHECK:         %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[QV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[QS:.*]] = arith.mulf %[[QV]], %[[SCALE]] : f32
// CHECK-NEXT:      linalg.yield %[[QS]] : f32
func.func @attention_scale(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.attention %q, %q, %q {scale = 0.125 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A dynamic head dim: the default scale 1/sqrt(D) is computed at run time
// (it used to be folded from the dynamic-size sentinel into a NaN constant).
// D is the last dim of q (index 2), read with tensor.dim; 1 / sqrt(D) is
// computed in f64 and rounded once to f32, and q itself is multiplied by it.
// A NaN constant (f32 or f64, either sign) must appear nowhere in the
// function: the CHECK-NOTs cover the stretches before, in the middle of and
// after the checked chain (to the end of the function).
// CHECK-LABEL: func.func @attention_dynamic_head_dim
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x?x?xf32>)
// CHECK-NOT:     {{0x[7F]FC00000|0x[7F]FF8000000000000}}
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[D:.*]] = tensor.dim %[[Q]], %[[C2]] : tensor<2x?x?xf32>
// CHECK-NEXT:    %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK-NEXT:    %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f64
// CHECK-NEXT:    %[[SQ:.*]] = math.sqrt %[[DF]] : f64
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ]] : f64
// CHECK-NEXT:    %[[SCALE:.*]] = arith.truncf %[[INV]] : f64 to f32
// CHECK-NOT:     {{0x[7F]FC00000|0x[7F]FF8000000000000}}
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<2x?x?xf32>)
// CHECK-NEXT:    ^bb0(%[[QV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf %[[QV]], %[[SCALE]] : f32
// CHECK-NOT:     {{0x[7F]FC00000|0x[7F]FF8000000000000}}
func.func @attention_dynamic_head_dim(%q: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
  %0 = cuvil.attention %q, %q, %q : tensor<2x?x?xf32>, tensor<2x?x?xf32>, tensor<2x?x?xf32> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

// Float narrowing is one truncf (nearest-even); f16 <-> bf16 goes through f32.
// CHECK-LABEL: func.func @cast_floats
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:         %[[WIDE:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:    arith.truncf %[[WIDE]] : f32 to bf16
// CHECK:         arith.extf %{{.*}} : bf16 to f32
func.func @cast_floats(%x: tensor<4x?xf32>, %h: tensor<4xf16>, %b: tensor<4xbf16>) -> (tensor<4x?xbf16>, tensor<4xbf16>, tensor<4xf32>) {
  %0 = cuvil.dtype_cast %x : tensor<4x?xf32> to tensor<4x?xbf16>
  %1 = cuvil.dtype_cast %h : tensor<4xf16> to tensor<4xbf16>
  %2 = cuvil.dtype_cast %b : tensor<4xbf16> to tensor<4xf32>
  return %0, %1, %2 : tensor<4x?xbf16>, tensor<4xbf16>, tensor<4xf32>
}

// -----

// float -> i32 saturates by comparing against +-2^31 in the float type
// before fptosi (2^31 - 1 is not an f32: clamping to it rounded up to 2^31,
// and fptosi of that gave INT_MIN for large positive inputs).
// Out-of-range and NaN inputs are replaced by 0 before fptosi (whose result
// is undefined for them), then the out-of-range ones by the bounds.
// CHECK-LABEL: func.func @cast_float_to_i32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: i32):
// CHECK-NEXT:      %[[R:.*]] = math.trunc %[[IN]] : f32
// CHECK:           %[[HI:.*]] = arith.constant 2.14748365E+9 : f32
// CHECK:           %[[BIG:.*]] = arith.cmpf oge, %[[R]], %[[HI]] : f32
// CHECK:           %[[LO:.*]] = arith.constant -2.14748365E+9 : f32
// CHECK:           %[[SMALL:.*]] = arith.cmpf ole, %[[R]], %[[LO]] : f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[R]], %[[R]] : f32
// CHECK:           %[[OUT:.*]] = arith.ori %[[BIG]], %[[SMALL]] : i1
// CHECK:           %[[BAD:.*]] = arith.ori %[[OUT]], %[[NAN]] : i1
// CHECK:           %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[SAFE:.*]] = arith.select %[[BAD]], %[[Z]], %[[R]] : f32
// CHECK:           %[[I:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK:           %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK:           %[[I2:.*]] = arith.select %[[BIG]], %[[MAX]], %[[I]] : i32
// CHECK:           %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:           arith.select %[[SMALL]], %[[MIN]], %[[I2]] : i32
// Nearest-even rounding for the i8 cast, same guards with the i8 bounds:
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN8:.*]]: f32, %{{.*}}: i8):
// CHECK-NEXT:      %[[R8:.*]] = math.roundeven %[[IN8]] : f32
// CHECK:           %[[HI8:.*]] = arith.constant 1.280000e+02 : f32
// CHECK:           %[[BIG8:.*]] = arith.cmpf oge, %[[R8]], %[[HI8]] : f32
// CHECK:           %[[LO8:.*]] = arith.constant -1.280000e+02 : f32
// CHECK:           %[[SMALL8:.*]] = arith.cmpf ole, %[[R8]], %[[LO8]] : f32
// CHECK:           %[[NAN8:.*]] = arith.cmpf uno, %[[R8]], %[[R8]] : f32
// CHECK:           %[[OUT8:.*]] = arith.ori %[[BIG8]], %[[SMALL8]] : i1
// CHECK:           %[[BAD8:.*]] = arith.ori %[[OUT8]], %[[NAN8]] : i1
// CHECK:           %[[Z8:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[SAFE8:.*]] = arith.select %[[BAD8]], %[[Z8]], %[[R8]] : f32
// CHECK:           %[[I8:.*]] = arith.fptosi %[[SAFE8]] : f32 to i8
// CHECK:           %[[MAX8:.*]] = arith.constant 127 : i8
// CHECK:           %[[SAT8:.*]] = arith.select %[[BIG8]], %[[MAX8]], %[[I8]] : i8
// CHECK:           %[[MIN8:.*]] = arith.constant -128 : i8
// CHECK:           arith.select %[[SMALL8]], %[[MIN8]], %[[SAT8]] : i8
func.func @cast_float_to_i32(%x: tensor<4x?xf32>) -> (tensor<4x?xi32>, tensor<4x?xi8>) {
  %0 = cuvil.dtype_cast %x {rounding = #cuvil<rounding toward_zero>} : tensor<4x?xf32> to tensor<4x?xi32>
  %1 = cuvil.dtype_cast %x : tensor<4x?xf32> to tensor<4x?xi8>
  return %0, %1 : tensor<4x?xi32>, tensor<4x?xi8>
}

// -----

// Integer narrowing saturates; widening sign-extends; int -> float is sitofp.
// CHECK-LABEL: func.func @cast_ints
// CHECK-SAME:    (%[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<4xi8>)
// CHECK:         linalg.generic {{.*}} ins(%[[I]] : tensor<4xi32>)
// CHECK-NEXT:    ^bb0(%[[IV:.*]]: i32, %{{.*}}: i8):
// CHECK-NEXT:      %[[LO:.*]] = arith.constant -128 : i32
// CHECK-NEXT:      %[[AT_LEAST:.*]] = arith.maxsi %[[IV]], %[[LO]] : i32
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 127 : i32
// CHECK-NEXT:      %[[CLAMPED:.*]] = arith.minsi %[[AT_LEAST]], %[[HI]] : i32
// CHECK-NEXT:      arith.trunci %[[CLAMPED]] : i32 to i8
// CHECK:         linalg.generic {{.*}} ins(%[[J]] : tensor<4xi8>)
// CHECK-NEXT:    ^bb0(%[[JV:.*]]: i8, %{{.*}}: i32):
// CHECK-NEXT:      arith.extsi %[[JV]] : i8 to i32
// CHECK:         linalg.generic {{.*}} ins(%[[I]] : tensor<4xi32>)
// CHECK-NEXT:    ^bb0(%[[IV2:.*]]: i32, %{{.*}}: f16):
// CHECK-NEXT:      arith.sitofp %[[IV2]] : i32 to f16
func.func @cast_ints(%i: tensor<4xi32>, %j: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi32>, tensor<4xf16>) {
  %0 = cuvil.dtype_cast %i : tensor<4xi32> to tensor<4xi8>
  %1 = cuvil.dtype_cast %j : tensor<4xi8> to tensor<4xi32>
  %2 = cuvil.dtype_cast %i : tensor<4xi32> to tensor<4xf16>
  return %0, %1, %2 : tensor<4xi8>, tensor<4xi32>, tensor<4xf16>
}

// -----

// int8 operands, i32 accumulator: the transposed weight stays int8, the
// zero fill is i32; batched operands sign-extend in the generic's body.
// CHECK-LABEL: func.func @int8_matmuls
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<128x64xi8>) outs(%{{.*}} : tensor<64x128xi8>)
// CHECK:         linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<64x128xi32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x64xi8>, tensor<64x128xi8>) outs(%{{.*}} : tensor<64x128xi32>)
// CHECK:         linalg.generic
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.muli
// CHECK:           arith.addi
func.func @int8_matmuls(%x: tensor<2x32x64xi8>, %w: tensor<128x64xi8>, %y: tensor<2x64x16xi8>)
    -> (tensor<2x32x128xi32>, tensor<2x32x16xi32>) {
  %a = cuvil.matmul %x, %w {transpose_b} : tensor<2x32x64xi8>, tensor<128x64xi8> -> tensor<2x32x128xi32>
  %b = cuvil.matmul %x, %y : tensor<2x32x64xi8>, tensor<2x64x16xi8> -> tensor<2x32x16xi32>
  return %a, %b : tensor<2x32x128xi32>, tensor<2x32x16xi32>
}
