"""The real files of ``../shared/samples/containers``: each lists, and each stream in it
means what the same stream means bare. The bare bytes are cut out here by a reader of
the test's own (PyYAML, json, byte counts), the oracle chatx's readers are held to."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.containers.common import SAMPLES, chatx, same_meaning, skip_without_samples, write

pytestmark = skip_without_samples


def _ruby_loader() -> Any:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!binary", lambda loader, node: base64.b64decode(node.value))
    return Loader


def vcr(path: Path) -> list[tuple[bytes, Any]]:
    document = yaml.load(path.read_bytes(), Loader=_ruby_loader())  # noqa: S506 - safe loader
    out = []
    for item in document.get("interactions") or document["http_interactions"]:
        body = item["response"]["body"]["string"]
        request = item["request"]["body"]
        request = request["string"] if isinstance(request, dict) else request
        out.append((body if isinstance(body, bytes) else body.encode(), json.loads(request)))
    return out


def har(path: Path) -> list[tuple[bytes, Any]]:
    entries = json.loads(path.read_bytes())["log"]["entries"]
    return [
        (e["response"]["content"]["text"].encode(), json.loads(e["request"]["postData"]["text"]))
        if "event-stream" in e["response"]["content"]["mimeType"]
        else (b"", None)
        for e in entries
    ]


def recording(path: Path) -> list[tuple[bytes, Any]]:
    document = json.loads(path.read_bytes())
    frames = "".join(f"data: {json.dumps(c['__data__'])}\n\n" for c in document["response"]["body"])
    return [((frames + "data: [DONE]\n\n").encode(), document["request"]["body"])]


def httprr(path: Path) -> list[tuple[bytes, Any]]:
    data = path.read_bytes()
    at = data.index(b"\n") + 1
    out = []
    while at < len(data):
        end = data.index(b"\n", at)
        sizes = [int(n) for n in data[at:end].split()]
        request = data[end + 1 : end + 1 + sizes[0]]
        response = data[end + 1 + sizes[0] : end + 1 + sizes[0] + sizes[1]]
        body = re.split(rb"\r?\n\r?\n", request, maxsplit=1)[1]
        out.append((response.split(b"\r\n\r\n", 1)[1], json.loads(body)))
        at = end + 1 + sum(sizes)
    return out


def bare(path: Path) -> list[tuple[bytes, Any]]:
    return [(path.read_bytes(), None)]


# kind: (folder, oracle, streams each file lists, interactions each file holds)
KINDS = {
    "vcr": ("vcr", vcr),
    "har": ("har", har),
    "inline-snapshot": ("inline-snapshot", bare),
    "llama-stack-recording": ("llama-stack-recording", recording),
    "httprr": ("other", httprr),
}


def samples() -> list[Any]:
    if not SAMPLES.is_dir():
        return []
    return [
        pytest.param(kind, path, id=path.name[:40])
        for kind, (folder, _) in KINDS.items()
        for path in sorted((SAMPLES / folder).iterdir())
    ]


def test_every_sample_folder_is_covered() -> None:
    folders = {p.name for p in SAMPLES.iterdir() if p.is_dir()}
    assert folders == {folder for folder, _ in KINDS.values()}
    assert len(samples()) == 6


@pytest.mark.parametrize(("kind", "path"), samples())
def test_each_sample_lists_and_means_what_its_streams_mean_bare(
    kind: str, path: Path, tmp_path: Path
) -> None:
    listed = chatx("ls", "--output", "json", str(path))
    assert listed.code == 0, listed.err
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    expected = KINDS[kind][1](path)
    assert len(rows) == len(expected)
    streams = [row for row in rows if row["kind"] == "stream"]
    assert streams, rows
    for row in rows:
        body, request = expected[row["index"]]
        if row["kind"] != "stream":
            assert body == b""  # the oracle finds no stream there either
            continue
        plain = write(tmp_path, f"{row['index']}.bare", body)
        given = write(tmp_path, f"{row['index']}.json", request) if request else None
        address = row["address"] if kind != "inline-snapshot" else str(path)
        same_meaning(address, plain, given)
