"""Property: a Gemini stream fed to the ``Transcoder`` in random pieces gives the same
bytes as the same stream fed whole, into every format.

Random streams: one or two candidates of text (unicode, empty pieces), thought parts,
signatures, whole calls with random arguments, a finish, usage on every chunk or on the
last only (the speed path takes runs of the chunks that repeat the same residue), a
grounding with spans in bytes on the last chunk; framed as SSE (LF or CRLF), one JSON
array (Google's ``\\n,\\r\\n`` between pretty objects) or JSON lines.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatx.pipeline import Transcoder
from tests.streams import convert

GEMINI = "gemini-event"
FORMATS = ["chat-chunk", "responses-event", "anthropic-event", "llama-stack-event", GEMINI]
SETTINGS = settings(
    max_examples=int(os.environ.get("CHATX_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

texts = st.text(max_size=8)
signatures = st.sampled_from(["c2lnbmF0dXJl", "dGhvdWdodA==", "AAECAw=="])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def parts(draw: st.DrawFn) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(["text", "text", "text", "thought", "call", "signed"]))
    if kind == "thought":
        return [{"text": draw(texts), "thought": True}]
    if kind == "call":
        name = draw(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True))
        args = draw(st.dictionaries(st.text(max_size=4), json_values, max_size=3))
        call: dict[str, Any] = {"name": name, "args": args}
        if draw(st.booleans()):
            call["id"] = draw(st.from_regex(r"[a-z0-9]{8}", fullmatch=True))
        part: dict[str, Any] = {"functionCall": call}
        if draw(st.booleans()):
            part["thoughtSignature"] = draw(signatures)
        return [part]
    if kind == "signed":
        return [{"text": draw(texts), "thoughtSignature": draw(signatures)}]
    return [{"text": draw(texts)}]


@st.composite
def gemini_stream(draw: st.DrawFn) -> list[dict[str, Any]]:
    lanes = draw(st.integers(1, 2))
    every = draw(st.booleans())  # usage on every chunk, or on the last only (runs)
    chunks: list[dict[str, Any]] = []
    answer = {lane: "" for lane in range(lanes)}
    for n in range(draw(st.integers(1, 12))):
        lane = draw(st.integers(0, lanes - 1))
        body = draw(parts())
        for part in body:
            if isinstance(part.get("text"), str) and not part.get("thought"):
                answer[lane] += part["text"]
        chunk: dict[str, Any] = {
            "candidates": [{"content": {"parts": body, "role": "model"}, "index": lane}],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "rP1",
        }
        if every:
            chunk["usageMetadata"] = {"promptTokenCount": 4, "totalTokenCount": 4 + n}
        chunks.append(chunk)
    finish = draw(st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY"]))
    last: dict[str, Any] = {
        "candidates": [
            {
                "content": {"parts": [{"text": ""}], "role": "model"},
                "finishReason": finish,
                "index": lane,
            }
            for lane in range(lanes)
        ],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6, "totalTokenCount": 10},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "rP1",
    }
    size = len(answer[0].encode())
    if size and draw(st.booleans()):
        end = draw(st.integers(1, size))
        quoted = answer[0].encode()[:end].decode("utf-8", "ignore")
        last["candidates"][0]["groundingMetadata"] = {
            "webSearchQueries": ["tides"],
            "groundingChunks": [{"web": {"uri": "https://tides.example.org/", "title": "Tides"}}],
            "groundingSupports": [
                {
                    "segment": {"endIndex": len(quoted.encode()), "text": quoted},
                    "groundingChunkIndices": [0],
                }
            ],
        }
    return [*chunks, last]


def frame(chunks: list[dict[str, Any]], how: str) -> bytes:
    if how == "array":
        body = "\n,\r\n".join(json.dumps(c, indent=2, ensure_ascii=False) for c in chunks)
        return ("[" + body + "\n]").encode()
    if how == "jsonl":
        return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks).encode()
    end = "\r\n\r\n" if how == "crlf" else "\n\n"
    return "".join(f"data: {json.dumps(c, ensure_ascii=False)}{end}" for c in chunks).encode()


@st.composite
def input_and_cuts(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    data = frame(draw(gemini_stream()), draw(st.sampled_from(["lf", "crlf", "array", "jsonl"])))
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=12)))
    return data, cuts


@SETTINGS
@given(input_and_cuts(), st.sampled_from(FORMATS))
def test_feeding_a_gemini_stream_in_pieces_gives_the_same_bytes(case, dst):
    data, cuts = case
    # Two candidates into a format of one choice: the first, as --choice 0 asks.
    choice = 0 if dst in ("responses-event", "anthropic-event", "llama-stack-event") else None
    whole, _ = convert(data, dst, GEMINI, choice=choice)
    transcoder = Transcoder(dst, src=GEMINI, choice=choice)
    bounds = [0, *cuts, len(data)]
    out = [transcoder.feed(data[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    out.append(transcoder.finish())
    assert b"".join(out) == whole
