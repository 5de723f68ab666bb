// ember.distributed's errors, as torch.distributed's: each a RuntimeError in Python
// (bindings/distributed.cpp translates them).
#pragma once
#include "core/error.h"

namespace ember::distributed {

// A store operation failed or timed out -> ember.distributed.DistStoreError.
class DistStoreError : public Error {
 public:
  using Error::Error;
};

// A connection could not be made or broke -> ember.distributed.DistNetworkError.
class DistNetworkError : public Error {
 public:
  using Error::Error;
};

// A collective failed on this rank or another (a peer died, a timeout, mismatched
// arguments) -> ember.distributed.DistBackendError.
class DistBackendError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember::distributed
