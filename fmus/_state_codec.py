"""Exact, pickle-free serialisation of an FMU's internal state (fmi2SerializeFMUstate).

The state is a tree of dicts, lists, numpy arrays and Python scalars. Arrays travel as their raw
bytes (base64) with dtype and shape, floats through ``repr`` (which round-trips every IEEE double,
NaN and inf included), ints of any size exactly (numpy's PCG64 state holds 128-bit integers). So
serialise -> deserialise gives back bit-identical numbers, and a state blob can never execute code
when loaded, unlike pickle.

The envelope carries the SHA-256 of the state's text: a byte changed after serialisation (a
garbled file, a flipped bit in a base64 array) gave another valid state, restored at fmi2OK with
numbers nobody saved; now it is refused. A blob without the digest (written before it existed)
is read as before.
"""
from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import numpy as np

FORMAT = "marine-cosim-fmu-state"
VERSION = 2   # 2: the state carries its own "version" (fmus._base.STATE_VERSION)


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        data = np.ascontiguousarray(obj)
        return {"__ndarray__": base64.b64encode(data.tobytes()).decode("ascii"),
                "dtype": data.dtype.str, "shape": list(data.shape)}
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, str):
                raise TypeError(f"state dict keys must be str, got {key!r}")
        return {"__dict__": {k: _encode(v) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return {"__float__": repr(float(obj))}
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot serialise a {type(obj).__name__} in an FMU state")


def _decode(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            raw = base64.b64decode(obj["__ndarray__"])
            return np.frombuffer(raw, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
        if "__float__" in obj:
            return float(obj["__float__"])
        return {k: _decode(v) for k, v in obj["__dict__"].items()}
    return obj


def to_bytes(state: dict, model_name: str) -> bytes:
    """Serialise ``state`` (see module docstring) tagged with the model it belongs to."""
    text = json.dumps(_encode(state), separators=(",", ":")).encode("utf-8")
    head = json.dumps({"format": FORMAT, "version": VERSION, "model": model_name,
                       "sha256": hashlib.sha256(text).hexdigest()}, separators=(",", ":")).encode("utf-8")
    # the same bytes as json.dumps of the envelope with "state" last: the state's text ends the blob
    return head[:-1] + _STATE_KEY + text + b"}"


_STATE_KEY = b',"state":'


def _intact(blob: bytes, digest) -> bool:
    """The state's text in ``blob`` (after the first ',"state":', to the closing brace) has the
    SHA-256 ``digest``: nothing was changed since :func:`to_bytes` (a blob re-written by a JSON
    tool, even with the same content, is not the bytes that were hashed and is refused too)."""
    blob = blob.rstrip()
    at = blob.find(_STATE_KEY)
    return isinstance(digest, str) and at >= 0 and blob.endswith(b"}") and \
        hashlib.sha256(blob[at + len(_STATE_KEY):-1]).hexdigest() == digest


def from_bytes(blob: bytes, model_name: str) -> dict:
    """Inverse of :func:`to_bytes`; raises ValueError if the blob is not a state of ``model_name``."""
    try:
        envelope = json.loads(bytes(blob).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a serialised {model_name} state: {exc}") from None
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        found = envelope.get("format") if isinstance(envelope, dict) else type(envelope).__name__
        raise ValueError(f"not a serialised marine-cosim FMU state (format {found!r})")
    if envelope.get("model") != model_name:
        raise ValueError(f"serialised state belongs to model {envelope.get('model')!r}, not {model_name!r}")
    if envelope.get("version") != VERSION:
        raise ValueError(f"serialised state version {envelope.get('version')} is not supported (expected {VERSION})")
    if "sha256" in envelope and not _intact(bytes(blob), envelope["sha256"]):
        raise ValueError(f"the serialised {model_name} state is not intact: its bytes do not have the SHA-256 "
                         "it was written with (changed after serialisation)")
    return _decode(envelope["state"])
