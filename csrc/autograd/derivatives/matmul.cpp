// Derivatives of the matrix products: mm, bmm, mv, dot, vdot, the add-products (addmm, addmv,
// addbmm, baddbmm, with beta/alpha and in-place forms) and matmul as PyTorch's composite. Each
// gradient is one product with the other operand's conjugate transpose (grad @ b^H, a^H @ grad),
// computed by the public product ops.
#include "autograd/derivatives/matmul.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/matmul.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/record.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

bool is_one(const Scalar& s) {
  return s.to_complex() == std::complex<double>(1.0, 0.0);
}

// grad * conj(s): the gradient through a multiplication by the scalar s.
Tensor scaled(const Tensor& g, const Scalar& s) {
  if (is_one(s)) return g;
  const Scalar c = s.is_complex() ? Scalar(std::conj(s.to_complex())) : s;
  return ember::mul(g, wrap_scalar(c));
}

// The conjugate transpose of the last two dims.
Tensor adj(const Tensor& t) {
  return ember::conj(ember::transpose(t, -2, -1));
}

// For in-place forms, an input the formula needs may be the output the op overwrites.
Tensor original(const Tensor& t, const Tensor& out) {
  return out.defined() && out.is_same(t) ? ember::clone(t) : t;
}

// The node of a product of two operands: save each operand only when the other's gradient
// needs it.
template <typename Formula>
std::shared_ptr<FunctionNode> product_node(const char* name, const Tensor& a, const Tensor& b,
                                           Formula formula) {
  auto node = autograd::new_node(name, {a, b}, formula);
  node->save(node->should_compute_output(1) ? a : Tensor());
  node->save(node->should_compute_output(0) ? b : Tensor());
  return node;
}

// Forward AD of a bilinear product p(a, b): p(da, b) + p(a, db). Each operand is saved when
// the other carries a tangent (product_node), so the formula reads only what it needs.
template <typename Product>
void set_bilinear_jvp(FunctionNode& node, Product product) {
  if (!node.has_forward()) return;
  node.set_jvp([product](FunctionNode& n, const variable_list& t) -> variable_list {
    Tensor r;
    if (t[0].defined()) r = product(t[0], n.saved(1));
    if (t[1].defined()) r = jvp::add(r, product(n.saved(0), t[1]));
    return {r};
  });
}

}  // namespace

void refuse_out(const Tensor& out, const Tensor& a, const Tensor& b, const char* op) {
  if (out.defined()) autograd::check_out_arg(out, {a, b}, op);
}

Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  refuse_out(out, a, b, "mm");
  auto node = product_node("MmBackward0", a, b, [](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = ember::mm(g[0], adj(n.saved(1)));
    if (n.should_compute_output(1)) r[1] = ember::mm(adj(n.saved(0)), g[0]);
    return r;
  });
  set_bilinear_jvp(*node, [](const Tensor& x, const Tensor& y) { return ember::mm(x, y); });
  return autograd::record(node, {a, b}, Tensor(), "mm", [&] { return native::mm(a, b); });
}

Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out) {
  refuse_out(out, a, b, "bmm");
  auto node = product_node("BmmBackward0", a, b, [](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = ember::bmm(g[0], adj(n.saved(1)));
    if (n.should_compute_output(1)) r[1] = ember::bmm(adj(n.saved(0)), g[0]);
    return r;
  });
  set_bilinear_jvp(*node, [](const Tensor& x, const Tensor& y) { return ember::bmm(x, y); });
  return autograd::record(node, {a, b}, Tensor(), "bmm", [&] { return native::bmm(a, b); });
}

Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out) {
  refuse_out(out, mat, vec, "mv");
  auto node = product_node("MvBackward0", mat, vec, [](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) {
      r[0] = ember::mul(ember::unsqueeze(g[0], 1), ember::conj(n.saved(1)));
    }
    if (n.should_compute_output(1)) r[1] = ember::mv(adj(n.saved(0)), g[0]);
    return r;
  });
  set_bilinear_jvp(*node, [](const Tensor& x, const Tensor& y) { return ember::mv(x, y); });
  return autograd::record(node, {mat, vec}, Tensor(), "mv", [&] { return native::mv(mat, vec); });
}

Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out) {
  refuse_out(out, a, b, "dot");
  auto node = product_node("DotBackward0", a, b, [](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = ember::mul(g[0], ember::conj(n.saved(1)));
    if (n.should_compute_output(1)) r[1] = ember::mul(g[0], ember::conj(n.saved(0)));
    return r;
  });
  set_bilinear_jvp(*node, [](const Tensor& x, const Tensor& y) { return ember::dot(x, y); });
  return autograd::record(node, {a, b}, Tensor(), "dot", [&] { return native::dot(a, b); });
}

Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out) {
  // vdot(a, b) = sum(conj(a) * b): PyTorch's formulas grad.conj() * b and grad * a.
  refuse_out(out, a, b, "vdot");
  auto node = product_node("VdotBackward0", a, b, [](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = ember::mul(ember::conj(g[0]), n.saved(1));
    if (n.should_compute_output(1)) r[1] = ember::mul(g[0], n.saved(0));
    return r;
  });
  set_bilinear_jvp(*node, [](const Tensor& x, const Tensor& y) { return ember::vdot(x, y); });
  return autograd::record(node, {a, b}, Tensor(), "vdot", [&] { return native::vdot(a, b); });
}

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  refuse_out(out, a, b, "matmul");
  const int64_t da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return ember::dot(a, b);
  if (da == 2 && db == 1) return ember::mv(a, b);
  if (da == 1 && db == 2) return ember::squeeze(ember::mm(ember::unsqueeze(a, 0), b), {0});
  if (da == 2 && db == 2) return ember::mm(a, b);
  const int64_t n = da > 1 ? a.size(da - 2) : 1, k1 = a.size(da - 1);
  const int64_t k2 = db > 1 ? b.size(db - 2) : b.size(0), p = db > 1 ? b.size(db - 1) : 1;
  EMBER_CHECK(k1 == k2, "[matmul] mat1 and mat2 shapes cannot be multiplied (", n, "x", k1, " and ",
              k2, "x", p, ")");
  if (da >= 3 && db <= 2) {
    // a's batch dims fold into its rows: one mm / mv instead of a batch of small products.
    DimVector shape(a.sizes());
    shape.pop_back();
    int64_t rows = 1;
    for (int64_t s : shape) rows *= s;
    Tensor a2 = ember::reshape(a, {rows, k1});
    Tensor r = db == 1 ? ember::mv(a2, b) : ember::mm(a2, b);
    if (db == 2) shape.push_back(p);
    return ember::view(r, shape);
  }
  // Broadcast batch dims, merged into one for bmm; a 1-D operand is a 1-row / 1-column matrix.
  DimVector batch_a, batch_b;
  for (int64_t d = 0; d + 2 < da; ++d) batch_a.push_back(a.size(d));
  for (int64_t d = 0; d + 2 < db; ++d) batch_b.push_back(b.size(d));
  const DimVector batch = broadcast_shapes(batch_a, batch_b, "matmul");
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  DimVector ashape(batch), bshape(batch), rshape(batch);
  ashape.push_back(n);
  ashape.push_back(k1);
  bshape.push_back(k2);
  bshape.push_back(p);
  if (da > 1) rshape.push_back(n);
  if (db > 1) rshape.push_back(p);
  Tensor a3 =
      ember::reshape(ember::expand(da == 1 ? ember::unsqueeze(a, 0) : a, ashape), {nb, n, k1});
  Tensor b3 =
      ember::reshape(ember::expand(db == 1 ? ember::unsqueeze(b, 1) : b, bshape), {nb, k2, p});
  return ember::view(ember::bmm(a3, b3), rshape);
}

// ---- beta * input + alpha * product -------------------------------------------------------

namespace {

// The node of an add-product: edges (input, x, y); x and y are saved (as copies when the
// in-place form overwrites them).
template <typename Formula>
std::shared_ptr<FunctionNode> add_product_node(const char* name, const Tensor& input,
                                               const Tensor& x, const Tensor& y, const Tensor& out,
                                               Formula formula) {
  auto node = autograd::new_node(name, {input, x, y}, formula);
  node->save(node->should_compute_output(2) ? original(x, out) : Tensor());
  node->save(node->should_compute_output(1) ? original(y, out) : Tensor());
  return node;
}

// Forward AD of beta * input + alpha * p(x, y): beta dinput + alpha (p(dx, y) + p(x, dy)), as
// PyTorch's (dinput * 0 when beta is 0).
template <typename Product>
void set_add_product_jvp(FunctionNode& node, const Scalar& beta, const Scalar& alpha,
                         Product product) {
  if (!node.has_forward()) return;
  node.set_jvp([beta, alpha, product](FunctionNode& n, const variable_list& t) -> variable_list {
    Tensor p;
    if (t[1].defined()) p = product(t[1], n.saved(1));
    if (t[2].defined()) p = jvp::add(p, product(n.saved(0), t[2]));
    return {jvp::add(jvp::scale(t[0], beta), jvp::scale(p, alpha))};
  });
}

}  // namespace

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  auto node = add_product_node("AddmmBackward0", input, m1, m2, out,
                               [beta, alpha](FunctionNode& n, const variable_list& g) {
                                 variable_list r(3);
                                 if (n.should_compute_output(0)) r[0] = scaled(g[0], beta);
                                 if (n.should_compute_output(1))
                                   r[1] = scaled(ember::mm(g[0], adj(n.saved(1))), alpha);
                                 if (n.should_compute_output(2))
                                   r[2] = scaled(ember::mm(adj(n.saved(0)), g[0]), alpha);
                                 return r;
                               });
  set_add_product_jvp(*node, beta, alpha,
                      [](const Tensor& x, const Tensor& y) { return ember::mm(x, y); });
  return autograd::record(node, {input, m1, m2}, out, "addmm",
                          [&] { return native::addmm(input, m1, m2, beta, alpha, out); });
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  auto node = add_product_node(
      "AddmvBackward0", input, mat, vec, out,
      [beta, alpha](FunctionNode& n, const variable_list& g) {
        variable_list r(3);
        if (n.should_compute_output(0)) r[0] = scaled(g[0], beta);
        if (n.should_compute_output(1)) {
          r[1] = scaled(ember::mul(ember::unsqueeze(g[0], 1), ember::conj(n.saved(1))), alpha);
        }
        if (n.should_compute_output(2)) r[2] = scaled(ember::mv(adj(n.saved(0)), g[0]), alpha);
        return r;
      });
  set_add_product_jvp(*node, beta, alpha,
                      [](const Tensor& x, const Tensor& y) { return ember::mv(x, y); });
  return autograd::record(node, {input, mat, vec}, out, "addmv",
                          [&] { return native::addmv(input, mat, vec, beta, alpha, out); });
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha, const Tensor& out) {
  const int64_t batch = b1.dim() > 0 ? b1.size(0) : 0;  // the forward checks b1 is 3-D
  auto node = add_product_node("AddbmmBackward0", input, b1, b2, out,
                               [beta, alpha, batch](FunctionNode& n, const variable_list& g) {
                                 variable_list r(3);
                                 if (n.should_compute_output(0)) r[0] = scaled(g[0], beta);
                                 // Every batch's product received the same gradient.
                                 const Tensor gb =
                                     ember::expand(ember::unsqueeze(g[0], 0),
                                                   {batch, g[0].size(0), g[0].size(1)});
                                 if (n.should_compute_output(1))
                                   r[1] = scaled(ember::bmm(gb, adj(n.saved(1))), alpha);
                                 if (n.should_compute_output(2))
                                   r[2] = scaled(ember::bmm(adj(n.saved(0)), gb), alpha);
                                 return r;
                               });
  set_add_product_jvp(*node, beta, alpha, [](const Tensor& x, const Tensor& y) {
    return ember::sum(ember::bmm(x, y), std::vector<int64_t>{0});
  });
  return autograd::record(node, {input, b1, b2}, out, "addbmm",
                          [&] { return native::addbmm(input, b1, b2, beta, alpha, out); });
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha, const Tensor& out) {
  auto node = add_product_node("BaddbmmBackward0", input, b1, b2, out,
                               [beta, alpha](FunctionNode& n, const variable_list& g) {
                                 variable_list r(3);
                                 if (n.should_compute_output(0)) r[0] = scaled(g[0], beta);
                                 if (n.should_compute_output(1))
                                   r[1] = scaled(ember::bmm(g[0], adj(n.saved(1))), alpha);
                                 if (n.should_compute_output(2))
                                   r[2] = scaled(ember::bmm(adj(n.saved(0)), g[0]), alpha);
                                 return r;
                               });
  set_add_product_jvp(*node, beta, alpha,
                      [](const Tensor& x, const Tensor& y) { return ember::bmm(x, y); });
  return autograd::record(node, {input, b1, b2}, out, "baddbmm",
                          [&] { return native::baddbmm(input, b1, b2, beta, alpha, out); });
}

}  // namespace derivatives
}  // namespace ember
