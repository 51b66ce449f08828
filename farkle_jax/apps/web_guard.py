"""What every request to a farkle_jax web app passes first (an ASGI
middleware shared by the two-player and the N-player explorer).

* The `Host` header must name the address the server was bound to (the
  loopback names when it listens on this machine only): a page of another
  site that resolves its own name to 127.0.0.1 (DNS rebinding) gets a 400.
* A POST must say `Content-Type: application/json` (else 415) and carry at
  most `MAX_BODY` bytes (else 413), counted as they arrive whatever its
  Content-Length says.
* An error the app did not foresee is a bug, not the client's fault: it is
  answered with a 500 and one generic line (`INTERNAL`: no exception text,
  no path), and its traceback goes to the server's log. The app's own
  refusals (`web_games.json_endpoint`) never reach this.

Every refusal is JSON, `{"error": one line}`, the router's own 404 and 405
included (`ERROR_HANDLERS`).
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

from absl import logging
from starlette.responses import JSONResponse

MAX_BODY = 16 * 1024   # bytes of a request body; a move needs < 100
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
INTERNAL = "internal error: please report it"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _TooLarge(Exception):
  """The body passed MAX_BODY while arriving."""


def one_line(e: BaseException) -> str:
  """The first line of an error's message (its type if it has none), for
  the `{"error": ...}` of an answer."""
  return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def allowed_hosts(bound: str) -> frozenset[str] | None:
  """The Host names a server bound to `bound` answers: the loopback names
  for a loopback address, that address for another, None (any) for the
  wildcard addresses, where the operator chose to serve every name."""
  if bound in LOOPBACK:
    return LOOPBACK
  if bound in ("0.0.0.0", "::", ""):
    return None
  return frozenset({bound.strip("[]")})


def _host_name(header: str) -> str:
  """'example.com:8000' -> 'example.com', '[::1]:80' -> '::1'."""
  if header.startswith("["):
    return header[1:].split("]", 1)[0]
  return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
  """ASGI middleware: the checks of the module doc around `app`."""

  def __init__(self, app, hosts: frozenset[str] | None = LOOPBACK,
               max_body: int = MAX_BODY):
    self.app, self.hosts, self.max_body = app, hosts, max_body

  async def __call__(self, scope: Scope, receive: Receive, send: Send):
    if scope["type"] != "http":
      return await self.app(scope, receive, send)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers", [])}
    refusal = self._refusal(scope, headers)
    if refusal is not None:
      return await _answer(send, *refusal)
    started, arrived = False, 0

    async def counted() -> dict[str, Any]:
      nonlocal arrived
      message = await receive()
      arrived += len(message.get("body", b""))
      if arrived > self.max_body:
        raise _TooLarge()
      return message

    async def tracked(message: dict[str, Any]) -> None:
      nonlocal started
      started = started or message["type"] == "http.response.start"
      await send(message)

    try:
      await self.app(scope, counted, tracked)
    except _TooLarge:
      if not started:
        await _answer(send, 413, f"the body is over {self.max_body} bytes")
    except Exception:  # a bug: its text may name paths, so only the log
      logging.error("request %s %s failed", scope.get("method"),
                    scope.get("path"), exc_info=True)
      if not started:
        await _answer(send, 500, INTERNAL)

  def _refusal(self, scope: Scope, headers: dict[str, str]
               ) -> tuple[int, str] | None:
    host = _host_name(headers.get("host", ""))
    if self.hosts is not None and host not in self.hosts:
      return 400, (f"Host {host!r} is not served here: use the address the "
                   "server printed")
    if scope.get("method") != "POST":
      return None
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
      return 415, "a POST body must be JSON (Content-Type: application/json)"
    length = headers.get("content-length", "0")
    if not length.isdigit() or int(length) > self.max_body:
      return 413, f"the body is over {self.max_body} bytes"
    return None


async def _answer(send: Send, status: int, error: str) -> None:
  body = json.dumps({"error": error}).encode()
  await send({"type": "http.response.start", "status": status,
              "headers": [(b"content-type", b"application/json"),
                          (b"content-length", str(len(body)).encode())]})
  await send({"type": "http.response.body", "body": body})


async def _router_error(request, exc) -> Any:
  return JSONResponse({"error": f"{exc.detail}: {request.method} "
                       f"{request.url.path[:100]}"},
                      status_code=exc.status_code)


# Starlette's `exception_handlers` for the routes no request matched.
ERROR_HANDLERS = {404: _router_error, 405: _router_error}
