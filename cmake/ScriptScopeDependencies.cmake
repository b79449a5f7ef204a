# Finds every dependency as an imported target. When one is missing, the message names the Debian
# package that provides it, because a newcomer on Debian 12 is the common case.

macro(scriptscope_require found_var what debian_package hint)
    if(NOT ${found_var})
        message(FATAL_ERROR
            "ScriptScope needs ${what}, which was not found.\n"
            "On Debian 12: sudo apt-get install ${debian_package}\n"
            "${hint}")
    endif()
endmacro()

# LibTorch: Debian's libtorch-dev (1.13, CPU) or an official LibTorch 2.x given by -DTorch_DIR.
find_package(Torch QUIET)
scriptscope_require(Torch_FOUND "LibTorch" "libtorch-dev"
    "Or point -DTorch_DIR=<libtorch>/share/cmake/Torch at an official LibTorch.")
if(NOT TARGET torch)
    message(FATAL_ERROR "LibTorch was found but defines no 'torch' target (Torch_DIR=${Torch_DIR}).")
endif()
# Debian's OpenCV and Qt use the C++11 string ABI; LibTorch 2.x downloads also come in the old one.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
    message(FATAL_ERROR "This LibTorch uses the pre-C++11 ABI (${TORCH_CXX_FLAGS}), which cannot link "
        "with Debian's OpenCV and Qt. Download the 'cxx11 ABI' LibTorch instead.")
endif()
# CUDA device names and memory need LibTorch's CUDA library, not only its headers.
if(TARGET torch_cuda OR CAFFE2_USE_CUDA)
    set(SCRIPTSCOPE_LIBTORCH_HAS_CUDA ON)
else()
    set(SCRIPTSCOPE_LIBTORCH_HAS_CUDA OFF)
endif()
message(STATUS "LibTorch CUDA support: ${SCRIPTSCOPE_LIBTORCH_HAS_CUDA}")
# Official LibTorch packages put their ABI flag in TORCH_CXX_FLAGS rather than on the target.
if(TORCH_CXX_FLAGS)
    separate_arguments(_scriptscope_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
    set_property(TARGET torch APPEND PROPERTY INTERFACE_COMPILE_OPTIONS ${_scriptscope_torch_flags})
endif()
message(STATUS "LibTorch ${Torch_VERSION} from ${Torch_DIR}")

find_package(OpenCV QUIET COMPONENTS core imgproc imgcodecs videoio)
scriptscope_require(OpenCV_FOUND "OpenCV (core, imgproc, imgcodecs, videoio)" "libopencv-dev" "")
message(STATUS "OpenCV ${OpenCV_VERSION}")

find_package(nlohmann_json 3.9 QUIET)
scriptscope_require(nlohmann_json_FOUND "nlohmann/json" "nlohmann-json3-dev" "")

# CLI11 (header-only) parses scriptscope-cli's subcommands and options.
find_package(CLI11 2.1 CONFIG QUIET)
scriptscope_require(CLI11_FOUND "CLI11" "libcli11-dev" "")

find_package(ZLIB QUIET)
scriptscope_require(ZLIB_FOUND "zlib" "zlib1g-dev" "")

find_package(Threads REQUIRED)

# Qt: Core and Network for the worker and its protocol (the GUI adds Widgets, and Concurrent for
# the diagram's layout thread), Test for the tests.
find_package(Qt6 QUIET COMPONENTS Core Network Widgets PrintSupport Concurrent)
scriptscope_require(Qt6_FOUND "Qt 6 (Core, Network, Widgets, PrintSupport, Concurrent)" "qt6-base-dev" "")

# Graphviz's dot lays out the diagram, in the scriptscope-layout process (app/layout).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
    pkg_check_modules(GRAPHVIZ QUIET IMPORTED_TARGET libgvc libcgraph)
endif()
scriptscope_require(GRAPHVIZ_FOUND "Graphviz (libgvc, libcgraph)" "libgraphviz-dev" "")

# QCustomPlot for the timing plots; its imported target needs Qt6::PrintSupport found first.
find_package(QCustomPlotQt6 QUIET)
scriptscope_require(QCustomPlotQt6_FOUND "QCustomPlot for Qt 6" "libqcustomplot-dev" "")

if(SCRIPTSCOPE_BUILD_TESTS)
    find_package(Qt6 QUIET COMPONENTS Test)
    scriptscope_require(Qt6Test_FOUND "Qt 6 Test for the tests" "qt6-base-dev"
        "Or configure with -DSCRIPTSCOPE_BUILD_TESTS=OFF.")

    # Fixtures and reference outputs are made by PyTorch itself. Debian's python3-torch lives
    # under /usr/bin/python3; the first python3 on PATH often has no torch.
    set(SCRIPTSCOPE_PYTHON "/usr/bin/python3" CACHE FILEPATH
        "Python interpreter with torch, numpy and cv2 for fixtures and reference outputs")
    execute_process(COMMAND "${SCRIPTSCOPE_PYTHON}" -c "import torch, numpy, cv2; print(torch.__version__)"
        RESULT_VARIABLE _py_result OUTPUT_VARIABLE _py_torch_version ERROR_QUIET
        OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _py_result EQUAL 0)
        message(FATAL_ERROR
            "The tests need ${SCRIPTSCOPE_PYTHON} with PyTorch, NumPy and OpenCV to make fixtures.\n"
            "On Debian 12: sudo apt-get install python3-torch python3-numpy python3-opencv\n"
            "Or set -DSCRIPTSCOPE_PYTHON=<python with torch>, or -DSCRIPTSCOPE_BUILD_TESTS=OFF.")
    endif()
    message(STATUS "Fixtures made with PyTorch ${_py_torch_version} (${SCRIPTSCOPE_PYTHON})")
endif()
