// Kernel classification and HTA's interval arithmetic.
#include <gtest/gtest.h>

#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {
namespace {

TEST(TraceClassify, NcclOldAndNewNames) {
    for (bool hta : {false, true}) {
        EXPECT_EQ(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", EventKind::kernel, "", hta),
                  KernelCategory::communication);
        EXPECT_EQ(classify_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", EventKind::kernel, "", hta),
                  KernelCategory::communication);
    }
    EXPECT_EQ(collective_of("ncclKernel_AllReduce_RING_LL_Sum_float", ""), "all_reduce");
    EXPECT_EQ(collective_of("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", ""), "reduce_scatter");
    EXPECT_EQ(collective_of("ncclDevKernel_SendRecv(ncclDevComm*)", ""), "send_recv");
    EXPECT_EQ(collective_of("ncclKernel_Broadcast_RING_LL_Sum_int8_t", ""), "broadcast");
}

TEST(TraceClassify, CollectiveNameArgumentWins) {
    // NCCL 2.19+ names the generic kernel; PyTorch's argument says what it did.
    EXPECT_EQ(collective_of("ncclDevKernel_Generic(ncclDevComm*)", "_allgather_base"), "all_gather");
    EXPECT_EQ(collective_of("ncclDevKernel_Generic(ncclDevComm*)", "allreduce"), "all_reduce");
    EXPECT_EQ(classify_kernel("some_fused_kernel", EventKind::kernel, "allreduce", false),
              KernelCategory::communication);
}

TEST(TraceClassify, ComputeAndMemory) {
    EXPECT_EQ(classify_kernel("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
                              EventKind::kernel, "", false), KernelCategory::gemm);
    EXPECT_EQ(classify_kernel("Cijk_Alik_Bljk_SB_MT64x64x16", EventKind::kernel, "", false), KernelCategory::gemm);
    EXPECT_EQ(classify_kernel("flash_fwd_kernel<Flash_fwd_kernel_traits>", EventKind::kernel, "", false),
              KernelCategory::attention);
    EXPECT_EQ(classify_kernel("void at::native::vectorized_layer_norm_kernel<float>", EventKind::kernel, "", false),
              KernelCategory::norm_elementwise);
    EXPECT_EQ(classify_kernel("Memcpy DtoD (Device -> Device)", EventKind::gpu_memcpy, "", true),
              KernelCategory::memcpy);
    EXPECT_EQ(classify_kernel("Memset (Device)", EventKind::gpu_memset, "", false), KernelCategory::memset);
    EXPECT_EQ(classify_kernel("Stream Wait Event", EventKind::cuda_sync, "", true), KernelCategory::sync);
}

// FBGEMM's embedding kernels name the library ("fbgemm_gpu::"), not a GEMM;
// its real GEMMs still count as GEMMs.
TEST(TraceClassify, FbgemmEmbeddingsAreNotGemms) {
    for (bool hta : {false, true}) {
        EXPECT_EQ(classify_kernel("void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float, "
                                  "int, 128>(...)",
                                  EventKind::kernel, "", hta),
                  KernelCategory::other_compute);
        EXPECT_EQ(classify_kernel("void fbgemm_gpu::batched_unary_embeddings_forward_kernel<float, int>(...)",
                                  EventKind::kernel, "", hta),
                  KernelCategory::other_compute);
        EXPECT_EQ(classify_kernel("void fbgemm_gpu::jagged_dense_elementwise_dense_output_kernel_<...>",
                                  EventKind::kernel, "", hta),
                  KernelCategory::norm_elementwise);
        EXPECT_EQ(classify_kernel("void fbgemm_gpu::grouped_gemm_kernel<cutlass::bfloat16_t>(...)", EventKind::kernel,
                                  "", hta),
                  KernelCategory::gemm);
    }
}

TEST(TraceIntervals, MergeAndOverlap) {
    using detail::Interval;
    const auto m = detail::merge_intervals({{5, 8}, {0, 2}, {1, 3}, {3, 4}, {10, 12}});
    ASSERT_EQ(m.size(), 3u);  // [0,4] (touching merges), [5,8], [10,12]
    EXPECT_DOUBLE_EQ(m[0].end, 4);
    EXPECT_DOUBLE_EQ(detail::total_length(m), 9);
    const auto comm = detail::merge_intervals({{2, 6}});
    EXPECT_DOUBLE_EQ(detail::overlap_length(comm, m), 3);  // [2,4] and [5,6]
}

}  // namespace
}  // namespace lostflops::trace
