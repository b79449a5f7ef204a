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

# One switch picks the PyTorch: SCRIPTSCOPE_PYTHON (the cache variable, or the environment variable
# of that name). Its torch's LibTorch is what the programs link (when that torch ships its CMake
# package, as PyPI's wheels do: torch.utils.cmake_prefix_path) and the same Python makes every
# fixture and reference printout, so a test always compares with the PyTorch it was built on.
# Without it: Debian's python3-torch at /usr/bin/python3, and Debian's libtorch-dev (1.13, CPU).
# An explicit -DTorch_DIR still wins.
if(DEFINED ENV{SCRIPTSCOPE_PYTHON} AND NOT "$ENV{SCRIPTSCOPE_PYTHON}" STREQUAL "")
    set(_scriptscope_default_python "$ENV{SCRIPTSCOPE_PYTHON}")
else()
    set(_scriptscope_default_python "/usr/bin/python3")
endif()
set(SCRIPTSCOPE_PYTHON "${_scriptscope_default_python}" CACHE FILEPATH
    "Python whose torch picks the LibTorch and makes the fixtures and reference outputs")
execute_process(
    COMMAND "${SCRIPTSCOPE_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    RESULT_VARIABLE _py_result OUTPUT_VARIABLE _py_cmake_prefix ERROR_QUIET
    OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_py_result EQUAL 0 AND NOT Torch_DIR AND EXISTS "${_py_cmake_prefix}/Torch/TorchConfig.cmake")
    list(PREPEND CMAKE_PREFIX_PATH "${_py_cmake_prefix}")
endif()

# LibTorch: Debian's libtorch-dev (1.13, CPU), the LibTorch of SCRIPTSCOPE_PYTHON's torch (2.x,
# CUDA compiled in), or an official LibTorch given by -DTorch_DIR.
find_package(Torch QUIET)
scriptscope_require(Torch_FOUND "LibTorch" "libtorch-dev"
    "Or set SCRIPTSCOPE_PYTHON to a Python whose pip-installed torch brings its LibTorch, or point "
    "-DTorch_DIR=<libtorch>/share/cmake/Torch at an official LibTorch.")
if(NOT TARGET torch)
    message(FATAL_ERROR "LibTorch was found but defines no 'torch' target (Torch_DIR=${Torch_DIR}).")
endif()
# Where the matching torchvision lives (its operator library is offered for torchvision::nms).
set(SCRIPTSCOPE_TORCHVISION_DIR "/usr/lib/python3/dist-packages/torchvision")
execute_process(
    COMMAND "${SCRIPTSCOPE_PYTHON}" -c
            "import importlib.util as u; print(u.find_spec('torchvision').submodule_search_locations[0])"
    RESULT_VARIABLE _tv_result OUTPUT_VARIABLE _tv_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_tv_result EQUAL 0 AND IS_DIRECTORY "${_tv_dir}")
    set(SCRIPTSCOPE_TORCHVISION_DIR "${_tv_dir}")
endif()

# LibTorch 2.14 and later need C++20 in the files that include it; older ones build as C++17.
if(Torch_VERSION VERSION_GREATER_EQUAL 2.14 AND CMAKE_CXX_STANDARD LESS 20)
    set(CMAKE_CXX_STANDARD 20)
endif()
message(STATUS "C++ standard: ${CMAKE_CXX_STANDARD}")
# ExecuTorch (optional): the C++ runtime that SCRIPTSCOPE_PYTHON's executorch package ships runs
# .pte files (app/engine/executorch_runtime). Below CMake 3.28 its package defines no imported
# targets, so its variables are used; the quantized kernels are not in EXECUTORCH_LIBRARIES and are
# named here. Its headers carry c10 headers of their own: they are private to that one target,
# whose files include no LibTorch header.
option(SCRIPTSCOPE_EXECUTORCH "Run .pte files with SCRIPTSCOPE_PYTHON's executorch, where it has one" ON)
set(SCRIPTSCOPE_HAS_EXECUTORCH OFF)
if(SCRIPTSCOPE_EXECUTORCH)
    execute_process(
        COMMAND "${SCRIPTSCOPE_PYTHON}" -c
                "import importlib.util as u; s = u.find_spec('executorch'); print(s.submodule_search_locations[0] if s else '')"
        RESULT_VARIABLE _et_result OUTPUT_VARIABLE _et_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_et_result EQUAL 0 AND EXISTS "${_et_dir}/share/cmake/executorch-config.cmake")
        find_package(executorch CONFIG QUIET PATHS "${_et_dir}/share/cmake" NO_DEFAULT_PATH)
        set(_et_libraries)
        foreach(_et_name executorch executorch_etdump executorch_kernels_optimized
                         executorch_kernels_quantized executorch_backend_xnnpack executorch_threadpool)
            if(EXISTS "${_et_dir}/lib/lib${_et_name}.so")
                list(APPEND _et_libraries "${_et_dir}/lib/lib${_et_name}.so")
            endif()
        endforeach()
        list(LENGTH _et_libraries _et_count)
        if(EXECUTORCH_FOUND AND _et_count EQUAL 6)
            set(SCRIPTSCOPE_HAS_EXECUTORCH ON)
            set(SCRIPTSCOPE_EXECUTORCH_INCLUDE_DIRS ${EXECUTORCH_INCLUDE_DIRS})
            set(SCRIPTSCOPE_EXECUTORCH_DEFINITIONS ${EXECUTORCH_COMPILE_DEFINITIONS})
            set(SCRIPTSCOPE_EXECUTORCH_LIBRARIES ${_et_libraries})
            set(SCRIPTSCOPE_EXECUTORCH_LIBRARY_DIR "${_et_dir}/lib")
            set(SCRIPTSCOPE_EXECUTORCH_VERSION "${executorch_VERSION}")
            if(EXECUTORCH_BUILD_VERSION)
                set(SCRIPTSCOPE_EXECUTORCH_VERSION "${EXECUTORCH_BUILD_VERSION}")
            endif()
        endif()
    endif()
endif()
if(SCRIPTSCOPE_HAS_EXECUTORCH)
    message(STATUS "ExecuTorch ${SCRIPTSCOPE_EXECUTORCH_VERSION} runtime from ${SCRIPTSCOPE_EXECUTORCH_LIBRARY_DIR}")
else()
    message(STATUS "ExecuTorch runtime: not found (.pte files open and draw but do not run; "
                   "scripts/setup.sh --torch-venv installs the executorch that matches its torch)")
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
if(SCRIPTSCOPE_LIBTORCH_HAS_CUDA)
    if(CUDAToolkit_VERSION_MAJOR)
        set(SCRIPTSCOPE_LIBTORCH_CUDA_VERSION "${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR}")
    else()
        set(SCRIPTSCOPE_LIBTORCH_CUDA_VERSION "${CUDA_VERSION}")
    endif()
endif()
# The GPU generations the operator's CUDA kernel is built for: those of the Python's torch (sm_75
# ... sm_120 for PyPI's cu130 wheels), each as machine code, plus PTX of the newest for later GPUs.
set(SCRIPTSCOPE_TORCH_CUDA_ARCHITECTURES "75-real;80-real;86-real;90-real;100-real;120")
if(SCRIPTSCOPE_LIBTORCH_HAS_CUDA)
    execute_process(
        COMMAND "${SCRIPTSCOPE_PYTHON}" -c
                "import torch; print(';'.join(a[3:] for a in torch.cuda.get_arch_list() if a.startswith('sm_')))"
        RESULT_VARIABLE _arch_result OUTPUT_VARIABLE _arch_list ERROR_QUIET
        OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_arch_result EQUAL 0 AND _arch_list MATCHES "^[0-9]")
        list(POP_BACK _arch_list _newest_arch)
        list(TRANSFORM _arch_list APPEND "-real")
        list(APPEND _arch_list "${_newest_arch}")
        set(SCRIPTSCOPE_TORCH_CUDA_ARCHITECTURES "${_arch_list}")
    endif()
endif()
message(STATUS "LibTorch CUDA support: ${SCRIPTSCOPE_LIBTORCH_HAS_CUDA} ${SCRIPTSCOPE_LIBTORCH_CUDA_VERSION}")
# Official LibTorch packages put their ABI flag in TORCH_CXX_FLAGS rather than on the target.
if(TORCH_CXX_FLAGS)
    separate_arguments(_scriptscope_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
    set_property(TARGET torch APPEND PROPERTY INTERFACE_COMPILE_OPTIONS ${_scriptscope_torch_flags})
endif()
# A pip-installed torch finds its CUDA libraries (cuBLAS, cuDNN, NCCL, ...) in the nvidia-*
# packages beside it through its own RUNPATH; the linker must look there too, before the system's
# CUDA toolkit, whose NCCL and others may be older than the ones this torch was built against.
if(Torch_DIR MATCHES "^(.*/site-packages)/torch/")
    file(GLOB _pip_cuda_dirs LIST_DIRECTORIES true "${CMAKE_MATCH_1}/nvidia/*/lib")
    foreach(_dir ${_pip_cuda_dirs})
        set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_dir}")
    endforeach()
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

    # Fixtures and reference outputs are made by SCRIPTSCOPE_PYTHON's PyTorch, which must be the
    # one the programs link: a printout from another version is no reference.
    execute_process(COMMAND "${SCRIPTSCOPE_PYTHON}" -c "import torch, numpy, cv2; print(torch.__version__)"
        RESULT_VARIABLE _py_result OUTPUT_VARIABLE _py_torch_version ERROR_QUIET
        OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _py_result EQUAL 0)
        message(FATAL_ERROR
            "The tests need ${SCRIPTSCOPE_PYTHON} with PyTorch, NumPy and OpenCV to make fixtures.\n"
            "On Debian 12: sudo apt-get install python3-torch python3-numpy python3-opencv\n"
            "Or set SCRIPTSCOPE_PYTHON=<python with torch>, or -DSCRIPTSCOPE_BUILD_TESTS=OFF.")
    endif()
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _py_minor "${_py_torch_version}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _lib_minor "${Torch_VERSION}")
    if(NOT _py_minor STREQUAL _lib_minor)
        message(FATAL_ERROR
            "The fixtures would be made by PyTorch ${_py_torch_version} (${SCRIPTSCOPE_PYTHON}) but the "
            "programs link LibTorch ${Torch_VERSION} (${Torch_DIR}): their printouts would not be "
            "references. Set SCRIPTSCOPE_PYTHON to the Python of that LibTorch.")
    endif()
    message(STATUS "Fixtures made with PyTorch ${_py_torch_version} (${SCRIPTSCOPE_PYTHON})")
endif()
