"""stdio: a correct server that ignores SIGTERM and does not exit when stdin closes: only
SIGKILL ends it."""

import signal
import time

import mcpbase

signal.signal(signal.SIGTERM, signal.SIG_IGN)
try:
    mcpbase.serve_stdio(mcpbase.Mcp("ignores-sigterm"))
except SystemExit:
    pass
while True:
    time.sleep(60)
