//===- FuzzMain.cpp - a seeded mutation driver for builds without libFuzzer
//===//
//
// The fuzz targets define LLVMFuzzerTestOneInput (and optionally
// LLVMFuzzerInitialize), so that clang's libFuzzer (-fsanitize=fuzzer) drives
// them when the toolchain has it; a g++ build links this driver instead. It
// takes the libFuzzer options the CI and fuzz/README.md use, with the same
// meaning:
//   m2n-fuzz-X [-runs=N] [-seed=S] [-max_total_time=SEC] [-max_len=BYTES]
//              [-artifact_prefix=DIR/] CORPUS_FILE_OR_DIR...
// Every corpus input runs once as given (the regression replay), then `runs`
// mutants of randomly chosen inputs: bytes flipped, set, inserted, erased,
// duplicated or spliced from another input, 8-byte words and decimal
// numbers replaced by boundary values (0, -1, 2^31, 2^63 - 1, ...). The seed
// is printed; the same seed and corpus give the same mutants. A crash writes
// the input to <artifact_prefix>crash-<seed>-<run> before the process dies.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace {

/// What the signal handler writes: the input being run, where.
std::string currentInput;
char crashPath[4096];

void onCrash(int signal) {
  int fd = ::open(crashPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, currentInput.data(), currentInput.size());
    (void)ignored;
    ::close(fd);
  }
  const char message[] = "m2n-fuzz: crash; input written to ";
  ssize_t ignored = ::write(2, message, sizeof(message) - 1);
  ignored = ::write(2, crashPath, std::strlen(crashPath));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  out = bytes.str();
  return true;
}

/// The files of `path`: itself, or a directory's regular files, sorted so
/// that a seed means the same mutants on every machine.
std::vector<std::string> corpusFiles(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return {};
  if (!S_ISDIR(info.st_mode))
    return {path};
  std::vector<std::string> files;
  if (DIR *dir = ::opendir(path.c_str())) {
    while (dirent *entry = ::readdir(dir)) {
      std::string file = path + "/" + entry->d_name;
      if (entry->d_name[0] != '.' && ::stat(file.c_str(), &info) == 0 &&
          S_ISREG(info.st_mode))
        files.push_back(file);
    }
    ::closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

class Mutator {
public:
  explicit Mutator(uint64_t seed) : random(seed) {}

  std::string mutate(std::string input, const std::vector<std::string> &corpus,
                     size_t maxLength) {
    const int rounds = 1 + below(4);
    for (int round = 0; round < rounds; ++round)
      mutateOnce(input, corpus);
    if (input.size() > maxLength)
      input.resize(maxLength);
    return input;
  }

private:
  size_t below(size_t n) { return n ? random() % n : 0; }

  void mutateOnce(std::string &s, const std::vector<std::string> &corpus) {
    static const int64_t boundaries[] = {0,
                                         1,
                                         -1,
                                         2,
                                         7,
                                         16,
                                         255,
                                         4096,
                                         INT32_MAX,
                                         int64_t(INT32_MAX) + 1,
                                         UINT32_MAX,
                                         int64_t(1) << 40,
                                         int64_t(1) << 62,
                                         INT64_MAX,
                                         INT64_MIN,
                                         3037000500};
    const int64_t boundary =
        boundaries[below(sizeof(boundaries) / sizeof(boundaries[0]))];
    switch (below(9)) {
    case 0: // Flip a bit.
      if (!s.empty())
        s[below(s.size())] ^= char(1u << below(8));
      break;
    case 1: // Set a byte.
      if (!s.empty())
        s[below(s.size())] = char(random());
      break;
    case 2: // Insert bytes.
      s.insert(below(s.size() + 1), std::string(1 + below(8), char(random())));
      break;
    case 3: // Erase bytes.
      if (!s.empty()) {
        size_t at = below(s.size());
        s.erase(at, 1 + below(std::min<size_t>(16, s.size() - at)));
      }
      break;
    case 4: // Duplicate a range.
      if (!s.empty()) {
        size_t at = below(s.size());
        size_t length = 1 + below(std::min<size_t>(64, s.size() - at));
        s.insert(below(s.size() + 1), s.substr(at, length));
      }
      break;
    case 5: // Splice in a range of another input.
      if (!corpus.empty()) {
        const std::string &other = corpus[below(corpus.size())];
        if (!other.empty()) {
          size_t at = below(other.size());
          size_t length = 1 + below(std::min<size_t>(256, other.size() - at));
          s.insert(below(s.size() + 1), other.substr(at, length));
        }
      }
      break;
    case 6: // A boundary value as a little-endian word (binary fields).
    case 7:
      if (s.size() >= 8) {
        const size_t width = size_t(1) << (2 + below(2)); // 4 or 8 bytes.
        std::memcpy(&s[below(s.size() - width + 1)], &boundary, width);
      }
      break;
    case 8: // A boundary value for a decimal number (IR text).
      replaceNumber(s, boundary);
      break;
    }
  }

  void replaceNumber(std::string &s, int64_t value) {
    std::vector<size_t> starts;
    for (size_t i = 0; i < s.size(); ++i)
      if (std::isdigit(static_cast<unsigned char>(s[i])) &&
          (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))))
        starts.push_back(i);
    if (starts.empty())
      return;
    size_t start = starts[below(starts.size())], end = start;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])))
      ++end;
    s.replace(start, end - start, std::to_string(value));
  }

  std::mt19937_64 random;
};

bool option(const char *arg, const char *name, std::string &value) {
  const size_t length = std::strlen(name);
  if (std::strncmp(arg, name, length) != 0 || arg[length] != '=')
    return false;
  value = arg + length + 1;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  uint64_t seed = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  long long runs = 0;
  double maxSeconds = 0;
  size_t maxLength = 1 << 20;
  std::string prefix = "./";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string value;
    if (option(argv[i], "-runs", value))
      runs = std::atoll(value.c_str());
    else if (option(argv[i], "-seed", value))
      seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (option(argv[i], "-max_total_time", value))
      maxSeconds = std::atof(value.c_str());
    else if (option(argv[i], "-max_len", value))
      maxLength = std::strtoull(value.c_str(), nullptr, 10);
    else if (option(argv[i], "-artifact_prefix", value))
      prefix = value;
    else if (argv[i][0] == '-')
      std::fprintf(stderr, "m2n-fuzz: ignoring libFuzzer option %s\n", argv[i]);
    else
      paths.push_back(argv[i]);
  }
  std::vector<std::string> corpus;
  for (const std::string &path : paths) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0) {
      std::fprintf(stderr, "m2n-fuzz: no corpus '%s'\n", path.c_str());
      return 2;
    }
    std::vector<std::string> files = corpusFiles(path);
    for (const std::string &file : files) {
      std::string bytes;
      if (!readFile(file, bytes)) {
        std::fprintf(stderr, "m2n-fuzz: cannot read '%s'\n", file.c_str());
        return 2;
      }
      corpus.push_back(std::move(bytes));
    }
  }
  std::printf("m2n-fuzz: seed=%llu, %zu corpus inputs, %lld mutants\n",
              static_cast<unsigned long long>(seed), corpus.size(), runs);
  std::fflush(stdout);
  for (int signal : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL})
    std::signal(signal, onCrash);

  auto run = [&](const std::string &input, const char *what, long long n) {
    std::snprintf(crashPath, sizeof(crashPath), "%scrash-%s-%llu-%lld",
                  prefix.c_str(), what, static_cast<unsigned long long>(seed),
                  n);
    currentInput = input;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                           input.size());
  };
  for (size_t i = 0; i < corpus.size(); ++i)
    run(corpus[i], "corpus", static_cast<long long>(i));
  if (corpus.empty())
    corpus.push_back({});
  Mutator mutator(seed);
  std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ull);
  const auto start = std::chrono::steady_clock::now();
  long long done = 0;
  for (; runs <= 0 || done < runs; ++done) {
    if (maxSeconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() > maxSeconds)
      break;
    if (runs <= 0 && maxSeconds <= 0)
      break; // Replay only.
    const std::string &base = corpus[pick() % corpus.size()];
    run(mutator.mutate(base, corpus, maxLength), "mutant", done);
  }
  std::printf("m2n-fuzz: done, %zu corpus inputs and %lld mutants ran\n",
              corpus.size(), done);
  return 0;
}
