// Printable names of the spec enums (the same words the job file uses).
#include "lostflops/fp8_recipe.h"
#include "lostflops/spec.h"

namespace lostflops {

const char* to_string(Precision p) {
    switch (p) {
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8: return "fp8";
        case Precision::fp32: return "fp32";
    }
    return "?";
}

const char* to_string(Fp8Recipe r) { return fp8_recipe_row(r).name; }

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::full: return "full";
    }
    return "?";
}

const char* to_string(RecomputeModule m) {
    switch (m) {
        case RecomputeModule::core_attn: return "core_attn";
        case RecomputeModule::moe_act: return "moe_act";
        case RecomputeModule::layernorm: return "layernorm";
        case RecomputeModule::mla_up_proj: return "mla_up_proj";
        case RecomputeModule::mlp: return "mlp";
        case RecomputeModule::moe: return "moe";
        case RecomputeModule::shared_experts: return "shared_experts";
    }
    return "?";
}

const char* to_string(AttentionKernel k) { return k == AttentionKernel::flash ? "flash" : "unfused"; }

const char* to_string(Framework f) {
    switch (f) {
        case Framework::megatron_lm: return "megatron-lm";
        case Framework::megatron_core: return "megatron-core";
        case Framework::fsdp: return "fsdp";
        case Framework::deepspeed: return "deepspeed";
        case Framework::hf: return "hf";
    }
    return "?";
}

const char* to_string(RematPolicy r) {
    switch (r) {
        case RematPolicy::unset: return "unset";
        case RematPolicy::minimal: return "minimal";
        case RematPolicy::save_dot_with_context_except_mlp: return "save_dot_with_context_except_mlp";
        case RematPolicy::save_dot_except_mlpwi: return "save_dot_except_mlpwi";
        case RematPolicy::save_dot_except_mlp: return "save_dot_except_mlp";
        case RematPolicy::save_qkv_proj: return "save_qkv_proj";
        case RematPolicy::save_out_proj: return "save_out_proj";
    }
    return "?";
}

const char* to_string(OptimizerKernel k) { return k == OptimizerKernel::fused ? "fused" : "foreach"; }

const char* to_string(Optimizer o) {
    switch (o) {
        case Optimizer::adam: return "adam";
        case Optimizer::adam_param_remainders: return "adam-param-remainders";
        case Optimizer::adam_bf16: return "adam-bf16";
        case Optimizer::adam_bf16_moments: return "adam-bf16-moments";
    }
    return "?";
}

const char* to_string(CpCommType t) {
    switch (t) {
        case CpCommType::p2p: return "p2p";
        case CpCommType::allgather: return "allgather";
        case CpCommType::a2a: return "a2a";
    }
    return "?";
}

const char* to_string(MoeDispatcher d) {
    switch (d) {
        case MoeDispatcher::alltoall: return "alltoall";
        case MoeDispatcher::allgather: return "allgather";
        case MoeDispatcher::deepep: return "deepep";
    }
    return "?";
}

}  // namespace lostflops
