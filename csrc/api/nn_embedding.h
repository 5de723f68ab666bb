// Public ops of ops/nn_embedding.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_embedding.h"

namespace ember {

using native::EmbeddingGatherFn;
using native::AccumulateRowsFn;
using native::EmbeddingRenormFn;
using native::BagMode;
using native::BagArgs;
using native::EmbeddingBagFn;
using native::EmbeddingBagMaxBackwardFn;
using native::embedding;
using native::embedding_dense_backward;
using native::embedding_renorm_;
using native::embedding_bag;
using native::BagLayout;
using native::embedding_bag_layout;
using native::embedding_bag_forward;
using native::embedding_bag_coefficients;
using native::embedding_bag_psw_grad;
using native::embedding_bag_backward;

}  // namespace ember
