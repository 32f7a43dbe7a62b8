"""tracker.scenarios"""
