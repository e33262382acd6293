// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-strip-asserts))" | FileCheck %s
// torch-mlir's bounds checks (cf.assert) go, in linalg bodies and at the
// function level; what they computed stays.

// An embedding lookup's index check inside a linalg.generic body.
// CHECK-LABEL: func.func @gather_bounds
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic
// CHECK:           arith.cmpi slt
// CHECK:           tensor.extract
// CHECK:           linalg.yield
// CHECK-NOT:     cf.assert
func.func @gather_bounds(%table: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %c10 = arith.constant 10 : i64
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%id: i64, %out: f32):
    %ok = arith.cmpi slt, %id, %c10 : i64
    cf.assert %ok, "index out of range"
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @top_level
// CHECK-NEXT:    return
func.func @top_level(%ok: i1) {
  cf.assert %ok, "tensor with zero elements"
  return
}

// -----

// Nothing to strip: unchanged.
// CHECK-LABEL: func.func @none
// CHECK-NEXT:    %[[S:.*]] = arith.addf
// CHECK-NEXT:    return %[[S]]
func.func @none(%a: f32) -> f32 {
  %s = arith.addf %a, %a : f32
  return %s : f32
}
