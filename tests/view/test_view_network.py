"""Who may set labels: only a loopback peer, whatever the request's headers say.

The real attack is tested for real: ``jurist view --host 0.0.0.0`` serves a folder of runs,
and a client in a second network namespace (made by the test, joined to this one by a veth
pair on TEST-NET addresses) posts a label with ``Host: 127.0.0.1:PORT``, the viewer's own
``Origin`` and ``X-Forwarded-For: 127.0.0.1`` (uvicorn would trust that header from any
peer with ``FORWARDED_ALLOW_IPS=*`` in the environment, which the viewer's process gets).
It may read the pages, but the label is refused and ``labels.jsonl`` is not touched; the
same post from this machine is saved.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_support import label_rows, write_run

from jurist.errors import ConfigError
from jurist.view.app import create_app, is_loopback_peer
from jurist.view.labels import LABELS_FILE
from jurist.view.server import ViewServer

with warnings.catch_warnings():  # Starlette asks for httpx2, which is not needed here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ORIGIN = "http://127.0.0.1:8765"
LABEL = {"run": "a", "item": "r0", "label": "neg", "who": "mallory"}
TEST_NETS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
"""The documentation ranges (RFC 5737): the namespace's link takes a /30 of the first one no
route of this machine covers (some machines use 192.0.2.0/24 for their own network)."""
WAIT_S = 120
"""How long the viewer's process may take to start (generous: the machine may be loaded)."""


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    write_run(root / "a", label_rows(["pos", "neg"], ["pos", "pos"]))
    return root


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:127.1.2.3", True),
        ("192.0.2.2", False),
        ("::ffff:192.0.2.2", False),
        ("10.0.0.1", False),
        ("fe80::1%eth0", False),
        ("0.0.0.0", False),
        ("localhost", False),  # a name, not the socket's address
        ("testclient", False),
        ("", False),
        (None, False),
    ],
)
def test_a_loopback_peer_is_an_address_of_this_machine_only(address, loopback):
    assert is_loopback_peer(address) is loopback


@pytest.mark.parametrize("loopback_only", [True, False])
def test_a_label_from_another_peer_is_refused_whatever_its_headers(runs, loopback_only):
    app = create_app(runs, loopback_only=loopback_only)
    remote = TestClient(app, base_url=ORIGIN, client=("192.0.2.2", 40000))
    headers = {"Origin": ORIGIN, "X-Forwarded-For": "127.0.0.1", "Accept": "application/json"}
    refused = remote.post("/labels", data=LABEL, headers=headers)
    assert refused.status_code == 403
    assert refused.text.startswith("labels can only be set from this machine")
    assert "192.0.2.2" in refused.text
    mapped = TestClient(app, base_url=ORIGIN, client=("::ffff:192.0.2.2", 40000))
    assert mapped.post("/labels", data=LABEL, headers=headers).status_code == 403
    assert remote.get("/").status_code == 200  # reading is not writing
    assert not (runs / "a" / LABELS_FILE).exists()
    for local in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        accepted = TestClient(app, base_url=ORIGIN, client=(local, 40000)).post(
            "/labels", data=LABEL, headers=headers
        )
        assert accepted.status_code == 200, local
    lines = (runs / "a" / LABELS_FILE).read_text().splitlines()
    assert [json.loads(line)["label"] for line in lines] == ["neg"] * 3


def test_an_ipv4_client_of_a_dual_stack_viewer_is_a_loopback_peer(runs):
    """Listening on ``::`` (IPv4 too), a client on 127.0.0.1 arrives as ``::ffff:127.0.0.1``."""
    try:
        server = ViewServer(runs, host="::").start()
    except ConfigError as exc:
        pytest.skip(f"cannot listen on [::] here ({exc})")
    try:
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        try:
            status, body = _post_label(("127.0.0.1", port), f"127.0.0.1:{port}")
        except ConnectionRefusedError:
            pytest.skip("IPv6 sockets here take no IPv4 clients (net.ipv6.bindv6only)")
        assert status == 200, body
    finally:
        server.stop()
    assert json.loads((runs / "a" / LABELS_FILE).read_text())["label"] == "neg"


# ---------------------------------------------------------------------- a second namespace


class Namespace:
    """A network namespace joined to this one by a veth pair: ``host`` here, ``guest`` there."""

    def __init__(self, name: str, host: str, guest: str) -> None:
        self.name = name
        self.host = host
        self.guest = guest

    def python(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``code`` with this test's Python inside the namespace."""
        command = ["ip", "netns", "exec", self.name, sys.executable, "-c", code, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S)


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=60)


def _free_link(pid: int) -> ipaddress.IPv4Network:
    """A /30 of a TEST-NET range that no route of this machine covers (this run's own, by pid)."""
    found = _ip("-4", "-j", "route", "show", "table", "all")
    used: list[ipaddress.IPv4Network] = []
    for route in json.loads(found.stdout or "[]"):
        destination = route.get("dst", "default")
        if destination != "default":
            used.append(ipaddress.IPv4Network(destination, strict=False))
    for net in TEST_NETS:
        subnets = list(ipaddress.IPv4Network(net).subnets(new_prefix=30))
        for step in range(len(subnets)):
            link = subnets[(pid + step) % len(subnets)]
            if not any(link.overlaps(route) for route in used):
                return link
    pytest.skip("every TEST-NET range is in use by this machine's routes")


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> Iterator[Namespace]:
    """A namespace named after this process (parallel runs do not collide), removed after."""
    if not sys.platform.startswith("linux"):
        pytest.skip("network namespaces are a Linux feature")
    if os.geteuid() != 0:
        pytest.skip("making a network namespace needs root")
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (Debian package iproute2) to make a network namespace")
    pid = os.getpid()
    name, host_link, guest_link = f"jurist-view-{pid}", f"jvh{pid}", f"jvg{pid}"
    made = _ip("netns", "add", name)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {made.stderr.strip()}")

    def remove() -> None:
        _ip("link", "delete", host_link)  # takes its peer in the namespace with it
        _ip("netns", "delete", name)

    request.addfinalizer(remove)
    link = _free_link(pid)
    host, guest = (str(address) for address in link.hosts())
    for step in (
        ("link", "add", host_link, "type", "veth", "peer", "name", guest_link, "netns", name),
        ("addr", "add", f"{host}/30", "dev", host_link),
        ("link", "set", host_link, "up"),
        ("-n", name, "addr", "add", f"{guest}/30", "dev", guest_link),
        ("-n", name, "link", "set", guest_link, "up"),
        ("-n", name, "link", "set", "lo", "up"),
    ):
        done = _ip(*step)
        if done.returncode != 0:
            pytest.skip(f"cannot set up the namespace's link (ip {' '.join(step)}): {done.stderr.strip()}")
    yield Namespace(name, host, guest)


CLIENT = """\
import http.client, json, sys
address, port, host, method, path, body = sys.argv[1:7]
headers = {"Host": host}
if method == "POST":
    headers.update({
        "Origin": "http://" + host,
        "X-Forwarded-For": "127.0.0.1",
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    })
connection = http.client.HTTPConnection(address, int(port), timeout=60)
connection.request(method, path, body=body.encode() if method == "POST" else None, headers=headers)
answer = connection.getresponse()
print(json.dumps({"status": answer.status, "body": answer.read().decode("utf-8", "replace")}))
"""

FORM = "run=a&item=r0&label=neg&who=mallory"


def _post_label(address: tuple[str, int], host: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection(*address, timeout=60)
    headers = {
        "Host": host,
        "Origin": f"http://{host}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json",
    }
    connection.request("POST", "/labels", body=FORM.encode(), headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read().decode("utf-8", "replace")


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The process's output lines as they come (``None`` at its end)."""
    found: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            found.put(line.rstrip("\n"))
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    return found


def test_jurist_view_on_every_address_takes_labels_from_this_machine_only(runs, namespace):
    environment = {**os.environ, "FORWARDED_ALLOW_IPS": "*"}
    command = [sys.executable, "-m", "jurist", "view", str(runs), "--host", "0.0.0.0", "--port", "0"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
    )
    try:
        lines = _lines(process)
        said: list[str] = []
        while len(said) < 2:
            line = lines.get(timeout=WAIT_S)
            assert line is not None, f"jurist view ended: {said}"
            said.append(line)
        assert said[0].startswith("jurist view: serving") and "http://127.0.0.1:" in said[0]
        assert said[1].startswith("warning: listening on 0.0.0.0")
        assert "labels can be set only from this machine" in said[1]
        port = int(said[0].split("http://127.0.0.1:", 1)[1].split("/", 1)[0])
        loopback_host = f"127.0.0.1:{port}"

        # From the other namespace: the pages can be read ...
        page = _answer(namespace.python(CLIENT, namespace.host, str(port), loopback_host, "GET", "/", ""))
        assert page["status"] == 200 and 'data-run="a"' in page["body"]
        # ... but a label is refused, whatever Host, Origin and X-Forwarded-For say.
        posted = _answer(
            namespace.python(CLIENT, namespace.host, str(port), loopback_host, "POST", "/labels", FORM)
        )
        assert posted["status"] == 403, posted
        assert posted["body"].startswith("labels can only be set from this machine")
        assert namespace.guest in posted["body"]
        assert not (runs / "a" / LABELS_FILE).exists()

        # The same post from this machine is saved.
        status, body = _post_label(("127.0.0.1", port), loopback_host)
        assert status == 200, body
        assert json.loads(body)["label"] == "neg"
        saved = [json.loads(line) for line in (runs / "a" / LABELS_FILE).read_text().splitlines()]
        assert [(record["item"], record["label"]) for record in saved] == [("r0", "neg")]
    finally:
        process.terminate()
        try:
            process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found
