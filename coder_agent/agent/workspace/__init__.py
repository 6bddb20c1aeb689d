"""The user's files and project: reading and writing them (`files`, `file_content`), what a command
changed (`changes`, `fs_events`, `turn_files`: snapshots of each root, `snapshots`, `snapshot_diff`, in a shadow
repository, `shadow_repo`, kept small by `snapshot_upkeep`), each turn's checkpoint (`checkpoints`) and its undo
(`undo`, `restore`), patches, search listing (`ignore`), git run safely (`git`) and the facts the system prompt
gives (`environment`).
"""
