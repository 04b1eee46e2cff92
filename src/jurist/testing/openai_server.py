"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol.

It lets tests, benchmarks and users exercise the whole LLM path (LiteLLM or DSPy's
client, retries, timeouts, the disk cache) with no provider and no API key. Replies come
from a *responder* (a fixed string, or a function of the request body); faults (HTTP
429 with ``Retry-After``, 500, a delay longer than the client's timeout, and the refusals
a real provider gives: 401 wrong key, 403 no permission, 404 unknown model, 429 quota used
up, a billing limit) can be queued and are served before normal replies, or set to answer
every request (:meth:`OpenAICompatibleServer.fail_always`); a responder may also return a
:class:`Fault` for the request it was given. The server counts every request it receives
(``requests``), every TCP connection it accepted (``connections``: a client whose TLS
handshake fails makes connections and no request) and every status it answered with
(``statuses``), notes when each request arrived and how many were in flight then
(``arrivals``, ``in_flight_at_arrival``, ``max_in_flight``), and totals the tokens it
reported (``prompt_tokens``, ``completion_tokens``). By default a reply's usage counts
characters / 4; with ``tokenizer="model"`` it counts tokens as an OpenAI-style
provider bills them (the model's tiktoken encoding and the chat framing,
:mod:`jurist.judges.tokens`). It keeps each request's headers and target
(``request_headers``, ``request_paths``), so a test can see what a client really sent.
:func:`closed_port_url` gives a base URL where nothing listens (connection refused).

With ``echo_authorization=True`` it behaves like a provider (or proxy) that leaks the API
key: every error body repeats the request's ``Authorization`` header, every reply carries
it in ``system_fingerprint``, and the placeholders :data:`AUTHORIZATION_PLACEHOLDER` and
:data:`API_KEY_PLACEHOLDER` in a reply's text are replaced with the header and the bare key
(used to test that jurist redacts the key from everything it writes).

Asked for log-probabilities (``"logprobs": true`` in the request), it answers with
OpenAI's ``choices[].logprobs.content[]`` (each token's ``token``, ``logprob``, ``bytes``
and its ``top_logprobs``, at most the request's ``top_logprobs`` of them). A responder that
returns a :class:`Reply` gives the tokens and their alternatives; a plain string is cut
into tokens at white space, each of probability 1 with no alternative but itself.
:meth:`Reply.choosing` builds a reply whose verdict token has given probabilities. With
``refuse_logprobs=True`` the server answers such a request as a provider whose model
returns none: HTTP 400 naming the parameter; with ``serve_logprobs=False``, as a provider
that ignores the parameter: a reply without them.

Run it on its own with ``python -m jurist.testing.openai_server --latency 0.1``: it
prints its base URL and serves until interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

AUTHORIZATION_PLACEHOLDER = "{{authorization}}"
"""In a reply of an ``echo_authorization`` server: replaced by the request's Authorization header."""
API_KEY_PLACEHOLDER = "{{api_key}}"
"""In a reply of an ``echo_authorization`` server: replaced by the key (the header after its scheme)."""
_TIMELINE = 100_000
"""Arrivals remembered (the latest ones)."""


@dataclass(frozen=True)
class Fault:
    """One injected failure: an HTTP status with a body and headers, served instead of a reply.

    Args:
        status: HTTP status code, e.g. 429 or 500.
        headers: Extra response headers, e.g. ``{"Retry-After": "1"}``.
        delay: Seconds to wait before answering (longer than the client timeout simulates a
            timeout; the server then answers normally-shaped but too late).
        error: The ``error`` object of the body (``message``, ``type``, ``code``), where it
            should not be the status's usual one (e.g. a 429 that says the quota is used up).
    """

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    error: dict[str, Any] | None = None

    @classmethod
    def rate_limit(cls, retry_after: float = 1.0) -> Fault:
        return cls(429, {"Retry-After": f"{retry_after:g}"})

    @classmethod
    def server_error(cls) -> Fault:
        return cls(500)

    @classmethod
    def slow(cls, delay: float) -> Fault:
        return cls(200, delay=delay)

    @classmethod
    def bad_request(cls) -> Fault:
        """HTTP 400, as a provider answers a request it cannot serve (not retried)."""
        return cls(400)

    @classmethod
    def unauthorized(cls) -> Fault:
        """HTTP 401, as a provider answers a wrong or revoked API key."""
        return cls(401)

    @classmethod
    def forbidden(cls) -> Fault:
        """HTTP 403, as a provider answers a key that may not use the model."""
        return cls(403)

    @classmethod
    def model_not_found(cls) -> Fault:
        """HTTP 404 with OpenAI's ``model_not_found`` error, as for a misspelt model name."""
        return cls(404)

    @classmethod
    def insufficient_quota(cls) -> Fault:
        """HTTP 429 with OpenAI's ``insufficient_quota`` error, as for an account whose credit or
        monthly quota is used up (the status of a rate limit, but waiting does not help)."""
        return cls(
            429,
            error={
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            },
        )

    @classmethod
    def billing_limit(cls, status: int = 400) -> Fault:
        """OpenAI's ``billing_hard_limit_reached`` error (the spending limit set on the account)."""
        return cls(
            status,
            error={
                "message": "Billing hard limit has been reached",
                "type": "invalid_request_error",
                "param": None,
                "code": "billing_hard_limit_reached",
            },
        )


@dataclass(frozen=True)
class Token:
    """One token of a :class:`Reply`: its text, its log-probability and the alternatives at
    its position (``(text, logprob)`` pairs, the most probable first, itself among them or not)."""

    text: str
    logprob: float = 0.0
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Reply:
    """A reply with its tokens (its text is theirs, joined)."""

    tokens: tuple[Token, ...]

    @property
    def text(self) -> str:
        return "".join(token.text for token in self.tokens)

    @classmethod
    def of(cls, text: str) -> Reply:
        """``text`` cut into tokens at white space, each of probability 1 and no other alternative."""
        pieces = re.findall(r"\s*\S+|\s+", text)
        return cls(tuple(Token(piece, 0.0, ((piece, 0.0),)) for piece in pieces))

    @classmethod
    def choosing(
        cls, before: str, probabilities: dict[str, float], after: str = "", *, chosen: str | None = None
    ) -> Reply:
        """``before + chosen + after``, where the token ``chosen`` (the most probable of
        ``probabilities`` unless given) has the alternatives ``probabilities`` (their natural
        logarithms as log-probabilities, the most probable first)."""
        ranked = sorted(probabilities.items(), key=lambda pair: -pair[1])
        pick = chosen if chosen is not None else ranked[0][0]
        top = tuple((text, math.log(p)) for text, p in ranked if p > 0)
        own = math.log(probabilities[pick]) if probabilities.get(pick) else -30.0
        return cls((*cls.of(before).tokens, Token(pick, own, top), *cls.of(after).tokens))


Responder = Callable[[dict[str, Any]], "str | Reply | Fault"]
"""The reply to a request body: the assistant's text, or a :class:`Fault` to answer with instead
(one with status 200 waits its delay, then answers "ok")."""

_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request", "The request cannot be served"),
    401: ("authentication_error", "invalid_api_key", "Incorrect API key provided"),
    403: ("permission_error", "permission_denied", "You are not allowed to use this model"),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access"),
    429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached"),
}


def _error_body(
    status: int, authorization: str | None = None, error: dict[str, Any] | None = None
) -> dict[str, Any]:
    error_type, code, text = _ERROR_TYPES.get(status, ("server_error", "server_error", "Server error"))
    body: dict[str, Any] = (
        dict(error)
        if error is not None
        else {"message": f"injected {status}: {text}", "type": error_type, "code": code}
    )
    if authorization is not None:
        body["message"] += f" (request Authorization: {authorization})"
        body["authorization"] = authorization
    return {"error": body}


def closed_port_url(host: str = "127.0.0.1") -> str:
    """An OpenAI-style base URL on ``host`` where nothing listens: connecting is refused.

    A port is bound to learn a free number, then closed again, so a client gets
    "connection refused" (another process could take the port meanwhile; on loopback in a
    test that is very unlikely).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    return f"http://{host}:{port}/v1"


def last_user_message(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request body."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content)
    return ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 drops connections when many clients connect at once.
    request_queue_size = 1024
    connections = 0
    """TCP connections accepted (counted by the one thread that accepts them)."""

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections += 1
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-reply (a judge that stopped its run) is not an error of
        the server; anything else is printed, as the standard library does."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class OpenAICompatibleServer:
    """A threaded loopback server; use as a context manager or call ``start``/``stop``.

    Args:
        responder: The assistant's reply, or a function from the request body to it.
        latency: Seconds each normal reply waits before it is sent (a fixed model latency).
        host: Loopback address to bind.
        port: Port to bind; 0 picks a free one.
        echo_authorization: Leak the request's Authorization header into every error body and
            reply (see the module docstring).
        tokenizer: ``None`` counts usage as characters / 4; ``"model"`` counts the tokens of
            each request's model as a provider does (:func:`jurist.judges.tokens.tokenizer_for`).
        refuse_logprobs: Answer a request that asks for log-probabilities with HTTP 400 naming
            the parameter, as a model that returns none does.
        serve_logprobs: ``False``: answer such a request without them, as a provider that
            ignores the parameter does.
    """

    def __init__(
        self,
        responder: Responder | str = "ok",
        *,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        echo_authorization: bool = False,
        tokenizer: Literal["model"] | None = None,
        refuse_logprobs: bool = False,
        serve_logprobs: bool = True,
    ) -> None:
        self.responder: Responder = (
            (lambda _body: responder) if isinstance(responder, str | Reply) else responder
        )
        self.refuse_logprobs = refuse_logprobs
        self.serve_logprobs = serve_logprobs
        self.latency = latency
        self.echo_authorization = echo_authorization
        self._faults: deque[Fault] = deque()
        self._always: Fault | None = None
        self._lock = threading.Lock()
        self.requests = 0
        """Chat-completion requests received (every one: answered, faulted or timed out)."""
        self.statuses: Counter[int] = Counter()
        """How many chat-completion requests were answered with each HTTP status."""
        self.bodies: deque[dict[str, Any]] = deque(maxlen=1000)
        self.request_headers: deque[dict[str, str]] = deque(maxlen=1000)
        """The headers of each chat-completion request (names in lower case; the latest 1,000), in order."""
        self.request_paths: deque[str] = deque(maxlen=1000)
        """The request target (path and query) of each chat-completion request, in order."""
        self.tokenizer = tokenizer
        self.arrivals: deque[float] = deque(maxlen=_TIMELINE)
        """``time.monotonic()`` at the arrival of each chat-completion request, in order."""
        self.in_flight_at_arrival: deque[int] = deque(maxlen=_TIMELINE)
        """For each arrival, the requests in flight then (itself included)."""
        self.in_flight = 0
        """Chat-completion requests being served now."""
        self.max_in_flight = 0
        """The most chat-completion requests ever in flight at once."""
        self.prompt_tokens = 0
        """Prompt tokens of every reply sent (as counted into its usage)."""
        self.completion_tokens = 0
        """Completion tokens of every reply sent (as counted into its usage)."""
        self._httpd = _Server((host, port), _handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ending in ``/v1``."""
        host, port = self._httpd.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else host
        return f"http://{host_text}:{port}/v1"

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each is served once, in order, before any normal reply."""
        with self._lock:
            self._faults.extend(faults)

    def fail_always(self, fault: Fault | None) -> None:
        """Serve ``fault`` for every request (after any queued ones) until called with ``None``."""
        with self._lock:
            self._always = fault

    @property
    def connections(self) -> int:
        """TCP connections accepted, whatever came over them: a client that fails its TLS
        handshake with this plain-HTTP server makes one each time it tries, and no request."""
        return self._httpd.connections

    def reset_count(self) -> None:
        """Set the counts (requests, connections, statuses, tokens, arrivals, the in-flight
        maximum) back to zero and forget the recorded bodies."""
        with self._lock:
            self.requests = 0
            self._httpd.connections = 0
            self.statuses.clear()
            self.bodies.clear()
            self.request_headers.clear()
            self.request_paths.clear()
            self.arrivals.clear()
            self.in_flight_at_arrival.clear()
            self.max_in_flight = self.in_flight
            self.prompt_tokens = self.completion_tokens = 0

    def _next_fault(
        self, body: dict[str, Any], headers: dict[str, str] | None = None, path: str = ""
    ) -> Fault | None:
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            self.request_headers.append({name.lower(): value for name, value in (headers or {}).items()})
            self.request_paths.append(path)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.arrivals.append(time.monotonic())
            self.in_flight_at_arrival.append(self.in_flight)
            return self._faults.popleft() if self._faults else self._always

    def _answered(self, status: int, usage: dict[str, int] | None = None) -> None:
        with self._lock:
            self.statuses[status] += 1
            self.in_flight -= 1
            if usage is not None:
                self.prompt_tokens += usage["prompt_tokens"]
                self.completion_tokens += usage["completion_tokens"]

    def _usage(self, body: dict[str, Any], content: str) -> dict[str, int]:
        if self.tokenizer == "model":
            from jurist.judges.tokens import tokenizer_for

            counter = tokenizer_for(str(body.get("model") or ""))
            prompt_tokens = counter.count_messages(body.get("messages") or [])
            completion_tokens = counter.encode(content)
        else:
            prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
            prompt_tokens = max(1, prompt_chars // 4)
            completion_tokens = max(1, len(content) // 4)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }

    def start(self) -> OpenAICompatibleServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _echoed(content: str, authorization: str) -> str:
    key = authorization.split(" ", 1)[1] if " " in authorization else authorization
    return content.replace(AUTHORIZATION_PLACEHOLDER, authorization).replace(API_KEY_PLACEHOLDER, key)


def _logprobs(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """OpenAI's ``logprobs`` of a chat completion choice, for a request that asked for them."""
    top = int(body.get("top_logprobs") or 0)

    def entry(text: str, logprob: float) -> dict[str, Any]:
        return {"token": text, "logprob": logprob, "bytes": list(text.encode())}

    return {
        "content": [
            {**entry(token.text, token.logprob), "top_logprobs": [entry(t, lp) for t, lp in token.top[:top]]}
            for token in reply.tokens
        ],
        "refusal": None,
    }


def _completion(
    body: dict[str, Any],
    content: str,
    usage: dict[str, int],
    reply: Reply | None = None,
    *,
    logprobs: bool = True,
) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": content},
    }
    if body.get("logprobs") and logprobs:
        choice["logprobs"] = _logprobs(body, reply if reply is not None else Reply.of(content))
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "unknown"),
        "choices": [choice],
        "usage": usage,
    }


def _handler_for(server: OpenAICompatibleServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms ACK wait

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence access logs
            return

        def _send(
            self,
            status: int,
            payload: dict[str, Any],
            headers: dict[str, str] | None = None,
            *,
            completion: bool = False,
        ) -> None:
            if completion:
                server._answered(status, payload.get("usage") if status == 200 else None)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            # A client that gave up (e.g. its timeout passed) has nobody left to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                return
            echo = str(self.headers.get("Authorization") or "") if server.echo_authorization else None
            fault = server._next_fault(body, dict(self.headers.items()), self.path)
            if fault is not None:
                if fault.delay:
                    time.sleep(fault.delay)
                if fault.status != 200:
                    self._send(
                        fault.status,
                        _error_body(fault.status, echo, fault.error),
                        fault.headers,
                        completion=True,
                    )
                    return
            elif server.latency:
                time.sleep(server.latency)
            if server.refuse_logprobs and body.get("logprobs"):
                refusal = {
                    "message": "This model does not support logprobs.",
                    "type": "invalid_request_error",
                    "param": "logprobs",
                    "code": "unsupported_parameter",
                }
                self._send(400, _error_body(400, echo, refusal), completion=True)
                return
            try:
                content = server.responder(body)
            except Exception as exc:  # a broken responder is a server error, visible to the client
                self._send(
                    500,
                    {"error": {"message": f"responder failed: {exc}", "type": "server_error"}},
                    completion=True,
                )
                return
            if isinstance(content, Fault):
                if content.delay:
                    time.sleep(content.delay)
                if content.status != 200:
                    self._send(
                        content.status,
                        _error_body(content.status, echo, content.error),
                        content.headers,
                        completion=True,
                    )
                    return
                content = "ok"
            tokens = content if isinstance(content, Reply) else None
            text = content.text if isinstance(content, Reply) else content
            text = text if echo is None else _echoed(text, echo)
            reply = _completion(body, text, server._usage(body, text), tokens, logprobs=server.serve_logprobs)
            if echo is not None:
                reply["system_fingerprint"] = f"fp-echo {echo}"
            self._send(200, reply, completion=True)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve OpenAI chat completions on loopback with a fixed reply."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--reply-file", help="file whose text is every reply (default: 'ok')")
    args = parser.parse_args(argv)
    reply = "ok"
    if args.reply_file:
        with open(args.reply_file, encoding="utf-8") as handle:
            reply = handle.read()
    server = OpenAICompatibleServer(reply, latency=args.latency, host=args.host, port=args.port)
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()


if __name__ == "__main__":
    main()
