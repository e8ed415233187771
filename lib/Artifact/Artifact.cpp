//===- Artifact.cpp - the compiler-to-runtime handoff -----------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Base/CheckedMath.h"
#include "m2n/Artifact/KernelABI.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

namespace m2n {

/// A program's source element type when it has no cast: a value no element
/// type will take as the enum grows (version 13 wrote the type count, 11,
/// which f8E8M0FNU took in version 14).
static constexpr uint32_t kNoSourceType = 0xFFFFFFFF;

namespace {
constexpr char kMagic[4] = {'M', '2', 'N', 'A'};
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 8;

/// 64-bit FNV-1a over little-endian 8-byte words, the last one padded
/// with zero bytes (docs/artifact.md): a refit's artifact is tens of
/// megabytes, and one multiply per byte took longer than writing it. Fed in
/// pieces (an artifact is written from its parts), the words run on across
/// the pieces' ends.
class Checksum {
public:
  void add(const char *data, size_t size) {
    while (size > 0 && pendingBytes > 0) {
      pending |= static_cast<uint64_t>(static_cast<unsigned char>(*data++))
                 << (8 * pendingBytes);
      --size;
      if (++pendingBytes == 8)
        mixPending();
    }
    for (; size >= 8; data += 8, size -= 8) {
      uint64_t word;
      std::memcpy(&word, data, 8);
      mix(word);
    }
    for (; size > 0; --size)
      pending |= static_cast<uint64_t>(static_cast<unsigned char>(*data++))
                 << (8 * pendingBytes++);
  }
  uint64_t finish() {
    if (pendingBytes > 0)
      mixPending();
    return hash;
  }

private:
  void mix(uint64_t word) {
    hash ^= word;
    hash *= 1099511628211ull;
  }
  void mixPending() {
    mix(pending);
    pending = 0;
    pendingBytes = 0;
  }
  uint64_t hash = 14695981039346656037ull;
  uint64_t pending = 0;
  unsigned pendingBytes = 0;
};

uint64_t fnv1a(const char *data, size_t size) {
  Checksum checksum;
  checksum.add(data, size);
  return checksum.finish();
}

class Writer {
public:
  template <typename T> void put(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T)); // Hosts are little endian.
    out.append(bytes, sizeof(T));
  }
  void string(const std::string &s) {
    put<uint64_t>(s.size());
    out.append(s);
  }
  void ints(const std::vector<int64_t> &values) {
    put<uint32_t>(values.size());
    for (int64_t v : values)
      put<int64_t>(v);
  }
  void buffer(const BufferRef &ref) {
    put<uint8_t>(static_cast<uint8_t>(ref.kind));
    put<int64_t>(ref.rank);
    put<int64_t>(ref.scratch);
  }
  void movement(const Movement &m) {
    buffer(m.src);
    put<int64_t>(m.srcOffset);
    buffer(m.dst);
    put<int64_t>(m.dstOffset);
    put<int64_t>(m.bytes);
    put<uint8_t>(static_cast<uint8_t>(m.mechanism));
    put<uint8_t>(static_cast<uint8_t>(m.kind));
    put<uint8_t>(m.lookup.has_value());
    if (m.lookup) {
      put<int64_t>(m.lookup->entry);
      put<int64_t>(m.lookup->phase);
      put<int64_t>(m.lookup->width);
    }
    if (m.isTile()) {
      put<int64_t>(m.srcMap);
      put<int64_t>(m.dstMap);
      ints(m.srcCoords.vec());
      ints(m.dstCoords.vec());
    }
    // 0 copy, 1 + the Reduction.
    put<uint8_t>(m.reduction ? 1 + static_cast<uint8_t>(*m.reduction) : 0);
    put<uint8_t>(m.signal.has_value());
    if (m.signal) {
      put<int64_t>(m.signal->rank);
      put<int64_t>(m.signal->index);
    }
    put<uint32_t>(m.waits.size());
    for (const CounterWait &w : m.waits) {
      put<int64_t>(w.counter.rank);
      put<int64_t>(w.counter.index);
      put<uint64_t>(w.value);
    }
    put<uint8_t>(m.readDone.has_value());
    if (m.readDone) {
      put<int64_t>(m.readDone->rank);
      put<int64_t>(m.readDone->index);
    }
    put<uint8_t>(m.accumulator.has_value());
    if (m.accumulator)
      buffer(*m.accumulator);
    put<int64_t>(m.step);
    put<uint32_t>(m.repeats.size());
    for (const Repeat &r : m.repeats) {
      put<int64_t>(r.count);
      put<int64_t>(r.srcStride);
      put<int64_t>(r.dstStride);
      put<int64_t>(r.dim);
      put<int64_t>(r.entryStride);
    }
  }
  void layout(const Layout &l) {
    ints(l.mesh.shape);
    ints(l.mesh.ranks);
    put<uint32_t>(l.placements.size());
    for (const Placement &p : l.placements) {
      put<uint8_t>(static_cast<uint8_t>(p.kind));
      put<int64_t>(p.dim);
      put<uint8_t>(static_cast<uint8_t>(p.reduction));
      ints(p.boundaries);
    }
  }
  std::string out;
};

/// Reads fields, remembering the first failure (and what was being read).
class Reader {
public:
  Reader(const char *data, size_t size) : data(data), size(size) {}

  template <typename T> T get(const char *what) {
    T value{};
    if (error)
      return value;
    if (size - pos < sizeof(T)) {
      fail(std::string("artifact truncated while reading ") + what);
      return value;
    }
    std::memcpy(&value, data + pos, sizeof(T));
    pos += sizeof(T);
    return value;
  }
  /// A string: text, without control characters (names end up in
  /// messages and in CUDA's C strings; the PTX keeps its tabs and newlines).
  std::string string(const char *what) {
    uint64_t length = get<uint64_t>(what);
    if (error)
      return {};
    if (length > size - pos) {
      fail(std::string("artifact truncated while reading ") + what);
      return {};
    }
    std::string s(data + pos, length);
    pos += length;
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
          c != '\r') {
        fail(std::string("artifact has a control character in ") + what);
        return {};
      }
    return s;
  }
  /// A count of elements that must each take at least `minBytes`.
  uint32_t count(const char *what, size_t minBytes) {
    uint32_t n = get<uint32_t>(what);
    if (!error && static_cast<uint64_t>(n) * minBytes > size - pos)
      fail(std::string("artifact truncated while reading ") + what);
    return error ? 0 : n;
  }
  std::vector<int64_t> ints(const char *what) {
    uint32_t n = count(what, 8);
    std::vector<int64_t> values(n);
    for (int64_t &v : values)
      v = get<int64_t>(what);
    return values;
  }
  BufferRef buffer() {
    BufferRef ref;
    uint8_t kind = get<uint8_t>("a buffer kind");
    if (kind > static_cast<uint8_t>(BufferKind::Quantizer))
      fail("artifact names an unknown buffer kind " + std::to_string(kind));
    ref.kind = static_cast<BufferKind>(kind);
    ref.rank = get<int64_t>("a buffer rank");
    ref.scratch = get<int64_t>("a scratch index");
    return ref;
  }
  Movement movement() {
    Movement m;
    m.src = buffer();
    m.srcOffset = get<int64_t>("a source offset");
    m.dst = buffer();
    m.dstOffset = get<int64_t>("a destination offset");
    m.bytes = get<int64_t>("a byte count");
    uint8_t mechanism = get<uint8_t>("a mechanism");
    if (mechanism >= kMechanismCount)
      fail("artifact names an unknown mechanism " + std::to_string(mechanism));
    m.mechanism = static_cast<Mechanism>(mechanism);
    uint8_t kind = get<uint8_t>("a movement kind");
    if (kind > static_cast<uint8_t>(StepKind::Scale))
      fail("artifact names an unknown movement kind " + std::to_string(kind));
    m.kind = static_cast<StepKind>(kind);
    if (get<uint8_t>("a block lookup flag")) {
      BlockLookup lookup;
      lookup.entry = get<int64_t>("a lookup entry");
      lookup.phase = get<int64_t>("a lookup phase");
      lookup.width = get<int64_t>("a lookup width");
      m.lookup = lookup;
    }
    if (m.isTile()) {
      m.srcMap = get<int64_t>("a source tensor map");
      m.dstMap = get<int64_t>("a destination tensor map");
      m.srcCoords = Dims(ints("source coordinates"));
      m.dstCoords = Dims(ints("destination coordinates"));
      if (!error && (m.srcMap < 0 || m.srcMap >= maps || m.dstMap < 0 ||
                     m.dstMap >= maps))
        fail("artifact names a tensor map that does not exist");
    }
    uint8_t op = get<uint8_t>("an item op");
    if (op > 1 + static_cast<uint8_t>(Reduction::Min))
      fail("artifact names an unknown item op " + std::to_string(op));
    if (op)
      m.reduction = static_cast<Reduction>(op - 1);
    if (get<uint8_t>("a signal flag"))
      m.signal = CounterRef{get<int64_t>("a signal rank"),
                            get<int64_t>("a signal counter")};
    uint32_t waits = count("waits", 24);
    for (uint32_t w = 0; w < waits; ++w) {
      CounterWait wait;
      wait.counter.rank = get<int64_t>("a wait rank");
      wait.counter.index = get<int64_t>("a wait counter");
      wait.value = get<uint64_t>("a wait value");
      m.waits.push_back(wait);
    }
    if (get<uint8_t>("a read-done flag"))
      m.readDone = CounterRef{get<int64_t>("a read-done rank"),
                              get<int64_t>("a read-done counter")};
    if (get<uint8_t>("an accumulator flag"))
      m.accumulator = buffer();
    m.step = get<int64_t>("a step index");
    uint32_t repeats = count("repeats", 40);
    for (uint32_t level = 0; level < repeats && !error; ++level) {
      Repeat r;
      r.count = get<int64_t>("a repeat count");
      r.srcStride = get<int64_t>("a source stride");
      r.dstStride = get<int64_t>("a destination stride");
      r.dim = get<int64_t>("a repeat dimension");
      r.entryStride = get<int64_t>("a repeat's entry stride");
      m.repeats.push_back(r);
    }
    if (!error && (m.bytes < 0 || m.srcOffset < 0 || m.dstOffset < 0))
      fail("artifact has a movement with a negative size or offset");
    return m;
  }
  Layout layout() {
    Layout l;
    l.mesh.shape = ints("a mesh shape");
    l.mesh.ranks = ints("mesh ranks");
    uint32_t n = count("placements", 10);
    for (uint32_t i = 0; i < n; ++i) {
      Placement p;
      uint8_t kind = get<uint8_t>("a placement kind");
      if (kind > static_cast<uint8_t>(Placement::Kind::Partial))
        fail("artifact names an unknown placement kind");
      p.kind = static_cast<Placement::Kind>(kind);
      p.dim = get<int64_t>("a shard dimension");
      uint8_t reduction = get<uint8_t>("a reduction");
      if (reduction > static_cast<uint8_t>(Reduction::Min))
        fail("artifact names an unknown reduction");
      p.reduction = static_cast<Reduction>(reduction);
      p.boundaries = ints("a shard's boundaries");
      l.placements.push_back(p);
    }
    return l;
  }
  void fail(std::string message) {
    if (!error)
      error = std::move(message);
  }
  bool atEnd() const { return pos == size; }
  size_t position() const { return pos; }

  std::optional<std::string> error;
  /// Tensor maps of the reshard being read (movements refer to them).
  int64_t maps = 0;

private:
  const char *data;
  size_t size;
  size_t pos = 0;
};
} // namespace

/// Every rank a program names fits a communicator (so that the C API's
/// `int` counts them); the buffers and counters they name are checked by
/// verifyTransferProgram.
static std::optional<std::string> checkRanks(const TransferProgram &program) {
  auto outside = [](int64_t rank) {
    return rank < 0 || rank >= kMaxCommunicatorRanks;
  };
  for (const auto &[rank, rankProgram] : program.ranks)
    if (outside(rank))
      return "a program for rank " + std::to_string(rank) +
             ", outside any communicator";
  for (const ScratchBuffer &scratch : program.scratches)
    if (outside(scratch.rank))
      return "a scratch buffer on rank " + std::to_string(scratch.rank) +
             ", outside any communicator";
  return std::nullopt;
}

std::string serializeProgram(const CompiledReshard &r,
                             const KernelLaunch &kernel) {
  Writer w;
  {
    w.put<uint32_t>(static_cast<uint32_t>(r.type));
    // The cast: the source type (kNoSourceType: none) and the scale.
    w.put<uint32_t>(r.program.sourceType
                        ? static_cast<uint32_t>(*r.program.sourceType)
                        : kNoSourceType);
    uint32_t scaleBits;
    std::memcpy(&scaleBits, &r.program.scale, sizeof(scaleBits));
    w.put<uint32_t>(scaleBits);
    // The quantizing scaling: 0 none, 1 + Scaling::Kind, with block sizes.
    const std::optional<Scaling> &scaling = r.program.scaling;
    w.put<uint8_t>(scaling ? 1 + static_cast<uint8_t>(scaling->kind) : 0);
    w.put<int64_t>(scaling ? scaling->blockRows : 0);
    w.put<int64_t>(scaling ? scaling->blockCols : 0);
    w.ints(r.shape);
    w.layout(r.src);
    w.layout(r.dst);
    w.string(r.strategy);
    w.put<int64_t>(r.program.bufferAlignment);
    w.put<uint32_t>(r.program.scratches.size());
    for (const ScratchBuffer &s : r.program.scratches) {
      w.put<int64_t>(s.rank);
      w.ints(s.shape.vec());
      w.put<uint8_t>(s.amaxes);
    }
    w.put<uint32_t>(r.program.maps.size());
    for (const TensorMapSpec &map : r.program.maps) {
      w.buffer(map.buffer);
      w.ints(map.extents.vec());
      w.ints(map.box.vec());
    }
    w.put<uint32_t>(r.program.ranks.size());
    for (const auto &[rank, program] : r.program.ranks) {
      w.put<int64_t>(rank);
      w.put<int64_t>(program.counters);
      const RankLaunch launch =
          program.launch.value_or(chooseLaunch(kernel, program.demand()));
      w.put<uint32_t>(launch.threads);
      w.put<uint32_t>(launch.walkers);
      w.put<uint64_t>(launch.stageBytes);
      w.put<uint32_t>(program.items.size());
      for (const Movement &m : program.items)
        w.movement(m);
      w.put<uint32_t>(program.receives.size());
      for (const Movement &m : program.receives)
        w.movement(m);
      w.put<uint32_t>(program.engineCopies.size());
      for (const Movement &m : program.engineCopies)
        w.movement(m);
    }
  }
  return std::move(w.out);
}

ArtifactParts
assembleArtifact(const Artifact &artifact, std::vector<std::string> programs,
                 const std::vector<std::pair<std::string, uint32_t>> &tensors) {
  Writer w;
  w.string(artifact.ptx);
  w.string(artifact.chip);
  w.string(artifact.kernel.name);
  w.put<uint32_t>(artifact.kernel.threads);
  w.put<uint32_t>(artifact.kernel.ctas);
  w.put<uint64_t>(artifact.kernel.stageBytes);
  w.put<uint32_t>(artifact.kernel.stages);
  w.put<uint32_t>(artifact.kernel.walkers);
  w.put<uint32_t>(tensors.size());
  for (const auto &[name, program] : tensors) {
    w.string(name);
    w.put<uint32_t>(program);
  }
  w.put<uint32_t>(programs.size());
  // The groups after the programs (a group names tensors, not programs).
  Writer groups;
  groups.put<uint32_t>(artifact.groups.size());
  for (const CompiledGroup &group : artifact.groups) {
    groups.string(group.name);
    groups.put<uint32_t>(group.members.size());
    for (uint32_t member : group.members)
      groups.put<uint32_t>(member);
  }
  ArtifactParts result;
  result.parts.reserve(programs.size() + 3);
  result.parts.emplace_back(); // The header, once the payload is known.
  result.parts.push_back(std::move(w.out));
  for (std::string &program : programs)
    result.parts.push_back(std::move(program));
  result.parts.push_back(std::move(groups.out));
  uint64_t payload = 0;
  Checksum checksum;
  for (size_t i = 1; i < result.parts.size(); ++i) {
    payload += result.parts[i].size();
    checksum.add(result.parts[i].data(), result.parts[i].size());
  }
  std::string &header = result.parts.front();
  header.append(kMagic, 4);
  Writer h;
  h.put<uint32_t>(kArtifactVersion);
  h.put<uint64_t>(payload);
  h.put<uint64_t>(checksum.finish());
  header += h.out;
  return result;
}

uint64_t ArtifactParts::size() const {
  uint64_t bytes = 0;
  for (const std::string &part : parts)
    bytes += part.size();
  return bytes;
}

std::string ArtifactParts::join() const {
  std::string bytes;
  bytes.reserve(size());
  for (const std::string &part : parts)
    bytes += part;
  return bytes;
}

std::string serializeArtifact(const Artifact &artifact) {
  std::vector<std::string> programs;
  programs.reserve(artifact.reshards.size());
  std::vector<std::pair<std::string, uint32_t>> tensors;
  tensors.reserve(artifact.reshards.size());
  for (const CompiledReshard &r : artifact.reshards) {
    tensors.emplace_back(r.name, static_cast<uint32_t>(programs.size()));
    programs.push_back(serializeProgram(r, artifact.kernel));
  }
  return assembleArtifact(artifact, std::move(programs), tensors).join();
}

void resealArtifact(std::string &bytes) {
  if (bytes.size() < kHeaderBytes)
    return;
  const uint64_t payload = bytes.size() - kHeaderBytes;
  const uint64_t checksum = fnv1a(bytes.data() + kHeaderBytes, payload);
  std::memcpy(&bytes[8], &payload, sizeof(payload));
  std::memcpy(&bytes[16], &checksum, sizeof(checksum));
}

std::optional<std::string> deserializeArtifact(const std::string &bytes,
                                               Artifact &artifact) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 4))
    return std::string("not an m2n artifact (bad magic)");
  Reader header(bytes.data() + 4, kHeaderBytes - 4);
  uint32_t version = header.get<uint32_t>("the version");
  uint64_t payloadBytes = header.get<uint64_t>("the size");
  uint64_t checksum = header.get<uint64_t>("the checksum");
  if (version != kArtifactVersion)
    return "artifact version " + std::to_string(version) +
           " is not supported (this build reads version " +
           std::to_string(kArtifactVersion) + ")";
  if (payloadBytes != bytes.size() - kHeaderBytes)
    return "artifact truncated: the header announces " +
           std::to_string(payloadBytes) + " payload bytes, the file has " +
           std::to_string(bytes.size() - kHeaderBytes);
  const char *payload = bytes.data() + kHeaderBytes;
  if (fnv1a(payload, payloadBytes) != checksum)
    return std::string("artifact corrupted: checksum mismatch");

  Reader r(payload, payloadBytes);
  Artifact result;
  result.ptx = r.string("the PTX");
  result.chip = r.string("the chip");
  result.kernel.name = r.string("the kernel name");
  result.kernel.threads = r.get<uint32_t>("the kernel's threads");
  result.kernel.ctas = r.get<uint32_t>("the kernel's CTAs");
  result.kernel.stageBytes = r.get<uint64_t>("the stage size");
  result.kernel.stages = r.get<uint32_t>("the stage count");
  result.kernel.walkers = r.get<uint32_t>("the walkers per CTA");
  // Everything the runtime computes from these (launchShape, the shared
  // memory of a launch) is bounded here.
  if (!r.error)
    if (std::optional<std::string> wrong = checkKernelLaunch(result.kernel))
      r.fail("artifact's kernel: " + *wrong);
  // The reshards (a name and a program index), then each program once.
  uint32_t reshards = r.count("reshards", 12);
  std::vector<std::pair<std::string, uint32_t>> tensors;
  for (uint32_t i = 0; i < reshards && !r.error; ++i) {
    std::string name = r.string("a reshard name");
    uint32_t program = r.get<uint32_t>("a reshard's program");
    tensors.emplace_back(std::move(name), program);
  }
  uint32_t programCount = r.count("programs", 8);
  // Each program is named in messages after the first reshard that runs it.
  std::vector<const std::string *> firstUser(programCount, nullptr);
  for (const auto &[name, program] : tensors) {
    if (r.error)
      break;
    if (program >= programCount)
      r.fail("artifact reshard " + name + " names program " +
             std::to_string(program) + " of " + std::to_string(programCount));
    else if (!firstUser[program])
      firstUser[program] = &name;
  }
  for (uint32_t p = 0; p < programCount && !r.error; ++p)
    if (!firstUser[p])
      r.fail("artifact program " + std::to_string(p) + " runs no reshard");
  std::vector<CompiledReshard> programs;
  programs.reserve(r.error ? 0 : programCount);
  std::vector<uint64_t> programBytes;
  programBytes.reserve(r.error ? 0 : programCount);
  for (uint32_t p = 0; p < programCount && !r.error; ++p) {
    const size_t start = r.position();
    CompiledReshard c;
    c.name = *firstUser[p];
    uint32_t type = r.get<uint32_t>("an element type");
    if (type >= static_cast<uint32_t>(kElementTypeCount))
      r.fail("artifact names an unknown element type");
    c.type = static_cast<ElementType>(type);
    c.program.type = c.type;
    uint32_t source = r.get<uint32_t>("a source element type");
    if (source != kNoSourceType &&
        source >= static_cast<uint32_t>(kElementTypeCount))
      r.fail("artifact names an unknown source element type");
    else if (source != kNoSourceType)
      c.program.sourceType = static_cast<ElementType>(source);
    uint32_t scaleBits = r.get<uint32_t>("a cast scale");
    std::memcpy(&c.program.scale, &scaleBits, sizeof(scaleBits));
    if (!std::isfinite(c.program.scale))
      r.fail("artifact has a cast scale that is not finite");
    const uint8_t scalingKind = r.get<uint8_t>("a scaling mode");
    const int64_t blockRows = r.get<int64_t>("a scaling's block rows");
    const int64_t blockCols = r.get<int64_t>("a scaling's block columns");
    if (scalingKind > 1 + static_cast<uint8_t>(Scaling::Kind::Mx))
      r.fail("artifact names an unknown scaling mode " +
             std::to_string(scalingKind));
    else if (scalingKind)
      c.program.scaling =
          Scaling{static_cast<Scaling::Kind>(scalingKind - 1), blockRows,
                  blockCols};
    c.shape = r.ints("a shape");
    c.src = r.layout();
    c.dst = r.layout();
    c.strategy = r.string("a strategy");
    c.program.bufferAlignment = r.get<int64_t>("a buffer alignment");
    uint32_t scratches = r.count("scratch buffers", 13);
    for (uint32_t s = 0; s < scratches; ++s) {
      ScratchBuffer buffer;
      buffer.rank = r.get<int64_t>("a scratch rank");
      buffer.shape = Dims(r.ints("a scratch shape"));
      const uint8_t amaxes = r.get<uint8_t>("a scratch's contents");
      if (amaxes > 1)
        r.fail("artifact has a scratch of unknown contents " +
               std::to_string(amaxes));
      buffer.amaxes = amaxes == 1;
      c.program.scratches.push_back(buffer);
    }
    uint32_t maps = r.count("tensor maps", 25);
    for (uint32_t m = 0; m < maps && !r.error; ++m) {
      TensorMapSpec map;
      map.buffer = r.buffer();
      map.extents = Dims(r.ints("tensor map extents"));
      map.box = Dims(r.ints("a tensor map box"));
      if (!r.error && (map.extents.size() != map.box.size() ||
                       map.box.empty() || map.box.size() > 5))
        r.fail("artifact has a tensor map of a bad rank");
      c.program.maps.push_back(map);
    }
    r.maps = maps;
    uint32_t ranks = r.count("rank programs", 24);
    for (uint32_t k = 0; k < ranks && !r.error; ++k) {
      int64_t rank = r.get<int64_t>("a rank");
      RankProgram &program = c.program.ranks[rank];
      program.counters = r.get<int64_t>("a counter count");
      RankLaunch launch;
      launch.threads = r.get<uint32_t>("a launch's threads");
      launch.walkers = r.get<uint32_t>("a launch's walkers");
      launch.stageBytes = r.get<uint64_t>("a launch's stage bytes");
      program.launch = launch;
      uint32_t items = r.count("items", 66);
      for (uint32_t m = 0; m < items && !r.error; ++m)
        program.items.push_back(r.movement());
      uint32_t receives = r.count("receives", 66);
      for (uint32_t m = 0; m < receives && !r.error; ++m)
        program.receives.push_back(r.movement());
      uint32_t copies = r.count("copy-engine copies", 66);
      for (uint32_t m = 0; m < copies && !r.error; ++m)
        program.engineCopies.push_back(r.movement());
    }
    // The layouts first: the program's bounds are computed from them.
    if (!r.error)
      if (std::optional<std::string> wrong =
              validateReshard(c.src, c.dst, c.shape, kMaxCommunicatorRanks))
        r.fail(c.name + ": " + *wrong);
    // Every buffer's byte size is at most the tensor's, which must fit.
    if (!r.error &&
        !checkedProduct(c.shape,
                        std::max(elementSize(c.type),
                                 elementSize(c.program.sourceType.value_or(
                                     c.type)))))
      r.fail(c.name + ": the tensor's byte size does not fit in 64 bits");
    if (!r.error)
      if (std::optional<std::string> wrong = checkRanks(c.program))
        r.fail(c.name + ": " + *wrong);
    if (!r.error)
      if (std::optional<std::string> wrong = verifyTransferProgram(
              c.program, c.src, c.dst, c.shape))
        r.fail(c.name + ": " + *wrong);
    // Each rank's launch runs its items and fits the kernel.
    for (const auto &[rank, program] : c.program.ranks) {
      if (r.error)
        break;
      std::optional<std::string> wrong =
          checkLaunch(*program.launch, program.demand());
      if (!wrong)
        wrong = checkLaunch(result.kernel, *program.launch);
      if (wrong)
        r.fail(c.name + ": rank " + std::to_string(rank) + ": " + *wrong);
    }
    programBytes.push_back(r.position() - start);
    programs.push_back(std::move(c));
  }
  // Groups: a name and distinct member reshards, in the group's order.
  uint32_t groupCount = r.count("groups", 12);
  for (uint32_t g = 0; g < groupCount && !r.error; ++g) {
    CompiledGroup group;
    group.name = r.string("a group name");
    uint32_t members = r.count("group members", 4);
    std::vector<bool> seen(tensors.size(), false);
    for (uint32_t m = 0; m < members && !r.error; ++m) {
      uint32_t member = r.get<uint32_t>("a group member");
      if (r.error)
        break;
      if (member >= tensors.size() || seen[member])
        r.fail("artifact group " + group.name + " names reshard " +
               std::to_string(member) + (member < tensors.size()
                                             ? " twice"
                                             : " of " + std::to_string(
                                                            tensors.size())));
      else
        seen[member] = true;
      group.members.push_back(member);
    }
    if (!r.error && group.members.empty())
      r.fail("artifact group " + group.name + " has no member");
    result.groups.push_back(std::move(group));
  }
  if (r.error)
    return r.error;
  // Each reshard gets its own copy of its program, and each group one of
  // its members': bounded, so that a file of many names for one large
  // program cannot ask for unbounded memory.
  uint64_t expanded = 0;
  for (const auto &[name, program] : tensors)
    expanded += programBytes[program];
  for (const CompiledGroup &group : result.groups)
    for (uint32_t member : group.members)
      expanded += programBytes[tensors[member].second];
  if (expanded > kMaxLoadedProgramBytes)
    return "artifact reshards expand to " + std::to_string(expanded) +
           " bytes of programs, more than the " +
           std::to_string(kMaxLoadedProgramBytes) +
           " a loaded artifact may hold";
  result.reshards.reserve(tensors.size());
  for (auto &[name, program] : tensors) {
    result.reshards.push_back(programs[program]);
    result.reshards.back().name = std::move(name);
  }
  for (CompiledGroup &group : result.groups) {
    std::vector<const TransferProgram *> members;
    for (uint32_t member : group.members)
      members.push_back(&programs[tensors[member].second].program);
    auto merged =
        std::make_shared<const TransferProgram>(mergePrograms(members));
    for (const auto &[rank, program] : merged->ranks) {
      int64_t items = 0;
      for (const std::vector<Movement> *list :
           {&program.items, &program.receives})
        for (const Movement &m : *list)
          items += m.instances();
      if (items > kMaxRankItems)
        return "artifact group " + group.name + " gives rank " +
               std::to_string(rank) + " " + std::to_string(items) +
               " items and receives, more than the " +
               std::to_string(kMaxRankItems) + " one rank's program may hold";
    }
    group.program = std::move(merged);
  }
  if (!r.atEnd())
    return std::string("artifact has unexpected bytes after its last field");
  artifact = std::move(result);
  return std::nullopt;
}

uint64_t sharedMemoryBudget(const KernelLaunch &kernel) {
  return (kernel.stageBytes + 127) / 128 * 128 * kernel.stages;
}

std::optional<std::string> checkKernelLaunch(const KernelLaunch &kernel) {
  if (!isBlockThreads(kernel.threads) || kernel.ctas < 1 ||
      kernel.ctas > kMaxCtas || kernel.walkers < 1 ||
      kernel.walkers > kMaxWalkers || kernel.stages < 1 ||
      kernel.stages > kMaxKernelBarriers || kernel.stageBytes < 16 ||
      kernel.stageBytes % 16 || kernel.stageBytes > kMaxStageMemory)
    return "a kernel of " + std::to_string(kernel.threads) + " threads, " +
           std::to_string(kernel.ctas) + " CTAs, " +
           std::to_string(kernel.walkers) + " walkers and " +
           std::to_string(kernel.stages) + " stages of " +
           std::to_string(kernel.stageBytes) +
           " bytes: threads must be 32, 128 or 256, CTAs 1-" +
           std::to_string(kMaxCtas) + ", walkers 1-" +
           std::to_string(kMaxWalkers) + ", stages 1-" +
           std::to_string(kMaxKernelBarriers) +
           " and stage bytes a positive multiple of 16";
  if (sharedMemoryBudget(kernel) > kMaxStageMemory)
    return std::to_string(kernel.stages) + " stages of " +
           std::to_string(kernel.stageBytes) +
           " bytes (each rounded up to 128) take " +
           std::to_string(sharedMemoryBudget(kernel)) +
           " bytes of shared memory, more than the " +
           std::to_string(kMaxStageMemory) + " a CTA may use";
  return std::nullopt;
}

std::optional<std::string> checkLaunch(const KernelLaunch &kernel,
                                       const RankLaunch &launch) {
  const uint64_t compiledStage = (kernel.stageBytes + 127) / 128 * 128;
  if (launch.threads != 32 && launch.threads != kernel.threads)
    return "launch " + launch.str() +
           (kernel.threads == 32
                ? ": the kernel has no SM path, its blocks are 32 threads"
                : ": the kernel's blocks are 32 or " +
                      std::to_string(kernel.threads) + " threads");
  if (launch.stageBytes > compiledStage ||
      launch.stageBytes * kernel.stages * launch.walkers >
          sharedMemoryBudget(kernel) ||
      uint64_t{launch.walkers} * kernel.stages > kMaxKernelBarriers)
    return "launch " + launch.str() + " does not fit the kernel's " +
           std::to_string(kernel.stages) + " stages of " +
           std::to_string(compiledStage) + " B a walker (" +
           std::to_string(sharedMemoryBudget(kernel)) +
           " B of shared memory, " + std::to_string(kMaxKernelBarriers) +
           " barriers)";
  return std::nullopt;
}

RankLaunch chooseLaunch(const KernelLaunch &kernel, const LaunchDemand &demand) {
  const uint64_t compiledStage = (kernel.stageBytes + 127) / 128 * 128;
  RankLaunch launch{32, 1, compiledStage};
  // A kernel no loader accepts (a corrupted-artifact test's) gets the
  // plainest launch rather than arithmetic on its fields.
  if (checkKernelLaunch(kernel))
    return launch;
  if (demand.vector) {
    launch.threads = kernel.threads;
    return launch;
  }
  const uint64_t stage = std::max<uint64_t>(
      128, (static_cast<uint64_t>(demand.largestItem) + 127) / 128 * 128);
  if (kernel.walkers <= 1 || kernel.stages < 1 || stage >= compiledStage)
    return launch;
  const uint64_t walkers = std::min<uint64_t>(
      {kernel.walkers, sharedMemoryBudget(kernel) / (stage * kernel.stages),
       kMaxKernelBarriers / kernel.stages});
  if (walkers > 1) {
    launch.walkers = static_cast<uint32_t>(walkers);
    launch.stageBytes = stage;
  }
  return launch;
}

LaunchShape launchShape(const KernelLaunch &kernel, const RankLaunch &launch,
                        uint32_t maxThreads) {
  return {launch.threads,
          std::max<uint32_t>(1, std::min(launch.walkers, maxThreads / 32)),
          launch.stageBytes, kernel.stages};
}

std::string describeArtifact(const Artifact &artifact, bool withPtx) {
  std::ostringstream os;
  os << "m2n artifact version " << kArtifactVersion << ", chip "
     << artifact.chip << ", PTX " << artifact.ptx.size() << " bytes\n";
  os << "kernel " << artifact.kernel.name << ": " << artifact.kernel.ctas
     << " CTAs x " << artifact.kernel.threads << " threads, "
     << artifact.kernel.stages << " stages of " << artifact.kernel.stageBytes
     << " bytes, up to " << artifact.kernel.walkers << " walkers\n";
  for (const CompiledReshard &r : artifact.reshards) {
    os << "reshard " << r.name << ": ";
    if (r.program.sourceType)
      os << toString(*r.program.sourceType) << " -> ";
    os << toString(r.type);
    if (r.program.scaling)
      os << " scaling " << r.program.scaling->str();
    else if (r.program.sourceType && r.program.scale != 1.0f)
      os << " x " << r.program.scale;
    os << '[';
    for (size_t d = 0; d < r.shape.size(); ++d)
      os << (d ? "x" : "") << r.shape[d];
    os << "] " << r.strategy;
    if (r.program.bufferAlignment != 16)
      os << ", buffers aligned to " << r.program.bufferAlignment << " bytes";
    os << "\n  src " << r.src.str() << "\n  dst "
       << r.dst.str() << '\n';
    for (size_t s = 0; s < r.program.scratches.size(); ++s) {
      os << "  scratch" << s << " on rank " << r.program.scratches[s].rank
         << " [";
      for (size_t d = 0; d < r.program.scratches[s].shape.size(); ++d)
        os << (d ? "x" : "") << r.program.scratches[s].shape[d];
      os << (r.program.scratches[s].amaxes ? "] amaxes\n" : "]\n");
    }
    for (size_t m = 0; m < r.program.maps.size(); ++m) {
      const TensorMapSpec &map = r.program.maps[m];
      os << "  map" << m << " over " << map.buffer.str() << " [";
      for (size_t d = 0; d < map.extents.size(); ++d)
        os << (d ? "x" : "") << map.extents[d];
      os << "] box [";
      for (size_t d = 0; d < map.box.size(); ++d)
        os << (d ? "x" : "") << map.box[d];
      os << "]\n";
    }
    for (const auto &[rank, program] : r.program.ranks) {
      // Kernel items and receives once expanded (Movement::repeats), and
      // the movements that stand for them where fewer.
      auto counted = [&](const std::vector<Movement> &movements,
                         const char *what) {
        int64_t instances = 0;
        for (const Movement &m : movements)
          instances += m.instances();
        os << instances << ' ' << what;
        if (instances != static_cast<int64_t>(movements.size()))
          os << " in " << movements.size() << " movements";
      };
      os << "  rank " << rank << ": ";
      counted(program.items, "items");
      os << ", ";
      counted(program.receives, "network receives");
      os << ", " << program.counters << " counters";
      if (!program.engineCopies.empty())
        os << ", " << program.engineCopies.size() << " copy-engine copies";
      if (program.launch)
        os << "; launch " << program.launch->walkers << " walker"
           << (program.launch->walkers > 1 ? "s" : "") << " x "
           << program.launch->threads << " threads, "
           << artifact.kernel.stages << " stages of "
           << program.launch->stageBytes << " B";
      os << '\n';
      for (const Movement &m : program.engineCopies)
        os << "    engine " << m.str(r.program.typeOf(m.dst)) << '\n';
      for (const Movement &m : program.items)
        os << "    item " << m.str(r.program.typeOf(m.dst)) << '\n';
      for (const Movement &m : program.receives)
        os << "    recv " << m.str(r.program.typeOf(m.dst)) << '\n';
    }
  }
  for (const CompiledGroup &group : artifact.groups) {
    os << "group " << group.name << ": " << group.members.size()
       << " members (";
    for (size_t m = 0; m < group.members.size(); ++m)
      os << (m ? ", " : "") << artifact.reshards.at(group.members[m]).name;
    os << ")\n";
    for (const auto &[rank, program] : group.program->ranks) {
      os << "  rank " << rank << ": " << program.items.size()
         << " item movements, " << program.receives.size()
         << " receive movements, " << program.counters << " counters";
      if (program.launch)
        os << "; launch " << program.launch->walkers << " walker"
           << (program.launch->walkers > 1 ? "s" : "") << " x "
           << program.launch->threads << " threads";
      os << '\n';
    }
  }
  if (withPtx)
    os << "--- PTX ---\n" << artifact.ptx;
  return os.str();
}

} // namespace m2n
