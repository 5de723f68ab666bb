// Public ops of ops/random.h that have no node of their own (the native functions).
#pragma once
#include "ops/random.h"

namespace ember {

using native::Continuous;
using native::UniformFn;
using native::NormalFn;
using native::RandomIntFn;
using native::BernoulliFn;
using native::ContinuousFn;
using native::RandpermFn;
using native::MultinomialFn;
using native::uniform_values_per_block;
using native::normal_values_per_block;
using native::random_int_values_per_block;
using native::uniform_;
using native::normal_;
using native::random_;
using native::bernoulli_;
using native::exponential_;
using native::geometric_;
using native::log_normal_;
using native::cauchy_;
using native::rand;
using native::randn;
using native::randint;
using native::randperm;
using native::normal;
using native::bernoulli;
using native::multinomial;

}  // namespace ember
