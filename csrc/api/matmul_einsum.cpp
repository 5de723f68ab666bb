// einsum, a composite of public ops: parses the equation, takes diagonals for repeated
// subscripts, sums subscripts that appear in one operand only, then contracts operands pairwise
// with one batched GEMM per pair (permute + reshape to (batch, left, contracted) @ (batch,
// contracted, right)). Every step is a public op that records itself (views, sum, mul, bmm, a
// recorded diagonal), so einsum needs no derivative of its own. The pair to contract next is the
// one with the smallest result (greedy), which avoids the huge intermediates a fixed
// left-to-right order can create.
#include <algorithm>
#include <array>
#include <numeric>

#include "api/elementwise.h"
#include "api/matmul.h"
#include "api/reduce.h"
#include "api/shape_util.h"
#include "api/views.h"
#include "autograd/derivatives/join.h"
#include "core/shape.h"
#include "ops/matmul_common.h"

namespace ember {

namespace {

constexpr int kLetters = 52;  // 'A'-'Z' -> 0-25, 'a'-'z' -> 26-51 (ASCII order)
constexpr int kEllipsisBase = kLetters;

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
char char_of(int label) {
  return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26));
}

struct Term {
  std::vector<int> labels;  // -1 marks the ellipsis
  bool has_ellipsis = false;
};

// Parses "ab,b...c" style subscripts starting at `pos` of `eq` (up to `end`).
Term parse_term(const std::string& eq, size_t begin, size_t end, bool output) {
  Term t;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!t.has_ellipsis, "[einsum] einsum(): found more than one ellipsis ('...') in ",
                  output ? "the output" : "an operand");
      EMBER_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.',
                  "[einsum] einsum(): found '.' for operand that is not part of any ellipsis");
      t.has_ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
      continue;
    }
    const int l = label_of(c);
    EMBER_CHECK(l >= 0, "[einsum] einsum(): invalid subscript given at index ", i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    t.labels.push_back(l);
  }
  return t;
}

struct Operand {
  Tensor t;
  std::vector<int> labels;  // one per dim of t
};

int64_t prod_of(const std::vector<int>& labels, const std::vector<int64_t>& size) {
  int64_t p = 1;
  for (int l : labels) p *= size[l];
  return p;
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Sums the dims of `o` whose labels satisfy `drop`.
template <typename Pred>
void sum_labels(Operand& o, Pred drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < o.labels.size(); ++d) {
    if (drop(o.labels[d]))
      dims.push_back(static_cast<int64_t>(d));
    else
      kept.push_back(o.labels[d]);
  }
  if (dims.empty()) return;
  // sum()'s own dtype rule, as PyTorch's einsum: bool and integer sums count in int64.
  o.t = ember::sum(o.t, dims);
  o.labels = kept;
}

Operand contract_pair(Operand a, Operand b, const std::vector<int>& keep,
                      const std::vector<int64_t>& size) {
  auto kept = [&](int l) { return contains(keep, l); };
  // Labels found in only one of the pair and needed by nothing else are summed away first.
  sum_labels(a, [&](int l) { return !kept(l) && !contains(b.labels, l); });
  sum_labels(b, [&](int l) { return !kept(l) && !contains(a.labels, l); });
  // Shared labels of size 1 on one side broadcast: expand when kept; otherwise the size-1 side
  // is a constant factor, so sum the other side and drop the label from both.
  for (int l : std::vector<int>(a.labels)) {
    if (!contains(b.labels, l)) continue;
    auto da = std::find(a.labels.begin(), a.labels.end(), l) - a.labels.begin();
    auto db = std::find(b.labels.begin(), b.labels.end(), l) - b.labels.begin();
    const int64_t sa = a.t.size(da), sb = b.t.size(db);
    if (sa == sb) continue;
    Operand& one = sa == 1 ? a : b;
    Operand& many = sa == 1 ? b : a;
    const int64_t d1 = sa == 1 ? da : db;
    if (kept(l)) {
      DimVector shape(one.t.sizes());
      shape[d1] = std::max(sa, sb);
      one.t = ember::expand(one.t, shape);
    } else {
      one.t = ember::select(one.t, d1, 0);
      one.labels.erase(one.labels.begin() + d1);
      sum_labels(many, [&](int x) { return x == l; });
    }
  }
  std::vector<int> batch, left, contracted, right;
  for (int l : a.labels) {
    if (contains(b.labels, l))
      (kept(l) ? batch : contracted).push_back(l);
    else
      left.push_back(l);
  }
  for (int l : b.labels) {
    if (!contains(a.labels, l)) right.push_back(l);
  }
  auto dim_of = [](const Operand& o, int l) {
    return static_cast<int64_t>(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin());
  };
  DimVector pa, pb;
  for (int l : batch) pa.push_back(dim_of(a, l));
  for (int l : left) pa.push_back(dim_of(a, l));
  for (int l : contracted) pa.push_back(dim_of(a, l));
  for (int l : batch) pb.push_back(dim_of(b, l));
  for (int l : contracted) pb.push_back(dim_of(b, l));
  for (int l : right) pb.push_back(dim_of(b, l));
  // Sizes as the two operands now have them (a label may still be 1 here and broadcast later).
  std::vector<int64_t> local(size.size(), 1);
  for (const Operand* o : {&b, &a}) {
    for (size_t d = 0; d < o->labels.size(); ++d) local[o->labels[d]] = o->t.size(d);
  }
  const int64_t nb = prod_of(batch, local), nl = prod_of(left, local);
  const int64_t nc = prod_of(contracted, local), nr = prod_of(right, local);
  // An integer operand may have become int64 through a sum; both sides meet in the common
  // dtype (where PyTorch raises a dtype mismatch instead).
  const ScalarType dtype = promote_types(a.t.dtype(), b.t.dtype());
  Tensor a3 = ember::reshape(ember::permute(ember::to_dtype(a.t, dtype), pa), {nb, nl, nc});
  Tensor b3 = ember::reshape(ember::permute(ember::to_dtype(b.t, dtype), pb), {nb, nc, nr});
  Tensor r;
  if (contracted.empty()) {
    // No summation: an outer product per batch, done elementwise (this also serves bool).
    r = ember::mul(ember::view(a3, {nb, nl, 1}), ember::view(b3, {nb, 1, nr}));
  } else {
    native::check_matmul_dtype(dtype, "einsum");
    r = ember::bmm(a3, b3);
  }
  Operand out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), left.begin(), left.end());
  out.labels.insert(out.labels.end(), right.begin(), right.end());
  DimVector shape;
  for (int l : out.labels) shape.push_back(local[l]);
  out.t = ember::view(r, shape);
  return out;
}

}  // namespace

Tensor einsum(const std::string& eq, const std::vector<Tensor>& operands) {
  const char* op = "einsum";
  EMBER_CHECK(!operands.empty(), "[einsum] einsum(): must provide at least one operand");
  const size_t arrow = eq.find("->");
  const size_t lhs_end = arrow == std::string::npos ? eq.size() : arrow;
  // Operand terms.
  std::vector<Term> terms;
  size_t start = 0;
  while (true) {
    size_t comma = eq.find(',', start);
    if (comma == std::string::npos || comma > lhs_end) comma = lhs_end;
    terms.push_back(parse_term(eq, start, comma, false));
    if (comma == lhs_end) break;
    start = comma + 1;
  }
  EMBER_CHECK(terms.size() <= operands.size(),
              "[einsum] einsum(): fewer operands were provided "
              "than specified in the equation");
  EMBER_CHECK(terms.size() >= operands.size(),
              "[einsum] einsum(): more operands were provided "
              "than specified in the equation");
  for (const Tensor& t : operands) {
    EMBER_CHECK(t.dtype() == operands[0].dtype(), "[einsum] expected scalar type ",
                torch_type_name(operands[0].dtype()), " but found ", torch_type_name(t.dtype()));
  }
  // Ellipsis coverage per operand and overall.
  int64_t ell_max = 0;
  std::vector<int64_t> ell_dims(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t nlab = static_cast<int64_t>(terms[i].labels.size()) - terms[i].has_ellipsis;
    const int64_t nd = operands[i].dim();
    if (terms[i].has_ellipsis) {
      EMBER_CHECK(nlab <= nd, "[einsum] einsum(): the number of subscripts in the equation (", nlab,
                  ") is more than the number of dimensions (", nd, ") for operand ", i);
      ell_dims[i] = nd - nlab;
      ell_max = std::max(ell_max, ell_dims[i]);
    } else {
      EMBER_CHECK(nlab == nd, "[einsum] einsum(): the number of subscripts in the equation (", nlab,
                  ") does not match the number of dimensions (", nd, ") for operand ", i,
                  " and no ellipsis was given");
    }
  }
  const int num_labels = kEllipsisBase + static_cast<int>(ell_max);
  std::vector<int64_t> size(num_labels, -1);
  std::vector<int> occurrences(num_labels, 0);
  std::vector<Operand> ops(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand& o = ops[i];
    o.t = operands[i];
    for (int l : terms[i].labels) {
      if (l >= 0) {
        o.labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < ell_dims[i]; ++j) {
        o.labels.push_back(kEllipsisBase + static_cast<int>(ell_max - ell_dims[i] + j));
      }
    }
    for (int l : o.labels) ++occurrences[l];
    // Repeated subscripts within an operand select its diagonal.
    bool again = true;
    while (again) {
      again = false;
      for (size_t d1 = 0; d1 < o.labels.size() && !again; ++d1) {
        for (size_t d2 = d1 + 1; d2 < o.labels.size(); ++d2) {
          if (o.labels[d1] != o.labels[d2]) continue;
          EMBER_CHECK(o.t.size(d1) == o.t.size(d2), "[einsum] einsum(): subscript ",
                      char_of(o.labels[d1]), " is repeated for operand ", i,
                      " but the sizes don't match, ", o.t.size(d2), " != ", o.t.size(d1));
          const int l = o.labels[d1];
          o.t = derivatives::diagonal_recorded(o.t, 0, static_cast<int64_t>(d1),
                                               static_cast<int64_t>(d2));
          o.labels.erase(o.labels.begin() + d2);
          o.labels.erase(o.labels.begin() + d1);
          o.labels.push_back(l);
          again = true;
          break;
        }
      }
    }
    for (size_t d = 0; d < o.labels.size(); ++d) {
      const int l = o.labels[d];
      const int64_t s = o.t.size(d);
      if (size[l] == -1 || size[l] == 1) {
        size[l] = s;
      } else if (s != 1 && s != size[l]) {
        if (l >= kEllipsisBase) {
          EMBER_THROW(Error, "[einsum] einsum(): dimension ", l - kEllipsisBase,
                      " covered by "
                      "ellipsis in operand ",
                      i, "has size ", s,
                      " which does not broadcast "
                      "with previously seen ellipsis with size ",
                      size[l], " for the respective dimension");
        }
        EMBER_THROW(Error, "[einsum] einsum(): subscript ", char_of(l), " has size ", s,
                    " for operand ", i, " which does not broadcast with previously seen size ",
                    size[l]);
      }
    }
  }
  // Output subscripts.
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    Term out = parse_term(eq, arrow + 2, eq.size(), true);
    for (int l : out.labels) {
      if (l < 0) {
        for (int64_t j = 0; j < ell_max; ++j) out_labels.push_back(kEllipsisBase + int(j));
        continue;
      }
      EMBER_CHECK(occurrences[l] > 0, "[einsum] einsum(): output subscript ", char_of(l),
                  " does not appear in the equation for any input operand");
      EMBER_CHECK(!contains(out_labels, l), "[einsum] einsum(): output subscript ", char_of(l),
                  " appears more than once in the output");
      out_labels.push_back(l);
    }
  } else {
    for (int64_t j = 0; j < ell_max; ++j) out_labels.push_back(kEllipsisBase + int(j));
    for (int l = 0; l < kLetters; ++l) {
      if (occurrences[l] == 1) out_labels.push_back(l);
    }
  }
  // Contract.
  while (ops.size() > 1) {
    size_t best_i = 0, best_j = 1;
    double best_cost = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size(); ++j) {
        // Size of the pair's result: labels of either that are still needed elsewhere.
        double cost = 1;
        std::vector<int> seen;
        for (const auto* o : {&ops[i], &ops[j]}) {
          for (int l : o->labels) {
            if (contains(seen, l)) continue;
            seen.push_back(l);
            bool needed = contains(out_labels, l);
            for (size_t q = 0; q < ops.size() && !needed; ++q) {
              if (q != i && q != j) needed = contains(ops[q].labels, l);
            }
            if (needed) cost *= static_cast<double>(size[l]);
          }
        }
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best_i = i;
          best_j = j;
        }
      }
    }
    std::vector<int> keep = out_labels;
    for (size_t q = 0; q < ops.size(); ++q) {
      if (q == best_i || q == best_j) continue;
      keep.insert(keep.end(), ops[q].labels.begin(), ops[q].labels.end());
    }
    Operand r = contract_pair(ops[best_i], ops[best_j], keep, size);
    ops.erase(ops.begin() + best_j);
    ops[best_i] = std::move(r);
  }
  Operand& res = ops[0];
  sum_labels(res, [&](int l) { return !contains(out_labels, l); });
  DimVector perm;
  for (int l : out_labels) {
    perm.push_back(std::find(res.labels.begin(), res.labels.end(), l) - res.labels.begin());
  }
  (void)op;
  return ember::permute(res.t, perm);
}

}  // namespace ember
