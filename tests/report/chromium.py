"""Open a page in headless Chromium over the DevTools pipe (stdlib only) and report what happened.

    load(path) -> {"images": [...], "errors": [...], "requests": [...]}

errors: console errors, uncaught exceptions and browser log errors (e.g. failed resource loads);
images: every <img> with complete/naturalWidth; requests: every URL the page asked for.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _cmd_fds():
    """Two pipes, moved above fd 9 so the child's dup2 onto 3 and 4 cannot clobber them."""
    import fcntl

    out = []
    for fd in (*os.pipe(), *os.pipe()):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        out.append(high)
    return tuple(out)


def screenshot(path: Path, png: Path, width: int = 1280, height: int = 2400, timeout: float = 60) -> None:
    binary = chromium_binary()
    with tempfile.TemporaryDirectory(prefix="ssdpts-chromium-") as prof:
        subprocess.run([binary, *FLAGS, f"--user-data-dir={prof}", f"--window-size={width},{height}",
                        f"--screenshot={png}", Path(path).resolve().as_uri()],
                       capture_output=True, timeout=timeout, check=True)


def load(path: Path, timeout: float = 60) -> dict:
    binary = chromium_binary()
    if binary is None:
        raise RuntimeError("chromium is not installed")
    cmd_r, cmd_w, res_r, res_w = _cmd_fds()
    prof = tempfile.mkdtemp(prefix="ssdpts-chromium-")

    def child():
        os.dup2(cmd_r, 3)
        os.dup2(res_w, 4)

    proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={prof}", "--remote-debugging-pipe", "about:blank"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=child, pass_fds=(3, 4))
    os.close(cmd_r)
    os.close(res_w)
    inbox: queue.Queue = queue.Queue()

    def reader():
        buf = b""
        while True:
            chunk = os.read(res_r, 1 << 16)
            if not chunk:
                inbox.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                inbox.put(json.loads(msg))

    threading.Thread(target=reader, daemon=True).start()
    stderr: list[bytes] = []
    threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True).start()
    next_id = [0]
    events: list[dict] = []
    deadline = time.monotonic() + timeout

    def get(pred):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            m = inbox.get(timeout=left)
            if m is None:
                time.sleep(0.2)
                raise RuntimeError("chromium closed the DevTools pipe: " + b"".join(stderr).decode(errors="replace")[-2000:])
            if "id" not in m:
                events.append(m)
            if pred(m):
                return m

    def call(method, params=None, session=None):
        next_id[0] += 1
        msg = {"id": next_id[0], "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(cmd_w, json.dumps(msg).encode() + b"\0")
        ans = get(lambda m: m.get("id") == next_id[0])
        if "error" in ans:
            raise RuntimeError(f"{method}: {ans['error']}")
        return ans.get("result", {})

    try:
        target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            call(f"{domain}.enable", session=session)
        call("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
        get(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session)
        res = call("Runtime.evaluate", {"returnByValue": True, "expression": """
            JSON.stringify(Array.from(document.images).map(i => ({src: i.src.slice(0, 40), complete: i.complete,
                           width: i.naturalWidth, height: i.naturalHeight})))"""}, session=session)
        images = json.loads(res["result"]["value"])
        time.sleep(0.3)  # late console messages
        while not inbox.empty():
            m = inbox.get_nowait()
            if m is not None and "id" not in m:
                events.append(m)
        try:
            call("Browser.close")
        except Exception:
            pass
    finally:
        os.close(cmd_w)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(res_r)
        shutil.rmtree(prof, ignore_errors=True)
    errors, requests = [], []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            errors.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append(f"console.{p.get('type')}: {[a.get('value') for a in p.get('args', [])]}")
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif m == "Network.requestWillBeSent":
            requests.append(p.get("request", {}).get("url", ""))
        elif m == "Network.loadingFailed":
            errors.append(f"network: {p.get('errorText')}")
    return {"images": images, "errors": errors, "requests": requests}
