"""Every command of `coder-agent`: `main` picks one; `acp` is the editor's path, `run`, `serve`, `sessions`,
`login`/`logout`, `config`/`rules`, `doctor` are the rest. Nothing here is imported by the agent itself.
"""
