"""Standard-library leaves that everything may use, from the first byte on: ids, text that is not Unicode, private
files (700/600), the agent's credentials, masking known secrets, reading a file a checkout names, logging, the
permission modes. They import nothing of ours but each other (`tests/test_layers.py`).
"""
