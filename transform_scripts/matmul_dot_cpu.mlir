// =============================================================================
// Cuvil: Transform-dialect schedule for the matmuls of x86-64 dot-product
// units, on the VNNI-packed contractions pack_cpu.mlir makes of them:
//   * bf16 x bf16 -> f32 on AVX512-BF16 (vdpbf16ps): k pairs, v = 2;
//   * int8 (u8 x s8, after cuvil-unsigned-int8-lhs) -> i32 on AVX512-VNNI
//     (vpdpbusd, via transform.apply_patterns.cuvil.vector_contract_to_u8s8_dot
//     and cuvil-lower-x86-dot): k quads, v = 4.
// One register kernel, vectorized [1, 1, 16, 1, v]. The rest of this header
// describes the bf16 case; int8 reads "quad" for "pair", 8-bit for 16-bit,
// and K is padded to a multiple of 4 (up to 3 zero k rows).
//
// Usage: run the raise step with @cuvil_pack_matmul_rhs_bf16_vnni instead of
// @cuvil_pack_matmul_rhs, run this script (@__transform_main) before
// matmul_cpu.mlir, and lower with convert-vector-to-llvm{enable-x86vector}
// (x86vector.avx512.dot -> llvm.x86.avx512bf16.dpbf16ps.512):
//   cuvil-opt in.mlir --transform-preload-library=transform-library-paths=transform_scripts/matmul_dot_cpu.mlir \
//       --transform-interpreter
// Every other op (fp32 matmuls, bf16 matmuls that were not VNNI-packed, f32
// batch matmuls) is left to matmul_cpu.mlir / batch_matmul_cpu.mlir, whose fallback
// converts bf16 to f32 and uses FMAs; on hosts without AVX512-BF16 that
// fallback is the whole bf16 path.
//
// What it matches: the rank-5 linalg.generic
//   C[m][n/64][64] += A[m][k/2][2] * Bv[n/64][k/2][64][2]
// (loops [m, n/64, k/2, 64, 2], 16-bit inputs, 32-bit accumulator).
//
// What it does to each:
//  1. Loops interchanged to [n/64, m, 64, k/2, 2]; scf.forall over DOT_TNP
//     panels x DOT_TM rows with the zero fill (int8: the broadcast of the
//     per-column zero-point correction) fused, written tile by tile. The
//     rows are spread evenly over the tiles, one tile more where their number
//     would be odd (transform.cuvil.balanced_row_tile: two threads take
//     contiguous halves of the forall; M = 196 was 128 | 68 rows, now
//     104 | 92). ResNet-18, 2 threads, Zen 5, per kernel: int8's 14x14 /
//     28x28 convs 0.49 -> 0.40 / 0.43 -> 0.37 ms, bf16's 0.18 -> 0.15 /
//     0.16 -> 0.14 ms; int8 model 0.95x the time (interleaved, median).
//  2. K blocks of DOT_TK2 k pairs; register tile DOT_RM rows x 64 columns,
//     one k pair per step (loops panel, m, k/2; m peeled).
//  3. Each register tile split into 1 x 16 tiles (one row, one zmm of f32
//     accumulators), those loops unrolled: vdpbf16ps has no wider form, and
//     upstream's x86vector pattern only rewrites a vector.contract of exactly
//     that shape (A vector<..x1x2xbf16>, B vector<..x16x2xbf16>).
//  4. Vectorized [1, 1, 16, 1, 2]; then, on this kernel only (the patterns must
//     not see the fallback's bf16 contractions, whose extf stays separate):
//     reduction_to_contract; fold_arith_extension (the contraction takes the
//     bf16 vectors themselves); the DOT_RM x 4 accumulators hoisted out of
//     the k loop; vector_contract_to_packed_type_dot_product turns each
//     contraction into one 32-bit broadcast of A's k pair and one
//     x86vector.avx512.dot with a 64-byte row of B's panel.
//  Per k pair: DOT_RM broadcasts + 4 loads of B feed 4 x DOT_RM vdpbf16ps
//  (each 32 multiply-adds), with DOT_RM x 4 zmm accumulators.
//  5. The accumulators' reads / writes folded through their 1 x 16 slices onto
//     the register tile (fold_tensor_subset_ops_into_vector_transfers): one
//     chain of transfer_writes into the DOT_RM x 1 x 64 tile. Left as 16
//     extract_slice / transfer_write / insert_slice triples, bufferization
//     saw the writes interleaved with reads of the same tile and copied each
//     slice into a fresh 64-byte buffer: 16 malloc + free per register tile
//     per K block, ~20% of the kernel's time (BERT shapes 370 -> 465 GFLOP/s).
//
// Int8 convs over shifted rows (cuvil-im2col-conv{int8-shifted-rows}, rank
// 7, loops [n/64, q, 64, kh, kw, c/4, 4]; hosts without AMX-INT8): the same
// forall tiles and register kernel, with the taps kh, kw inside a register
// tile's loops (@cuvil_vnni_shifted_rows): each tap reads DOT_RM consecutive
// pixels of the padded input, shifted by kh * WP + kw, instead of a row of
// a gathered im2col matrix. Their forall tiles are 64 rows whatever DOT_TM
// says (cuvil-im2col-conv's kShiftedRowsTile rounds their rows up to it),
// and their K (kh x kw x c) is not blocked by DOT_TK2.
//
// Attention's bf16 batched products and Winograd's bf16 batch matmuls
// (precision="bf16": the raise step narrows them, pack_cpu's
// @cuvil_pack_bf16_bmms packs them per batch; rank 6, loops
// [b, m, n/64, k/2, 64, 2]): forall tiles of one batch x DOT_TNP panels x
// DOT_TM rows (@cuvil_vnni_bmm_cpu, static sizes only); fold_unit_batch
// drops each tile's batch loop, and steps 2-5 are the matmul's. Per kernel on Zen 5, 1
// thread: BERT-base's q.k^T and p.v 3.10 ms as f32 FMAs -> 1.68 ms, plus
// 0.17 ms packing the rhs per call (all kernels 0.96-0.97x); ResNet-18's
// Winograd batch matmuls 5.2 -> 2.0 ms.
//
// Boundaries: N is padded to whole panels and odd K with one zero k row by
// the packing, so only M has a remainder: the peeled rows (M mod DOT_RM) run
// the same 1 x 16 dot tiles one row at a time, each row over the whole K
// block with its 4 accumulators in registers. Matmuls of fewer rows than
// DOT_RM (down to one for int8, see pack_cpu.mlir) are all remainder.
//
// Parameters (the arguments of @cuvil_matmul_dot_cpu_schedule; own names so
// that a params dict for matmul_cpu's TM/RM does not retune this kernel):
//   DOT_TNP = 4, DOT_TM = 64  scf.forall tile: panels of 64 columns x rows.
//   DOT_TK2 = 1024            K block in k pairs (2048 k: a B panel block of
//                             1024 x 128 B = 128 KiB stays in L2; the
//                             accumulators are loaded and stored once per
//                             block, so fewer blocks pay).
//   DOT_RM = 4                rows of the register tile: 16 accumulators.
//                             2, 4, 6 or 8 (the row loop's unroll factors).
// Measurements behind the defaults are in benchmarks/README.md.
//
// AMX (hosts with AMX-BF16 / AMX-INT8; entries @cuvil_amx_bf16 and
// @cuvil_amx_int8, run before @__transform_main so they take those matmuls
// first): the same packed contractions, interchanged to [n/64, m, 64, k/v, v],
// tiled by scf.forall into AMX_TNP panels x AMX_TM rows with the init fused
// (annotated `cuvil.amx_init`: the accumulators start from it), and the
// tile's linalg.generic annotated `cuvil.amx`. Nothing else is done
// here: after bufferization, cuvil-amx-matmul (lib/Transforms/AmxMatmul.cpp)
// writes each marked op as tile code (tdpbf16ps / tdpbusd, 16 x 64-byte
// tiles read straight from the packed layouts), and convert-vector-to-llvm
// {enable-amx} lowers it. A marked op that pass cannot take (dynamic K) gets
// a remark and runs as loops. @cuvil_amx_int8 also tiles the int8 convs
// cuvil-im2col-conv{int8-shifted-rows} writes as one contraction over shifted
// rows of the padded input (rank 7, already in that loop order), the same way.
//   AMX_TNP, AMX_TM           scf.forall tile: AMX_TNP panels x AMX_TM rows
//                             (blocks of 32 rows, 2 x 2 accumulators).
//                             int8: 4 panels (256 columns) x 64 rows; bf16: 1
//                             panel x 128 rows (12 tiles for 2 threads on a
//                             128 x 768 layer, each reading its B panel once).
//                             Interleaved, Xeon model 167, bf16 time new / old:
//                             4 x 64 -> 2 x 64 BERT-base 0.94x (2 threads),
//                             0.96x (1), the MLP unchanged; 2 x 64 -> 1 x 128
//                             BERT-base 0.98x (2), 0.97x (1), MLP 64x1024-4096-
//                             4096-1024 0.99x / 0.92x, 1024^3 0.98x / 1.02x.
//                             int8 with 2 x 64: BERT-base 0.97x, ResNet-18
//                             1.05x (2 threads).
// =============================================================================
module attributes {transform.with_named_sequence} {

  // The VNNI-packed bf16 matmul: rank 5, loops [m, n/64, k/2, 64, 2].
  transform.named_sequence @cuvil_match_vnni_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      transform.match.structured.yield
    }
    %two = transform.param.constant 2 : i64 -> !transform.param<i64>
    %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_vnni_contraction failures(propagate) (%op, %two, %c16)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // The VNNI-packed int8 matmul after cuvil-unsigned-int8-lhs: rank 5, loops
  // [m, n/64, k/4, 64, 4], u8 x s8 -> i32.
  transform.named_sequence @cuvil_match_vnni_int8_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.body %s {contraction = ["arith.muli", "arith.addi"]} : !transform.any_op
      transform.match.structured.yield
    }
    %four = transform.param.constant 4 : i64 -> !transform.param<i64>
    %c8 = transform.param.constant 8 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_vnni_contraction failures(propagate) (%op, %four, %c8)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // A rank-5 contraction C[m][n/64][64] += A[m][k/v][v] * B[n/64][k/v][64][v]
  // with `bits`-wide inputs and a 32-bit accumulator.
  transform.named_sequence @cuvil_match_vnni_contraction(%op: !transform.any_op {transform.readonly},
      %vnni: !transform.param<i64> {transform.readonly}, %bits: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %five = transform.param.constant 5 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %five : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.dim %s[2, 4] {reduction} : !transform.any_op
      transform.match.structured.dim %s[0, 1, 3] {parallel} : !transform.any_op
      %j = transform.match.structured.dim %s[3] : (!transform.any_op) -> !transform.param<i64>
      %v = transform.match.structured.dim %s[4] : (!transform.any_op) -> !transform.param<i64>
      %c64 = transform.param.constant 64 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %j, %c64 : !transform.param<i64>
      transform.match.param.cmpi eq %v, %vnni : !transform.param<i64>
      %a = transform.match.structured.input %s[0] : (!transform.any_op) -> !transform.any_value
      %b = transform.match.structured.input %s[1] : (!transform.any_op) -> !transform.any_value
      %c = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %wa = transform.match.structured.elemental_bitwidth %a : (!transform.any_value) -> !transform.param<i64>
      %wb = transform.match.structured.elemental_bitwidth %b : (!transform.any_value) -> !transform.param<i64>
      %wc = transform.match.structured.elemental_bitwidth %c : (!transform.any_value) -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %wa, %bits : !transform.param<i64>
      transform.match.param.cmpi eq %wb, %bits : !transform.param<i64>
      transform.match.param.cmpi eq %wc, %c32 : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Splits one register tile (rows x 64 x one k pair) into 1 x 16 tiles and
  // unrolls their loops: the 4 column tiles always, the rows when the loop
  // has DOT_RM iterations (scf's unroll keeps a loop with fewer iterations
  // than the factor: the peeled rows stay a loop).
  transform.named_sequence @cuvil_vnni_split_tile(%k: !transform.any_op {transform.consumed},
      %rm: !transform.param<i64> {transform.readonly}) {
    %kloop = transform.get_parent_op %k {op_name = "scf.for"} : (!transform.any_op) -> !transform.any_op
    %t, %lm, %lj = transform.structured.tile_using_for %k tile_sizes [0, 1, 16]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.loop.unroll %lj {factor = 4} : !transform.any_op
    // loop.unroll takes its factor as an attribute: one branch per DOT_RM,
    // each finding the (marked) row loop anew: a branch that consumed %lm
    // would invalidate it for the next. A failed match stops a foreach body
    // (in a failures(suppress) sequence the next op would still run).
    transform.annotate %lm "cuvil_vnni_rows" : !transform.any_op
    transform.sequence %kloop : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      transform.foreach %p : !transform.any_op {
      ^bb1(%q: !transform.any_op):
        %c = transform.param.constant 2 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rm, %c : !transform.param<i64>
        %l = transform.structured.match ops{["scf.for"]} attributes {cuvil_vnni_rows} in %q : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %l {factor = 2} : !transform.any_op
      }
    }
    transform.sequence %kloop : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      transform.foreach %p : !transform.any_op {
      ^bb1(%q: !transform.any_op):
        %c = transform.param.constant 4 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rm, %c : !transform.param<i64>
        %l = transform.structured.match ops{["scf.for"]} attributes {cuvil_vnni_rows} in %q : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %l {factor = 4} : !transform.any_op
      }
    }
    transform.sequence %kloop : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      transform.foreach %p : !transform.any_op {
      ^bb1(%q: !transform.any_op):
        %c = transform.param.constant 6 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rm, %c : !transform.param<i64>
        %l = transform.structured.match ops{["scf.for"]} attributes {cuvil_vnni_rows} in %q : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %l {factor = 6} : !transform.any_op
      }
    }
    transform.sequence %kloop : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      transform.foreach %p : !transform.any_op {
      ^bb1(%q: !transform.any_op):
        %c = transform.param.constant 8 : i64 -> !transform.param<i64>
        transform.match.param.cmpi eq %rm, %c : !transform.param<i64>
        %l = transform.structured.match ops{["scf.for"]} attributes {cuvil_vnni_rows} in %q : (!transform.any_op) -> !transform.any_op
        transform.loop.unroll %l {factor = 8} : !transform.any_op
      }
    }
    transform.yield
  }

  // The accumulator's initial value, computed tile by tile in the forall.
  transform.named_sequence @cuvil_vnni_fuse_init(%forall: !transform.any_op {transform.readonly}) {
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%f: !transform.any_op):
        // A zero fill, or (int8) the broadcast of the zero-point correction
        // per column that cuvil-outline-kernels put into this kernel.
        transform.match.operation_name %f ["linalg.fill", "linalg.generic"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %f into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %ffr, %fl0, %fl1 = transform.structured.tile_using_for %ff tile_sizes [1, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
        transform.structured.vectorize %ffr vector_sizes [1, 1, 64] : !transform.any_op
      }
    }
    transform.yield
  }

  // AMX: the init (a zero fill, or int8's broadcast zero-point correction
  // per column) fused into the forall tile as it is, marked
  // `cuvil.amx_init`: cuvil-amx-matmul starts the accumulators from it
  // (tilezero, or a load of the column row with stride 0) and drops it, so
  // the tile's C is not written once by the init and read back by the tiles.
  // Measured against the init vectorized into C (time new / old, min..median,
  // 8 rounds interleaved in one process, both orders, Xeon model 167):
  // ResNet-18 int8 0.89..0.95 (1 thread), 0.93..0.95 (2); BERT-base bf16
  // 0.92..0.94 (1), 0.95..0.96 (2).
  transform.named_sequence @cuvil_amx_fuse_init(%forall: !transform.any_op {transform.readonly}) {
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%f: !transform.any_op):
        transform.match.operation_name %f ["linalg.fill", "linalg.generic"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %f into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        transform.annotate %ff "cuvil.amx_init" : !transform.any_op
      }
    }
    transform.yield
  }

  // AMX (see the AMX section of the header): the forall tiles, marked for
  // cuvil-amx-matmul, which writes them as tile code after bufferization.
  transform.named_sequence @cuvil_amx_matmul_cpu(%op: !transform.any_op {transform.consumed},
      %tnp: !transform.param<i64> {transform.readonly}, %tm: !transform.param<i64> {transform.readonly}) {
    %i = transform.structured.interchange %op iterator_interchange = [1, 0, 3, 2, 4]
      : (!transform.any_op) -> !transform.any_op
    %t0, %forall = transform.structured.tile_using_forall %i tile_sizes [%tnp, %tm]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_amx_fuse_init failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.annotate %t0 "cuvil.amx" : !transform.any_op
    transform.yield
  }

  // The batched VNNI contraction of pack_cpu's @cuvil_pack_bf16_bmms
  // (attention's products and Winograd's batch matmuls, precision="bf16"):
  // rank 6, loops [b, m, n/64, k/2, 64, 2], bf16 x bf16 -> f32.
  transform.named_sequence @cuvil_match_vnni_bmm(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %six = transform.param.constant 6 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %six : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.dim %s[3, 5] {reduction} : !transform.any_op
      transform.match.structured.dim %s[0, 1, 2, 4] {parallel} : !transform.any_op
      %j = transform.match.structured.dim %s[4] : (!transform.any_op) -> !transform.param<i64>
      %v = transform.match.structured.dim %s[5] : (!transform.any_op) -> !transform.param<i64>
      %c64 = transform.param.constant 64 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %j, %c64 : !transform.param<i64>
      transform.match.param.cmpi eq %v, %two : !transform.param<i64>
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      %a = transform.match.structured.input %s[0] : (!transform.any_op) -> !transform.any_value
      %b = transform.match.structured.input %s[1] : (!transform.any_op) -> !transform.any_value
      %c = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %wa = transform.match.structured.elemental_bitwidth %a : (!transform.any_value) -> !transform.param<i64>
      %wb = transform.match.structured.elemental_bitwidth %b : (!transform.any_value) -> !transform.param<i64>
      %wc = transform.match.structured.elemental_bitwidth %c : (!transform.any_value) -> !transform.param<i64>
      %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %wa, %c16 : !transform.param<i64>
      transform.match.param.cmpi eq %wb, %c16 : !transform.param<i64>
      transform.match.param.cmpi eq %wc, %c32 : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // One batch x AMX_TNP panels x AMX_TM rows per forall tile (BERT-base's
  // q.k^T: 12 heads x 2 panels, 24 tiles; p.v: 12), loops interchanged to
  // [b, n/64, m, 64, k/2, 2]: cuvil-amx-matmul's order with the batch first,
  // which it drops (a tile holds one batch).
  transform.named_sequence @cuvil_amx_bmm_cpu(%op: !transform.any_op {transform.consumed},
      %tnp: !transform.param<i64> {transform.readonly}, %tm: !transform.param<i64> {transform.readonly}) {
    %i = transform.structured.interchange %op iterator_interchange = [0, 2, 1, 4, 3, 5]
      : (!transform.any_op) -> !transform.any_op
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %i tile_sizes [%one, %tnp, %tm]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
     -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_amx_fuse_init failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.annotate %t0 "cuvil.amx" : !transform.any_op
    transform.yield
  }

  // A batched VNNI contraction of static sizes: the dot-product schedule
  // tiles it inside its own kernel function (cuvil-outline-kernels leaves
  // dynamic ops in `main`, where one product's function-wide vector passes
  // would rewrite the next one under its handle; a dynamic one runs as loops).
  transform.named_sequence @cuvil_match_static_vnni_bmm(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_vnni_bmm failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      %d0 = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %d1 = transform.match.structured.dim %s[1] : (!transform.any_op) -> !transform.param<i64>
      %d2 = transform.match.structured.dim %s[2] : (!transform.any_op) -> !transform.param<i64>
      %d3 = transform.match.structured.dim %s[3] : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d0, %one : !transform.param<i64>
      transform.match.param.cmpi ge %d1, %one : !transform.param<i64>
      transform.match.param.cmpi ge %d2, %one : !transform.param<i64>
      transform.match.param.cmpi ge %d3, %one : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Attention's batched bf16 products and Winograd's bf16 batch matmuls on
  // the dot-product kernel (hosts with AVX512-BF16 and no AMX-BF16;
  // pack_cpu's @cuvil_pack_bf16_bmms packed them, @cuvil_match_vnni_bmm):
  // forall tiles of one batch x DOT_TNP panels x DOT_TM rows (loops
  // interchanged to [b, n/64, m, 64, k/2, 2]), the zero fill fused;
  // fold_unit_batch then makes each tile the rank-5 contraction
  // [n/64, m, 64, k/2, 2] of one batch, scheduled as a matmul's.
  transform.named_sequence @cuvil_vnni_bmm_cpu(%op: !transform.any_op {transform.consumed},
      %vnni: !transform.param<i64> {transform.readonly}, %tnp: !transform.param<i64> {transform.readonly},
      %tm: !transform.param<i64> {transform.readonly}, %tk2: !transform.param<i64> {transform.readonly},
      %rm: !transform.param<i64> {transform.readonly}) {
    %i = transform.structured.interchange %op iterator_interchange = [0, 2, 1, 4, 3, 5]
      : (!transform.any_op) -> !transform.any_op
    %one = transform.param.constant 1 : i64 -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %i tile_sizes [%one, %tnp, %tm]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
     -> (!transform.any_op, !transform.any_op)
    // The fill of C[b][m][n/64][64], one row of one batch at a time.
    transform.sequence %forall : !transform.any_op failures(suppress) {
    ^bb0(%fa: !transform.any_op):
      %init = transform.get_producer_of_operand %fa[0] : (!transform.any_op) -> !transform.any_op
      transform.foreach %init : !transform.any_op {
      ^bb1(%f: !transform.any_op):
        transform.match.operation_name %f ["linalg.fill"] : !transform.any_op
        %ff, %fa2 = transform.structured.fuse_into_containing_op %f into %fa
          : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
        %ffr, %fl0, %fl1, %fl2 = transform.structured.tile_using_for %ff tile_sizes [1, 1, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
        transform.structured.vectorize %ffr vector_sizes [1, 1, 1, 64] : !transform.any_op
      }
    }
    transform.apply_patterns to %forall {
      transform.apply_patterns.cuvil.fold_unit_batch
    } : !transform.any_op
    %t1 = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_vnni_register_tiles failures(propagate) (%t1, %forall, %vnni, %tk2, %rm)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }

  // Entry points on AMX hosts, before @__transform_main (which then finds
  // only the VNNI matmuls of the other type): bf16 on AMX-BF16, int8 on
  // AMX-INT8.
  transform.named_sequence @cuvil_amx_bf16(%root: !transform.any_op {transform.readonly}) {
    %tnp = transform.param.constant 1 : i64 -> !transform.param<i64>
    %tm = transform.param.constant 128 : i64 -> !transform.param<i64>
    transform.include @cuvil_amx_bf16_schedule failures(propagate) (%root, %tnp, %tm)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_amx_bf16_schedule(%root: !transform.any_op {transform.readonly},
      %tnp: !transform.param<i64> {transform.readonly, cuvil.param = "AMX_TNP"},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "AMX_TM"}) {
    %mms = transform.collect_matching @cuvil_match_vnni_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_amx_matmul_cpu failures(propagate) (%m, %tnp, %tm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %bmms = transform.collect_matching @cuvil_match_static_vnni_bmm in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_amx_bmm_cpu failures(propagate) (%m, %tnp, %tm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  transform.named_sequence @cuvil_amx_int8(%root: !transform.any_op {transform.readonly}) {
    %tnp = transform.param.constant 4 : i64 -> !transform.param<i64>
    %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
    transform.include @cuvil_amx_int8_schedule failures(propagate) (%root, %tnp, %tm)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_amx_int8_schedule(%root: !transform.any_op {transform.readonly},
      %tnp: !transform.param<i64> {transform.readonly, cuvil.param = "AMX_TNP"},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "AMX_TM"}) {
    %mms = transform.collect_matching @cuvil_match_vnni_int8_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_amx_matmul_cpu failures(propagate) (%m, %tnp, %tm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    // Its rows are whole 64-row tiles (cuvil-im2col-conv rounds them up to
    // kShiftedRowsTile), which cuvil-amx-matmul needs (static, whole 16-row
    // tiles): 64 rows whatever AMX_TM says.
    %convs = transform.collect_matching @cuvil_match_int8_shifted_rows in %root : (!transform.any_op) -> !transform.any_op
    %rows = transform.param.constant 64 : i64 -> !transform.param<i64>
    transform.foreach %convs : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.include @cuvil_amx_shifted_rows failures(propagate) (%c, %tnp, %rows)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }

  // An int8 conv as one contraction over shifted rows of its padded input
  // (cuvil-im2col-conv{int8-shifted-rows}): rank 7, loops
  // [n/64, q, 64, kh, kw, c/4, 4], A's rows q + kh*WP + kw, 8-bit x 8-bit ->
  // i32 (signed x signed on AMX-INT8 hosts; u8 x s8 elsewhere, after
  // cuvil-unsigned-int8-lhs{shifted-rows}).
  transform.named_sequence @cuvil_match_int8_shifted_rows(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %seven = transform.param.constant 7 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %seven : !transform.param<i64>
      %ni = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %ni, %two : !transform.param<i64>
      transform.match.structured.dim %s[0, 1, 2] {parallel} : !transform.any_op
      transform.match.structured.dim %s[3, 4, 5, 6] {reduction} : !transform.any_op
      %j = transform.match.structured.dim %s[2] : (!transform.any_op) -> !transform.param<i64>
      %v = transform.match.structured.dim %s[6] : (!transform.any_op) -> !transform.param<i64>
      %c64 = transform.param.constant 64 : i64 -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %j, %c64 : !transform.param<i64>
      transform.match.param.cmpi eq %v, %four : !transform.param<i64>
      transform.match.structured.body %s {contraction = ["arith.muli", "arith.addi"]} : !transform.any_op
      %a = transform.match.structured.input %s[0] : (!transform.any_op) -> !transform.any_value
      %b = transform.match.structured.input %s[1] : (!transform.any_op) -> !transform.any_value
      %c = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %wa = transform.match.structured.elemental_bitwidth %a : (!transform.any_value) -> !transform.param<i64>
      %wb = transform.match.structured.elemental_bitwidth %b : (!transform.any_value) -> !transform.param<i64>
      %wc = transform.match.structured.elemental_bitwidth %c : (!transform.any_value) -> !transform.param<i64>
      %c8 = transform.param.constant 8 : i64 -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %wa, %c8 : !transform.param<i64>
      transform.match.param.cmpi eq %wb, %c8 : !transform.param<i64>
      transform.match.param.cmpi eq %wc, %c32 : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Its forall tiles, as a matmul's (already in the loop order
  // cuvil-amx-matmul reads): AMX_TNP panels x `%tm` rows of the padded-width
  // output (64: see @cuvil_amx_int8_schedule), each reading the rows of the
  // input its taps shift to.
  transform.named_sequence @cuvil_amx_shifted_rows(%op: !transform.any_op {transform.consumed},
      %tnp: !transform.param<i64> {transform.readonly}, %tm: !transform.param<i64> {transform.readonly}) {
    %t0, %forall = transform.structured.tile_using_forall %op tile_sizes [%tnp, %tm]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_amx_fuse_init failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.annotate %t0 "cuvil.amx" : !transform.any_op
    transform.yield
  }

  // Schedules one VNNI matmul (see the header).
  transform.named_sequence @cuvil_vnni_matmul_cpu(
      %op: !transform.any_op {transform.consumed}, %vnni: !transform.param<i64> {transform.readonly},
      %tnp: !transform.param<i64> {transform.readonly}, %tm: !transform.param<i64> {transform.readonly},
      %tk2: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly}) {
    %i = transform.structured.interchange %op iterator_interchange = [1, 0, 3, 2, 4]
      : (!transform.any_op) -> !transform.any_op
    // Rows spread evenly over the tiles, an even number of tiles (see the header).
    %tmb = transform.cuvil.balanced_row_tile %i tiles %tnp, %tm multiple %rm
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %i tile_sizes [%tnp, %tmb]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_vnni_fuse_init failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.include @cuvil_vnni_register_tiles failures(propagate) (%t0, %forall, %vnni, %tk2, %rm)
      : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }

  // Steps 2-5 of the header on the forall tile `%t0` (rank 5, loops
  // [n/64, m, 64, k/v, v]) of `%forall`: K blocks, register tiles with
  // the rows peeled, 1 x 16 dot tiles, the vector kernel.
  transform.named_sequence @cuvil_vnni_register_tiles(%t0: !transform.any_op {transform.consumed},
      %forall: !transform.any_op {transform.readonly}, %vnni: !transform.param<i64> {transform.readonly},
      %tk2: !transform.param<i64> {transform.readonly}, %rm: !transform.param<i64> {transform.readonly}) {
    %t1, %lk = transform.structured.tile_using_for %t0 tile_sizes [0, 0, 0, %tk2]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    %t2, %l0, %l1 = transform.structured.tile_using_for %t1 tile_sizes [1, %rm]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // The rows left over (M mod DOT_RM) one at a time, each over the whole
    // K block: their 4 accumulators then stay in registers across the k
    // loop like a full tile's. (Tiled [rows, k] as one tile, the rows' loop
    // sat inside the k loop and their accumulators went to memory on every
    // k quad. A 4608 -> 512 int8 layer, Zen 5, 1 thread, whole calls
    // interleaved: its 49th row cost 12 us against 6 us a row for the first
    // 48; one at a time, 8 us.)
    transform.sequence %l1 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      transform.foreach %rem : !transform.any_op {   // (none when DOT_RM divides M)
      ^bb1(%x: !transform.any_op):
        %r = transform.structured.match ops{["linalg.generic"]} in %x : (!transform.any_op) -> !transform.any_op
        %r1, %lr = transform.structured.tile_using_for %r tile_sizes [0, 1]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
      }
    }
    // Constant bounds for the full tiles' row loops (peeling leaves
    // affine.min / affine.apply of constants).
    transform.apply_patterns to %forall {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // One k quad (pair) per step.
    %blocks = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.foreach %blocks : !transform.any_op {
    ^bb0(%b: !transform.any_op):
      %b1, %lq = transform.structured.tile_using_for %b tile_sizes [0, 0, 0, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %tiles = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%k: !transform.any_op):
      transform.include @cuvil_vnni_split_tile failures(propagate) (%k, %rm) : (!transform.any_op, !transform.param<i64>) -> ()
    }
    transform.include @cuvil_vnni_vector_kernel failures(propagate) (%forall, %vnni)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }

  // Steps 4 and 5 of the header on a forall tile whose linalg.generic ops
  // are 1 x 16 register tiles of the rank-5 VNNI contraction (loops
  // [n/64, m, 64, k/v, v]): vectorized, as vpdpbf16ps / vpdpbusd, the
  // accumulators hoisted out of the loops around them. The hoisting passes
  // consume the enclosing function's handle, which invalidates the caller's
  // handles to anything in it (%forall included).
  transform.named_sequence @cuvil_vnni_vector_kernel(%forall: !transform.any_op {transform.readonly},
      %vnni: !transform.param<i64> {transform.readonly}) {
    %kernels = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %kernels vector_sizes [1, 1, 16, 1, %vnni] : !transform.any_op, !transform.param<i64>
    transform.apply_patterns to %forall {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.fold_arith_extension
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    // int8: the lhs is zero-extended, the rhs sign-extended, so the
    // extensions do not fold into the contraction (bf16's have by now: there
    // is nothing left to sink); moved in front of the broadcasts of the
    // reads, the broadcasts fold into its indexing maps.
    transform.apply_patterns to %forall {
      transform.apply_patterns.vector.sink_ops
    } : !transform.any_op
    transform.apply_patterns to %forall {
      transform.apply_patterns.vector.reduction_to_contract
    } : !transform.any_op
    transform.apply_patterns to %forall {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %forall : !transform.any_op
    transform.apply_patterns to %forall {
      transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product
      transform.apply_patterns.cuvil.vector_contract_to_u8s8_dot
    } : !transform.any_op
    // B's 1 x 16 x 2 rows as one 64-byte read (an n-D read is lowered to one
    // 4-byte load per innermost row otherwise).
    transform.apply_patterns to %forall {
      transform.apply_patterns.cuvil.flatten_tensor_transfer_reads
    } : !transform.any_op
    // The accumulators out of the k loop (a pass: on the enclosing function).
    // The first run hoists the 1 x 16 tensor slices of C, the second (once
    // canonicalization has dropped the loop's pass-through iter_args) the
    // vector reads / writes of those slices: iter_args in zmm registers. The
    // function's other ops are still linalg ops here (this script runs first).
    %func = transform.get_parent_op %forall {op_name = "func.func"} : (!transform.any_op) -> !transform.any_op
    %f2 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %func
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f2 : !transform.any_op
    %f3 = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f2
      : (!transform.any_op) -> !transform.any_op
    // Step 5 of the header: without it, one heap buffer per accumulator.
    transform.apply_patterns to %f3 {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    transform.yield
  }

  // An int8 conv over shifted rows that no AMX schedule took (hosts with
  // vpdpbusd and no AMX-INT8): one directly in its kernel function, not in
  // an AMX forall tile. (Were a signed x signed one, an AMX host's, taken
  // here, its contractions would keep their extsi lhs, which
  // vector_contract_to_u8s8_dot does not rewrite: generic vector code,
  // slow but exact.)
  transform.named_sequence @cuvil_match_vnni_shifted_rows(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    %parent = transform.get_parent_op %op : (!transform.any_op) -> !transform.any_op
    transform.match.operation_name %parent ["func.func"] : !transform.any_op
    transform.include @cuvil_match_int8_shifted_rows failures(propagate) (%op)
      : (!transform.any_op) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // The int8 conv over shifted rows on the dot-product kernel: forall tiles
  // of DOT_TNP panels x 64 rows of the padded-width output (cuvil-im2col-conv
  // rounds the rows up to whole 64-row tiles) with the init fused; in each,
  // register tiles of one panel x DOT_RM rows, and inside a register tile the
  // taps (kh, kw) and then the k quads, so that its accumulators stay in
  // registers over the whole window (no im2col matrix: a tap reads DOT_RM
  // consecutive pixels of the padded input, shifted by kh * WP + kw).
  // fold_shifted_rows_taps makes each one-tap tile the rank-5 contraction
  // that @cuvil_vnni_vector_kernel takes.
  transform.named_sequence @cuvil_vnni_shifted_rows(%op: !transform.any_op {transform.consumed},
      %vnni: !transform.param<i64> {transform.readonly}, %tnp: !transform.param<i64> {transform.readonly},
      %rm: !transform.param<i64> {transform.readonly}) {
    %rows = transform.param.constant 64 : i64 -> !transform.param<i64>
    %t0, %forall = transform.structured.tile_using_forall %op tile_sizes [%tnp, %rows]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.include @cuvil_vnni_fuse_init failures(propagate) (%forall) : (!transform.any_op) -> ()
    %t1, %l0, %l1, %lkh, %lkw, %lk = transform.structured.tile_using_for %t0 tile_sizes [1, %rm, 0, 1, 1, 1]
      : (!transform.any_op, !transform.param<i64>)
     -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op,
         !transform.any_op)
    transform.sequence %l1 : !transform.any_op failures(suppress) {
    ^bb0(%l: !transform.any_op):
      %lc = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
      %main, %rem = transform.loop.peel %lc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    }
    transform.apply_patterns to %forall {
      transform.apply_patterns.cuvil.fold_shifted_rows_taps
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match ops{["linalg.generic"]} in %forall : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {
    ^bb0(%k: !transform.any_op):
      transform.include @cuvil_vnni_split_tile failures(propagate) (%k, %rm) : (!transform.any_op, !transform.param<i64>) -> ()
    }
    transform.include @cuvil_vnni_vector_kernel failures(propagate) (%forall, %vnni)
      : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }

  // Entry point: the schedule with its default parameters.
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %tnp = transform.param.constant 4 : i64 -> !transform.param<i64>
    %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
    %tk2 = transform.param.constant 1024 : i64 -> !transform.param<i64>
    %rm = transform.param.constant 4 : i64 -> !transform.param<i64>
    transform.include @cuvil_matmul_dot_cpu_schedule failures(propagate) (%root, %tnp, %tm, %tk2, %rm)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.yield
  }

  // The schedule; `cuvil.param` names the parameters for cuvil.transform.apply.
  transform.named_sequence @cuvil_matmul_dot_cpu_schedule(%root: !transform.any_op {transform.readonly},
      %tnp: !transform.param<i64> {transform.readonly, cuvil.param = "DOT_TNP"},
      %tm: !transform.param<i64> {transform.readonly, cuvil.param = "DOT_TM"},
      %tk2: !transform.param<i64> {transform.readonly, cuvil.param = "DOT_TK2"},
      %rm: !transform.param<i64> {transform.readonly, cuvil.param = "DOT_RM"}) {
    %two = transform.param.constant 2 : i64 -> !transform.param<i64>
    %four = transform.param.constant 4 : i64 -> !transform.param<i64>
    %mms = transform.collect_matching @cuvil_match_vnni_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_vnni_matmul_cpu failures(propagate) (%m, %two, %tnp, %tm, %tk2, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %imms = transform.collect_matching @cuvil_match_vnni_int8_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %imms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_vnni_matmul_cpu failures(propagate) (%m, %four, %tnp, %tm, %tk2, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %bmms = transform.collect_matching @cuvil_match_static_vnni_bmm in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmms : !transform.any_op {
    ^bb0(%m: !transform.any_op):
      transform.include @cuvil_vnni_bmm_cpu failures(propagate) (%m, %two, %tnp, %tm, %tk2, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
           !transform.param<i64>, !transform.param<i64>) -> ()
    }
    %convs = transform.collect_matching @cuvil_match_vnni_shifted_rows in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %convs : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.include @cuvil_vnni_shifted_rows failures(propagate) (%c, %four, %tnp, %rm)
        : (!transform.any_op, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>) -> ()
    }
    transform.yield
  }
}
