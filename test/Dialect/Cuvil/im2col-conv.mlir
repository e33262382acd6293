// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-im2col-conv))" | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-im2col-conv{min-input-channels=3}))" | FileCheck %s --check-prefix=OPTS
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-im2col-conv{int8-k-multiple=64}))" | FileCheck %s --check-prefix=KM
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-im2col-conv{int8-k-multiple=64 int8-shifted-rows}),canonicalize)" | FileCheck %s --check-prefix=SR
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-im2col-conv{int8-shifted-rows shifted-rows-max-extra=8}),canonicalize)" | FileCheck %s --check-prefix=MX
// Convolutions with >= 16 input and >= 32 output channels become im2col +
// one linalg.matmul with the output channels as its columns: HWC input,
// KH*KW strided windows gathered into [OH][OW][KH][KW*C] by one all-parallel
// linalg.generic (tensor.extract at [s*oh + d*kh, s*ow*C + j] of the [H][W*C]
// input: a window's row is KW*C contiguous elements; with a width dilation,
// [OH][OW][KH][KW][C] at [s*oh + d*kh, s*ow + d*kw, c]), the filter
// transposed to [KH*KW*C][F] (weight-only), the [OH*OW][F] result expanded
// to NHWC and transposed to NCHW (4-D transposes at both ends, which
// cuvil-propagate-channels-last cancels between two convs).

// CHECK-LABEL: func.func @stride2_3x3
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x32x17x17xf32>) outs(%{{.*}} : tensor<1x17x17x32xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[X3:.*]] = tensor.collapse_shape %[[XT]] {{\[\[}}0, 1], [2], [3]] : tensor<1x17x17x32xf32> into tensor<17x17x32xf32>
// CHECK:         %[[XR:.*]] = tensor.collapse_shape %[[X3]] {{\[}}[0], [1, 2]] : tensor<17x17x32xf32> into tensor<17x544xf32>
// CHECK:         %[[WIN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<8x8x3x96xf32>)
// CHECK:           %[[KH:.*]] = linalg.index 2 : index
// CHECK:           %[[S0:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[OH:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[ROW0:.*]] = arith.muli %[[OH]], %[[S0]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 3 : index
// CHECK-NEXT:      %[[SC:.*]] = arith.constant 64 : index
// CHECK-NEXT:      %[[OW:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[COL0:.*]] = arith.muli %[[OW]], %[[SC]] : index
// CHECK-NEXT:      %[[COL:.*]] = arith.addi %[[COL0]], %[[J]] : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[XR]][%[[ROW]], %[[COL]]] : tensor<17x544xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         %[[COLS:.*]] = tensor.collapse_shape %[[WIN]] {{\[\[}}0, 1], [2, 3]] : tensor<8x8x3x96xf32> into tensor<64x288xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<48x32x3x3xf32>) outs(%{{.*}} : tensor<3x3x32x48xf32>) permutation = [2, 3, 1, 0]
// CHECK:         %[[RHS:.*]] = tensor.collapse_shape %[[WT]] {{\[\[}}0, 1, 2], [3]] : tensor<3x3x32x48xf32> into tensor<288x48xf32>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[COLS]], %[[RHS]] : tensor<64x288xf32>, tensor<288x48xf32>) outs(%{{.*}} : tensor<64x48xf32>)
// CHECK:         %[[Y:.*]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 8, 8, 48]
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[Y]] : tensor<1x8x8x48xf32>) outs(%{{.*}} : tensor<1x48x8x8xf32>) permutation = [0, 3, 1, 2]
// CHECK-NEXT:    return %[[R]]
func.func @stride2_3x3(%x: tensor<1x32x17x17xf32>, %w: tensor<48x32x3x3xf32>) -> tensor<1x48x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x8x8xf32>) -> tensor<1x48x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<1x32x17x17xf32>, tensor<48x32x3x3xf32>) outs(%init : tensor<1x48x8x8xf32>) -> tensor<1x48x8x8xf32>
  return %y : tensor<1x48x8x8xf32>
}

// -----

// 1x1 stride 2 with a bias in the init: one window; the init is added (in
// NHWC: its transpose is weight-only work where the init is a bias).
// CHECK-LABEL: func.func @downsample_with_init
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<7x7x1x64xf32>)
// CHECK:           tensor.extract %{{.*}} : tensor<14x896xf32>
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<49x64xf32>, tensor<64x128xf32>)
// CHECK:         %[[INIT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x128x7x7xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[INIT]] : tensor<1x7x7x128xf32>, tensor<1x7x7x128xf32>)
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[SUM]] : tensor<1x7x7x128xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK:         return %[[R]]
func.func @downsample_with_init(%x: tensor<1x64x14x14xf32>, %w: tensor<128x64x1x1xf32>,
                                %init: tensor<1x128x7x7xf32>) -> tensor<1x128x7x7xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<1x64x14x14xf32>, tensor<128x64x1x1xf32>) outs(%init : tensor<1x128x7x7xf32>) -> tensor<1x128x7x7xf32>
  return %y : tensor<1x128x7x7xf32>
}

// -----

// Dilation 2: windows start 2 apart. Few channels (the 3-channel stem) and
// batch 2 stay with the direct conv schedule; the stem too is rewritten when
// min-input-channels allows 3.
// CHECK-LABEL: func.func @dilated_and_left_alone
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<12x12x3x3x16xf32>)
// CHECK:           %[[DIL:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[KH:.*]] = linalg.index 2 : index
// CHECK-NEXT:      arith.muli %[[KH]], %[[DIL]] : index
// CHECK:           tensor.extract %{{.*}} : tensor<16x16x16xf32>
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<144x144xf32>, tensor<144x32xf32>)
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw
// OPTS-LABEL: func.func @dilated_and_left_alone
// OPTS:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<144x144xf32>, tensor<144x32xf32>)
// OPTS:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<196x27xf32>, tensor<27x32xf32>)
// OPTS-COUNT-1: linalg.conv_2d_nchw_fchw
// OPTS-NOT:     linalg.conv_2d_nchw_fchw
// OPTS:         return
func.func @dilated_and_left_alone(%x: tensor<1x16x16x16xf32>, %w: tensor<32x16x3x3xf32>,
                                  %xs: tensor<1x3x16x16xf32>, %ws: tensor<32x3x3x3xf32>,
                                  %xb: tensor<2x16x16x16xf32>)
    -> (tensor<1x32x12x12xf32>, tensor<1x32x14x14xf32>, tensor<2x32x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x32x12x12xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32>
  %d = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x16x16x16xf32>, tensor<32x16x3x3xf32>) outs(%i0 : tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32>
  %e1 = tensor.empty() : tensor<1x32x14x14xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %s = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%xs, %ws : tensor<1x3x16x16xf32>, tensor<32x3x3x3xf32>) outs(%i1 : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %e2 = tensor.empty() : tensor<2x32x14x14xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x32x14x14xf32>) -> tensor<2x32x14x14xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%xb, %w : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>) outs(%i2 : tensor<2x32x14x14xf32>) -> tensor<2x32x14x14xf32>
  return %d, %s, %b : tensor<1x32x12x12xf32>, tensor<1x32x14x14xf32>, tensor<2x32x14x14xf32>
}

// -----

// An int8 stem (7x7 stride 2, 3 channels: K = 147) on an AMX-INT8 host
// (int8-k-multiple=64): windows of 8 taps x 24 elements (K = 192) instead of
// 7 x 21, the extra ones the input's next pixels and row (the last window's
// run ends at 2*3*9 + 24 = 78 = 26*3, its rows at 2*9 + 8 = 26), W^T's rows
// zero-padded to match; without the option, 7 x 21. The second stem's input
// (23 wide: the last run may end at 69 - 48 = 21) has no room: 7 x 21.
// CHECK-LABEL: func.func @int8_stem
// CHECK:         outs(%{{.*}} : tensor<10x10x7x21xi8>)
// CHECK:         outs(%{{.*}} : tensor<9x9x7x21xi8>)
// KM-LABEL: func.func @int8_stem
// KM:         %[[WIN:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<10x10x8x24xi8>)
// KM:         %[[COLS:.*]] = tensor.collapse_shape %[[WIN]] {{\[\[}}0, 1], [2, 3]] : tensor<10x10x8x24xi8> into tensor<100x192xi8>
// KM:         %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<32x3x7x7xi8>) outs(%{{.*}} : tensor<7x7x3x32xi8>)
// KM:         %[[ROWS:.*]] = tensor.collapse_shape %[[WT]] {{\[}}[0], [1, 2], [3]] : tensor<7x7x3x32xi8> into tensor<7x21x32xi8>
// KM:         %[[PAD:.*]] = tensor.pad %[[ROWS]] low[0, 0, 0] high[1, 3, 0]
// KM:         tensor<7x21x32xi8> to tensor<8x24x32xi8>
// KM:         %[[RHS:.*]] = tensor.collapse_shape %[[PAD]] {{\[\[}}0, 1], [2]] : tensor<8x24x32xi8> into tensor<192x32xi8>
// KM:         linalg.matmul ins(%[[COLS]], %[[RHS]] : tensor<100x192xi8>, tensor<192x32xi8>)
// KM:         outs(%{{.*}} : tensor<9x9x7x21xi8>)
func.func @int8_stem(%x: tensor<1x3x26x26xi8>, %w: tensor<32x3x7x7xi8>, %x23: tensor<1x3x23x23xi8>)
    -> (tensor<1x32x10x10xi32>, tensor<1x32x9x9xi32>) {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x32x10x10xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x32x10x10xi32>) -> tensor<1x32x10x10xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x26x26xi8>, tensor<32x3x7x7xi8>) outs(%init : tensor<1x32x10x10xi32>) -> tensor<1x32x10x10xi32>
  %e2 = tensor.empty() : tensor<1x32x9x9xi32>
  %init2 = linalg.fill ins(%zero : i32) outs(%e2 : tensor<1x32x9x9xi32>) -> tensor<1x32x9x9xi32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x23, %w : tensor<1x3x23x23xi8>, tensor<32x3x7x7xi8>) outs(%init2 : tensor<1x32x9x9xi32>) -> tensor<1x32x9x9xi32>
  return %y, %y2 : tensor<1x32x10x10xi32>, tensor<1x32x9x9xi32>
}

// -----

// With int8-shifted-rows (AMX-INT8 and AVX512-VNNI hosts), a stride-1 int8 conv with 64-byte
// channel rows and 64-column output panels whose gathered matrix would be at
// least 512 KiB (56 x 56 x 9 x 64 = 1.8 MB) is one contraction over shifted
// rows of its padded input, no gather: output rows q = oh * 58 + ow on the
// padded width, rounded up to whole 64-row forall tiles (3248 -> 3264), tap
// (kh, kw) reading rows q + kh * 58 + kw of the input, whose pad gets one more
// row at the bottom for the last tiles (3264 + 2 * 58 + 2 = 3382 <= 59 * 58);
// the weights packed as [F/64][KH][KW][C/4][64][4]; columns ow >= 56 dropped.
// Without the option (KM) it is an im2col matmul.
// SR-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 58 + d4, d5, d6)>
// SR-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
// SR-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
// SR-LABEL: func.func @int8_shifted_rows
// SR:         %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 2, 1]
// SR:           tensor.yield %c-128_i8 : i8
// SR:         } : tensor<1x64x56x56xi8> to tensor<1x64x59x58xi8>
// SR-NOT:     tensor.pad
// SR:         %[[HWC:.*]] = linalg.transpose ins(%[[PAD]] : tensor<1x64x59x58xi8>)
// SR:         %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [3422, 16, 4] : tensor<3422x64xi8> into tensor<3422x16x4xi8>
// SR:         %[[W:.*]] = linalg.transpose ins(%{{.*}} : tensor<3x3x16x4x2x64xi8>) outs(%{{.*}} : tensor<2x3x3x16x64x4xi8>) permutation = [4, 0, 1, 2, 5, 3]
// SR:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
// SR-SAME:      ins(%[[X]], %[[W]] : tensor<3422x16x4xi8>, tensor<2x3x3x16x64x4xi8>) outs(%{{.*}} : tensor<3264x2x64xi32>)
// SR:           arith.extsi
// SR:           arith.extsi
// SR:         tensor.extract_slice %{{.*}}[0, 0] [3248, 128] [1, 1] : tensor<3264x128xi32> to tensor<3248x128xi32>
// SR:         tensor.expand_shape %{{.*}} output_shape [56, 58, 128]
// SR:         tensor.extract_slice %{{.*}}[0, 0, 0] [56, 56, 128] [1, 1, 1] : tensor<56x58x128xi32> to tensor<56x56x128xi32>
// SR-NOT:     linalg.matmul
// SR:         return
// KM-LABEL: func.func @int8_shifted_rows
// KM:         linalg.matmul
func.func @int8_shifted_rows(%x0: tensor<1x64x56x56xi8>, %w: tensor<128x64x3x3xi8>) -> tensor<1x128x56x56xi32> {
  %zero = arith.constant 0 : i32
  %zp = arith.constant -128 : i8
  %x = tensor.pad %x0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x64x56x56xi8> to tensor<1x64x58x58xi8>
  %e = tensor.empty() : tensor<1x128x56x56xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x128x56x56xi32>) -> tensor<1x128x56x56xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x64x58x58xi8>, tensor<128x64x3x3xi8>) outs(%init : tensor<1x128x56x56xi32>) -> tensor<1x128x56x56xi32>
  return %y : tensor<1x128x56x56xi32>
}

// -----

// Still im2col matmuls with int8-shifted-rows: a small conv (its gathered
// 14 x 14 x 9 x 256 = 452 KB stay in L2), a strided one, and one without a
// pad in front (nothing to add the rows its last tiles would read to).
// SR-LABEL: func.func @int8_not_shifted
// SR-NOT:     affine_map
// SR-COUNT-3: linalg.matmul
func.func @int8_not_shifted(%x0: tensor<1x256x14x14xi8>, %w: tensor<256x256x3x3xi8>,
                            %x1: tensor<1x64x57x57xi8>, %w1: tensor<64x64x3x3xi8>, %x2: tensor<1x64x58x58xi8>)
    -> (tensor<1x256x14x14xi32>, tensor<1x64x28x28xi32>, tensor<1x64x56x56xi32>) {
  %zero = arith.constant 0 : i32
  %zp = arith.constant -128 : i8
  %x = tensor.pad %x0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x256x14x14xi8> to tensor<1x256x16x16xi8>
  %e = tensor.empty() : tensor<1x256x14x14xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<1x256x14x14xi32>) -> tensor<1x256x14x14xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x256x16x16xi8>, tensor<256x256x3x3xi8>) outs(%init : tensor<1x256x14x14xi32>) -> tensor<1x256x14x14xi32>
  %p1 = tensor.pad %x1 low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x64x57x57xi8> to tensor<1x64x58x58xi8>
  %e1 = tensor.empty() : tensor<1x64x28x28xi32>
  %init1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<1x64x28x28xi32>) -> tensor<1x64x28x28xi32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%p1, %w1 : tensor<1x64x58x58xi8>, tensor<64x64x3x3xi8>) outs(%init1 : tensor<1x64x28x28xi32>) -> tensor<1x64x28x28xi32>
  %e2 = tensor.empty() : tensor<1x64x56x56xi32>
  %init2 = linalg.fill ins(%zero : i32) outs(%e2 : tensor<1x64x56x56xi32>) -> tensor<1x64x56x56xi32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x2, %w1 : tensor<1x64x58x58xi8>, tensor<64x64x3x3xi8>) outs(%init2 : tensor<1x64x56x56xi32>) -> tensor<1x64x56x56xi32>
  return %y, %y1, %y2 : tensor<1x256x14x14xi32>, tensor<1x64x28x28xi32>, tensor<1x64x56x56xi32>
}

// -----

// With shifted-rows-max-extra=8 (the dot-product kernel's bound) only convs
// whose padded-width rows, rounded up to whole 64-row tiles, are at most 8%
// more than their pixels: 56 x 56 (56 x 58 = 3248 -> 3264 rows for 3136
// pixels, 4%) over shifted rows, 28 x 28 (28 x 30 = 840 -> 896 for 784,
// 14%) an im2col matmul. Without the bound (SR) both are shifted rows.
// MX-LABEL: func.func @int8_shifted_rows_extra
// MX:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
// MX-SAME:      outs(%{{.*}} : tensor<3264x1x64xi32>)
// MX:         linalg.matmul
// MX-SAME:      tensor<784x1152xi8>
// MX:         return
// SR-LABEL: func.func @int8_shifted_rows_extra
// SR-NOT:     linalg.matmul
// SR:         outs(%{{.*}} : tensor<3264x1x64xi32>)
// SR-NOT:     linalg.matmul
// SR:         outs(%{{.*}} : tensor<896x2x64xi32>)
// SR-NOT:     linalg.matmul
// SR:         return
func.func @int8_shifted_rows_extra(%x0: tensor<1x64x56x56xi8>, %w0: tensor<64x64x3x3xi8>,
                                   %x1: tensor<1x128x28x28xi8>, %w1: tensor<128x128x3x3xi8>)
    -> (tensor<1x64x56x56xi32>, tensor<1x128x28x28xi32>) {
  %zero = arith.constant 0 : i32
  %zp = arith.constant -128 : i8
  %p0 = tensor.pad %x0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x64x56x56xi8> to tensor<1x64x58x58xi8>
  %e0 = tensor.empty() : tensor<1x64x56x56xi32>
  %i0 = linalg.fill ins(%zero : i32) outs(%e0 : tensor<1x64x56x56xi32>) -> tensor<1x64x56x56xi32>
  %y0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%p0, %w0 : tensor<1x64x58x58xi8>, tensor<64x64x3x3xi8>) outs(%i0 : tensor<1x64x56x56xi32>) -> tensor<1x64x56x56xi32>
  %p1 = tensor.pad %x1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x128x28x28xi8> to tensor<1x128x30x30xi8>
  %e1 = tensor.empty() : tensor<1x128x28x28xi32>
  %i1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<1x128x28x28xi32>) -> tensor<1x128x28x28xi32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%p1, %w1 : tensor<1x128x30x30xi8>, tensor<128x128x3x3xi8>) outs(%i1 : tensor<1x128x28x28xi32>) -> tensor<1x128x28x28xi32>
  return %y0, %y1 : tensor<1x64x56x56xi32>, tensor<1x128x28x28xi32>
}
