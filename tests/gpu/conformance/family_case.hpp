// SPDX-License-Identifier: Apache-2.0
// The conformance kit's contract with a family: what one family writes (its case file, in
// tests/gpu/families/<family>/) so that every shared suite runs it.
//
// A family case says which samples each suite runs, and for one sample (FamilyLaunch): its
// launch arguments, its device buffers, a random problem with its float64 reference
// (tests/common), how a plan of state tiles (state_binding.hpp, shared by every family) becomes
// the pool's image, which elements a launch must write, how they compare with the reference and
// how to launch through the C++ and the C API. The shared suites (suite_*.cpp) and the rig
// (launch_rig.hpp) do the rest: addressing, padding, guard regions, poison, graphs, threads,
// devices.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/half_types.hpp"
#include "gpu/conformance/number_hazard.hpp"
#include "gpu/conformance/state_binding.hpp"
#include "gpu/support/checks.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::test::conformance {

/// The shared suites; each asks a family for the samples it runs.
enum class Suite {
  addressing,  ///< strided variants, each also run with table and slot addressing
  padding,     ///< padded and dense layouts, padded sequences, guard regions, poison
  graphs,      ///< captured and replayed; the first two also captured with the C API
  threads,     ///< twelve distinct variants that 16 threads draw from
  multi_gpu,   ///< run on two devices at once
  c_api,       ///< C launch == C++ launch, C check == C++ check
  sanitizer,   ///< the smallest useful samples, run under compute-sanitizer
  numbers,     ///< hostile numbers in the inputs: each verify form, l2norm and fused gating
};

/// The variant's kernels, by name (Kernel::roles(); no GPU needed).
std::vector<std::string> role_names(const KernelSpec& spec);

/// One launch shape of a family.
struct Sample {
  KernelSpec spec;
  int batch = 1;
  /// The family's sizes: gdn_verify {HK, HV}; conv1d_update {channels, 1 for [cols][channels]
  /// state tiles}.
  std::array<int, 2> shape{};
  /// Where a suite leaves the choice to the family (addressing, the family's own sweeps): run
  /// with RigOptions::padded.
  bool padded = false;
};

/// How a rig lays out its launches; fixed for the rig's life (a captured graph bakes the
/// arguments in).
struct RigOptions {
  /// Gaps after rows, columns and tiles, poisoned and checked untouched.
  bool padded = false;
  /// Which of the variant's kernels (Kernel::roles()) every launch runs.
  int mode = 0;
  /// Strided addressing: intermediate tiles token-major (inter_tok_stride the outer stride).
  bool token_major = false;
  /// Guard region before and after every buffer (a multiple of 256). 0 under compute-sanitizer:
  /// memcheck sees an access past the end of an allocation, not past the end of what a launch
  /// was given.
  std::size_t guard_bytes = 4096;
  /// A hostile number put into the inputs of every launch (FamilyLaunch::number_hazards); the
  /// results then compare by class (number_hazard.hpp).
  std::optional<NumberHazard> hazard{};
};

/// A device buffer of the family's launch.
struct BufferSpec {
  std::string name;  ///< in messages: "q", "out", "window_offset"
  std::size_t bytes = 0;
  /// Element type (its poison is NaN of this type); for integer arrays a float type of the same
  /// size (they are never written).
  IoType type = IoType::f32;
};

/// One argument broken on purpose, and how to put it back.
struct BrokenArgument {
  std::string refusal;  ///< what the refusal must say, e.g. "args.states.state is null"
  std::function<void()> mend;
};

/// A family's side of one rig: one sample's launch arguments, buffers, problem and reference.
class FamilyLaunch {
 public:
  virtual ~FamilyLaunch() = default;

  /// The family's device buffers in a fixed order; the state pool is the rig's (it follows
  /// them wherever a list of images is passed below).
  virtual std::vector<BufferSpec> buffers() const = 0;
  /// What one sequence's state tiles look like.
  virtual TileShape tiles() const = 0;
  /// Points the arguments at the buffers (device addresses in buffers() order). Called once;
  /// the arguments never change afterwards, so that a captured launch stays valid.
  virtual void bind(const std::vector<void*>& device) = 0;
  /// The arguments' state references, which the rig sets after bind().
  virtual StateRefs& states() = 0;

  /// A new problem from `seed` for `plan`: `images` receives the images of buffers() then the
  /// pool (plan.pool_elems elements of tiles().type: NaN but where each sequence's initial state
  /// is). Inputs' padding and outputs are NaN. The family may pad more sequences than the plan
  /// does, where its own arguments can (recorded for the calls below). Under a hazard
  /// (RigOptions::hazard) the problem holds it, and so does the reference compare() uses.
  virtual void fill(std::uint64_t seed, const TilePlan& plan, const Padding& padding,
                    std::vector<std::vector<std::uint8_t>>& images) = 0;

  /// Which elements the launch of the last fill() must write: one mask per buffer (elements of
  /// its type) then the pool; an empty mask: nothing.
  virtual std::vector<std::vector<bool>> written(const TilePlan& plan) const = 0;
  /// The elements of written() that the launch reads before it overwrites them (gdn_replay's
  /// commit updates its cursors in place), masks as written(); empty: none. They hold inputs,
  /// not poison, before the launch, so compare() must tell whether they were written. The
  /// pool's read tiles are always in place.
  virtual std::vector<std::vector<bool>> in_place(const TilePlan&) const { return {}; }
  /// Enqueues on `stream`, after the images of the last fill() are uploaded, what else its
  /// launch needs: the pointer tables of state references the family lays out itself (the rig
  /// stages its pool's). Never called during a capture.
  virtual void stage(CUstream) {}
  /// The launch's results vs the reference of the last fill(), from the device images
  /// (buffers() then the pool).
  virtual std::vector<CheckedTensor> compare(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const = 0;
  /// What the launch wrote, item by item (outputs of each row, then each state write) in an
  /// order that does not depend on the addressing; empty: a padded or skipped item.
  virtual std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const = 0;

  /// The hostile numbers the [hostile_numbers] suite runs this launch with, each in a rig of its
  /// own (RigOptions::hazard). Default: none (a launch that reads no numbers, such as a commit).
  virtual std::vector<NumberHazard> number_hazards() const { return {}; }

  /// Breaks one argument that the C++ and the C checks must both refuse (suite_c_api.cpp).
  /// Default: the first field of states() that `addressing` reads; a launch with no state
  /// references breaks another.
  virtual BrokenArgument break_argument(Addressing addressing) {
    StateRefs& refs = states();
    const StateRefs saved = refs;
    return {break_state_refs(refs, addressing), [&refs, saved] { refs = saved; }};
  }

  /// The family's C++ check of the arguments (throws Error), and the C one on the variant name.
  virtual void check_args() const = 0;
  virtual wyjit_status check_args_c(const char* name) const = 0;
  /// The launch through the C++ API (throws Error), and through the C API.
  virtual void launch(const Kernel& kernel, CUstream stream) const = 0;
  virtual wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const = 0;

  /// The sizes, e.g. "hk=2 hv=4".
  virtual std::string describe() const = 0;
};

/// One family's test-case description.
class FamilyCase {
 public:
  virtual ~FamilyCase() = default;
  /// The family's name, as family_name() spells it.
  virtual std::string_view name() const = 0;
  /// The samples `suite` runs (every spec of this family).
  virtual std::vector<Sample> samples(Suite suite) const = 0;
  /// The ways to launch a variant that every suite runs, by name. Default: one per kernel of
  /// the variant (Kernel::roles()), which the family's launch then forces (conv1d_update: its
  /// wide and narrow kernels).
  virtual std::vector<std::string> launch_modes(const KernelSpec& spec) const {
    return role_names(spec);
  }
  /// The launch of `sample` under `options`.
  virtual std::unique_ptr<FamilyLaunch> make_launch(const Sample& sample,
                                                    const RigOptions& options) const = 0;
};

/// Family `Spec`'s case, defined in its case file.
template <class Spec>
const FamilyCase& family_case();

/// Every family's case (family_list.cpp).
std::span<const FamilyCase* const> family_cases();

/// The families of KernelSpec that have no case (a suite reports them as a failure).
std::vector<std::string> families_without_case();

/// `spec` with its addressing mode replaced (every family has one: wyjit/state_refs.h).
KernelSpec with_addressing(const KernelSpec& spec, Addressing addressing);
Addressing addressing_of(const KernelSpec& spec);

}  // namespace wyjit::test::conformance
