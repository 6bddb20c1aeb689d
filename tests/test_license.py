"""The LICENSE file is the exact Apache License 2.0 text that pyproject.toml declares."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt (also Debian's /usr/share/common-licenses/Apache-2.0)
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def test_the_license_file_is_the_complete_apache_2_0_text_the_package_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"]
    text = (ROOT / "LICENSE").read_bytes()
    assert declared == "Apache-2.0"
    assert text.splitlines()[1].strip() == b"Apache License"
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256
