"""A real headless Chromium driven over the DevTools protocol, for testing pages.

Chromium comes from the distribution's packages (scripts/install_browser.sh,
which scripts/check.sh runs). It starts with its own new profile, a
debugging port it picks itself (written to DevToolsActivePort in the
profile), and the flags that keep it from reaching out to the network; the
test talks to the page's target over a websocket (websocket-client), sending
the same input events a keyboard and a mouse send.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from tests.helpers import wait_until

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1280,900",
)

KEYS = {
    "ArrowLeft": 37,
    "ArrowRight": 39,
    "Home": 36,
    "End": 35,
}


def find_chromium() -> str | None:
    """The Chromium on this machine's PATH, if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        raise RuntimeError("no Chromium on this machine: run scripts/install_browser.sh")
    return path


class Browser:
    """One Chromium process and a DevTools connection to its first page."""

    def __init__(self, timeout: float = 30.0) -> None:
        import websocket  # websocket-client, of the dev extra

        self.profile = Path(tempfile.mkdtemp(prefix="sniff-chromium-"))
        self.proc = subprocess.Popen(
            [chromium_path(), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._next_id = 0
        try:
            port = self._port(timeout)
            self.ws = websocket.create_connection(self._page_socket(port, timeout), timeout=timeout)
        except BaseException:
            self.close()
            raise

    def _port(self, timeout: float) -> int:
        marker = self.profile / "DevToolsActivePort"

        def port() -> int:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Chromium exited with status {self.proc.returncode}")
            lines = marker.read_text().splitlines() if marker.exists() else []
            return int(lines[0]) if lines and lines[0].isdigit() else 0

        return wait_until(port, "Chromium opens its debugging port", timeout)

    def _page_socket(self, port: int, timeout: float) -> str:
        def page() -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                targets = json.load(r)
            pages = [t for t in targets if t.get("type") == "page"]
            return str(pages[0]["webSocketDebuggerUrl"]) if pages else ""

        return wait_until(page, "Chromium shows a page target", timeout)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; its result (events that arrive meanwhile are dropped)."""
        self._next_id += 1
        ident = self._next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str, timeout: float = 30.0) -> None:
        self.send("Page.enable")
        self.send("Page.navigate", url=url)
        wait_until(
            lambda: self.evaluate("document.readyState") == "complete", f"{url} loads", timeout
        )

    def press(self, key: str) -> None:
        """A key press as a keyboard sends it: key down, then key up."""
        code = KEYS[key]
        for kind in ("rawKeyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=key,
                windowsVirtualKeyCode=code,
                nativeVirtualKeyCode=code,
            )

    def click(self, x: float, y: float) -> None:
        """A left click at page coordinates: move there, press, release."""
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
