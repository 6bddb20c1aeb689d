#!/bin/sh
# The oracle: replace the two lines byte for byte, so every CRLF stays.
set -e
python - <<'PY'
from pathlib import Path
path = Path("deploy/settings.ini")
data = path.read_bytes()
data = data.replace(b"replicas = 2\r\n", b"replicas = 4\r\n").replace(b"level = info\r\n", b"level = debug\r\n")
path.write_bytes(data)
PY
