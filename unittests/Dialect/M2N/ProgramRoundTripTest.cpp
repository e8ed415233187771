//===- ProgramRoundTripTest.cpp - the program level keeps every field -------===//
//
// The artifact is a translation of m2n.program, so the IR must carry the
// lowering's programs exactly: random reshards are lowered, built as an
// m2n.program, printed, parsed back and translated again; the result must
// verify and equal the original field by field.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "../../Layout/RandomLayouts.h"

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Route/Router.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <iostream>
#include <sstream>

using namespace mlir;
using namespace mlir::m2n;

namespace {

std::string distText(const ::m2n::Layout &layout,
                     const std::vector<int64_t> &shape,
                     ::m2n::ElementType type) {
  std::ostringstream os;
  os << "!m2n.dist<";
  for (int64_t extent : shape)
    os << extent << 'x';
  os << ::m2n::toString(type) << ", #m2n.layout<#m2n.mesh<[";
  for (size_t a = 0; a < layout.mesh.shape.size(); ++a)
    os << (a ? ", " : "") << layout.mesh.shape[a];
  os << "], ranks = [";
  for (size_t r = 0; r < layout.mesh.ranks.size(); ++r)
    os << (r ? ", " : "") << layout.mesh.ranks[r];
  os << "]>, [";
  for (size_t a = 0; a < layout.placements.size(); ++a)
    os << (a ? ", " : "") << layout.placements[a].str();
  os << "]>>";
  return os.str();
}

/// Every field of a program, one line per item.
std::vector<std::string> describe(const ::m2n::TransferProgram &program) {
  std::vector<std::string> lines = {"buffers aligned to " +
                                    std::to_string(program.bufferAlignment)};
  for (const ::m2n::ScratchBuffer &scratch : program.scratches) {
    std::string line = "scratch " + std::to_string(scratch.rank);
    for (int64_t e : scratch.shape)
      line += " " + std::to_string(e);
    lines.push_back(line);
  }
  for (const ::m2n::TensorMapSpec &map : program.maps) {
    std::string line = "map " + map.buffer.str();
    for (int64_t e : map.extents)
      line += " " + std::to_string(e);
    for (int64_t e : map.box)
      line += " b" + std::to_string(e);
    lines.push_back(line);
  }
  for (const auto &[rank, rp] : program.ranks) {
    lines.push_back("rank " + std::to_string(rank) + " counters " +
                    std::to_string(rp.counters));
    for (const auto *list : {&rp.engineCopies, &rp.receives, &rp.items})
      for (const ::m2n::Movement &m : *list)
        lines.push_back(m.str(program.type) + " step " +
                        std::to_string(m.step));
    lines.push_back("--");
  }
  return lines;
}

class ProgramRoundTripTest : public m2n_test::M2NTest {};

TEST_F(ProgramRoundTripTest, RandomProgramsSurvivePrintAndParse) {
  ctx.getOrLoadDialect<func::FuncDialect>();
  const uint64_t seed = ::m2n::propertySeed();
  const int64_t cases = ::m2n::propertyCases(600);
  ::m2n::RandomLayouts random(seed ^ 0x9e0);
  int64_t moves = 0;
  for (int64_t n = 0; n < cases; ++n) {
    std::vector<int64_t> shape = random.shape();
    int64_t rank = static_cast<int64_t>(shape.size());
    ::m2n::Layout src = random.layout(rank, /*allowPartial=*/true);
    ::m2n::Layout dst = random.destination(src, rank);
    ::m2n::ElementType type = random.elementType();
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str());
    ::m2n::ReshardPlan plan = ::m2n::IntersectionPlanner(src, dst, shape).plan();
    ::m2n::Schedule schedule = ::m2n::chunkSchedule(
        ::m2n::TopologyRouter(src, dst, shape,
                              ::m2n::Topology::singleDomain(16))
            .route(plan, static_cast<::m2n::Strategy>(random.uniform(0, 2))),
        ::m2n::elementSize(type), 32 * random.uniform(0, 2));
    ::m2n::addDataDependencies(schedule);
    ::m2n::LoweringOptions options;
    options.maxItemBytes = 16 * random.uniform(1, 4);
    options.tileBelowRunBytes = 16 * random.uniform(0, 4);
    options.vectorBelowBytes = 16 * random.uniform(0, 3);
    options.copyEngine = random.uniform(0, 1) == 1 ? ::m2n::CopyEngineUse::Always
                                                   : ::m2n::CopyEngineUse::Never;
    options.engineMinBytes = 16 * random.uniform(0, 2);
    if (random.uniform(0, 3) == 0)
      options.bufferAlignment = int64_t{1} << random.uniform(0, 3);
    ::m2n::TransferProgram program;
    ASSERT_EQ(::m2n::lowerSchedule(schedule, src, dst, shape, type, options,
                                   program),
              std::nullopt);

    std::string srcType = distText(src, shape, type);
    std::string dstType = distText(dst, shape, type);
    std::string text = "func.func @f(%c: !m2n.comm<16>, %x: " + srcType +
                       ") {\n  %0 = m2n.program %x on %c strategy = \"flat\" " +
                       (program.bufferAlignment == 16
                            ? std::string()
                            : "buffer_alignment = " +
                                  std::to_string(program.bufferAlignment) +
                                  " ") +
                       ": !m2n.comm<16>, " + srcType + " -> " + dstType +
                       " {\n  }\n  return\n}\n";
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
    ASSERT_TRUE(module) << text << lastDiagnostic();
    ProgramOp op;
    module->walk([&](ProgramOp found) { op = found; });
    ASSERT_TRUE(op);
    OpBuilder builder(&ctx);
    builder.setInsertionPointToEnd(&op.getBody().front());
    buildProgram(builder, op.getLoc(), program);
    ASSERT_TRUE(succeeded(mlir::verify(*module))) << lastDiagnostic();

    std::string printed;
    llvm::raw_string_ostream os(printed);
    module->print(os);
    OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(printed, &ctx);
    ASSERT_TRUE(reparsed) << printed << lastDiagnostic();
    ProgramOp again;
    reparsed->walk([&](ProgramOp found) { again = found; });
    ASSERT_TRUE(again);
    ::m2n::CompiledReshard back = toCompiledReshard(again);
    ASSERT_EQ(describe(back.program), describe(program));
    for (const auto &[r, rp] : program.ranks)
      moves += static_cast<int64_t>(rp.items.size() + rp.receives.size() +
                                    rp.engineCopies.size());
    if (HasFailure())
      return;
  }
  std::cout << "[ property ] seed " << seed << ": " << cases
            << " programs printed, parsed and translated back, " << moves
            << " moves\n";
}

} // namespace
