// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-strided-copies-as-rows))' | FileCheck %s
// Copies between views that are contiguous only along trailing dims become
// loops of contiguous block copies.

// A slice of a padded product (rows of 2020 in rows of 2048) into a kernel's
// contiguous argument: one copy per row.
// CHECK-LABEL: func.func @padded_rows
// CHECK-SAME:    (%[[SRC:.*]]: memref<20x2020xf32, strided<[2048, 1]>>, %[[DST:.*]]: memref<20x2020xf32>)
// CHECK:         scf.for %[[I:.*]] = %c0 to %c20 step %c1 {
// CHECK:           %[[S:.*]] = memref.subview %[[SRC]][%[[I]], 0] [1, 2020] [1, 1] : memref<20x2020xf32, strided<[2048, 1]>> to memref<2020xf32, strided<[1], offset: ?>>
// CHECK:           %[[D:.*]] = memref.subview %[[DST]][%[[I]], 0] [1, 2020] [1, 1] : memref<20x2020xf32> to memref<2020xf32, strided<[1], offset: ?>>
// CHECK:           memref.copy %[[S]], %[[D]]
// CHECK-NOT:     memref.copy
func.func @padded_rows(%src: memref<20x2020xf32, strided<[2048, 1]>>, %dst: memref<20x2020xf32>) {
  memref.copy %src, %dst : memref<20x2020xf32, strided<[2048, 1]>> to memref<20x2020xf32>
  return
}

// -----

// Contiguous over the last two dims on both sides: blocks of 20 x 101.
// CHECK-LABEL: func.func @trailing_block
// CHECK:         scf.for
// CHECK-NOT:     scf.for
// CHECK:         memref.copy {{.*}} : memref<20x101xf32, strided<[101, 1], offset: ?>> to memref<20x101xf32, strided<[101, 1], offset: ?>>
func.func @trailing_block(%src: memref<20x20x101xf32, strided<[2048, 101, 1], offset: 40960>>, %dst: memref<20x20x101xf32>) {
  memref.copy %src, %dst : memref<20x20x101xf32, strided<[2048, 101, 1], offset: 40960>> to memref<20x20x101xf32>
  return
}

// -----

// Already contiguous (memcpy as it is), or strided in the last dim (no
// contiguous block): left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     scf.for
// CHECK:         memref.copy %arg0, %arg1
// CHECK:         memref.copy %arg2, %arg1
func.func @left_alone(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32, strided<[16, 2]>>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %c, %b : memref<4x8xf32, strided<[16, 2]>> to memref<4x8xf32>
  return
}
