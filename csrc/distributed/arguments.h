// Arguments as Python passes them to a process group (the Gloo one in ember._C, the NCCL one in
// ember._C_cuda): timeouts in seconds, and ReduceOp as its integer value.
#pragma once
#include <cstdint>

#include "core/error.h"
#include "distributed/process_group.h"

namespace ember::distributed {

inline Milliseconds timeout_from_seconds(double seconds) {
  EMBER_CHECK_T(ValueError, seconds >= 0, "[distributed] a timeout must be >= 0 seconds, got ",
                seconds);
  return Milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

// Python's ReduceOp values (python/ember/distributed/__init__.py) are ReduceOp's, up to BXOR;
// PREMUL_SUM (8) is refused here.
inline ReduceOp reduce_op_from(int op) {
  EMBER_CHECK_T(ValueError, op >= 0 && op <= static_cast<int>(ReduceOp::kBxor),
                "[distributed] unknown reduce op ", op);
  return static_cast<ReduceOp>(op);
}

}  // namespace ember::distributed
