// RUN: cuvil-opt %s --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter=entry-point=cuvil_elementwise | FileCheck %s

// Elementwise with a broadcast operand, odd sizes: one row at a time in 64-wide
// vectors, the partial last chunk peeled (masked). Small ops get scf.for loops
// (an scf.forall costs more than their work once it becomes async tasks).
// CHECK-LABEL: func.func @add_bias
// CHECK-NOT:     scf.forall
// CHECK:         scf.for {{.*}} to %c20 step %c8
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} to %c128 step %c64
// CHECK:               vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x64xf32>, vector<64xf32>
// CHECK:               arith.addf {{.*}} : vector<64xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<64xf32>, tensor<1x64xf32>
// CHECK:             vector.{{create|constant}}_mask
// CHECK:             vector.transfer_read {{.*}} : tensor<1x1xf32>, vector<64xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @add_bias(%x: tensor<20x129xf32>, %b: tensor<129xf32>) -> tensor<20x129xf32> {
  %e = tensor.empty() : tensor<20x129xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<20x129xf32>, tensor<129xf32>) outs(%e : tensor<20x129xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<20x129xf32>
  return %r : tensor<20x129xf32>
}

// A big elementwise op (rank 2, >= 64 rows of >= 3072): an scf.forall over
// 8-row blocks (async tasks with more than one thread).
// CHECK-LABEL: func.func @gelu_like
// CHECK:         scf.forall ({{.*}}) in (8)
// CHECK:           scf.for {{.*}} to %c3072 step %c64
// CHECK:             math.erf {{.*}} : vector<64xf32>
// CHECK:           vector.{{create|constant}}_mask
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @gelu_like(%x: tensor<64x3100xf32>) -> tensor<64x3100xf32> {
  %e = tensor.empty() : tensor<64x3100xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x3100xf32>) outs(%e : tensor<64x3100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.erf %a : f32
    linalg.yield %s : f32
  } -> tensor<64x3100xf32>
  return %r : tensor<64x3100xf32>
}

// Row reduction (softmax's max) over 100: 8-row blocks with the -inf fill
// fused, an 8x16 partial accumulator carried by the reduction loop (not
// stored), the 4-wide remainder peeled, then horizontal reductions.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for {{.*}} to %c13 step %c8
// CHECK:           scf.for {{.*}} to %c96 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// CHECK-NOT:         vector.transfer_write
// CHECK:             arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK:             scf.yield
// CHECK:           arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK:           vector.reduction <maximumf>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @row_max(%x: tensor<13x100xf32>) -> tensor<13xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<13xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<13xf32>) -> tensor<13xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<13x100xf32>) outs(%f : tensor<13xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<13xf32>
  return %r : tensor<13xf32>
}

// Attention-sized rank-3 row sum (4 heads x 128 rows x 130): an scf.forall over
// (head, 8-row block).
// CHECK-LABEL: func.func @head_row_sum
// CHECK:         scf.forall ({{.*}}) in (4, 16)
// CHECK:           scf.for {{.*}} to %c128 step %c16 iter_args({{.*}}) -> ({{.*}}vector<8x16xf32>)
// CHECK:           vector.reduction <add>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @head_row_sum(%x: tensor<4x128x130xf32>) -> tensor<4x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128xf32>) -> tensor<4x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x128x130xf32>) outs(%f : tensor<4x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x128xf32>
  return %r : tensor<4x128xf32>
}

// Attention's k^T: a rank-4 transpose of the two innermost dims becomes 16x16
// shuffle transposes.
// CHECK-LABEL: func.func @transpose_heads
// CHECK:         scf.for {{.*}} to %c2 step %c1
// CHECK:           scf.for
// CHECK:             vector.transfer_read {{.*}} : tensor<1x16x1x16xf32>, vector<16x1x16xf32>
// CHECK-COUNT-64:    vector.shuffle
// CHECK-NOT:     linalg.transpose
// CHECK:         return
func.func @transpose_heads(%x: tensor<1x32x2x16xf32>) -> tensor<1x2x16x32xf32> {
  %e = tensor.empty() : tensor<1x2x16x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x32x2x16xf32>) outs(%e : tensor<1x2x16x32xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x2x16x32xf32>
}

// Ops on i1 tensors are not vectorized (cuvil-widen-bool-memrefs rewrites
// scalar loads and stores only) but their rows are still tiled (an scf.forall
// when big); contractions are left to the other scripts.
// CHECK-LABEL: func.func @skipped
// CHECK:         scf.for {{.*}} to %c24 step %c8
// CHECK:           linalg.generic {{.*}} outs({{.*}} : tensor<8x64xi1>)
// CHECK-NOT:       vector.
// CHECK:         linalg.matmul
// CHECK:         return
func.func @skipped(%x: tensor<24x64xf32>, %y: tensor<64x64xf32>) -> (tensor<24x64xi1>, tensor<24x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<24x64xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<24x64xf32>) outs(%e : tensor<24x64xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %c : i1
  } -> tensor<24x64xi1>
  %e2 = tensor.empty() : tensor<24x64xf32>
  %mm = linalg.matmul ins(%x, %y : tensor<24x64xf32>, tensor<64x64xf32>) outs(%e2 : tensor<24x64xf32>) -> tensor<24x64xf32>
  return %r, %mm : tensor<24x64xi1>, tensor<24x64xf32>
}
