# SPDX-License-Identifier: Apache-2.0
# libwyjit.so versioning, and what `cmake --install` puts where: headers, both libraries, the
# CLI, the CMake package (find_package(wyjit) -> wyjit::wyjit) and wyjit.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ---- the C header's version macros are the project's version --------------------------
file(STRINGS ${PROJECT_SOURCE_DIR}/include/wyjit/wyjit.h wyjit_version_lines
     REGEX "^#define WYJIT_VERSION_(MAJOR|MINOR|PATCH) [0-9]+$")
foreach(part IN ITEMS MAJOR MINOR PATCH)
  set(value "")
  foreach(line IN LISTS wyjit_version_lines)
    if(line MATCHES "^#define WYJIT_VERSION_${part} ([0-9]+)$")
      set(value ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(NOT value STREQUAL PROJECT_VERSION_${part})
    message(FATAL_ERROR "include/wyjit/wyjit.h says WYJIT_VERSION_${part} '${value}', "
                        "project() says '${PROJECT_VERSION_${part}}': keep them equal")
  endif()
endforeach()

# ---- libwyjit.so ----------------------------------------------------------------------------
# NOTE: while the major version is 0, every minor version may break the ABI: the SONAME carries
# it (libwyjit.so.0.2).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(WYJIT_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(WYJIT_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()
set_target_properties(wyjit PROPERTIES
  OUTPUT_NAME wyjit
  VERSION ${PROJECT_VERSION}
  SOVERSION ${WYJIT_SOVERSION}
  EXPORT_NAME wyjit)
# NOTE: libwyjit.so must load on machines with no driver and no toolkit: it opens the driver and
# NVRTC at run time, so it records neither and needs no RPATH.
target_link_options(wyjit PRIVATE LINKER:--no-undefined)
set_target_properties(wyjit_static PROPERTIES OUTPUT_NAME wyjit EXPORT_NAME wyjit_static)

# ---- install --------------------------------------------------------------------------------
set(WYJIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/wyjit)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/wyjit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(TARGETS wyjit EXPORT wyjitSharedTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
install(TARGETS wyjit_static EXPORT wyjitStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET wyjit_cli)
  install(TARGETS wyjit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT wyjitSharedTargets NAMESPACE wyjit:: FILE wyjit-shared-targets.cmake
        DESTINATION ${WYJIT_CMAKE_DIR})
install(EXPORT wyjitStaticTargets NAMESPACE wyjit:: FILE wyjit-static-targets.cmake
        DESTINATION ${WYJIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wyjitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/wyjitConfig.cmake INSTALL_DESTINATION ${WYJIT_CMAKE_DIR})
# NOTE: 0.x minor versions are not compatible with each other (see the SONAME above).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/wyjitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/wyjitConfig.cmake
              ${PROJECT_BINARY_DIR}/package/wyjitConfigVersion.cmake
        DESTINATION ${WYJIT_CMAKE_DIR})

# pkg-config: prefix relative to the .pc file, so that `cmake --install --prefix DIR` works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "wyjit.pc needs a relative CMAKE_INSTALL_LIBDIR, got '${CMAKE_INSTALL_LIBDIR}'")
endif()
file(RELATIVE_PATH WYJIT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" WYJIT_PC_TO_PREFIX "${WYJIT_PC_TO_PREFIX}")
list(GET CUDAToolkit_INCLUDE_DIRS 0 WYJIT_PC_CUDA_INCLUDE_DIR)
configure_file(${PROJECT_SOURCE_DIR}/cmake/wyjit.pc.in ${PROJECT_BINARY_DIR}/package/wyjit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/wyjit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
