"""Record and replay over HTTP: ``chatx capture``, ``chatx proxy`` and ``chatx serve``.

Everything here is imported by those three commands only: ``httpx2`` (the openai SDK's
transport) and ``uvicorn`` come with the ``serve`` extra, and ``convert`` never loads
them (tests/test_no_openai_import.py).

- :mod:`chatx.live.endpoints`: the APIs spoken, one line each (path, format, model field).
- :mod:`chatx.live.served_captures`: captures on disk, read once at start-up.
- :mod:`chatx.live.choose`: which capture answers a request.
- :mod:`chatx.live.replay`: a capture as the events (or final object) an API sends.
- :mod:`chatx.live.app`: ``serve``'s ASGI app; :mod:`chatx.live.proxy`: ``proxy``'s.
- :mod:`chatx.live.gateway`: ``proxy --upstream-api``, requests and answers translated
  between APIs, in steps: ``gateway_plan``, ``gateway_headers``, ``gateway_answer``,
  ``gateway_routes``; :mod:`chatx.live.renamed`: custom tools and tool sets put back as the
  client named them; :mod:`chatx.live.store`: the responses it keeps (SQLite).
- :mod:`chatx.live.recorded_files`: files a recording writes, and the secrets they leave out.
- :mod:`chatx.live.posting`: the ``capture`` client.
- :mod:`chatx.live.server`: uvicorn on a bound socket, shut down on Ctrl-C or SIGTERM.
- :mod:`chatx.live.errors`: OpenAI-shaped error bodies; :mod:`chatx.live.asgi`: the
  little of ASGI the apps use.
"""
