"""Agent programs, one per framework, run in their framework's own virtualenv."""
