"""Serving the viewer with uvicorn: in the foreground (``jurist view``) or in a background
thread (:class:`ViewServer`, for notebooks and tests).

The socket is bound before uvicorn starts, so a port in use is one clear error and port 0
picks a free port whose URL is known before the first request. uvicorn's proxy headers are
off: the peer address the app checks before a write is the socket's, whatever
``X-Forwarded-For`` (or ``FORWARDED_ALLOW_IPS`` in the environment) says.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import webbrowser
from pathlib import Path
from types import TracebackType
from typing import Any

from jurist.errors import ConfigError
from jurist.view import require_view_extra
from jurist.view.app import LOOPBACK_HOSTS, create_app

__all__ = ["ViewServer", "bind", "is_loopback_address", "serve", "url_of"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def is_loopback_address(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) listens on this machine only."""
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free port).

    Raises:
        ConfigError: The address cannot be used (in use, not this machine's, no permission).
    """
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}: {exc.strerror}", field="host") from None
    family, kind, protocol, _, address = infos[0]
    sock = socket.socket(family, kind, protocol)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"cannot listen on {host}:{port}: {reason}; choose another --port", field="port"
        ) from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """The URL a browser opens for the app on ``sock``."""
    host, port = sock.getsockname()[:2]
    if sock.family == socket.AF_INET6:
        host = f"[{host}]"
    if host in ("0.0.0.0", "[::]"):
        host = "127.0.0.1"
    return f"http://{host}:{port}/"


def _server(root: Path, host: str) -> Any:
    require_view_extra()
    import uvicorn

    app = create_app(root, loopback_only=is_loopback_address(host))
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
    )
    return uvicorn.Server(config)


def serve(
    root: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    open_browser: bool = False,
    announce: Any = print,
) -> None:
    """Serve the runs under ``root`` until interrupted (Ctrl-C).

    Args:
        root: The folder of runs.
        host: The address to listen on (loopback by default: no one else can connect).
        port: The port (0: any free port).
        open_browser: Open the URL in a browser tab once the server listens.
        announce: Called with the line that says where the viewer is.

    Raises:
        ConfigError: The address cannot be used, or the ``view`` extra is missing.
        InputError: ``root`` is not a folder.
    """
    server = _server(root, host)
    sock = bind(host, port)
    url = url_of(sock)
    announce(f"jurist view: serving {root.resolve()} at {url} (Ctrl-C to stop)")
    if not is_loopback_address(host):
        announce(
            f"warning: listening on {host}: anyone who can reach this address can read these runs "
            "(there is no login); labels can be set only from this machine (a loopback address)"
        )
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


class ViewServer:
    """The viewer served from a background thread (``with ViewServer(root) as server:``).

    Attributes:
        url: Where it answers (``http://127.0.0.1:PORT/``), known once started.
    """

    def __init__(self, root: Path, *, host: str = DEFAULT_HOST, port: int = 0) -> None:
        self.root = root
        self.host = host
        self.port = port
        self.url = ""
        self._server: Any = None
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> ViewServer:
        """Start serving; return once the server accepts requests.

        Raises:
            TimeoutError: It did not start within ``timeout`` seconds.
        """
        self._server = _server(self.root, self.host)
        self._socket = bind(self.host, self.port)
        self.url = url_of(self._socket)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="jurist-view", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the viewer did not start within {timeout} s")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
