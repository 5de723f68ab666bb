// Public ops of ops/linalg_spectral.h that have no node of their own (the native functions).
#pragma once
#include "ops/linalg_spectral.h"

namespace ember {

namespace linalg {
using native::linalg::eigh;
using native::linalg::eigvalsh;
using native::linalg::eigh_unrecorded;
using native::linalg::eig;
using native::linalg::eigvals;
using native::linalg::eig_unrecorded;
using native::linalg::svd;
using native::linalg::svdvals;
using native::linalg::svd_unrecorded;
using native::linalg::qr;
using native::linalg::qr_unrecorded;
using native::linalg::compact_qr;
using native::linalg::householder_product;
using native::linalg::householder_product_unrecorded;
using native::linalg::LstsqResult;
using native::linalg::lstsq;
using native::linalg::lstsq_unrecorded;
using native::linalg::lstsq_vector_case;
using native::linalg::pinv;
using native::linalg::matrix_rank;
using native::linalg::NormOrd;
using native::linalg::matrix_norm;
using native::linalg::norm;
using native::linalg::cond;
using native::linalg::matrix_sqrth;
using native::linalg::matrix_sqrth_factors;
using native::linalg::matrix_sqrth_from_factors;
using native::linalg::polar;
using native::linalg::polar_factors;
}  // namespace linalg
using native::pinverse;
using native::geqrf;
using native::qr;
using native::svd;
using native::EighFn;
using native::EigFn;
using native::SvdFn;
using native::GeqrfFn;
using native::OrgqrFn;
using native::QrSmallFn;
using native::LstsqDriver;
using native::LstsqFn;

}  // namespace ember
