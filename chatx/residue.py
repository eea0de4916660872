"""Residue: the fields of a source record the IR has no name for.

Decoders put them in ``extra``; an encoder of the same format merges them back into what
it builds (so A -> A reproduces the source's JSON values); an encoder of another format
calls :func:`report` so nothing is dropped without a word.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from chatx.notes import Notes

if TYPE_CHECKING:
    from chatx.ir import Passthrough


class _Absent:
    """Marks a key the source did not have but the canonical form does."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class NullResidue(dict[str, None]):
    """Residue that holds only nulls (``"logprobs": null, "finish_reason": null``).

    A decoder may share one such dict between records (it is never mutated); encoders of
    another format skip it by its type, since nulls are nothing to report."""

    __slots__ = ()


class Carried(dict[str, Any]):
    """Residue some of whose fields an IR event also says in its own words (a chat
    delta's ``reasoning_details``, whose signature closes the reasoning item; vLLM's
    ``stop_reason``, the Finish's stop sequence). The same format merges it back as it
    is; another reports, in place of each field of ``rest``, what ``rest`` holds for it:
    what no event says (``None`` when the events say it all)."""

    __slots__ = ("rest",)

    def __init__(self, fields: dict[str, Any] | None = None) -> None:
        super().__init__(fields or {})
        self.rest: dict[str, Any] = {}


def reported(extra: dict[str, Any]) -> dict[str, Any]:
    """What of ``extra`` a target of another format reports (see :class:`Carried`)."""
    if type(extra) is Carried:
        return {**extra, **extra.rest}
    return extra


def is_empty(value: Any) -> bool:
    """Empty values carry no content: ``None``, ``""``, ``[]``, ``{}``."""
    return value is None or value is ABSENT or value == "" or value == [] or value == {}


def copied(extra: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of residue that keeps the ABSENT marker itself (merge tests identity)."""
    return copy.deepcopy(extra, {id(ABSENT): ABSENT})


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Merge ``extra`` into ``base`` in place, recursing where both hold objects."""
    if type(extra) is NullResidue:  # nulls only: nothing to recurse into or remove
        base.update(extra)
        return base
    for key, value in extra.items():
        if not isinstance(value, dict):
            if value is ABSENT:
                base.pop(key, None)
            else:
                base[key] = value
            continue
        old = base.get(key)
        if value and isinstance(old, dict):
            merge(old, value)
        else:
            base[key] = value
    return base


def diff(source: dict[str, Any], canonical: dict[str, Any]) -> dict[str, Any]:
    """The patch that :func:`merge` applies to ``canonical`` to give back ``source``.
    Values compare as Python compares them (``1 == 1.0 == True``): see :func:`exact_diff`."""
    return _patch(source, canonical, False)


def same(one: Any, two: Any) -> bool:
    """JSON equality. Python's ``==`` takes ``1``, ``1.0`` and ``true`` for one value
    (and ``0``, ``0.0``, ``false``); JSON tells them apart, so this compares types too,
    all the way down."""
    kind = type(one)
    if kind is not type(two):
        return False
    if kind is dict:
        return one.keys() == two.keys() and all(same(v, two[k]) for k, v in one.items())
    if kind is list:
        return len(one) == len(two) and all(map(same, one, two))
    return bool(one == two)


def exact_diff(source: dict[str, Any], canonical: dict[str, Any]) -> dict[str, Any]:
    """:func:`diff` that keeps a value of another JSON type than the canonical one's
    (``"index": 1.0`` or ``true`` where the canonical record says ``1``): with it, a
    same-format conversion gives back the source's JSON values exactly."""
    return _patch(source, canonical, True)


def _patch(source: dict[str, Any], canonical: dict[str, Any], exact: bool) -> dict[str, Any]:
    """:func:`diff`'s patch; ``exact``: values compare as JSON (:func:`same`), and only
    plain objects are recursed into, as :func:`exact_diff` says."""
    patch: dict[str, Any] = {}
    for key, value in source.items():
        if key not in canonical:
            patch[key] = value
            continue
        old = canonical[key]
        if same(value, old) if exact else value == old:
            continue
        if value and old and _objects(value, old, exact):
            patch[key] = _patch(value, old, exact)
        else:
            patch[key] = value
    for key in canonical:
        if key not in source:
            patch[key] = ABSENT
    return patch


def _objects(value: Any, old: Any, exact: bool) -> bool:
    if exact:
        return type(value) is dict and type(old) is dict
    return isinstance(value, dict) and isinstance(old, dict)


def report(extra: dict[str, Any], notes: Notes, prefix: str = "") -> None:
    """Count every non-empty leaf of ``extra`` as a field the target cannot hold.

    Of a :class:`Carried` field, what no event says is counted. (A codec's own notes
    are no source fields: they ride in an event's ``own``, never in ``extra``.)"""
    notes.lost_fields.update(lost_paths(reported(extra), prefix))


def lost_paths(extra: dict[str, Any], prefix: str = "", out: list[str] | None = None) -> list[str]:
    """The dotted paths of the non-empty leaves of ``extra``, as :func:`report` counts them."""
    out = [] if out is None else out
    for key, value in extra.items():
        if value is None or value is ABSENT:
            continue
        kind = type(value)
        if kind is dict:
            if value:
                lost_paths(value, f"{prefix}{key}.", out)
        elif (kind is str or kind is list) and not value:
            continue
        else:
            out.append(prefix + key)
    return out


class MetaReport:
    """Reports the residue of ``Meta`` events as lost, working the paths out once per
    distinct event: a decoder shares one Meta between records that repeat the same
    fields (every chunk's ``service_tier``), and this runs once per record."""

    __slots__ = ("_last", "_paths", "notes")

    def __init__(self, notes: Notes) -> None:
        self.notes = notes
        self._last: Any = None
        self._paths: list[str] = []

    def __call__(self, meta: Any, records: int = 1) -> None:
        """Count ``meta``'s fields as lost, once for each of the ``records`` that had it."""
        if type(meta.extra) is NullResidue and not meta.delta:
            return  # nulls only: nothing to report, and the last event stays cached
        if meta is not self._last:
            self._last = meta
            self._paths = lost_paths(reported(meta.extra))
            if meta.delta:
                lost_paths(reported(meta.delta), "delta.", self._paths)
        if self._paths:
            lost = self.notes.lost_fields
            for path in self._paths:  # Counter.update costs more for a few paths
                lost[path] += records


def split(source: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """The part of ``source`` whose keys are not in ``known``."""
    return {k: v for k, v in source.items() if k not in known}


def set_or_drop(extra: dict[str, Any], key: str, rest: dict[str, Any]) -> None:
    """Keep what is left of a nested object as residue, or nothing when nothing is left."""
    if rest:
        extra[key] = rest
    else:
        extra.pop(key, None)


def passthrough_lost(event: Passthrough, notes: Notes, place: str, records: bool = True) -> None:
    """What another format's passthrough record loses in a format that has no place for it
    (``place``: ``"Gemini"``): an output item its source added is said once, where it is
    added (``event.item``); an annotation event as the annotations field; with
    ``records``, a record that is no typed event. An item's other events and lifecycle
    events say nothing more."""
    if event.item is not None:
        if event.item:
            notes.lost(f"{event.item} item has no place in {place}")
        return
    data = event.data if isinstance(event.data, dict) else {}
    what, item = data.get("type"), data.get("item")
    if isinstance(item, dict) and what == "response.output_item.added":
        notes.lost(f"{item.get('type')} item has no place in {place}")
    elif isinstance(what, str) and "annotation" in what:
        notes.lost_field("annotations")
    elif records and not isinstance(what, str):
        notes.lost(f"a {event.format} record has no place in {place}")
