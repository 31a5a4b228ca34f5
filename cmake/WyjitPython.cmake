# SPDX-License-Identifier: Apache-2.0
# The Python wheel (pyproject.toml; WYJIT_PYTHON_PACKAGE): what scikit-build-core installs into
# the wheel, as the component "python", next to python/wyjit:
#   wyjit/libwyjit.so   the shared library, where python/wyjit/_lib.py looks first
#   wyjit/bin/wyjit     the CLI, which the `wyjit` console script (python/wyjit/_cli.py) runs
# Neither records an RPATH, libnvrtc or libcuda: NVRTC (a toolkit's, or the nvidia-cuda-nvrtc
# wheel's) and the driver are opened at run time.

# spdlog header-only over fmt header-only (CMakeLists.txt: WYJIT_LOG_LIBS), and the C++ runtime
# linked in: the wheel must not need spdlog, fmt or a newer libstdc++ than the machine has.
foreach(target IN ITEMS wyjit_objects wyjit_cli)
  target_compile_definitions(${target} PRIVATE SPDLOG_FMT_EXTERNAL)
endforeach()
foreach(target IN ITEMS wyjit wyjit_cli)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  # NOTE: the build tree's RPATH would name the toolkit's library folder (CUDA::toolkit's link
  # directory); the files installed are the built ones, so build them with the (empty) install
  # RPATH.
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH "")
endforeach()

# NOTE: one file, no SONAME symlinks (a wheel holds no links); _lib.py loads it by its path.
install(FILES $<TARGET_FILE:wyjit> DESTINATION wyjit RENAME libwyjit.so COMPONENT python)
install(PROGRAMS $<TARGET_FILE:wyjit_cli> DESTINATION wyjit/bin COMPONENT python)
