//===- VerifySchedule.cpp - a schedule delivers exactly the destination ---===//

#include "m2n/Route/VerifySchedule.h"
#include "m2n/Plan/ScalePlan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <tuple>
#include <variant>

namespace m2n {

namespace {

/// What a region of a buffer holds: the global elements at its position
/// plus `shift`, summed over `contributors`, as written by `writers`.
struct Piece {
  Box box; // In the buffer's coordinates.
  Dims shift;
  std::vector<int64_t> contributors; // Sorted.
  std::vector<int64_t> writers;      // Steps: the copy, then the reduces.
};

/// `a` without its common part with `b`: at most two boxes per dimension.
std::vector<Box> subtract(const Box &a, const Box &b) {
  const Box cut = a.intersect(b);
  if (cut.empty())
    return {a};
  std::vector<Box> rest;
  Box remaining = a;
  for (size_t d = 0; d < a.sizes.size(); ++d) {
    const int64_t end = remaining.offsets[d] + remaining.sizes[d];
    const int64_t cutEnd = cut.offsets[d] + cut.sizes[d];
    if (remaining.offsets[d] < cut.offsets[d]) {
      Box below = remaining;
      below.sizes[d] = cut.offsets[d] - remaining.offsets[d];
      rest.push_back(below);
    }
    if (cutEnd < end) {
      Box above = remaining;
      above.offsets[d] = cutEnd;
      above.sizes[d] = end - cutEnd;
      rest.push_back(above);
    }
    remaining.offsets[d] = cut.offsets[d];
    remaining.sizes[d] = cut.sizes[d];
  }
  return rest;
}

Box shifted(const Box &box, const Dims &by) {
  Box result = box;
  for (size_t d = 0; d < by.size(); ++d)
    result.offsets[d] += by[d];
  return result;
}

std::string contributorList(const std::vector<int64_t> &contributors) {
  std::string s = "{";
  for (size_t i = 0; i < contributors.size(); ++i)
    s += (i ? ", " : "") + std::to_string(contributors[i]);
  return s + "}";
}

/// The amax exchange of a quantizing schedule (docs/fp8-scaling.md), once
/// every step's buffers and boxes are known to exist: the shares, the
/// exchange and the scale writes form a scale plan verifyScalePlan accepts
/// (a quantizer table for every rank whose source is read, a holder table
/// for every destination), each step after what it reads (an exchange after
/// the share it reads, a max after the copies it lands on, a scale write
/// after the exchange into its blocks), every destination's scales written
/// once, and every move out of a source after the exchange into its source
/// rank's quantizer table for the blocks it touches. A schedule without a
/// scaling has none of this.
std::optional<ScheduleIssue>
verifyScaleSteps(const Schedule &schedule, const Layout &src,
                 const Layout &dst, const std::vector<int64_t> &shape,
                 const std::function<bool(int64_t, int64_t)> &precedes) {
  const std::vector<Step> &steps = schedule.steps;
  auto issue = [](int64_t step, std::string message) {
    return std::optional<ScheduleIssue>(ScheduleIssue{step, std::move(message)});
  };
  if (!schedule.scaling) {
    for (size_t i = 0; i < steps.size(); ++i)
      if (isScaleStep(steps[i], schedule.scratches))
        return issue(static_cast<int64_t>(i),
                     "belongs to the amax exchange of a quantizing reshard, "
                     "but the schedule has no scaling");
    return std::nullopt;
  }
  const Scaling &scaling = *schedule.scaling;
  ScalePlan scalePlan;
  deriveScaleBoxes(scaling, src, dst, shape, scalePlan);
  std::vector<int64_t> exchangeSteps, exchangeFrom; // And their slots' ranks.
  // Source rank -> the steps that compute its share (one per band).
  std::map<int64_t, std::vector<int64_t>> amaxOf;
  std::map<int64_t, std::vector<int64_t>> scaleWrites; // Rank -> steps.
  // Amaxes staged for the network: the one step that writes each staging
  // scratch (whole), so that a step reading one is traced to the slots its
  // amaxes come from.
  std::map<int64_t, int64_t> stagedBy; // Scratch -> its writer.
  for (size_t index = 0; index < steps.size(); ++index) {
    const Step &step = steps[index];
    if (step.to.kind == BufferKind::Scratch &&
        holdsAmaxes(step.to, schedule.scratches) &&
        !stagedBy.try_emplace(step.to.scratch, index).second)
      return issue(static_cast<int64_t>(index),
                   "writes " + step.to.str() +
                       ", which stages amaxes another step writes");
  }
  // The slots (rank, box) a step reading staged amaxes reads, through the
  // staging steps, or a message.
  auto originOf = [&](int64_t reader)
      -> std::variant<std::pair<int64_t, Box>, std::string> {
    BufferRef from = steps[reader].from;
    Box box = steps[reader].fromBox;
    for (size_t hops = 0; from.kind == BufferKind::Scratch; ++hops) {
      auto writer = stagedBy.find(from.scratch);
      if (writer == stagedBy.end() || hops > steps.size())
        return "reads " + from.str() + ", which no step stages amaxes into";
      const Step &staging = steps[writer->second];
      if (!staging.toBox.contains(box))
        return "reads " + from.str() + " " + box.str() + ", which step " +
               std::to_string(writer->second) + " does not stage";
      if (!precedes(writer->second, reader))
        return "reads " + from.str() + " without waiting for step " +
               std::to_string(writer->second) + ", which stages it";
      Dims offsets = box.offsets;
      for (size_t d = 0; d < offsets.size(); ++d)
        offsets[d] += staging.fromBox.offsets[d] - staging.toBox.offsets[d];
      box.offsets = offsets;
      from = staging.from;
    }
    if (from.kind != BufferKind::Slots)
      return "reads amaxes staged from " + from.str() + ", not from slots";
    return std::make_pair(from.rank, box);
  };
  for (size_t index = 0; index < steps.size(); ++index) {
    const Step &step = steps[index];
    const int64_t i = static_cast<int64_t>(index);
    if (!isScaleStep(step, schedule.scratches))
      continue;
    if (std::optional<std::string> wrong =
            checkStepKind(step, schedule.scratches))
      return issue(i, step.str() + ": " + *wrong);
    // Staging steps carry amaxes to the exchange step that lands them.
    if (step.kind == StepKind::Move && step.to.kind == BufferKind::Scratch)
      continue;
    if (step.kind == StepKind::Amax) {
      std::vector<int64_t> &pieces = amaxOf[step.from.rank];
      for (int64_t other : pieces)
        if (!steps[other].toBox.intersect(step.toBox).empty())
          return issue(i, "computes the amaxes of blocks " +
                              steps[other].toBox.intersect(step.toBox).str() +
                              " of rank " + std::to_string(step.from.rank) +
                              ", which step " + std::to_string(other) +
                              " computes too");
      pieces.push_back(i);
      continue;
    }
    if (step.kind == StepKind::Scale) {
      scaleWrites[step.to.rank].push_back(i);
      continue;
    }
    auto origin = originOf(i);
    if (const std::string *wrong = std::get_if<std::string>(&origin))
      return issue(i, *wrong);
    const auto &[fromRank, fromBox] = std::get<std::pair<int64_t, Box>>(origin);
    scalePlan.exchange.push_back(
        {Transfer{fromRank, fromBox, step.to.rank, step.toBox, step.reduction},
         step.to.kind == BufferKind::Quantizer ? ScaleTable::Quantizer
                                               : ScaleTable::Holder});
    exchangeSteps.push_back(i);
    exchangeFrom.push_back(fromRank);
  }
  // A rank's share is one box, which its amax steps cut into pieces.
  for (const auto &[rank, pieces] : amaxOf) {
    Box share = steps[pieces.front()].toBox;
    int64_t volume = 0;
    for (int64_t i : pieces) {
      const Box &piece = steps[i].toBox;
      volume += piece.volume();
      for (int64_t d = 0; d < share.rank(); ++d) {
        const int64_t end = std::max(share.offsets[d] + share.sizes[d],
                                     piece.offsets[d] + piece.sizes[d]);
        share.offsets[d] = std::min(share.offsets[d], piece.offsets[d]);
        share.sizes[d] = end - share.offsets[d];
      }
    }
    if (volume != share.volume())
      return issue(pieces.front(),
                   "the amax steps of rank " + std::to_string(rank) +
                       " compute " + std::to_string(volume) + " of the " +
                       std::to_string(share.volume()) + " blocks of " +
                       share.str() + ": a share is one box");
    scalePlan.amaxBoxes[rank] =
        shifted(share, scalePlan.slotBoxes.at(rank).offsets);
  }
  // The ranks that quantize: every source whose buffer a step reads (the
  // scale plan's verifier asks a quantizer table of each sender).
  ReshardPlan senders;
  for (const Step &step : steps)
    if (!isScaleStep(step, schedule.scratches) &&
        step.from.kind == BufferKind::Source)
      senders.transfers.push_back({step.from.rank, {}, -1, {}, std::nullopt});
  std::vector<PlanIssue> issues = verifyScalePlan(
      scaling, src, dst, shape, senders, scalePlan, /*maxIssues=*/1);
  if (!issues.empty())
    return issue(issues.front().transfer >= 0
                     ? exchangeSteps[issues.front().transfer]
                     : -1,
                 issues.front().message);

  // Each step after what it reads; the exchange into each table by table,
  // so that a refit's exchange is not compared with itself.
  std::map<std::pair<BufferKind, int64_t>, std::vector<int64_t>> exchangeInto;
  for (int64_t i : exchangeSteps)
    exchangeInto[{steps[i].to.kind, steps[i].to.rank}].push_back(i);
  for (size_t e = 0; e < exchangeSteps.size(); ++e) {
    const int64_t i = exchangeSteps[e];
    const Step &step = steps[i];
    const Box &slots = scalePlan.exchange[e].transfer.srcBox;
    for (int64_t share : amaxOf.at(exchangeFrom[e]))
      if (!steps[share].toBox.intersect(slots).empty() && !precedes(share, i))
        return issue(i, "reads " + step.from.str() + " " +
                            step.fromBox.str() + " without waiting for step " +
                            std::to_string(share) + ", which computes it");
    if (!step.reduction)
      continue;
    for (int64_t other : exchangeInto[{step.to.kind, step.to.rank}]) {
      const Step &copy = steps[other];
      if (!copy.reduction && copy.to == step.to &&
          !copy.toBox.intersect(step.toBox).empty() && !precedes(other, i))
        return issue(i, "max-reduces into " + step.to.str() + " " +
                            copy.toBox.intersect(step.toBox).str() +
                            " without waiting for step " +
                            std::to_string(other) + ", which copies into it");
    }
  }
  for (const auto &[rank, writes] : scaleWrites) {
    for (int64_t i : writes) {
      const Step &step = steps[i];
      for (int64_t other : writes)
        if (other < i && !steps[other].toBox.intersect(step.toBox).empty())
          return issue(i, "writes " + step.to.str() + " " +
                              steps[other].toBox.intersect(step.toBox).str() +
                              ", which step " + std::to_string(other) +
                              " writes too");
      for (int64_t other : exchangeInto[{BufferKind::Holder, rank}])
        if (steps[other].to == step.from &&
            !steps[other].toBox.intersect(step.fromBox).empty() &&
            !precedes(other, i))
          return issue(i, "reads " + step.from.str() + " " +
                              steps[other].toBox.intersect(step.fromBox).str() +
                              " without waiting for step " +
                              std::to_string(other) + ", which writes it");
    }
  }
  for (const auto &[rank, holder] : scalePlan.holderBoxes) {
    if (holder.empty())
      continue;
    int64_t written = 0;
    if (auto it = scaleWrites.find(rank); it != scaleWrites.end())
      for (int64_t i : it->second)
        written += steps[i].toBox.volume();
    if (written != holder.volume())
      return issue(-1, "destination rank " + std::to_string(rank) + ": " +
                           std::to_string(holder.volume() - written) +
                           " of the " + std::to_string(holder.volume()) +
                           " scales of blocks " + holder.str() +
                           " are never written");
  }

  // Every move out of a source quantizes with its source rank's quantizer
  // table: after the exchange into the blocks it touches.
  const MeshIndex srcIndex(src.mesh);
  for (size_t index = 0; index < steps.size(); ++index) {
    const Step &step = steps[index];
    const int64_t i = static_cast<int64_t>(index);
    if (isScaleStep(step, schedule.scratches) ||
        step.from.kind != BufferKind::Source ||
        step.fromBox.empty())
      continue;
    const int64_t rank = step.from.rank;
    const Box local = src.localBox(shape, *srcIndex.indexOf(rank));
    const Box inTable =
        tableBlocksTouching(scaling, shape, local, step.fromBox);
    for (int64_t other : exchangeInto[{BufferKind::Quantizer, rank}])
      if (!steps[other].toBox.intersect(inTable).empty() &&
          !precedes(other, i))
        return issue(i, "quantizes with quantizer(" + std::to_string(rank) +
                            ") " + steps[other].toBox.intersect(inTable).str() +
                            " without waiting for step " +
                            std::to_string(other) + ", which writes it");
  }
  return std::nullopt;
}

} // namespace

std::optional<ScheduleIssue> verifySchedule(const Schedule &schedule,
                                            const Layout &src,
                                            const Layout &dst,
                                            const std::vector<int64_t> &shape) {
  const std::vector<Step> &steps = schedule.steps;
  const int64_t count = static_cast<int64_t>(steps.size());
  auto issue = [](int64_t step, std::string message) {
    return std::optional<ScheduleIssue>(ScheduleIssue{step, std::move(message)});
  };

  // Dependency order: a step after all it depends on, lowest index first.
  std::vector<int64_t> waiting(count, 0);
  std::vector<std::vector<int64_t>> users(count);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t dep : steps[i].deps) {
      if (dep < 0 || dep >= count || dep == i)
        return issue(i, "depends on step " + std::to_string(dep) +
                            (dep == i ? ", itself" : ", which does not exist"));
      ++waiting[i];
      users[dep].push_back(i);
    }
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ready;
  for (int64_t i = 0; i < count; ++i)
    if (!waiting[i])
      ready.push(i);
  std::vector<int64_t> order;
  order.reserve(count);
  while (!ready.empty()) {
    const int64_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int64_t user : users[i])
      if (!--waiting[user])
        ready.push(user);
  }
  if (static_cast<int64_t>(order.size()) != count)
    return issue(-1, "the steps' dependencies form a cycle");

  // Whether `ancestor` completes before `step` starts, marking the
  // ancestors of the step asked about last (ancestorsOf == the search's
  // generation: marks left by an earlier search of the same step must not
  // stop a new one).
  std::vector<int64_t> ancestorsOf(count, -1);
  int64_t marked = -1, generation = -1;
  auto precedes = [&](int64_t ancestor, int64_t step) {
    if (marked != step) {
      ++generation;
      std::vector<int64_t> stack(steps[step].deps.begin(),
                                 steps[step].deps.end());
      while (!stack.empty()) {
        const int64_t at = stack.back();
        stack.pop_back();
        if (ancestorsOf[at] == generation)
          continue;
        ancestorsOf[at] = generation;
        stack.insert(stack.end(), steps[at].deps.begin(), steps[at].deps.end());
      }
      marked = step;
    }
    return ancestorsOf[ancestor] == generation;
  };

  const MeshIndex srcIndex(src.mesh);
  const BufferShapes shapeOf(src, dst, shape, schedule.scratches,
                             schedule.scaling);
  std::map<std::tuple<int, int64_t, int64_t>, std::vector<Piece>> buffers;
  auto piecesOf = [&](const BufferRef &ref) -> std::vector<Piece> & {
    auto [it, inserted] = buffers.try_emplace(
        std::make_tuple(static_cast<int>(ref.kind), ref.rank, ref.scratch));
    if (inserted && ref.kind == BufferKind::Source) {
      // A source holds its local part, one contribution of it.
      const int64_t index = *srcIndex.indexOf(ref.rank);
      const Box local = src.localBox(shape, index);
      it->second.push_back({Box{Dims(local.sizes.size(), 0), local.sizes},
                            local.offsets,
                            {src.contributorIndex(index)},
                            {}});
    }
    return it->second;
  };

  for (int64_t i : order) {
    const Step &step = steps[i];
    // An amax step names blocks of its rank's slots on both sides.
    const std::optional<Dims> from =
        shapeOf(step.kind == StepKind::Amax ? step.to : step.from);
    const std::optional<Dims> to = shapeOf(step.to);
    if (!from || !to)
      return issue(i, "moves " + std::string(from ? "into " : "from ") +
                          (from ? step.to : step.from).str() +
                          ", a buffer that does not exist");
    if (step.to.kind == BufferKind::Source)
      return issue(i, "writes " + step.to.str() +
                          ", a source buffer (sources are read only)");
    if (step.fromBox.sizes != step.toBox.sizes ||
        step.fromBox.rank() != static_cast<int64_t>(from->size()) ||
        step.toBox.rank() != static_cast<int64_t>(to->size()))
      return issue(i, "moves a box " + step.fromBox.str() + " into a box " +
                          step.toBox.str() + " of another shape");
    for (const auto &[box, extents, buffer] :
         {std::make_tuple(step.fromBox, *from, step.from),
          std::make_tuple(step.toBox, *to, step.to)})
      if (!Box{Dims(extents.size(), 0), extents}.contains(box) ||
          std::any_of(box.sizes.begin(), box.sizes.end(),
                      [](int64_t s) { return s < 0; }))
        return issue(i, "box " + box.str() + " lies outside " + buffer.str());
    // The amax exchange is checked as a whole below.
    if (isScaleStep(step, schedule.scratches))
      continue;
    if (step.reduction && step.reduction != src.reduction())
      return issue(i, src.reduction()
                          ? std::string("reduces with ") +
                                toString(*step.reduction) +
                                ", but the source's partial reduction is " +
                                toString(*src.reduction())
                          : std::string("reduces, but the source holds no "
                                        "partial contributions"));
    if (step.fromBox.empty())
      continue;

    // What the step reads, placed where it writes.
    Dims delta(step.toBox.offsets.size());
    for (size_t d = 0; d < delta.size(); ++d)
      delta[d] = step.toBox.offsets[d] - step.fromBox.offsets[d];
    std::vector<Piece> incoming;
    int64_t covered = 0;
    for (const Piece &piece : piecesOf(step.from)) {
      const Box part = piece.box.intersect(step.fromBox);
      if (part.empty())
        continue;
      for (int64_t writer : piece.writers)
        if (!precedes(writer, i))
          return issue(i, "reads " + step.from.str() + " " + part.str() +
                              " without waiting for step " +
                              std::to_string(writer) + ", which writes it");
      Dims shift = piece.shift;
      for (size_t d = 0; d < shift.size(); ++d)
        shift[d] -= delta[d];
      incoming.push_back(
          {shifted(part, delta), shift, piece.contributors, {i}});
      covered += part.volume();
    }
    if (covered != step.fromBox.volume())
      return issue(i, "reads bytes of " + step.from.str() + " " +
                          step.fromBox.str() + " that no step writes");

    std::vector<Piece> &target = piecesOf(step.to);
    if (!step.reduction) {
      for (const Piece &piece : target)
        if (!piece.box.intersect(step.toBox).empty())
          return issue(i, "copies into " + step.to.str() + " " +
                              piece.box.intersect(step.toBox).str() +
                              ", which step " +
                              std::to_string(piece.writers.front()) +
                              " writes too (a region is copied into once, "
                              "then only reduced into)");
      target.insert(target.end(), incoming.begin(), incoming.end());
      continue;
    }
    for (const Piece &add : incoming) {
      std::vector<Piece> next;
      int64_t reached = 0;
      for (const Piece &piece : target) {
        const Box part = piece.box.intersect(add.box);
        if (part.empty()) {
          next.push_back(piece);
          continue;
        }
        // Reductions into one region may run in any order; the copy that
        // first writes it may not.
        const int64_t copy = piece.writers.front();
        if (!precedes(copy, i))
          return issue(i, "reduces into " + step.to.str() + " " + part.str() +
                              " without waiting for step " +
                              std::to_string(copy) + ", which copies into it");
        if (!(piece.shift == add.shift))
          return issue(i, "reduces into " + step.to.str() + " " + part.str() +
                              " elements of another position of the tensor");
        std::vector<int64_t> both;
        std::set_union(piece.contributors.begin(), piece.contributors.end(),
                       add.contributors.begin(), add.contributors.end(),
                       std::back_inserter(both));
        if (both.size() != piece.contributors.size() + add.contributors.size())
          return issue(i, "reduces contributions " +
                              contributorList(add.contributors) + " into " +
                              step.to.str() + " " + part.str() +
                              ", which holds " +
                              contributorList(piece.contributors) +
                              " (a contribution counted twice)");
        for (const Box &rest : subtract(piece.box, part))
          next.push_back({rest, piece.shift, piece.contributors, piece.writers});
        Piece merged{part, piece.shift, std::move(both), piece.writers};
        merged.writers.push_back(i);
        next.push_back(std::move(merged));
        reached += part.volume();
      }
      if (reached != add.box.volume())
        return issue(i, "reduces into bytes of " + step.to.str() + " " +
                            add.box.str() + " that no step copies into first");
      target = std::move(next);
    }
  }

  if (std::optional<ScheduleIssue> scales =
          verifyScaleSteps(schedule, src, dst, shape, precedes))
    return scales;

  // Every destination rank holds its local box, each element once, reduced
  // over exactly its contributors.
  for (int64_t index = 0; index < dst.mesh.size(); ++index) {
    const int64_t rank = dst.mesh.ranks[index];
    const Box local = dst.localBox(shape, index);
    const std::vector<int64_t> expected = contributorsOf(src, dst, index);
    const std::string where =
        "destination rank " + std::to_string(rank) + ": local elements ";
    int64_t covered = 0;
    for (const Piece &piece : piecesOf({BufferKind::Destination, rank})) {
      if (!(piece.shift == local.offsets))
        return issue(-1, where + piece.box.str() + " receive the elements of " +
                             shifted(piece.box, piece.shift).str() +
                             ", not their own");
      if (piece.contributors != expected)
        return issue(-1, where + piece.box.str() + " hold contributions " +
                             contributorList(piece.contributors) +
                             ", expected " + contributorList(expected));
      covered += piece.box.volume();
    }
    if (covered != local.volume())
      return issue(-1, where + Box{Dims(local.sizes.size(), 0), local.sizes}
                                   .str() +
                           ": " + std::to_string(local.volume() - covered) +
                           " of " + std::to_string(local.volume()) +
                           " elements are never written");
  }
  return std::nullopt;
}

} // namespace m2n
