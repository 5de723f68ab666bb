// Public random ops (ops/random.h): the native functions, except normal with a tensor mean or
// std, a composite of public ops (api/random.cpp).
#pragma once
#include "ops/random.h"

namespace ember {

using native::bernoulli_;
using native::BernoulliFn;
using native::cauchy_;
using native::Continuous;
using native::ContinuousFn;
using native::exponential_;
using native::geometric_;
using native::log_normal_;
using native::MultinomialFn;
using native::normal;  // normal(mean, std, size)
using native::normal_;
using native::normal_values_per_block;
using native::NormalFn;
using native::rand;
using native::randint;
using native::randn;
using native::random_;
using native::random_int_values_per_block;
using native::RandomIntFn;
using native::randperm;
using native::RandpermFn;
using native::uniform_;
using native::uniform_values_per_block;
using native::UniformFn;
// normal with a tensor mean or std (broadcast): the result has mean's dtype (std's when mean is a
// number) and is differentiable in mean and std (reparameterised: noise * std + mean).
Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen = nullptr);
Tensor normal(const Tensor& mean, double std, Generator* gen = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* gen = nullptr);
using native::bernoulli;
using native::multinomial;

}  // namespace ember
