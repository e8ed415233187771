//===- Estimate.cpp - SOL cost of plans under each strategy -----------------===//
//
// Routes every m2n.plan with each strategy and prints the aggregate
// data-movement model of m2n/Route/CostModel.h; estimates m2n.schedule ops
// as they are. Changes nothing.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Dialect/M2N/Transforms/TopologySource.h"
#include "m2n/Route/CostModel.h"
#include "m2n/Route/Router.h"
#include "m2n/Route/ScaleSteps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace mlir::m2n {
#define GEN_PASS_DEF_ESTIMATE
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
/// One reshard and its estimate under one or more strategies.
struct Report {
  std::string where;
  std::string type;
  int64_t bytes = 0;
  int64_t ranks = 0;
  ::m2n::Topology topology;
  struct Row {
    ::m2n::Strategy strategy;
    bool reduceShare;
    ::m2n::Estimate estimate;
    std::string label() const {
      return reduceShare ? "reduce-share" : ::m2n::toString(strategy);
    }
  };
  SmallVector<Row> rows;
};

std::string describe(Operation *op, int64_t index) {
  std::string text = (isa<PlanOp>(op) ? "plan " : "schedule ") +
                     std::to_string(index);
  if (auto func = op->getParentOfType<func::FuncOp>())
    text += " in @" + func.getSymName().str();
  return text;
}

void printText(llvm::raw_ostream &os, const Report &report) {
  os << "m2n-estimate: " << report.where << ": " << report.type << " ("
     << llvm::format("%.3f", report.bytes / 1e6) << " MB), " << report.ranks
     << " ranks, " << report.topology.domainCount(report.ranks)
     << " NVLink domains, NVLink "
     << llvm::format("%g", report.topology.nvlinkGBps) << " GB/s, network "
     << llvm::format("%g", report.topology.networkGBps) << " GB/s\n";
  os << llvm::format("  %-13s %13s %13s %13s  %-24s %12s %12s %12s\n",
                     "strategy", "network MB", "NVLink MB", "local MB",
                     "busiest link", "T_network ms", "T_NVLink ms",
                     "T_SOL ms");
  for (const Report::Row &row : report.rows) {
    const ::m2n::Estimate &e = row.estimate;
    os << llvm::format("  %-13s %13.3f %13.3f %13.3f  %-24s %12.3f %12.3f "
                       "%12.3f\n",
                       row.label().c_str(), e.networkBytes / 1e6,
                       e.nvlinkBytes / 1e6, e.localBytes / 1e6,
                       e.busiestLink().c_str(), e.networkMs, e.nvlinkMs,
                       e.solMs());
  }
}

void printJson(llvm::raw_ostream &os, ArrayRef<Report> reports) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attributeArray("estimates", [&] {
      for (const Report &report : reports)
        json.object([&] {
          json.attribute("reshard", report.where);
          json.attribute("type", report.type);
          json.attribute("bytes", report.bytes);
          json.attribute("ranks", report.ranks);
          json.attribute("nvlink_domains",
                         report.topology.domainCount(report.ranks));
          json.attribute("nvlink_gbps", report.topology.nvlinkGBps);
          json.attribute("network_gbps", report.topology.networkGBps);
          json.attributeArray("strategies", [&] {
            for (const Report::Row &row : report.rows)
              json.object([&] {
                const ::m2n::Estimate &e = row.estimate;
                json.attribute("strategy", ::m2n::toString(row.strategy));
                json.attribute("reduce_share", row.reduceShare);
                json.attribute("network_bytes", e.networkBytes);
                json.attribute("nvlink_bytes", e.nvlinkBytes);
                json.attribute("local_bytes", e.localBytes);
                json.attribute("busiest_link", e.busiestLink());
                json.attribute("t_network_ms", e.networkMs);
                json.attribute("t_nvlink_ms", e.nvlinkMs);
                json.attribute("t_sol_ms", e.solMs());
              });
          });
        });
    });
  });
  os << "\n";
}

struct EstimatePass : public mlir::m2n::impl::EstimateBase<EstimatePass> {
  using EstimateBase::EstimateBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation()->emitError()
          << "unknown estimate format '" << format << "'; expected text or json";
      return signalPassFailure();
    }
    SmallVector<Report> reports;
    int64_t planIndex = 0, scheduleIndex = 0;
    WalkResult walk = getOperation()->walk([&](Operation *op) {
      auto plan = dyn_cast<PlanOp>(op);
      auto schedule = dyn_cast<ScheduleOp>(op);
      if (!plan && !schedule)
        return WalkResult::advance();
      // A quantizing reshard's amax exchange moves f32 blocks, its data
      // the destination's fp8 elements (converted before they travel).
      ScalingAttr scaling =
          plan ? plan.getScalingAttr() : schedule.getScalingAttr();
      DistType src = cast<DistType>(op->getOperand(0).getType());
      DistType dst = cast<DistType>(op->getResult(0).getType());
      int64_t commSize = cast<CommType>(op->getOperand(1).getType()).getSize();
      Report report;
      report.where =
          describe(op, plan ? planIndex++ : scheduleIndex++);
      llvm::raw_string_ostream typeText(report.type);
      for (int64_t extent : src.getShape())
        typeText << extent << 'x';
      typeText << src.getElementType();
      if (scaling)
        typeText << " -> " << dst.getElementType() << " scaling "
                 << scaling.getValue().str();
      int64_t elementBytes = src.getElementType().getIntOrFloatBitWidth() / 8;
      report.bytes = elementBytes;
      // What travels: the destination's elements where they quantize.
      if (scaling)
        elementBytes = dst.getElementType().getIntOrFloatBitWidth() / 8;
      for (int64_t extent : src.getShape())
        report.bytes *= extent;
      report.ranks = commSize;
      if (schedule) {
        report.topology = toTopology(schedule.getTopology());
        ::m2n::Schedule steps = toSchedule(schedule);
        report.rows.push_back(
            {steps.strategy, false,
             ::m2n::estimateSchedule(steps, report.topology, elementBytes)});
      } else {
        FailureOr<::m2n::Topology> topology =
            resolveTopology(op, topologyFile, commSize);
        if (failed(topology))
          return WalkResult::interrupt();
        report.topology = *topology;
        ::m2n::Layout srcLayout = toLayout(src.getLayout());
        ::m2n::Layout dstLayout = toLayout(dst.getLayout());
        std::vector<int64_t> shape(src.getShape().begin(),
                                   src.getShape().end());
        ::m2n::TopologyRouter router(srcLayout, dstLayout, shape,
                                     report.topology);
        // As --m2n-route-topology routes by default.
        router.setQuantizeOnce(static_cast<bool>(scaling));
        ::m2n::ReshardPlan transfers = toReshardPlan(plan);
        auto routed = [&](::m2n::Strategy strategy) {
          ::m2n::Schedule steps = router.route(transfers, strategy);
          if (scaling)
            steps = ::m2n::withScaleSteps(std::move(steps), scaling.getValue(),
                                          srcLayout, dstLayout, shape,
                                          toScalePlan(plan), report.topology);
          return steps;
        };
        for (::m2n::Strategy strategy :
             {::m2n::Strategy::Flat, ::m2n::Strategy::GatherBroadcast,
              ::m2n::Strategy::Hierarchical})
          report.rows.push_back(
              {strategy, false,
               ::m2n::estimateSchedule(routed(strategy), report.topology,
                                       elementBytes)});
        // Reductions into replicas: also the reduce-share route.
        if (::m2n::reducesContributions(srcLayout, dstLayout))
          report.rows.push_back(
              {::m2n::Strategy::Hierarchical, true,
               ::m2n::estimateSchedule(
                   router.setReduceShare(true).route(
                       transfers, ::m2n::Strategy::Hierarchical),
                   report.topology, elementBytes)});
      }
      reports.push_back(std::move(report));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (format == "json")
      printJson(llvm::outs(), reports);
    else
      for (const Report &report : reports)
        printText(llvm::outs(), report);
    markAllAnalysesPreserved();
  }
};
} // namespace
