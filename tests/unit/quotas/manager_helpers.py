"""A quota manager for the tests that need one."""

from __future__ import annotations

from reassignd.quotas.entities import ConfigKey
from reassignd.quotas.manager import QuotaManager


def manager(quotas: dict[ConfigKey, float], window_num: int = 10) -> QuotaManager:
    m = QuotaManager(window_num=window_num, window_size_s=1.0)
    m.set_quotas(quotas)
    return m
