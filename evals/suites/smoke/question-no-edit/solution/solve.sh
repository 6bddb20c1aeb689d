#!/bin/sh
# The oracle answers; it changes no file.
printf 'By default the app listens on port 8473 (BASE_PORT 8000 + the green slot offset 473).\n' > "$EVAL_ANSWER_FILE"
