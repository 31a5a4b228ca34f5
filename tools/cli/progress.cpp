// SPDX-License-Identifier: Apache-2.0
// Precompile progress: a bar redrawn in place on a terminal, plain lines otherwise (logs, CI).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "cli/cli.hpp"

namespace wyjit::cli {

struct Progress::State {
  std::mutex mutex;
  std::size_t total = 0;
  std::size_t compiled = 0;
  std::size_t cached = 0;
  std::size_t failed = 0;
  bool quiet = false;
  bool terminal = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

Progress::Progress(std::size_t total, bool quiet) : state_(std::make_unique<State>()) {
  state_->total = total;
  state_->quiet = quiet;
  state_->terminal = !quiet && ::isatty(STDOUT_FILENO) == 1;
  if (state_->terminal) {
    const std::lock_guard lock(state_->mutex);
    draw_bar();
  }
}

Progress::~Progress() {
  if (state_->terminal) {
    fmt::print("\n");
    std::fflush(stdout);
  }
}

void Progress::draw_bar() {
  const State& s = *state_;
  constexpr std::size_t kWidth = 30;
  const std::size_t finished = s.compiled + s.cached + s.failed;
  const std::size_t filled = s.total == 0 ? kWidth : finished * kWidth / s.total;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  // NOTE: \r and "erase to end of line" (ESC [K): the bar is redrawn in place.
  fmt::print("\r\x1b[K[{}{}] {}/{}  compiled {}  cached {}  failed {}  {:.1f} s",
             std::string(filled, '#'), std::string(kWidth - filled, '.'), finished, s.total,
             s.compiled, s.cached, s.failed, seconds);
  std::fflush(stdout);
}

void Progress::done(Status status, const std::string& target, std::size_t target_width,
                    const std::string& variant, double ms) {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  const char* name = "failed";
  switch (status) {
    case Status::compiled:
      ++s.compiled;
      name = "compiled";
      break;
    case Status::cached:
      ++s.cached;
      name = "cached";
      break;
    case Status::failed:
      ++s.failed;
      name = "failed";
      break;
  }
  if (s.quiet) return;
  if (!s.terminal) {
    fmt::print("{:<8}  {:<{}}  {}  ({:.0f} ms)\n", name, target, target_width, variant, ms);
    std::fflush(stdout);
    return;
  }
  // On a terminal only failures get a line of their own, above the bar.
  if (status == Status::failed) {
    fmt::print("\r\x1b[Kfailed    {:<{}}  {}\n", target, target_width, variant);
  }
  draw_bar();
}

}  // namespace wyjit::cli
