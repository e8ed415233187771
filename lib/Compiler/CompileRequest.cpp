//===- CompileRequest.cpp - a structured request as a module --------------===//

#include "m2n/Compiler/CompileRequest.h"

#include "m2n/Base/Layout.h"
#include "m2n/Base/PlacementCode.h"
#include "m2n/Base/Scaling.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <optional>
#include <tuple>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::m2n;

namespace m2n {
namespace {

/// The most axes and dimensions a descriptor may have (the C API's bound:
/// a bad count is named before anything is read).
constexpr int kMaxAxes = 64;

/// The layout `desc` describes, checked against a tensor of `shape` on a
/// communicator of `commSize` ranks; `what` names it in messages.
std::optional<std::string> layoutOf(const m2n_layout_desc &desc,
                                    const std::vector<int64_t> &shape,
                                    int64_t commSize, const std::string &what,
                                    ::m2n::Layout &layout) {
  if (!desc.mesh_shape || desc.mesh_axes < 1 || desc.mesh_axes > kMaxAxes ||
      !desc.placements)
    return what + ": a mesh needs 1 to " + std::to_string(kMaxAxes) +
           " axes and one placement per axis";
  std::vector<int64_t> meshShape(desc.mesh_shape,
                                 desc.mesh_shape + desc.mesh_axes);
  if (std::optional<std::string> wrong = checkMeshShape(meshShape))
    return what + ": " + *wrong;
  int64_t positions = 1;
  for (int64_t extent : meshShape)
    positions *= extent;
  if (positions > Mesh::kMaxSize)
    return what + ": the mesh has " + std::to_string(positions) +
           " positions, more than " + std::to_string(Mesh::kMaxSize);
  layout.mesh =
      desc.ranks
          ? Mesh::explicitRanks(meshShape, std::vector<int64_t>(
                                               desc.ranks,
                                               desc.ranks + positions))
          : Mesh::contiguous(meshShape, desc.base);
  layout.placements.clear();
  for (int axis = 0; axis < desc.mesh_axes; ++axis) {
    const m2n_placement &p = desc.placements[axis];
    Placement placement;
    if (std::optional<std::string> wrong =
            decodePlacement(p.kind, p.dim, p.reduction, p.boundaries,
                            p.boundary_count, placement))
      return what + ": placement " + std::to_string(axis) + " " + *wrong;
    layout.placements.push_back(std::move(placement));
  }
  if (std::optional<std::string> wrong =
          validateLayout(layout, shape, commSize))
    return what + ": " + *wrong;
  return std::nullopt;
}

/// The attribute of a valid layout.
LayoutAttr layoutAttrOf(MLIRContext *ctx, const ::m2n::Layout &layout) {
  const std::vector<int64_t> &shape = layout.mesh.shape;
  // Contiguous ranks keep the mesh's short form (base = first rank).
  bool contiguous = true;
  for (size_t i = 0; i < layout.mesh.ranks.size(); ++i)
    contiguous = contiguous &&
                 layout.mesh.ranks[i] == layout.mesh.ranks.front() +
                                             static_cast<int64_t>(i);
  MeshAttr mesh = contiguous ? MeshAttr::get(ctx, shape,
                                             layout.mesh.ranks.front())
                             : MeshAttr::get(ctx, shape, 0, layout.mesh.ranks);
  SmallVector<PlacementAttrInterface> placements;
  for (const Placement &p : layout.placements) {
    if (p.kind == Placement::Kind::Shard)
      placements.push_back(ShardAttr::get(ctx, p.dim, p.boundaries));
    else if (p.kind == Placement::Kind::Replicate)
      placements.push_back(ReplicateAttr::get(ctx));
    else
      placements.push_back(PartialAttr::get(ctx, toReductionKind(p.reduction)));
  }
  return LayoutAttr::get(ctx, mesh, placements);
}

/// The element type spelled `spelling` ("bf16", "f8E4M3FN"), or null.
Type elementTypeOf(MLIRContext *ctx, const char *spelling) {
  if (!spelling)
    return Type();
  size_t read = 0;
  Type type = parseType(spelling, ctx, &read, /*isKnownNullTerminated=*/true);
  if (!type || read != std::char_traits<char>::length(spelling) ||
      !(isa<FloatType>(type) || isa<IntegerType>(type)))
    return Type();
  return type;
}

} // namespace

OwningOpRef<ModuleOp> buildRequestModule(MLIRContext &context,
                                         const m2n_compile_request &request,
                                         std::string &error) {
  context.loadDialect<M2NDialect, func::FuncDialect>();
  if (request.version != M2N_COMPILE_REQUEST_VERSION) {
    error = "a compile request of version " + std::to_string(request.version) +
            "; this compiler reads version " +
            std::to_string(M2N_COMPILE_REQUEST_VERSION);
    return nullptr;
  }
  if (!request.name || !*request.name || request.comm_size < 1 ||
      request.reshard_count < 1 || !request.reshards) {
    error = "a compile request needs a name, a communicator of at least one "
            "rank and at least one reshard";
    return nullptr;
  }
  MLIRContext *ctx = &context;
  // The types' own verifiers (a byte size beyond 64 bits, an element type
  // a reshard does not move) report here, as a parser would.
  std::string diagnostics;
  ScopedDiagnosticHandler collect(ctx, [&](Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
    return success();
  });
  auto distType = [&](ArrayRef<int64_t> shape, Type element,
                      LayoutAttr layout) {
    return DistType::getChecked([&] { return emitError(UnknownLoc::get(ctx)); },
                                ctx, shape, element, layout);
  };
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(request.name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto comm = CommType::get(ctx, request.comm_size);
  SmallVector<Type> inputs{comm}, sources, results, scales;
  SmallVector<ScalingAttr> scalings;
  for (int i = 0; i < request.reshard_count; ++i) {
    const m2n_reshard_desc &r = request.reshards[i];
    const std::string what = "reshard " + std::to_string(i);
    if (!r.shape || r.tensor_rank < 1 || r.tensor_rank > kMaxAxes) {
      error = what + ": a tensor of 1 to " + std::to_string(kMaxAxes) +
              " dimensions";
      return nullptr;
    }
    std::vector<int64_t> shape(r.shape, r.shape + r.tensor_rank);
    for (int64_t extent : shape)
      if (extent < 1) {
        error = what + ": an extent of " + std::to_string(extent);
        return nullptr;
      }
    ::m2n::Layout src, dst;
    if (std::optional<std::string> wrong = layoutOf(
            r.src, shape, request.comm_size, what + ": the source", src)) {
      error = *wrong;
      return nullptr;
    }
    if (std::optional<std::string> wrong = layoutOf(
            r.dst, shape, request.comm_size, what + ": the destination", dst)) {
      error = *wrong;
      return nullptr;
    }
    Type srcType = elementTypeOf(ctx, r.src_type);
    Type dstType = elementTypeOf(ctx, r.dst_type);
    for (auto [type, spelling, side] :
         {std::make_tuple(srcType, r.src_type, "source"),
          std::make_tuple(dstType, r.dst_type, "destination")})
      if (!type) {
        error = what + ": the " + side + " element type '" +
                std::string(spelling ? spelling : "") +
                "' is not one (bf16, f32, ui8, f8E4M3FN, ...)";
        return nullptr;
      }
    if (r.scaling < M2N_SCALING_NONE || r.scaling > M2N_SCALING_MX) {
      error = what + ": an unknown scaling";
      return nullptr;
    }
    LayoutAttr dstLayout =
        canonicalLayout(layoutAttrOf(ctx, dst), shape);
    DistType source = distType(
        shape, srcType, canonicalLayout(layoutAttrOf(ctx, src), shape));
    DistType result = distType(shape, dstType, dstLayout);
    if (!source || !result) {
      error = what + ": " + diagnostics;
      return nullptr;
    }
    sources.push_back(source);
    results.push_back(result);
    Type scaleType;
    ScalingAttr scaling;
    if (r.scaling != M2N_SCALING_NONE) {
      if (r.scaling == M2N_SCALING_BLOCK &&
          (r.block_rows < 1 || r.block_cols < 1 || shape.size() < 2)) {
        error = what + ": block scaling takes positive block rows and "
                       "columns of a tensor of two or more dimensions";
        return nullptr;
      }
      scaling = ScalingAttr::get(
          ctx,
          r.scaling == M2N_SCALING_TENSOR  ? ScalingKind::Tensor
          : r.scaling == M2N_SCALING_BLOCK ? ScalingKind::Block
                                           : ScalingKind::Mx,
          r.scaling == M2N_SCALING_BLOCK ? r.block_rows : 0,
          r.scaling == M2N_SCALING_BLOCK ? r.block_cols : 0);
      // The scales: one per block over the global tensor, in the result's
      // placements without boundaries (docs/fp8-scaling.md). A shape the
      // scaling does not fit is the reshard's verifier's to name.
      Dims extents;
      for (int64_t extent : shape)
        extents.push_back(extent);
      const Dims blocks = scaleShape(scaling.getValue(), extents);
      Type element = hasExponentScales(scaling.getValue())
                         ? Type(Float8E8M0FNUType::get(ctx))
                         : Type(Float32Type::get(ctx));
      scaleType = distType(ArrayRef<int64_t>(blocks.data(), blocks.size()),
                           element, withoutBoundaries(dstLayout));
      if (!scaleType) {
        error = what + ": " + diagnostics;
        return nullptr;
      }
    }
    scalings.push_back(scaling);
    scales.push_back(scaleType);
  }
  inputs.append(sources.begin(), sources.end());
  b.setInsertionPointToEnd(module->getBody());
  auto function = func::FuncOp::create(b, loc, request.name,
                                       b.getFunctionType(inputs, {}));
  Block *body = function.addEntryBlock();
  b.setInsertionPointToEnd(body);
  SmallVector<Value> members;
  for (int i = 0; i < request.reshard_count; ++i) {
    const m2n_reshard_desc &r = request.reshards[i];
    FloatAttr scale =
        r.has_scale ? b.getF32FloatAttr(r.scale) : FloatAttr();
    // Diagnostics of a reshard's verifier name it: "<name> reshard i".
    Location at = NameLoc::get(b.getStringAttr(std::string(request.name) +
                                               " reshard " +
                                               std::to_string(i)));
    auto reshard = ReshardOp::create(b, at, results[i], scales[i],
                                     body->getArgument(i + 1),
                                     body->getArgument(0), scale, scalings[i]);
    members.push_back(reshard.getResult());
  }
  if (request.group)
    GroupOp::create(b, loc, request.name, members);
  func::ReturnOp::create(b, loc);
  return module;
}

} // namespace m2n
