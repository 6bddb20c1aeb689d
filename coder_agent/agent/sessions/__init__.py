"""Sessions: a session's state (`session`), the live ones and their stored form (`live`), their record
(`transcript`, `repair`), options, usage, titles, images kept once, and which connection holds one (`claims`).
"""
