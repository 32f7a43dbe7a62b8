"""tracker.viewer"""
