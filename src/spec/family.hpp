// SPDX-License-Identifier: Apache-2.0
// A family's descriptor: everything the center (names, validation, the standard matrix,
// stamping, loading) needs to know about a family, behind one interface. Each family defines
// its descriptor in its own folder (src/families/<family>/) from a typed description
// (TypedFamily); the center iterates over families() and never names one.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "spec/gdn_model.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::detail {

class Family {
 public:
  virtual ~Family() = default;

  /// `gdn_verify`, ...: the first part of every canonical name of the family.
  virtual std::string_view name() const noexcept = 0;
  /// The fields, in name order (FieldInfo says how each is spelled and checked).
  virtual std::span<const FieldInfo> fields() const noexcept = 0;
  /// The spec with every field at its default.
  virtual KernelSpec make() const = 0;
  /// Field `field` (an index into fields()) of `spec`, which must be of this family, as its
  /// value (choice: the index; flag: 0 or 1).
  virtual int get(const KernelSpec& spec, std::size_t field) const = 0;
  virtual void set(KernelSpec& spec, std::size_t field, int value) const = 0;
  /// The checks across fields, after each field was checked on its own; throws via reject().
  virtual void check(const KernelSpec& spec) const = 0;

  /// The kernel source (a kernel_src/ path) the stamped source starts from.
  virtual std::string_view kernel_file() const noexcept = 0;
  /// The type of every kernel's one parameter, for the explicit instantiations.
  virtual std::string_view params_type() const noexcept = 0;
  /// The kernels of a variant, by role; a Kernel holds one handle per role, in this order.
  virtual std::span<const std::string_view> roles() const noexcept = 0;
  /// The template-id of role `role`'s kernel for `spec`, built from typed template arguments.
  virtual std::string name_expression(const KernelSpec& spec, std::size_t role) const = 0;
  /// The most dynamic shared memory a launch of role `role` asks for (the attribute a device
  /// needs beyond the default 48 KiB).
  virtual int max_dynamic_smem(const KernelSpec& spec, std::size_t role) const = 0;
  /// The fields a GDN model's layers fix in this family's variants (`wyjit precompile --model`),
  /// by field name; empty when the family has no part in such a model.
  virtual std::vector<ModelFieldValue> model_values(const GdnModel& model) const = 0;
};

/// Every family, in KernelSpec's order.
std::span<const Family* const> families() noexcept;
/// The family named `name`, or null.
const Family* find_family(std::string_view name) noexcept;
/// The family of `spec`.
const Family& family_of(const KernelSpec& spec) noexcept;

/// Throws Error(invalid_spec): "invalid spec <name>: <label> is <got>, allowed: <allowed>".
[[noreturn, gnu::cold]] void reject(const KernelSpec& spec, std::string_view label,
                                    std::string_view got, std::string_view allowed);

/// Names of the shared choices, by value (DType, Addressing, Layout).
inline constexpr std::array<const char*, 3> kDTypeNames = {"f32", "f16", "bf16"};
inline constexpr std::array<const char*, 3> kAddressingNames = {"strided", "table", "slot"};
inline constexpr std::array<const char*, 2> kLayoutNames = {"vk", "kv"};

/// One field of a family's typed spec: its description and how to read and write it.
template <class Spec>
struct FieldDef {
  FieldInfo info;
  int (*get)(const Spec&);
  void (*set)(Spec&, int);
};

template <class>
struct MemberOf;
template <class S, class T>
struct MemberOf<T S::*> {
  using Spec = S;
  using Type = T;
};

/// The FieldDef of member `M` (an int, bool or enum member of a family's spec).
template <auto M>
constexpr FieldDef<typename MemberOf<decltype(M)>::Spec> field(const FieldInfo& info) {
  using Spec = typename MemberOf<decltype(M)>::Spec;
  using T = typename MemberOf<decltype(M)>::Type;
  return FieldDef<Spec>{
      info,
      [](const Spec& s) { return static_cast<int>(s.*M); },
      [](Spec& s, int v) { s.*M = static_cast<T>(v); },
  };
}

/// What a family supplies, typed: TypedFamily turns it into a Family.
template <class Spec>
struct FamilyDescription {
  std::string_view name;
  std::string_view kernel_file;
  std::string_view params_type;
  std::span<const std::string_view> roles;
  std::span<const FieldDef<Spec>> fields;
  void (*check)(const Spec&);
  std::string (*name_expression)(const Spec&, std::size_t role);
  int (*max_dynamic_smem)(const Spec&, std::size_t role);
  std::vector<ModelFieldValue> (*model_values)(const GdnModel&) = nullptr;
};

template <class Spec>
class TypedFamily final : public Family {
 public:
  explicit TypedFamily(const FamilyDescription<Spec>& d) : d_(d) {
    for (const FieldDef<Spec>& f : d.fields) infos_.push_back(f.info);
  }
  std::string_view name() const noexcept override { return d_.name; }
  std::span<const FieldInfo> fields() const noexcept override { return infos_; }
  KernelSpec make() const override { return Spec{}; }
  int get(const KernelSpec& s, std::size_t field) const override {
    return d_.fields[field].get(std::get<Spec>(s));
  }
  void set(KernelSpec& s, std::size_t field, int value) const override {
    d_.fields[field].set(std::get<Spec>(s), value);
  }
  void check(const KernelSpec& s) const override { d_.check(std::get<Spec>(s)); }
  std::string_view kernel_file() const noexcept override { return d_.kernel_file; }
  std::string_view params_type() const noexcept override { return d_.params_type; }
  std::span<const std::string_view> roles() const noexcept override { return d_.roles; }
  std::string name_expression(const KernelSpec& s, std::size_t role) const override {
    return d_.name_expression(std::get<Spec>(s), role);
  }
  int max_dynamic_smem(const KernelSpec& s, std::size_t role) const override {
    return d_.max_dynamic_smem(std::get<Spec>(s), role);
  }
  std::vector<ModelFieldValue> model_values(const GdnModel& model) const override {
    if (d_.model_values == nullptr) return {};
    return d_.model_values(model);
  }

 private:
  FamilyDescription<Spec> d_;
  std::vector<FieldInfo> infos_;
};

}  // namespace wyjit::detail
