"""The web app never loads a model file that can hold code (sb3:, rllib:, py:, engine:):
every route that takes a spec refuses them, before anything is built or imported."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_client import Client, serving

from agents.web import AppConfig, YinshServer


@pytest.fixture(scope="module")
def server() -> Iterator[YinshServer]:
    with serving(AppConfig(black="random")) as running:
        yield running


def _specs(tmp: Path) -> list[str]:
    return [
        f"sb3:path={tmp / 'model.zip'}",
        f"rllib:path={tmp}",
        f"net:path={tmp / 'model.pt'}",
        "py:os:system",
        "py:antigravity:x",
        f"py:./{tmp / 'mine.py'}:make",
        "engine:cmd=true",
        "ppo:path=x.pt",
    ]


def test_every_route_refuses_specs_that_load_files_or_run_code(
    server: YinshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    import agents.spec

    real = agents.spec.make_agent
    monkeypatch.setattr(
        agents.spec, "make_agent", lambda spec, *a, **k: built.append(spec) or real(spec, *a, **k)
    )
    client = Client(server)
    game = client.new(white="human", black="human")
    path = f"/api/games/{game['id']}"
    for spec in _specs(tmp_path):
        answers = [
            client.request("POST", "/api/games", {"white": spec})[0],
            client.request("POST", f"{path}/players", {"black": spec})[0],
            client.request("POST", f"{path}/analysis", {"spec": spec})[0],
            client.request("POST", f"{path}/review", {"spec": spec})[0],
        ]
        # 403: a known agent no client may have; 400: no agent a client can name (py:)
        assert answers == [400 if spec.startswith("py:") else 403] * 4, (spec, answers)
    assert "antigravity" not in sys.modules  # (importing it would open a browser)
    assert not [
        spec
        for spec in built
        if spec.split(":")[0] in ("sb3", "rllib", "net", "py", "engine", "ppo")
    ]
