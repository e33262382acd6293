//===- CuvilTransformOps.cpp - transform.cuvil.* ops ----------------------===//
//
// See dialects/CuvilTransformOps.td. The tiling and vectorization ops do what
// their transform.structured namesakes do (same upstream entry points, same
// options), only reading the sizes from one param.
//
//===----------------------------------------------------------------------===//
#include "cuvil/TransformOps/CuvilTransformOps.h"
#include "cuvil/Transforms/ShiftedRows.h"
#include "cuvil/Transforms/VnniPairTranspose.h"

#include "cuvil/Dialect/CuvilDialect.h"
#include "cuvil/Dialect/CuvilOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformTypes.h"
#include "mlir/Dialect/Transform/Interfaces/MatchInterfaces.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::transform;

#define GET_OP_CLASSES
#include "CuvilTransformOps.h.inc"

//===----------------------------------------------------------------------===//
// custom<SizeTable>: `[a, %p, c]` or `[[a], [%p, c], ...]`
//===----------------------------------------------------------------------===//
// Stored flat: `static_sizes` (ShapedType::kDynamic where a param stands),
// `row_lengths` (entries per row) and the params in order of appearance.

static ParseResult
parseSizeRowTail(OpAsmParser &parser,
                 SmallVectorImpl<OpAsmParser::UnresolvedOperand> &dynamic,
                 SmallVectorImpl<int64_t> &values, SmallVectorImpl<int64_t> &lengths) {
  int64_t count = 0;
  auto parseEntry = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult isOperand = parser.parseOptionalOperand(operand);
    if (isOperand.has_value()) {
      if (failed(*isOperand))
        return failure();
      dynamic.push_back(operand);
      values.push_back(ShapedType::kDynamic);
    } else {
      int64_t value;
      if (parser.parseInteger(value))
        return failure();
      values.push_back(value);
    }
    ++count;
    return success();
  };
  if (parser.parseCommaSeparatedList(parseEntry) || parser.parseRSquare())
    return failure();
  lengths.push_back(count);
  return success();
}

static ParseResult parseSizeTable(OpAsmParser &parser,
                                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &dynamic,
                                  DenseI64ArrayAttr &staticSizes,
                                  DenseI64ArrayAttr &rowLengths) {
  SmallVector<int64_t> values, lengths;
  if (parser.parseLSquare())
    return failure();
  if (succeeded(parser.parseOptionalLSquare())) {
    while (true) {
      if (parseSizeRowTail(parser, dynamic, values, lengths))
        return failure();
      if (failed(parser.parseOptionalComma()))
        break;
      if (parser.parseLSquare())
        return failure();
    }
    if (parser.parseRSquare())
      return failure();
  } else if (parseSizeRowTail(parser, dynamic, values, lengths)) {
    return failure();
  }
  staticSizes = parser.getBuilder().getDenseI64ArrayAttr(values);
  rowLengths = parser.getBuilder().getDenseI64ArrayAttr(lengths);
  return success();
}

static void printSizeTable(OpAsmPrinter &printer, Operation *, OperandRange dynamic,
                           DenseI64ArrayAttr staticSizes, DenseI64ArrayAttr rowLengths) {
  ArrayRef<int64_t> values = staticSizes.asArrayRef();
  size_t next = 0, nextDynamic = 0;
  bool table = rowLengths.size() != 1;
  if (table)
    printer << "[";
  llvm::interleaveComma(rowLengths.asArrayRef(), printer, [&](int64_t length) {
    printer << "[";
    for (int64_t i = 0; i < length && next < values.size(); ++i, ++next) {
      if (i)
        printer << ", ";
      if (values[next] != ShapedType::kDynamic)
        printer << values[next];
      else if (nextDynamic < dynamic.size())
        printer << dynamic[nextDynamic++];
    }
    printer << "]";
  });
  if (table)
    printer << "]";
}

static LogicalResult verifySizeTable(Operation *op, ArrayRef<int64_t> values,
                                     ValueRange dynamic, ArrayRef<int64_t> rowLengths) {
  if (rowLengths.empty())
    return op->emitOpError() << "expects at least one row of sizes";
  int64_t total = 0;
  for (int64_t length : rowLengths) {
    if (length <= 0)
      return op->emitOpError() << "expects every row of sizes to be non-empty";
    total += length;
  }
  if (total != static_cast<int64_t>(values.size()))
    return op->emitOpError() << "has rows of " << total << " sizes in all but "
                             << values.size() << " sizes";
  int64_t numDynamic = llvm::count(values, ShapedType::kDynamic);
  if (numDynamic != static_cast<int64_t>(dynamic.size()))
    return op->emitOpError() << "has " << numDynamic << " param entries but "
                             << dynamic.size() << " param operands";
  for (int64_t value : values)
    if (value != ShapedType::kDynamic && value < 0)
      return op->emitOpError() << "expects sizes >= 0, got " << value;
  return success();
}

/// The one integer >= `least` that `param` holds, or a definite failure
/// naming `what`.
static DiagnosedSilenceableFailure readOneInteger(Operation *op, TransformState &state, Value param,
                                                  StringRef what, int64_t least, int64_t &value) {
  ArrayRef<Attribute> attrs = state.getParams(param);
  auto intAttr = attrs.size() == 1 ? dyn_cast<IntegerAttr>(attrs.front()) : IntegerAttr();
  if (!intAttr || intAttr.getInt() < least)
    return emitDefiniteFailure(op->getLoc())
           << "expected " << what << " to hold one integer >= " << least << ", got " << attrs.size()
           << " value(s)" << (intAttr ? " (" + std::to_string(intAttr.getInt()) + ")" : std::string());
  value = intAttr.getInt();
  return DiagnosedSilenceableFailure::success();
}

/// The rows of a size table, params replaced by their value.
static DiagnosedSilenceableFailure
resolveSizeTable(Operation *op, TransformState &state, ArrayRef<int64_t> values,
                 ValueRange dynamic, ArrayRef<int64_t> rowLengths,
                 SmallVectorImpl<SmallVector<int64_t>> &rows) {
  size_t next = 0, nextDynamic = 0;
  for (int64_t length : rowLengths) {
    SmallVector<int64_t> &row = rows.emplace_back();
    for (int64_t i = 0; i < length; ++i) {
      int64_t value = values[next++];
      if (value == ShapedType::kDynamic) {
        DiagnosedSilenceableFailure read =
            readOneInteger(op, state, dynamic[nextDynamic++], "each size param", 0, value);
        if (!read.succeeded())
          return read;
      }
      row.push_back(value);
    }
  }
  return DiagnosedSilenceableFailure::success();
}

/// The integers held by a param of packed sizes.
static DiagnosedSilenceableFailure readPackedSizes(Operation *op, TransformState &state,
                                                   Value param, SmallVectorImpl<int64_t> &sizes) {
  for (Attribute attr : state.getParams(param)) {
    auto intAttr = dyn_cast<IntegerAttr>(attr);
    if (!intAttr)
      return emitDefiniteFailure(op->getLoc())
             << "expected the sizes param to hold integers, got " << attr;
    sizes.push_back(intAttr.getInt());
  }
  return DiagnosedSilenceableFailure::success();
}

#define GET_OP_CLASSES
#include "CuvilTransformOps.cpp.inc"

//===----------------------------------------------------------------------===//
// MatchAnyOperandBitwidthOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
cuvil::MatchAnyOperandBitwidthOp::matchOperation(Operation *current, TransformResults &,
                                                 TransformState &) {
  if (!isa<linalg::LinalgOp>(current))
    return emitSilenceableError() << "expected a structured op";
  int64_t bitwidth = getBitwidth();
  for (Value operand : current->getOperands()) {
    Type type = getElementTypeOrSelf(operand.getType());
    if (type.isIntOrFloat() && static_cast<int64_t>(type.getIntOrFloatBitWidth()) == bitwidth)
      return DiagnosedSilenceableFailure::success();
  }
  return emitSilenceableError() << "no input or init has " << bitwidth << "-bit elements";
}

//===----------------------------------------------------------------------===//
// MatchLoopRangesAtLeastOp
//===----------------------------------------------------------------------===//

LogicalResult cuvil::MatchLoopRangesAtLeastOp::verify() {
  return verifySizeTable(*this, getStaticSizes(), getDynamicSizes(), getRowLengths());
}

DiagnosedSilenceableFailure
cuvil::MatchLoopRangesAtLeastOp::matchOperation(Operation *current, TransformResults &,
                                                TransformState &state) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(current);
  if (!linalgOp)
    return emitSilenceableError() << "expected a structured op";
  SmallVector<SmallVector<int64_t>> shapes;
  DiagnosedSilenceableFailure resolved = resolveSizeTable(
      *this, state, getStaticSizes(), getDynamicSizes(), getRowLengths(), shapes);
  if (!resolved.succeeded())
    return resolved;
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  for (ArrayRef<int64_t> shape : shapes) {
    if (shape.size() != ranges.size())
      continue;
    bool reached = llvm::all_of(llvm::zip_equal(shape, ranges), [](auto pair) {
      auto [least, range] = pair;
      return least <= 0 || (!ShapedType::isDynamic(range) && range >= least);
    });
    if (reached)
      return DiagnosedSilenceableFailure::success();
  }
  return emitSilenceableError() << "loop ranges reach no shape given for rank "
                                << ranges.size();
}

//===----------------------------------------------------------------------===//
// MatchVnniPairTransposeOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
cuvil::MatchVnniPairTransposeOp::matchOperation(Operation *current, TransformResults &,
                                                TransformState &) {
  auto transpose = dyn_cast<linalg::TransposeOp>(current);
  if (!transpose || !isVnniPairTranspose(transpose))
    return emitSilenceableError() << "expected a VNNI pair transpose";
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// TileSizesOp
//===----------------------------------------------------------------------===//

LogicalResult cuvil::TileSizesOp::verify() {
  return verifySizeTable(*this, getStaticSizes(), getDynamicSizes(), getRowLengths());
}

DiagnosedSilenceableFailure cuvil::TileSizesOp::matchOperation(Operation *current,
                                                               TransformResults &results,
                                                               TransformState &state) {
  auto tileable = dyn_cast<TilingInterface>(current);
  if (!tileable)
    return emitSilenceableError() << "expected an op implementing TilingInterface";
  SmallVector<SmallVector<int64_t>> rows;
  DiagnosedSilenceableFailure resolved = resolveSizeTable(
      *this, state, getStaticSizes(), getDynamicSizes(), getRowLengths(), rows);
  if (!resolved.succeeded())
    return resolved;
  size_t numLoops = tileable.getLoopIteratorTypes().size();
  Builder builder(getContext());
  for (ArrayRef<int64_t> row : rows) {
    if (row.size() > numLoops)
      continue;
    SmallVector<Attribute> sizes(numLoops - row.size(),
                                 builder.getI64IntegerAttr(getLeading()));
    for (int64_t size : row)
      sizes.push_back(builder.getI64IntegerAttr(size));
    results.setParams(cast<OpResult>(getSizes()), sizes);
    return DiagnosedSilenceableFailure::success();
  }
  return emitSilenceableError() << "every row of sizes is longer than the " << numLoops
                                << " loop(s) of the op";
}

//===----------------------------------------------------------------------===//
// BalancedRowTileOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure cuvil::BalancedRowTileOp::matchOperation(Operation *current,
                                                                     TransformResults &results,
                                                                     TransformState &state) {
  int64_t tile0 = 0, tile1 = 0, multiple = 0;
  for (auto [param, what, least, value] :
       {std::tuple(getTile0(), "tile0", 0, &tile0), std::tuple(getTile1(), "tile1", 1, &tile1),
        std::tuple(getMultiple(), "multiple", 1, &multiple)}) {
    DiagnosedSilenceableFailure read = readOneInteger(*this, state, param, what, least, *value);
    if (!read.succeeded())
      return read;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(current);
  if (!linalgOp || linalgOp.getNumLoops() < 2)
    return emitSilenceableError() << "expected a structured op with at least two loops";
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  int64_t rows = ranges[1], tile = tile1;
  if (!ShapedType::isDynamic(rows)) {
    int64_t others = 1;
    if (tile0 > 0)
      others = ShapedType::isDynamic(ranges[0]) ? 2 : llvm::divideCeil(ranges[0], tile0);
    int64_t tiles = llvm::divideCeil(rows, tile1);
    if ((tiles * others) % 2 == 1 && rows > multiple)
      ++tiles;
    tile = llvm::alignTo(llvm::divideCeil(rows, tiles), multiple);
  }
  results.setParams(cast<OpResult>(getTile()), {Builder(getContext()).getI64IntegerAttr(tile)});
  return DiagnosedSilenceableFailure::success();
}

/// At most one tile size per loop of `target`.
static DiagnosedSilenceableFailure checkSizeCount(transform::TransformOpInterface transformOp,
                                                  TilingInterface target, ArrayRef<int64_t> sizes) {
  size_t loops = target.getLoopIteratorTypes().size();
  if (sizes.size() <= loops)
    return DiagnosedSilenceableFailure::success();
  DiagnosedSilenceableFailure diag = transformOp.emitSilenceableError()
                                     << "too many tile sizes: " << sizes.size() << " for an op with " << loops
                                     << " loop(s)";
  diag.attachNote(target->getLoc()) << "target op";
  return diag;
}

//===----------------------------------------------------------------------===//
// TileUsingForOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure cuvil::TileUsingForOp::apply(TransformRewriter &rewriter,
                                                         TransformResults &results,
                                                         TransformState &state) {
  SmallVector<int64_t> tileSizes;
  DiagnosedSilenceableFailure read = readPackedSizes(*this, state, getTileSizes(), tileSizes);
  if (!read.succeeded())
    return read;

  SmallVector<Operation *> tiled, loops;
  for (Operation *op : state.getPayloadOps(getTarget())) {
    auto tilingInterface = dyn_cast<TilingInterface>(op);
    if (!tilingInterface) {
      DiagnosedSilenceableFailure diag =
          emitSilenceableError() << "only ops implementing TilingInterface are supported";
      diag.attachNote(op->getLoc()) << "target op";
      return diag;
    }
    if (DiagnosedSilenceableFailure fits = checkSizeCount(*this, tilingInterface, tileSizes); !fits.succeeded())
      return fits;
    // As transform.structured.tile_using_for with static sizes: index attrs.
    scf::SCFTilingOptions tilingOptions;
    tilingOptions.setTileSizeComputationFunction([&](OpBuilder &b, Operation *) {
      SmallVector<OpFoldResult> sizes;
      for (int64_t size : tileSizes)
        sizes.push_back(b.getIndexAttr(size));
      return sizes;
    });
    tilingOptions.setInterchange({});
    FailureOr<scf::SCFTilingResult> tilingResult =
        scf::tileUsingSCF(rewriter, tilingInterface, tilingOptions);
    if (failed(tilingResult))
      return emitDefiniteFailure() << "tiling failed";
    rewriter.replaceOp(op, tilingResult->replacements);
    llvm::append_range(tiled, tilingResult->tiledOps);
    if (!tilingResult->loops.empty())
      loops.push_back(tilingResult->loops.front().getOperation());
  }
  results.set(cast<OpResult>(getTiledOp()), tiled);
  results.set(cast<OpResult>(getLoop()), loops);
  return DiagnosedSilenceableFailure::success();
}

void cuvil::TileUsingForOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  consumesHandle(getTargetMutable(), effects);
  onlyReadsHandle(getTileSizesMutable(), effects);
  producesHandle(getOperation()->getOpResults(), effects);
  modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// TileAndFuseProducersOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure cuvil::TileAndFuseProducersOp::apply(TransformRewriter &rewriter,
                                                                 TransformResults &results,
                                                                 TransformState &state) {
  SmallVector<int64_t> tileSizes;
  DiagnosedSilenceableFailure read = readPackedSizes(*this, state, getTileSizes(), tileSizes);
  if (!read.succeeded())
    return read;
  auto payload = llvm::to_vector(state.getPayloadOps(getTarget()));
  auto target = payload.size() == 1 ? dyn_cast<TilingInterface>(payload.front()) : TilingInterface();
  if (!target)
    return emitSilenceableError() << "expected one TilingInterface op";
  if (DiagnosedSilenceableFailure fits = checkSizeCount(*this, target, tileSizes); !fits.succeeded())
    return fits;
  scf::SCFTilingOptions tilingOptions;
  tilingOptions.setTileSizes(getAsIndexOpFoldResult(getContext(), tileSizes));
  tilingOptions.setLoopType(getUseForall() ? scf::SCFTilingOptions::LoopType::ForallOp
                                           : scf::SCFTilingOptions::LoopType::ForOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tilingOptions);
  rewriter.setInsertionPoint(target);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, target, options);
  if (failed(fused))
    return emitDefiniteFailure() << "tiling failed";
  for (OpResult result : target->getResults())
    rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  rewriter.eraseOp(target);
  results.set(cast<OpResult>(getTiledOps()), llvm::to_vector(fused->tiledAndFusedOps));
  SmallVector<Operation *> loops;
  if (!fused->loops.empty())
    loops.push_back(fused->loops.front().getOperation());
  results.set(cast<OpResult>(getLoop()), loops);
  return DiagnosedSilenceableFailure::success();
}

void cuvil::TileAndFuseProducersOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  consumesHandle(getTargetMutable(), effects);
  onlyReadsHandle(getTileSizesMutable(), effects);
  producesHandle(getOperation()->getOpResults(), effects);
  modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// TileReductionUsingForOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
cuvil::TileReductionUsingForOp::apply(TransformRewriter &rewriter, TransformResults &results,
                                      TransformState &state) {
  SmallVector<int64_t> tileSizes;
  DiagnosedSilenceableFailure read = readPackedSizes(*this, state, getTileSizes(), tileSizes);
  if (!read.succeeded())
    return read;

  SmallVector<Operation *> fills, splits, merges, forOps;
  for (Operation *target : state.getPayloadOps(getTarget())) {
    rewriter.setInsertionPoint(target);
    auto partialReductionOp = dyn_cast<PartialReductionOpInterface>(target);
    if (!partialReductionOp) {
      DiagnosedSilenceableFailure diag =
          emitSilenceableError() << "expected an op implementing PartialReductionOpInterface";
      diag.attachNote(target->getLoc()) << "target op";
      return diag;
    }
    // As transform.structured.tile_reduction_using_for: every reduction loop,
    // i64 sizes.
    SmallVector<unsigned> reductionDims;
    for (auto [index, iteratorType] : llvm::enumerate(partialReductionOp.getLoopIteratorTypes()))
      if (iteratorType == utils::IteratorType::reduction)
        reductionDims.push_back(index);
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    options.setReductionTilingStrategy(ReductionTilingStrategy::PartialReductionOuterReduction);
    options.setTileSizes(getAsOpFoldResult(rewriter.getI64ArrayAttr(tileSizes)));
    options.setReductionDims(reductionDims);
    FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(partialReductionOp.getOperation()), options);
    if (failed(result)) {
      DiagnosedSilenceableFailure diag = emitSilenceableError() << "could not tile the reduction";
      diag.attachNote(target->getLoc()) << "target op";
      return diag;
    }
    rewriter.replaceOp(target, result->replacements);
    for (Value init : result->initialValues)
      fills.push_back(init.getDefiningOp());
    llvm::append_range(splits, result->tiledOps);
    llvm::append_range(merges, result->mergeOps);
    forOps.push_back(result->loops.front().getOperation());
  }
  results.set(cast<OpResult>(getFillOp()), fills);
  results.set(cast<OpResult>(getSplitOp()), splits);
  results.set(cast<OpResult>(getCombiningOp()), merges);
  results.set(cast<OpResult>(getForOp()), forOps);
  return DiagnosedSilenceableFailure::success();
}

void cuvil::TileReductionUsingForOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  consumesHandle(getTargetMutable(), effects);
  onlyReadsHandle(getTileSizesMutable(), effects);
  producesHandle(getOperation()->getOpResults(), effects);
  modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// VectorizeOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure cuvil::VectorizeOp::apply(TransformRewriter &rewriter,
                                                      TransformResults &,
                                                      TransformState &state) {
  auto targets = state.getPayloadOps(getTarget());
  if (std::empty(targets))
    return DiagnosedSilenceableFailure::success();
  SmallVector<int64_t> vectorSizes;
  DiagnosedSilenceableFailure read =
      readPackedSizes(*this, state, getVectorSizes(), vectorSizes);
  if (!read.succeeded())
    return read;
  // As transform.structured.vectorize with static sizes: none scalable.
  SmallVector<bool> scalable(vectorSizes.size(), false);
  for (Operation *target : targets) {
    if (!linalg::hasVectorizationImpl(target))
      return emitSilenceableFailure(target->getLoc()) << "Unsupported Op, cannot vectorize";
    // n-D tensor.extract too: the im2col windows of a conv (x[oh + kh][ow + kw][c])
    // are contiguous rows, read as vectors; without it such an op stays
    // scalar loops (the int8 ResNet-18's gathers: 5.8 of its 17 ms).
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, target, vectorSizes, scalable,
                          /*vectorizeNDExtract=*/true, /*flatten1DDepthwiseConv=*/false,
                          /*assumeDynamicDimsMatchVecSizes=*/false,
                          /*createNamedContraction=*/false);
    if (failed(vectorized))
      return emitSilenceableFailure(target->getLoc()) << "Attempted to vectorize, but failed";
    rewriter.replaceOp(target, vectorized->replacements);
  }
  return DiagnosedSilenceableFailure::success();
}

void cuvil::VectorizeOp::getEffects(SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  consumesHandle(getTargetMutable(), effects);
  onlyReadsHandle(getVectorSizesMutable(), effects);
  modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// apply_patterns.cuvil.flatten_tensor_transfer_reads
//===----------------------------------------------------------------------===//

namespace {
/// vector.transfer_read %t[.., %i, %c0] : tensor<..xDxBxT>, vector<1x..x1xAxBxT>
///   -> shape_cast(transfer_read (collapse_shape %t)[.., %i * B] : vector<A*BxT>)
struct FlattenTensorTransferRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto source = dyn_cast<RankedTensorType>(read.getBase().getType());
    VectorType vector = read.getVectorType();
    if (!source || read.getMask() || vector.isScalable())
      return failure();
    int64_t rank = source.getRank(), vrank = vector.getRank();
    if (vrank < 2 || vrank > rank)
      return failure();
    if (read.getPermutationMap() !=
        AffineMap::getMinorIdentityMap(rank, vrank, read.getContext()))
      return failure();
    if (llvm::any_of(read.getInBoundsValues(), [](bool b) { return !b; }))
      return failure();
    ArrayRef<int64_t> vshape = vector.getShape();
    ArrayRef<int64_t> sshape = source.getShape();
    int64_t rows = vshape[vrank - 2], row = vshape[vrank - 1];
    // One row is read as one 1-D read already (and the accumulator reads of
    // the dot kernel must stay reads of the value written back, for hoisting).
    if (rows < 2)
      return failure();
    if (llvm::any_of(vshape.drop_back(2), [](int64_t d) { return d != 1; }) ||
        ShapedType::isDynamic(sshape[rank - 1]) || sshape[rank - 1] != row ||
        ShapedType::isDynamic(sshape[rank - 2]))
      return failure();
    std::optional<int64_t> last = getConstantIntValue(read.getIndices().back());
    if (!last || *last != 0)
      return failure();

    Location loc = read.getLoc();
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < rank - 2; ++d)
      groups.push_back({d});
    groups.push_back({rank - 2, rank - 1});
    Value collapsed = tensor::CollapseShapeOp::create(rewriter, loc, read.getBase(), groups);
    SmallVector<Value> indices(read.getIndices().drop_back(2));
    AffineExpr d0 = rewriter.getAffineDimExpr(0);
    OpFoldResult start = affine::makeComposedFoldedAffineApply(
        rewriter, loc, d0 * row, {OpFoldResult(read.getIndices()[rank - 2])});
    indices.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, start));
    auto flatType = VectorType::get({rows * row}, vector.getElementType());
    Value flat = vector::TransferReadOp::create(
        rewriter, loc, flatType, collapsed, indices,
        AffineMapAttr::get(AffineMap::getMinorIdentityMap(rank - 1, 1, read.getContext())),
        read.getPadding(), /*mask=*/Value(), rewriter.getBoolArrayAttr({true}));
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(read, vector, flat);
    return success();
  }
};
} // namespace

void cuvil::ApplyFlattenTensorTransferReadsPatternsOp::populatePatterns(
    RewritePatternSet &patterns) {
  patterns.add<FlattenTensorTransferRead>(patterns.getContext());
}

//===----------------------------------------------------------------------===//
// apply_patterns.cuvil.vector_contract_to_u8s8_dot
//===----------------------------------------------------------------------===//

namespace {
/// The positions of a vector type's non-unit dimensions.
SmallVector<int64_t> nonUnitDims(VectorType t) {
  SmallVector<int64_t> dims;
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    if (d != 1)
      dims.push_back(i);
  return dims;
}

/// The loop (iteration dimension) that result `pos` of `map` is, or -1.
int64_t loopOf(AffineMap map, int64_t pos) {
  auto dim = dyn_cast<AffineDimExpr>(map.getResult(pos));
  return dim ? static_cast<int64_t>(dim.getPosition()) : -1;
}

/// contract(extui(a: one row's k quad), extsi(b: 16 columns' quads), acc)
///   -> cuvil.x86.dot_u8s8(acc, broadcast(a as i32), b as 16 x i32)
struct ContractToUnsignedInt8Dot : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kLanes = 16;

  LogicalResult matchAndRewrite(vector::ContractionOp contract,
                                PatternRewriter &rewriter) const override {
    if (contract.getKind() != vector::CombiningKind::ADD)
      return failure();
    auto accType = dyn_cast<VectorType>(contract.getAccType());
    auto lhsExt = contract.getLhs().getDefiningOp<arith::ExtUIOp>();
    auto rhsExt = contract.getRhs().getDefiningOp<arith::ExtSIOp>();
    if (!accType || !accType.getElementType().isSignlessInteger(32) || !lhsExt || !rhsExt)
      return failure();
    auto lhsType = dyn_cast<VectorType>(lhsExt.getIn().getType());
    auto rhsType = dyn_cast<VectorType>(rhsExt.getIn().getType());
    if (!lhsType || !rhsType || !lhsType.getElementType().isSignlessInteger(8) ||
        !rhsType.getElementType().isSignlessInteger(8) || accType.isScalable() ||
        lhsType.isScalable() || rhsType.isScalable())
      return failure();
    SmallVector<int64_t> accDims = nonUnitDims(accType), lhsDims = nonUnitDims(lhsType),
                         rhsDims = nonUnitDims(rhsType);
    if (accDims.size() != 1 || accType.getShape()[accDims[0]] != kLanes || lhsDims.size() != 1 ||
        lhsType.getShape()[lhsDims[0]] != 4 || rhsDims.size() != 2 ||
        rhsType.getShape()[rhsDims[0]] != kLanes || rhsType.getShape()[rhsDims[1]] != 4)
      return failure();
    // The quad is one reduction loop read by both operands, innermost in the
    // rhs (its bytes are [column][quad]); the columns are the result's lanes.
    SmallVector<AffineMap> maps = contract.getIndexingMapsArray();
    int64_t quad = loopOf(maps[0], lhsDims[0]);
    if (quad < 0 || loopOf(maps[1], rhsDims[1]) != quad || loopOf(maps[1], rhsDims[0]) < 0 ||
        loopOf(maps[1], rhsDims[0]) != loopOf(maps[2], accDims[0]) ||
        !vector::isReductionIterator(contract.getIteratorTypes()[quad]))
      return failure();

    Location loc = contract.getLoc();
    Type i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
    auto lanes = VectorType::get({kLanes}, i32);
    Value quadBytes = vector::ShapeCastOp::create(rewriter, loc, VectorType::get({4}, i8), lhsExt.getIn());
    Value quadWord = vector::BitCastOp::create(rewriter, loc, VectorType::get({1}, i32), quadBytes);
    Value lhs = vector::BroadcastOp::create(rewriter, loc, lanes,
                                            vector::ExtractOp::create(rewriter, loc, quadWord, 0));
    Value rhsBytes = vector::ShapeCastOp::create(rewriter, loc, VectorType::get({4 * kLanes}, i8), rhsExt.getIn());
    Value rhs = vector::BitCastOp::create(rewriter, loc, lanes, rhsBytes);
    Value acc = vector::ShapeCastOp::create(rewriter, loc, lanes, contract.getAcc());
    Value dot = cuvil::DotU8S8Op::create(rewriter, loc, lanes, acc, lhs, rhs);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(contract, accType, dot);
    return success();
  }
};
} // namespace

void cuvil::ApplyVectorContractToUnsignedInt8DotPatternsOp::populatePatterns(
    RewritePatternSet &patterns) {
  patterns.add<ContractToUnsignedInt8Dot>(patterns.getContext());
}

//===----------------------------------------------------------------------===//
// apply_patterns.cuvil.fold_shifted_rows_taps
//===----------------------------------------------------------------------===//

namespace {
/// Drops the unit `loops` of `op` (pure tensors, each loop of one
/// iteration: dropUnitDims may leave dead ops behind when it aborts, and on
/// such an op it does not), reading and writing its operands through
/// rank-reducing slices.
LogicalResult dropUnitLoops(linalg::GenericOp op, SmallVector<unsigned> loops, PatternRewriter &rewriter) {
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy = linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  control.controlFn = [loops](Operation *) { return loops; };
  FailureOr<linalg::DropUnitDimsResult> folded = linalg::dropUnitDims(rewriter, op, control);
  if (failed(folded))
    return failure();
  rewriter.replaceOp(op, folded->replacements);
  return success();
}

/// A rank-7 shifted-rows int8 conv tile with one kh and one kw iteration ->
/// the rank-5 VNNI contraction of that tap (see the op's description).
struct FoldShiftedRowsTaps : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !cuvil::matchShiftedRowsContraction(op))
      return failure();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (ranges[3] != 1 || ranges[4] != 1)
      return failure();
    return dropUnitLoops(op, {3, 4}, rewriter);
  }
};
} // namespace

void cuvil::ApplyFoldShiftedRowsTapsPatternsOp::populatePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldShiftedRowsTaps>(patterns.getContext());
}

//===----------------------------------------------------------------------===//
// apply_patterns.cuvil.fold_unit_batch
//===----------------------------------------------------------------------===//

namespace {
/// Whether loop 0 of `op` is a batch loop of one iteration (see the op).
bool hasUnitBatchLoop(linalg::GenericOp op) {
  if (op.getNumLoops() < 2 || op.getIteratorTypesArray()[0] != utils::IteratorType::parallel ||
      op.getStaticLoopRanges()[0] != 1)
    return false;
  AffineExpr d0 = getAffineDimExpr(0, op.getContext());
  return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    return map.getNumResults() > 0 && map.getResult(0) == d0 &&
           llvm::none_of(map.getResults().drop_front(), [&](AffineExpr e) { return e.isFunctionOfDim(0); });
  });
}

struct FoldUnitBatch : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !hasUnitBatchLoop(op))
      return failure();
    return dropUnitLoops(op, {0}, rewriter);
  }
};
} // namespace

void cuvil::ApplyFoldUnitBatchPatternsOp::populatePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldUnitBatch>(patterns.getContext());
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {
class CuvilTransformExtension
    : public TransformDialectExtension<CuvilTransformExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CuvilTransformExtension)
  using Base::Base;

  void init() {
    // The scripts name their parameters with `cuvil.param` argument attributes
    // (see cuvil/transform.py): loading the Cuvil dialect with the Transform
    // dialect keeps the parser from loading it during a pass (an error).
    declareDependentDialect<cuvil::CuvilDialect>();
    declareDependentDialect<linalg::LinalgDialect>();
    declareGeneratedDialect<affine::AffineDialect>();
    declareGeneratedDialect<arith::ArithDialect>();
    declareGeneratedDialect<scf::SCFDialect>();
    declareGeneratedDialect<tensor::TensorDialect>();
    declareGeneratedDialect<vector::VectorDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "CuvilTransformOps.cpp.inc"
        >();
  }
};
} // namespace

void mlir::cuvil::registerCuvilTransformExtension(DialectRegistry &registry) {
  registry.addExtensions<CuvilTransformExtension>();
}
