// RUN: cuvil-opt %s --split-input-file --cuvil-lower-tm-tensor -verify-diagnostics

func.func @attention(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'tm_tensor.attention' op has no lowering in Cuvil (scatter, sort, topk and scan have)}}
  %0 = "tm_tensor.attention"(%q, %q, %q, %q) <{operandSegmentSizes = array<i32: 3, 1>}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @scan_without_accumulator(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tm_tensor.scan' op is not a scan as torch-mlir writes it (ins(input) outs(output, accumulator), dimension, inclusive, a combiner)}}
  %0 = "tm_tensor.scan"(%x, %x) <{dimension = 0 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: f32, %b: f32):
    "tm_tensor.yield"(%a) : (f32) -> ()
  }) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @scatter_to_a_missing_dim(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tm_tensor.scatter' op maps an index to dimension 3, out of the original's rank}}
  %0 = "tm_tensor.scatter"(%u, %i, %x) <{dimension_map = array<i64: 3>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = true}> ({
  ^bb0(%a: f32, %b: f32):
    "tm_tensor.yield"(%a) : (f32) -> ()
  }) : (tensor<2xf32>, tensor<2x1xi64>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
