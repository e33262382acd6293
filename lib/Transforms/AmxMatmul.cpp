//===- AmxMatmul.cpp - VNNI-packed matmul tiles on AMX ---------------------===//
// On hosts with AMX, transform_scripts/matmul_dot_cpu.mlir (@cuvil_amx_*)
// tiles each VNNI-packed contraction
//
//   C[m][p][64] += A[m][k/v][v] * B[p][k/v][64][v]    (v = 2: bf16 -> f32,
//                                                       v = 4: u8 x s8 -> i32)
//
// into scf.forall tiles of rows x panels and marks the tile's linalg.generic
// `cuvil.amx`. After bufferization this pass writes each marked op as AMX
// tile code. The packed layouts already are what the tile unit reads: a
// 16-row tile of A is 16 rows of 64 bytes (16 k groups of v), a tile of B 16
// k groups of 16 columns (64 bytes) with the panel's k-group stride, an
// accumulator 16 rows of 16 columns with C's row stride. B and C are read in
// place; so is A when its rows are whole tiles along K (readsAInPlace()),
// but for its last rows % 16 (copyLastRows()), else they are copied once per
// op to a zero-padded buffer (see copyA()). Where A's rows are a multiple of
// 1 KB apart (K = 512 .. 4096 bf16: a tile's rows would share a few L1 sets),
// A is copied once per kernel call, before the forall, as whole 1 KB tiles
// (tiledA()).
//
// Per panel, K in chunks of kStepsPerChunk tile products (or one more:
// stepsPerChunk()), unrolled; per chunk, blocks of 32 rows (2 x 2
// accumulators, 2 A and 2 B tiles: all 8 tile registers), then one block of
// 16 rows; the last rows % 16 read A's zero-padded copy and C through a
// 16-row buffer (the tile unit reads and writes 16 whole rows). All tiles have the one shape 16 x 64 bytes: LLVM
// fixes a tile register's shape per function, so tiles of a second shape
// next to four live accumulators run out of registers. Each row block runs
// the chunk for the two half panels (32 columns, 2 accumulator tiles) in
// turn: the second half reads the A tiles the first just loaded from L1,
// the two read each 256-byte k-group row of B's panel whole while it is in
// cache, and the chunk's B tiles stay in L1 for the next row block. (Half
// panels outside the row blocks, each over all of K, read every other 128
// bytes of a streamed weight from DRAM twice. Measured, 1 thread, session
// 22: halves inside the chunks 0.86-0.91x the time on bf16 BERT-base's 72
// linear layers and 64x1024-4096-4096-1024; then K chunks outside the row
// blocks 0.93-0.96x on 128x768x3072 and 0.84-0.95x on that MLP.)
// The accumulators are loaded from C before a chunk and stored after it;
// before the first chunk they start from the tile's init instead, where the
// schedule fused one and marked it `cuvil.amx_init` (see AccInit): zeros
// (tilezero) or a row broadcast down the rows (a tile load with stride 0),
// and the init op goes. C is then not written by the init and read back.
// They are not carried across an scf.for instead: a loop-carried !amx.tile
// becomes a block argument that convert-cf-to-llvm cannot type (upstream's
// AMX type conversion lives in convert-vector-to-llvm only). With 8
// products per chunk, the accumulators' round trip through L1 is 1 load and
// 1 store per 8 tile products.
// Within a product the tiles are loaded just before their first use, A1
// before C01 (A0 B0 C00 B1 A1 C01 C10 C11), so a product waits for two
// loads, not four, and A0 and A1 take two tile registers (interleave-loads;
// loading all four first measured 1.08-1.12x the time of loads next to
// their products, bf16 1024^3, 128x768x768, 64x4096x4096, one thread,
// interleaved, session 15).
// K that is not a multiple of 16 k groups ends in one product of tiles read
// from A's copy (zero-padded there) and a zero-padded copy of B's last groups.
// An int8 conv over shifted rows (cuvil-im2col-conv{int8-shifted-rows}:
// loops [p, q, 64, kh, kw, c/4, 4], A[q + kh * WP + kw][c/4][4]) is the same
// contraction with K = KH x KW taps of C/4 groups: B's taps are contiguous
// (viewed as [p][KH*KW*C/4][64][4]), and each A tile of K group k is read in
// place from the rows of its tap, shifted by kh * WP + kw (aIndices()).
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/ShiftedRows.h"
#include <algorithm>
#include <numeric>
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILAMXMATMUL
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The attribute the schedule puts on the tiles this pass rewrites.
constexpr StringLiteral kAmxMarker = "cuvil.amx";
/// Rows of every tile; bytes of every tile row (the palette-1 maximum).
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileRowBytes = 64;
/// Columns per panel of the VNNI packing (pack_cpu.mlir).
constexpr int64_t kPanel = 64;

/// The operands of one marked contraction, checked.
struct AmxContraction {
  Value a, b, c;
  int64_t kGroups; // k / v
  int64_t vnni;    // v
  Type inType, accType;
  bool zextLhs = false, zextRhs = false;
  /// A conv over shifted rows (cuvil/Transforms/ShiftedRows.h): K is KH x KW taps of
  /// `tapGroups` groups each, and tap (kh, kw) reads A's rows shifted by
  /// kh * `rowShift` + kw. 0 for a plain matmul.
  int64_t rowShift = 0, kw = 1, tapGroups = 0;
};

bool extendsUnsigned(Block &body, unsigned argIndex) {
  for (Operation *user : body.getArgument(argIndex).getUsers())
    if (isa<arith::ExtUIOp>(user))
      return true;
  return false;
}

/// Whether `op` has the loops [p, m, 64, k/v, v] of the schedule's
/// interchange, or (`batched`) [b, p, m, 64, k/v, v]: a batched contraction
/// (attention's products, Winograd's batch matmuls) whose forall tile holds
/// one batch.
bool hasVnniMaps(linalg::GenericOp op, bool batched) {
  MLIRContext *ctx = op.getContext();
  unsigned n = batched ? 6 : 5, first = batched ? 1 : 0;
  if (op.getNumLoops() != n)
    return false;
  auto d = [&](unsigned i) { return getAffineDimExpr(first + i, ctx); };
  SmallVector<AffineExpr> a = {d(1), d(3), d(4)}, b = {d(0), d(3), d(2), d(4)}, c = {d(1), d(0), d(2)};
  if (batched)
    for (SmallVector<AffineExpr> *operand : {&a, &b, &c})
      operand->insert(operand->begin(), getAffineDimExpr(0, ctx));
  SmallVector<AffineMap> expected = {AffineMap::get(n, 0, a, ctx), AffineMap::get(n, 0, b, ctx),
                                     AffineMap::get(n, 0, c, ctx)};
  return op.getIndexingMapsArray() == expected;
}

/// A batched tile's operand without its unit batch dimension.
Value dropUnitBatch(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  return memref::createCanonicalRankReducingSubViewOp(b, loc, memref, type.getShape().drop_front());
}

/// The shifted-rows conv's operands: B viewed as [p][kh*kw*c/4][64][4] (its
/// taps' groups are contiguous), C's rows whole tiles (the conv rewrite
/// rounds them up to whole forall tiles).
FailureOr<AmxContraction> matchShiftedRows(OpBuilder &builder, linalg::GenericOp op, int64_t rowShift) {
  AmxContraction mm;
  mm.a = op.getDpsInputOperand(0)->get();
  mm.c = op.getDpsInitOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  auto aType = cast<MemRefType>(mm.a.getType());
  auto bType = cast<MemRefType>(b.getType());
  auto cType = cast<MemRefType>(mm.c.getType());
  mm.inType = aType.getElementType();
  mm.accType = cType.getElementType();
  mm.vnni = 4;
  mm.rowShift = rowShift;
  mm.kw = bType.getDimSize(2);
  mm.tapGroups = bType.getDimSize(3);
  if (!mm.inType.isInteger(8) || !bType.getElementType().isInteger(8) || !mm.accType.isInteger(32) ||
      ShapedType::isDynamicShape(bType.getShape().drop_front()) || aType.getDimSize(1) != mm.tapGroups ||
      aType.getDimSize(2) != 4 || bType.getDimSize(4) != kPanel || bType.getDimSize(5) != 4 ||
      cType.getDimSize(2) != kPanel || mm.tapGroups % kTileRows != 0 || ShapedType::isDynamic(cType.getDimSize(0)) ||
      cType.getDimSize(0) % kTileRows != 0)
    return failure();
  if (!aType.areTrailingDimsContiguous(2) || !bType.areTrailingDimsContiguous(5) ||
      !cType.areTrailingDimsContiguous(1))
    return failure();
  mm.b = memref::CollapseShapeOp::create(builder, op.getLoc(), b,
                                         ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}, {5}});
  mm.kGroups = cast<MemRefType>(mm.b.getType()).getDimSize(1);
  mm.zextLhs = extendsUnsigned(*op.getBlock(), 0);
  mm.zextRhs = extendsUnsigned(*op.getBlock(), 1);
  return mm;
}

FailureOr<AmxContraction> match(OpBuilder &builder, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  if (std::optional<int64_t> rowShift = cuvil::matchShiftedRowsContraction(op))
    return matchShiftedRows(builder, op, *rowShift);
  bool batched = hasVnniMaps(op, /*batched=*/true);
  if (!batched && !hasVnniMaps(op, /*batched=*/false))
    return failure();
  AmxContraction mm;
  mm.a = op.getDpsInputOperand(0)->get();
  mm.b = op.getDpsInputOperand(1)->get();
  mm.c = op.getDpsInitOperand(0)->get();
  if (batched) {
    for (Value v : {mm.a, mm.b, mm.c})
      if (cast<MemRefType>(v.getType()).getDimSize(0) != 1)
        return failure();
    mm.a = dropUnitBatch(builder, op.getLoc(), mm.a);
    mm.b = dropUnitBatch(builder, op.getLoc(), mm.b);
    mm.c = dropUnitBatch(builder, op.getLoc(), mm.c);
  }
  auto aType = cast<MemRefType>(mm.a.getType());
  auto bType = cast<MemRefType>(mm.b.getType());
  auto cType = cast<MemRefType>(mm.c.getType());
  mm.inType = aType.getElementType();
  mm.accType = cType.getElementType();
  mm.kGroups = aType.getDimSize(1);
  mm.vnni = aType.getDimSize(2);
  bool bf16 = mm.inType.isBF16() && bType.getElementType().isBF16() && mm.accType.isF32() && mm.vnni == 2;
  bool int8 = mm.inType.isInteger(8) && bType.getElementType().isInteger(8) && mm.accType.isInteger(32) &&
              mm.vnni == 4;
  if (!(bf16 || int8) || ShapedType::isDynamic(mm.kGroups) || bType.getDimSize(1) != mm.kGroups ||
      bType.getDimSize(2) != kPanel || bType.getDimSize(3) != mm.vnni || cType.getDimSize(2) != kPanel)
    return failure();
  // Every row of a tile is contiguous: the innermost dimensions have unit
  // stride (A's k groups, B's columns, C's columns).
  if (!aType.areTrailingDimsContiguous(2) || !bType.areTrailingDimsContiguous(2) ||
      !cType.areTrailingDimsContiguous(1))
    return failure();
  if (int8) {
    mm.zextLhs = extendsUnsigned(*op.getBlock(), 0);
    mm.zextRhs = extendsUnsigned(*op.getBlock(), 1);
  }
  return mm;
}

/// Whether a tile's 16 rows `rowBytes` apart fall into few L1 sets: with a
/// row stride of a multiple of 1 KB they share at most 4 of the 64 sets (4
/// KB apart: one), so the two A tiles of a row block (32 lines) evict each
/// other and the B and C lines of those sets between their two uses.
bool rowsShareL1Sets(int64_t rowBytes) {
  constexpr int64_t kL1Sets = 64;
  return rowBytes % kTileRowBytes == 0 && std::gcd(rowBytes / kTileRowBytes, kL1Sets) >= 16;
}

/// Whether `ofr` is a multiple of 16: a constant, or an affine.apply whose
/// expression is (the forall's row offsets, iv * tile rows).
bool isMultipleOfTileRows(OpFoldResult ofr) {
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return *c % kTileRows == 0;
  auto value = dyn_cast<Value>(ofr);
  auto apply = value ? value.getDefiningOp<affine::AffineApplyOp>() : nullptr;
  return apply && apply.getAffineMap().getNumResults() == 1 &&
         apply.getAffineMap().getResult(0).isMultipleOf(kTileRows);
}

/// Whether, inside `forall`, `root` (or a subview of it) is only A of marked
/// tiles: nothing there writes it, so a copy made before the forall reads
/// what the tiles would.
bool onlyReadByAmxTiles(Value root, scf::ForallOp forall) {
  auto readsAsA = [](Operation *user, Value v) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    return generic && generic->hasAttr(kAmxMarker) && generic.getDpsInputOperand(0)->get() == v &&
           !llvm::is_contained(generic.getDpsInits(), v);
  };
  for (Operation *user : root.getUsers()) {
    if (!forall->isAncestor(user))
      continue;
    if (auto sub = dyn_cast<memref::SubViewOp>(user)) {
      if (!llvm::all_of(sub->getUsers(), [&](Operation *u) { return readsAsA(u, sub.getResult()); }))
        return false;
      continue;
    }
    if (!readsAsA(user, root))
      return false;
  }
  return true;
}

/// A as whole tiles: [rows / 16][k groups / 16][16][16 v], each tile's 16
/// rows of 64 bytes contiguous (1 KB), rows zero-padded to a multiple of 16.
/// `rowOffset` is the tile's first row in it (a multiple of 16).
struct TiledA {
  Value mem, rowOffset;
};

/// A copied once per kernel call, before the tile's scf.forall, as whole
/// tiles (TiledA), where its rows share L1 sets (rowsShareL1Sets). In place,
/// the two A tiles of a row block are 32 lines in at most 4 sets, and each
/// tile load is 16 requests to lines 1 KB or more apart; as whole tiles, a
/// load reads 16 consecutive lines. Measured, Xeon model 207, in one process
/// against reading A in place (tile-a=0), 8-12 rounds interleaved, time
/// new / old (min..median): MLP 64x1024-4096-4096-1024 bf16 0.86..0.93 (1
/// thread; its 4096 x 4096 layer 2.96 against 3.21 ms), 0.57..0.95 (2);
/// BERT-base bf16 and int8 (6 KB / 3 KB rows in the FFN's second layer)
/// 0.98..1.01 at 1 and 2 threads. Made before the forall, not per tile: the
/// tiles of one panel each would copy all of A once per panel. Not for a
/// conv over shifted rows, a batched tile, a K tail (copyA()'s per-tile copy
/// then), or an A that is not a whole static buffer from outside the forall
/// (or a subview of one along 16-row multiples), or that the forall writes.
/// `copies` keeps one copy per (forall, A).
std::optional<TiledA> tiledA(linalg::GenericOp op, const AmxContraction &mm,
                             DenseMap<std::pair<Operation *, Value>, Value> &copies) {
  auto forall = op->getParentOfType<scf::ForallOp>();
  if (!forall || mm.rowShift || mm.kGroups % kTileRows != 0)
    return std::nullopt;
  Value a = op.getDpsInputOperand(0)->get();
  auto sub = a.getDefiningOp<memref::SubViewOp>();
  Value root = forall.isDefinedOutsideOfLoop(a) ? a : sub ? sub.getSource() : Value();
  if (!root || !forall.isDefinedOutsideOfLoop(root) || a.getType() != mm.a.getType())
    return std::nullopt;
  if (root == a)
    sub = nullptr;
  auto rootType = dyn_cast<MemRefType>(root.getType());
  if (!rootType || rootType.getRank() != 3 || !rootType.hasStaticShape() || !rootType.getLayout().isIdentity() ||
      rootType.getDimSize(1) != mm.kGroups || rootType.getDimSize(2) != mm.vnni)
    return std::nullopt;
  if (sub && (!isMultipleOfTileRows(sub.getMixedOffsets()[0]) || !llvm::all_of(sub.getStaticStrides(), [](int64_t s) {
                return s == 1;
              })))
    return std::nullopt;
  int64_t elemBytes = mm.inType.getIntOrFloatBitWidth() / 8, width = mm.kGroups * mm.vnni;
  if (!rowsShareL1Sets(width * elemBytes))
    return std::nullopt;
  Location loc = op.getLoc();
  Value &copy = copies[{forall.getOperation(), root}];
  if (!copy) {
    if (!onlyReadByAmxTiles(root, forall))
      return std::nullopt;
    OpBuilder b(forall);
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    int64_t rows = rootType.getDimSize(0), rowTiles = (rows + kTileRows - 1) / kTileRows;
    int64_t kTiles = mm.kGroups / kTileRows, tileWidth = kTileRows * mm.vnni;
    copy = memref::AllocOp::create(b, loc, MemRefType::get({rowTiles, kTiles, kTileRows, tileWidth}, mm.inType),
                                   ValueRange{}, b.getI64IntegerAttr(kTileRowBytes));
    // Row r's 64-byte pieces to row r % 16 of its tiles, zero rows after A's
    // last; the row tiles in parallel (an scf.forall, like the kernel's own
    // tiles; a loop where the kernel's forall is already inside a parallel
    // loop): copied by one thread, BERT-base bf16 at 2 threads took 1.04x the
    // time of reading A in place.
    auto vectorType = VectorType::get({tileWidth}, mm.inType);
    Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(mm.inType)));
    Value zeros = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(vectorType)));
    auto rowsView = MemRefType::get({rows, width}, mm.inType);
    Value src = memref::CollapseShapeOp::create(b, loc, rowsView, root,
                                                ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    OpBuilder::InsertionGuard guard(b);
    Value tileRow;
    if (forall->getParentOfType<scf::ForallOp>() || forall->getParentOfType<scf::ParallelOp>()) {
      auto tileLoop = scf::ForOp::create(b, loc, index(0), index(rowTiles), index(1));
      b.setInsertionPointToStart(tileLoop.getBody());
      tileRow = tileLoop.getInductionVar();
    } else {
      auto tileLoop = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(rowTiles)}, ValueRange{},
                                            std::nullopt);
      b.setInsertionPointToStart(tileLoop.getBody());
      tileRow = tileLoop.getInductionVars()[0];
    }
    auto rowLoop = scf::ForOp::create(b, loc, index(0), index(kTileRows), index(1));
    b.setInsertionPointToStart(rowLoop.getBody());
    Value i = rowLoop.getInductionVar();
    Value r = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tileRow, index(kTileRows)), i);
    Value inA = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, index(rows));
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(kTiles), index(1));
    b.setInsertionPointToStart(kLoop.getBody());
    Value k = kLoop.getInductionVar();
    SmallVector<Value> at = {tileRow, k, i, index(0)};
    Value piece = scf::IfOp::create(
                      b, loc, inA,
                      [&](OpBuilder &then, Location l) {
                        Value col = arith::MulIOp::create(then, l, k, index(tileWidth));
                        Value v = vector::TransferReadOp::create(then, l, vectorType, src, ValueRange{r, col}, zero,
                                                                 ArrayRef<bool>{true});
                        scf::YieldOp::create(then, l, v);
                      },
                      [&](OpBuilder &otherwise, Location l) { scf::YieldOp::create(otherwise, l, zeros); })
                      .getResult(0);
    vector::TransferWriteOp::create(b, loc, piece, copy, at, ArrayRef<bool>{true});
    b.setInsertionPointAfter(forall);
    memref::DeallocOp::create(b, loc, copy);
  }
  OpBuilder b(op);
  Value rowOffset = sub ? getValueOrCreateConstantIndexOp(b, loc, sub.getMixedOffsets()[0])
                        : arith::ConstantIndexOp::create(b, loc, 0).getResult();
  return TiledA{copy, rowOffset};
}

/// Where the accumulators start: the schedule's fused init (`cuvil.amx_init`)
/// when it is a zero fill (tilezero) or the broadcast of one row of C's
/// columns down its rows, `row[panel][0 : 64]` (int8's zero-point correction
/// per column, a bias), loaded with row stride 0; else C as it is.
struct AccInit {
  Operation *op = nullptr; // the init, erased once the tiles start from it
  Value row;               // [panels][64] for a broadcast; null for zeros
};

constexpr StringLiteral kAmxInitMarker = "cuvil.amx_init";

/// `op`'s marked init, if the accumulators can start from it: the closest
/// marked op before `op` in its block that writes `op`'s C.
AccInit findInit(linalg::GenericOp op, const AmxContraction &mm) {
  Value c = op.getDpsInitOperand(0)->get();
  Operation *init = nullptr;
  for (Operation *prev = op->getPrevNode(); prev && !init; prev = prev->getPrevNode())
    if (prev->hasAttr(kAmxInitMarker))
      init = prev;
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(init);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() || linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != c)
    return {};
  if (auto fill = dyn_cast<linalg::FillOp>(init)) {
    Value v = fill.getInputs()[0];
    if (matchPattern(v, m_Zero()) || matchPattern(v, m_AnyZeroFloat()))
      return {init, Value()};
    return {};
  }
  // A broadcast: yields its one input, which is indexed by C's panel and
  // column loops only (the last two), with unit stride along the columns.
  auto generic = dyn_cast<linalg::GenericOp>(init);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumReductionLoops() != 0)
    return {};
  auto yield = cast<linalg::YieldOp>(generic.getBlock()->getTerminator());
  if (yield.getValues().size() != 1 || yield.getValues()[0] != generic.getBlock()->getArgument(0))
    return {};
  unsigned n = generic.getNumLoops();
  MLIRContext *ctx = op.getContext();
  AffineMap rowMap = AffineMap::get(n, 0, {getAffineDimExpr(n - 2, ctx), getAffineDimExpr(n - 1, ctx)}, ctx);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Value row = generic.getDpsInputOperand(0)->get();
  auto rowType = dyn_cast<MemRefType>(row.getType());
  if (maps[0] != rowMap || !maps[1].isIdentity() || !rowType || rowType.getElementType() != mm.accType ||
      !rowType.areTrailingDimsContiguous(1))
    return {};
  return {init, row};
}

/// Where a block's products read A: rows of `mem` (A's padded copy, K tail
/// included) with `stride`.
struct ASource {
  Value mem, stride;
  /// With A read in place: its last rows % 16 (when there are any) copied
  /// to a zero-padded 16-row buffer, which the last row block reads.
  Value rest = Value();
};

/// A range of K: `steps` products of 16 groups from group `from`, then, if
/// `withTail`, the product of the zero-padded last kGroups % 16 groups.
struct KRange {
  Value from;
  int64_t steps;
  bool withTail;
  bool first = false; // the accumulators start from the init (AccInit)
};

/// C's indices of (row, column in the half panel).
using CIndices = std::function<SmallVector<Value>(Value, Value)>;

/// Emits the tile code of one contraction in place of `op`.
class AmxEmitter {
public:
  AmxEmitter(OpBuilder &b, Location loc, const AmxContraction &mm, const AccInit &init,
             std::optional<TiledA> tiled, int64_t prefetchGroups, bool interleaveLoads, int64_t kStepsPerChunk)
      : b(b), loc(loc), mm(mm), init(init), tiled(tiled), prefetchGroups(prefetchGroups),
        interleaveLoads(interleaveLoads), kStepsPerChunk(kStepsPerChunk) {}

  void emit() {
    Value c0 = index(0);
    Value rows = memref::DimOp::create(b, loc, mm.c, 0);
    Value panels = memref::DimOp::create(b, loc, mm.b, 0);
    cStride = stride(mm.c, 0);
    bStride = stride(mm.b, 1);
    Value rows32 = roundDown(rows, 32), rows16 = roundDown(rows, kTileRows);
    ASource a = tiled            ? ASource{tiled->mem, index(kTileRows * mm.vnni)}
                : readsAInPlace() ? ASource{mm.a, stride(mm.a, 0)}
                                  : copyA(rows, rows16);
    Value aCopy = a.mem == mm.a || tiled ? Value() : a.mem;
    int64_t staticRows = cast<MemRefType>(mm.c.getType()).getDimSize(0);
    bool raggedRows = ShapedType::isDynamic(staticRows) || staticRows % kTileRows != 0;
    if (!aCopy && !tiled && raggedRows)
      a.rest = copyLastRows(rows, rows16);
    if (tailGroups() > 0)
      bTail = memref::AllocOp::create(b, loc, MemRefType::get({1, kTileRows, kPanel, mm.vnni}, mm.inType));
    if (raggedRows)
      cRest = memref::AllocOp::create(b, loc, MemRefType::get({kTileRows, kPanel}, mm.accType));
    auto panelLoop = scf::ForOp::create(b, loc, c0, panels, index(1));
    b.setInsertionPointToStart(panelLoop.getBody());
    Value p = panelLoop.getInductionVar();
    if (bTail) {
      Value groups = index(tailGroups()), all = index(kTileRows), panel = index(kPanel), v = index(mm.vnni);
      copyRows(rowView(mm.b, {p, index(fullGroups()), c0, c0}, {index(1), groups, panel, v}, 1), groups,
               rowView(bTail, {c0, c0, c0, c0}, {index(1), all, panel, v}, 1), all, kPanel * mm.vnni);
    }
    // K in chunks; per chunk every row block, and per row block both half
    // panels (32 columns: 2 accumulator tiles each), one after the other:
    // the second half reads the A tiles the first just loaded (from L1), the
    // two together read each 256-byte k-group row of B's panel whole, and
    // the chunk's B (32 KB) stays in L1 for the next row block.
    forKRanges([&](const KRange &k) {
      forRowBlocks(rows, rows16, rows32, p, k.first, [&](int rowTiles, Value m, bool rest, Value c,
                                                         Value cRowStride, const CIndices &at) {
        // The last rows % 16 read A's 16-row copy from its row 0, when A
        // is read in place; else A's rows where they are (or in copyA's).
        ASource src = rest && a.rest ? ASource{a.rest, index(mm.kGroups * mm.vnni)} : a;
        Value aM = rest && a.rest ? c0 : m;
        for (int64_t h = 0; h < kPanel; h += 32)
          block(rowTiles, m, aM, src, p, index(h), c, cRowStride, at, k);
      });
    });
    b.setInsertionPointAfter(panelLoop);
    for (Value buffer : {aCopy, a.rest, bTail, cRest})
      if (buffer)
        memref::DeallocOp::create(b, loc, buffer);
  }

private:
  OpBuilder &b;
  Location loc;
  const AmxContraction &mm;
  const AccInit &init;
  std::optional<TiledA> tiled; // A read from tiledA()'s copy
  int64_t prefetchGroups;
  bool interleaveLoads;
  /// Tile products per K chunk between the accumulators' loads and stores
  /// (the k-chunk option).
  int64_t kStepsPerChunk;
  Value bStride, cStride;
  Value bTail; // [1][16][64][v]: the current panel's K tail, zero-padded
  Value cRest; // [16][64]: C's last rows % 16 of the current panel, if any

  int64_t fullGroups() const { return mm.kGroups - tailGroups(); }
  int64_t tailGroups() const { return mm.kGroups % kTileRows; }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// Whether the products can read A where it is, without copyA()'s copy:
  /// whole tiles along K (no K tail) and rows that start on cache lines (a
  /// static row stride of whole 64-byte lines); the last rows % 16, if any,
  /// go through copyLastRows()'s 16-row buffer. The
  /// copy reads and writes A once more per forall tile (the tiles of one row
  /// block each copy it): for a one-panel matmul (64 output channels) it
  /// doubled the tile loads of A. Its padded row stride was for strides of
  /// a power of two (K = 4096 bf16 puts a tile's 16 rows into one L1 set:
  /// session 15 measured 64x4096x4096 with K = 4096 1.37x the time of K =
  /// 4128), yet the MLP below, which has such a layer, is faster without it.
  /// Measured without the copy, interleaved processes, Xeon model 167:
  /// BERT-base bf16 0.88x (2 threads) and 0.91x (1), then 0.96x / 0.98x with
  /// its 6 KB rows in place too; MLP 64x1024-4096-4096-1024 bf16 0.91x /
  /// 0.93x; ResNet-18 int8 0.90x (1 thread).
  bool readsAInPlace() const {
    auto type = cast<MemRefType>(mm.a.getType());
    if (mm.rowShift)
      return true;   // whole tiles by construction (matchShiftedRows), rows of C bytes
    if (tailGroups() != 0)
      return false;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(strides[0]))
      return false;
    return strides[0] * (mm.inType.getIntOrFloatBitWidth() / 8) % kTileRowBytes == 0;
  }

  /// A's last rows % 16 (rows past rows16), zero-padded to a 16-row buffer
  /// the last row block reads, where A is read in place: a row count that
  /// is not a static multiple of 16 (a ResNet's 7 x 7 = 49 rows, forall
  /// tiles of 196 rows in 64s) no longer copies all of A. The copy is
  /// skipped at run time when there are no such rows.
  Value copyLastRows(Value rows, Value rows16) {
    Value c0 = index(0), groups = index(mm.kGroups), vnni = index(mm.vnni);
    Value buf = memref::AllocOp::create(b, loc, MemRefType::get({kTileRows, mm.kGroups, mm.vnni}, mm.inType));
    Value hasRest = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rows16, rows);
    auto ifRest = scf::IfOp::create(b, loc, hasRest, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRest.getThenRegion().front());
    Value count = arith::SubIOp::create(b, loc, rows, rows16);
    copyRows(rowView(mm.a, {rows16, c0, c0}, {count, groups, vnni}, 0), count,
             rowView(buf, {c0, c0, c0}, {index(kTileRows), groups, vnni}, 0), index(kTileRows),
             mm.kGroups * mm.vnni);
    return buf;
  }

  /// A's rows copied to a buffer the products read instead, where
  /// readsAInPlace() says no:
  /// - its row stride is A's K (rounded up to whole tiles) plus 64 bytes (not
  ///   a power of two, see readsAInPlace());
  /// - the K tail is zero-padded to a whole tile and the rows to a multiple
  ///   of 16, so every product reads whole 16 x 64-byte tiles.
  /// The whole tiles are copied by the tile unit itself (a load and a store
  /// per KB); the K tail and the last rows % 16 by copyRows().
  ASource copyA(Value rows, Value rows16) {
    Value c0 = index(0);
    int64_t paddedGroups = fullGroups() + (tailGroups() > 0 ? kTileRows : 0);
    int64_t rowGroups = paddedGroups + kTileRows;
    Value rowsPad = roundDown(arith::AddIOp::create(b, loc, rows, index(kTileRows - 1)), kTileRows);
    Value buf = memref::AllocOp::create(b, loc, MemRefType::get({ShapedType::kDynamic, rowGroups, mm.vnni}, mm.inType),
                                        ValueRange{rowsPad});
    Value vnni = index(mm.vnni);
    // Whole tiles.
    Value aStride = stride(mm.a, 0), bufStride = index(rowGroups * mm.vnni);
    amx::TileType inTile = tile(mm.inType);
    auto rowLoop = scf::ForOp::create(b, loc, c0, rows16, index(kTileRows));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rowLoop.getBody());
      auto kLoop = scf::ForOp::create(b, loc, c0, index(fullGroups()), index(kTileRows));
      b.setInsertionPointToStart(kLoop.getBody());
      ValueRange at{rowLoop.getInductionVar(), kLoop.getInductionVar(), c0};
      Value t = amx::TileLoadOp::create(b, loc, inTile, mm.a, at, aStride);
      amx::TileStoreOp::create(b, loc, buf, at, t, bufStride);
    }
    // The K tail, zero-padded.
    Value full = index(fullGroups());
    if (tailGroups() > 0)
      copyRows(rowView(mm.a, {c0, full, c0}, {rows, index(tailGroups()), vnni}, 0), rows,
               rowView(buf, {c0, full, c0}, {rowsPad, index(kTileRows), vnni}, 0), rowsPad, kTileRows * mm.vnni);
    // The last rows % 16, zero-padded to 16 (no rows when rows % 16 = 0).
    if (fullGroups() > 0) {
      Value rest = arith::SubIOp::create(b, loc, rows, rows16), restPad = arith::SubIOp::create(b, loc, rowsPad, rows16);
      copyRows(rowView(mm.a, {rows16, c0, c0}, {rest, full, vnni}, 0), rest,
               rowView(buf, {rows16, c0, c0}, {restPad, full, vnni}, 0), restPad, fullGroups() * mm.vnni);
    }
    return ASource{buf, bufStride};
  }

  Value roundDown(Value v, int64_t multiple) {
    Value rem = arith::RemUIOp::create(b, loc, v, index(multiple));
    return arith::SubIOp::create(b, loc, v, rem);
  }

  /// Stride (in elements) of dimension `dim` of a memref.
  Value stride(Value memref, unsigned dim) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    return meta.getStrides()[dim];
  }

  /// The box of `sizes` at `offsets` in `mem` as a 2-D memref of rows:
  /// dimension `rowDim` indexes the rows, the dimensions after it (contiguous
  /// in memory) make one row, the ones before it have size 1 and are dropped.
  Value rowView(Value mem, ArrayRef<Value> offsets, ArrayRef<Value> sizes, unsigned rowDim) {
    auto type = cast<MemRefType>(mem.getType());
    SmallVector<OpFoldResult> offs = getAsOpFoldResult(offsets), szs = getAsOpFoldResult(sizes);
    SmallVector<OpFoldResult> unit(type.getRank(), b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (int64_t d = rowDim; d < type.getRank(); ++d)
      shape.push_back(getConstantIntValue(szs[d]).value_or(ShapedType::kDynamic));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(shape, type, offs, szs, unit);
    Value view = memref::SubViewOp::create(b, loc, viewType, mem, offs, szs, unit);
    ReassociationIndices row;
    for (int64_t d = 1; d < static_cast<int64_t>(shape.size()); ++d)
      row.push_back(d);
    return row.size() > 1 ? memref::CollapseShapeOp::create(b, loc, view, {ReassociationIndices{0}, row}).getResult()
                          : view;
  }

  /// dst[r][0 : width) = src[r][0 : width) for r < srcRows, zeros past the end
  /// of src's rows, and zero rows for r in [srcRows, dstRows) (2-D memrefs of
  /// contiguous rows, `width` a multiple of 64 bytes; no zero rows when
  /// `dstRows` is null). As 64-byte vectors:
  /// this runs after vectorization, where a linalg.copy or fill becomes a
  /// scalar loop nest (the int8 ResNet-18 stem's 196 tiles spent most of
  /// their time in those).
  void copyRows(Value src, Value srcRows, Value dst, Value dstRows, int64_t width) {
    Type elem = cast<MemRefType>(dst.getType()).getElementType();
    int64_t lanes = kTileRowBytes / (elem.getIntOrFloatBitWidth() / 8);
    assert(width % lanes == 0 && "rows are whole 64-byte vectors");
    auto vectorType = VectorType::get({lanes}, elem);
    Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
    Value zeros = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(vectorType)));
    auto forEachVector = [&](Value from, Value to, const std::function<void(Value, Value)> &body) {
      OpBuilder::InsertionGuard guard(b);
      auto rowLoop = scf::ForOp::create(b, loc, from, to, index(1));
      b.setInsertionPointToStart(rowLoop.getBody());
      auto colLoop = scf::ForOp::create(b, loc, index(0), index(width), index(lanes));
      b.setInsertionPointToStart(colLoop.getBody());
      body(rowLoop.getInductionVar(), colLoop.getInductionVar());
    };
    forEachVector(index(0), srcRows, [&](Value r, Value col) {
      Value v = vector::TransferReadOp::create(b, loc, vectorType, src, ValueRange{r, col}, zero,
                                               ArrayRef<bool>{false});
      vector::TransferWriteOp::create(b, loc, v, dst, ValueRange{r, col}, ArrayRef<bool>{true});
    });
    if (dstRows)
      forEachVector(srcRows, dstRows, [&](Value r, Value col) {
        vector::TransferWriteOp::create(b, loc, zeros, dst, ValueRange{r, col}, ArrayRef<bool>{true});
      });
  }

  /// A's row and group for C's row `row` and K group `k`: the same, but for
  /// a conv over shifted rows, where k is group k % tapGroups of tap
  /// k / tapGroups = (kh, kw), whose rows are shifted by kh * rowShift + kw.
  std::pair<Value, Value> aIndices(Value row, Value k) {
    if (!mm.rowShift)
      return {row, k};
    Value tap = arith::DivUIOp::create(b, loc, k, index(mm.tapGroups));
    Value group = arith::RemUIOp::create(b, loc, k, index(mm.tapGroups));
    Value kh = arith::DivUIOp::create(b, loc, tap, index(mm.kw));
    Value kw = arith::RemUIOp::create(b, loc, tap, index(mm.kw));
    Value shift = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, kh, index(mm.rowShift)), kw);
    return {arith::AddIOp::create(b, loc, row, shift), group};
  }

  amx::TileType tile(Type elem) {
    int64_t cols = kTileRowBytes / (elem.getIntOrFloatBitWidth() / 8);
    return amx::TileType::get({kTileRows, cols}, elem);
  }

  /// rowTiles x 2 accumulators for the rows [m, m + 16 rowTiles) of C (A's
  /// from row aM of `a`) and the half panel (p, h), over the K range `k`:
  /// loaded from C (from the init in the first range), the range's
  /// products, stored; `cIndices(row, col)` addresses C.
  void block(int rowTiles, Value m, Value aM, const ASource &a, Value p, Value h, Value c, Value cRowStride,
             const CIndices &cIndices, const KRange &k) {
    amx::TileType inTile = tile(mm.inType), accTile = tile(mm.accType);
    auto rowOf = [&](int i) { return arith::AddIOp::create(b, loc, m, index(i * kTileRows)).getResult(); };
    auto aRowOf = [&](int i) { return arith::AddIOp::create(b, loc, aM, index(i * kTileRows)).getResult(); };
    auto colOf = [&](int j) { return index(j * kTileRows); };
    // One product: A's rows at K group k of `aMem`, B's 16 groups at
    // (bMem, bPanel, bK) with `bStrideNow`.
    auto product = [&](SmallVector<Value> &acc, Value aMem, Value aStride, Value aK, Value bMem, Value bPanel,
                       Value bK, Value bStrideNow) {
      auto loadA = [&](int i) {
        auto [row, group] = aIndices(aRowOf(i), aK);
        SmallVector<Value> at = {row, group, index(0)};
        if (tiled && aMem == tiled->mem)   // [rows / 16][groups / 16][16][16 v]
          at = {arith::DivUIOp::create(b, loc, arith::AddIOp::create(b, loc, tiled->rowOffset, row), index(kTileRows)),
                arith::DivUIOp::create(b, loc, group, index(kTileRows)), index(0), index(0)};
        return amx::TileLoadOp::create(b, loc, inTile, aMem, at, aStride).getResult();
      };
      auto loadB = [&](int j) {
        Value col = arith::AddIOp::create(b, loc, h, colOf(j));
        return amx::TileLoadOp::create(b, loc, inTile, bMem, ValueRange{bPanel, bK, col, index(0)}, bStrideNow)
            .getResult();
      };
      // Loads interleaved with the products that need them, A(i + 1) before
      // the last product of row i (A0 B0 C00 B1 A1 C01 C10 C11): a product
      // starts as soon as its two tiles are in, and A0 is still live when A1
      // is loaded, so the two get distinct tile registers, as in oneDNN's
      // kernels. (Loaded after C01, A1 took A0's register, its load ordered
      // after C01's read of it; measured no different, 128x768x3072, 1
      // thread: the tile unit is not waiting on that load.)
      SmallVector<Value> bs(2), as(rowTiles);
      if (!interleaveLoads) {
        for (int i = 0; i < rowTiles; ++i)
          as[i] = loadA(i);
        bs = {loadB(0), loadB(1)};
      }
      for (int i = 0; i < rowTiles; ++i) {
        if (!as[i])
          as[i] = loadA(i);
        for (int j = 0; j < 2; ++j) {
          if (!bs[j])
            bs[j] = loadB(j);
          if (j == 1 && i + 1 < rowTiles && !as[i + 1])
            as[i + 1] = loadA(i + 1);
          Value &accIJ = acc[i * 2 + j];
          if (mm.accType.isF32())
            accIJ = amx::TileMulFOp::create(b, loc, accTile, as[i], bs[j], accIJ);
          else
            accIJ = amx::TileMulIOp::create(b, loc, accTile, as[i], bs[j], accIJ,
                                            mm.zextLhs ? b.getUnitAttr() : UnitAttr(),
                                            mm.zextRhs ? b.getUnitAttr() : UnitAttr());
        }
      }
    };
    auto mainProduct = [&](SmallVector<Value> &acc, Value k) {
      product(acc, a.mem, a.stride, k, mm.b, p, k, bStride);
      prefetchB(p, h, k, m);
    };
    // Accumulator (i, j)'s indices in C: row tile i, column tile j of the
    // half panel h.
    auto cAt = [&](int i, int j) { return cIndices(rowOf(i), arith::AddIOp::create(b, loc, h, colOf(j))); };
    auto loadAcc = [&]() {
      SmallVector<Value> acc;
      for (int i = 0; i < rowTiles; ++i)
        for (int j = 0; j < 2; ++j) {
          if (!k.first)
            acc.push_back(amx::TileLoadOp::create(b, loc, accTile, c, cAt(i, j), cRowStride));
          else if (!init.row)
            acc.push_back(amx::TileZeroOp::create(b, loc, accTile));
          else   // the row's 16 columns in every row of the tile
            acc.push_back(amx::TileLoadOp::create(b, loc, accTile, init.row,
                                                  ValueRange{p, arith::AddIOp::create(b, loc, h, colOf(j))},
                                                  index(0)));
        }
      return acc;
    };
    auto storeAcc = [&](ArrayRef<Value> acc) {
      for (int i = 0; i < rowTiles; ++i)
        for (int j = 0; j < 2; ++j)
          amx::TileStoreOp::create(b, loc, c, cAt(i, j), acc[i * 2 + j], cRowStride);
    };
    SmallVector<Value> acc = loadAcc();
    for (int64_t s = 0; s < k.steps; ++s)
      mainProduct(acc, arith::AddIOp::create(b, loc, k.from, index(s * kTileRows)));
    if (k.withTail)
      product(acc, a.mem, a.stride, index(fullGroups()), bTail, index(0), index(0), index(kPanel * mm.vnni));
    storeAcc(acc);
  }

  /// Products per K chunk for `steps` products: kStepsPerChunk, or one more
  /// where chunks of that size cover K exactly and kStepsPerChunk's leave a
  /// short last chunk (a round trip of the accumulators through L1 per row
  /// block for a few products). A 3 x 3 int8 conv over C channels has K =
  /// 9 x C / 64 products: chunks of 9, not 8 and a last one of 1 to 8 (the
  /// 9 products' B, 36 KB, still fits L1's 48 KB). ResNet-18 int8 (Xeon
  /// model 207, interleaved, 10 rounds): 0.946..0.966x the time at 1 thread,
  /// 0.955..0.980x at 2. Taking one more wherever it saved a chunk made
  /// BERT-base bf16 1.016x slower (its K = 3072 layers: 11 chunks of 9
  /// instead of 12 of 8), k-chunk=9 everywhere BERT-base int8 1.01x.
  int64_t stepsPerChunk(int64_t steps) const {
    int64_t more = kStepsPerChunk + 1;
    return steps % more == 0 && steps % kStepsPerChunk != 0 ? more : kStepsPerChunk;
  }

  /// Calls `body` for each K range: whole chunks of stepsPerChunk() products
  /// in a loop, then the remaining products and the zero-padded K tail.
  /// With an init, the first range (a chunk, or all of K when shorter) is
  /// emitted on its own, its accumulators starting from the init.
  void forKRanges(const std::function<void(const KRange &)> &body) {
    int64_t fullSteps = fullGroups() / kTileRows, done = 0;
    int64_t chunk = stepsPerChunk(fullSteps);
    if (init.op) {
      done = std::min(fullSteps, chunk);
      body(KRange{index(0), done, done == fullSteps && tailGroups() > 0, /*first=*/true});
      if (done == fullSteps)
        return;
    }
    int64_t chunks = (fullSteps - done) / chunk, tailSteps = (fullSteps - done) % chunk;
    int64_t from = done * kTileRows, end = from + chunks * chunk * kTileRows;
    if (chunks > 0) {
      auto kLoop = scf::ForOp::create(b, loc, index(from), index(end), index(chunk * kTileRows));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      body(KRange{kLoop.getInductionVar(), chunk, false});
    }
    if (tailSteps > 0 || tailGroups() > 0)
      body(KRange{index(end), tailSteps, tailGroups() > 0});
  }

  using RowBlockBody =
      std::function<void(int rowTiles, Value m, bool rest, Value c, Value cRowStride, const CIndices &)>;

  /// Calls `body` for the row blocks of the half panel (p, h): blocks of 32
  /// rows, then of 16, then the last rows % 16 (A's are zero-padded to 16 by
  /// copyA; C's are copied to a 16-row buffer and back).
  void forRowBlocks(Value rows, Value rows16, Value rows32, Value p, bool first, const RowBlockBody &body) {
    Value c0 = index(0);
    CIndices cIndices = [&, p](Value row, Value col) -> SmallVector<Value> { return {row, p, col}; };
    for (auto [from, to, rowTiles] : {std::tuple{c0, rows32, 2}, std::tuple{rows32, rows16, 1}}) {
      auto rowLoop = scf::ForOp::create(b, loc, from, to, index(rowTiles * kTileRows));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rowLoop.getBody());
      body(rowTiles, rowLoop.getInductionVar(), /*rest=*/false, mm.c, cStride, cIndices);
    }
    if (!cRest)
      return;   // rows is a static multiple of 16
    Value hasRest = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rows16, rows);
    auto ifRest = scf::IfOp::create(b, loc, hasRest, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifRest.getThenRegion().front());
    Value m = rows16, count = arith::SubIOp::create(b, loc, rows, rows16);
    // C[m : m + count][p][0 : 64] <-> cRest[0 : count][0 : 64] (per K chunk:
    // the chunk's products accumulate into the copy, which goes back after).
    Value cRows = rowView(mm.c, {m, p, c0}, {count, index(1), index(kPanel)}, 0);
    CIndices bufIndices = [&, m](Value row, Value col) -> SmallVector<Value> {
      return {arith::SubIOp::create(b, loc, row, m), col};
    };
    if (!first)   // the first range's accumulators start from the init
      copyRows(cRows, count, cRest, Value(), kPanel);
    body(1, m, /*rest=*/true, cRest, index(kPanel), bufIndices);
    copyRows(cRest, count, cRows, Value(), kPanel);
  }

  /// Software prefetch of the half panel's B rows `prefetchGroups` K groups
  /// ahead of k: a weight streamed from DRAM arrives as 64-byte pieces of
  /// rows 256 bytes apart, a pattern the hardware prefetchers follow poorly
  /// (BERT-base's layers read 170 MB of bf16 weights per call). Near B's end
  /// the rows are clamped to the last ones: the indices stay in bounds, as
  /// memref.prefetch requires. Only in the first row block of the tile
  /// (m == 0): the later ones read the same chunk of B from L1 or L2, and
  /// prefetching it again cost them issue slots. Measured against no
  /// prefetch at all, 1 thread, Xeon model 207, interleaved: prefetching in
  /// every row block made BERT-base bf16 1.03x, int8 ~1.0x faster and
  /// ResNet-18 int8 1.08x slower; in the first row block only, 1.07x,
  /// 1.03x faster and 1.05x slower (models whose weights stay in cache lose:
  /// 64x1024-4096-4096-1024 int8 / bf16 1.05x / 1.04x slower; the pipeline
  /// runs them with prefetch-groups=0, cuvil.scheduling.prefetch_weights).
  void prefetchB(Value p, Value h, Value k, Value m) {
    if (prefetchGroups <= 0)
      return;
    OpBuilder::InsertionGuard guard(b);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, m, index(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
    int64_t rows = std::min(kTileRows, mm.kGroups);
    Value ahead = arith::MinSIOp::create(b, loc, arith::AddIOp::create(b, loc, k, index(prefetchGroups)),
                                         index(mm.kGroups - rows));
    for (int64_t r = 0; r < rows; ++r) {
      Value row = arith::AddIOp::create(b, loc, ahead, index(r));
      for (int64_t j = 0; j < 2; ++j) {
        Value col = arith::AddIOp::create(b, loc, h, index(j * kTileRows));
        memref::PrefetchOp::create(b, loc, mm.b, ValueRange{p, row, col, index(0)}, b.getBoolAttr(false),
                                   b.getI32IntegerAttr(2), b.getBoolAttr(true));
      }
    }
  }

};

struct CuvilAmxMatmulPass : cuvil::impl::CuvilAmxMatmulBase<CuvilAmxMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    if (kChunk < 1) {
      getOperation().emitError() << "cuvil-amx-matmul: k-chunk must be at least 1 (tile products per K "
                                    "chunk), got "
                                 << static_cast<int64_t>(kChunk);
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> marked;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kAmxMarker))
        marked.push_back(op);
    });
    DenseMap<std::pair<Operation *, Value>, Value> tiledCopies;
    for (linalg::GenericOp op : marked) {
      OpBuilder b(op);
      FailureOr<AmxContraction> mm = match(b, op);
      if (failed(mm)) {
        // The schedule marks only the VNNI contractions it tiled; anything
        // else (a dynamic K) is left to the loops and said so.
        op->emitRemark("cuvil-amx-matmul: not a static-K VNNI-packed contraction on "
                       "buffers (batched: one batch per tile); left to scalar loops");
        op->removeAttr(kAmxMarker);
        continue;
      }
      std::optional<TiledA> tiled = tileA ? tiledA(op, *mm, tiledCopies) : std::nullopt;
      AccInit init = findInit(op, *mm);
      AmxEmitter(b, op.getLoc(), *mm, init, tiled, prefetchGroups, interleaveLoads, kChunk).emit();
      op.erase();
      if (init.op)
        init.op->erase();
    }
  }
};
} // namespace
