"""stdio: a correct server that first starts three grandchildren (in its process group) which
ignore SIGTERM and SIGHUP and would sleep for ten minutes: they would outlive the server if the
client killed only the server."""

import subprocess
import sys

import mcpbase

STUBBORN = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(600)")
for _ in range(3):
    subprocess.Popen([sys.executable, "-c", STUBBORN], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

mcpbase.serve_stdio(mcpbase.Mcp("grandchildren"))
