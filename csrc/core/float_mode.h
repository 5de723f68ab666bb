// Flush-to-zero for denormal floats (torch.set_flush_denormal). Arithmetic on denormal (subnormal)
// numbers takes a slow microcode path on x86, 10-100x the normal latency; training loops whose
// optimizer states decay towards zero can spend most of their time there. With the mode on, the
// CPU treats denormal inputs as zero (DAZ) and flushes denormal results to zero (FTZ).
//
// The mode is per thread in hardware (MXCSR). Ember keeps it process-wide: set_flush_denormal
// applies it to the calling thread and to the OpenMP pool at once, and every parallel region
// re-applies it on threads that have not seen the current setting (threads added later).
#pragma once

namespace ember {

// Sets the mode; returns false (and changes nothing) where the CPU cannot flush denormals.
bool set_flush_denormal(bool on);

// The process-wide setting.
bool flush_denormal_enabled();

// Applies the process-wide setting to the calling thread if it has not seen it yet: a relaxed
// load and a compare when nothing changed.
void apply_flush_denormal();

}  // namespace ember
