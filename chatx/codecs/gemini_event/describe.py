"""What ``show`` says of one Gemini chunk: its kinds (``text``, ``thought``,
``functionCall``, ``finish:STOP``, ``usage``, ``error``…) and a short preview; and of an
item the IR has no words for (a code part, a candidate's web search)."""

from __future__ import annotations

from typing import Any

_DATA = (
    "functionCall",
    "executableCode",
    "codeExecutionResult",
    "inlineData",
    "toolCall",
    "toolResponse",
)


def _candidates(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    candidates = data.get("candidates")
    if isinstance(candidates, list):
        return [c for c in candidates if isinstance(c, dict)]
    if any(k in data for k in ("promptFeedback", "usageMetadata")) and "type" not in data:
        return []
    return None


def _parts(candidate: dict[str, Any]) -> list[dict[str, Any]]:
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def kinds(data: dict[str, Any]) -> list[str] | None:
    if isinstance(data.get("error"), dict) and len(data) == 1 and "status" in data["error"]:
        return ["error"]
    candidates = _candidates(data)
    if candidates is None:
        return None
    out: list[str] = []
    for candidate in candidates:
        for part in _parts(candidate):
            if part.get("thought") is True:
                out.append("thought")
            elif part.get("text"):
                out.append("text")
            out += [key for key in _DATA if key in part]
            if "thoughtSignature" in part:
                out.append("thoughtSignature")
        if candidate.get("finishReason") is not None:
            out.append(f"finish:{candidate['finishReason']}")
    if isinstance(data.get("promptFeedback"), dict) and data["promptFeedback"].get("blockReason"):
        out.append("blocked")
    if "usageMetadata" in data:
        out.append("usage")
    return out or ["chunk"]


def preview(data: dict[str, Any]) -> str | None:
    if kinds(data) is None:
        return None
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "")[:80]
    texts = []
    for candidate in _candidates(data) or []:
        for part in _parts(candidate):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                texts.append(f"{part['functionCall'].get('name') or ''}(…)")
    return "".join(texts)[:80]


def item(data: dict[str, Any]) -> str:
    """A part the IR has no words for (``executableCode part``) or a web search and its
    queries, as the decoder passed them through."""
    part = data.get("part")
    if isinstance(part, dict):
        kind = next((k for k in part if k not in ("thought", "thoughtSignature")), "")
        return f"{kind} part"
    grounding = data.get("groundingMetadata")
    queries = grounding.get("webSearchQueries") if isinstance(grounding, dict) else None
    said = [q for q in queries if isinstance(q, str)] if isinstance(queries, list) else []
    return "web search: " + "; ".join(said) if said else "web search"
