# Shortcuts; the scripts are the reference (README).
.PHONY: bootstrap demo test bench lint
bootstrap:
	scripts/bootstrap
demo:
	scripts/demo
test:
	scripts/test
bench:
	scripts/bootstrap && .venv/bin/python -m master bench
lint:
	scripts/bootstrap && .venv/bin/python -m ruff check crawler master demoshop tools tests benchmarks
