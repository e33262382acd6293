// RUN: cuvil-opt %s --pass-pipeline="builtin.module(func.func(cuvil-lower-x86-dot))" | FileCheck %s

// The byte operands as <64 x i8>, the signature of LLVM 22's intrinsic.
// CHECK-LABEL: func.func @dot
// CHECK-SAME:      (%[[ACC:.*]]: vector<16xi32>, %[[A:.*]]: vector<16xi32>, %[[B:.*]]: vector<16xi32>)
// CHECK:         %[[A8:.*]] = vector.bitcast %[[A]] : vector<16xi32> to vector<64xi8>
// CHECK:         %[[B8:.*]] = vector.bitcast %[[B]] : vector<16xi32> to vector<64xi8>
// CHECK:         %[[R:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %[[A8]], %[[B8]])
// CHECK-SAME:        : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:         return %[[R]]
func.func @dot(%acc: vector<16xi32>, %a: vector<16xi32>, %b: vector<16xi32>) -> vector<16xi32> {
  %r = cuvil.x86.dot_u8s8 %acc, %a, %b : vector<16xi32>
  return %r : vector<16xi32>
}
