# Resolves the AUTO/ON/OFF options into PIPELENS_WITH_TORCH, PIPELENS_WITH_CUDA and
# PIPELENS_WITH_GUI. ON means "fail the configure if it is missing"; AUTO means "use it if it
# is here"; OFF means "do not look". The decision is printed so a build log says what was built.

function(pipelens_resolve option found what)
    if(${option} STREQUAL "OFF")
        set(with OFF)
    elseif(${found})
        set(with ON)
    elseif(${option} STREQUAL "ON")
        message(FATAL_ERROR "${option}=ON but ${what} was not found")
    else()
        set(with OFF)
    endif()
    string(REPLACE "PIPELENS_" "PIPELENS_WITH_" with_name ${option})
    set(${with_name} ${with} PARENT_SCOPE)
    message(STATUS "pipelens: ${what}: ${with} (${option}=${${option}})")
endfunction()

set(torch_found OFF)
if(NOT PIPELENS_TORCH STREQUAL "OFF")
    find_package(Torch QUIET)
    if(Torch_FOUND)
        set(torch_found ON)
    endif()
endif()
pipelens_resolve(PIPELENS_TORCH torch_found "LibTorch runtime")

set(cuda_found OFF)
if(NOT PIPELENS_CUDA STREQUAL "OFF")
    # CUDA's runtime and NCCL may live apart (a pip wheel's nvidia/nccl next to a system CUDA),
    # and a wheel ships only the versioned libnccl.so.2.
    set(PIPELENS_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit")
    set(PIPELENS_NCCL_ROOT "${PIPELENS_CUDA_ROOT}" CACHE PATH "NCCL (include/nccl.h, lib/libnccl)")
    find_path(PIPELENS_CUDA_INCLUDE cuda_runtime_api.h PATHS ${PIPELENS_CUDA_ROOT}/include
        NO_DEFAULT_PATH)
    find_library(PIPELENS_CUDART_LIBRARY NAMES cudart PATHS ${PIPELENS_CUDA_ROOT}/lib64
        ${PIPELENS_CUDA_ROOT}/lib NO_DEFAULT_PATH)
    find_path(PIPELENS_NCCL_INCLUDE nccl.h PATHS ${PIPELENS_NCCL_ROOT}/include NO_DEFAULT_PATH)
    find_library(PIPELENS_NCCL_LIBRARY NAMES nccl libnccl.so.2 PATHS ${PIPELENS_NCCL_ROOT}/lib64
        ${PIPELENS_NCCL_ROOT}/lib NO_DEFAULT_PATH)
    if(PIPELENS_CUDA_INCLUDE AND PIPELENS_CUDART_LIBRARY AND PIPELENS_NCCL_INCLUDE AND
       PIPELENS_NCCL_LIBRARY)
        set(cuda_found ON)
    endif()
endif()
pipelens_resolve(PIPELENS_CUDA cuda_found "CUDA + NCCL transport")

set(gui_found OFF)
if(NOT PIPELENS_GUI STREQUAL "OFF")
    find_package(glfw3 QUIET)
    find_package(OpenGL QUIET)
    find_library(PIPELENS_IMGUI_LIBRARY imgui)
    find_path(PIPELENS_IMGUI_INCLUDE imgui.h PATH_SUFFIXES imgui)
    if(glfw3_FOUND AND OpenGL_FOUND AND PIPELENS_IMGUI_LIBRARY AND PIPELENS_IMGUI_INCLUDE)
        set(gui_found ON)
    endif()
endif()
pipelens_resolve(PIPELENS_GUI gui_found "Dear ImGui desktop viewer")
