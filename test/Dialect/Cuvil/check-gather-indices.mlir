// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-check-gather-indices,cuvil-strip-asserts),canonicalize)" | FileCheck %s

// nn.Embedding as torch-mlir lowers it: the row index comes from the input.
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @cuvil_runtime_error(i32)
// CHECK-LABEL: func.func @embedding
// CHECK-SAME:    (%[[TABLE:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<3xi64>)
// The read is clamped into [0, 9] ...
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} ins(%[[IDS]] : tensor<3xi64>)
// CHECK:           %[[I:.*]] = arith.index_cast
// CHECK:           %[[LO:.*]] = arith.minsi %[[I]], %c9
// CHECK:           %[[IN:.*]] = arith.maxsi %[[LO]], %c0
// CHECK:           tensor.extract %[[TABLE]][%[[IN]], %{{.*}}]
// CHECK-NOT:       cf.assert
// ... and out-of-range ids are reported after the op, by a reduction over
// the ids alone (not over the rows they gather).
// CHECK:         %[[ANY:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[IDS]] : tensor<3xi64>) outs(%{{.*}} : tensor<i8>)
// CHECK-DAG:       arith.cmpi slt, %{{.*}}, %c0 : index
// CHECK-DAG:       arith.cmpi sge, %{{.*}}, %c10 : index
// CHECK:         tensor.extract %[[ANY]][]
// CHECK:         scf.if
// CHECK-NEXT:      func.call @cuvil_runtime_error(%c2_i32)
// CHECK:         return %[[ROWS]]
func.func @embedding(%table: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %c10 = arith.constant 10 : index
  %c0_i64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 1 : index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %x = tensor.extract %table[%i, %j] : tensor<10x4xf32>
    linalg.yield %x : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// x[idx] with negative indices wrapped in the body: the check recomputes the
// wrapped index (and a dynamic size comes from tensor.dim).
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @wrapped_index
// CHECK-SAME:    (%[[X:.*]]: tensor<?x5xf32>, %[[IDX:.*]]: tensor<3xi64>
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         linalg.generic
// CHECK:           arith.select
// CHECK:           arith.minsi
// CHECK:         linalg.generic {{.*}}ins(%[[IDX]] : tensor<3xi64>) outs(%{{.*}} : tensor<i8>)
// CHECK:           arith.addi
// CHECK:           arith.select
// CHECK:           arith.cmpi sge, %{{.*}}, %[[N]]
// CHECK:         scf.if
func.func @wrapped_index(%x: tensor<?x5xf32>, %idx: tensor<3xi64>, %n: i64) -> tensor<3x5xf32> {
  %c0_i64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<3x5xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<3xi64>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%in: i64, %out: f32):
    %neg = arith.cmpi slt, %in, %c0_i64 : i64
    %w = arith.addi %in, %n : i64
    %s = arith.select %neg, %w, %in : i64
    %i = arith.index_cast %s : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%i, %j] : tensor<?x5xf32>
    linalg.yield %v : f32
  } -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}

// -----

// Indices from loop indices only (a transpose written as a gather) are in
// range by construction: left alone.
#map1 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @loop_indices_only
// CHECK-NOT:     cuvil_runtime_error
// CHECK-NOT:     arith.minsi
func.func @loop_indices_only(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%j, %i] : tensor<4x4xf32>
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Indices from the model's own tensors (BERT's position-id buffer) are
// clamped but not reported: the check would be weight-only work, hoisted into
// main_prepack, from where nothing is reported.
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @main
// CHECK:         arith.minsi
// CHECK-NOT:     cuvil_runtime_error
func.func @main(%table: tensor<10x4xf32> {cuvil.kind = "parameter"}, %ids: tensor<3xi64> {cuvil.kind = "buffer"},
                %x: tensor<3x4xf32> {cuvil.kind = "user_input"}) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
