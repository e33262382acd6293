// RUN: cuvil-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(cuvil-amx-matmul))' | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(cuvil-amx-matmul{prefetch-groups=0}))' | FileCheck %s --check-prefix=NOPF
// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-amx-matmul{interleave-loads=0}))' | FileCheck %s --check-prefix=GROUPED
// RUN: not cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-amx-matmul{k-chunk=0}))' 2>&1 | FileCheck %s --check-prefix=NOCHUNK
// NOPF-NOT: memref.prefetch
// A K chunk of no products is refused, naming the option.
// NOCHUNK: error: cuvil-amx-matmul: k-chunk must be at least 1 (tile products per K chunk), got 0
// Each product's loads: by default each tile just before its first product,
// A1 before C01 (A0 B0 C00 B1 A1 C01 C10 C11: A0 and A1 live together, in
// two tile registers); interleave-loads=0 loads all four first.
// GROUPED-LABEL: func.func @bf16
// GROUPED-COUNT-2: amx.tile_load %{{.*}} : memref<?x48x2xbf16> into !amx.tile<16x32xbf16>
// GROUPED-COUNT-2: amx.tile_load %{{.*}} : memref<?x24x64x2xbf16, strided<[3072, 128, 2, 1], offset: ?>> into !amx.tile<16x32xbf16>
// GROUPED-COUNT-4: amx.tile_mulf
// The AMX schedule's marked tiles, C[m][p][64] += A[m][k/v][v] * B[p][k/v][64][v]
// on buffers, become AMX tile code reading B in place and A from a copy (or in
// place when its rows are whole tiles).

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// bf16, K = 48 (24 k pairs): A copied to a buffer with a 48-group (96-element)
// row stride: its whole 16 x 16-pair tiles by the tile unit, its last 8 pairs
// zero-padded to 16 and its last rows % 16 zero-padded to 16 by 64-byte vector
// copies (a linalg.copy here would become a scalar loop nest). Then
// one product of 16 pairs and one of the padded last ones (every tile is 16 x
// 64 bytes); blocks of 32 and 16 rows, the rest through a 16-row C buffer.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT:     linalg.generic
// CHECK:         %[[APAD:.*]] = memref.alloc(%{{.*}}) : memref<?x48x2xbf16>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[T:.*]] = amx.tile_load %arg0[{{.*}}], %{{.*}} : memref<?x24x2xbf16, strided<[48, 2, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK:             amx.tile_store %[[APAD]][{{.*}}], %[[T]], %c96
// CHECK:         %[[KTAIL:.*]] = memref.subview %[[APAD]][0, 16, 0]
// CHECK:         %[[KTAILROWS:.*]] = memref.collapse_shape %[[KTAIL]] {{\[\[}}0], [1, 2]]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[V:.*]] = vector.transfer_read %{{.*}} : memref<?x16xbf16, strided<[48, 1], offset: ?>>, vector<32xbf16>
// CHECK:             vector.transfer_write %[[V]], %[[KTAILROWS]]{{.*}} {in_bounds = [true]}
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.transfer_write %{{.*}}, %[[KTAILROWS]]
// CHECK:         vector.transfer_read %{{.*}} : memref<?x32xbf16, strided<[48, 1], offset: ?>>, vector<32xbf16>
// CHECK:         vector.transfer_write
// CHECK:         %[[BTAIL:.*]] = memref.alloc() : memref<1x16x64x2xbf16>
// CHECK:         %[[CREST:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK:         scf.for
// CHECK:           vector.transfer_read %{{.*}} : memref<8x128xbf16, strided<[128, 1], offset: ?>>, vector<32xbf16>
// CHECK:           vector.transfer_write %{{.*}} : vector<32xbf16>, memref<16x128xbf16, strided<[128, 1]>>
// Per 32-row block, per K chunk, the two half panels in turn (columns 0-31,
// then 32-63 of the panel: 4 accumulators each).
// CHECK:           scf.for
// CHECK-COUNT-4:     amx.tile_load %{{.*}} : memref<?x2x64xf32, strided<[128, 64, 1], offset: ?>> into !amx.tile<16x16xf32>
// CHECK:             amx.tile_load %[[APAD]]{{.*}} : memref<?x48x2xbf16> into !amx.tile<16x32xbf16>
// CHECK:             amx.tile_load %{{.*}} : memref<?x24x64x2xbf16, strided<[3072, 128, 2, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK:             amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK:             amx.tile_load %{{.*}} : memref<?x24x64x2xbf16, strided<[3072, 128, 2, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK:             amx.tile_load %[[APAD]]{{.*}} : memref<?x48x2xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-3:     amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// The B rows 64 groups ahead, clamped to B's last 16 of 24 groups, only in
// the tile's first row block (row 0).
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0{{.*}} : index
// CHECK-NEXT:        scf.if %[[FIRST]] {
// CHECK:             %[[AHEAD:.*]] = arith.minsi %{{.*}}, %c8
// CHECK:             %[[ROW:.*]] = arith.addi %[[AHEAD]], %c0
// CHECK:             memref.prefetch %arg1[%{{.*}}, %[[ROW]], %{{.*}}, %{{.*}}], read, locality<2>, data
// CHECK-COUNT-31:    memref.prefetch %arg1
// CHECK-NOT:         memref.prefetch
// CHECK:             amx.tile_load %[[APAD]][%{{.*}}, %c16{{.*}} into !amx.tile<16x32xbf16>
// CHECK:             amx.tile_load %[[BTAIL]]{{.*}} into !amx.tile<16x32xbf16>
// CHECK-COUNT-4:     amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-4:     amx.tile_store
// CHECK-COUNT-4:     amx.tile_load %{{.*}} : memref<?x2x64xf32, strided<[128, 64, 1], offset: ?>> into !amx.tile<16x16xf32>
// CHECK-COUNT-4:     amx.tile_mulf
// CHECK-COUNT-32:    memref.prefetch %arg1
// CHECK-COUNT-4:     amx.tile_mulf
// CHECK-COUNT-4:     amx.tile_store
// CHECK:           scf.for
// CHECK-COUNT-2:     amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>
// CHECK:           scf.if
// CHECK-NOT:         memref.alloc
// CHECK:             vector.transfer_read {{.*}} vector<16xf32>
// CHECK:             vector.transfer_write {{.*}}, %[[CREST]]
// CHECK:             amx.tile_mulf
// CHECK:             vector.transfer_read %[[CREST]]{{.*}} : memref<16x64xf32>, vector<16xf32>
// CHECK:         memref.dealloc %[[APAD]]
// CHECK:         memref.dealloc %[[BTAIL]]
// CHECK:         memref.dealloc %[[CREST]]
func.func @bf16(%A: memref<?x24x2xbf16, strided<[48, 2, 1], offset: ?>>,
                %B: memref<?x24x64x2xbf16, strided<[3072, 128, 2, 1], offset: ?>>,
                %C: memref<?x2x64xf32, strided<[128, 64, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<?x24x2xbf16, strided<[48, 2, 1], offset: ?>>, memref<?x24x64x2xbf16, strided<[3072, 128, 2, 1], offset: ?>>)
      outs(%C : memref<?x2x64xf32, strided<[128, 64, 1], offset: ?>>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// int8 after cuvil-unsigned-int8-lhs (u8 x s8), K = 1024 (256 quads): chunks
// of 8 products (x 4 accumulators) in a loop, per half panel the
// accumulators loaded before the chunk and stored after it.
// CHECK-LABEL: func.func @u8s8
// CHECK:         scf.for
// CHECK-COUNT-4:   amx.tile_load {{.*}} into !amx.tile<16x16xi32>
// CHECK-COUNT-32:  amx.tile_muli %{{.*}} zext, %{{.*}}, %{{.*}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK-NOT:       amx.tile_muli
// CHECK-COUNT-4:   amx.tile_store
// CHECK-COUNT-4:   amx.tile_load {{.*}} into !amx.tile<16x16xi32>
// CHECK-COUNT-32:  amx.tile_muli
// CHECK-NOT:       amx.tile_muli
// CHECK-COUNT-4:   amx.tile_store
func.func @u8s8(%A: memref<64x256x4xi8>, %B: memref<4x256x64x4xi8>, %C: memref<64x4x64xi32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<64x256x4xi8>, memref<4x256x64x4xi8>) outs(%C : memref<64x4x64xi32>) attrs = {cuvil.amx} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// A 3x3 convolution's im2col matmul (K = 576 bytes: whole tiles, rows of 9
// cache lines; 64 rows): the products read A where it is, no copy (@bf16
// above, with a K tail and dynamic rows, reads A from its padded copy).
// CHECK-LABEL: func.func @u8s8_in_place
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           amx.tile_load %arg0[{{.*}}], %{{.*}} : memref<64x144x4xi8> into !amx.tile<16x64xi8>
// CHECK-NOT:     memref.dealloc
func.func @u8s8_in_place(%A: memref<64x144x4xi8>, %B: memref<1x144x64x4xi8>, %C: memref<64x1x64xi32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<64x144x4xi8>, memref<1x144x64x4xi8>) outs(%C : memref<64x1x64xi32>) attrs = {cuvil.amx} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// A dynamic K: not tile code (the tile types carry K); said so, left as is.
// CHECK-LABEL: func.func @dynamic_k
// CHECK:         linalg.generic
// CHECK-NOT:     cuvil.amx
func.func @dynamic_k(%A: memref<64x?x2xbf16>, %B: memref<4x?x64x2xbf16>, %C: memref<64x4x64xf32>) {
  // expected-remark @below {{not a static-K VNNI-packed contraction}}
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<64x?x2xbf16>, memref<4x?x64x2xbf16>) outs(%C : memref<64x4x64xf32>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d4, d5)>
#b6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3, d5)>
#c6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3)>

// A batched product's forall tile (attention's q.k^T on AMX hosts: loops
// [b, p, m, 64, k/2, 2], one batch): the unit batch dimension is dropped by
// rank-reducing subviews, then the same tile code as a matmul's (A's 128-byte
// rows of whole tiles read in place).
// CHECK-LABEL: func.func @one_batch
// CHECK-DAG:     %[[A:.*]] = memref.subview %arg0[0, 0, 0, 0] [1, 64, 32, 2] [1, 1, 1, 1] {{.*}} to memref<64x32x2xbf16, strided<[64, 2, 1], offset: ?>>
// CHECK-DAG:     %[[B:.*]] = memref.subview %arg1[0, 0, 0, 0, 0] [1, 2, 32, 64, 2] [1, 1, 1, 1, 1] {{.*}} to memref<2x32x64x2xbf16, strided<[4096, 128, 2, 1], offset: ?>>
// CHECK-DAG:     %[[C:.*]] = memref.subview %arg2[0, 0, 0, 0] [1, 64, 2, 64] [1, 1, 1, 1] {{.*}} to memref<64x2x64xf32, strided<[128, 64, 1], offset: ?>>
// CHECK-NOT:     linalg.generic
// CHECK:         amx.tile_load %[[C]]
// CHECK:         amx.tile_load %[[A]]{{.*}} into !amx.tile<16x32xbf16>
// CHECK:         amx.tile_load %[[B]]
// CHECK:         amx.tile_mulf
// CHECK:         amx.tile_store %[[C]]
func.func @one_batch(%A: memref<1x64x32x2xbf16, strided<[8192, 64, 2, 1], offset: ?>>,
                     %B: memref<1x2x32x64x2xbf16, strided<[8192, 4096, 128, 2, 1], offset: ?>>,
                     %C: memref<1x64x2x64xf32, strided<[16384, 128, 64, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#a6, #b6, #c6],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<1x64x32x2xbf16, strided<[8192, 64, 2, 1], offset: ?>>,
                   memref<1x2x32x64x2xbf16, strided<[8192, 4096, 128, 2, 1], offset: ?>>)
      outs(%C : memref<1x64x2x64xf32, strided<[16384, 128, 64, 1], offset: ?>>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d4, d5)>
#b6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3, d5)>
#c6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3)>

// Two batches in one marked op (not a forall tile of the schedule): left as is.
// CHECK-LABEL: func.func @two_batches
// CHECK:         linalg.generic
// CHECK-NOT:     amx.tile_load
func.func @two_batches(%A: memref<2x64x32x2xbf16>, %B: memref<2x2x32x64x2xbf16>, %C: memref<2x64x2x64xf32>) {
  // expected-remark @below {{one batch per tile}}
  linalg.generic {indexing_maps = [#a6, #b6, #c6],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<2x64x32x2xbf16>, memref<2x2x32x64x2xbf16>) outs(%C : memref<2x64x2x64xf32>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>
#row = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The schedule's fused init (`cuvil.amx_init`), int8's zero-point correction
// per column broadcast down C's rows: the first K chunk's accumulators are
// loaded from its row with stride 0, the init goes. K = 144 groups is 9
// products: one chunk of 9 (not 8, then 1: stepsPerChunk), so C is written
// once per row block and never read back.
// CHECK-LABEL: func.func @u8s8_row_init
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-COUNT-4:     amx.tile_load %arg3[%{{.*}}, %{{.*}}], %c0{{.*}} : memref<2x64xi32> into !amx.tile<16x16xi32>
// CHECK-COUNT-36:    amx.tile_muli
// CHECK-COUNT-4:     amx.tile_store %arg2
// CHECK-NOT:       amx.tile_load %arg2
// CHECK:         return
func.func @u8s8_row_init(%A: memref<64x144x4xi8>, %B: memref<2x144x64x4xi8>, %C: memref<64x2x64xi32>,
                         %R: memref<2x64xi32>) {
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%R : memref<2x64xi32>) outs(%C : memref<64x2x64xi32>) attrs = {cuvil.amx_init} {
  ^bb0(%r: i32, %o: i32):
    linalg.yield %r : i32
  }
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<64x144x4xi8>, memref<2x144x64x4xi8>) outs(%C : memref<64x2x64xi32>) attrs = {cuvil.amx} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extui %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// A zero fill: the accumulators start as tilezero (K = 32 pairs, one range,
// rows 40 = 32 + 8: the last 8 rows' 16-row buffer is not filled from C
// first). A is read in place (128-byte rows, no K tail) but for its last 8
// rows, copied once to a zero-padded 16-row buffer (only when there are
// such rows), which the last block reads from its row 0.
// CHECK-LABEL: func.func @bf16_zero_init
// CHECK-NOT:     linalg.fill
// CHECK:         %[[AREST:.*]] = memref.alloc() : memref<16x32x2xbf16>
// CHECK:         %[[RAGGED:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK:         scf.if %[[RAGGED]]
// CHECK:           vector.transfer_read %{{.*}} : memref<?x64xbf16, strided<[64, 1], offset: ?>>, vector<32xbf16>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-COUNT-4:     amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-NOT:         amx.tile_load %arg2
// CHECK:             amx.tile_load %arg0
// CHECK:           scf.if
// CHECK-NOT:         vector.transfer_read %{{.*}} : memref<8x64xf32
// CHECK-COUNT-2:     amx.tile_zero : !amx.tile<16x16xf32>
// CHECK:             amx.tile_load %[[AREST]][{{.*}}], %{{.*}} : memref<16x32x2xbf16>
// CHECK:             vector.transfer_read %{{.*}} : memref<16x64xf32>, vector<16xf32>
// CHECK:         memref.dealloc %[[AREST]]
func.func @bf16_zero_init(%A: memref<40x32x2xbf16>, %B: memref<1x32x64x2xbf16>, %C: memref<40x1x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {cuvil.amx_init} ins(%zero : f32) outs(%C : memref<40x1x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<40x32x2xbf16>, memref<1x32x64x2xbf16>) outs(%C : memref<40x1x64xf32>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// A fill of another value, or a marked op of another kind (a copy): the
// init stays and the tiles read C.
// CHECK-LABEL: func.func @one_fill_stays
// CHECK:         linalg.fill
// CHECK:         linalg.copy
// CHECK-NOT:     amx.tile_zero
// CHECK:         amx.tile_load %arg2
func.func @one_fill_stays(%A: memref<32x32x2xbf16>, %B: memref<1x32x64x2xbf16>, %C: memref<32x1x64xf32>,
                          %D: memref<32x1x64xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill {cuvil.amx_init} ins(%one : f32) outs(%C : memref<32x1x64xf32>)
  linalg.copy {cuvil.amx_init} ins(%D : memref<32x1x64xf32>) outs(%C : memref<32x1x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<32x32x2xbf16>, memref<1x32x64x2xbf16>) outs(%C : memref<32x1x64xf32>) attrs = {cuvil.amx} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#b = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#c = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>

// cuvil-im2col-conv's int8 conv over shifted rows (3 x 3 taps of 16 groups,
// input rows 10 pixels wide: 9 products, one chunk of 9): B viewed as
// [p][144][64][4]; A's tile for K group k at C's row m is rows
// m + (k / 16 / 3) * 10 + (k / 16) % 3, group
// k % 16 of the input, read in place (no copy, no buffers); signed x signed
// (tdpbssd: no zext on either operand).
// CHECK-LABEL: func.func @s8s8_shifted_rows
// CHECK-NOT:     memref.alloc
// CHECK:         %[[B:.*]] = memref.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3], [4], [5]] : memref<1x3x3x16x64x4xi8> into memref<1x144x64x4xi8>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c144{{.*}} step %c144
// CHECK:           %[[TAP:.*]] = arith.divui %[[K:.*]], %c16{{.*}} : index
// CHECK:           %[[GROUP:.*]] = arith.remui %[[K]], %c16{{.*}} : index
// CHECK:           %[[KH:.*]] = arith.divui %[[TAP]], %c3{{.*}} : index
// CHECK:           %[[KW:.*]] = arith.remui %[[TAP]], %c3{{.*}} : index
// CHECK:           %[[SHIFT:.*]] = arith.muli %[[KH]], %c10{{.*}} : index
// CHECK:           %[[OFF:.*]] = arith.addi %[[SHIFT]], %[[KW]] : index
// CHECK:           %[[ROW:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK:           amx.tile_load %arg0[%[[ROW]], %[[GROUP]], %{{.*}}], %{{.*}} : memref<90x16x4xi8> into !amx.tile<16x64xi8>
// CHECK:           amx.tile_load %[[B]]
// CHECK:           amx.tile_muli %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK-NOT:     zext
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @s8s8_shifted_rows(%A: memref<90x16x4xi8>, %B: memref<1x3x3x16x64x4xi8>, %C: memref<64x1x64xi32>) {
  linalg.generic {indexing_maps = [#a, #b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%A, %B : memref<90x16x4xi8>, memref<1x3x3x16x64x4xi8>) outs(%C : memref<64x1x64xi32>) attrs = {cuvil.amx} {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extsi %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %p = arith.muli %xi, %yi : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// A's rows are 1 KB (256 pairs): a tile's 16 rows would share 4 L1 sets. A
// is copied once before the forall (not once per panel), by 64-byte
// vectors, as whole tiles ([rows / 16][pairs / 16][16][32]: each tile's 16
// rows contiguous), its row tiles in parallel, and every tile load reads 16
// consecutive lines of it.
// CHECK-LABEL: func.func @bf16_rows_sharing_l1_sets
// CHECK:         %[[TILED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x16x16x32xbf16>
// CHECK:         %[[ROWS:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1, 2]] : memref<32x256x2xbf16> into memref<32x512xbf16>
// CHECK:         scf.forall (%[[T:.*]]) in (2)
// CHECK:           vector.transfer_read %[[ROWS]]{{.*}} : memref<32x512xbf16>, vector<32xbf16>
// CHECK:           vector.transfer_write %{{.*}}, %[[TILED]][%[[T]], {{.*}}] {{.*}} : vector<32xbf16>, memref<2x16x16x32xbf16>
// CHECK:         scf.forall
// CHECK-NOT:       amx.tile_load %arg0
// CHECK:           amx.tile_load %[[TILED]][%{{.*}}, %{{.*}}, %c0{{.*}}, %c0{{.*}}], %c32{{.*}} : memref<2x16x16x32xbf16> into !amx.tile<16x32xbf16>
// CHECK:         } {mapping
// CHECK-NEXT:    memref.dealloc %[[TILED]]
func.func @bf16_rows_sharing_l1_sets(%A: memref<32x256x2xbf16>, %B: memref<2x256x64x2xbf16>, %C: memref<32x2x64xf32>) {
  scf.forall (%p) in (2) {
    %b = memref.subview %B[%p, 0, 0, 0] [1, 256, 64, 2] [1, 1, 1, 1] : memref<2x256x64x2xbf16> to memref<1x256x64x2xbf16, strided<[32768, 128, 2, 1], offset: ?>>
    %c = memref.subview %C[0, %p, 0] [32, 1, 64] [1, 1, 1] : memref<32x2x64xf32> to memref<32x1x64xf32, strided<[128, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
        ins(%A, %b : memref<32x256x2xbf16>, memref<1x256x64x2xbf16, strided<[32768, 128, 2, 1], offset: ?>>)
        outs(%c : memref<32x1x64xf32, strided<[128, 64, 1], offset: ?>>) attrs = {cuvil.amx} {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// u8 x s8 with 1 KB rows, forall tiles of 32 rows x one panel: the tiled
// copy of all 64 rows is made once, and each forall tile reads its row
// tiles of it, (row offset + row) / 16.
// CHECK-LABEL: func.func @u8s8_row_tiles_of_a_copy
// CHECK:         %[[TILED:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16x16x64xi8>
// CHECK:         scf.forall (%{{.*}}, %[[MT:.*]]) in (2, 2)
// CHECK:           %[[M:.*]] = affine.apply #{{.*}}(%[[MT]])
// CHECK:           %[[ROW:.*]] = arith.addi %[[M]], %{{.*}} : index
// CHECK:           %[[TILE:.*]] = arith.divui %[[ROW]], %c16{{.*}} : index
// CHECK:           amx.tile_load %[[TILED]][%[[TILE]], %{{.*}}, %c0{{.*}}, %c0{{.*}}], %c64{{.*}} : memref<4x16x16x64xi8> into !amx.tile<16x64xi8>
// CHECK:         memref.dealloc %[[TILED]]
func.func @u8s8_row_tiles_of_a_copy(%A: memref<64x256x4xi8>, %B: memref<2x256x64x4xi8>, %C: memref<64x2x64xi32>) {
  scf.forall (%p, %mt) in (2, 2) {
    %m = affine.apply affine_map<(d0) -> (d0 * 32)>(%mt)
    %a = memref.subview %A[%m, 0, 0] [32, 256, 4] [1, 1, 1] : memref<64x256x4xi8> to memref<32x256x4xi8, strided<[1024, 4, 1], offset: ?>>
    %b = memref.subview %B[%p, 0, 0, 0] [1, 256, 64, 4] [1, 1, 1, 1] : memref<2x256x64x4xi8> to memref<1x256x64x4xi8, strided<[65536, 256, 4, 1], offset: ?>>
    %c = memref.subview %C[%m, %p, 0] [32, 1, 64] [1, 1, 1] : memref<64x2x64xi32> to memref<32x1x64xi32, strided<[128, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %b : memref<32x256x4xi8, strided<[1024, 4, 1], offset: ?>>, memref<1x256x64x4xi8, strided<[65536, 256, 4, 1], offset: ?>>)
        outs(%c : memref<32x1x64xi32, strided<[128, 64, 1], offset: ?>>) attrs = {cuvil.amx} {
    ^bb0(%x: i8, %y: i8, %acc: i32):
      %xi = arith.extui %x : i8 to i32
      %yi = arith.extsi %y : i8 to i32
      %prod = arith.muli %xi, %yi : i32
      %s = arith.addi %acc, %prod : i32
      linalg.yield %s : i32
    }
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return
}

// -----

#a = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>

// The forall also writes A: a copy before it would be stale, so the tile
// reads A in place.
// CHECK-LABEL: func.func @a_written_in_the_forall
// CHECK-NOT:     memref.alloc
// CHECK:         scf.forall
// CHECK:           amx.tile_load %arg0
func.func @a_written_in_the_forall(%A: memref<32x256x2xbf16>, %B: memref<2x256x64x2xbf16>, %C: memref<32x2x64xf32>) {
  %one = arith.constant 1.0 : bf16
  scf.forall (%p) in (2) {
    linalg.fill ins(%one : bf16) outs(%A : memref<32x256x2xbf16>)
    %b = memref.subview %B[%p, 0, 0, 0] [1, 256, 64, 2] [1, 1, 1, 1] : memref<2x256x64x2xbf16> to memref<1x256x64x2xbf16, strided<[32768, 128, 2, 1], offset: ?>>
    %c = memref.subview %C[0, %p, 0] [32, 1, 64] [1, 1, 1] : memref<32x2x64xf32> to memref<32x1x64xf32, strided<[128, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
        ins(%A, %b : memref<32x256x2xbf16>, memref<1x256x64x2xbf16, strided<[32768, 128, 2, 1], offset: ?>>)
        outs(%c : memref<32x1x64xf32, strided<[128, 64, 1], offset: ?>>) attrs = {cuvil.amx} {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %m = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
  } {mapping = [#gpu.thread<x>]}
  return
}
