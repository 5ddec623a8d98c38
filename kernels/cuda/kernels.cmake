# Included from kernels/CMakeLists.txt once CUDA is enabled: the CUDA kernels, the NCCL communicator
# (where NCCL is found) and the GPU-vs-CPU comparison harness (tests and tokenline_kernels_check use it).
add_library(tl_kernels_cuda
  cuda/device_memory.cu
  cuda/elementwise.cu
  cuda/gemm.cu
  cuda/kernel_set.cpp
  cuda/mla_attention.cu
  cuda/moe.cu
  cuda/sampler.cu
  cuda/backend_compare.cpp
  cuda/compare_attention.cpp
  cuda/compare_moe.cpp)
target_include_directories(tl_kernels_cuda PUBLIC ${TOKENLINE_ROOT})
target_link_libraries(tl_kernels_cuda PUBLIC tl_kernels_cpu PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
# cuBLAS: headers only; the library is opened at run time (cuda/gemm.cu).
target_include_directories(tl_kernels_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# Relaxed constexpr lets the shared host/device headers' constants be used in device code.
target_compile_options(tl_kernels_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  target_sources(tl_kernels_cuda PRIVATE cuda/nccl_communicator.cpp)
  target_include_directories(tl_kernels_cuda PRIVATE ${NCCL_INCLUDE_DIR})
  target_link_libraries(tl_kernels_cuda PUBLIC ${NCCL_LIBRARY})
  target_compile_definitions(tl_kernels_cuda PUBLIC TOKENLINE_HAVE_NCCL=1)
else()
  message(STATUS "tokenline: NCCL not found; NcclCommunicator not built")
endif()

add_executable(tokenline_kernels_check cuda/check_main.cpp)
target_link_libraries(tokenline_kernels_check PRIVATE tl_kernels_cuda)
