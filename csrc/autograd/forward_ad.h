// Forward-mode AD: dual levels, the tangent a tensor carries at each level, and how an op's
// node computes the tangents of its outputs (docs/design/forward-ad.md).
//
// Note [Forward AD through the nodes]: forward-mode AD rides on the same nodes as reverse mode.
// When an input of an op carries a tangent at an active level, should_record() is true and the
// op builds its FunctionNode as usual; new_node() captures the inputs' tangents, and each output
// gets a TangentCell that points back at the node. The cell is resolved when somebody reads the
// tangent (the next op's new_node, unpack_dual): by then the op has returned and saved what its
// backward reads. Resolution runs the node's JVP formula when the op has one, and otherwise
// derives the JVP from the backward formula (which is linear in the output gradient g) by
// differentiating it once more: J t = d/dg <vjp(g), t>. Reverse mode is unaffected: a node built
// only for forward AD attaches no grad_fn to its outputs.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace autograd {

class FunctionNode;

// The tangent of one tensor at one level: a tensor, or (until first read) the node and output
// number that compute it.
struct TangentCell {
  std::mutex mutex;
  Tensor tangent;                         // undefined: zero, or not resolved yet
  std::shared_ptr<FunctionNode> pending;  // set until resolved; cleared when the level exits
  uint32_t output_nr = 0;
  uint64_t level = 0;
  // A view's tangent is its region of its base's (PyTorch's view tangents are views of the
  // base's tangent). tracks_base marks the cells of views made by a differentiable op, and
  // synced_base is the base's cell they were derived from: when the base has a newer cell (an
  // in-place op on the base or on another view of it), reading the view rederives its tangent.
  bool tracks_base = false;
  std::weak_ptr<TangentCell> synced_base;
};

// A tensor's tangents, one entry per level it has been given one at.
struct ForwardGrads {
  std::vector<std::pair<uint64_t, std::shared_ptr<TangentCell>>> cells;
};

namespace forward_ad {

namespace detail {
extern std::atomic<int> g_active_levels;
}

// Whether any dual level is open (one relaxed load: the fast path of should_record).
inline bool any_level_active() {
  return detail::g_active_levels.load(std::memory_order_relaxed) > 0;
}

// Opens a dual level and returns its id (ids are never reused). Levels nest; the innermost is
// the most recent.
uint64_t enter_dual_level();
// Closes `level`: every tangent at that level is dropped. Raises if it is not the innermost.
void exit_dual_level(uint64_t level);
// The innermost open level, or -1 when none.
int64_t current_level();

// Ops computing the JVP of level L run with L and every level above it hidden, so that the
// tangent computation does not itself carry tangents at those levels (only lower ones).
class HideLevelsGuard {
 public:
  explicit HideLevelsGuard(uint64_t level);
  ~HideLevelsGuard();
  HideLevelsGuard(const HideLevelsGuard&) = delete;
  HideLevelsGuard& operator=(const HideLevelsGuard&) = delete;

 private:
  uint64_t prev_;
};

// Whether `t` carries a tangent at some open, visible level.
bool has_tangent(const Tensor& t);
// The tangent of `t` at `level` (resolved), undefined when it has none.
Tensor tangent(const Tensor& t, uint64_t level);
// The open, visible levels, innermost last.
std::vector<uint64_t> visible_levels();

// A view of `primal` carrying `tangent` at `level` (ember.autograd.forward_ad.make_dual).
Tensor make_dual(const Tensor& primal, const Tensor& tangent, uint64_t level);
// (primal view without the level's tangent, tangent) (forward_ad.unpack_dual).
std::pair<Tensor, Tensor> unpack_dual(const Tensor& t, uint64_t level);

// `to` (an alias of `from` made outside autograd, e.g. a saved output) shares from's tangents.
void share_tangents(const Tensor& from, const Tensor& to);
// Gives `t` the concrete `tangent` at `level` (replacing what it had).
void set_tangent(const Tensor& t, const Tensor& tangent, uint64_t level);
// Gives output `output_nr` of `node` a pending tangent at each level the node captured.
void attach_pending(const Tensor& t, const std::shared_ptr<FunctionNode>& node, uint32_t output_nr);
// An in-place op on the view `view` (output `output_nr` of `node`): the view gets its pending
// tangent, and its base a tangent equal to its old one with the view's region replaced by the
// view's new tangent (zeros elsewhere if the base had none).
void rebase_view_tangents(const Tensor& view, const std::shared_ptr<FunctionNode>& node,
                          uint32_t output_nr);

}  // namespace forward_ad
}  // namespace autograd
}  // namespace ember
