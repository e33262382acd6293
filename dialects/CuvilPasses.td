//===- CuvilPasses.td - Cuvil passes -----------------------*- tablegen -*-===//
#ifndef CUVIL_PASSES
#define CUVIL_PASSES

include "mlir/Pass/PassBase.td"

def CuvilStripAsserts : Pass<"cuvil-strip-asserts", "::mlir::func::FuncOp"> {
  let summary = "Erase cf.assert ops";
  let description = [{
    torch-mlir checks embedding / gather bounds and BatchNorm's "tensor with
    zero elements" with `cf.assert` ops inside linalg.generic bodies. An
    assert has a side effect, so `linalg-fuse-elementwise-ops` does not fuse
    across it (a small CNN kept 13 generics instead of 4). The price: the
    compiled code no longer checks those conditions, e.g. an out-of-range
    embedding index is not reported. Run it before the elementwise fusion.
  }];
}

def CuvilMarkWeights : Pass<"cuvil-mark-weights", "::mlir::ModuleOp"> {
  let summary = "Mark @main's non-input arguments with cuvil.weight";
  let description = [{
    Every argument of the public `func.func @main` whose `cuvil.kind` (set by
    the importer) is a string other than `"user_input"` (a parameter, a
    buffer, a constant) gets the unit attribute `cuvil.weight`: its value is
    the same on every call, so `cuvil-split-prepack` may move computations on
    it into the run-once prepack function, and the conv rewrites may treat
    their filter as known in advance. Arguments without `cuvil.kind` are left
    alone; a module without a public `@main` is unchanged. Run it before
    `cuvil-winograd-conv`, `cuvil-im2col-conv` and `cuvil-split-prepack`.
  }];
}

def CuvilLowerTMTensor : Pass<"cuvil-lower-tm-tensor", "::mlir::ModuleOp"> {
  let summary = "Lower torch-mlir's tm_tensor scatter / sort / topk / scan ops to scf loops on tensors";
  let description = [{
    torch-mlir lowers index_put / scatter / scatter_reduce, sort / argsort /
    topk and cumsum / cumprod to `tm_tensor.scatter`, `tm_tensor.sort` and
    `tm_tensor.scan`, which arrive in the tm_tensor stand-in dialect
    (generic form, unverified). Each becomes a nest of scf.for loops over
    tensors (tensor.extract / tensor.insert carried in iter_args, which
    bufferize in place) with the op's combiner region inlined:

    * scatter: one iteration per updated element, so an update costs
      O(updated elements) after the copy of the original (KV-cache updates);
      a negative index counts from the end (Python's x[-1]: torch-mlir
      passes index_put's through; eager's scatter / index_add would raise on
      one instead); an index out of range is skipped and, when it comes from the call's
      inputs, reported (`cuvil_runtime_error(2)`: the call raises
      IndexError, as eager does);
    * sort: a stable bottom-up merge sort (O(n log n)) of every line along
      the dimension through a scratch tensor (each pass copied back), all operands permuted together,
      ordered by the comparator region;
    * topk (kthvalue): every element carried down the k slots of its line
      (O(n k)), ties to the smaller index;
    * scan: one pass along the dimension, inclusive or exclusive, with the
      accumulator holding the last value.

    An op of another name, or one whose operands or properties are not as
    torch-mlir writes them, is an error naming it. Runs first in the raise
    step.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::bufferization::BufferizationDialect"];
}

def CuvilLowerToLinalg : Pass<"cuvil-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower Cuvil ops and layouts to linalg/tensor/arith/scf on tensors";
  let description = [{
    Rewrites every Cuvil op into upstream dialects on value-semantics
    tensors, dynamic dims included. Tensors with a `#cuvil.sparse_csr` or
    `#cuvil.block_masked` encoding become dense 1-D tensors of their stored
    values; ops on them iterate the stored entries only.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"
  ];
}

def CuvilRaiseLinalg : Pass<"cuvil-raise-linalg", "::mlir::func::FuncOp"> {
  let summary = "Raise recognised linalg patterns (from torch-mlir) to Cuvil ops";
  let description = [{
    Recognises linalg.matmul / linalg.batch_matmul (with a transposed
    right-hand side) and rewrites them to `cuvil.matmul`, so the schedule
    sees one op per matmul and weights can be prepacked.
  }];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

def CuvilSplitPrepack : Pass<"cuvil-split-prepack", "::mlir::ModuleOp"> {
  let summary = "Hoist computations on weights into a run-once prepack function";
  let description = [{
    For each function whose arguments carry the `cuvil.weight` unit
    attribute, ops that depend only on weights and constants (e.g. the
    transpose of an `nn.Linear` weight) move into a new function
    `@<name>_prepack(weights...) -> (packed...)`. The original function then
    takes the packed values in place of the weights they were computed from
    (weights still read directly stay as arguments), so the work runs once at
    load instead of on every call. The argument attribute
    `cuvil.packed = <index>` records which prepack result feeds each argument.
    Costly work on constants alone moves as well, in functions with or
    without weights: transcendental math or a reduction reading no input
    (a DFT's cosine / sine tables, a window), and what continues it without
    broadcasting it (a cast, a slice, a pad to whole panels). Cheap index
    arithmetic stays, and so does a broadcast of a stored table (a bias grid
    over positions), which reads the table.
    The prepack function is public, an entry point like `main`:
    `cuvil-prepare-entry-points` gives both their C interface.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def CuvilPrepareEntryPoints : Pass<"cuvil-prepare-entry-points", "::mlir::ModuleOp"> {
  let summary = "C interface and read-only arguments for the public functions";
  let description = [{
    Every public function with a body (`main`, `main_prepack`; not the private
    kernels) gets the unit attribute `llvm.emit_c_interface`, so that
    `convert-func-to-llvm` emits the `_mlir_ciface_<name>` wrapper the runtime
    calls with memref descriptors, and each of its arguments
    `bufferization.writable = false`. The arguments are the caller's memory
    (user inputs, the model's weights, the packed weights that every call
    reuses): with writable arguments, one-shot bufferization lets an op whose
    init is an argument accumulate into it in place (a conv's bias broadcast,
    hoisted into the packed weights, grew by the conv's output on every
    call); read-only, it copies such an init first. A tensor returned more
    than once is returned as a copy the second time (each result becomes a
    caller-allocated buffer; upstream `buffer-results-to-out-params` crashes
    on one buffer returned twice). Running it again changes nothing. Run it
    after `cuvil-split-prepack` and `cuvil-outline-kernels`.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def CuvilWidenBoolMemrefs : Pass<"cuvil-widen-bool-memrefs", "::mlir::ModuleOp"> {
  let summary = "Store booleans as bytes: memref<...xi1> becomes memref<...xi8>";
  let description = [{
    After bufferization and loop lowering, rewrites every memref of `i1` to a
    memref of `i8` (loads truncate, stores zero-extend), function signatures
    included. One byte per boolean is also what numpy and PyTorch use, so
    boolean inputs and outputs keep their layout. MLIR's memref-to-LLVM
    lowering does not accept stores of sub-byte elements.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def CuvilMathApprox : Pass<"cuvil-math-approx", "::mlir::func::FuncOp"> {
  let summary = "Polynomial f32 erf / exp / tanh, so vector code stays vector";
  let description = [{
    Rewrites `math.erf`, `math.exp` and `math.tanh` on f32 scalars and vectors
    into arith / `math.fma` polynomials (a few ulp; f16/bf16 operands are
    computed in f32): exp and tanh are MLIR's polynomial approximations, erf a
    rational function on the clamped argument (x P(x^2) / Q(x^2), one division,
    no per-interval selects), and erf(x / c) for a constant c becomes
    erf(x * (1 / c)) (GELU). Without it these ops become `llvm.intr.*` calls
    that LLVM scalarizes into one libm call per lane: the GELU of a BERT-base
    layer (128x3072) took 2.5 ms through `erff`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CuvilSimplifyRequantize : Pass<"cuvil-simplify-requantize", "::mlir::func::FuncOp"> {
  let summary = "Quantize to int8 with fewer vector ops: clamp before rounding, ReLU into the clamp";
  let description = [{
    The quantize at the end of an int8 epilogue, as torch-mlir writes it,

      q = fptosi(clamp(roundeven(y) + zp, lo, hi))        (iN result)

    becomes, exactly (lo, hi and zp integral constants),

      q = trunci(fptosi(roundeven(clamp(y, lo - zp, hi - zp))) + zp)

    so that round-and-convert is one instruction (cuvil-round-to-nearest-int
    makes `fptosi(roundeven(x))` an `llvm.intr.lrint`: vcvtps2dq) and the
    clamp needs no float zero-point add. Then a ReLU in front of a positive
    scale and a lower clamp of at least 0, `max(max(x, 0) * c, lo')`, loses
    the ReLU (the clamp already does it): what the zero point of a ReLU's
    output (its qmin) leaves. Both rewrites are exact for every non-NaN input.
    An int8 requantize had ~17 vector uops per 16 lanes and ran at the
    throughput of the two 512-bit ports (ResNet-18's epilogues were ~23% of a
    call on AMX hosts).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def CuvilRoundToNearestInt : Pass<"cuvil-round-to-nearest-int", "::mlir::func::FuncOp"> {
  let summary = "fptosi(roundeven(x)) as llvm.intr.lrint";
  let description = [{
    Rounding to the nearest even integer and converting is one instruction
    (x86 `cvtps2dq`, AArch64 `fcvtns`) under the default rounding mode, which
    compiled code never changes; LLVM keeps `llvm.roundeven` + `fptosi` as two
    (`vrndscaleps` + `vcvttps2dq`). For f32 / f64 scalars and vectors to i32 /
    i64; run it late, on vector code, before math and arith go to LLVM.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CuvilFoldUnitExtentDims : Pass<"cuvil-fold-unit-extent-dims"> {
  let summary = "linalg-fold-unit-extent-dims, but for the VNNI-packed contractions";
  let description = [{
    Drops unit dimensions of linalg ops as upstream's
    `linalg-fold-unit-extent-dims` does, except from the rank-5 VNNI-packed
    contractions of pack_cpu.mlir (loops [m, n/64, k/v, 64, v]): with one
    64-column panel (N = 64) the panel loop has one trip, and folding it
    away would leave an op the dot-product schedule does not match.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilVnniInterleave : Pass<"cuvil-vnni-interleave", "::mlir::func::FuncOp"> {
  let summary = "Write the VNNI pair packing of an activation as vector interleaves";
  let description = [{
    On buffers: each `linalg.transpose` of 16-bit elements that moves a dim
    of 2 innermost and the input's rows (up to 256 columns) next to it, e.g.
    [0, 3, 1, 4, 2] from `[b][k/2][2][n/64][64]` to `[b][n/64][k/2][64][2]`
    (pack_cpu.mlir's VNNI pack of a product's rhs computed per call:
    attention's k^T and v, a matmul of two inputs, on hosts with AMX-BF16 or
    AVX512-BF16; cuvil/Transforms/VnniPairTranspose.h), with contiguous rows,
    becomes loops over the output's outer dims (b, n/64, k/2) that load the
    two k rows of 64 columns, interleave them (`vector.interleave`) and store
    128 contiguous elements. The elementwise schedule leaves these transposes
    alone (`transform.cuvil.match.vnni_pair_transpose`): vectorized as a
    transpose they were one element per cycle (0.43 ms a call for BERT-base's
    twelve k^T packs; 0.49 ms for the 1024 x 1024 rhs of a matmul).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect"];
}

def CuvilAmxMatmul : Pass<"cuvil-amx-matmul", "::mlir::func::FuncOp"> {
  let summary = "Write the schedule's AMX-marked VNNI matmul tiles as AMX tile code";
  let description = [{
    On buffers (after bufferization): each `linalg.generic` marked `cuvil.amx`
    by `transform_scripts/matmul_dot_cpu.mlir` (@cuvil_amx_bf16 /
    @cuvil_amx_int8), the VNNI-packed contraction
    `C[m][p][64] += A[m][k/v][v] * B[p][k/v][64][v]` (bf16 -> f32 with v = 2,
    u8/s8 x s8 -> i32 with v = 4) with a static K, becomes `amx.tile_load` /
    `amx.tile_mulf` / `amx.tile_muli` / `amx.tile_store` on 16 x 64-byte
    tiles read from the packed B and C in place, and from A in place when
    its K is whole tile rows and its rows start on cache lines (its last
    rows % 16 from a zero-padded 16-row copy; else from a copy of A with K
    and rows zero-padded to whole tiles):
    blocks of 32 rows x 32 columns (four accumulators), then 16 rows, then
    the last rows % 16 through a 16-row C buffer. The accumulators start
    from the tile's init where the schedule fused one before the op and
    marked it `cuvil.amx_init`: a zero fill (`amx.tile_zero`) or the
    broadcast of a `[panels][64]` row down C's rows (a tile load with row
    stride 0); the init is then erased, so C is not written by it and read
    back. Any other marked init stays and the tiles read C. A marked op that
    is not such a contraction gets a remark and stays a loop nest.
    Where A's rows are a multiple of 1 KB apart (a tile's 16 rows would
    share a few L1 sets) and A comes whole from outside the tile's
    scf.forall, A is copied once before the forall as whole tiles (1 KB
    each, contiguous), and the tiles read the copy (tile-a).
  }];
  let options = [
    Option<"prefetchGroups", "prefetch-groups", "int64_t", /*default=*/"64",
           "K groups ahead of the current product to prefetch B's rows, in each tile's first row block (0: none)">,
    Option<"interleaveLoads", "interleave-loads", "bool", /*default=*/"true",
           "load each A / B tile just before its first product (else all four first)">,
    Option<"tileA", "tile-a", "bool", /*default=*/"true",
           "copy an A whose rows share L1 sets as whole 1 KB tiles, once per forall">,
    Option<"kChunk", "k-chunk", "int64_t", /*default=*/"8",
           "tile products per K chunk between the accumulators' loads and stores: a chunk's B tiles "
           "(2 half panels x 2 x 8 KB) and a row block's A tiles (2 x 8 KB) fit L1 (48 KB) together; "
           "16 measured 1.07-1.10x the time (bf16), 4 no different; ResNet-18 int8 (1 thread, Xeon model 207): "
           "16 0.997x, 36 1.024x; one more where chunks of that size divide K's products and "
           "k-chunk's do not (a 3x3 int8 conv's 9 x C/64)">
  ];
  let dependentDialects = ["::mlir::amx::AMXDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def CuvilFuseElementwiseChains : Pass<"cuvil-fuse-elementwise-chains", "::mlir::func::FuncOp"> {
  let summary = "Fuse the elementwise chains the late raise steps leave, as one kernel each";
  let description = [{
    Runs after the operand narrowing, before and after the unit-dim folding
    (which leaves named ops alone and separates ops by the reshapes it adds),
    before the kernels are outlined (one kernel per linalg op). A
    `linalg.transpose` that keeps its innermost dim (its rows are copied
    whole) becomes a `linalg.generic`; then an all-parallel
    `linalg.generic` fuses into each consumer that reads it through a
    permutation (not a broadcast) and is all-parallel or a reduction of that
    one input (never a contraction). A producer with several users fuses into
    all of them or none, and only when its body has no math function or
    division (it is computed once per user). An elementwise op that reads
    another's result through a `tensor.collapse_shape` is expanded to the
    producer's shape first (its result is collapsed instead). Gathers (`tensor.extract`,
    `linalg.index`) are left alone. BERT's bias add, head transpose and bf16
    truncation of q and v become one kernel, as do the output's transpose
    and truncation; softmax's mask add goes into the ops that read the
    masked scores. Also: `cmpf(extf(x), c)` compares `x` with `c` in `x`'s
    type where `c` converts exactly (the all-masked check compares f32
    scores with -inf, not f64 ones).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilStackTileBuffers : Pass<"cuvil-stack-tile-buffers", "::mlir::func::FuncOp"> {
  let summary = "Small fixed-size buffers of a loop iteration on the stack";
  let description = [{
    On buffers, after deallocation: a `memref.alloc` of a static shape of at
    most 64 KB in the body of an `scf.for` / `scf.forall` / `scf.parallel`,
    freed in that body and not yielded (a row chain tile's intermediates)
    becomes a `memref.alloca`, its `memref.dealloc` goes, and the body
    saves the stack pointer at its start and restores it before its
    terminator (`llvm.intr.stacksave` / `stackrestore`: what a
    `memref.alloca_scope` lowers to; a scope around a loop body does not
    survive convert-scf-to-cf, which puts several blocks in it, and the
    canonicalizer inlines it into a loop body). On the heap, a softmax tile's
    three buffers were three malloc / free pairs per 8 rows, and the threads of a parallel loop
    waited on each other in the allocator.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect"];
}

def CuvilCollapseShortRows : Pass<"cuvil-collapse-short-rows", "::mlir::func::FuncOp"> {
  let summary = "Merge the short trailing loops of elementwise ops and row reductions into one row";
  let description = [{
    For each all-parallel `linalg.generic` on static tensors whose innermost
    loop is shorter than 64 (a CNN's [C, H, W] tensors: rows of W), merges
    the trailing loops that every operand reads contiguously, or not at all
    (per-channel operands), until the row holds 64 elements or no further
    loop merges: 512x7x7 becomes 512x49. The elementwise schedule vectorizes
    one row at a time, the last chunk masked; short rows are mostly masks.
    A reduction over trailing loops (parallel loops, then reduction loops: a
    pool over H and W) merges its reduction loops the same way, into a row
    reduction the schedule vectorizes (as [C, 7, 7] none took it: scalar).
    Gathers (`tensor.extract`), `linalg.index` and i1 operands are left alone.
    A `tensor.pad` by a constant that leaves its trailing dims unpadded pads
    whole rows: [H, W, C] padded in H and W becomes [H, W*C] padded by
    W-pad * C elements (collapse, pad, expand), so the pad schedule fills and
    copies H rows of W*C elements, not H*W rows of C.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilLowerX86Dot : Pass<"cuvil-lower-x86-dot", "::mlir::func::FuncOp"> {
  let summary = "cuvil.x86.dot_u8s8 -> llvm.x86.avx512.vpdpbusd.512";
  let description = [{
    Rewrites each `cuvil.x86.dot_u8s8` into a call of the LLVM intrinsic it
    stands for. Runs after bufferization, with the other lowerings to LLVM
    (the call has no declared memory effects: earlier, it would block the
    buffer deallocation passes).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::vector::VectorDialect"];
}

def CuvilOutlineKernels : Pass<"cuvil-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "One private function per linalg op, identical ones shared";
  let description = [{
    Moves every statically shaped linalg op on tensors (with the `tensor.empty`
    / `linalg.fill` that initialise it, also through a reshape of the empty
    tensor, which is then the destination argument; the single-use `tensor.pad` in front of
    it and the constants it reads) out of the public functions into a private
    function `@cuvil_kernel_<n>_<op>` with the attribute `cuvil.kernel = <n>`
    (the kernel id: what the profiler counts by; the name is only for
    reading) and calls it. Kernels whose bodies print the same (same op,
    shapes, constants) become one function: the 12 layers of BERT-base share
    one set of kernels, so the schedules, the lowering and LLVM code
    generation see each kernel once instead of twelve times. Ops with dynamic
    shapes stay where they are.

    Row chains (with `row-chains`, the default): a `linalg.generic` over rows
    (all loops parallel, or all but the last, which it reduces) takes into its
    kernel the generics before it over the same rows whose results only the
    chain reads, a whole row or one value per row at a time (softmax's row
    maximum, exp, row sum and division; layer norm's mean, centering,
    variance and normalization). The kernel is marked `cuvil.row_chain`; the
    elementwise schedule tiles its last op by rows and fuses the rest into
    each tile. The chain's ops other than the last get intermediate empty
    tensors of their own (not the kernel's destination).

    Pads into producers (with `pads-into-producers`, the default): a
    `tensor.pad` with static widths and a constant value (not computed after
    the op) that an op's result feeds through static reshapes, where the op's
    init is an empty tensor it does not read or the fill of one (the ReLU or
    requantize in front of the next conv, a max pool), goes into that op's
    kernel: its destination is the padded tensor, the border is filled (two
    slabs per padded dimension) and the op writes the interior in place. In
    `main`, the pad would be a buffer of its own, filled whole, with the
    result copied in. The result's other users read a slice of the interior:
    all-parallel generics (a residual add, a gather) take it into their
    kernel, others get it from `main`. A result padded twice or reshaped two
    ways keeps its pads in `main`.
  }];
  let options = [
    Option<"rowChains", "row-chains", "bool", /*default=*/"true",
           "Outline row chains (softmax, layer norm) as one kernel each">,
    Option<"padsIntoProducers", "pads-into-producers", "bool", /*default=*/"true",
           "A tensor.pad fed by an op's result goes into that op's kernel, "
           "which writes the padded tensor">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilWinogradConv : Pass<"cuvil-winograd-conv", "::mlir::func::FuncOp"> {
  let summary = "3x3 stride-1 NCHW convolutions as Winograd F(m x m, 3 x 3)";
  let description = [{
    Rewrites `linalg.conv_2d_nchw_fchw` on static f32 tensors with batch 1, a
    3x3 filter computed from weights only (`cuvil.weight` arguments and
    constants), stride 1 and dilation 1 (at least `min-input-channels` input
    and `min-output-channels` output channels: below, the transforms, which
    scale with C + F, cost more than the products they save, C x F) into
    Winograd's minimal filtering F(m x m, 3 x 3): the filter transform G g G^T (weights only, so cuvil-split-prepack moves it into the
    run-once prepack), the input transform B^T d B and the output transform
    A^T M A as all-parallel linalg.generic ops (each a 1-D transform along one
    axis, channels innermost), and (m+2)^2 independent C x F products as one
    linalg.batch_matmul. That product does (m+2)^2 / (9 m^2) of the direct
    convolution's multiplications: 1/4 for m = 4, 4/9 for m = 2. The input is
    transposed to HWC first and the result back to NCHW; a conv whose init is
    not a zero fill gets that init added at the end.

    Run it before cuvil-split-prepack. `output-tile` forces m (2 or 4) on every
    candidate (of at least 4 x 4 outputs); 0 (the default) leaves outputs
    smaller than `min-output-size` (14) in height or width alone (measured on
    ResNet-18's 7 x 7 layer: im2col matmul 2.6 ms, m = 2 3.4 ms, m = 4 5.4 ms)
    and uses m = 4 when that gives at least `min-tiles-for-f4` (32) tiles
    (28 x 28 and up), else m = 2. m = 4 is less accurate (its transform
    constants reach 8 and 1/24): fp32 errors ~1e-5 relative, m = 2 ~1e-6.

    Upstream's Winograd rewrite (mlir/lib/Dialect/Linalg/Transforms/
    WinogradConv2D.cpp, `linalg::populateWinogradConv2DPatterns`) takes only
    `linalg.conv_2d_nhwc_fhwc` (NCHW is a TODO there), any batch, with F(m, r)
    fixed by the caller (F(2,3), F(4,3), F(2,5), and r x 1 / 1 x r filters).
    It emits `linalg.winograd_{filter,input,output}_transform` ops, which
    decompose into scf.for loops over filters x channels and over tiles x
    batch x channels, each iteration two small 2-D linalg.matmuls with the
    constant matrices. This pass takes the NCHW convs torch-mlir emits (batch
    1, 3x3 only), picks m from the output size, requires a weight-only filter
    (so that the filter transform lands in the prepack function), and writes
    each 1-D transform as one all-parallel linalg.generic over every tile and
    channel, channels innermost: no per-tile loops, and generics that the
    elementwise schedule vectorizes along channels.
  }];
  let options = [
    Option<"outputTile", "output-tile", "int64_t", /*default=*/"0",
           "Winograd output tile m (2 or 4); 0 chooses by the output size">,
    Option<"minInputChannels", "min-input-channels", "int64_t", /*default=*/"16",
           "convs with fewer input channels are left alone">,
    Option<"minOutputChannels", "min-output-channels", "int64_t", /*default=*/"32",
           "convs with fewer output channels are left alone">,
    Option<"minOutputSize", "min-output-size", "int64_t", /*default=*/"14",
           "with output-tile=0: convs whose output height or width is smaller are left alone">,
    Option<"minTilesForF4", "min-tiles-for-f4", "int64_t", /*default=*/"32",
           "with output-tile=0: F(4x4, 3x3) from this many 4x4 output tiles on, F(2x2, 3x3) below">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def CuvilPropagateChannelsLast : Pass<"cuvil-propagate-channels-last", "::mlir::func::FuncOp"> {
  let summary = "Keep conv results channels-last (NHWC) until the next conv";
  let description = [{
    The conv rewrites (cuvil-im2col-conv) compute in channels-last order and
    emit `linalg.transpose` [N, H, W, C] -> [N, C, H, W] (permutation
    [0, 3, 1, 2]) at each conv's output and [0, 2, 3, 1] at each conv's
    input. This pass moves the NCHW transposes down:
    an all-parallel 4-D `linalg.generic` that reads one whole (identity map)
    iterates in NHWC order instead, reading every NCHW-transposed operand
    from its NHWC source, the others through permuted maps, and its results
    are transposed; a constant `tensor.pad` pads the NHWC tensor. A transpose
    moves only where none is left behind on the results (every user takes it
    in) or the results are no wider than the operand it leaves (i32 products
    requantized to i8). Transposes that meet fold ([0, 2, 3, 1] after
    [0, 3, 1, 2] is the identity): between two convs, the requantize, ReLU,
    residual add and pad run on NHWC tensors, and no transpose remains.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilIm2colConv : Pass<"cuvil-im2col-conv", "::mlir::func::FuncOp"> {
  let summary = "NCHW convolutions with many channels as im2col + one matmul";
  let description = [{
    Rewrites `linalg.conv_2d_nchw_fchw` on static f32 tensors with batch 1, at
    least `min-input-channels` (16) input and `min-output-channels` (32)
    output channels (any filter size, stride, dilation)
    into an im2col matmul with the output channels as the matmul's columns:
    the input is transposed to HWC, the KH x KW strided windows are gathered
    into cols[OH][OW][KH][KW][C] by one all-parallel linalg.generic
    (`tensor.extract` at [s*oh + d*kh, s*ow + d*kw, c]: C-long contiguous
    rows, vectorized and run in parallel by the elementwise schedule; one
    slice copy per window stayed in `main` as a serial strided copy), and
    out[OH*OW][F] = cols x W^T, where W^T[KH*KW*C][F] is weight-only work
    (cuvil-split-prepack hoists it, pack_cpu packs it into panels). The
    result is transposed back to NCHW; a non-zero init is added at the end.
    The matmul runs on matmul_cpu's register kernel along F; the direct
    conv_cpu schedule vectorizes along strided output columns and packs the
    filter per call, which made ResNet-18's stride-2 and 1x1 convs run at
    35-90 GFLOP/s. Run it after cuvil-winograd-conv (which keeps the 3x3
    stride-1 convs it takes) and before cuvil-split-prepack.

    Upstream's im2col (mlir/lib/Dialect/Linalg/Transforms/
    ConvertConv2DToImg2Col.cpp, `linalg::populateConvertConv2DToImg2ColPatterns`)
    rewrites an NCHW conv of any batch, dilation 1 only, into
    col[N][C*KH*KW][OH*OW] read from the NCHW input through one indexing map
    (consecutive elements of a row are `stride` apart) and a linalg.generic
    contraction filter[F][C*KH*KW] x col accumulating into the conv's init,
    output channels as rows. This pass gathers from an HWC copy of the input
    (contiguous C-long rows), multiplies with a named linalg.matmul
    out[OH*OW][F] = cols x W^T, which the matmul schedules and pack_cpu
    match and whose weight side cuvil-split-prepack hoists, takes dilated
    convs too, and only batch-1 f32 convs with enough channels.

    With `int8-k-multiple` (64 on AMX-INT8 hosts: the bytes of a tile row),
    an int8 conv whose K is not a multiple of it gathers windows of more
    taps and longer runs instead, K rounded up to the multiple (the ResNet
    stem's 7 x 21 = 147 bytes -> 8 x 24 = 192): the extra elements are the
    input's next pixels and rows, read in bounds, and their weights are
    zero. The VNNI packing then has no K to pad, which took a copy of the
    whole gathered matrix per call.

    With `int8-shifted-rows` (AMX-INT8 and AVX512-VNNI hosts), an int8 conv of stride and
    dilation 1 whose channels are whole 64-byte tile rows (and output
    channels whole 64-column panels) is no gather and matmul but one
    linalg.generic over shifted rows of its padded input, already in the
    AMX schedule's loop order and VNNI layout:
    `Y[q][f] = sum X[q + kh*WP + kw][c] * W[f][c][kh][kw]` on the padded
    width (q = oh*WP + ow; the columns past OW are dropped), A the input
    itself as [rows][C/4][4], B the weights packed [F/64][KH][KW][C/4][64][4].
    Those extra columns (and the rows up to a whole 64-row tile) are work
    the gather form does not do: `shifted-rows-max-extra` bounds them, in
    percent of the output pixels (the dot-product kernel, whose time is its
    multiply-adds, gains only where they are few; AMX's tiles, bound by
    their reads of A, gain anyway).
  }];
  let options = [
    Option<"minInputChannels", "min-input-channels", "int64_t", /*default=*/"16",
           "convs with fewer input channels are left alone">,
    Option<"minOutputChannels", "min-output-channels", "int64_t", /*default=*/"32",
           "convs with fewer output channels are left alone">,
    Option<"int8KMultiple", "int8-k-multiple", "int64_t", /*default=*/"0",
           "int8 convs: gather windows of more taps and longer runs so that K is a multiple of this "
           "(0: KH x KW*C as it is)">,
    Option<"int8ShiftedRows", "int8-shifted-rows", "bool", /*default=*/"false",
           "int8 stride-1 convs with channels in whole 64-byte rows: one contraction over shifted rows "
           "of the padded input, no gather (AMX-INT8 and AVX512-VNNI hosts; see Im2colConv.cpp)">,
    Option<"shiftedRowsMaxExtra", "shifted-rows-max-extra", "int64_t", /*default=*/"0",
           "with int8-shifted-rows: only convs whose padded-width rows (rounded up to whole 64-row "
           "tiles) are at most this many percent more than their output pixels (0: any)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def CuvilCollapseParallelLoops : Pass<"cuvil-collapse-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Make every multi-dimensional scf.parallel one-dimensional";
  let description = [{
    Collapses the induction variables of each scf.parallel without reductions
    into one (the body delinearizes it). Run it right before
    `async-parallel-for`: for a multi-dimensional loop whose inner trip counts
    are static, that pass rounds the block size up to a multiple of the inner
    iterations but keeps the block count computed from the unrounded size, so
    the last blocks start past the end, wrap around in its delinearization and
    run iterations a second time, concurrently with their first run (LLVM
    22.1.8: a 36 x 2 forall split into 15 blocks of 6 instead of 12).
    Iterations that accumulate into their output tile then come out doubled,
    and the others are computed twice. A one-dimensional loop takes the path
    without the rounding.
  }];
  // Upstream's collapse builds affine.apply for induction variables the body
  // does not use (found by fuzzing: without the dialect loaded, it aborts).
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def CuvilPartitionParallelLoops : Pass<"cuvil-partition-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Split each outermost 1-D scf.parallel into one contiguous part per thread";
  let description = [{
    Rewrites every outermost one-dimensional scf.parallel without reductions
    (run after cuvil-collapse-parallel-loops) into an scf.parallel over
    `parts` parts, each an scf.for over a contiguous range of ceil(trip /
    parts) iterations. `async-parallel-for` then makes one task per part (up
    to 32 workers; above, it groups parts). Cuvil uses it with 2 threads:
    its runtime's calling thread runs part 0 and the one worker part 1, for
    every kernel, so that data written by a thread in one kernel is read by
    the same thread in the next (its caches) instead of by whichever thread
    took that task. With `parts` = 0 or 1 the pass does nothing.
  }];
  let options = [
    Option<"parts", "parts", "int64_t", /*default=*/"0", "parts per loop (the thread count)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def CuvilWidenBoolTensors : Pass<"cuvil-widen-bool-tensors", "::mlir::func::FuncOp"> {
  let summary = "i1 tensors passed between linalg.generic ops become i8";
  let description = [{
    A linalg.generic result of i1 elements whose init is a tensor.empty or a
    constant linalg.fill, and whose every use is an input of a
    linalg.generic, is computed as i8 (0 or 1) instead: the producer yields
    `arith.extui` of its i1 value, each reader starts with `arith.trunci`.
    The elementwise schedule leaves ops on i1 tensors as scalar loops;
    torch-mlir's scaled_dot_product_attention softmax reduces every score row
    to an i1 "all -inf" flag and selects with it (GPT-2: two scalar kernels,
    ~5 ms of 225 ms per call).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def CuvilCheckGatherIndices : Pass<"cuvil-check-gather-indices", "::mlir::func::FuncOp"> {
  let summary = "Data-dependent tensor.extract indices in linalg bodies are clamped and checked";
  let description = [{
    torch-mlir lowers embedding, gather, index_select and x[idx] to a
    linalg.generic whose body reads `tensor.extract %t[%i, ...]` with an index
    computed from an input element, checked by cf.asserts that
    cuvil-strip-asserts removes. For each such index (one whose computation in
    the body reads an input and has no side effects), this pass clamps the
    read into `[0, dim - 1]` and, after the op, recomputes the indices in a
    reduction over the op's iteration space: if any was out of range it calls
    `cuvil_runtime_error(2)` (the call then raises an IndexError, as eager
    does). Runs before cuvil-strip-asserts.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CuvilGuardIntegerDivision : Pass<"cuvil-guard-integer-division", "::mlir::ModuleOp"> {
  let summary = "Integer division and remainder never trap; a zero divisor is reported";
  let description = [{
    x86's idiv raises SIGFPE on a zero divisor and on INT_MIN / -1. Every
    arith.divsi / divui / remsi / remui / floordivsi / ceildivsi / ceildivui
    on integers (scalars or vectors; not `index`, whose divisors are sizes)
    with a divisor that is not a constant known to be safe divides by 1
    instead where the divisor is 0 (or INT_MIN / -1 for signed ops), yields
    eager PyTorch's wrapped result for INT_MIN / -1 (INT_MIN; remainder 0),
    and, where any divisor was 0, calls `cuvil_runtime_error(1)` (the C
    runtime records it; the caller raises after the call, as eager raises
    ZeroDivisionError). In a linalg.generic body the check is a reduction
    over the divisor input tensor, placed after the op (a body may have no
    side effects); a divisor computed inside the body is made safe without
    a report. Runs on tensors, first in the raise step.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect", "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilNarrowContractionOperands : Pass<"cuvil-narrow-contraction-operands", "::mlir::func::FuncOp"> {
  let summary = "Contractions read bf16 / f16 operands and accumulate in f32";
  let description = [{
    For each linalg.matmul, linalg.batch_matmul and linalg.conv_2d_nchw_fchw
    with an f32 result (named ops: their bodies extend the operands to the
    result type):
      * an operand produced by an elementwise linalg.generic that only
        extends bf16 / f16 to f32 (what torch-mlir emits for a bf16 or fp16
        model: PyTorch accumulates its matmuls in f32) is replaced by the
        narrow tensor it reads: the kernel reads half the bytes and can use
        the host's bf16 dot-product / matrix units;
      * with `element-type=bf16|f16` (`cuvil.compile(precision=...)`), an f32
        operand is truncated to that type first (a separate elementwise op;
        on a weight that is weight-only work, hoisted into @main_prepack by
        cuvil-split-prepack).
    With `batched-contractions`, the batched contractions that
    cuvil-lower-to-linalg writes as linalg.generic (loops [b, m, k, n] or
    [b, m, n, k]: attention's q.k^T and p.v, whose operands are activations)
    are narrowed the same way; the pipeline sets it where a bf16 kernel
    takes them (AMX tiles, vdpbf16ps), elsewhere they would only pay the
    conversions.
    Both operands must end up with the same narrow type, else the op is left
    as it is. The accumulator, and every op that is not a contraction
    (softmax, norms, reductions, GELU), stays f32.
  }];
  let options = [
    Option<"elementType", "element-type", "std::string", /*default=*/"\"\"",
           "bf16 | f16: truncate f32 contraction operands to it; empty: only fold existing extensions">,
    Option<"batchedContractions", "batched-contractions", "bool", /*default=*/"false",
           "with element-type: also the batched linalg.generic contractions (attention's q.k^T and "
           "p.v; set where a bf16 kernel takes them: AMX, AVX512-BF16)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def CuvilUnsignedInt8Lhs : Pass<"cuvil-unsigned-int8-lhs", "::mlir::func::FuncOp"> {
  let summary = "VNNI-packed int8 contractions read an unsigned lhs (u8 x s8, vpdpbusd)";
  let description = [{
    x86's int8 dot product (`vpdpbusd`: AVX512-VNNI, AVX-VNNI) multiplies
    unsigned bytes by signed ones. For each rank-5 linalg.generic
    `C[m][n/64][64] += extsi(A[m][k/4][4]) * extsi(B[n/64][k/4][64][4])` (i8 x
    i8 -> i32: what pack_cpu.mlir's VNNI packing makes of an int8 matmul),
    rewrites

        sum_k a b  =  sum_k (a xor 0x80 : unsigned) b  -  128 * sum_k b

    the contraction reads `A xor 0x80` zero-extended (the xor added to the
    all-parallel op that writes A when the contraction is A's only reader,
    through reshapes and constant pads, whose value flips too: an im2col
    gather, a quantize), and an elementwise op
    after it subtracts 128 x B's column sums (a reduction over B: for a
    weight, weight-only work that cuvil-split-prepack hoists into
    @main_prepack). Exact: i32 arithmetic wraps. Other ops are left alone.

    With `shifted-rows` (hosts with `vpdpbusd` and no AMX-INT8) also
    cuvil-im2col-conv's int8 convs over shifted rows of the padded input
    (rank 7, loops [n/64, q, 64, kh, kw, c/4, 4], B packed as
    [n/64][kh][kw][c/4][64][4]): A is the padded input itself, its padding
    flips with it, and B's column sums run over kh, kw and c. On AMX hosts
    those convs stay signed x signed (`tdpbssd` reads them as they are).
  }];
  let options = [
    Option<"shiftedRows", "shifted-rows", "bool", /*default=*/"false",
           "Also rewrite the int8 convs over shifted rows (rank 7)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def CuvilProfileKernels : Pass<"cuvil-profile-kernels", "::mlir::ModuleOp"> {
  let summary = "Time every call of an outlined kernel (a cuvil.kernel function)";
  let description = [{
    Wraps each `func.call` of a function with the attribute
    `cuvil.kernel = <N>` (an outlined kernel, see `cuvil-outline-kernels`;
    its name plays no part) in `%t = func.call @cuvil_profile_clock()` before
    and `func.call @cuvil_profile_record(<N>, %t)` after, and declares the two
    functions. Cuvil's C runtime (runtime_support.c, linked into every
    library) implements them with a monotonic clock and per-kernel call and
    nanosecond counters that `CompiledModule.profile` reads. A kernel's time
    includes its parallel tasks: kernels are called from `main`'s thread and
    return when their work is done. Kernel ids above 4095 are not recorded.
    Run it on func-level IR (tensors or memrefs), before the lowering to LLVM.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"];
}

def CuvilFoldZeroTripLinalg : Pass<"cuvil-fold-zero-trip-linalg", "::mlir::func::FuncOp"> {
  let summary = "Replace linalg ops whose loops run zero times by their inits, empty tensors by tensor.empty";
  let description = [{
    A linalg op on tensors whose static iteration domain has an extent of 0
    (a matmul with K = 0, anything over an empty dimension) runs its body
    zero times: its results are its `outs` operands as they are (for a
    contraction, the zero fill). Upstream tiling asserts on such ops (MLIR
    22.1.8, `computeAllSliceParameters`: "expected as many ivs as non-zero
    sizes"), so they are replaced before any schedule sees them.

    Likewise every side-effect-free op whose results are tensors with a
    static 0 among their dims (fully static, or slices, whose sizes are
    their operands) is replaced by `tensor.empty`: a tensor with no
    elements needs nothing computed. Canonicalization otherwise folds a
    zero-size `tensor.extract_slice` at offset 0 of an empty dim into one
    its own verifier rejects ("offset 0 is out-of-bounds: 0 >= 0"): `roll`,
    `t`, `constant_pad_nd` of empty tensors failed to compile.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def CuvilFoldConcatSlices : Pass<"cuvil-fold-concat-slices", "::mlir::func::FuncOp"> {
  let summary = "Read a slice of a tensor.concat from the one operand it lies in";
  let description = [{
    A `tensor.extract_slice` of a `tensor.concat` whose range along the
    concat dim (static offset and size, unit stride) lies within one operand
    becomes a slice of that operand; a slice covering a whole operand folds
    to the operand. A complex value held as a (real, imaginary) pair, built
    by a concat along a trailing dim of 2 and read through slices
    (`abs(torch.stft(...))`), then costs no interleaving copy and no
    strided reads; the concat goes away when nothing else reads it.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def CuvilResultsInPlace : Pass<"cuvil-results-in-place", "::mlir::func::FuncOp"> {
  let summary = "Write reshaped results into the out-params instead of copying them there";
  let description = [{
    Runs right after `buffer-results-to-out-params`, before the deallocations
    are placed. A public function's result that is a reshape
    (`memref.collapse_shape` / `memref.expand_shape`, static shapes, identity
    layouts) of a `memref.alloc` is left as `memref.copy %reshape, %out`:
    `hoist-static-allocs` takes bare allocations only. When nothing uses the
    buffer or its views after that copy, and the out-param has no other use,
    the allocation becomes the inverse reshape of the out-param and the copy
    goes: the kernels write the result where the caller wants it. A packed
    matmul's `[M, N/64, 64]` product returned as `[M, N]` (a model's last
    linear layer) cost an allocation, a copy and a free per call.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CuvilStridedCopiesAsRows : Pass<"cuvil-strided-copies-as-rows", "::mlir::func::FuncOp"> {
  let summary = "Copy strided views as loops of contiguous block copies";
  let description = [{
    A `memref.copy` whose source or target is not contiguous lowers to the
    runtime's generic `memrefCopy`, which computes an index and makes a call
    per element. Where both are contiguous along their trailing dims from
    some dim on (a slice of a padded matmul product: rows of 2020 in rows of
    2048), the copy becomes `scf.for` loops over the leading dims around a
    copy of one contiguous block, which `finalize-memref-to-llvm` lowers to
    `memcpy`. Static shapes and strides only; other copies are left as they
    are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CuvilEarlyDealloc : Pass<"cuvil-early-dealloc", "::mlir::func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    MLIR's ownership-based deallocation frees a function's buffers at the end
    of the block that allocated them. In a model's `main`, which only calls
    kernels, that keeps every intermediate tensor alive until the end of the
    call: hundreds of MB, touched once and faulted in again on every call.
    This pass moves each `memref.dealloc` of a `memref.alloc` in the same block
    to just after the last op that uses the buffer or a view of it, so the
    next allocation of that size reuses memory that is still in cache. A
    buffer that escapes (returned, captured by a non-view op producing a
    memref) keeps its deallocation where it is.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CuvilBf16VectorMemoryAsI16 : Pass<"cuvil-bf16-vector-memory-as-i16", "::mlir::ModuleOp"> {
  let summary = "Load and store bf16 vectors of length 8k + 1 as i16 vectors";
  let description = [{
    On the LLVM dialect, before translation: each `llvm.load` / `llvm.store`
    of a `vector<N x bf16>` with N = 8k + 1 > 8 becomes the same op on
    `vector<N x i16>` with an `llvm.bitcast`. LLVM 22's x86 backend aborts on
    such bf16 vector loads and stores on AVX-512 targets (a vectorized copy
    of 33-element bf16 rows, e.g. a bf16 matmul with K = 33); i16 vectors
    of every length work.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // CUVIL_PASSES
