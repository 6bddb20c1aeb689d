"""The user's configuration: every setting and where it comes from (`settings`), the files in the user's config
folder (`userfiles`), the lasting permission rules' file (`rules_file`) and the keys `coder-agent login` saved
(`keystore`). Read only from places the user controls, never from the workspace.
"""
