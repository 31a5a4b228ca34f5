// SPDX-License-Identifier: Apache-2.0
// NOTE: g++ 12 warns (maybe-uninitialized) inside <regex>, which Catch2 includes.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
