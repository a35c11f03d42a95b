"""Hostile-request guards shared by the gateway's endpoints (the exchange and /agent/v1/*):
a body is refused by its `Content-Length` before a byte of it is read and capped while a
streamed (chunked) one is read, so an upload never grows the process past the limit; a JSON
body is parsed with bounds (nesting depth, integers within SQLite's 64-bit range, finite
numbers, strings that are valid Unicode) so no value can reach the engine that makes it
fail; and unknown routes, wrong methods and unexpected failures answer the same JSON error
body as every other refusal, {"error": {"code", "message"}}, never Starlette's plain text.
Starlette is imported inside the functions."""

from __future__ import annotations

import json
from typing import Any

from acomm_cli import jsondepth

DEFAULT_MAX_BODY = 1024 * 1024
MAX_DEPTH = jsondepth.MAX_DEPTH  # arrays and objects within one another
INT_MAX = 2**63 - 1  # SQLite's INTEGER
INT_MIN = -(2**63)


class _BodyTooLarge(Exception):
    """The request's body is (or says it is) larger than the endpoint takes."""


class _BadJson(ValueError):
    """Not JSON, or JSON outside the bounds above; the message says which."""


def declared_length(headers: Any) -> int | None:
    """The body's `Content-Length`, or None (chunked, or none given)."""
    raw = headers.get("content-length")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None  # h11 refuses a malformed one before the app sees it


async def read_capped(request: Any, cap: int) -> bytes:
    """The body, at most `cap` bytes: _BodyTooLarge as soon as the declared length or the
    bytes received so far pass it (the rest is never read; the server closes the
    connection after the answer)."""
    declared = declared_length(request.headers)
    if declared is not None and declared > cap:
        raise _BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def parse(raw: bytes) -> Any:
    """JSON within the bounds, or _BadJson naming the first bound passed."""
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise _BadJson(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError):
        raise _BadJson("the body is not valid JSON (UTF-8)") from None
    check(doc)
    return doc


def check(doc: Any) -> None:
    """Walk the document without recursion: depth, integers, floats and strings."""
    try:
        for value, key in jsondepth.walk(doc, MAX_DEPTH):
            if key is not None:
                _string(key)
            if isinstance(value, str):
                _string(value)
            elif isinstance(value, bool) or value is None:
                continue
            elif isinstance(value, int):
                if not INT_MIN <= value <= INT_MAX:
                    raise _BadJson("a number in the body is outside the 64-bit integer range")
            elif isinstance(value, float) and value - value != 0.0:  # inf, -inf, nan
                raise _BadJson("a number in the body is not finite")
    except jsondepth.TooDeep:
        raise _BadJson(f"the body nests deeper than {MAX_DEPTH} levels") from None


def _string(text: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, e.g. "\ud800"
        raise _BadJson("a string in the body is not valid Unicode (a lone surrogate)") from None


def error_response(status: int, code: str, message: str, headers: Any = None) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def exception_handlers() -> dict[Any, Any]:
    """Starlette handlers: 404 and 405 (and any HTTPException) as the JSON error body, and
    an unexpected exception in a handler as a JSON 500 (its traceback goes to the gateway's
    stderr, as uvicorn logs it, never into the answer)."""
    from starlette.exceptions import HTTPException

    codes = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}

    async def http_error(request: Any, exc: Any) -> Any:
        status = exc.status_code
        code = codes.get(status, "invalid_request" if status < 500 else "internal_error")
        if status == 404:
            message = f"no such endpoint: {request.url.path}"
        elif status == 405:
            message = f"{getattr(request, 'method', 'GET')} is not allowed on {request.url.path}"
        else:
            message = str(exc.detail)
        return error_response(status, code, message, getattr(exc, "headers", None))

    async def crash(request: Any, exc: Exception) -> Any:  # Starlette logs the traceback
        return error_response(500, "internal_error", "the gateway failed on this request")

    return {HTTPException: http_error, Exception: crash}


def h11_protocol() -> type:
    """uvicorn's HTTP/1.1 protocol, answering a request it cannot parse (a request line of
    garbage, a malformed or oversized header) with the JSON error body, 400 `invalid_request`,
    instead of its plain-text page; the connection is closed after it, as uvicorn does. Such
    a request never reaches the app, so no exception handler of the app can answer it."""
    import json

    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class JsonErrors(H11Protocol):
        def send_400_response(self, msg: str) -> None:
            body = json.dumps(
                {"error": {"code": "invalid_request", "message": "malformed HTTP request"}}
            ).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ]
            for event in (
                h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                h11.Data(data=body),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
            self.transport.close()

    return JsonErrors
