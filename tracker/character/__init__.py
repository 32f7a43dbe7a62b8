"""tracker.character"""
