// Pipeline schedules: closed form and discrete-event simulation.
//
// Both take the same input: p stages, v model chunks per stage (interleaved 1F1B
// when v > 1, Narayanan et al. 2021 sec. 2.2), m micro-batches, and for every
// (stage, chunk) the forward and backward time of one micro-batch, plus the
// point-to-point transfer time between consecutive chunks. They return the
// makespan of one step's pipeline phase (first forward start to last backward
// end), without the optimizer or gradient reduction.
//
// Closed form (1F1B, uniform stages): (m + (p-1)/v) * (t_f + t_b)
// (Narayanan et al. 2021, eq. for the bubble (p-1)/(v*m)); with uneven stages the
// closed form uses the slowest stage for the steady state and the mean stage for
// fill and drain. The simulation executes Megatron-LM's actual per-rank order of
// forward and backward passes, and is the reference the closed form is tested
// against. Zero-bubble ZB-H1 and DualPipe / DualPipeV (PipelineInput::schedule;
// the table in lostflops/pipeline_schedules.h) run their own orders with B, W
// and F&B passes (schedule/schedule_order.cpp; ZB-V's schedule/zbv_order.cpp)
// and closed forms
// (schedule/schedule_closed_form.cpp).
#pragma once

#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

struct PipelineInput {
    // The schedule (lostflops/pipeline_schedules.h; one_f_one_b and
    // interleaved both mean Megatron-LM's 1F1B, interleaved when chunks > 1).
    // dualpipe and dualpipev run 2 chunks: dualpipe's chunk 0 is stage r of
    // the micro-batches entering at rank 0, chunk 1 stage p-1-r of those
    // entering at rank p-1 (m/2 each); dualpipev's chunk 1 is virtual stage
    // 2p-1-r of one V-shaped pipeline (zbv's too).
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int stages = 1;          // p >= 1
    int chunks = 1;          // v >= 1
    int micro_batches = 1;   // m >= 1; interleaved schedules need m % p == 0
    // Indexed [stage * chunks + chunk]; size stages * chunks. Seconds.
    std::vector<double> fwd_s;
    std::vector<double> bwd_s;   // the full backward, B + W
    // Optional (empty: zeros), same indexing: of bwd_s the weight-gradient W
    // (split schedules run bwd_s - wgrad_s as B, then W apart); of fwd_s and
    // bwd_s the communication the other pass of an F&B pair hides (dualpipe,
    // dualpipev): F&B = F + B+W - min(fwd_comm, B+W compute) - min(bwd_comm, F compute).
    std::vector<double> wgrad_s, fwd_comm_s, bwd_comm_s;
    double p2p_s = 0;        // one activation (or gradient) transfer between stages
};

struct PipelineResult {
    double makespan_s = 0;
    double busy_max_s = 0;   // busiest stage's compute time (m * sum of its chunks)
    double bubble_s = 0;     // makespan - busy_max_s
};

// Both throw std::invalid_argument when the input breaks a precondition
// (p, v, m < 1; vector sizes != p*v; negative or non-finite times; v > 1 with
// m % p != 0, Megatron-LM's requirement for the interleaved schedule). The job's
// validation reports such plans to the user as InputError before calling these.
// pipeline_closed_form is O(p*v) and allocation-free (hot path of estimate).
// pipeline_simulate throws std::logic_error if the schedule deadlocks (a bug).
PipelineResult pipeline_closed_form(const PipelineInput& in);
PipelineResult pipeline_simulate(const PipelineInput& in);

// What a pass computes: a forward, a full backward (B + W), the input
// gradient B alone, the weight gradient W alone, or a forward overlapped with
// another micro-batch's full backward (F&B).
enum class PassKind { forward, backward, input_grad, weight_grad, fwd_bwd };

// One pass of one micro-batch through one model chunk.
struct PipelineOp {
    bool forward = true;  // kind == forward
    int micro_batch = 0;  // 0 .. m-1 (dualpipe: 0 .. m/2-1 of the chunk's direction)
    int chunk = 0;        // 0 .. v-1; 1F1B family: virtual stage = chunk * p + rank
    PassKind kind = PassKind::forward;
    int bwd_micro_batch = -1, bwd_chunk = -1;  // fwd_bwd: the backward it overlaps
};

// Number of warm-up forward passes rank `rank` runs before its first backward
// (Megatron-LM schedules.py): min(p - r - 1, m) for v == 1;
// min((p - r - 1) * 2 + (v - 1) * p, m * v) for v > 1.
int pipeline_warmup_ops(int stages, int chunks, int micro_batches, int rank);

// The i-th operation (0 <= i < 2*m*v) that rank `rank` executes.
PipelineOp pipeline_rank_op(int stages, int chunks, int micro_batches, int rank, int i);

// All 2*m*v operations of one rank in execution order (for tests and pictures).
std::vector<PipelineOp> pipeline_rank_order(int stages, int chunks, int micro_batches,
                                            int rank);

// Any schedule's passes of one rank in execution order
// (schedule/schedule_order.cpp); the 1F1B family gives pipeline_rank_order's.
// Throws std::invalid_argument when the schedule's requirements fail.
std::vector<PipelineOp> schedule_rank_order(PipelineSchedule schedule, int stages, int chunks, int micro_batches,
                                            int rank);

// Chunk passes of rank `rank` whose activations are alive at its peak
// (forwards run, backward or W not yet), per chunk [0, 1] for dualpipe /
// dualpipev (closed form; tests hold it against the order), for m >= 2p.
struct DualAlive {
    int chunk0 = 0, chunk1 = 0;
};
DualAlive dual_alive(PipelineSchedule schedule, int stages, int rank);
// The same for zbv (any m): min(2p - 1 - r, m) of chunk 0 and min(r + 1, m)
// of chunk 1 (schedule/zbv_order.cpp; tests hold it against the order).
DualAlive zbv_alive(int stages, int micro_batches, int rank);

// F&B pairs a rank of dualpipe / dualpipev runs (the rest of its passes run
// alone): from the step counts of deepseek-ai/DualPipe.
int dual_overlapped_pairs(PipelineSchedule schedule, int stages, int micro_batches, int rank);

}  // namespace lostflops
