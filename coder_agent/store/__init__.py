"""Session persistence."""
