"""The user's files and project: reading and writing them (`files`, `file_content`), what a command
changed (`changes`, `fs_events`, `turn_files`), each turn's checkpoint and undo (`checkpoints`), patches, search
listing (`ignore`), git run safely (`git_calls`, `git`) and the facts the system prompt gives (`project_facts`,
`environment`).
"""
