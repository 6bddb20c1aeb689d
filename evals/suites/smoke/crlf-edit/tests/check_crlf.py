"""replicas = 4 and level = debug; every line still ends in CRLF; no other line changed."""

import configparser
import os
import sys
from pathlib import Path

data = Path("deploy/settings.ini").read_bytes()
before = Path(os.environ["EVAL_ORIGINAL_WORKSPACE"], "deploy", "settings.ini").read_bytes()
problems = []
if data.count(b"\n") != data.count(b"\r\n") or not data.endswith(b"\r\n"):
    problems.append("some line no longer ends in CRLF")
parser = configparser.ConfigParser()
parser.read_string(data.decode())
if parser.get("deploy", "replicas", fallback=None) != "4":
    problems.append(f"replicas is {parser.get('deploy', 'replicas', fallback=None)!r}")
if parser.get("logging", "level", fallback=None) != "debug":
    problems.append(f"level is {parser.get('logging', 'level', fallback=None)!r}")
expected = before.replace(b"replicas = 2\r\n", b"replicas = 4\r\n").replace(b"level = info\r\n", b"level = debug\r\n")
if not problems and data != expected:
    problems.append(f"other lines changed: {data!r}")
if problems:
    sys.exit("\n".join(problems))
print("settings ok")
