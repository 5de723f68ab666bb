"""``torch.utils.model_zoo``: ``load_url`` is ``ember.hub.load_state_dict_from_url``."""

from ember.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
