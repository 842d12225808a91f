# Convenience wrappers; the scripts do the work (and need no make on a fresh machine).
.PHONY: demo test bench
demo:
	./scripts/demo
test:
	./scripts/test
bench:
	./scripts/bench
