// RUN: cuvil-opt %s --split-input-file --cuvil-widen-bool-memrefs | FileCheck %s
// Every memref of i1 becomes a memref of i8 (one byte per boolean, as numpy
// and PyTorch store them; memref-to-LLVM does not accept stores of sub-byte
// elements): a load reads the byte and truncates it, a store zero-extends
// the bit first. i1 values themselves, tensors of i1 and memrefs of other
// element types are left as they are.

// A local buffer: alloc, store, load and dealloc all move to i8; the stored
// byte is the zero-extended comparison and the loaded bit is the truncated
// byte, so that the function still returns an i1.
// CHECK-LABEL: func.func @local
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Y:.*]]: f32) -> i1
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc() : memref<4xi8>
// CHECK-NEXT:    %[[B:.*]] = arith.cmpf olt, %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[BYTE:.*]] = arith.extui %[[B]] : i1 to i8
// CHECK-NEXT:    memref.store %[[BYTE]], %[[BUF]][%[[C0]]] : memref<4xi8>
// CHECK-NEXT:    %[[LOADED:.*]] = memref.load %[[BUF]][%[[C0]]] : memref<4xi8>
// CHECK-NEXT:    %[[BIT:.*]] = arith.trunci %[[LOADED]] : i8 to i1
// CHECK-NEXT:    memref.dealloc %[[BUF]] : memref<4xi8>
// CHECK-NEXT:    return %[[BIT]] : i1
// CHECK-NOT:     xi1>
func.func @local(%x: f32, %y: f32) -> i1 {
  %c0 = arith.constant 0 : index
  %buf = memref.alloc() : memref<4xi1>
  %b = arith.cmpf olt, %x, %y : f32
  memref.store %b, %buf[%c0] : memref<4xi1>
  %r = memref.load %buf[%c0] : memref<4xi1>
  memref.dealloc %buf : memref<4xi1>
  return %r : i1
}

// -----

// Signatures (arguments, results, declarations and calls) and views: the
// subview keeps its layout with the new element type, and the loaded bit is
// used as an i1 between the trunci and the extui.
// CHECK-LABEL: func.func private @consume(memref<?xi8>)
// CHECK-LABEL: func.func @signature
// CHECK-SAME:    (%[[M:.*]]: memref<?xi8>, %[[I:.*]]: index) -> memref<?xi8>
// CHECK:         %[[SUB:.*]] = memref.subview %[[M]][%[[I]]] [4] [1] : memref<?xi8> to memref<4xi8, strided<[1], offset: ?>>
// CHECK:         %[[LOADED:.*]] = memref.load %[[SUB]][%{{.*}}] : memref<4xi8, strided<[1], offset: ?>>
// CHECK-NEXT:    %[[BIT:.*]] = arith.trunci %[[LOADED]] : i8 to i1
// CHECK:         %[[NOT:.*]] = arith.xori %[[BIT]], %{{.*}} : i1
// CHECK-NEXT:    %[[BYTE:.*]] = arith.extui %[[NOT]] : i1 to i8
// CHECK-NEXT:    memref.store %[[BYTE]], %[[M]][%[[I]]] : memref<?xi8>
// CHECK-NEXT:    call @consume(%[[M]]) : (memref<?xi8>) -> ()
// CHECK-NEXT:    return %[[M]] : memref<?xi8>
// CHECK-NOT:     xi1
func.func private @consume(memref<?xi1>)
func.func @signature(%m: memref<?xi1>, %i: index) -> memref<?xi1> {
  %sub = memref.subview %m[%i] [4] [1] : memref<?xi1> to memref<4xi1, strided<[1], offset: ?>>
  %c0 = arith.constant 0 : index
  %v = memref.load %sub[%c0] : memref<4xi1, strided<[1], offset: ?>>
  %true = arith.constant true
  %n = arith.xori %v, %true : i1
  memref.store %n, %m[%i] : memref<?xi1>
  call @consume(%m) : (memref<?xi1>) -> ()
  return %m : memref<?xi1>
}

// -----

// Unranked memrefs are widened too (e.g. the argument of a print helper).
// CHECK-LABEL: func.func private @print(memref<*xi8>)
// CHECK-LABEL: func.func @unranked
// CHECK-SAME:    (%[[M:.*]]: memref<4xi8>)
// CHECK-NEXT:    %[[U:.*]] = memref.cast %[[M]] : memref<4xi8> to memref<*xi8>
// CHECK-NEXT:    call @print(%[[U]]) : (memref<*xi8>) -> ()
func.func private @print(memref<*xi1>)
func.func @unranked(%m: memref<4xi1>) {
  %u = memref.cast %m : memref<4xi1> to memref<*xi1>
  call @print(%u) : (memref<*xi1>) -> ()
  return
}

// -----

// A constant global: its initial value is widened element by element
// (true -> 1, false -> 0, in order), and get_global follows the new type.
// CHECK:       memref.global "private" constant @mask : memref<3xi8> = dense<[1, 0, 1]>
// CHECK-LABEL: func.func @global
// CHECK-SAME:    (%[[I:.*]]: index) -> i1
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @mask : memref<3xi8>
// CHECK-NEXT:    %[[LOADED:.*]] = memref.load %[[G]][%[[I]]] : memref<3xi8>
// CHECK-NEXT:    %[[BIT:.*]] = arith.trunci %[[LOADED]] : i8 to i1
// CHECK-NEXT:    return %[[BIT]] : i1
memref.global "private" constant @mask : memref<3xi1> = dense<[true, false, true]>
func.func @global(%i: index) -> i1 {
  %g = memref.get_global @mask : memref<3xi1>
  %v = memref.load %g[%i] : memref<3xi1>
  return %v : i1
}

// -----

// Loads and stores inside regions (here an scf.for body) are rewritten as
// well; the f32 store next to them is not touched.
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME:    (%[[M:.*]]: memref<8xi8>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[LOADED:.*]] = memref.load %[[M]][%[[IV]]] : memref<8xi8>
// CHECK-NEXT:      %[[BIT:.*]] = arith.trunci %[[LOADED]] : i8 to i1
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[BIT]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      memref.store %[[V]], %[[OUT]][%[[IV]]] : memref<8xf32>
// CHECK-NEXT:    }
func.func @in_loop(%m: memref<8xi1>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %b = memref.load %m[%i] : memref<8xi1>
    %v = arith.select %b, %one, %zero : f32
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return
}

// -----

// Left alone: memrefs of i8 and f32 (an i8 load/store gets no trunci/extui),
// i1 scalars, and tensors of i1 (widen-bool-tensors' business, before
// bufferization).
// CHECK-LABEL: func.func @untouched
// CHECK-SAME:    (%[[M:.*]]: memref<4xi8>, %[[F:.*]]: memref<4xf32>, %[[T:.*]]: tensor<4xi1>, %[[X:.*]]: f32) -> tensor<4xi1>
// CHECK-NOT:     arith.extui
// CHECK-NOT:     arith.trunci
// CHECK:         %[[V:.*]] = memref.load %[[M]][%[[C0:.*]]] : memref<4xi8>
// CHECK-NEXT:    memref.store %[[V]], %[[M]][%[[C0]]] : memref<4xi8>
// CHECK-NEXT:    %[[W:.*]] = memref.load %[[F]][%[[C0]]] : memref<4xf32>
// CHECK-NEXT:    %[[B:.*]] = arith.cmpf olt, %[[W]], %[[X]] : f32
// CHECK-NEXT:    %[[T2:.*]] = tensor.insert %[[B]] into %[[T]][%[[C0]]] : tensor<4xi1>
// CHECK-NEXT:    return %[[T2]] : tensor<4xi1>
func.func @untouched(%m: memref<4xi8>, %f: memref<4xf32>, %t: tensor<4xi1>, %x: f32) -> tensor<4xi1> {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xi8>
  memref.store %v, %m[%c0] : memref<4xi8>
  %w = memref.load %f[%c0] : memref<4xf32>
  %b = arith.cmpf olt, %w, %x : f32
  %t2 = tensor.insert %b into %t[%c0] : tensor<4xi1>
  return %t2 : tensor<4xi1>
}

// -----

// A vectorized bool transpose: the vector transfers read and write bytes;
// the padding is widened, the bits truncated after the read and extended
// before the write.
// CHECK-LABEL: func.func @transfers
// CHECK-SAME:    (%[[IN:.*]]: memref<1x2xi8>, %[[OUT:.*]]: memref<2x1xi8>)
// CHECK:         %[[PAD:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK:         %[[BYTES:.*]] = vector.transfer_read %[[IN]][%{{.*}}, %{{.*}}], %[[PAD]], %{{.*}} {in_bounds = [true, true]} : memref<1x2xi8>, vector<16x16xi8>
// CHECK:         %[[BITS:.*]] = arith.trunci %[[BYTES]] : vector<16x16xi8> to vector<16x16xi1>
// CHECK:         %[[T:.*]] = vector.transpose %[[BITS]], [1, 0]
// CHECK:         %[[W:.*]] = arith.extui %[[T]] : vector<16x16xi1> to vector<16x16xi8>
// CHECK:         vector.transfer_write %[[W]], %[[OUT]]{{.*}} : vector<16x16xi8>, memref<2x1xi8>
func.func @transfers(%in: memref<1x2xi1>, %out: memref<2x1xi1>) {
  %pad = ub.poison : i1
  %c0 = arith.constant 0 : index
  %m = vector.constant_mask [1, 2] : vector<16x16xi1>
  %r = vector.transfer_read %in[%c0, %c0], %pad, %m {in_bounds = [true, true]} : memref<1x2xi1>, vector<16x16xi1>
  %t = vector.transpose %r, [1, 0] : vector<16x16xi1> to vector<16x16xi1>
  %mt = vector.constant_mask [2, 1] : vector<16x16xi1>
  vector.transfer_write %t, %out[%c0, %c0], %mt {in_bounds = [true, true]} : vector<16x16xi1>, memref<2x1xi1>
  return
}
