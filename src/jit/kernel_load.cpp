// SPDX-License-Identifier: Apache-2.0
// The Jit manager's load half: a compiled variant into the driver (one CUlibrary, a CUkernel per
// role), its shared-memory attributes on every device of its architecture, and into the calling
// thread's context before any launch needs it.
#include "common/log.hpp"
#include "driver/driver_api.hpp"
#include "jit/jit_impl.hpp"
#include "jit/loaded_in_context.hpp"
#include "jit/target_select.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

using detail::Clock;
using detail::CompiledPtr;
using detail::LoadedLibrary;
using detail::LoadedNode;
using detail::VariantTarget;

Kernel::Kernel(const KernelSpec& spec, std::span<const CUkernel> handles) : spec_(spec) {
  if (handles.size() > handles_.size()) {
    throw Error(ErrorCode::internal, format_spec(spec) + " has " + std::to_string(handles.size()) +
                                         " kernels, more than a Kernel holds");
  }
  std::copy(handles.begin(), handles.end(), handles_.begin());
}

std::span<const std::string_view> Kernel::roles() const noexcept {
  return detail::family_of(spec_).roles();
}

namespace {

// NOTE: the attribute is per device, not per context or library: set it on every device this
// library can run on, so that a Kernel fetched on one device launches on the others too.
void set_shared_memory_attributes(const KernelSpec& spec, const Target& target,
                                  const LoadedLibrary& lib) {
  const detail::Family& family = detail::family_of(spec);
  int devices = 0;
  WYJIT_CU_CHECK(cuDeviceGetCount(&devices));
  for (std::size_t role = 0; role < family.roles().size(); ++role) {
    const int bytes = family.max_dynamic_smem(spec, role);
    if (bytes <= 48 * 1024) continue;
    for (int ordinal = 0; ordinal < devices; ++ordinal) {
      CUdevice device = 0;
      WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
      if (!(detail::target_for_device(device) == target)) continue;
      WYJIT_CU_CHECK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes,
                                          lib.kernels[role], device));
    }
  }
}

}  // namespace

const LoadedLibrary& Jit::Impl::load(const VariantTarget& id) {
  if (const LoadedNode* node = loaded.find(id)) return node->value;
  const KernelSpec& spec = id.spec;
  const Target target{.arch = id.arch, .arch_specific = id.arch_specific, .ptx = id.ptx};
  const CompiledPtr binary = owner->compile(spec, target);
  const Clock::time_point start = Clock::now();
  LoadedLibrary fresh;
  // NOTE: cuLibrary* is context-independent: one load serves every context and device of this
  // architecture; the driver loads it into a context on first use.
  WYJIT_CU_CHECK(cuLibraryLoadData(&fresh.library, binary->binary.data(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
  try {
    for (std::size_t role = 0; role < binary->roles.size(); ++role) {
      WYJIT_CU_CHECK(cuLibraryGetKernel(&fresh.kernels[role], fresh.library,
                                        binary->roles[role].lowered_name.c_str()));
    }
    set_shared_memory_attributes(spec, target, fresh);
  } catch (...) {
    detail::driver().cuLibraryUnload(fresh.library);
    throw;
  }
  const std::uint64_t ns = detail::ns_since(start);
  loads.add();
  load_ns.add(ns);
  detail::logger().debug("loaded {} for {} in {:.3f} ms", format_spec(spec), target.name(),
                         detail::to_ms(ns));
  const std::lock_guard lock(load_mutex);
  if (const LoadedNode* node = loaded.find(id)) {
    detail::driver().cuLibraryUnload(fresh.library);  // another thread won
    return node->value;
  }
  fresh.load_id = detail::LoadedInContext::next_load_id();
  return loaded.publish(std::make_unique<LoadedNode>(LoadedNode{id, fresh}))->value;
}

void Jit::Impl::unload_all() noexcept {
  // NOTE: no driver calls here beyond unloading what we loaded; never throw from a destructor.
  for (const auto& node : loaded.nodes()) {
    if (node->value.library != nullptr) detail::driver().cuLibraryUnload(node->value.library);
  }
}

Kernel Jit::kernel(const KernelSpec& spec) {
  validate_spec(spec);
  CUcontext context = nullptr;
  WYJIT_CU_CHECK(cuCtxGetCurrent(&context));
  if (context == nullptr) {
    throw Error(ErrorCode::driver,
                "Jit::kernel(" + format_spec(spec) +
                    ") needs a current CUDA context on the calling thread (cuCtxSetCurrent, or "
                    "any CUDA runtime call, makes one current)");
  }
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuCtxGetDevice(&device));
  const VariantTarget id(spec, detail::target_for_device(device));
  const LoadedLibrary& lib = impl_->load(id);
  const std::size_t roles = detail::family_of(spec).roles().size();
  if (!detail::LoadedInContext::seen(lib.load_id, context)) {
    // NOTE: load into the current context now, so that a later launch (perhaps during graph
    // capture) does no module loading.
    for (std::size_t role = 0; role < roles; ++role) {
      CUfunction function = nullptr;
      WYJIT_CU_CHECK(cuKernelGetFunction(&function, lib.kernels[role]));
    }
    detail::LoadedInContext::remember(lib.load_id, context);
  }
  return Kernel(spec, std::span<const CUkernel>(lib.kernels.data(), roles));
}

}  // namespace wyjit
