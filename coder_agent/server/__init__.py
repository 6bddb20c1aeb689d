"""The ACP side of the agent: method handlers, the editor as a `Client`, errors as JSON-RPC, and the assembly.

Nothing is imported here: `capabilities` is on the start-up fast path (stdlib only); the rest is `assembly`.
"""
