"""Refuse a pickle that names anything but an allowlist of harmless classes.

Unpickling calls whatever the pickle names (``os.system`` as readily as
``numpy.dtype``), so a saved policy can run its author's code in the process
that loads it.  Where a library insists on unpickling (RLlib's module
checkpoints: ``class_and_ctor_args.pkl``, ``module_state.pkl``),
:func:`check_pickles` first loads each pickle file with an unpickler that
resolves only the names in an allowlist and refuses the file at the first
other one.  A file that passes names only those, so the library's own
``pickle.load`` of the same bytes calls nothing else.
"""

from __future__ import annotations

import pickle
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Final

#: Pickle files looked at in one checkpoint at most.
MAX_FILES = 64
#: Largest pickle file checked (a policy's weights are a few MB).
MAX_BYTES = 1 << 30

#: What the example's RLlib module checkpoints name (numpy 1 and 2 spellings).
RLLIB_ALLOWED: Final = frozenset(
    {
        ("agents.learned.rllib_models", "MaskedPolicyModule"),
        ("gymnasium.spaces.box", "Box"),
        ("gymnasium.spaces.dict", "Dict"),
        ("gymnasium.spaces.discrete", "Discrete"),
        ("collections", "OrderedDict"),
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        ("numpy.random._pcg64", "PCG64"),
        ("numpy.random._pickle", "__bit_generator_ctor"),
        ("numpy.random._pickle", "__generator_ctor"),
        ("numpy.random._pickle", "__randomstate_ctor"),
        ("numpy.random.bit_generator", "SeedSequence"),
        ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
        *(
            (f"numpy.{core}.{module}", name)
            for core in ("core", "_core")
            for module, name in (
                ("multiarray", "scalar"),
                ("multiarray", "_reconstruct"),
                ("numeric", "_frombuffer"),
            )
        ),
    }
)


def check_pickles(
    folder: Path,
    allowed: Collection[tuple[str, str]],
    renamed: Mapping[str, str] | None = None,
    what: str = "checkpoint",
) -> None:
    """Raise ``ValueError`` naming the file and the name unless every ``*.pkl`` under
    ``folder`` names only ``allowed`` (``module``, ``name``) pairs.

    ``renamed`` maps old module paths to the new ones the allowlist uses
    (call it inside :func:`~agents.learned.renamed.old_module_names`).
    """
    files = sorted(folder.rglob("*.pkl"))
    if len(files) > MAX_FILES:
        raise ValueError(f"{what} {str(folder)!r} holds {len(files)} pickle files: refused")
    for file in files:
        _check(file, allowed, renamed or {}, what)


def _check(
    file: Path, allowed: Collection[tuple[str, str]], renamed: Mapping[str, str], what: str
) -> None:
    if not file.is_file() or file.stat().st_size > MAX_BYTES:
        raise ValueError(f"{what} file {str(file)!r} is not a regular file of a sane size")

    class Allowlisted(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if (renamed.get(module, module), name) not in allowed:
                raise _Refused(f"{module}.{name}"[:120])
            return super().find_class(module, name)

    try:
        with open(file, "rb") as handle:
            Allowlisted(handle).load()
    except _Refused as exc:
        raise ValueError(
            f"{what} file {str(file)!r} names {exc}, which a YINSH policy never holds: "
            "refused unread (unpickling it could run any code)"
        ) from None
    except Exception as exc:  # a damaged pickle: the library's own load fails the same way
        raise ValueError(
            f"cannot load {what} {str(file)!r}: not a readable pickle ({exc})"
        ) from None


class _Refused(Exception):
    pass
