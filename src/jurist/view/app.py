"""The web app of ``jurist view``: Starlette routes over the pages of :mod:`jurist.view.run_pages`
and :mod:`jurist.view.review_pages`.

Pages (all ``GET``; run and item ids travel in the query string, URL-encoded):

- ``/``: the run history (``?task=`` filters, ``?metric=`` picks the plotted figure);
- ``/run?id=RUN``: a run's report and its items table (``q``, ``sort``, ``desc``, ``show``,
  ``below``, ``offset``, ``limit``);
- ``/item?run=RUN&id=ITEM``: one item in full;
- ``/compare?a=RUN&b=RUN``: two runs item by item (``outcome``, ``offset``);
- ``/queue?run=RUN``: items to label (``why=gold|unsure|with``, ``below``, ``with``,
  ``unlabelled``);
- ``/gold.jsonl?run=RUN``: the gold file of the labels (what ``jurist labels export`` writes);
- ``/report.html?run=RUN``: the run's standalone report, in a sandbox.

The one write is ``POST /labels`` (form fields ``run``, ``item``, ``label``, ``who``): it
appends to the run's ``labels.jsonl``. Every request must name a loopback host (``Host:
127.0.0.1``, ``localhost`` or ``[::1]``) unless the app was started on another address, so
a web page cannot reach the app through a DNS name it controls. A write (anything but
``GET``/``HEAD``) is refused (403) unless all of these hold:

- the connection's peer address is a loopback address (``127.0.0.0/8``, ``::1``, or
  ``::ffff:127.x.y.z``), read from the socket, never from a header: a client on the
  network cannot pass for this machine by sending ``Host: 127.0.0.1`` or
  ``X-Forwarded-For``;
- its ``Host`` is a loopback name;
- its ``Origin`` (when the browser sends one) is the app's own, and ``Sec-Fetch-Site`` (when
  sent) is ``same-origin`` or ``none``.

Reads from other peers are answered when the app listens on another address (``jurist view
--host 0.0.0.0``): the runs are readable from the network, labels are set only from this
machine. Pages load only the app's own CSS and script (Content-Security-Policy), judged
text is escaped everywhere (Jinja2 autoescape), and every page and served file is redacted
(:func:`jurist.redaction.redact`). No file of a run directory is read or written through a
symbolic link (:mod:`jurist.view.files`): such a run is answered with 403 and why.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jurist.errors import JuristError, RunDirectoryError
from jurist.redaction import redact
from jurist.report.inputs import input_text
from jurist.report.jsonout import dumps
from jurist.view import review_pages, run_pages
from jurist.view.files import LinkedFileError, read_text
from jurist.view.runs import REPORT_HTML_FILE
from jurist.view.viewer import Viewer

__all__ = ["LOOPBACK_HOSTS", "create_app", "is_loopback_host", "is_loopback_peer", "refusal"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names that reach this machine only."""

MAX_FORM_BYTES = 64 * 1024

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""What a page may load: the app's own script and CSS (inline styles for the SVG figures)."""

REPORT_POLICY = (
    "sandbox allow-scripts; default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:"
)
"""The standalone report runs its own inline script in a sandbox: an opaque origin that can
neither read the app's pages nor post a label."""

_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def _host_name(header: str) -> str:
    """The host name of a ``Host`` header (no port, no IPv6 brackets), lower-case."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def is_loopback_host(header: str | None) -> bool:
    """Whether a ``Host`` header names this machine's loopback address."""
    return bool(header) and _host_name(header or "") in LOOPBACK_HOSTS


def is_loopback_peer(address: str | None) -> bool:
    """Whether a connection's peer address (the socket's, as the server reports it) is this
    machine's loopback: ``127.0.0.0/8``, ``::1``, or an IPv4-mapped ``::ffff:127.x.y.z``.

    Anything else, a name instead of an address, or no address at all is not.
    """
    if not address:
        return False
    try:
        found = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped.is_loopback
    return found.is_loopback


def refusal(
    method: str, headers: Mapping[str, str], *, peer: str | None, loopback_only: bool = True
) -> str | None:
    """Why a request is refused (403), or ``None`` when it may go on.

    Every request must name a loopback host when the app listens on loopback only (a page on
    another site cannot reach it through a DNS name that resolves to 127.0.0.1). A request
    that writes (anything but ``GET``/``HEAD``) must come from a loopback ``peer`` address
    (:func:`is_loopback_peer`: the socket's, so no header can fake it), name a loopback host,
    and its ``Origin``, when sent, must be ``http://`` plus that host: neither a client on
    the network nor a form or script on another site can set labels.

    Args:
        method: The request's method.
        headers: Its headers, names in lower case.
        peer: The address of the connection's other end (``None`` when unknown: refused
            for writes).
        loopback_only: The app listens on a loopback address only.
    """
    host = headers.get("host")
    if loopback_only and not is_loopback_host(host):
        return "this viewer answers only to http://127.0.0.1, http://localhost or http://[::1]"
    if method in ("GET", "HEAD"):
        return None
    if not is_loopback_peer(peer):
        return (
            f"labels can only be set from this machine (this request came from {peer or 'an unknown peer'}): "
            "open the viewer at http://127.0.0.1 on the machine that runs jurist view"
        )
    if not is_loopback_host(host):
        return "labels can only be set from this machine (open the viewer at http://127.0.0.1)"
    origin = headers.get("origin")
    if origin is not None and origin.strip().lower() != f"http://{(host or '').strip().lower()}":
        return "cross-site request refused: labels can only be set from the viewer's own pages"
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return "cross-site request refused: labels can only be set from the viewer's own pages"
    return None


class _Guard:
    """ASGI middleware: refuses requests :func:`refusal` refuses, adds security headers."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        client = scope.get("client")
        peer = str(client[0]) if client else None
        reason = refusal(scope["method"], headers, peer=peer, loopback_only=self.loopback_only)
        if reason is not None:
            await PlainTextResponse(reason, status_code=403)(scope, receive, _with_headers(send, None))
            return
        is_report = scope.get("path") == "/report.html"
        await self.app(scope, receive, _with_headers(send, REPORT_POLICY if is_report else None))


def _with_headers(send: Send, policy: str | None) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (key, value)
                for key, value in message.get("headers", [])
                if key.lower() != b"content-security-policy"
            ]
            headers += _HEADERS
            headers.append((b"content-security-policy", (policy or CONTENT_SECURITY_POLICY).encode()))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


# ---------------------------------------------------------------------- templates


def _fmt(value: Any, width: int = 200) -> str:
    """A cell as text: numbers to 4 significant digits, yes/no, ``—`` for missing, long text cut."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _money(value: Any) -> str:
    return "—" if value is None else f"${float(value):.4f}"


def _pretty(value: Any) -> str:
    return dumps(value, ensure_ascii=False)


def _link(path: str, /, **params: Any) -> str:
    """``path`` with the query ``params`` (``None`` values left out), URL-encoded."""
    found = {key: value for key, value in params.items() if value is not None and value != ""}
    return path + ("?" + urlencode(found) if found else "")


def _with(query: Mapping[str, Any], /, **changes: Any) -> dict[str, Any]:
    return {**query, **changes}


def _agree_class(value: Any) -> str:
    return "agree" if value is True else "disagree" if value is False else ""


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("jurist.view", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        fmt=_fmt, money=_money, pretty=_pretty, agree_class=_agree_class, input_text=input_text
    )
    environment.globals.update(link=_link, with_=_with)
    return environment


def _render(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    page = _environment().get_template(name).render(**context)
    return HTMLResponse(redact(page), status_code=status_code)


def _status(exc: Exception) -> int:
    if isinstance(exc, LinkedFileError):
        return 403
    if isinstance(exc, RunDirectoryError):
        return 404
    return 400


def _error_page(exc: Exception) -> HTMLResponse:
    return _render("error.html", _status(exc), message=str(exc), status=_status(exc))


# ---------------------------------------------------------------------- parameters


def _int(request: Request, name: str, default: int | None = None) -> int | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number; got {value!r}") from None


def _float(request: Request, name: str) -> float | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    return number


def _text(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    return value if value not in (None, "") else None


def _required(request: Request, name: str) -> str:
    value = _text(request, name)
    if value is None:
        raise ValueError(f"the page needs ?{name}=")
    return value


def _safe_next(value: str | None) -> str | None:
    """A redirect target on this app only (a path, never another site)."""
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return None
    return value


# ---------------------------------------------------------------------- the app


def create_app(root: Path, *, loopback_only: bool = True) -> Starlette:
    """The app serving the runs under ``root``.

    Args:
        root: The folder of runs.
        loopback_only: Answer only requests addressed to a loopback host name (the app
            listens on 127.0.0.1); ``False`` when it listens on another address, where pages
            can be read from any peer but labels are still set only from a loopback peer.

    Raises:
        InputError: ``root`` is not a folder.
    """
    viewer = Viewer(root)

    def page(handler: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            def run() -> Response:
                try:
                    return handler(request)
                except (JuristError, ValueError) as exc:
                    return _error_page(exc)

            return await run_in_threadpool(run)

        return endpoint

    def history(request: Request) -> Response:
        context = run_pages.history_page(viewer, _text(request, "task"), _text(request, "metric"))
        return _render("history.html", root=str(viewer.root), **context)

    def run_page(request: Request) -> Response:
        context = run_pages.run_page(
            viewer,
            _required(request, "id"),
            offset=_int(request, "offset", 0) or 0,
            limit=_int(request, "limit"),
            search=_text(request, "q") or "",
            sort=_text(request, "sort"),
            descending=request.query_params.get("desc") == "1",
            show=_text(request, "show") or "all",
            below=_float(request, "below"),
        )
        return _render("run.html", **context)

    def item_page(request: Request) -> Response:
        context = run_pages.item_page(viewer, _required(request, "run"), request.query_params.get("id", ""))
        return _render("item.html", **context)

    def compare_page(request: Request) -> Response:
        context = review_pages.compare_page(
            viewer,
            _required(request, "a"),
            _text(request, "b"),
            outcome=_text(request, "outcome"),
            offset=_int(request, "offset", 0) or 0,
            limit=_int(request, "limit"),
        )
        return _render("compare.html", **context)

    def queue_page(request: Request) -> Response:
        context = review_pages.queue_page(
            viewer,
            _required(request, "run"),
            why=_text(request, "why"),
            below=_float(request, "below"),
            other=_text(request, "with"),
            unlabelled=request.query_params.get("unlabelled") == "1",
            offset=_int(request, "offset", 0) or 0,
            limit=_int(request, "limit"),
        )
        return _render("queue.html", **context)

    def gold_file(request: Request) -> Response:
        text, _, _ = review_pages.gold_file(viewer, _required(request, "run"))
        return Response(
            text,
            media_type="application/x-ndjson",
            headers={"content-disposition": 'attachment; filename="gold.jsonl"'},
        )

    def report_html(request: Request) -> Response:
        view = viewer.run(_required(request, "run"))
        try:
            text = read_text(view.path / REPORT_HTML_FILE)
        except FileNotFoundError:
            raise RunDirectoryError(f"run {view.id!r} has no {REPORT_HTML_FILE}") from None
        return HTMLResponse(redact(text))

    async def post_label(request: Request) -> Response:
        wants_json = "application/json" in request.headers.get("accept", "")
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return PlainTextResponse("the form is too large", status_code=413)
        fields = {key: values[-1] for key, values in parse_qs(body.decode("utf-8", "replace")).items()}

        def save() -> dict[str, Any]:
            run, item = fields.get("run", ""), fields.get("item", "")
            if not run or not item:
                raise ValueError("a label needs the run and the item")
            if "label" not in fields or not fields["label"].strip():
                raise ValueError("choose a label first")
            return review_pages.set_label(viewer, run, item, fields["label"], fields.get("who"))

        try:
            record = await run_in_threadpool(save)
        except (JuristError, ValueError) as exc:
            if wants_json:
                return JSONResponse({"error": redact(str(exc))}, status_code=_status(exc))
            return _error_page(exc)
        if wants_json:
            return JSONResponse(record)
        target = _safe_next(fields.get("next")) or _link("/queue", run=fields.get("run"))
        return RedirectResponse(target, status_code=303)

    static = StaticFiles(directory=str(Path(__file__).parent / "static"))
    routes = [
        Route("/", page(history)),
        Route("/run", page(run_page)),
        Route("/item", page(item_page)),
        Route("/compare", page(compare_page)),
        Route("/queue", page(queue_page)),
        Route("/gold.jsonl", page(gold_file)),
        Route("/report.html", page(report_html)),
        Route("/labels", post_label, methods=["POST"]),
        Mount("/static", app=static, name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(_Guard, loopback_only=loopback_only)])
    app.state.viewer = viewer
    return app
