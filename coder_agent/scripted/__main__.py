"""Run the scripted model server in the foreground: `python -m coder_agent.scripted --script FILE.json`.

Prints one line, the api_base URL for OpenAI-compatible models, to stdout (for `anthropic/...` models
the same URL without `/v1`); then serves until SIGTERM or SIGINT. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from coder_agent.scripted.script import Script
from coder_agent.scripted.server import ScriptedModelServer


class _Shutdown(Exception):
    pass


def _raise_shutdown(signum: int, frame: FrameType | None) -> None:
    raise _Shutdown(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coder_agent.scripted", description=__doc__)
    parser.add_argument("--script", required=True, help="a Script as JSON (see coder_agent.scripted.script)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--model", default="scripted", help="the model id listed by GET /v1/models")
    parser.add_argument("--cache", action="store_true", help="cache prompts as the providers do; usage says so")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

    script = Script.load(args.script)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _raise_shutdown)
    log = logging.getLogger(__name__)
    try:
        with ScriptedModelServer(script, host=args.host, port=args.port, model=args.model, cache=args.cache) as server:
            sys.stdout.write(server.url + "\n")
            sys.stdout.flush()
            threading.Event().wait()  # until the signal handler's exception breaks the wait
    except _Shutdown as exc:
        log.info("%s: stopped", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
