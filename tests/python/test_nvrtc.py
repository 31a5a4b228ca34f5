# SPDX-License-Identifier: Apache-2.0
"""Where NVRTC comes from, seen from Python: the nvidia-cuda-nvrtc wheel's folder found in a site
folder (either of NVIDIA's layouts), and nvrtc_info() on the library this process loaded."""

import os
import pathlib

import pytest

import wyjit
from wyjit import _lib, _nvrtc


def test_the_library_names_the_file_of_its_cuda_major():
    name = _lib.lib().wyjit_nvrtc_file_name().decode()
    assert name.startswith("libnvrtc.so.") and name.rsplit(".", 1)[1].isdigit()


@pytest.mark.parametrize("layout", ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"])
def test_the_wheel_folder_is_found_in_a_site_folder(tmp_path, layout):
    folder = tmp_path / "site" / layout
    folder.mkdir(parents=True)
    (folder / "libnvrtc.so.13").write_bytes(b"")
    found = _nvrtc.find_wheel_dir("libnvrtc.so.13", roots=[str(tmp_path / "elsewhere"),
                                                            str(tmp_path / "site")])
    assert found == str(folder.resolve())
    # A folder of another CUDA major is not this library's NVRTC.
    assert _nvrtc.find_wheel_dir("libnvrtc.so.12", roots=[str(tmp_path / "site")]) is None


def test_no_wheel_no_folder(tmp_path):
    assert _nvrtc.find_wheel_dir("libnvrtc.so.13", roots=[str(tmp_path)]) is None


def test_nvrtc_info_says_which_nvrtc_and_why():
    info = wyjit.nvrtc_info()
    assert pathlib.Path(info["path"]).is_file()
    assert pathlib.Path(info["path"]).name.startswith(_lib.lib().wyjit_nvrtc_file_name().decode())
    assert info["version"][0] == int(_lib.lib().wyjit_nvrtc_file_name().decode().rsplit(".", 1)[1])
    assert info["rule"]  # e.g. "CUDA toolkit in /usr/local/cuda"
    assert isinstance(info["tried"], list)
    if os.environ.get("WYJIT_TEST_INSTALLED_PACKAGE"):
        # The wheel's test (tests/wheel/): NVRTC from the nvidia-cuda-nvrtc wheel of the venv.
        assert info["rule"] == "nvidia-cuda-nvrtc wheel, found by the Python package"
        assert "site-packages" in info["path"]
