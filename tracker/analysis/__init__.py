"""tracker.analysis"""
