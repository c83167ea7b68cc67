"""The TCP proxy moved to :mod:`tools.tcpproxy` (the benchmark uses it too)."""

from __future__ import annotations

from tools.tcpproxy import TcpProxy

__all__ = ["TcpProxy"]
