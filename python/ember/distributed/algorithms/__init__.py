"""ember.distributed.algorithms: DDP communication hooks (``ddp_comm_hooks``) and ``Join``."""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
