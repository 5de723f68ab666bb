// The process-wide "deterministic algorithms" switch behind ember.use_deterministic_algorithms,
// and the alert that an op without a deterministic implementation raises (or warns) under it.
//
// Note [Deterministic Algorithms]: with the switch on, every op whose result could depend on
// the number of threads or their scheduling computes in a fixed order instead: reductions cut
// their ranges into a fixed number of chunks (kDeterministicChunks) whatever the thread count,
// float64 GEMM always takes Eigen (never OpenBLAS on one thread and Eigen on several), a oneDNN
// convolution's weight gradient runs on one thread, weighted histograms merge in input order.
// The results are then bit-identical for every ember.set_num_threads value (and between runs),
// though they may differ in the last bits from the results with the switch off.
// docs/design/parametrize-checkpoint.md lists the ops and what each does.
#pragma once
#include <cstdint>
#include <string>

namespace ember {

// The number of chunks a split reduction uses when the switch is on: fixed, so that the
// partial sums (and their rounding) do not depend on how many threads share them.
constexpr int kDeterministicChunks = 16;

// Lock-free reads (kernels call these on every run): the values live in std::atomic<bool>.
bool deterministic_algorithms();
bool deterministic_algorithms_warn_only();
void set_deterministic_algorithms(bool enabled, bool warn_only);

// Called by an op that has no deterministic implementation: with the switch on, throws Error
// (RuntimeError) naming `caller`, or with warn_only emits a UserWarning through the warning
// handler. Does nothing when the switch is off.
void alert_not_deterministic(const std::string& caller);

// How C++ code emits a Python UserWarning: the bindings install a handler (which takes the GIL);
// without one the message goes to stderr.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

}  // namespace ember
