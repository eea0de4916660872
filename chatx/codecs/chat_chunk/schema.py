"""``validate --schema`` for chat chunks: the openai SDK's ``ChatCompletionChunk``.

Imported only under ``--schema``; the SDK itself only when a payload is checked.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from chatx.codecs.chat_chunk.check import is_azure_preamble

if TYPE_CHECKING:
    from pydantic import TypeAdapter


@cache
def _chunk_adapter() -> TypeAdapter[Any]:
    from openai.types.chat import ChatCompletionChunk
    from pydantic import TypeAdapter

    return TypeAdapter(ChatCompletionChunk)


def schema(data: Any) -> tuple[TypeAdapter[Any], Any] | None:
    """The SDK type to check ``data`` with, and ``data``; None for a payload that is no
    chunk: Azure's prompt-filter preamble belongs to no completion (see CHK001), and an
    error frame is not a chunk at all (CHK017)."""
    if isinstance(data, dict) and (
        is_azure_preamble(data) or (data.get("error") and "choices" not in data)
    ):
        return None
    return _chunk_adapter(), data
