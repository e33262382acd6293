//===- CuvilDialectsExtension.cpp - Python classes for Cuvil attributes ---===//
// SparseCSRAttr / BlockMaskedAttr as cuvil.ir.Attribute subclasses. Invalid
// patterns raise ValueError carrying the verifier's message.
//===----------------------------------------------------------------------===//
#include "cuvil-c/Dialects.h"
#include "mlir-c/Diagnostics.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

namespace nb = nanobind;
using namespace mlir::python::nanobind_adaptors;

namespace {

/// Collects diagnostics emitted while it is alive.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MlirContext ctx) : ctx(ctx) {
    id = mlirContextAttachDiagnosticHandler(ctx, &handle, this, nullptr);
  }
  ~DiagnosticCapture() { mlirContextDetachDiagnosticHandler(ctx, id); }
  const std::string &message() const { return text; }

private:
  static MlirLogicalResult handle(MlirDiagnostic diag, void *self) {
    auto *capture = static_cast<DiagnosticCapture *>(self);
    mlirDiagnosticPrint(
        diag,
        [](MlirStringRef s, void *out) {
          static_cast<std::string *>(out)->append(s.data, s.length);
        },
        &capture->text);
    return mlirLogicalResultSuccess();
  }
  MlirContext ctx;
  MlirDiagnosticHandlerID id;
  std::string text;
};

template <typename Get>
MlirAttribute checked(MlirContext ctx, const char *what, Get get) {
  DiagnosticCapture capture(ctx);
  MlirAttribute attr = get(mlirLocationUnknownGet(ctx));
  if (mlirAttributeIsNull(attr))
    throw nb::value_error((std::string("invalid ") + what + ": " + capture.message()).c_str());
  return attr;
}

std::vector<int64_t> collect(intptr_t n, const std::function<int64_t(intptr_t)> &at) {
  std::vector<int64_t> out;
  for (intptr_t i = 0; i < n; ++i)
    out.push_back(at(i));
  return out;
}

} // namespace

NB_MODULE(_cuvilDialects, m) {
  auto cuvilM = m.def_submodule("cuvil");

  mlir_attribute_subclass(cuvilM, "SparseCSRAttr", cuvilAttributeIsASparseCSR)
      .def_classmethod(
          "get",
          [](nb::object cls, std::vector<int64_t> rowPtr, std::vector<int64_t> colIdx,
             MlirContext ctx) {
            return cls(checked(ctx, "#cuvil.sparse_csr", [&](MlirLocation loc) {
              return cuvilSparseCSRAttrGetChecked(loc, rowPtr.size(), rowPtr.data(),
                                                  colIdx.size(), colIdx.data());
            }));
          },
          nb::arg("cls"), nb::arg("row_ptr"), nb::arg("col_idx"),
          nb::arg("context").none() = nb::none(),
          // The stub's return type: the lambda returns a plain object.
          nb::sig("def get(cls, row_ptr: collections.abc.Sequence[int], "
                  "col_idx: collections.abc.Sequence[int], "
                  "context: cuvil.ir.Context | None = None) -> SparseCSRAttr"),
          "Builds #cuvil.sparse_csr from row_ptr / col_idx lists")
      .def_property_readonly("row_ptr",
                             [](MlirAttribute a) {
                               return collect(cuvilSparseCSRAttrGetNumRowPtr(a), [&](intptr_t i) {
                                 return cuvilSparseCSRAttrGetRowPtr(a, i);
                               });
                             })
      .def_property_readonly("col_idx", [](MlirAttribute a) {
        return collect(cuvilSparseCSRAttrGetNumColIdx(a),
                       [&](intptr_t i) { return cuvilSparseCSRAttrGetColIdx(a, i); });
      });

  mlir_attribute_subclass(cuvilM, "BlockMaskedAttr", cuvilAttributeIsABlockMasked)
      .def_classmethod(
          "get",
          [](nb::object cls, std::vector<int64_t> block, std::vector<int64_t> rowPtr,
             std::vector<int64_t> colIdx, MlirContext ctx) {
            if (block.size() != 2)
              throw nb::value_error("block must be [rows, cols]");
            return cls(checked(ctx, "#cuvil.block_masked", [&](MlirLocation loc) {
              return cuvilBlockMaskedAttrGetChecked(loc, block[0], block[1], rowPtr.size(),
                                                    rowPtr.data(), colIdx.size(),
                                                    colIdx.data());
            }));
          },
          nb::arg("cls"), nb::arg("block"), nb::arg("row_ptr"), nb::arg("col_idx"),
          nb::arg("context").none() = nb::none(),
          nb::sig("def get(cls, block: collections.abc.Sequence[int], "
                  "row_ptr: collections.abc.Sequence[int], "
                  "col_idx: collections.abc.Sequence[int], "
                  "context: cuvil.ir.Context | None = None) -> BlockMaskedAttr"),
          "Builds #cuvil.block_masked from a block shape and block-level CSR")
      .def_property_readonly("block",
                             [](MlirAttribute a) {
                               return std::vector<int64_t>{cuvilBlockMaskedAttrGetBlockDim(a, 0),
                                                           cuvilBlockMaskedAttrGetBlockDim(a, 1)};
                             })
      .def_property_readonly("row_ptr",
                             [](MlirAttribute a) {
                               return collect(cuvilBlockMaskedAttrGetNumRowPtr(a), [&](intptr_t i) {
                                 return cuvilBlockMaskedAttrGetRowPtr(a, i);
                               });
                             })
      .def_property_readonly("col_idx", [](MlirAttribute a) {
        return collect(cuvilBlockMaskedAttrGetNumColIdx(a),
                       [&](intptr_t i) { return cuvilBlockMaskedAttrGetColIdx(a, i); });
      });
}
