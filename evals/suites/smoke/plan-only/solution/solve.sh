#!/bin/sh
# The oracle plans and changes no file: the plan is what the harness saves from the agent's `plan` update.
cat > "$EVAL_PLAN_FILE" <<'JSON'
[
  {"content": "Add a module-level cache dict and a TTL constant to service.py", "priority": "high", "status": "pending"},
  {"content": "Make fetch_user return a fresh cached entry, else query and store it with a timestamp", "priority": "high", "status": "pending"},
  {"content": "Invalidate the user's cache entry in update_user", "priority": "medium", "status": "pending"},
  {"content": "Add tests for hits, expiry and invalidation", "priority": "medium", "status": "pending"}
]
JSON
