"""Permissions: the modes and the gate every tool call passes (`gate`), and the rules that outlast a
session (`lasting_rules`).
"""
