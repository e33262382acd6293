// RUN: cuvil-opt %s --split-input-file --cuvil-bf16-vector-memory-as-i16 | FileCheck %s
// bf16 vector loads and stores of length 8k + 1 (which abort LLVM's x86
// backend on AVX-512 targets) become i16 vector loads and stores; every
// other length and type stays as it is.

// CHECK-LABEL: llvm.func @copy33
// CHECK:         %[[V:.*]] = llvm.load %arg0 {alignment = 2 : i64} : !llvm.ptr -> vector<33xi16>
// CHECK:         %[[B:.*]] = llvm.bitcast %[[V]] : vector<33xi16> to vector<33xbf16>
// CHECK:         %[[I:.*]] = llvm.bitcast %[[B]] : vector<33xbf16> to vector<33xi16>
// CHECK:         llvm.store %[[I]], %arg1 {alignment = 2 : i64} : vector<33xi16>, !llvm.ptr
llvm.func @copy33(%p: !llvm.ptr, %q: !llvm.ptr) {
  %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<33xbf16>
  llvm.store %v, %q {alignment = 2 : i64} : vector<33xbf16>, !llvm.ptr
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @untouched
// CHECK:         llvm.load %arg0 : !llvm.ptr -> vector<32xbf16>
// CHECK:         llvm.load %arg0 : !llvm.ptr -> vector<8xbf16>
// CHECK:         llvm.load %arg0 : !llvm.ptr -> vector<17xf16>
// CHECK:         llvm.store %{{.*}}, %arg1 : vector<32xbf16>, !llvm.ptr
// CHECK-NOT:     llvm.bitcast
llvm.func @untouched(%p: !llvm.ptr, %q: !llvm.ptr) {
  %a = llvm.load %p : !llvm.ptr -> vector<32xbf16>
  %b = llvm.load %p : !llvm.ptr -> vector<8xbf16>
  %c = llvm.load %p : !llvm.ptr -> vector<17xf16>
  llvm.store %a, %q : vector<32xbf16>, !llvm.ptr
  llvm.return
}

// -----

// A load whose value is used as bf16 keeps the bf16 uses through the cast.
// CHECK-LABEL: llvm.func @extend17
// CHECK:         %[[V:.*]] = llvm.load %arg0 : !llvm.ptr -> vector<17xi16>
// CHECK:         %[[B:.*]] = llvm.bitcast %[[V]] : vector<17xi16> to vector<17xbf16>
// CHECK:         llvm.fpext %[[B]] : vector<17xbf16> to vector<17xf32>
llvm.func @extend17(%p: !llvm.ptr) -> vector<17xf32> {
  %v = llvm.load %p : !llvm.ptr -> vector<17xbf16>
  %e = llvm.fpext %v : vector<17xbf16> to vector<17xf32>
  llvm.return %e : vector<17xf32>
}
