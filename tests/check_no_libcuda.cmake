# SPDX-License-Identifier: Apache-2.0
# Fails when a library or program of the build tree records libcuda.so.1 (a NEEDED entry):
# wyjit opens the driver at run time, so each of them must start on a machine with no driver.
# Also fails when libwyjit.so or the CLI records libnvrtc: they open NVRTC at run time too, so
# that they start with no toolkit (NVRTC may come from a wheel); the benchmarks still link it.
#   cmake -DBINARY_DIR=<build dir> -P check_no_libcuda.cmake
find_program(READELF readelf REQUIRED)
file(GLOB candidates ${BINARY_DIR}/bin/* ${BINARY_DIR}/lib/*.so*)
set(checked 0)
set(bad "")
set(bad_nvrtc "")
foreach(f IN LISTS candidates)
  if(IS_SYMLINK ${f} OR IS_DIRECTORY ${f})
    continue()
  endif()
  execute_process(COMMAND ${READELF} -d ${f} OUTPUT_VARIABLE dynamic ERROR_QUIET
                  RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    continue()  # not an ELF file
  endif()
  math(EXPR checked "${checked} + 1")
  if(dynamic MATCHES "\\(NEEDED\\)[^\n]*libcuda\\.so")
    list(APPEND bad ${f})
  endif()
  get_filename_component(name ${f} NAME)
  if((name MATCHES "^libwyjit\\.so" OR name STREQUAL "wyjit") AND
     dynamic MATCHES "\\(NEEDED\\)[^\n]*libnvrtc")
    list(APPEND bad_nvrtc ${f})
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no ELF files under ${BINARY_DIR}/bin or ${BINARY_DIR}/lib")
endif()
if(bad)
  list(JOIN bad "\n  " bad_text)
  message(FATAL_ERROR "these record libcuda.so.1 (NEEDED), so they cannot start without a "
                      "driver:\n  ${bad_text}")
endif()
if(bad_nvrtc)
  list(JOIN bad_nvrtc "\n  " bad_text)
  message(FATAL_ERROR "these record libnvrtc (NEEDED), so they cannot start without a CUDA "
                      "toolkit:\n  ${bad_text}")
endif()
message(STATUS "${checked} ELF files checked: none records libcuda.so, and neither libwyjit nor "
               "the CLI records libnvrtc")
