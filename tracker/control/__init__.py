"""tracker.control"""
