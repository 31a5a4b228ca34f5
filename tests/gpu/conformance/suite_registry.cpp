// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/suite_registry.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace wyjit::test::conformance {

namespace {

class FamilySuite final : public Catch::ITestInvoker {
 public:
  FamilySuite(const FamilyCase& family, SuiteBody body) : family_(family), body_(body) {}
  void invoke() const override { body_(family_); }

 private:
  const FamilyCase& family_;
  SuiteBody body_;
};

}  // namespace

SuiteRegistration::SuiteRegistration(const char* title, const char* tags, SuiteBody body,
                                     const char* file, int line) noexcept {
  // NOTE: Catch2 copies the name and the tags into the test case; only the file name (a
  // literal) is kept by pointer. A failure here is recorded by Catch2 as a startup exception.
  try {
    for (const FamilyCase* family : family_cases()) {
      const std::string name = std::string(family->name()) + ": " + title;
      const std::string all_tags = "[gpu][conformance][" + std::string(family->name()) + "]" + tags;
      const Catch::AutoReg registered(new FamilySuite(*family, body),
                                      Catch::SourceLineInfo(file, static_cast<std::size_t>(line)),
                                      Catch::StringRef(),
                                      Catch::NameAndTags(name.c_str(), all_tags.c_str()));
    }
  } catch (...) {
    Catch::getMutableRegistryHub().registerStartupException();
  }
}

}  // namespace wyjit::test::conformance

namespace wyjit::test::conformance {

TEST_CASE("conformance: every family of KernelSpec has a case, so every suite runs it",
          "[gpu][conformance]") {
  std::string missing;
  for (const std::string& family : families_without_case()) missing += " " + family;
  INFO("families without a case in tests/gpu/conformance/family_list.cpp:" << missing);
  CHECK(missing.empty());
}

}  // namespace wyjit::test::conformance
