// RUN: cuvil-opt %s --split-input-file --cuvil-lower-to-linalg | FileCheck %s
// Layout encodings: an encoded tensor becomes the tensor of its stored
// values (function boundaries included), and the ops that read layouts loop
// over stored entries / present blocks only, with the pattern as constant
// tables.

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
// to_layout gathers the 7 stored entries (row/col tables); to_dense
// scatters them into zeros with one scf.for over the 7 entries.
// CHECK-LABEL: func.func @csr_roundtrip
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>) -> (tensor<7xf32>, tensor<4x8xf32>)
// CHECK:         %[[ROWS:.*]] = arith.constant dense<[0, 0, 1, 1, 1, 2, 2]> : tensor<7xindex>
// CHECK:         %[[COLS:.*]] = arith.constant dense<[1, 3, 0, 2, 4, 1, 3]> : tensor<7xindex>
// CHECK:         %[[VALS:.*]] = linalg.generic {{.*}} ins(%[[ROWS]], %[[COLS]] : tensor<7xindex>, tensor<7xindex>) outs(%{{.*}} : tensor<7xf32>)
// CHECK:         ^bb0(%[[R:.*]]: index, %[[C:.*]]: index, %{{.*}}: f32):
// CHECK:           tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<4x8xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         %[[NNZ:.*]] = arith.constant 7 : index
// CHECK:         %[[D:.*]] = scf.for %[[P:.*]] = %{{.*}} to %[[NNZ]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZEROS]]) -> (tensor<4x8xf32>)
// CHECK:           %[[V:.*]] = tensor.extract %[[VALS]][%[[P]]] : tensor<7xf32>
// CHECK:           %[[INS:.*]] = tensor.insert %[[V]] into %[[ACC]]
// CHECK:           scf.yield %[[INS]]
// CHECK:         return %[[VALS]], %[[D]] : tensor<7xf32>, tensor<4x8xf32>
// CHECK-NOT:     cuvil.
func.func @csr_roundtrip(%x: tensor<4x8xf32>) -> (tensor<4x8xf32, #csr>, tensor<4x8xf32>) {
  %s = cuvil.to_layout %x : tensor<4x8xf32> to tensor<4x8xf32, #csr>
  %d = cuvil.to_dense %s : tensor<4x8xf32, #csr> to tensor<4x8xf32>
  return %s, %d : tensor<4x8xf32, #csr>, tensor<4x8xf32>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
// Sparse x dense: one scf.for over the 7 stored entries, each adding
// a * B[col, :] into C[row, :]; no dense matmul. M is dynamic in the type:
// it is the pattern's row count (4), not a size of B (was: B's column count).
// CHECK-LABEL: func.func @csr_matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<7xf32>, %[[B:.*]]: tensor<8x?xf32>) -> tensor<?x?xf32>
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[M:.*]] = arith.constant 4 : index
// CHECK:         %[[N:.*]] = tensor.dim %[[B]], %c1
// CHECK:         %[[E:.*]] = tensor.empty(%[[M]], %[[N]]) : tensor<?x?xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x?xf32>)
// CHECK:         %[[ROWS:.*]] = arith.constant dense<[0, 0, 1, 1, 1, 2, 2]> : tensor<7xindex>
// CHECK:         %[[COLS:.*]] = arith.constant dense<[1, 3, 0, 2, 4, 1, 3]> : tensor<7xindex>
// CHECK:         %[[NNZ:.*]] = arith.constant 7 : index
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %[[NNZ]] step %{{.*}} iter_args(%[[C:.*]] = %[[Z]]) -> (tensor<?x?xf32>)
// CHECK:           %[[R:.*]] = tensor.extract %[[ROWS]][%[[P]]]
// CHECK:           %[[K:.*]] = tensor.extract %[[COLS]][%[[P]]]
// CHECK:           %[[AV:.*]] = tensor.extract %[[A]][%[[P]]] : tensor<7xf32>
// CHECK:           %[[BROW:.*]] = tensor.extract_slice %[[B]][%[[K]], 0] [1, %{{.*}}] [1, 1] : tensor<8x?xf32> to tensor<?xf32>
// CHECK:           %[[CROW:.*]] = tensor.extract_slice %[[C]][%[[R]], 0] [1, %{{.*}}] [1, 1] : tensor<?x?xf32> to tensor<?xf32>
// CHECK:           %[[UPD:.*]] = linalg.generic {{.*}} ins(%[[BROW]] : tensor<?xf32>) outs(%[[CROW]] : tensor<?xf32>)
// CHECK:             arith.mulf %[[AV]], %{{.*}} : f32
// CHECK:             arith.addf
// CHECK:           %[[NEW:.*]] = tensor.insert_slice %[[UPD]] into %[[C]][%[[R]], 0]
// CHECK:           scf.yield %[[NEW]]
// CHECK-NOT:     linalg.matmul
func.func @csr_matmul(%a: tensor<?x8xf32, #csr>, %b: tensor<8x?xf32>) -> tensor<?x?xf32> {
  %0 = cuvil.matmul %a, %b : tensor<?x8xf32, #csr>, tensor<8x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 1, 1], col_idx = [2]}>
// transpose_b: B is transposed once, then the same loop over entries.
// CHECK-LABEL: func.func @csr_matmul_transpose_b
// CHECK-SAME:    (%[[A:.*]]: tensor<1xi32>, %[[B:.*]]: tensor<5x3xi32>) -> tensor<2x5xi32>
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<5x3xi32>) outs(%{{.*}} : tensor<3x5xi32>) permutation = [1, 0]
// CHECK:         %[[NNZ:.*]] = arith.constant 1 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[NNZ]]
// CHECK:           tensor.extract_slice %[[BT]]
// CHECK:             arith.muli
// CHECK:             arith.addi
func.func @csr_matmul_transpose_b(%a: tensor<2x3xi32, #csr>, %b: tensor<5x3xi32>) -> tensor<2x5xi32> {
  %0 = cuvil.matmul %a, %b {transpose_b} : tensor<2x3xi32, #csr>, tensor<5x3xi32> -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
// Calls and returns carry the storage types; dtype_cast of an encoded
// tensor casts the stored values (it failed to lower before).
// CHECK-LABEL: func.func @caller
// CHECK-SAME:    (%[[A:.*]]: tensor<7xf32>) -> tensor<7xf16>
// CHECK:         %[[R:.*]] = call @cast(%[[A]]) : (tensor<7xf32>) -> tensor<7xf16>
// CHECK:         return %[[R]] : tensor<7xf16>
// CHECK-LABEL: func.func @cast
// CHECK-SAME:    (%[[A:.*]]: tensor<7xf32>) -> tensor<7xf16>
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : tensor<7xf32>) outs(%{{.*}} : tensor<7xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @caller(%a: tensor<4x8xf32, #csr>) -> tensor<4x8xf16, #csr> {
  %0 = call @cast(%a) : (tensor<4x8xf32, #csr>) -> tensor<4x8xf16, #csr>
  return %0 : tensor<4x8xf16, #csr>
}
func.func @cast(%a: tensor<4x8xf32, #csr>) -> tensor<4x8xf16, #csr> {
  %0 = cuvil.dtype_cast %a : tensor<4x8xf32, #csr> to tensor<4x8xf16, #csr>
  return %0 : tensor<4x8xf16, #csr>
}

// -----

#bm = #cuvil.block_masked<{block = [2, 4], row_ptr = [0, 1, 1, 3], col_idx = [0, 0, 1]}>
// A block_masked tensor is stored as [B.., blocks, bm, bn]; to_dense copies
// each present block into zeros (scf.for over the 3 blocks, insert_slice at
// (row * bm, col * bn)). Dynamic batch dims come from the operands.
// CHECK-LABEL: func.func @block_roundtrip
// CHECK-SAME:    (%[[X:.*]]: tensor<?x6x8xf32>) -> (tensor<?x3x2x4xf32>, tensor<?x6x8xf32>)
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[SE:.*]] = tensor.empty(%[[B]]) : tensor<?x3x2x4xf32>
// CHECK:         %[[BROWS:.*]] = arith.constant dense<[0, 2, 2]> : tensor<3xindex>
// CHECK:         %[[BCOLS:.*]] = arith.constant dense<[0, 0, 1]> : tensor<3xindex>
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[BROWS]], %[[BCOLS]] : tensor<3xindex>, tensor<3xindex>) outs(%[[SE]] : tensor<?x3x2x4xf32>)
// CHECK:           tensor.extract %[[X]]
// CHECK:         %[[SB:.*]] = tensor.dim %[[S]], %c0
// CHECK:         %[[DE:.*]] = tensor.empty(%[[SB]]) : tensor<?x6x8xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[DE]] : tensor<?x6x8xf32>)
// CHECK:         %[[NB:.*]] = arith.constant 3 : index
// CHECK:         %[[D:.*]] = scf.for %[[P:.*]] = %{{.*}} to %[[NB]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]])
// CHECK:           %[[R:.*]] = tensor.extract %{{.*}}[%[[P]]] : tensor<3xindex>
// CHECK:           %[[C:.*]] = tensor.extract %{{.*}}[%[[P]]] : tensor<3xindex>
// CHECK:           %[[BLK:.*]] = tensor.extract_slice %[[S]][0, %[[P]], 0, 0] [%{{.*}}, 1, 2, 4] [1, 1, 1, 1] : tensor<?x3x2x4xf32> to tensor<?x2x4xf32>
// CHECK:           %[[RO:.*]] = arith.muli %[[R]], %c2
// CHECK:           %[[CO:.*]] = arith.muli %[[C]], %c4
// CHECK:           tensor.insert_slice %[[BLK]] into %[[ACC]][0, %[[RO]], %[[CO]]] [%{{.*}}, 2, 4] [1, 1, 1]
// CHECK:         return %[[S]], %[[D]]
func.func @block_roundtrip(%x: tensor<?x6x8xf32>) -> (tensor<?x6x8xf32, #bm>, tensor<?x6x8xf32>) {
  %s = cuvil.to_layout %x : tensor<?x6x8xf32> to tensor<?x6x8xf32, #bm>
  %d = cuvil.to_dense %s : tensor<?x6x8xf32, #bm> to tensor<?x6x8xf32>
  return %s, %d : tensor<?x6x8xf32, #bm>, tensor<?x6x8xf32>
}

// -----

#bm = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 1, 3, 4], col_idx = [0, 1, 3, 2]}>
// Block-masked attention: scf.for over the 4 block rows, and inside, an
// scf.for from row_ptr[r] to row_ptr[r + 1] over the present blocks only.
// Each block computes a 4x4 score tile (never the [16, 16] scores), then the
// online-softmax update, all in place on loop-carried tensors.
// CHECK-LABEL: func.func @block_attention
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x16x8xf32>, %[[K:.*]]: tensor<2x16x8xf32>, %[[V:.*]]: tensor<2x16x4xf32>)
// CHECK-NOT:     tensor<2x16x16xf32>
// CHECK:         %[[QS:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<2x16x8xf32>)
// CHECK:         %[[RP:.*]] = arith.constant dense<[0, 1, 1, 3, 4]> : tensor<5xindex>
// CHECK:         %[[CI:.*]] = arith.constant dense<[0, 1, 3, 2]> : tensor<4xindex>
// CHECK:         %[[NBR:.*]] = arith.constant 4 : index
// CHECK:         %[[OUT:.*]] = scf.for %[[R:.*]] = %{{.*}} to %[[NBR]] step %{{.*}} iter_args(%[[O:.*]] = %{{.*}}) -> (tensor<2x16x4xf32>)
// CHECK:           %[[ROFF:.*]] = arith.muli %[[R]], %c4
// CHECK:           %[[QB:.*]] = tensor.extract_slice %[[QS]][0, %[[ROFF]], 0] [2, 4, 8] [1, 1, 1]
// CHECK:           %[[LO:.*]] = tensor.extract %[[RP]][%[[R]]]
// CHECK:           %[[R1:.*]] = arith.addi %[[R]], %c1
// CHECK:           %[[HI:.*]] = tensor.extract %[[RP]][%[[R1]]]
// CHECK:           %[[BLK:.*]]:5 = scf.for %[[P:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[AL:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK:             %[[COL:.*]] = tensor.extract %[[CI]][%[[P]]]
// CHECK:             %[[COFF:.*]] = arith.muli %[[COL]], %c4
// CHECK:             %[[KB:.*]] = tensor.extract_slice %[[K]][0, %[[COFF]], 0] [2, 4, 8] [1, 1, 1]
// CHECK:             %[[VB:.*]] = tensor.extract_slice %[[V]][0, %[[COFF]], 0] [2, 4, 4] [1, 1, 1]
// CHECK:             %[[S0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : tensor<2x4x4xf32>)
// CHECK:             %[[S1:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[QB]], %[[KB]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%[[S0]] : tensor<2x4x4xf32>)
// CHECK:             %[[BMAX:.*]] = linalg.generic {{.*}} ins(%[[S1]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:               arith.maximumf
// CHECK:             %[[UPD:.*]]:3 = linalg.generic {{.*}} outs(%[[M]], %[[BMAX]], %[[L]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:               arith.maximumf
// CHECK:               math.exp
// CHECK:             %[[PEXP:.*]] = linalg.generic {{.*}} ins(%[[UPD]]#0 : tensor<2x4xf32>) outs(%[[S1]] : tensor<2x4x4xf32>)
// CHECK:               math.exp
// CHECK:             %[[L2:.*]] = linalg.generic {{.*}} ins(%[[PEXP]] : tensor<2x4x4xf32>) outs(%[[UPD]]#2 : tensor<2x4xf32>)
// CHECK:             %[[ACC1:.*]] = linalg.generic {{.*}} ins(%[[UPD]]#1 : tensor<2x4xf32>) outs(%[[ACC]] : tensor<2x4x4xf32>)
// CHECK:             %[[ACC2:.*]] = linalg.generic {{.*}} ins(%[[PEXP]], %[[VB]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%[[ACC1]] : tensor<2x4x4xf32>)
// CHECK:             scf.yield %[[UPD]]#0, %[[L2]], %[[UPD]]#1, %[[ACC2]], %[[PEXP]]
// Normalise into this block row of the output; rows without keys give 0.
// CHECK:           %[[OROWS:.*]] = tensor.extract_slice %[[O]][0, %[[ROFF]], 0] [2, 4, 4] [1, 1, 1]
// CHECK:           %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[BLK]]#3, %[[BLK]]#1 : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%[[OROWS]] : tensor<2x4x4xf32>)
// CHECK:             arith.cmpf oeq
// CHECK:             arith.divf
// CHECK:             arith.select
// CHECK:           %[[INS:.*]] = tensor.insert_slice %[[NORM]] into %[[O]][0, %[[ROFF]], 0] [2, 4, 4] [1, 1, 1]
// CHECK:           scf.yield %[[INS]]
// CHECK:         return %[[OUT]]
func.func @block_attention(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x4xf32>) -> tensor<2x16x4xf32> {
  %0 = cuvil.attention %q, %k, %v {layout = #bm} : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x4xf32> -> tensor<2x16x4xf32>
  return %0 : tensor<2x16x4xf32>
}

// -----

#bm = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 2, 4], col_idx = [0, 1, 0, 1]}>
// Causal: block (0, 1) lies entirely after the diagonal and is dropped from
// the tables at compile time; the diagonal blocks keep an index select.
// CHECK-LABEL: func.func @block_attention_causal
// CHECK:         arith.constant dense<[0, 1, 3]> : tensor<3xindex>
// CHECK:         arith.constant dense<[0, 0, 1]> : tensor<3xindex>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             linalg.generic
// CHECK:               linalg.index 1
// CHECK:               linalg.index 2
// CHECK:               arith.cmpi ugt
// CHECK:               arith.select
func.func @block_attention_causal(%q: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = cuvil.attention %q, %q, %q {causal, layout = #bm} : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

#bm = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>
// An additive mask with a layout (refused before): each block adds its
// [4, 4] tile of the [S, T] mask (broadcast over the batch). k/v with a
// size-1 batch dim broadcast against q (refused before too).
// CHECK-DAG:   #[[$MASKMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @block_attention_mask_broadcast
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<1x8x4xf32>, %[[M:.*]]: tensor<8x8xf32>)
// CHECK:         scf.for %[[R:[a-z0-9]+]] =
// CHECK:           %[[ROFF:.*]] = arith.muli %[[R]], %c4
// CHECK:           scf.for %[[P:[a-z0-9]+]] =
// CHECK:             %[[COFF:.*]] = arith.muli
// CHECK:             %[[KB:.*]] = tensor.extract_slice %[[K]][0, %[[COFF]], 0] [1, 4, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x4x4xf32>
// CHECK:             linalg.generic {{.*}} ins(%{{.*}}, %[[KB]] : tensor<2x4x4xf32>, tensor<1x4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK:             %[[MB:.*]] = tensor.extract_slice %[[M]][%[[ROFF]], %[[COFF]]] [4, 4] [1, 1] : tensor<8x8xf32> to tensor<4x4xf32>
// CHECK:             linalg.generic {indexing_maps = [#[[$MASKMAP]], #{{.*}}], {{.*}}} ins(%[[MB]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK:               arith.addf
func.func @block_attention_mask_broadcast(%q: tensor<2x8x4xf32>, %k: tensor<1x8x4xf32>, %m: tensor<8x8xf32>) -> tensor<2x8x4xf32> {
  %0 = cuvil.attention %q, %k, %k mask(%m : tensor<8x8xf32>) {layout = #bm} : tensor<2x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}
