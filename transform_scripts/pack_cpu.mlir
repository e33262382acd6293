// =============================================================================
// Cuvil: pack the rhs (B) of every linalg.matmul into column panels,
// B[K][N] -> Bp[ceil(N/64)][K][64] (zero-padded), before cuvil-split-prepack.
//
// Entry point: @cuvil_pack_matmul_rhs. It runs inside RAISE_PIPELINE
// (python/cuvil/raising.py, via transform-preload-library +
// transform-interpreter), not as a schedule: it must run before
// cuvil-split-prepack so that packing a weight (or W^T) is weight-only work
// hoisted into the run-once @main_prepack.
//
// Why: the matmul_cpu register kernel reads one 64-wide row chunk of B per k
// step. In the row-major B those rows are N*4 bytes apart (12 KiB for
// N = 3072, 16 KiB for N = 4096: the same L1 sets and a new page per row); in
// a panel they are 256 bytes apart. Measured on the Zen 4 VM, 1 thread, with
// matmul_cpu's packed schedule: 128x768x3072 83 -> 92 GFLOP/s, 128x3072x768
// 85 -> 100, 64x1024x4096 82 -> 95, 64x4096x1024 79 -> 97.
//
// What it does to each linalg.matmul with static M >= 16 or M < 4 (a decode
// step's vector x matrix) and N >= 128 (others, and dynamic ones, are left
// to matmul_cpu's plain schedule):
//   transform.structured.pack packed_sizes = [0, 64, 0] packs B and C along N;
//   pack_transpose puts B's panel index outermost ([N/64][K][64]); the B pack
//   is lowered to (tensor.pad +) tensor.expand_shape + linalg.transpose
//   (weight-only when B is a weight: hoisted by cuvil-split-prepack), the C
//   pack/unpack to expand_shape / collapse_shape (+ extract_slice when N was
//   padded), i.e. no data movement for C. The result is a rank-4
//   linalg.generic contraction with loops [m, n/64, k, 64], which matmul_cpu
//   schedules (@cuvil_packed_matmul_cpu).
// =============================================================================
module attributes {transform.with_named_sequence} {

  // A linalg.matmul with static M >= 16 and N >= 128.
  transform.named_sequence @cuvil_match_packable_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %n = transform.match.structured.dim %s[1] : (!transform.any_op) -> !transform.param<i64>
      %min_m = transform.param.constant 16 : i64 -> !transform.param<i64>
      %min_n = transform.param.constant 128 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %min_m : !transform.param<i64>
      transform.match.param.cmpi ge %n, %min_n : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // A linalg.matmul of 1 to 3 rows (a decode step: vector x matrix) with
  // static N >= 128. Packed too: its B is then one contiguous stream per
  // panel (K x 256 bytes), where row-major B is read 256 bytes a row, each
  // row in another page (no hardware prefetch across them). Measured on
  // the Zen 4 VM, 1 thread, MLP 1024-4096-4096-1024 at batch 1 (100 MB of
  // fp32 weights), with matmul_cpu.mlir's few-rows tile: fp32 9.2 -> 4.1 ms,
  // int8 weights (cuvil.weight_only) 4.4 -> 1.3 ms; benchmarks/int8.py has the decode rows.
  transform.named_sequence @cuvil_match_packable_gemv(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %n = transform.match.structured.dim %s[1] : (!transform.any_op) -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      %min_n = transform.param.constant 128 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %one : !transform.param<i64>
      transform.match.param.cmpi lt %m, %four : !transform.param<i64>
      transform.match.param.cmpi ge %n, %min_n : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_pack_rhs(%mm: !transform.any_op {transform.consumed}) {
    %p = transform.structured.pack %mm packed_sizes = [0, 64, 0] : (!transform.any_op) -> !transform.op<"linalg.generic">
    %pb = transform.get_producer_of_operand %p[1] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %p2, %pb2, %un = transform.structured.pack_transpose %pb with_compute_op(%p) outer_perm = [1, 0]
      : (!transform.op<"linalg.pack">, !transform.op<"linalg.generic">)
     -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.any_op)
    %pc = transform.get_producer_of_operand %p2[2] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %uc = transform.get_consumers_of_result %p2[0] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.unpack">
    %pad, %ex, %tr = transform.structured.lower_pack %pb2
      : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %pad2, %ex2, %tr2 = transform.structured.lower_pack %pc
      : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %e, %t, %cs, %sl = transform.structured.lower_unpack %uc
      : (!transform.op<"linalg.unpack">) -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">,
                                             !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
    // lower_unpack copies into the unpack's destination: as a linalg.generic
    // that copy is an identity on tensors, and canonicalization erases it.
    %copies = transform.get_consumers_of_result %sl[0] : (!transform.op<"tensor.extract_slice">) -> !transform.any_op
    transform.foreach %copies : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.sequence %c : !transform.any_op failures(suppress) {
      ^bb1(%cc: !transform.any_op):
        transform.match.operation_name %cc ["linalg.copy"] : !transform.any_op
        %g = transform.structured.generalize %cc : (!transform.any_op) -> !transform.any_op
      }
    }
    transform.yield
  }

  // --- dot-product hosts: VNNI panels -------------------------------------
  // A linalg.matmul with static M and N >= 64: on the dot-product kernels
  // one 64-column panel already pays (the plain kernel multiplies bf16
  // operands converted to f32, half of vdpbf16ps's products per
  // instruction, and int8 ones sign-extended to i32, a quarter of
  // vpdpbusd's), e.g. the 64-channel convolutions of a ResNet's first stage
  // and its stem; and so do a few rows, M >= `min_m` (the register kernel
  // runs the rows that do not fill a DOT_RM tile one at a time, their
  // accumulators in registers). With M >= 16 only, as first written, a few
  // rows fell to the plain kernels. 1024-1024-1024 MLP, Zen 5, 1 thread, all
  // kernels of a call, plain -> dot: int8 M = 1 / 3 / 8 / 15 0.080 / 0.155 /
  // 0.357 / 0.74 ms -> 0.053 / 0.074 / 0.083 / 0.153 ms (M = 16: 0.12);
  // bf16 M = 8 / 15 0.25 / 0.51 -> 0.15 / 0.26 ms, but M = 1..3 no faster
  // (0.09-0.15 ms either way: the f32 gemv of pack_cpu's few-rows tile
  // streams the bf16 weights as well), so bf16 takes min_m = 4.
  transform.named_sequence @cuvil_match_packable_dot_matmul(%op: !transform.any_op {transform.readonly},
      %min_m: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %n = transform.match.structured.dim %s[1] : (!transform.any_op) -> !transform.param<i64>
      %min_n = transform.param.constant 64 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %min_m : !transform.param<i64>
      transform.match.param.cmpi ge %n, %min_n : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // M >= 16 too: AMX's tiles (16 rows each) take whole tile rows.
  transform.named_sequence @cuvil_match_amx_rows(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %m = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %min_m = transform.param.constant 16 : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %m, %min_m : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // bf16 (AVX512-BF16 hosts), for vdpbf16ps: 16-bit operands and a 32-bit
  // result, bf16 x bf16 -> f32 (the bit width is all a matcher can see: the
  // pipeline does not run these entries for precision="fp16", whose
  // f16 x f16 -> f32 contractions have no dot-product kernel).
  transform.named_sequence @cuvil_match_packable_bf16_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
    %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
    %min_m = transform.param.constant 4 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_packable_dot_matmul failures(propagate) (%op, %min_m)
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.include @cuvil_match_operand_widths failures(propagate) (%op, %c16, %c32)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // int8 (AVX512-VNNI hosts), for vpdpbusd: int8 x int8 -> int32.
  transform.named_sequence @cuvil_match_packable_int8_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    %c8 = transform.param.constant 8 : i64 -> !transform.param<i64>
    %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
    %min_m = transform.param.constant 1 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_packable_dot_matmul failures(propagate) (%op, %min_m)
      : (!transform.any_op, !transform.param<i64>) -> !transform.any_op
    transform.include @cuvil_match_operand_widths failures(propagate) (%op, %c8, %c32)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_match_packable_bf16_amx_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_packable_bf16_matmul failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_match_amx_rows failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_match_packable_int8_amx_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_packable_int8_matmul failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_match_amx_rows failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // A contraction whose operands have `in` bits and whose result has `out`.
  transform.named_sequence @cuvil_match_operand_widths(%op: !transform.any_op {transform.readonly},
      %in: !transform.param<i64> {transform.readonly}, %out: !transform.param<i64> {transform.readonly})
      -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %a = transform.match.structured.input %s[0] : (!transform.any_op) -> !transform.any_value
      %b = transform.match.structured.input %s[1] : (!transform.any_op) -> !transform.any_value
      %c = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %wa = transform.match.structured.elemental_bitwidth %a : (!transform.any_value) -> !transform.param<i64>
      %wb = transform.match.structured.elemental_bitwidth %b : (!transform.any_value) -> !transform.param<i64>
      %wc = transform.match.structured.elemental_bitwidth %c : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %wa, %in : !transform.param<i64>
      transform.match.param.cmpi eq %wb, %in : !transform.param<i64>
      transform.match.param.cmpi eq %wc, %out : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // C[m][n] += A[m][k] * B[k][n] (bf16 x bf16 -> f32) ->
  //   C[m][n/64][64] += A[m][k/2][2] * Bv[n/64][k/2][64][2]
  // (loops [m, n/64, k/2, 64, 2]): the layout of vdpbf16ps, which multiplies
  // a pair of consecutive-k bf16 values of A (one 32-bit broadcast) by the
  // pairs of 16 columns of B (one 64-byte load) and adds both products into
  // 16 f32 lanes. packed_sizes [0, 64, 2] packs B along n by 64 and k by 2
  // with the k pair innermost; pack_transpose puts the panel index first, so
  // one panel is K/2 x 128 bytes, contiguous. B's pack is weight-only for a
  // weight (hoisted by cuvil-split-prepack). A's pack is a free
  // expand_shape when K is even; odd K pads both A and B with a zero k row
  // (zero products), which copies A on every call. C only changes shape, as in
  // @cuvil_pack_rhs.
  transform.named_sequence @cuvil_pack_rhs_vnni(%mm: !transform.any_op {transform.consumed}) {
    %p = transform.structured.pack %mm packed_sizes = [0, 64, 2] : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.include @cuvil_vnni_panels failures(propagate) (%p) : (!transform.op<"linalg.generic">) -> ()
    transform.yield
  }

  // The same for int8 x int8 -> int32 matmuls with k quads:
  //   C[m][n/64][64] += A[m][k/4][4] * Bv[n/64][k/4][64][4]
  // the layout of vpdpbusd (4 consecutive-k bytes of A, one 32-bit
  // broadcast, times the quads of 16 columns of B, one 64-byte load, summed
  // into 16 i32 lanes). K not a multiple of 4 pads A and B with zero k rows.
  transform.named_sequence @cuvil_pack_rhs_vnni4(%mm: !transform.any_op {transform.consumed}) {
    %p = transform.structured.pack %mm packed_sizes = [0, 64, 4] : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.include @cuvil_vnni_panels failures(propagate) (%p) : (!transform.op<"linalg.generic">) -> ()
    transform.yield
  }

  // --- AMX hosts: K in whole tile rows --------------------------------------
  // cuvil-amx-matmul reads A where it is only when K is whole 64-byte tile
  // rows (32 bf16 / 64 int8 values); other K (a ResNet stem's 7x7x3 = 147)
  // made it copy A into a zero-padded buffer in every scf.forall tile, and
  // B's last k groups into a zero-padded tile per panel. Padding K with zero
  // k rows before the packing moves that copy of A into one pad per call (as
  // the pad to whole k pairs / quads already was) and B's into main_prepack;
  // the tiles compute the same products as before. (No padding_values: the
  // pad is the zero of each operand's type, bf16 or the f16 of an fp16
  // model, which the 16-bit matcher takes too.) Measured, int8
  // ResNet-18 (stem 12544x147x64), Xeon model 167, alternating processes,
  // 6 rounds: the stem's kernel 0.44 -> 0.32 ms, the model 0.94..0.98x the
  // time at 1 thread (min..median), 0.91..1.00x at 2.
  transform.named_sequence @cuvil_pack_rhs_vnni_tiles(%mm: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %mm pad_to_multiple_of [32] {
        padding_dimensions = [2], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @cuvil_pack_rhs_vnni failures(propagate) (%padded) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_rhs_vnni4_tiles(%mm: !transform.any_op {transform.consumed}) {
    %padded, %pad, %copy = transform.structured.pad %mm pad_to_multiple_of [64] {
        padding_dimensions = [2], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @cuvil_pack_rhs_vnni4 failures(propagate) (%padded) : (!transform.any_op) -> ()
    transform.yield
  }

  // A packed matmul's B panel index outermost, and the packs lowered.
  transform.named_sequence @cuvil_vnni_panels(%p: !transform.op<"linalg.generic"> {transform.consumed}) {
    %pb = transform.get_producer_of_operand %p[1] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %p2, %pb2, %un = transform.structured.pack_transpose %pb with_compute_op(%p) outer_perm = [1, 0]
      : (!transform.op<"linalg.pack">, !transform.op<"linalg.generic">)
     -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.any_op)
    transform.include @cuvil_lower_vnni_packs failures(propagate) (%p2, %pb2)
      : (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">) -> ()
    transform.yield
  }

  // --- bf16 batched products ----------------------------------------------
  // Attention's q.k^T and p.v after cuvil-narrow-contraction-operands{
  // batched-contractions} (set on hosts with AMX-BF16 or AVX512-BF16): a
  // rank-4 linalg.generic,
  // loops [b, m, k, n] (cuvil-lower-to-linalg's batched cuvil.matmul) or
  // [b, m, n, k], bf16 x bf16 -> f32. Packed per batch as the matmuls are:
  //   C[b][m][n/64][64] += A[b][m][k/2][2] * Bv[b][n/64][k/2][64][2]
  // (loops [b, m, n/64, k/2, 64, 2]), which matmul_dot_cpu's @cuvil_amx_bf16
  // tiles one batch at a time for cuvil-amx-matmul, or (no AMX) its
  // @cuvil_vnni_bmm_cpu for vdpbf16ps. B is an activation here
  // (k^T, v), so its pack (a transpose of 32-bit k pairs for k^T, an
  // interleave of row pairs for v: 16 KB per head for BERT) runs on every
  // call, in main; A's is an expand_shape (k even), C's a reshape.
  // Four loops of static sizes.
  transform.named_sequence @cuvil_match_static_rank4(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %four : !transform.param<i64>
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

  transform.named_sequence @cuvil_match_bf16_bmm(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %r = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %four = transform.param.constant 4 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %r, %four : !transform.param<i64>
      %b, %m, %n, %k = transform.match.structured.classify_contraction_dims %s
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>, !transform.param<i64>)
      %zero = transform.param.constant 0 : i64 -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %b, %zero : !transform.param<i64>
      transform.match.param.cmpi eq %m, %one : !transform.param<i64>
      transform.match.structured.body %s {contraction = ["arith.mulf", "arith.addf"]} : !transform.any_op
      transform.match.structured.yield
    }
    %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
    %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_operand_widths failures(propagate) (%op, %c16, %c32)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  // Loops [b, m, k, n] (k is loop 2): interchanged to [b, m, n, k] first.
  transform.named_sequence @cuvil_match_bf16_bmkn(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bf16_bmm failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[2] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_match_bf16_bmnk(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.include @cuvil_match_bf16_bmm failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      transform.match.structured.dim %s[3] {reduction} : !transform.any_op
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // One [b, m, n, k] product: packed_sizes [0, 0, 64, 2] packs B along n by
  // 64 and k by 2 (k pair innermost), C along n, A along k; pack_transpose
  // puts B's panel index after the batch ([b][n/64][k/2][64][2]).
  transform.named_sequence @cuvil_pack_bmm_vnni(%op: !transform.any_op {transform.consumed}) {
    %p = transform.structured.pack %op packed_sizes = [0, 0, 64, 2] : (!transform.any_op) -> !transform.op<"linalg.generic">
    %pb = transform.get_producer_of_operand %p[1] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %p2, %pb2, %un = transform.structured.pack_transpose %pb with_compute_op(%p) outer_perm = [0, 2, 1]
      : (!transform.op<"linalg.pack">, !transform.op<"linalg.generic">)
     -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.any_op)
    transform.include @cuvil_lower_vnni_packs failures(propagate) (%p2, %pb2)
      : (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">) -> ()
    transform.yield
  }

  // A linalg.batch_matmul with bf16 operands and an f32 result: the products
  // of cuvil-winograd-conv's transformed tiles and filters, narrowed by
  // precision="bf16" (B is weight-only: its pack runs once, in
  // main_prepack). Generalized, it is a [b, m, n, k] product as above.
  transform.named_sequence @cuvil_match_bf16_batch_matmul(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.batch_matmul"] : !transform.any_op
    transform.include @cuvil_match_static_rank4 failures(propagate) (%op) : (!transform.any_op) -> !transform.any_op
    %c16 = transform.param.constant 16 : i64 -> !transform.param<i64>
    %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
    transform.include @cuvil_match_operand_widths failures(propagate) (%op, %c16, %c32)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> !transform.any_op
    transform.yield %op : !transform.any_op
  }

  transform.named_sequence @cuvil_pack_bf16_bmms(%root: !transform.any_op {transform.readonly}) {
    %named = transform.collect_matching @cuvil_match_bf16_batch_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %named : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.sequence %op : !transform.any_op failures(suppress) {
      ^bb1(%o: !transform.any_op):
        %g = transform.structured.generalize %o : (!transform.any_op) -> !transform.any_op
        transform.include @cuvil_pack_bmm_vnni failures(propagate) (%g) : (!transform.any_op) -> ()
      }
    }
    %bmkn = transform.collect_matching @cuvil_match_bf16_bmkn in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmkn : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.sequence %op : !transform.any_op failures(suppress) {
      ^bb1(%o: !transform.any_op):
        %i = transform.structured.interchange %o iterator_interchange = [0, 1, 3, 2]
          : (!transform.any_op) -> !transform.any_op
        transform.include @cuvil_pack_bmm_vnni failures(propagate) (%i) : (!transform.any_op) -> ()
      }
    }
    %bmnk = transform.collect_matching @cuvil_match_bf16_bmnk in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmnk : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.sequence %op : !transform.any_op failures(suppress) {
      ^bb1(%o: !transform.any_op):
        transform.include @cuvil_pack_bmm_vnni failures(propagate) (%o) : (!transform.any_op) -> ()
      }
    }
    transform.yield
  }

  // The packs around a packed contraction `p2` (B's already transposed to
  // panels, `pb2`) lowered to pads, reshapes and transposes.
  transform.named_sequence @cuvil_lower_vnni_packs(%p2: !transform.op<"linalg.generic"> {transform.readonly},
      %pb2: !transform.op<"linalg.pack"> {transform.consumed}) {
    %pa = transform.get_producer_of_operand %p2[0] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %pc = transform.get_producer_of_operand %p2[2] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.pack">
    %uc = transform.get_consumers_of_result %p2[0] : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.unpack">
    %pad0, %ex0, %tr0 = transform.structured.lower_pack %pa
      : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %pad, %ex, %tr = transform.structured.lower_pack %pb2
      : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %pad2, %ex2, %tr2 = transform.structured.lower_pack %pc
      : (!transform.op<"linalg.pack">) -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %e, %t, %cs, %sl = transform.structured.lower_unpack %uc
      : (!transform.op<"linalg.unpack">) -> (!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">,
                                             !transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">)
    %copies = transform.get_consumers_of_result %sl[0] : (!transform.op<"tensor.extract_slice">) -> !transform.any_op
    transform.foreach %copies : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      transform.sequence %c : !transform.any_op failures(suppress) {
      ^bb1(%cc: !transform.any_op):
        transform.match.operation_name %cc ["linalg.copy"] : !transform.any_op
        %g = transform.structured.generalize %cc : (!transform.any_op) -> !transform.any_op
      }
    }
    transform.yield
  }

  // Entry points on hosts with dot-product units (matmul_dot_cpu.mlir
  // schedules the results): bf16 matmuls get VNNI pair panels where the host
  // has AVX512-BF16 (attention's bf16 batched products too, per batch),
  // int8 ones quad panels where it has AVX512-VNNI; every other matmul what
  // @cuvil_pack_matmul_rhs gives it.
  transform.named_sequence @cuvil_pack_bf16_matmuls(%root: !transform.any_op {transform.readonly}) {
    %mms = transform.collect_matching @cuvil_match_packable_bf16_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%mm: !transform.any_op):
      transform.sequence %mm : !transform.any_op failures(suppress) {
      ^bb1(%m: !transform.any_op):
        transform.include @cuvil_pack_rhs_vnni failures(propagate) (%m) : (!transform.any_op) -> ()
      }
    }
    transform.yield
  }

  transform.named_sequence @cuvil_pack_int8_matmuls(%root: !transform.any_op {transform.readonly}) {
    %mms = transform.collect_matching @cuvil_match_packable_int8_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%mm: !transform.any_op):
      transform.sequence %mm : !transform.any_op failures(suppress) {
      ^bb1(%m: !transform.any_op):
        transform.include @cuvil_pack_rhs_vnni4 failures(propagate) (%m) : (!transform.any_op) -> ()
      }
    }
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs_bf16_vnni(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_bf16_bmms failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_bf16_matmuls failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs_int8_vnni(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_int8_matmuls failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs_bf16_int8_vnni(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_bf16_bmms failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_bf16_matmuls failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_int8_matmuls failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  // The same on AMX hosts, K padded to whole tile rows first (see
  // @cuvil_pack_rhs_vnni_tiles).
  transform.named_sequence @cuvil_pack_bf16_matmuls_tiles(%root: !transform.any_op {transform.readonly}) {
    %mms = transform.collect_matching @cuvil_match_packable_bf16_amx_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%mm: !transform.any_op):
      transform.sequence %mm : !transform.any_op failures(suppress) {
      ^bb1(%m: !transform.any_op):
        transform.include @cuvil_pack_rhs_vnni_tiles failures(propagate) (%m) : (!transform.any_op) -> ()
      }
    }
    transform.yield
  }

  transform.named_sequence @cuvil_pack_int8_matmuls_tiles(%root: !transform.any_op {transform.readonly}) {
    %mms = transform.collect_matching @cuvil_match_packable_int8_amx_matmul in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%mm: !transform.any_op):
      transform.sequence %mm : !transform.any_op failures(suppress) {
      ^bb1(%m: !transform.any_op):
        transform.include @cuvil_pack_rhs_vnni4_tiles failures(propagate) (%m) : (!transform.any_op) -> ()
      }
    }
    transform.yield
  }

  // AMX-BF16 hosts: attention's bf16 products packed too (see above), and
  // the bf16 matmuls' K in whole tile rows; int8 matmuls as for vpdpbusd
  // (_int8: AMX-INT8 disabled) or in whole tile rows too (_int8_tiles).
  transform.named_sequence @cuvil_pack_matmul_rhs_amx_bf16(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_bf16_bmms failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_bf16_matmuls_tiles failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs_amx_bf16_int8(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_bf16_bmms failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_bf16_matmuls_tiles failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_int8_matmuls failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs_amx_bf16_int8_tiles(%root: !transform.any_op {transform.readonly}) {
    transform.include @cuvil_pack_bf16_bmms failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_bf16_matmuls_tiles failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_int8_matmuls_tiles failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.include @cuvil_pack_matmul_rhs failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @cuvil_pack_matmul_rhs(%root: !transform.any_op {transform.readonly}) {
    %large = transform.collect_matching @cuvil_match_packable_matmul in %root : (!transform.any_op) -> !transform.any_op
    %gemvs = transform.collect_matching @cuvil_match_packable_gemv in %root : (!transform.any_op) -> !transform.any_op
    %mms = transform.merge_handles %large, %gemvs : !transform.any_op
    transform.foreach %mms : !transform.any_op {
    ^bb0(%mm: !transform.any_op):
      // A matmul that cannot be packed (e.g. dynamic sizes) keeps its form.
      transform.sequence %mm : !transform.any_op failures(suppress) {
      ^bb1(%m: !transform.any_op):
        transform.include @cuvil_pack_rhs failures(propagate) (%m) : (!transform.any_op) -> ()
      }
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
