"""Rules for OpenAI Responses API streaming events (``responses-event``).

Facts come from the openai-python ``ResponseStreamState`` accumulator, the Open Responses
OpenAPI document and the captures in ``../shared/captures``; DESIGN.md §5 lists them.
"""

from __future__ import annotations

from chatx.validation.rule import Rule

F = "responses-event"

RESPONSES_RULES = (
    Rule(
        "RSP001",
        "E",
        F,
        "stream does not start with response.created or response.queued",
        "A client builds its response snapshot from the first event (the openai SDK raises "
        "'Expected to have received response.created'). A resumed background stream may "
        "start with response.queued. A second response.created after a terminal event starts "
        "a new stream in the same file (fixtures often concatenate turns).",
        '{"type":"response.in_progress","sequence_number":0,"response":{...}}',
    ),
    Rule(
        "RSP002",
        "E",
        F,
        "lifecycle event carries a response in the wrong state",
        "response.created and response.queued announce a response that has produced nothing "
        "yet: its output is empty and its status is in_progress or queued. "
        "response.in_progress carries status in_progress.",
        '{"type":"response.created","sequence_number":0,\n'
        ' "response":{"id":"resp_1","status":"completed","output":[]}}',
    ),
    Rule(
        "RSP003",
        "W",
        F,
        "response.in_progress does not follow response.created",
        "Servers send response.in_progress right after response.created (after "
        "response.queued in background mode). Some clients wait for it to show progress; "
        "its absence is unusual but harmless.",
        '{"type":"response.created",...,"sequence_number":0}\n'
        '{"type":"response.output_item.added",...,"sequence_number":1}',
    ),
    Rule(
        "RSP004",
        "E",
        F,
        "event has no integer sequence_number",
        "Every Responses event carries an integer sequence_number (required by the Open "
        "Responses schema and the openai SDK types); clients use it to resume a stream and "
        "to detect lost events. Early-2025 OpenAI recordings have none; this is reported "
        "once per stream.",
        '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,\n'
        ' "content_index":0,"delta":"Hi"}',
    ),
    Rule(
        "RSP005",
        "E",
        F,
        "sequence_number does not increase by exactly 1",
        "Sequence numbers run without a gap or a repeat: a gap means events were lost (or a "
        "fixture was trimmed), a repeat means one was sent twice.",
        '{"type":"response.output_text.delta",...,"sequence_number":4}\n'
        '{"type":"response.output_text.delta",...,"sequence_number":6}',
    ),
    Rule(
        "RSP006",
        "W",
        F,
        "first sequence_number is not 0",
        "A stream starts at sequence_number 0. A background stream resumed with "
        "starting_after=N starts at N+1, which is legitimate but means the file is not a "
        "whole stream.",
        '{"type":"response.queued","sequence_number":1,"response":{...}}',
    ),
    Rule(
        "RSP007",
        "E",
        F,
        "stream ends without a terminal event",
        "Every stream ends with exactly one of response.completed, response.incomplete or "
        "response.failed. Without it a client never learns the final status or usage, and "
        "the openai SDK raises when the stream closes.",
        '{"type":"response.output_item.done",...,"sequence_number":7}\n(end of stream)',
    ),
    Rule(
        "RSP008",
        "E",
        F,
        "event after the terminal event",
        "Nothing follows response.completed, response.incomplete or response.failed but an "
        "optional `data: [DONE]` (or response.created, which starts another stream). A "
        "second terminal event or a late delta is ignored or misread by clients.",
        '{"type":"response.completed",...,"sequence_number":9}\n'
        '{"type":"response.output_text.delta",...,"sequence_number":10}',
    ),
    Rule(
        "RSP009",
        "E",
        F,
        "terminal event's response.status does not match its type",
        "response.completed carries status completed, response.incomplete status "
        "incomplete and response.failed status failed; clients branch on either one.",
        '{"type":"response.completed","response":{"status":"in_progress",...},...}',
    ),
    Rule(
        "RSP010",
        "E",
        F,
        "error event is not followed by response.failed",
        "An `error` event reports a failure mid-stream; the stream then closes with "
        "response.failed so that clients get the final response object.",
        '{"type":"error","code":"server_error","message":"boom","sequence_number":2}\n'
        '{"type":"response.completed",...,"sequence_number":3}',
    ),
    Rule(
        "RSP011",
        "E",
        F,
        "event names an item that was never added",
        "response.output_item.added comes before any event naming its output_index or "
        "item_id; the openai SDK raises 'Received a content event for output index N before "
        "receiving its output item'.",
        '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,...}\n'
        "(no response.output_item.added for output_index 0 before it)",
    ),
    Rule(
        "RSP012",
        "E",
        F,
        "new item does not take the next output_index",
        "Items are numbered 0, 1, 2… in the order they are added: output_index is the "
        "item's position in response.output.",
        '{"type":"response.output_item.added","output_index":1,...}  (first item)',
    ),
    Rule(
        "RSP013",
        "E",
        F,
        "two items share an output_index or an id",
        "Each item has its own output_index and its own id; a client keying items by "
        "either merges two items into one.",
        '{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1",...}}\n'
        '{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1",...}}',
    ),
    Rule(
        "RSP014",
        "E",
        F,
        "event's item_id differs from its item's id",
        "Every event of an item uses the id the item was added with; clients that look "
        "items up by item_id lose the text of an event with another id.",
        '{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1",...}}\n'
        '{"type":"response.output_text.delta","item_id":"msg_2","output_index":0,...}',
    ),
    Rule(
        "RSP015",
        "E",
        F,
        "item is never closed with response.output_item.done",
        "Every added item gets exactly one response.output_item.done before the terminal "
        "event; the openai SDK refuses to complete a response with unfinished items.",
        '{"type":"response.output_item.added","output_index":0,...}\n'
        '{"type":"response.completed",...}',
    ),
    Rule(
        "RSP016",
        "E",
        F,
        "item event after its response.output_item.done",
        "An item is final once response.output_item.done is sent: a second done or a late "
        "delta changes an item the client already handed on.",
        '{"type":"response.output_item.done","output_index":0,...}\n'
        '{"type":"response.output_text.delta","output_index":0,...}',
    ),
    Rule(
        "RSP017",
        "E",
        F,
        "content_index / summary_index is not the part's position",
        "content_part.added numbers an item's parts 0, 1, 2… in order (summary parts "
        "likewise with summary_index); the index is the part's position in item.content.",
        '{"type":"response.content_part.added","output_index":0,"content_index":1,...}\n'
        "(first part of the item)",
    ),
    Rule(
        "RSP018",
        "E",
        F,
        "event for a content part that is not open",
        "Deltas and done events of a part come after its content_part.added (or "
        "reasoning_summary_part.added) and before its part done event.",
        '{"type":"response.output_item.added","output_index":0,...}\n'
        '{"type":"response.output_text.delta","output_index":0,"content_index":0,...}',
    ),
    Rule(
        "RSP019",
        "E",
        F,
        "content part events out of order",
        "A part goes added → deltas → text done → part done, and every part is done before "
        "its item: output_text.delta* → output_text.done → content_part.done (likewise "
        "refusal.*, reasoning_text.*, and reasoning_summary_text.* inside "
        "reasoning_summary_part.*).",
        '{"type":"response.content_part.added",...}\n'
        '{"type":"response.output_text.delta",...}\n'
        '{"type":"response.content_part.done",...}   (no output_text.done)',
    ),
    Rule(
        "RSP020",
        "E",
        F,
        "function_call item added without name or call_id",
        "A function call is announced with its name and call_id in "
        "response.output_item.added, so that clients can show and route it before its "
        "arguments arrive; the call_id is what the tool result refers to.",
        '{"type":"response.output_item.added","output_index":0,\n'
        ' "item":{"type":"function_call","id":"fc_1","arguments":""},...}',
    ),
    Rule(
        "RSP021",
        "E",
        F,
        "arguments / tool input events out of order",
        "Arguments stream as function_call_arguments.delta* → function_call_arguments.done "
        "→ output_item.done (likewise the input of custom tools and MCP calls, and code "
        "interpreter code): nothing after the done, and a function call is not closed "
        "before its arguments are.",
        '{"type":"response.output_item.added","item":{"type":"function_call",...},...}\n'
        '{"type":"response.output_item.done",...}   (no function_call_arguments.done)',
    ),
    Rule(
        "RSP022",
        "E",
        F,
        "event does not fit the item or part it names",
        "Text deltas belong to output_text parts of message items, refusal deltas to "
        "refusal parts, reasoning text and summaries to reasoning items, argument deltas to "
        "function calls. The openai SDK asserts the item type when it accumulates.",
        '{"type":"response.output_item.added","item":{"type":"function_call",...},...}\n'
        '{"type":"response.output_text.delta","output_index":0,...}',
    ),
    Rule(
        "RSP023",
        "E",
        F,
        "done text differs from its deltas joined",
        "Every `.done` event repeats the whole text (or arguments) its deltas built: a "
        "client that shows deltas and one that reads the done event must see the same.",
        '{"type":"response.output_text.delta","delta":"Hel",...}\n'
        '{"type":"response.output_text.done","text":"Hello",...}',
    ),
    Rule(
        "RSP024",
        "W",
        F,
        "done event carries text that no delta streamed",
        "Some servers skip the deltas and send the whole text or arguments in the `.done` "
        "event only. Clients that render deltas show nothing until the item completes.",
        '{"type":"response.output_item.added","item":{"type":"function_call",...},...}\n'
        '{"type":"response.function_call_arguments.done","arguments":"{}",...}',
    ),
    Rule(
        "RSP025",
        "E",
        F,
        "part or item done event disagrees with the streamed text",
        "content_part.done repeats the part with its final text, and output_item.done the "
        "item with every part and its arguments; both must agree with what was streamed.",
        '{"type":"response.output_text.done","text":"Hello",...}\n'
        '{"type":"response.content_part.done","part":{"type":"output_text","text":"Bye"},...}',
    ),
    Rule(
        "RSP026",
        "E",
        F,
        "terminal response.output differs from the items closed",
        "The terminal event's response.output lists the items the stream closed, in "
        "order, as output_item.done sent them; clients that read only the final object "
        "must get the same answer as clients that followed the stream.",
        '{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1",...}}\n'
        '{"type":"response.completed","response":{"output":[],...}}',
    ),
    Rule(
        "RSP027",
        "E",
        F,
        "incomplete item is not the last, or the response is not incomplete",
        "An item closed with status incomplete (the model ran out of tokens) ends the "
        "output: nothing is added after it and the stream ends with response.incomplete.",
        '{"type":"response.output_item.done","item":{"status":"incomplete",...},...}\n'
        '{"type":"response.completed",...}',
    ),
    Rule(
        "RSP028",
        "E",
        F,
        "SSE event name differs from the JSON type",
        "On SSE, each block's `event:` line names the event and equals the JSON `type`; "
        "clients that dispatch on the event name misroute the payload otherwise.",
        'event: response.output_text.done\ndata: {"type":"response.output_text.delta",...}',
    ),
    Rule(
        "RSP029",
        "W",
        F,
        "unknown event type (extension)",
        "Types this version of chatx does not know: newer OpenAI events or vendor-prefixed "
        "extensions. Clients are expected to ignore them, so they are warnings.",
        '{"type":"acme.trace","sequence_number":3}',
    ),
    Rule(
        "RSP030",
        "E",
        F,
        "event is malformed (not an object, no type, or a required field missing)",
        "Each event is a JSON object with a string `type`, and the fields its type needs to "
        "be understood: output_index on item events, item on output_item.*, part on "
        "content_part.*, a string delta on deltas, response on lifecycle events.",
        '{"type":"response.output_text.delta","output_index":0,"content_index":0}',
    ),
    Rule(
        "RSP031",
        "E",
        F,
        "error event carries no error message",
        "An `error` event says what went wrong, in either shape seen in the wild: flat "
        "(`code`, `message` at top level, as documented) or nested (`error: {code, "
        "message}`, as OpenAI sends). Both are valid; one of them must be there.",
        '{"type":"error","sequence_number":2}',
    ),
    Rule(
        "RSP032",
        "E",
        F,
        "response id changes within a stream",
        "All lifecycle events of one stream describe the same response; the openai SDK "
        "raises 'Lifecycle response identity changed'. (A new response.created after a "
        "terminal event starts a new stream and is not affected.)",
        '{"type":"response.created","response":{"id":"resp_1",...},...}\n'
        '{"type":"response.in_progress","response":{"id":"resp_2",...},...}',
    ),
    Rule(
        "RSP100",
        "E",
        F,
        "event does not match the openai SDK type (--schema)",
        "Under --schema each event of a known type is validated against the openai SDK's "
        "pydantic model for that type (extra fields allowed). Each distinct problem is "
        "reported once per stream.",
        '{"type":"response.output_text.delta","item_id":"msg_1","output_index":"0",\n'
        ' "content_index":0,"delta":"Hi","sequence_number":3}',
        schema=True,
    ),
)
