"""The trainer's Ray backend refuses a dead ray.address as a config error, at once."""

from __future__ import annotations

import socket

import pytest

ray = pytest.importorskip("ray")

from train.config import ConfigError, RayConfig  # noqa: E402
from train.ray_backend import connect  # noqa: E402

pytestmark = pytest.mark.ray


def test_a_dead_address_is_a_config_error_naming_it() -> None:
    if ray.is_initialized():
        pytest.skip("a Ray connection is already open in this process")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConfigError, match=f"ray.address '127.0.0.1:{port}': cannot connect to Ray"):
        connect(RayConfig(address=f"127.0.0.1:{port}"))
    assert not ray.is_initialized()
