"""Hand-made responses-event streams."""

from __future__ import annotations

from typing import Any

from tests.builders.chat_chunk import CREATED, MODEL
from tests.streams import payloads, sse

RESP_ID = "resp_T3st"


class ResponsesBuilder:
    """Writes a well-formed Responses event stream, the way the OpenAI server does."""

    def __init__(self, rid: str = RESP_ID, model: str = MODEL, created: int = CREATED) -> None:
        self.rid = rid
        self.events: list[dict[str, Any]] = []
        self.output: list[dict[str, Any]] = []
        self.response = {
            "id": rid,
            "object": "response",
            "created_at": created,
            "status": "in_progress",
            "background": False,
            "completed_at": None,
            "error": None,
            "frequency_penalty": 0.0,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": model,
            "output": [],
            "parallel_tool_calls": True,
            "presence_penalty": 0.0,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "reasoning": None,
            "safety_identifier": None,
            "service_tier": "default",
            "store": False,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "metadata": {},
        }
        self.emit("response.created", response=dict(self.response))
        self.emit("response.in_progress", response=dict(self.response))

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, **fields, "sequence_number": len(self.events)}
        self.events.append(event)
        return event

    def _index(self) -> int:
        return len(self.output)

    def message(
        self, *pieces: str, refusal: str | None = None, logprobs: list[list[Any]] | None = None
    ) -> ResponsesBuilder:
        index, iid = self._index(), f"msg_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={
                "id": iid,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            },
        )
        content = []
        if refusal is not None:
            part = {"type": "refusal", "refusal": ""}
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part=part,
            )
            self.emit(
                "response.refusal.delta",
                item_id=iid,
                output_index=index,
                content_index=0,
                delta=refusal,
            )
            self.emit(
                "response.refusal.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                refusal=refusal,
            )
            done = {"type": "refusal", "refusal": refusal}
        else:
            text = "".join(pieces)
            lps = [lp for entry in (logprobs or []) for lp in entry]
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
            )
            for number, piece in enumerate(pieces):
                self.emit(
                    "response.output_text.delta",
                    item_id=iid,
                    output_index=index,
                    content_index=0,
                    delta=piece,
                    logprobs=logprobs[number] if logprobs else [],
                )
            self.emit(
                "response.output_text.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                text=text,
                logprobs=lps,
            )
            done = {"type": "output_text", "annotations": [], "logprobs": lps, "text": text}
        self.emit(
            "response.content_part.done",
            item_id=iid,
            output_index=index,
            content_index=0,
            part=done,
        )
        content.append(done)
        item = {
            "id": iid,
            "type": "message",
            "status": "completed",
            "content": content,
            "role": "assistant",
        }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def reasoning(self, *pieces: str, family: str = "summary") -> ResponsesBuilder:
        index, iid = self._index(), f"rs_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={"id": iid, "type": "reasoning", "summary": []},
        )
        text = "".join(pieces)
        if family == "summary":
            self.emit(
                "response.reasoning_summary_part.added",
                item_id=iid,
                output_index=index,
                summary_index=0,
                part={"type": "summary_text", "text": ""},
            )
            for piece in pieces:
                self.emit(
                    "response.reasoning_summary_text.delta",
                    item_id=iid,
                    output_index=index,
                    summary_index=0,
                    delta=piece,
                )
            self.emit(
                "response.reasoning_summary_text.done",
                item_id=iid,
                output_index=index,
                summary_index=0,
                text=text,
            )
            self.emit(
                "response.reasoning_summary_part.done",
                item_id=iid,
                output_index=index,
                summary_index=0,
                part={"type": "summary_text", "text": text},
            )
            item = {
                "id": iid,
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": text}],
            }
        else:
            self.emit(
                "response.content_part.added",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "reasoning_text", "text": ""},
            )
            for piece in pieces:
                self.emit(
                    "response.reasoning_text.delta",
                    item_id=iid,
                    output_index=index,
                    content_index=0,
                    delta=piece,
                )
            self.emit(
                "response.reasoning_text.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                text=text,
            )
            self.emit(
                "response.content_part.done",
                item_id=iid,
                output_index=index,
                content_index=0,
                part={"type": "reasoning_text", "text": text},
            )
            item = {
                "id": iid,
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": text}],
            }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def call(self, name: str, call_id: str, *fragments: str) -> ResponsesBuilder:
        index, iid = self._index(), f"fc_{len(self.events)}"
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={
                "id": iid,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": call_id,
                "name": name,
            },
        )
        for fragment in fragments:
            self.emit(
                "response.function_call_arguments.delta",
                item_id=iid,
                output_index=index,
                delta=fragment,
            )
        arguments = "".join(fragments)
        self.emit(
            "response.function_call_arguments.done",
            item_id=iid,
            output_index=index,
            arguments=arguments,
            name=name,
        )
        item = {
            "id": iid,
            "type": "function_call",
            "status": "completed",
            "arguments": arguments,
            "call_id": call_id,
            "name": name,
        }
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return self

    def builtin(self, item: dict[str, Any], *progress: str) -> ResponsesBuilder:
        """A built-in tool item (web_search_call…), with its progress events."""
        index = self._index()
        self.emit(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress"}
        )
        for kind in progress:
            self.emit(kind, item_id=item["id"], output_index=index)
        done = {**item, "status": "completed"}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def annotated(self, *steps: tuple[str, Any], iid: str | None = None) -> ResponsesBuilder:
        """A message item whose ``steps`` are text deltas (``("text", piece)``) and
        annotations (``("annotation", {...})``), in the order they come."""
        index = self._index()
        iid = iid or f"msg_{len(self.events)}"
        head = {"item_id": iid, "output_index": index, "content_index": 0}
        item = {"id": iid, "type": "message", "status": "in_progress", "content": [],
                "role": "assistant"}  # fmt: skip
        self.emit("response.output_item.added", output_index=index, item=item)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        self.emit("response.content_part.added", **head, part=part)
        said, annotations = "", []
        for kind, value in steps:
            if kind == "text":
                said += value
                self.emit("response.output_text.delta", **head, delta=value, logprobs=[])
            else:
                self.emit("response.output_text.annotation.added", **head,
                          annotation_index=len(annotations), annotation=value)  # fmt: skip
                annotations.append(value)
        self.emit("response.output_text.done", **head, text=said, logprobs=[])
        part = {"type": "output_text", "annotations": annotations, "logprobs": [], "text": said}
        self.emit("response.content_part.done", **head, part=part)
        done = {**item, "status": "completed", "content": [part]}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def error(self, message: str, code: str = "server_error") -> ResponsesBuilder:
        self.emit("error", code=code, message=message, param=None)
        self.end("failed", error={"code": code, "message": message})
        return self

    def end(
        self,
        status: str = "completed",
        *,
        usage: dict[str, Any] | None = None,
        reason: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> ResponsesBuilder:
        response = dict(self.response, status=status, output=list(self.output))
        if reason is not None:
            response["incomplete_details"] = {"reason": reason}
        if error is not None:
            response["error"] = error
        if usage is not None:
            response["usage"] = usage
        self.emit(f"response.{status}", response=response)
        return self

    def bytes(self, *, events: bool = True) -> bytes:
        return sse(self.events, done=False, events=events)


def url_citation(start: int, end: int, page: str = "https://a.example/") -> dict[str, Any]:
    """A Responses url_citation annotation of characters ``start``..``end``."""
    return {"type": "url_citation", "start_index": start, "end_index": end, "title": "A",
            "url": page}  # fmt: skip


def responses_usage(
    inp: int = 11, out: int = 7, total: int = 18, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": total,
    }


def responses_streams(data: bytes) -> list[list[dict[str, Any]]]:
    """chatx's Responses output split at ``response.created``."""
    streams: list[list[dict[str, Any]]] = []
    for payload in payloads(data):
        if payload.get("type") == "response.created" or not streams:
            streams.append([])
        streams[-1].append(payload)
    return streams
