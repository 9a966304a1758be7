"""stdio: once initialized, floods notifications/message (logging) forever, as fast as the
pipe takes them (a precomputed 1 MiB block of them, written again and again), while still
answering every request correctly. Single-threaded by default: while a write to stdout blocks,
it reads nothing. With --threaded the flood comes from a second thread, and the main thread
keeps reading and answering."""

import sys
import threading

import mcpbase


def block():
    lines = []
    for n in range(8000):
        params = {"level": "info", "logger": "flood", "data": f"log line {n}"}
        lines.append(mcpbase.line(mcpbase.notification("notifications/message", params)))
    return b"".join(lines)


def flood():
    chunk = block()
    while True:
        yield chunk


THREADED = "--threaded" in sys.argv[1:]
LOCK = threading.Lock()


class LockedStdio(mcpbase.Stdio):
    def send(self, msg):
        with LOCK:
            super().send(msg)


def flood_thread():
    try:
        for chunk in flood():
            with LOCK:
                mcpbase.write_all(1, chunk)
    except OSError:
        pass


class Flood(mcpbase.Mcp):
    def on_initialized(self):
        if THREADED:
            threading.Thread(target=flood_thread, daemon=True).start()
        else:
            self.pump = flood()


mcpbase.serve_stdio(Flood("notification-flood", capabilities={"tools": {}, "logging": {}}),
                    LockedStdio())
