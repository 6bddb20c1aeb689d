"""Compaction: the context window (`window`), what a compaction keeps (`plan`), the summary call
(`summarize`) and running one (`compactor`).
"""
