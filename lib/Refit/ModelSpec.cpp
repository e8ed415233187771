//===- ModelSpec.cpp - model descriptions and parallel configurations ------===//

#include "m2n/Refit/Refit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <set>

namespace m2n {

const char *toString(TensorRole role) {
  switch (role) {
  case TensorRole::Column:
    return "column";
  case TensorRole::Row:
    return "row";
  case TensorRole::Replicated:
    return "replicated";
  case TensorRole::Experts:
    return "experts";
  case TensorRole::ExpertsRow:
    return "experts_row";
  }
  return "?";
}

std::optional<TensorRole> parseTensorRole(const std::string &name) {
  for (TensorRole role : {TensorRole::Column, TensorRole::Row,
                          TensorRole::Replicated, TensorRole::Experts,
                          TensorRole::ExpertsRow})
    if (name == toString(role))
      return role;
  return std::nullopt;
}

int64_t TensorSpec::elements() const {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

int64_t ModelSpec::parameterCount() const {
  int64_t count = 0;
  for (const TensorSpec &tensor : tensors)
    count += tensor.elements();
  return count;
}

int64_t ModelSpec::bytes() const {
  int64_t bytes = 0;
  for (const TensorSpec &tensor : tensors)
    bytes += tensor.elements() * elementSize(tensor.type);
  return bytes;
}

namespace {

/// Reads the object at `path` of a JSON model description; every failure
/// names the field ("tensors[3].shape: ...").
class ModelReader {
public:
  explicit ModelReader(ModelSpec &model) : model(model) {}

  std::optional<std::string> read(const llvm::json::Value &root) {
    const llvm::json::Object *object = root.getAsObject();
    if (!object)
      return std::string("a model description is a JSON object");
    for (const auto &[key, value] : *object)
      if (!llvm::is_contained({"name", "dtype", "layers", "tensors", "comment"},
                              key.str()))
        return "unknown field '" + key.str() +
               "' (name, dtype, layers, tensors, comment)";
    if (std::optional<llvm::StringRef> name = object->getString("name"))
      model.name = name->str();
    else
      return std::string("name: a string is required");
    ElementType type = ElementType::BF16;
    if (const llvm::json::Value *dtype = object->get("dtype"))
      if (auto error = readType(*dtype, "dtype", type))
        return error;
    std::optional<int64_t> layers = object->getInteger("layers");
    if (!layers || *layers < 1)
      return std::string("layers: a positive integer is required");
    model.layers = *layers;
    const llvm::json::Array *tensors = object->getArray("tensors");
    if (!tensors || tensors->empty())
      return std::string("tensors: a non-empty array is required");
    for (size_t i = 0; i < tensors->size(); ++i)
      if (auto error = readTensor((*tensors)[i], type,
                                  "tensors[" + std::to_string(i) + "]"))
        return error;
    // Checkpoint order: layer by layer, each in the order of the templates.
    std::stable_sort(model.tensors.begin(), model.tensors.end(),
                     [](const TensorSpec &a, const TensorSpec &b) {
                       return a.layer < b.layer;
                     });
    std::set<std::string> names;
    for (const TensorSpec &tensor : model.tensors)
      if (!names.insert(tensor.name).second)
        return "two tensors are named '" + tensor.name + "'";
    return std::nullopt;
  }

private:
  static std::optional<std::string> readType(const llvm::json::Value &value,
                                             const std::string &where,
                                             ElementType &type) {
    std::optional<llvm::StringRef> name = value.getAsString();
    std::optional<ElementType> parsed =
        name ? parseElementType(name->str()) : std::nullopt;
    if (!parsed)
      return where + ": an element type is required (bf16, f16, f32, f64, "
                     "f8E4M3FN, f8E5M2, f8E8M0FNU, i8, i16, i32, i64, ui8)";
    type = *parsed;
    return std::nullopt;
  }

  std::optional<std::string> readTensor(const llvm::json::Value &value,
                                        ElementType modelType,
                                        const std::string &where) {
    const llvm::json::Object *object = value.getAsObject();
    if (!object)
      return where + ": a JSON object is required";
    for (const auto &[key, field] : *object)
      if (!llvm::is_contained({"name", "shape", "role", "dtype", "layers",
                               "stage", "quantized", "vocabulary", "comment"},
                              key.str()))
        return where + ": unknown field '" + key.str() +
               "' (name, shape, role, dtype, layers, stage, quantized, "
               "vocabulary, comment)";
    TensorSpec tensor;
    tensor.type = modelType;
    std::optional<llvm::StringRef> name = object->getString("name");
    if (!name || name->empty())
      return where + ".name: a non-empty string is required";
    const llvm::json::Array *shape = object->getArray("shape");
    if (!shape || shape->empty())
      return where + ".shape: a non-empty array of extents is required";
    for (const llvm::json::Value &extent : *shape) {
      std::optional<int64_t> n = extent.getAsInteger();
      if (!n || *n < 1)
        return where + ".shape: extents are integers >= 1";
      tensor.shape.push_back(*n);
    }
    std::optional<llvm::StringRef> role = object->getString("role");
    std::optional<TensorRole> parsedRole =
        role ? parseTensorRole(role->str()) : std::nullopt;
    if (!parsedRole)
      return where + ".role: one of column, row, replicated, experts, "
                     "experts_row is required";
    tensor.role = *parsedRole;
    if (const llvm::json::Value *dtype = object->get("dtype"))
      if (auto error = readType(*dtype, where + ".dtype", tensor.type))
        return error;
    if (const llvm::json::Value *quantized = object->get("quantized")) {
      std::optional<bool> flag = quantized->getAsBoolean();
      if (!flag)
        return where + ".quantized: true or false is required";
      tensor.quantized = *flag;
    }
    if (const llvm::json::Value *vocabulary = object->get("vocabulary")) {
      std::optional<bool> flag = vocabulary->getAsBoolean();
      if (!flag)
        return where + ".vocabulary: true or false is required";
      if (*flag && tensor.role != TensorRole::Column)
        return where + ".vocabulary: only a column weight has its vocabulary "
                       "in dimension 0";
      tensor.vocabulary = *flag;
    }

    const bool perLayer = name->contains("{layer}");
    const llvm::json::Value *range = object->get("layers");
    const llvm::json::Value *stage = object->get("stage");
    if (perLayer && stage)
      return where + ": a per-layer tensor ({layer} in its name) has no "
                     "'stage'";
    if (!perLayer && range)
      return where + ": 'layers' is for per-layer tensors ({layer} in the "
                     "name)";
    if (!perLayer) {
      std::optional<llvm::StringRef> place =
          stage ? stage->getAsString() : std::nullopt;
      if (!place || (*place != "first" && *place != "last"))
        return where + ".stage: \"first\" or \"last\" is required for a "
                       "tensor outside the layers";
      tensor.name = name->str();
      tensor.layer = *place == "first" ? -1 : model.layers;
      model.tensors.push_back(std::move(tensor));
      return std::nullopt;
    }
    int64_t first = 0, last = model.layers;
    if (range) {
      const llvm::json::Array *bounds = range->getAsArray();
      std::optional<int64_t> from, to;
      if (bounds && bounds->size() == 2) {
        from = (*bounds)[0].getAsInteger();
        to = (*bounds)[1].getAsInteger();
      }
      if (!from || !to || *from < 0 || *from >= *to || *to > model.layers)
        return where + ".layers: [first, end) within [0, " +
               std::to_string(model.layers) + "] is required";
      first = *from;
      last = *to;
    }
    for (int64_t layer = first; layer < last; ++layer) {
      TensorSpec copy = tensor;
      std::string expanded = name->str();
      for (size_t at; (at = expanded.find("{layer}")) != std::string::npos;)
        expanded.replace(at, 7, std::to_string(layer));
      copy.name = std::move(expanded);
      copy.layer = layer;
      model.tensors.push_back(std::move(copy));
    }
    return std::nullopt;
  }

  ModelSpec &model;
};

} // namespace

std::optional<std::string> parseModelSpec(const std::string &text,
                                          ModelSpec &model) {
  model = ModelSpec();
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (!root)
    return "not JSON: " + llvm::toString(root.takeError());
  return ModelReader(model).read(*root);
}

std::string ParallelConfig::str() const {
  std::string text = "tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                     ",dp=" + std::to_string(dp);
  if (cp != 1)
    text += ",cp=" + std::to_string(cp);
  if (ep != 1)
    text += ",ep=" + std::to_string(ep);
  if (vocabPad)
    text += ",vocab_pad=" + std::to_string(vocabPad);
  return text + ",base=" + std::to_string(base);
}

std::optional<std::string> parseParallelConfig(const std::string &text,
                                               ParallelConfig &config) {
  config = ParallelConfig();
  std::set<std::string> seen;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(text).split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return std::string("a parallel configuration is 'tp=N,pp=N,dp=N,cp=N,"
                       "ep=N,base=N,vocab_pad=N' (any of them, default 1, "
                       "base and vocab_pad 0)");
  for (llvm::StringRef item : items) {
    auto [key, value] = item.trim().split('=');
    int64_t number = 0;
    if (value.getAsInteger(10, number))
      return "'" + item.str() + "': expected key=integer";
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("tp", &config.tp)
                         .Case("pp", &config.pp)
                         .Case("dp", &config.dp)
                         .Case("cp", &config.cp)
                         .Case("ep", &config.ep)
                         .Case("base", &config.base)
                         .Case("vocab_pad", &config.vocabPad)
                         .Default(nullptr);
    if (!field)
      return "'" + key.str() +
             "': unknown (tp, pp, dp, cp, ep, base, vocab_pad)";
    if (!seen.insert(key.str()).second)
      return "'" + key.str() + "' is given twice";
    const bool mayBeZero = key == "base" || key == "vocab_pad";
    if (number < (mayBeZero ? 0 : 1))
      return "'" + item.str() + "': " + key.str() +
             (mayBeZero ? " must not be negative" : " must be at least 1");
    *field = number;
  }
  return std::nullopt;
}

} // namespace m2n
