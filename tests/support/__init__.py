"""Helpers the tests share: real servers started on free ports, worker processes."""
