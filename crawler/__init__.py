"""Distributed e-commerce crawler: Scrapy workers sharing a scrapy-redis scheduler."""
