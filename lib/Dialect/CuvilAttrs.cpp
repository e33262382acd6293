//===- CuvilAttrs.cpp - layout encodings: verification --------------------===//
// Two levels of checks: `verify` sees only the pattern (row_ptr/col_idx are a
// well-formed CSR), `verifyEncoding` checks it against the tensor's shape.
//===----------------------------------------------------------------------===//
#include "cuvil/Dialect/CuvilAttrs.h"
#include "cuvil/Dialect/CuvilDialect.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/CuvilEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "cuvil/Dialect/CuvilAttrs.cpp.inc"

void CuvilDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cuvil/Dialect/CuvilAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Syntax: `<{name = [i, j, ...], ...}>`, fields in a fixed order.
//===----------------------------------------------------------------------===//

static ParseResult parseIntListField(AsmParser &parser, StringRef name,
                                     SmallVectorImpl<int64_t> &out) {
  if (parser.parseKeyword(name) || parser.parseEqual() || parser.parseLSquare())
    return failure();
  if (succeeded(parser.parseOptionalRSquare()))
    return success();
  auto parseOne = [&]() -> ParseResult {
    int64_t v;
    if (parser.parseInteger(v))
      return failure();
    out.push_back(v);
    return success();
  };
  if (parser.parseCommaSeparatedList(parseOne) || parser.parseRSquare())
    return failure();
  return success();
}

static void printIntListField(AsmPrinter &printer, StringRef name,
                              ArrayRef<int64_t> values) {
  printer << name << " = [";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

Attribute SparseCSRAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> rowPtr, colIdx;
  if (parser.parseLess() || parser.parseLBrace() ||
      parseIntListField(parser, "row_ptr", rowPtr) || parser.parseComma() ||
      parseIntListField(parser, "col_idx", colIdx) || parser.parseRBrace() ||
      parser.parseGreater())
    return {};
  return parser.getChecked<SparseCSRAttr>(parser.getContext(), rowPtr, colIdx);
}

void SparseCSRAttr::print(AsmPrinter &printer) const {
  printer << "<{";
  printIntListField(printer, "row_ptr", getRowPtr());
  printer << ", ";
  printIntListField(printer, "col_idx", getColIdx());
  printer << "}>";
}

Attribute BlockMaskedAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> block, rowPtr, colIdx;
  if (parser.parseLess() || parser.parseLBrace() ||
      parseIntListField(parser, "block", block) || parser.parseComma() ||
      parseIntListField(parser, "row_ptr", rowPtr) || parser.parseComma() ||
      parseIntListField(parser, "col_idx", colIdx) || parser.parseRBrace() ||
      parser.parseGreater())
    return {};
  return parser.getChecked<BlockMaskedAttr>(parser.getContext(), block, rowPtr, colIdx);
}

void BlockMaskedAttr::print(AsmPrinter &printer) const {
  printer << "<{";
  printIntListField(printer, "block", getBlock());
  printer << ", ";
  printIntListField(printer, "row_ptr", getRowPtr());
  printer << ", ";
  printIntListField(printer, "col_idx", getColIdx());
  printer << "}>";
}

/// Checks a CSR pattern; `unit` names what is counted ("entries"/"blocks").
static LogicalResult verifyCSR(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> rowPtr, ArrayRef<int64_t> colIdx,
                               StringRef unit) {
  if (rowPtr.empty())
    return emitError() << "row_ptr must have rows + 1 entries, got none";
  if (rowPtr.front() != 0)
    return emitError() << "row_ptr must start at 0, got " << rowPtr.front();
  for (size_t i = 1; i < rowPtr.size(); ++i)
    if (rowPtr[i] < rowPtr[i - 1])
      return emitError() << "row_ptr must be non-decreasing, but row_ptr[" << i
                         << "] = " << rowPtr[i] << " < row_ptr[" << i - 1
                         << "] = " << rowPtr[i - 1];
  if (rowPtr.back() != static_cast<int64_t>(colIdx.size()))
    return emitError() << "row_ptr must end at the number of stored " << unit
                       << " (" << colIdx.size() << "), got " << rowPtr.back();
  for (size_t row = 0; row + 1 < rowPtr.size(); ++row) {
    for (int64_t p = rowPtr[row]; p < rowPtr[row + 1]; ++p) {
      if (colIdx[p] < 0)
        return emitError() << "col_idx[" << p << "] = " << colIdx[p]
                           << " is negative";
      if (p > rowPtr[row] && colIdx[p] <= colIdx[p - 1])
        return emitError() << "col_idx must be strictly increasing within a row: row "
                           << row << " has " << colIdx[p - 1] << " then "
                           << colIdx[p];
    }
  }
  return success();
}

static LogicalResult checkColumns(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> colIdx, int64_t cols,
                                  StringRef unit) {
  if (ShapedType::isDynamic(cols))
    return success();
  for (auto [p, c] : llvm::enumerate(colIdx))
    if (c >= cols)
      return emitError() << "col_idx[" << p << "] = " << c << " is out of range for "
                         << cols << " " << unit;
  return success();
}

LogicalResult SparseCSRAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> rowPtr,
                                    ArrayRef<int64_t> colIdx) {
  return verifyCSR(emitError, rowPtr, colIdx, "entries");
}

LogicalResult SparseCSRAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2)
    return emitError() << "#cuvil.sparse_csr needs a rank-2 tensor, got rank "
                       << shape.size();
  if (!ShapedType::isDynamic(shape[0]) &&
      static_cast<int64_t>(getRowPtr().size()) != shape[0] + 1)
    return emitError() << "#cuvil.sparse_csr row_ptr must have rows + 1 = "
                       << shape[0] + 1 << " entries, got " << getRowPtr().size();
  return checkColumns(emitError, getColIdx(), shape[1], "columns");
}

LogicalResult BlockMaskedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      ArrayRef<int64_t> block,
                                      ArrayRef<int64_t> rowPtr,
                                      ArrayRef<int64_t> colIdx) {
  if (block.size() != 2)
    return emitError() << "block must have 2 sizes [rows, cols], got "
                       << block.size();
  if (block[0] <= 0 || block[1] <= 0)
    return emitError() << "block sizes must be positive, got [" << block[0]
                       << ", " << block[1] << "]";
  return verifyCSR(emitError, rowPtr, colIdx, "blocks");
}

LogicalResult BlockMaskedAttr::verifyAgainstShape(
    ArrayRef<int64_t> shape, function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() < 2)
    return emitError() << "#cuvil.block_masked needs rank >= 2, got rank "
                       << shape.size();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  ArrayRef<int64_t> block = getBlock();
  for (auto [dim, size, b] : {std::tuple<const char *, int64_t, int64_t>{
                                  "rows", rows, block[0]},
                              {"cols", cols, block[1]}}) {
    if (ShapedType::isDynamic(size))
      return emitError() << "#cuvil.block_masked needs static " << dim;
    if (size % b != 0)
      return emitError() << "block size " << b << " does not divide the "
                         << dim << " (" << size << ")";
  }
  if (static_cast<int64_t>(getRowPtr().size()) != rows / block[0] + 1)
    return emitError() << "#cuvil.block_masked row_ptr must have block rows + 1 = "
                       << rows / block[0] + 1 << " entries, got "
                       << getRowPtr().size();
  return checkColumns(emitError, getColIdx(), cols / block[1], "block columns");
}

LogicalResult BlockMaskedAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyAgainstShape(shape, emitError);
}
