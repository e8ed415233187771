//===- RouteTopology.cpp - plans to schedules over a topology ---------------===//
//
// A thin pass over m2n::TopologyRouter (plain C++): converts each m2n.plan,
// routes it with the chosen strategy, chunks the steps, derives their data
// dependencies and writes the result as an m2n.schedule.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Dialect/M2N/Transforms/TopologySource.h"
#include "m2n/Route/Router.h"
#include "m2n/Route/ScaleSteps.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_ROUTETOPOLOGY
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct RouteTopologyPass
    : public mlir::m2n::impl::RouteTopologyBase<RouteTopologyPass> {
  using RouteTopologyBase::RouteTopologyBase;

  void runOnOperation() override {
    std::optional<::m2n::Strategy> parsed = ::m2n::parseStrategy(strategy);
    if (!parsed) {
      getOperation()->emitError()
          << "unknown routing strategy '" << strategy
          << "'; expected flat, gather-bcast or hierarchical";
      return signalPassFailure();
    }
    if (scaleBands < 1 || scaleBands > ::m2n::kMaxScaleBands) {
      getOperation()->emitError()
          << "scale-bands must be between 1 and " << ::m2n::kMaxScaleBands
          << ", got " << static_cast<int64_t>(scaleBands);
      return signalPassFailure();
    }
    if (chunkBytes < 0) {
      getOperation()->emitError() << "chunk-bytes must be non-negative";
      return signalPassFailure();
    }
    std::optional<::m2n::ReduceShare> share =
        ::m2n::parseReduceShare(reduceShare);
    if (!share) {
      getOperation()->emitError()
          << "unknown reduce-share mode '" << reduceShare
          << "'; expected on, off or auto";
      return signalPassFailure();
    }
    SmallVector<PlanOp> plans;
    getOperation()->walk([&](PlanOp plan) { plans.push_back(plan); });
    for (PlanOp plan : plans) {
      DistType src = plan.getInput().getType();
      FailureOr<::m2n::Topology> topology = resolveTopology(
          plan, topologyFile, plan.getComm().getType().getSize());
      if (failed(topology))
        return signalPassFailure();
      ::m2n::Layout srcLayout = toLayout(src.getLayout());
      ::m2n::Layout dstLayout = toLayout(plan.getResult().getType().getLayout());
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      // Chunks of what travels: the destination's elements (a cast
      // converts on the first hop).
      int64_t elementBytes =
          plan.getResult().getType().getElementType().getIntOrFloatBitWidth() /
          8;
      ScalingAttr scaling = plan.getScalingAttr();
      ::m2n::Schedule routed =
          ::m2n::TopologyRouter(srcLayout, dstLayout, shape, *topology)
              .setReduceShare(*share)
              .setQuantizeOnce(scaling && quantizeOnce)
              .setQuantizeOnSources(
                  scaling && quantizeOnSources,
                  scaling ? ::m2n::blockShape(scaling.getValue(),
                                              ::m2n::Dims(shape))
                          : ::m2n::Dims())
              .route(toReshardPlan(plan), *parsed);
      // A quantizing plan's amax exchange joins its data steps, in at most
      // scale-bands bands of block rows (docs/fp8-scaling.md).
      ::m2n::Schedule schedule;
      if (scaling) {
        schedule = ::m2n::quantizingSchedule(
            std::move(routed), scaling.getValue(), srcLayout, dstLayout, shape,
            toScalePlan(plan), *topology, elementBytes, chunkBytes,
            scaleBands);
      } else {
        schedule =
            ::m2n::chunkSchedule(std::move(routed), elementBytes, chunkBytes);
        ::m2n::addDataDependencies(schedule);
      }

      OpBuilder builder(plan);
      ScheduleOp scheduleOp =
          scaling ? ScheduleOp::create(
                        builder, plan.getLoc(), plan.getResult().getType(),
                        plan.getScales().getType(), plan.getInput(),
                        plan.getComm(), ::m2n::toString(*parsed),
                        toTopologyAttr(&getContext(), *topology), scaling)
                  : ScheduleOp::create(
                        builder, plan.getLoc(), plan.getResult().getType(),
                        plan.getInput(), plan.getComm(),
                        ::m2n::toString(*parsed),
                        toTopologyAttr(&getContext(), *topology));
      scheduleOp.setScaleAttr(plan.getScaleAttr());
      builder.setInsertionPointToStart(&scheduleOp.getBody().front());
      buildSchedule(builder, plan.getLoc(), schedule);
      plan.getResult().replaceAllUsesWith(scheduleOp.getResult());
      if (scaling)
        plan.getScales().replaceAllUsesWith(scheduleOp.getScales());
      plan.erase();
    }
  }
};
} // namespace
