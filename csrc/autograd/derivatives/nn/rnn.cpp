// Derivatives of the recurrent cells: one node per cell. Its formula runs the fused pointwise
// backward kernel and then the gate products' gradients (grad_x = d W, grad_W = d^T x,
// grad_b = sum_rows d). With create_graph=True the pointwise part is instead recomputed from the
// saved inputs with public ops (Note [Activation double backward] in nn_activation.cpp), so the
// gradient can be differentiated again.
#include "autograd/derivatives/nn/rnn.h"

#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/matmul.h"
#include "api/nn/rnn.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/formula.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::GradMode;
using autograd::variable_list;

using formula::num;

namespace {

Tensor one_minus(const Tensor& t) {
  return ember::sub(num(1), t);
}
Tensor or_zeros(const Tensor& g, const Tensor& like) {
  return g.defined() ? g : zeros(like.sizes(), TensorOptions(like.dtype(), like.device()));
}
// Column block k of width h.
Tensor block(const Tensor& t, int64_t k, int64_t h) {
  return ember::narrow(t, 1, k * h, h);
}
// x W^T + b with public ops (recorded when grad mode is on).
Tensor affine(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor r = ember::mm(x, ember::transpose(w, 0, 1));
  return b.defined() ? ember::add(r, b) : r;
}

// Gradients of x, W and b through x W^T + b, given d (rows of the product's gradient).
void product_grads(FunctionNode& n, variable_list& r, size_t ix, size_t iw, size_t ib,
                   const Tensor& d, const Tensor& x, const Tensor& w) {
  if (n.should_compute_output(ix)) r[ix] = ember::mm(d, w);
  if (n.should_compute_output(iw)) r[iw] = ember::mm(ember::transpose(d, 0, 1), x);
  if (n.should_compute_output(ib)) r[ib] = ember::sum(d, std::vector<int64_t>{0});
}

void add_into(Tensor& acc, const Tensor& t) {
  acc = acc.defined() ? ember::add(acc, t) : t;
}

}  // namespace

// Saved: input, hx, cx, w_ih, w_hh, b_ih, b_hh, workspace, cy.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  auto node = autograd::new_node(
      "LstmCellBackward0", {input, hx, cx, w_ih, w_hh, b_ih, b_hh},
      [](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0), h = n.saved(1), c = n.saved(2), wi = n.saved(3),
                     wh = n.saved(4), bi = n.saved(5), bh = n.saved(6);
        Tensor dgates, dcx;
        if (!GradMode::is_enabled()) {
          std::tie(dgates, dcx) =
              ember::lstm_cell_pointwise_backward(g[0], g[1], n.saved(7), c, n.saved(8));
        } else {
          const int64_t hs = wh.size(0) / 4;
          const Tensor gates = ember::add(affine(x, wi, bi), affine(h, wh, bh));
          const Tensor i = ember::sigmoid(block(gates, 0, hs)),
                       f = ember::sigmoid(block(gates, 1, hs)),
                       gg = ember::tanh(block(gates, 2, hs)),
                       o = ember::sigmoid(block(gates, 3, hs));
          const Tensor cy = ember::add(ember::mul(f, c), ember::mul(i, gg));
          const Tensor tc = ember::tanh(cy);
          const Tensor g_h = or_zeros(g[0], cy);
          const Tensor g_c = ember::add(
              or_zeros(g[1], cy), ember::mul(ember::mul(g_h, o), one_minus(ember::mul(tc, tc))));
          dgates = ember::cat({ember::mul(ember::mul(g_c, gg), ember::mul(i, one_minus(i))),
                               ember::mul(ember::mul(g_c, c), ember::mul(f, one_minus(f))),
                               ember::mul(ember::mul(g_c, i), one_minus(ember::mul(gg, gg))),
                               ember::mul(ember::mul(g_h, tc), ember::mul(o, one_minus(o)))},
                              1);
          dcx = ember::mul(g_c, f);
        }
        variable_list r(7);
        product_grads(n, r, 0, 3, 5, dgates, x, wi);
        product_grads(n, r, 1, 4, 6, dgates, h, wh);
        if (n.should_compute_output(2)) r[2] = dcx;
        return r;
      });
  Tensor hy, cy, workspace;
  {
    autograd::NoGradGuard no_grad;
    std::tie(hy, cy, workspace) = native::lstm_cell_forward(input, hx, cx, w_ih, w_hh, b_ih, b_hh);
  }
  for (const Tensor* t : {&input, &hx, &cx, &w_ih, &w_hh, &b_ih, &b_hh}) node->save(*t);
  node->save(workspace);
  node->save(cy, /*is_output=*/true);
  autograd::set_history_all(node, {hy, cy});
  return {hy, cy};
}

// Saved: input, hx, w_ih, w_hh, b_ih, b_hh, workspace.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  auto node = autograd::new_node(
      "GruCellBackward0", {input, hx, w_ih, w_hh, b_ih, b_hh},
      [](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0), h = n.saved(1), wi = n.saved(2), wh = n.saved(3),
                     bi = n.saved(4), bh = n.saved(5);
        Tensor dgi, dgh, dhx;
        if (!GradMode::is_enabled()) {
          std::tie(dgi, dgh, dhx) = ember::gru_cell_pointwise_backward(g[0], n.saved(6), h);
        } else {
          const int64_t hs = wh.size(1);
          const Tensor gi = affine(x, wi, bi), gh = affine(h, wh, bh);
          const Tensor r = ember::sigmoid(ember::add(block(gi, 0, hs), block(gh, 0, hs)));
          const Tensor z = ember::sigmoid(ember::add(block(gi, 1, hs), block(gh, 1, hs)));
          const Tensor hn = block(gh, 2, hs);
          const Tensor nn = ember::tanh(ember::add(block(gi, 2, hs), ember::mul(r, hn)));
          const Tensor d_npre =
              ember::mul(ember::mul(g[0], one_minus(z)), one_minus(ember::mul(nn, nn)));
          const Tensor d_zpre =
              ember::mul(ember::mul(g[0], ember::sub(h, nn)), ember::mul(z, one_minus(z)));
          const Tensor d_rpre = ember::mul(ember::mul(d_npre, hn), ember::mul(r, one_minus(r)));
          dgi = ember::cat({d_rpre, d_zpre, d_npre}, 1);
          dgh = ember::cat({d_rpre, d_zpre, ember::mul(d_npre, r)}, 1);
          dhx = ember::mul(g[0], z);
        }
        variable_list r(6);
        product_grads(n, r, 0, 2, 4, dgi, x, wi);
        product_grads(n, r, 1, 3, 5, dgh, h, wh);
        if (n.should_compute_output(1)) add_into(r[1], dhx);
        return r;
      });
  Tensor hy, workspace;
  {
    autograd::NoGradGuard no_grad;
    std::tie(hy, workspace) = native::gru_cell_forward(input, hx, w_ih, w_hh, b_ih, b_hh);
  }
  for (const Tensor* t : {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh}) node->save(*t);
  node->save(workspace);
  autograd::set_history_all(node, {hy});
  return hy;
}

// Saved: input, hx, w_ih, w_hh, b_ih, b_hh, hy.
Tensor rnn_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, bool relu) {
  auto node = autograd::new_node(
      relu ? "RnnReluCellBackward0" : "RnnTanhCellBackward0", {input, hx, w_ih, w_hh, b_ih, b_hh},
      [relu](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0), h = n.saved(1), wi = n.saved(2), wh = n.saved(3),
                     bi = n.saved(4), bh = n.saved(5);
        Tensor d;
        if (!GradMode::is_enabled()) {
          d = ember::rnn_cell_pointwise_backward(g[0], n.saved(6), relu);
        } else {
          const Tensor pre = ember::add(affine(x, wi, bi), affine(h, wh, bh));
          if (relu) {
            d = ember::mul(g[0], ember::gt(pre, num(0)));
          } else {
            const Tensor y = ember::tanh(pre);
            d = ember::mul(g[0], one_minus(ember::mul(y, y)));
          }
        }
        variable_list r(6);
        product_grads(n, r, 0, 2, 4, d, x, wi);
        product_grads(n, r, 1, 3, 5, d, h, wh);
        return r;
      });
  Tensor hy;
  {
    autograd::NoGradGuard no_grad;
    hy = native::rnn_cell_forward(input, hx, w_ih, w_hh, b_ih, b_hh, relu);
  }
  for (const Tensor* t : {&input, &hx, &w_ih, &w_hh, &b_ih, &b_hh}) node->save(*t);
  node->save(hy, /*is_output=*/true);
  autograd::set_history_all(node, {hy});
  return hy;
}

}  // namespace derivatives
}  // namespace ember
