"""ExponentialFamily: distributions of the form p(x) = h(x) exp(<t(x), theta> - F(theta)), whose
entropy follows from the log normaliser F by Bregman divergence (PyTorch's ExponentialFamily)."""

import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give `_natural_params`, `_log_normalizer(*natural_params)` and
    `_mean_carrier_measure` (E[log h(x)]); the entropy is then computed by autograd."""

    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__} does not define _natural_params")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not define _log_normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not define _mean_carrier_measure")

    def entropy(self):
        # H = F(theta) - <theta, grad F(theta)> - E[log h(x)].
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
