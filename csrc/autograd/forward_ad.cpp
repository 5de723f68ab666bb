#include "autograd/forward_ad.h"

#include <algorithm>
#include <limits>
#include <string>

#include "api/creation.h"
#include "api/views.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace autograd {
namespace forward_ad {

namespace detail {
std::atomic<int> g_active_levels{0};
}

namespace {

// An open level and every cell made at it (held weakly: a cell lives as long as its tensor).
struct Level {
  uint64_t id = 0;
  std::vector<std::weak_ptr<TangentCell>> cells;
  size_t prune_at = 64;  // drop expired cells when the list reaches this size
};

struct Levels {
  std::mutex mutex;
  std::vector<Level> open;  // innermost last
  uint64_t next_id = 0;
};

Levels& levels() {
  static auto* l = new Levels();  // never destroyed: tensors may outlive static destruction
  return *l;
}

// Levels at or above this are hidden on this thread (HideLevelsGuard).
thread_local uint64_t t_hidden_from = std::numeric_limits<uint64_t>::max();

bool cell_has_value(TangentCell& c) {
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.tangent.defined() || c.pending != nullptr;
}

Tensor resolve(TangentCell& c) {
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.pending) {
    std::shared_ptr<FunctionNode> node = std::move(c.pending);
    c.pending.reset();
    variable_list out = node->forward_tangents(c.level);
    if (c.output_nr < out.size()) c.tangent = out[c.output_nr];
  }
  return c.tangent;
}

void register_cell(const std::shared_ptr<TangentCell>& cell) {
  Levels& ls = levels();
  std::lock_guard<std::mutex> lock(ls.mutex);
  for (Level& l : ls.open) {
    if (l.id != cell->level) continue;
    l.cells.push_back(cell);
    if (l.cells.size() >= l.prune_at) {
      l.cells.erase(std::remove_if(l.cells.begin(), l.cells.end(),
                                   [](const std::weak_ptr<TangentCell>& w) { return w.expired(); }),
                    l.cells.end());
      l.prune_at = std::max<size_t>(64, 2 * l.cells.size());
    }
    return;
  }
  EMBER_CHECK(false, "[forward_ad] level ", cell->level, " is not open");
}

// Installs `cell` as t's tangent at its level, dropping entries of closed levels.
void install(const Tensor& t, std::shared_ptr<TangentCell> cell) {
  register_cell(cell);
  AutogradMeta& m = materialize_meta(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  auto& cells = m.forward_grads.cells;
  cells.erase(std::remove_if(cells.begin(), cells.end(),
                             [&](const auto& e) {
                               return e.first == cell->level || !cell_has_value(*e.second);
                             }),
              cells.end());
  cells.emplace_back(cell->level, std::move(cell));
}

std::shared_ptr<TangentCell> find_cell(const Tensor& t, uint64_t level) {
  AutogradMeta* m = meta_of(t);
  if (!m) return nullptr;
  std::lock_guard<std::mutex> lock(m->mutex);
  for (const auto& [l, cell] : m->forward_grads.cells) {
    if (l == level) return cell;
  }
  return nullptr;
}

// A new cell for the view `t` (whose cell tracks its base): its region of the tangent of
// `base_cell`, to which it is synced.
std::shared_ptr<TangentCell> rederive_view_cell(const Tensor& t, const Tensor& base,
                                                const std::shared_ptr<TangentCell>& base_cell,
                                                uint64_t level) {
  auto cell = std::make_shared<TangentCell>();
  cell->level = level;
  cell->tracks_base = true;
  cell->synced_base = base_cell;
  const Tensor bt = resolve(*base_cell);
  if (bt.defined()) {
    // Differentiable ops, so that the tangent keeps its own history (reverse over forward); the
    // view's geometry is relative to the base's layout, so the tangent is brought to it first.
    HideLevelsGuard hide(level);
    Tensor laid = bt;
    if (!bt.strides().equals(base.strides())) {
      laid = empty_strided(DimVector(base.sizes()), DimVector(base.strides()),
                           TensorOptions(bt.dtype(), bt.device()));
      ember::copy_(laid, bt);
    }
    const int64_t rel_offset = t.storage_offset() - base.storage_offset();
    cell->tangent =
        ember::as_strided(laid, t.sizes(), t.strides(), laid.storage_offset() + rel_offset);
  }
  install(t, cell);
  return cell;
}

// t's cell at `level`, rederived first when t is a view whose base has changed its tangent, or
// derived when t is a view with no tangent of its own whose base has one (a view made before its
// base became dual: as PyTorch's, its tangent is its region of the base's).
std::shared_ptr<TangentCell> current_cell(const Tensor& t, uint64_t level) {
  std::shared_ptr<TangentCell> cell = find_cell(t, level);
  if ((cell && !cell->tracks_base) || !t.impl()->view_base()) return cell;
  const Tensor base(t.impl()->view_base());
  std::shared_ptr<TangentCell> base_cell = find_cell(base, level);
  if (!base_cell || (cell && base_cell == cell->synced_base.lock())) return cell;
  if (!cell && !cell_has_value(*base_cell)) return cell;
  if (t.storage_offset() < base.storage_offset()) return cell;
  return rederive_view_cell(t, base, base_cell, level);
}

// Whether some visible level of `m` holds a tangent.
bool holds_visible_tangent(AutogradMeta* m) {
  if (!m) return false;
  std::lock_guard<std::mutex> lock(m->mutex);
  for (const auto& [level, cell] : m->forward_grads.cells) {
    if (level < t_hidden_from && cell_has_value(*cell)) return true;
  }
  return false;
}

bool level_is_open(uint64_t level) {
  Levels& ls = levels();
  std::lock_guard<std::mutex> lock(ls.mutex);
  for (const Level& l : ls.open) {
    if (l.id == level) return true;
  }
  return false;
}

}  // namespace

uint64_t enter_dual_level() {
  Levels& ls = levels();
  std::lock_guard<std::mutex> lock(ls.mutex);
  Level l;
  l.id = ls.next_id++;
  ls.open.push_back(std::move(l));
  detail::g_active_levels.fetch_add(1, std::memory_order_relaxed);
  return ls.open.back().id;
}

void exit_dual_level(uint64_t level) {
  std::vector<std::weak_ptr<TangentCell>> cells;
  {
    Levels& ls = levels();
    std::lock_guard<std::mutex> lock(ls.mutex);
    EMBER_CHECK(!ls.open.empty() && ls.open.back().id == level,
                "[forward_ad] Trying to exit a forward AD level (", level,
                ") that is not the innermost one; exit the levels in the reverse order of entering "
                "them.");
    cells = std::move(ls.open.back().cells);
    ls.open.pop_back();
    detail::g_active_levels.fetch_sub(1, std::memory_order_relaxed);
  }
  // Outside the registry's lock: dropping a pending node may free tensors (and their cells).
  for (auto& w : cells) {
    if (auto c = w.lock()) {
      std::shared_ptr<FunctionNode> node;
      {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->tangent = Tensor();
        node = std::move(c->pending);
        c->pending.reset();
      }
      node.reset();
    }
  }
}

int64_t current_level() {
  Levels& ls = levels();
  std::lock_guard<std::mutex> lock(ls.mutex);
  return ls.open.empty() ? -1 : static_cast<int64_t>(ls.open.back().id);
}

HideLevelsGuard::HideLevelsGuard(uint64_t level) : prev_(t_hidden_from) {
  t_hidden_from = std::min(prev_, level);
}
HideLevelsGuard::~HideLevelsGuard() {
  t_hidden_from = prev_;
}

std::vector<uint64_t> visible_levels() {
  std::vector<uint64_t> out;
  Levels& ls = levels();
  std::lock_guard<std::mutex> lock(ls.mutex);
  for (const Level& l : ls.open) {
    if (l.id < t_hidden_from) out.push_back(l.id);
  }
  return out;
}

bool has_tangent(const Tensor& t) {
  if (holds_visible_tangent(meta_of(t))) return true;
  // A view whose base became dual after the view was made (current_cell derives its tangent).
  const auto& base = t.impl()->view_base();
  return base && holds_visible_tangent(meta_of(Tensor(base)));
}

Tensor tangent(const Tensor& t, uint64_t level) {
  std::shared_ptr<TangentCell> cell = current_cell(t, level);
  return cell ? resolve(*cell) : Tensor();
}

void share_tangents(const Tensor& from, const Tensor& to) {
  AutogradMeta* m = meta_of(from);
  if (!m) return;
  std::vector<std::pair<uint64_t, std::shared_ptr<TangentCell>>> cells;
  {
    std::lock_guard<std::mutex> lock(m->mutex);
    cells = m->forward_grads.cells;
  }
  if (cells.empty()) return;
  AutogradMeta& tm = materialize_meta(to);
  std::lock_guard<std::mutex> lock(tm.mutex);
  tm.forward_grads.cells = std::move(cells);
}

void set_tangent(const Tensor& t, const Tensor& tangent, uint64_t level) {
  auto cell = std::make_shared<TangentCell>();
  cell->level = level;
  cell->tangent = tangent;
  install(t, std::move(cell));
}

void attach_pending(const Tensor& t, const std::shared_ptr<FunctionNode>& node,
                    uint32_t output_nr) {
  const auto& base = t.impl()->view_base();
  for (uint64_t level : node->forward_levels()) {
    auto cell = std::make_shared<TangentCell>();
    cell->level = level;
    cell->pending = node;
    cell->output_nr = output_nr;
    if (base) {
      cell->tracks_base = true;
      cell->synced_base = find_cell(Tensor(base), level);
    }
    install(t, std::move(cell));
  }
}

void rebase_view_tangents(const Tensor& view, const std::shared_ptr<FunctionNode>& node,
                          uint32_t output_nr) {
  attach_pending(view, node, output_nr);
  const Tensor base(view.impl()->view_base());
  const int64_t rel_offset = view.storage_offset() - base.storage_offset();
  EMBER_CHECK(rel_offset >= 0,
              "[forward_ad] an in-place op on a view that starts before its "
              "base is not supported by forward-mode AD; clone the view first.");
  const DimVector base_sizes(base.sizes()), base_strides(base.strides());
  const DimVector view_sizes(view.sizes()), view_strides(view.strides());
  for (uint64_t level : node->forward_levels()) {
    std::shared_ptr<TangentCell> view_cell = find_cell(view, level);
    Tensor old_base_tangent = tangent(base, level);
    auto copy_node = std::make_shared<FunctionNode>(
        "CopySlicesForward", [](FunctionNode&, const variable_list&) -> variable_list {
          throw Error("[forward_ad] CopySlicesForward has no backward");
        });
    copy_node->set_records_history(false);
    copy_node->add_input_metadata(base);
    copy_node->set_jvp([=](FunctionNode&, const variable_list& tangents) -> variable_list {
      Tensor view_tangent = resolve(*view_cell);
      const Tensor& old = tangents.at(0);
      if (!old.defined() && !view_tangent.defined()) return {Tensor()};
      Tensor fresh =
          empty_strided(base_sizes, base_strides, TensorOptions(base.dtype(), base.device()));
      if (old.defined()) {
        copy_into(fresh, old, "make_dual");
      } else {
        native::zero_fresh(fresh);
      }
      Tensor region = native::as_strided(fresh, view_sizes, view_strides, rel_offset);
      if (view_tangent.defined()) {
        copy_into(region, view_tangent, "make_dual");
      } else {
        native::fill_(region, 0);
      }
      return {fresh};
    });
    copy_node->add_forward_level(level, {old_base_tangent});
    auto cell = std::make_shared<TangentCell>();
    cell->level = level;
    cell->pending = copy_node;
    if (view_cell) view_cell->synced_base = cell;  // the base's new tangent holds the view's
    install(base, std::move(cell));
  }
}

Tensor make_dual(const Tensor& primal, const Tensor& tangent, uint64_t level) {
  EMBER_CHECK(level_is_open(level),
              "[make_dual] Trying to create a dual Tensor for forward AD "
              "but no level exists, make sure to enter_dual_level() first.");
  EMBER_CHECK(is_floating(primal.dtype()) || ember::is_complex(primal.dtype()),
              "[make_dual] Expected primal to be floating point or complex, but got: ",
              dtype_name(primal.dtype()));
  EMBER_CHECK(is_floating(tangent.dtype()) || ember::is_complex(tangent.dtype()),
              "[make_dual] Expected tangent to be floating point or complex, but got: ",
              dtype_name(tangent.dtype()));
  EMBER_CHECK(primal.sizes().equals(tangent.sizes()),
              "[make_dual] Trying to set a forward gradient that has a different size than that "
              "of the original Tensor, this is not supported. Tensor is of size ",
              shape_str(primal.sizes()), " while the given forward gradient is of size ",
              shape_str(tangent.sizes()), ".");
  EMBER_CHECK(primal.device() == tangent.device(),
              "[make_dual] Expected primal and tangent to be on the same device");
  // The tangent takes the primal's dtype and strides, so that a view of the dual can take the
  // same view of the tangent (derivatives/views_shape.cpp).
  Tensor t = tangent;
  if (t.dtype() != primal.dtype() || !t.strides().equals(primal.strides())) {
    t = empty_strided(primal.sizes(), primal.strides(),
                      TensorOptions(primal.dtype(), primal.device()));
    copy_into(t, tangent, "make_dual");
  }
  Tensor dual;
  {
    HideLevelsGuard hide(level);  // the alias must not derive a tangent at this level
    dual = ember::alias(primal);
  }
  set_tangent(dual, t, level);
  return dual;
}

std::pair<Tensor, Tensor> unpack_dual(const Tensor& t, uint64_t level) {
  Tensor tan = tangent(t, level);
  if (!tan.defined()) return {t, Tensor()};
  HideLevelsGuard hide(level);
  return {ember::alias(t), tan};
}

}  // namespace forward_ad
}  // namespace autograd
}  // namespace ember
