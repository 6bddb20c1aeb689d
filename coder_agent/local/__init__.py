"""The local client: this machine's disk and process-group terminals behind the core's `Client` interface.

`LocalClient` is this machine alone (`coder-agent run`); `FillIn` puts it under an editor's client, serving
what the editor does not offer. The core never imports this package.
"""
