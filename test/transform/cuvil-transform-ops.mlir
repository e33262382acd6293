// RUN: cuvil-opt %s --split-input-file --transform-interpreter --verify-diagnostics | FileCheck %s

// The transform.cuvil.* ops (dialects/CuvilTransformOps.td), one at a time.

// match.any_operand_bitwidth: structured ops with an i1 input (scalar or
// tensor) or init; not other ops with i1 values, not other widths.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_i1(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.cuvil.match.any_operand_bitwidth %op, 1 : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_i64(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.cuvil.match.any_operand_bitwidth %op, 64 : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @say_i1(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "i1" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @say_i64(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "i64" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %r = transform.foreach_match in %root @match_i1 -> @say_i1, @match_i64 -> @say_i64
      : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// CHECK-LABEL: func.func @bitwidths
func.func @bitwidths(%x: tensor<4x8xf32>, %m: tensor<4x8xi1>, %ids: tensor<4xi64>) -> (tensor<4x8xi1>, tensor<4x8xf32>) {
  %true = arith.constant true
  %e1 = tensor.empty() : tensor<4x8xi1>
  // expected-remark @below {{i1}}
  %fill = linalg.fill ins(%true : i1) outs(%e1 : tensor<4x8xi1>) -> tensor<4x8xi1>
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{i1}}
  %sel = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : tensor<4x8xi1>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%b: i1, %a: f32, %o: f32):
    %s = arith.select %b, %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  // expected-remark @below {{i1}}
  %cmp = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e1 : tensor<4x8xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %a : f32
    linalg.yield %c : i1
  } -> tensor<4x8xi1>
  // expected-remark @below {{i64}}
  %gather = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%id: i64, %o: f32):
    %f = arith.sitofp %id : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %sum = linalg.add ins(%sel, %gather : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %and = arith.andi %true, %true : i1
  return %cmp, %sum : tensor<4x8xi1>, tensor<4x8xf32>
}

// -----

// match.loop_ranges_at_least: a shape of the op's rank, every entry reached
// (0: any size, even dynamic); params as entries.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @match_big(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %cols = transform.param.constant 3072 : i64 -> !transform.param<i64>
    transform.cuvil.match.loop_ranges_at_least %op [[131072], [64, %cols], [0, 4, 128]]
      : !transform.any_op, !transform.param<i64>
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @say(%op: !transform.any_op {transform.readonly}) {
    transform.debug.emit_remark_at %op, "big" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %r = transform.foreach_match in %root @match_big -> @say : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

func.func @shapes(%a: tensor<131072xf32>, %b: tensor<131071xf32>, %c: tensor<64x3072xf32>,
                  %d: tensor<63x3072xf32>, %e: tensor<64x3071xf32>, %f: tensor<?x4x128xf32>,
                  %g: tensor<2x3x128xf32>, %h: tensor<?x3072xf32>, %i: tensor<1x131072xf32>) {
  %z = arith.constant 0.0 : f32
  // expected-remark @below {{big}}
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<131072xf32>) -> tensor<131072xf32>
  %1 = linalg.fill ins(%z : f32) outs(%b : tensor<131071xf32>) -> tensor<131071xf32>
  // expected-remark @below {{big}}
  %2 = linalg.fill ins(%z : f32) outs(%c : tensor<64x3072xf32>) -> tensor<64x3072xf32>
  %3 = linalg.fill ins(%z : f32) outs(%d : tensor<63x3072xf32>) -> tensor<63x3072xf32>
  %4 = linalg.fill ins(%z : f32) outs(%e : tensor<64x3071xf32>) -> tensor<64x3071xf32>
  // expected-remark @below {{big}}
  %5 = linalg.fill ins(%z : f32) outs(%f : tensor<?x4x128xf32>) -> tensor<?x4x128xf32>
  %6 = linalg.fill ins(%z : f32) outs(%g : tensor<2x3x128xf32>) -> tensor<2x3x128xf32>
  %7 = linalg.fill ins(%z : f32) outs(%h : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  %8 = linalg.fill ins(%z : f32) outs(%i : tensor<1x131072xf32>) -> tensor<1x131072xf32>
  return
}

// -----

// tile_sizes: the first row that fits the rank, leading loops padded.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    transform.foreach %ops : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %s = transform.cuvil.tile_sizes %op [[%rows, 0], [4096]] leading 1
        : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
      transform.debug.emit_param_as_remark %s, "rows" at %op : !transform.param<i64>, !transform.any_op
      %z = transform.cuvil.tile_sizes %op [16] : (!transform.any_op) -> !transform.param<i64>
      transform.debug.emit_param_as_remark %z, "red" at %op : !transform.param<i64>, !transform.any_op
    }
    transform.yield
  }
}

func.func @sizes(%a: tensor<100xf32>, %b: tensor<20x30xf32>, %c: tensor<2x20x30xf32>, %d: tensor<2x3x4x5x6xf32>) {
  %z = arith.constant 0.0 : f32
  // expected-remark @below {{rows 4096 : i64}}
  // expected-remark @below {{red 16 : i64}}
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100xf32>) -> tensor<100xf32>
  // expected-remark @below {{rows 8 : i64, 0 : i64}}
  // expected-remark @below {{red 0 : i64, 16 : i64}}
  %1 = linalg.fill ins(%z : f32) outs(%b : tensor<20x30xf32>) -> tensor<20x30xf32>
  // expected-remark @below {{rows 1 : i64, 8 : i64, 0 : i64}}
  // expected-remark @below {{red 0 : i64, 0 : i64, 16 : i64}}
  %2 = linalg.fill ins(%z : f32) outs(%c : tensor<2x20x30xf32>) -> tensor<2x20x30xf32>
  // expected-remark @below {{rows 1 : i64, 1 : i64, 1 : i64, 8 : i64, 0 : i64}}
  // expected-remark @below {{red 0 : i64, 0 : i64, 0 : i64, 0 : i64, 16 : i64}}
  %3 = linalg.fill ins(%z : f32) outs(%d : tensor<2x3x4x5x6xf32>) -> tensor<2x3x4x5x6xf32>
  return
}

// -----

// tile_sizes: no row fits.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    // expected-error @below {{every row of sizes is longer than the 1 loop(s) of the op}}
    %s = transform.cuvil.tile_sizes %op [16, 16] leading 1 : (!transform.any_op) -> !transform.param<i64>
    transform.yield
  }
}

func.func @too_short(%a: tensor<100xf32>) -> tensor<100xf32> {
  %z = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100xf32>) -> tensor<100xf32>
  return %0 : tensor<100xf32>
}

// -----

// tile_sizes: a param entry must hold one value.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %a = transform.param.constant 8 : i64 -> !transform.param<i64>
    %two = transform.merge_handles %a, %a : !transform.param<i64>
    // expected-error @below {{expected each size param to hold one integer >= 0, got 2 value(s)}}
    %s = transform.cuvil.tile_sizes %op [%two] : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.yield
  }
}

func.func @two_values(%a: tensor<100xf32>) -> tensor<100xf32> {
  %z = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100xf32>) -> tensor<100xf32>
  return %0 : tensor<100xf32>
}

// -----

// tile_using_for: one scf.for per non-zero size; the loop result is the
// outermost one.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %s = transform.cuvil.tile_sizes %op [%rows, 0] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%s)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.debug.emit_remark_at %loop, "outermost" : !transform.any_op
    transform.yield
  }
}

// CHECK-LABEL: func.func @tile_for
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c20 step %c8
// CHECK:             linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?x30xf32>)
func.func @tile_for(%x: tensor<4x20x30xf32>) -> tensor<4x20x30xf32> {
  %e = tensor.empty() : tensor<4x20x30xf32>
  // expected-remark @below {{outermost}}
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x20x30xf32>) outs(%e : tensor<4x20x30xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<4x20x30xf32>
  return %r : tensor<4x20x30xf32>
}

// -----

// tile_using_for: more sizes than loops.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %a = transform.param.constant 8 : i64 -> !transform.param<i64>
    %s = transform.merge_handles %a, %a : !transform.param<i64>
    // expected-error @below {{too many tile sizes: 2 for an op with 1 loop(s)}}
    %t, %loop = transform.cuvil.tile_using_for %op tile_sizes *(%s)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

func.func @too_many(%a: tensor<100xf32>) -> tensor<100xf32> {
  %z = arith.constant 0.0 : f32
  // expected-note @below {{target op}}
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100xf32>) -> tensor<100xf32>
  return %0 : tensor<100xf32>
}

// -----

// tile_reduction_using_for: a 13 x 16 partial accumulator, merged after the loop.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.cuvil.tile_sizes %op [16] : (!transform.any_op) -> !transform.param<i64>
    %fill, %part, %merge, %loop = transform.cuvil.tile_reduction_using_for %op by tile_sizes *(%s)
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.debug.emit_remark_at %fill, "fill" : !transform.any_op
    transform.debug.emit_remark_at %loop, "loop" : !transform.any_op
    transform.yield
  }
}

// CHECK-LABEL: func.func @row_sum
// CHECK:         linalg.fill {{.*}} -> tensor<13x16xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c100 step %c16 {{.*}} -> (tensor<13x16xf32>)
// CHECK:         linalg.reduce ins(%{{.*}} : tensor<13x16xf32>)
func.func @row_sum(%x: tensor<13x100xf32>, %init: tensor<13xf32>) -> tensor<13xf32> {
  // expected-remark @below {{fill}}
  // expected-remark @below {{loop}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<13x100xf32>) outs(%init : tensor<13xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  return %r : tensor<13xf32>
}

// -----

// tile_reduction_using_for: not a reduction-tileable op.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["tensor.empty"]} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.param.constant 16 : i64 -> !transform.param<i64>
    // expected-error @below {{expected an op implementing PartialReductionOpInterface}}
    %fill, %part, %merge, %loop = transform.cuvil.tile_reduction_using_for %op by tile_sizes *(%s)
      : (!transform.any_op, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

func.func @not_a_reduction() -> tensor<13xf32> {
  // expected-note @below {{target op}}
  %e = tensor.empty() : tensor<13xf32>
  return %e : tensor<13xf32>
}

// -----

// vectorize: masked where the vector sizes do not divide the shape.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %vec = transform.param.constant 64 : i64 -> !transform.param<i64>
    %s = transform.cuvil.tile_sizes %op [%vec] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    transform.cuvil.vectorize %op vector_sizes *(%s) : !transform.any_op, !transform.param<i64>
    transform.yield
  }
}

// CHECK-LABEL: func.func @vectorize_masked
// CHECK:         vector.create_mask {{.*}} : vector<1x64xi1>
// CHECK:         vector.mask {{.*}} vector.transfer_read {{.*}} : tensor<1x50xf32>, vector<1x64xf32>
// CHECK:         math.exp {{.*}} : vector<1x64xf32>
// CHECK-NOT:     linalg.generic
func.func @vectorize_masked(%x: tensor<1x50xf32>) -> tensor<1x50xf32> {
  %e = tensor.empty() : tensor<1x50xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x50xf32>) outs(%e : tensor<1x50xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<1x50xf32>
  return %r : tensor<1x50xf32>
}

// -----

// vectorize: an op without a vectorizer.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["func.return"]} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.param.constant 16 : i64 -> !transform.param<i64>
    transform.cuvil.vectorize %op vector_sizes *(%s) : !transform.any_op, !transform.param<i64>
    transform.yield
  }
}

func.func @no_vectorizer() {
  // expected-error @below {{Unsupported Op, cannot vectorize}}
  return
}

// -----

// Verifier: the bitwidth is positive.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @below {{attribute 'bitwidth' failed to satisfy constraint}}
    transform.cuvil.match.any_operand_bitwidth %root, 0 : !transform.any_op
    transform.yield
  }
}

// -----

// Verifier: sizes are >= 0.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @below {{expects sizes >= 0, got -1}}
    %s = transform.cuvil.tile_sizes %root [-1, 16] : (!transform.any_op) -> !transform.param<i64>
    transform.yield
  }
}

// -----

// Verifier: the flat sizes and the row lengths agree (generic form).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @below {{has rows of 3 sizes in all but 2 sizes}}
    "transform.cuvil.match.loop_ranges_at_least"(%root) <{static_sizes = array<i64: 1, 2>, row_lengths = array<i64: 1, 2>}>
      : (!transform.any_op) -> ()
    transform.yield
  }
}

// -----

// Verifier: one param operand per param entry (generic form).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @below {{has 1 param entries but 0 param operands}}
    %s = "transform.cuvil.tile_sizes"(%root) <{static_sizes = array<i64: -9223372036854775808>, row_lengths = array<i64: 1>, leading = 0 : i64}>
      : (!transform.any_op) -> !transform.param<i64>
    transform.yield
  }
}

// -----

// Verifier: no empty rows.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // expected-error @below {{expects every row of sizes to be non-empty}}
    %s = "transform.cuvil.tile_sizes"(%root) <{static_sizes = array<i64: 4>, row_lengths = array<i64: 1, 0>, leading = 0 : i64}>
      : (!transform.any_op) -> !transform.param<i64>
    transform.yield
  }
}

// -----

// The printed form round-trips.
// CHECK-LABEL: module attributes {transform.with_named_sequence}
// CHECK:   transform.cuvil.match.loop_ranges_at_least %{{.*}} {{\[\[}}131072], [64, %{{.*}}{{\]\]}} : !transform.any_op, !transform.param<i64>
// CHECK:   transform.cuvil.tile_sizes %{{.*}} [%{{.*}}, 0] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
// CHECK:   transform.cuvil.tile_sizes %{{.*}} [16] : (!transform.any_op) -> !transform.param<i64>
// CHECK:   transform.cuvil.tile_using_for %{{.*}} tile_sizes *(%{{.*}}) : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
module attributes {transform.with_named_sequence} {
  transform.named_sequence @printed(%op: !transform.any_op {transform.consumed}) {
    %p = transform.param.constant 8 : i64 -> !transform.param<i64>
    transform.cuvil.match.loop_ranges_at_least %op [[131072], [64, %p]] : !transform.any_op, !transform.param<i64>
    %s = transform.cuvil.tile_sizes %op [%p, 0] leading 1 : (!transform.any_op, !transform.param<i64>) -> !transform.param<i64>
    %r = transform.cuvil.tile_sizes %op [16] leading 0 : (!transform.any_op) -> !transform.param<i64>
    %t, %l = transform.cuvil.tile_using_for %op tile_sizes *(%s)
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}

// -----

// apply_patterns.cuvil.fold_shifted_rows_taps: a tile of an int8 conv over
// shifted rows with one kh and one kw iteration loses those two loops (A's
// row d1 + d3 * 10 + d4 becomes d1, B's kh and kw dimensions go: the rank-5
// VNNI contraction [n/64, q, 64, c/4, 4]); the one-panel loop stays. A tile
// with three kw iterations is left alone.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.cuvil.fold_shifted_rows_taps
    } : !transform.any_op
    transform.yield
  }
}

#sra = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1 + d3 * 10 + d4, d5, d6)>
#srb = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d5, d2, d6)>
#src = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d0, d2)>
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @one_tap
// CHECK:         tensor.extract_slice %arg1{{.*}} : tensor<1x1x1x16x64x4xi8> to tensor<1x16x64x4xi8>
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%arg0, %{{.*}} : tensor<4x16x4xi8>, tensor<1x16x64x4xi8>) outs(%arg2 : tensor<4x1x64xi32>)
func.func @one_tap(%x: tensor<4x16x4xi8>, %w: tensor<1x1x1x16x64x4xi8>, %c: tensor<4x1x64xi32>) -> tensor<4x1x64xi32> {
  %r = linalg.generic {indexing_maps = [#sra, #srb, #src],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<4x16x4xi8>, tensor<1x1x1x16x64x4xi8>) outs(%c : tensor<4x1x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %a32 = arith.extui %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<4x1x64xi32>
  return %r : tensor<4x1x64xi32>
}

// CHECK-LABEL: func.func @three_taps
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
func.func @three_taps(%x: tensor<6x16x4xi8>, %w: tensor<1x1x3x16x64x4xi8>, %c: tensor<4x1x64xi32>) -> tensor<4x1x64xi32> {
  %r = linalg.generic {indexing_maps = [#sra, #srb, #src],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<6x16x4xi8>, tensor<1x1x3x16x64x4xi8>) outs(%c : tensor<4x1x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %a32 = arith.extui %a : i8 to i32
    %b32 = arith.extsi %b : i8 to i32
    %p = arith.muli %a32, %b32 : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<4x1x64xi32>
  return %r : tensor<4x1x64xi32>
}

// -----

// apply_patterns.cuvil.fold_unit_batch: a one-batch tile of a batched VNNI
// contraction (loops [b, n/64, m, 64, k/2, 2]) loses its batch loop, read
// and written through rank-reducing slices: the rank-5 contraction of one
// head. Two batches, or a loop 0 that an operand does not index first (B
// shared by the batch), are left alone.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.cuvil.fold_unit_batch
    } : !transform.any_op
    transform.yield
  }
}

#ba = affine_map<(b, n, m, j, k, v) -> (b, m, k, v)>
#bb = affine_map<(b, n, m, j, k, v) -> (b, n, k, j, v)>
#bc = affine_map<(b, n, m, j, k, v) -> (b, m, n, j)>
#shared = affine_map<(b, n, m, j, k, v) -> (n, k, j, v)>
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @one_batch
// CHECK:         tensor.extract_slice %arg0{{.*}} : tensor<1x4x8x2xbf16> to tensor<4x8x2xbf16>
// CHECK:         tensor.extract_slice %arg1{{.*}} : tensor<1x1x8x64x2xbf16> to tensor<1x8x64x2xbf16>
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<4x1x64xf32>)
// CHECK:         tensor.insert_slice {{.*}} : tensor<4x1x64xf32> into tensor<1x4x1x64xf32>
func.func @one_batch(%a: tensor<1x4x8x2xbf16>, %b: tensor<1x1x8x64x2xbf16>, %c: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %r = linalg.generic {indexing_maps = [#ba, #bb, #bc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : tensor<1x4x8x2xbf16>, tensor<1x1x8x64x2xbf16>) outs(%c : tensor<1x4x1x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x1x64xf32>
  return %r : tensor<1x4x1x64xf32>
}

// CHECK-LABEL: func.func @two_batches
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @two_batches(%a: tensor<2x4x8x2xbf16>, %b: tensor<2x1x8x64x2xbf16>, %c: tensor<2x4x1x64xf32>) -> tensor<2x4x1x64xf32> {
  %r = linalg.generic {indexing_maps = [#ba, #bb, #bc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : tensor<2x4x8x2xbf16>, tensor<2x1x8x64x2xbf16>) outs(%c : tensor<2x4x1x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x1x64xf32>
  return %r : tensor<2x4x1x64xf32>
}

// CHECK-LABEL: func.func @shared_rhs
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @shared_rhs(%a: tensor<1x4x8x2xbf16>, %b: tensor<1x8x64x2xbf16>, %c: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %r = linalg.generic {indexing_maps = [#ba, #shared, #bc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : tensor<1x4x8x2xbf16>, tensor<1x8x64x2xbf16>) outs(%c : tensor<1x4x1x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x1x64xf32>
  return %r : tensor<1x4x1x64xf32>
}

// -----

// balanced_row_tile: a multiple of 0 is refused.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %t0 = transform.param.constant 0 : i64 -> !transform.param<i64>
    %t1 = transform.param.constant 64 : i64 -> !transform.param<i64>
    // expected-error @below {{expected multiple to hold one integer >= 1, got 1 value(s) (0)}}
    %s = transform.cuvil.balanced_row_tile %op tiles %t0, %t1 multiple %t0
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> !transform.param<i64>
    transform.yield
  }
}

func.func @zero_multiple(%a: tensor<100x8xf32>) -> tensor<100x8xf32> {
  %z = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%z : f32) outs(%a : tensor<100x8xf32>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}
