// Payload for elementwise-cpu.mlir: a row chain whose rows (16) fit one
// partial accumulator: its reductions fit the vector sizes untiled.
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @softmax_chain_short_rows(%arg0: tensor<3x4x16x16xf32>, %arg1: tensor<3x4x16x16xf32>) -> tensor<3x4x16x16xf32> attributes {cuvil.row_chain} {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<3x4x16x16xf32>
  %1 = tensor.empty() : tensor<3x4x16xf32>
  %2 = linalg.fill ins(%cst_0 : f32) outs(%1 : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %3 = tensor.empty() : tensor<3x4x16x1xf32>
  %collapsed = tensor.collapse_shape %3 [[0], [1], [2, 3]] : tensor<3x4x16x1xf32> into tensor<3x4x16xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%collapsed : tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  %5 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0 : tensor<3x4x16x16xf32>) outs(%2 : tensor<3x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.maximumf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<3x4x16xf32>
  %6 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %5 : tensor<3x4x16x16xf32>, tensor<3x4x16xf32>) outs(%0 : tensor<3x4x16x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %9 = arith.subf %in, %in_1 : f32
    %10 = math.exp %9 : f32
    linalg.yield %10 : f32
  } -> tensor<3x4x16x16xf32>
  %7 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%6 : tensor<3x4x16x16xf32>) outs(%4 : tensor<3x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<3x4x16xf32>
  %8 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %7 : tensor<3x4x16x16xf32>, tensor<3x4x16xf32>) outs(%arg1 : tensor<3x4x16x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %9 = arith.divf %in, %in_1 : f32
    linalg.yield %9 : f32
  } -> tensor<3x4x16x16xf32>
  return %8 : tensor<3x4x16x16xf32>
}
