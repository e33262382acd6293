// Payload for elementwise-cpu.mlir: the softmax of softmax_13x100.mlir as a
// row chain (one kernel from cuvil-outline-kernels, marked cuvil.row_chain).
func.func @softmax_chain(%x: tensor<13x100xf32>, %out: tensor<13x100xf32>) -> tensor<13x100xf32> attributes {cuvil.row_chain} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<13xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<13xf32>) -> tensor<13xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<13x100xf32>) outs(%fm : tensor<13xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<13xf32>
  %e = tensor.empty() : tensor<13x100xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<13x100xf32>, tensor<13xf32>) outs(%e : tensor<13x100xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<13x100xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<13xf32>) -> tensor<13xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<13x100xf32>) outs(%fs : tensor<13xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<13x100xf32>, tensor<13xf32>) outs(%out : tensor<13x100xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<13x100xf32>
  return %y : tensor<13x100xf32>
}
