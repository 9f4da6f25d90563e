"""The number format a MaskablePPO network trains in: bf16 where the CPU multiplies it natively.

A CPU with AMX tiles (Intel Sapphire Rapids and later) runs bfloat16
convolutions and matrix products about twice as fast as float32; elsewhere
bf16 is emulated and slower, so ``"auto"`` picks bf16 only where it is
native.  The network runs under ``torch.autocast`` (weights and their
gradients stay float32) and its outputs are cast back to float32 before the
distribution and the losses (:class:`agents.learned.sb3_models.PlanesPolicy`).
A saved model plays in float32, the same moves on every machine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

import torch

#: The accepted names: ``auto`` (bf16 where native), ``fp32``, ``bf16``.
PRECISIONS: Final = ("auto", "fp32", "bf16")


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 natively (AMX tiles), as torch reports it."""
    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    try:
        return bool(probe()) if probe is not None else False
    except RuntimeError:  # pragma: no cover - a torch that cannot tell
        return False


def uses_bf16(precision: str) -> bool:
    """Whether ``precision`` (one of :data:`PRECISIONS`) means bf16 on this machine."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    return precision == "bf16" or (precision == "auto" and native_bf16())


@contextlib.contextmanager
def bf16_autocast(bf16: bool) -> Iterator[None]:
    """Autocast to bf16 inside the block when ``bf16``; nothing otherwise."""
    if not bf16:
        yield
        return
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield
