// SPDX-License-Identifier: Apache-2.0
// Many processes on one cache: cold starts under locks, lock waits and timeouts, a writer
// killed with SIGKILL in the middle of a write.
#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>

#include "cache/cache_lock.hpp"
#include "cache/cache_prune.hpp"
#include "test_cache_support.hpp"

using namespace wyjit;
using namespace wyjit::test;

namespace {

const KernelSpec kSpec = GdnVerifySpec{.k = 1, .io = DType::f32};
const Target kSm90{.arch = 90};

/// The "wyjit" logger at debug level for one scope.
class DebugLogging {
 public:
  DebugLogging() : saved_(detail::logger().level()) {
    detail::logger().set_level(spdlog::level::debug);
  }
  ~DebugLogging() { detail::logger().set_level(saved_); }
  DebugLogging(const DebugLogging&) = delete;
  DebugLogging& operator=(const DebugLogging&) = delete;

 private:
  spdlog::level::level_enum saved_;
};

/// The lock file a Jit with `options` takes for `spec` on sm_90.
fs::path lock_path_of(const JitOptions& options, const KernelSpec& spec) {
  return detail::prepare_lock_dir(options.lock_dir, options.cache_dir) /
         (key_of(spec, kSm90).hash + ".lock");
}

}  // namespace

TEST_CASE("4 processes x 4 threads cold-starting on one empty cache compile each variant once",
          "[cache][procs]") {
  ScratchDir scratch("cold start");
  const fs::path root = scratch / "cache";
  const std::string env = "WYJIT_LOCK_DIR=" + shell_quote((scratch / "locks").string());
  const std::string args =
      "precompile --json --arch sm_90 --family gdn_verify --k 1-4 --io f32,bf16 --addressing "
      "strided --gating off -j 4 --cache-dir " +
      shell_quote(root.string());
  constexpr int kProcesses = 4;
  constexpr std::size_t kVariants = 8;
  std::vector<FILE*> pipes;
  for (int i = 0; i < kProcesses; ++i) {
    // NOTE: stdout only (the JSON document); the log goes to the test's stderr.
    const std::string command = cli_command(args, env);
    FILE* pipe = popen(command.substr(0, command.rfind(" 2>&1")).c_str(), "r");
    REQUIRE(pipe != nullptr);
    pipes.push_back(pipe);
  }
  std::size_t compiled = 0;
  std::size_t cached = 0;
  std::size_t timeouts = 0;
  for (FILE* pipe : pipes) {
    const CliResult r = finish(pipe);
    INFO(r.output);
    CHECK(r.status == 0);
    const auto doc = nlohmann::json::parse(r.output);
    compiled += doc.at("summary").at("compiled").get<std::size_t>();
    cached += doc.at("summary").at("cached").get<std::size_t>();
    timeouts += doc.at("summary").at("lock_timeouts").get<std::size_t>();
  }
  // With the per-key locks, a process that loses the race waits, then finds the entry. Only
  // a wait past the lock timeout (30 s, a badly overloaded machine) compiles a second time.
  CHECK(compiled + cached == kVariants * kProcesses);
  if (timeouts == 0) {
    CHECK(compiled == kVariants);
  } else {
    WARN(timeouts << " lock wait(s) timed out: the machine is overloaded");
    CHECK(compiled <= kVariants + timeouts);
  }

  const detail::RootScan scan = detail::scan_root(root);
  CHECK(scan.entries.size() == kVariants);
  CHECK(scan.temps.empty());
  CHECK(scan.others.empty());
  for (const detail::EntryFileInfo& e : scan.entries) {
    INFO(e.path);
    const KernelSpec spec = parse_spec(e.variant);
    CHECK(detail::read_entry_file(e.path, key_of(spec, kSm90).text).status ==
          detail::EntryRead::Status::ok);
  }
  // Locks leave no files behind.
  for (const auto& item : fs::recursive_directory_iterator(scratch / "locks")) {
    INFO(item.path());
    CHECK(item.is_directory());
  }
  const CliResult verify = run_cli("verify --cache-dir " + shell_quote(root.string()));
  INFO(verify.output);
  CHECK(verify.status == 0);
}

TEST_CASE("Jit waits for another process's lock, then reads its entry", "[cache][procs]") {
  ScratchDir scratch;
  const JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  // The "other process": holds the key's lock, publishes the entry, then lets go.
  detail::FileLock::Outcome outcome = detail::FileLock::Outcome::failed;
  std::string error;
  detail::FileLock held = detail::FileLock::acquire(lock_path_of(options, kSpec),
                                                    std::chrono::milliseconds(0), outcome, error);
  REQUIRE(held.held());
  // The Jit says (at debug level) when it starts to wait: only then is the entry published.
  const DebugLogging debug;
  LogCapture log;
  std::thread other([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (log.count(spdlog::level::debug, "waiting for another process") == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Jit writer(JitOptions{.cache_dir = options.cache_dir, .process_locks = false});
    writer.compile(kSpec, kSm90);
    held = detail::FileLock();  // release
  });
  Jit jit(options);
  const auto compiled = jit.compile(kSpec, kSm90);
  other.join();
  CHECK(compiled->from_disk);
  const JitCounters c = jit.counters();
  CHECK(c.lock_waits == 1);
  CHECK(c.lock_timeouts == 0);
  CHECK(c.compiles == 0);
  CHECK(c.disk_hits == 1);
  CHECK(c.misses == 0);
  CHECK(c.lock_wait_ms_total > 0.0);
}

TEST_CASE("Jit compiles anyway when a lock is held past the timeout", "[cache][procs]") {
  ScratchDir scratch;
  JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  options.lock_timeout_ms = 100;
  detail::FileLock::Outcome outcome = detail::FileLock::Outcome::failed;
  std::string error;
  const detail::FileLock held = detail::FileLock::acquire(
      lock_path_of(options, kSpec), std::chrono::milliseconds(0), outcome, error);
  REQUIRE(held.held());
  LogCapture log;
  Jit jit(options);
  const auto compiled = jit.compile(kSpec, kSm90);
  CHECK_FALSE(compiled->from_disk);
  CHECK_FALSE(compiled->path.empty());
  const JitCounters c = jit.counters();
  CHECK(c.lock_waits == 1);
  CHECK(c.lock_timeouts == 1);
  CHECK(c.compiles == 1);
  CHECK(log.count(spdlog::level::warn, "compiling without it") == 1);
}

TEST_CASE("locks: a lock dir planted by someone else is refused, the Jit still works",
          "[cache][procs]") {
  ScratchDir scratch;
  fs::create_directories(scratch / "elsewhere");
  fs::create_directory_symlink(scratch / "elsewhere", scratch / "locks");
  LogCapture log;
  Jit jit(isolated_options(scratch / "root", scratch / "locks"));
  CHECK_FALSE(jit.compile(kSpec, kSm90)->path.empty());
  CHECK(log.count(spdlog::level::warn, "without cross-process locks") == 1);
  CHECK(fs::is_empty(scratch / "elsewhere"));
}

TEST_CASE("a writer killed with SIGKILL mid-write leaves a valid cache", "[cache][procs]") {
  ScratchDir scratch;
  const fs::path root = scratch / "root";
  const JitOptions options = isolated_options(root, scratch / "locks");
  {
    Jit jit(options);
    jit.compile(kSpec, kSm90);
  }
  const fs::path path = entry_path_of(root, kSpec, kSm90);
  const Bytes good = read_bytes(path);
  // NOTE: the killed writer rewrites the entry with a large payload (so that a write takes
  // long enough to be interrupted) under another key: if one of its renames lands, the Jit
  // must see a key mismatch, and recompile.
  detail::CacheEntry big;
  big.key_text = "a key of another build\n";
  big.variant = format_spec(kSpec);
  big.target = "sm_90";
  big.roles = {{"verify", "x"}};
  big.payload.assign(std::size_t{48} << 20, 0xab);

  bool interrupted = false;
  for (int attempt = 0; attempt < 40 && !interrupted; ++attempt) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        for (;;) detail::write_entry_file_atomic(path, big);
      } catch (...) {
      }
      ::_exit(1);
    }
    // Kill it as soon as a temp file shows up with some bytes in it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::vector<fs::path> temps = temp_files_under(root);
      std::error_code ec;
      if (!temps.empty() && fs::file_size(temps.front(), ec) > 0 && !ec) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    // Whatever moment the kill hit, the entry path holds a complete file: the genuine entry or
    // the whole of the killed writer's entry.
    const detail::EntryRead read = detail::read_entry_file(path, std::nullopt);
    INFO(read.reason);
    REQUIRE(read.status == detail::EntryRead::Status::ok);
    interrupted = !temp_files_under(root).empty();
    if (!interrupted) write_bytes(path, good);
  }
  REQUIRE(interrupted);

  // A fresh temp file may belong to a running writer: it is left alone...
  const detail::EntryRead genuine = detail::decode_entry(good, key_of(kSpec, kSm90).text);
  REQUIRE(genuine.status == detail::EntryRead::Status::ok);
  Jit jit(options);
  CHECK(jit.compile(kSpec, kSm90)->binary == genuine.entry.payload);
  CHECK(detail::read_entry_file(path, key_of(kSpec, kSm90).text).status ==
        detail::EntryRead::Status::ok);
  const std::vector<fs::path> temps = temp_files_under(root);
  REQUIRE(temps.size() == 1);
  // ... and swept once it is stale, by the next Jit that writes into that directory.
  make_old(temps.front(), 7200);
  Jit later(options);
  later.compile(GdnVerifySpec{.k = 2, .io = DType::f32}, kSm90);
  CHECK(temp_files_under(root).empty());
  CHECK(detail::scan_root(root).entries.size() == 2);
}
