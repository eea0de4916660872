"""The files a recording leaves: the body as it arrived, and its request beside it.

``NAME`` holds the response body byte for byte; ``NAME.request.json`` the request body
with every credential left out (:func:`scrub`; headers are never written). While the body
arrives it goes to ``NAME.part``, flushed after every read; only a body that ended as
HTTP ends one is renamed to ``NAME``. One that did not (Ctrl-C, a dropped connection, a
read timeout) stays ``NAME.part``, with ``NAME.part.request.json`` beside it: no file
that a directory walk reads as a capture is ever incomplete.

``NAME.part`` is a name people know (they watch it grow, and look for it after an
interruption), so it stays predictable; what makes it safe is that it is created
exclusively (``O_EXCL | O_NOFOLLOW``): a symlink, a FIFO, a directory or another user's
file planted there makes the capture refuse, never write through it. Only an earlier
interrupted capture's ``NAME.part`` (a regular file of yours) is removed first. The
request file goes through an unpredictable temporary name (:mod:`chatx.atomic`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from chatx import atomic
from chatx.live.timing import Clock
from chatx.outdir.walking import REQUEST_SUFFIX

PART_SUFFIX = ".part"

# -- what is never written: credentials, by name and by shape -------------------------------
#
# A key is split into lower-case words (camelCase, -, _, . and spaces all separate), so
# that a rule names words, never a substring of them: "max_tokens" and "author" are data,
# "access_token" and "auth" are not. A key with no separator is one word, matched by its
# end ("xapikey", "clientsecret", "setcookie").

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A field with one of these words holds a credential, whatever else its name says.
_CREDENTIAL_WORDS = frozenset(
    {
        "apikey",
        "apikeys",
        "auth",
        "authentication",
        "authorization",
        "bearer",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        "jwt",
        "passphrase",
        "passwd",
        "password",
        "pwd",
        "secret",
        "secrets",
    }
)
# ... and a one-word key ending so.
_CREDENTIAL_ENDINGS = ("apikey", "secret", "password", "passwd", "cookie", "token", "authorization")
# "X_key" is a credential for these X (api_key, private_key, aws_secret_access_key's
# access_key, aws_access_key_id); prompt_cache_key, idempotency_key are not.
_KEY_KINDS = frozenset(
    {
        "access",
        "account",
        "api",
        "client",
        "encryption",
        "license",
        "master",
        "private",
        "service",
        "session",
        "signing",
        "subscription",
    }
)
# "X_token" is a credential (token, auth_token, hf_token, x-amz-security-token) except
# for these X, which name a token of a model's vocabulary.
_VOCABULARY = frozenset(
    {"bos", "cls", "end", "eos", "mask", "pad", "sep", "special", "start", "stop", "unk"}
)
# "X_tokens" is a count or a list of the vocabulary's tokens (max_tokens, input_tokens),
# except for these X.
_TOKENS_OF = frozenset({"access", "api", "auth", "bearer", "id", "refresh", "session"})
# Inside these lists, ``token`` is a sampled token's text (a Responses output_text's
# logprobs, given back as input), not a credential.
_LOGPROBS = frozenset({"logprobs", "top_logprobs"})


def words(key: str) -> list[str]:
    """``aws_secret_access_key`` / ``authToken`` / ``X-Api-Key`` -> its lower-case words."""
    return [w.lower() for w in _WORD.findall(key)]


def is_secret(key: str, *, vocabulary: bool = False) -> bool:
    """Whether a field named ``key`` holds a credential; ``vocabulary``: the field is in
    a logprobs entry, where ``token`` is the text of a token."""
    said = [word for word in words(key) if not word.isdigit()]  # token2, api_key_2
    if not said:  # "_", "-", "", "2"
        return False
    if len(said) == 1:
        (word,) = said
        if vocabulary and word == "token":
            return False
        return (
            word in _CREDENTIAL_WORDS
            or word.endswith(_CREDENTIAL_ENDINGS)
            or any(word.endswith(f"{kind}key") for kind in _KEY_KINDS)
        )
    if _CREDENTIAL_WORDS.intersection(said):
        return True
    return any(_credential_pair(before, word) for before, word in itertools.pairwise(said))


def _credential_pair(before: str, word: str) -> bool:
    """``access_token``, ``api_tokens``, ``private_key``: a credential wherever in a name
    (``access_token_v2``); ``eos_token``, ``max_tokens``, ``prompt_cache_key`` are not."""
    if word == "token":
        return before not in _VOCABULARY
    if word == "tokens":
        return before in _TOKENS_OF
    return word in ("key", "keys") and before in _KEY_KINDS


_SHAPES = re.compile(
    "|".join(
        (
            r"(?i:bearer|basic|token|digest)\s+(?P<credential>\S{8,})",  # an Authorization value
            r"sk-[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic (sk-ant-), OpenRouter (sk-or-)
            r"[spr]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"(?:AKIA|ASIA)[A-Z0-9]{16}",  # an AWS access key id
            r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",  # GitHub
            r"glpat-[A-Za-z0-9_-]{20,}",  # GitLab
            r"AIza[0-9A-Za-z_-]{35}",  # Google
            r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
            r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # a JWT
            r"[a-z][a-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]+@\S+",  # a URL with a password
        )
    )
)
# The value of "Basic understanding", "Token counting", "Bearer Responsibilities" is prose.
_A_WORD = re.compile(r"[A-Z]?[a-z]+[.,:;!?]?")
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")


def is_secret_value(value: str) -> bool:
    """Whether a string, as a whole, is a credential by its shape (``Bearer …``, ``sk-…``,
    ``AKIA…``, a JWT, a PEM private key…). A key quoted inside prose is the prompt's
    content, and kept."""
    if _PEM.search(value):
        return True
    found = _SHAPES.fullmatch(value.strip())
    if found is None:
        return False
    credential = found.group("credential")
    return credential is None or _A_WORD.fullmatch(credential) is None


def scrub(value: Any, *, vocabulary: bool = False, parameters: bool = False) -> Any:
    """``value`` without its credentials, at any depth, in lists too: the fields named
    like one (:func:`is_secret`), and the strings that are one by their shape
    (:func:`is_secret_value`), an element of a list included. An MCP tool's ``headers``
    and ``authorization`` in a Responses request go too.

    ``vocabulary``: inside logprobs, where ``token`` is a sampled token's text.
    ``parameters``: ``value`` is a JSON schema's ``properties``, whose keys name a tool's
    parameters (a ``password`` a tool takes): a key whose value is a schema (an object,
    scrubbed in turn) stays."""
    if isinstance(value, dict):
        return {
            key: scrub(
                item,
                vocabulary=vocabulary or (isinstance(key, str) and key in _LOGPROBS),
                parameters=key == "properties" and isinstance(item, dict),
            )
            for key, item in value.items()
            if not _dropped(key, item, vocabulary, parameters)
        }
    if isinstance(value, list):
        return [scrub(item, vocabulary=vocabulary) for item in value if not _dropped_value(item)]
    return value


def _dropped(key: Any, item: Any, vocabulary: bool, parameters: bool) -> bool:
    if not isinstance(key, str):
        return _dropped_value(item)
    if is_secret_value(key):
        return True
    if is_secret(key, vocabulary=vocabulary) and not (parameters and isinstance(item, dict)):
        return True
    return _dropped_value(item)


def _dropped_value(item: Any) -> bool:
    return isinstance(item, str) and is_secret_value(item)


# -- the files ------------------------------------------------------------------------------


def request_path(path: str | Path) -> Path:
    return Path(f"{path}{REQUEST_SUFFIX}")


def request_bytes(body: Any) -> bytes:
    """The request as written beside a capture: scrubbed, indented, one newline."""
    return orjson.dumps(scrub(body), option=orjson.OPT_INDENT_2) + b"\n"


def part_path(path: str | Path) -> Path:
    return Path(f"{path}{PART_SUFFIX}")


def in_the_way(path: str | Path) -> str | None:
    """What stands at ``path`` that a recording may not remove to create its part file
    there: None when nothing does, or an earlier interrupted recording's part file (a
    regular file of yours); else what it is, in words."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid():
        return None
    return atomic.what_is(info)


class Recording:
    """One body written as it arrives into ``path + ".part"``; :meth:`close` renames it
    to ``path`` when it is whole. ``request`` (a parsed JSON body, or None) is written
    beside whichever name the body ends under, and when each read arrived as
    ``NAME.timing`` (:mod:`chatx.live.timing`).

    ``exclusive`` (the proxy's names, new by construction): FileExistsError when anything
    is at the part file's name. Else (``capture -o``) an earlier interrupted capture's
    part file is removed first, and anything else there (:func:`in_the_way`) is an
    :class:`~chatx.atomic.PlacementError`.
    """

    def __init__(
        self, path: Path, request: Any, *, exclusive: bool = False, sent: float | None = None
    ) -> None:
        self.path = path
        self.part = part_path(path)
        self.request = request
        self.size = 0
        # Made once the answer's head arrived; ``sent`` (time.monotonic()) is when the
        # request went: the head's time, for serve to wait before it sends its own.
        self.clock = Clock(sent=sent)
        if not exclusive:
            _remove_earlier_part(self.part)
        try:
            fd = atomic.create(str(self.part))
        except FileExistsError:
            if exclusive:
                raise
            raise atomic.PlacementError(
                f"{self.part}: something was put there while chatx made room: not written"
            ) from None
        self.file: BinaryIO = os.fdopen(fd, "wb")

    def write(self, chunk: bytes) -> None:
        self.file.write(chunk)
        self.file.flush()
        self.size += len(chunk)
        self.clock.arrived(self.size)

    def close(self, whole: bool) -> Path:
        """Close; the path the body is left under."""
        ours = atomic.same_file(self.file.fileno(), str(self.part))
        self.file.close()
        if not ours:  # replaced behind chatx's back: what is there now is not moved
            raise atomic.PlacementError(f"{self.part}: replaced while it was written: left alone")
        final = self.path if whole else self.part
        if self.request is not None:
            atomic.replace_with(str(request_path(final)), request_bytes(self.request))
        if self.clock.arrivals:
            self.clock.write(final)
        if whole:
            os.replace(self.part, self.path)
        return final

    def discard(self) -> None:
        """Nothing worth keeping arrived (an error before the body, an empty body):
        leave no file."""
        ours = atomic.same_file(self.file.fileno(), str(self.part))
        self.file.close()
        if ours:
            self.part.unlink(missing_ok=True)


def _remove_earlier_part(part: Path) -> None:
    """Make room for a part file: remove an earlier interrupted recording's (and the
    request beside it); refuse what else is there."""
    what = in_the_way(part)
    if what is not None:
        raise atomic.PlacementError(
            f"{part}: {what} is there, which chatx did not leave: remove it or choose "
            "another -o (a capture writes what arrives there)"
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(part)
    beside = request_path(part)
    if in_the_way(beside) is None:  # else not ours: replaced by a rename should this one stop
        with contextlib.suppress(FileNotFoundError):
            os.unlink(beside)


# -- names of the proxy's recordings ---------------------------------------------------------

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(path: str) -> str:
    """``/v1/chat/completions`` -> ``chat-completions``."""
    words = _SLUG.sub("-", path.lower().removeprefix("/v1/")).strip("-")
    return words[:60].rstrip("-") or "root"


class Namer:
    """Names recordings by time and endpoint: ``20260101T120000_000001Z-0001-responses.sse``.

    The time (UTC, to the microsecond) sorts the names in the order the requests came;
    the counter keeps two in the same microsecond apart, and an existing name is never
    reused (the part file is created exclusively). The clock is read here only: what is
    recorded is the upstream's bytes, never anything chatx makes of them.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.counter = itertools.count(1)
        self.lock = threading.Lock()

    def open(self, route: str, suffix: str, request: Any, sent: float | None = None) -> Recording:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S_%fZ")
        while True:
            with self.lock:
                number = next(self.counter)
            path = self.folder / f"{stamp}-{number:04d}-{slug(route)}{suffix}"
            if os.path.lexists(path):
                continue
            try:
                return Recording(path, request, exclusive=True, sent=sent)
            except FileExistsError:
                continue
