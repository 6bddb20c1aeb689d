#!/bin/sh
# The oracle: run the script, as the task asks.
set -e
python scripts/summarize.py
