"""Sessions: a session's state (`session`), the live ones and their stored form (`live`), their record
(`transcript`, `repair`), options, usage, titles, images kept once, which connection holds one (`claims`), which
process holds one (`live_locks`), and what its model must be told once (`notes`).
"""
